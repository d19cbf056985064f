"""The Tiresias simulator's job lists and cluster specs (SymbioticLab/Tiresias, ``simulator/``).

Three job-list layouts, told apart by their header (seconds throughout):

- ``job_id,num_gpu,submit_time,iterations,model_name,duration,interval`` (``60_job.csv``);
- ``job_id,num_gpu,submit_time,start_time,duration,model_size,aggr_interval,model_name,
  model_scale`` (``tf_job.csv``);
- ``duration`` alone (``yarn-gput1000.csv``): no GPU count and no submission time, so every job
  asks for one GPU and all arrive at 0 (a backlog).

The cluster is the spec ``num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,
mem_p_node`` (``--cluster-spec``, default ``cluster_spec.csv`` in the trace's folder):
nodes of ``num_gpu_p_node`` GPUs, at most ``num_switch · num_node_p_switch`` of them. The job
lists carry no CPU or memory demand, so the instance has one resource, ``gpu``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
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
)

LAYOUTS = (
    ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"),
    ("job_id", "num_gpu", "submit_time", "start_time", "duration", "model_size",
     "aggr_interval", "model_name", "model_scale"),
    ("duration",),
)
SPEC_COLUMNS = ("num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node",
                "mem_p_node")


def read_spec(path: str | Path) -> tuple[int, int]:
    """(GPUs per node, nodes) from a Tiresias cluster spec (its one data row)."""
    _, rows = table(path, [SPEC_COLUMNS], what="cluster spec")
    if len(rows) != 1:
        raise InputError(str(path), f"expected one row of cluster spec, got {len(rows)}")
    line, row = rows[0]
    try:
        switches = int(number(row, "num_switch", minimum=1, integer=True))
        nodes = int(number(row, "num_node_p_switch", minimum=1, integer=True))
        gpus = int(number(row, "num_gpu_p_node", minimum=1, integer=True))
        number(row, "num_cpu_p_node")
        number(row, "mem_p_node")
    except RowError as err:
        raise InputError(f"{path}:{line}", str(err)) from None
    return gpus, switches * nodes


def load(trace: str | Path, policy: Policy, *,
         cluster_spec: str | Path | None = None) -> Imported:
    """The instance from one Tiresias job list (docs/traces.md, ``tiresias``)."""
    path = str(trace)
    reader = Reader(path, policy.skip_bad)
    layout, rows = table(path, LAYOUTS, reader)
    if cluster_spec is None:
        near = Path(path).resolve().parent / "cluster_spec.csv"
        cluster_spec = near if near.exists() else None
    if cluster_spec is not None:
        gpus_per_node, nodes = read_spec(cluster_spec)
        source = f"{Path(cluster_spec).name} ({nodes} nodes of {gpus_per_node} GPUs)"
    else:
        gpus_per_node, nodes = 4, None
        source = "4-GPU nodes (no cluster spec found)"

    def parse(line: int, row: dict[str, str]) -> TraceJob:
        duration = number(row, "duration")
        if layout == 2:
            return TraceJob(f"L{line}", line, 0.0, duration, 1, (1.0,))
        job_id = row["job_id"]
        if not job_id:
            raise RowError("column job_id: empty")
        number(row, "job_id", integer=True)
        gpus = int(number(row, "num_gpu", minimum=1, integer=True))
        submit = number(row, "submit_time")
        for col in LAYOUTS[layout]:
            if col not in ("job_id", "num_gpu", "submit_time", "duration", "model_name"):
                number(row, col)  # every other column is numeric: a bad one marks a bad row
        return TraceJob(f"job{job_id}", line, submit, duration, gpus, (1.0,),
                        model=row["model_name"] or None)

    usable = parse_rows(reader, rows, parse)
    spec = ClusterSpec(("gpu",), (("gpu", (float(gpus_per_node),)),), True, nodes, source)
    return build("tiresias", path, reader, usable, spec, policy,
                 {"layout": ",".join(LAYOUTS[layout]),
                  "cluster_spec": str(cluster_spec) if cluster_spec else None})
