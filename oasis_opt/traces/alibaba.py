"""Alibaba's 2023 GPU cluster trace (alibaba/clusterdata, ``cluster-trace-gpu-v2023/csv/``).

Pods ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time`` (seconds) and nodes ``sn,cpu_milli,memory_mib,gpu,model``
(``--nodes``, default ``openb_node_list_gpu_node.csv`` in the pods' folder).

Resources ``gpu, cpu, mem_gib``. A pod asking for g ≥ 1 GPUs is a job of g workers, one per GPU:
a worker holds ``gpu_milli/1000`` of a GPU (GPU sharing), ``cpu_milli/1000/g`` cores and
``memory_mib/1024/g`` GiB. It arrives at ``creation_time`` and ran ``deletion_time −
scheduled_time`` seconds. Left out (counted as filtered): CPU-only pods (g = 0) and pods that
never ran (no ``scheduled_time``, e.g. ``Pending``); ``--phases`` lists the phases kept
(default ``Succeeded,Failed,Running``: a ``Running`` pod's duration is cut off where the trace
ends, so it is a lower bound). ``gpu_spec`` (GPU type constraints) is not modelled. Servers:
the GPU nodes of the node list, evenly spaced through it so the mix of node types is kept.
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

POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
               "pod_phase", "creation_time", "deletion_time", "scheduled_time")
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
PHASES = ("Succeeded", "Failed", "Running", "Pending")
DEFAULT_PHASES = ("Succeeded", "Failed", "Running")
RESOURCES = ("gpu", "cpu", "mem_gib")


def read_nodes(path: str | Path) -> list[tuple[str, tuple[float, float, float]]]:
    """GPU nodes as (name, (GPUs, cores, GiB)), in file order; a bad row is refused."""
    _, rows = table(path, [NODE_COLUMNS], what="node list")
    out, seen = [], {}
    for line, row in rows:
        try:
            gpu = number(row, "gpu", integer=True)
            cpu = number(row, "cpu_milli") / 1000.0
            mem = number(row, "memory_mib") / 1024.0
            if not row["sn"]:
                raise RowError("column sn: empty")
            if row["sn"] in seen:
                raise RowError(f"column sn: duplicate node {row['sn']!r} (also line "
                               f"{seen[row['sn']]})")
        except RowError as err:
            raise InputError(f"{path}:{line}", str(err)) from None
        seen[row["sn"]] = line
        if gpu > 0:
            out.append((row["sn"], (float(gpu), cpu, mem)))
    if not out:
        raise InputError(str(path), "no GPU node in the node list")
    return out


def load(trace: str | Path, policy: Policy, *, nodes: str | Path | None = None,
         phases: tuple[str, ...] = DEFAULT_PHASES) -> Imported:
    """The instance from an Alibaba ``openb_pod_list_*.csv`` (docs/traces.md, ``alibaba``)."""
    path = str(trace)
    for ph in phases:
        if ph not in PHASES:
            raise InputError("phases", f"unknown pod phase {ph!r}; choose from "
                                         f"{', '.join(PHASES)}")
    if nodes is None:
        near = Path(path).resolve().parent / "openb_node_list_gpu_node.csv"
        if not near.exists():
            raise InputError("nodes", f"no openb_node_list_gpu_node.csv next to {path}; "
                                        "give the node list")
        nodes = near
    node_list = read_nodes(nodes)
    reader = Reader(path, policy.skip_bad)
    layout, rows = table(path, [POD_COLUMNS, POD_COLUMNS[:5]], reader)
    if layout == 1:
        raise InputError(path, "this pod list has no phase, creation, deletion or scheduled "
                               "times (a resource-only sample such as openb_pod_list_multigpu50"
                               ".csv): no durations or arrivals to import")

    def parse(line: int, row: dict[str, str]) -> TraceJob | None:
        name = row["name"]
        if not name:
            raise RowError("column name: empty")
        cpu = number(row, "cpu_milli") / 1000.0
        mem = number(row, "memory_mib") / 1024.0
        g = int(number(row, "num_gpu", integer=True))
        milli = number(row, "gpu_milli")
        if milli > 1000:
            raise RowError(f"column gpu_milli: at most 1000 (one GPU), got {row['gpu_milli']!r}")
        phase = row["pod_phase"]
        if phase not in PHASES:
            raise RowError(f"column pod_phase: expected one of {', '.join(PHASES)}, got "
                           f"{phase!r}")
        created = number(row, "creation_time")
        deleted = number(row, "deletion_time") if row["deletion_time"] else None
        scheduled = number(row, "scheduled_time") if row["scheduled_time"] else None
        if g == 0 or phase not in phases or scheduled is None:
            return None
        if deleted is None:  # (every scheduled pod of the trace has one, Running ones too)
            raise RowError(f"column deletion_time: empty for a scheduled {phase} pod (its run "
                           "time is unknown)")
        if scheduled < created:
            raise RowError(f"column scheduled_time: {row['scheduled_time']} is before "
                           f"creation_time {row['creation_time']}")
        if deleted < scheduled:
            raise RowError(f"column deletion_time: {row['deletion_time']} is before "
                           f"scheduled_time {row['scheduled_time']} (negative duration)")
        if milli <= 0:
            raise RowError(f"column gpu_milli: must be positive for a pod asking for {g} GPUs, "
                           f"got {row['gpu_milli']!r}")
        share = milli / 1000.0
        return TraceJob(name, line, created, deleted - scheduled, g,
                        (share, cpu / g, mem / g), model=row["qos"] or None)

    usable = parse_rows(reader, rows, parse, resources=RESOURCES)
    spec = ClusterSpec(RESOURCES, tuple(node_list), False, len(node_list),
                       f"the {len(node_list)} GPU nodes of {Path(nodes).name}, evenly spaced")
    return build("alibaba", path, reader, usable, spec, policy,
                 {"nodes": str(nodes), "phases": ",".join(phases)},
                 what=f"(GPU pods in phases {', '.join(phases)})")
