"""Philly jobs from the Pollux simulator's ``philly.csv`` (petuum/adaptdl, osdi21-artifact).

Header ``timestamp,duration,num_gpus,gpu_time,cluster``: submission time
(``YYYY-MM-DD HH:MM:SS``), run time in seconds, GPUs, GPU-seconds, Philly virtual cluster id.
The trace has no cluster spec and no scalability measurements: nodes of
``--gpus-per-server`` GPUs (default 4, the node size of the Pollux simulator), elasticity
``floor(e · num_gpus)``. ``--cluster VC`` keeps one virtual cluster's jobs.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, some
from .common import (
    ClusterSpec,
    Imported,
    Policy,
    Reader,
    RowError,
    TraceJob,
    build,
    number,
    parse_rows,
    table,
    timestamp,
)

COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")


def load(trace: str | Path, policy: Policy, *, cluster: str | None = None,
         gpus_per_server: int = 4) -> Imported:
    """The instance from ``philly.csv`` (docs/traces.md, ``philly``)."""
    if gpus_per_server < 1:
        raise InputError("gpus_per_server", f"must be at least 1, got {gpus_per_server}")
    path = str(trace)
    reader = Reader(path, policy.skip_bad)
    _, rows = table(path, [COLUMNS], reader)
    seen_clusters: set[str] = set()

    def parse(line: int, row: dict[str, str]) -> TraceJob | None:
        submit = timestamp(row, "timestamp")
        duration = number(row, "duration")
        gpus = int(number(row, "num_gpus", minimum=1, integer=True))
        number(row, "gpu_time")
        vc = row["cluster"]
        if not vc:
            raise RowError("column cluster: empty")
        seen_clusters.add(vc)
        if cluster is not None and vc != cluster:
            return None
        return TraceJob(f"L{line}", line, submit, duration, gpus, (1.0,), model=vc)

    usable = parse_rows(reader, rows, parse)
    if cluster is not None and cluster not in seen_clusters:
        known = some(sorted(seen_clusters)) or "none"
        raise InputError("cluster", f"no job of virtual cluster {cluster!r} in {path} "
                                      f"(clusters: {known})")
    spec = ClusterSpec(("gpu",), (("gpu", (float(gpus_per_server),)),), True, None,
                       f"{gpus_per_server}-GPU nodes (philly.csv has no cluster spec)")
    return build("philly", path, reader, usable, spec, policy,
                 {"cluster": cluster or "all"},
                 what=f"of cluster {cluster}" if cluster else "")
