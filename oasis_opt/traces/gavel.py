"""Gavel's Philly-derived job traces (stanford-futuredata/gavel, ``scheduler/``).

``msr/seed=S/VC.trace``: tab-separated, no header, one job a line: ``job_type``, ``command``,
``num_steps_arg``, ``needs_data_dir`` (0/1), ``total_steps``, ``arrival_time`` (seconds),
``scale_factor`` (GPUs). ``simulation_throughputs.json`` (``--throughputs``, default: the file
of that name in the trace's folder or above) holds steps per second alone,
``throughputs[gpu_type]["(job_type, scale_factor)"]["null"]``. A job's run time alone is
``total_steps / θ(scale_factor)`` on ``--gpu-type`` (default ``v100``), and its measured
throughputs at the other scale factors bound its elasticity. ``msr/cluster_specs.json`` (found
the same way) gives the trace's cluster as ``V100:P100:K80`` GPU counts: nodes of
``--gpus-per-server`` GPUs of that type, at most the spec's count.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ..errors import InputError, some
from ..io import read_json
from .common import (
    ClusterSpec,
    Imported,
    Policy,
    Reader,
    RowError,
    TraceJob,
    build,
    find_near,
    number,
    parse_rows,
    read_text,
    rows,
)

COLUMNS = ("job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps",
           "arrival_time", "scale_factor")
GPU_TYPES = ("v100", "p100", "k80")
_KEY = re.compile(r"\('(.+)', ([0-9]+)\)")  # ASCII digits: '²' is a digit to \d, not to int


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def read_throughputs(path: str | Path, gpu_type: str) -> dict[str, dict[int, float]]:
    """``{job_type: {scale_factor: steps per second alone}}`` for one GPU type; strict numbers
    (a string, bool, null, NaN or infinity is refused)."""
    p = str(path)
    data = read_json(path, "throughputs file")  # strict JSON, as for instances
    if not isinstance(data, dict):
        raise InputError(p, "expected a JSON object {gpu_type: {...}}")
    if gpu_type not in data:
        raise InputError("gpu_type", f"{gpu_type!r} is not in {p} (types: "
                                       f"{some(sorted(map(str, data)))})")
    table = data[gpu_type]
    if not isinstance(table, dict):
        raise InputError(f"{p}: {gpu_type}", "expected an object of job types")
    out: dict[str, dict[int, float]] = {}
    for key, entry in table.items():
        m = _KEY.fullmatch(key)
        if not m:
            raise InputError(f"{p}: {gpu_type}.{key[:60]}", "expected a key \"('job type', N)\"")
        # speeds are scaled by sf / w from a measured w; int() refuses 4 300 digits and more
        if len(m.group(2)) > 9 or int(m.group(2)) < 1:
            raise InputError(f"{p}: {gpu_type}.{key[:60]}",
                             "the scale factor must be in 1 … 999999999")
        if not isinstance(entry, dict) or "null" not in entry:
            raise InputError(f"{p}: {gpu_type}.{key}", "missing the \"null\" throughput")
        x = entry["null"]
        if not _finite(x) or x < 0:
            raise InputError(f"{p}: {gpu_type}.{key}.null",
                             f"expected a finite non-negative number, got {x!r}")
        out.setdefault(m.group(1), {})[int(m.group(2))] = float(x)
    return out


def read_cluster_spec(path: str | Path, gpu_type: str) -> int:
    """The most GPUs of ``gpu_type`` any cluster of ``cluster_specs.json`` has."""
    p = str(path)
    data = read_json(path, "cluster spec")  # strict JSON, as for instances
    if not isinstance(data, dict):
        raise InputError(p, "expected a JSON object {name: [\"V100:P100:K80\"]}")
    col = {"v100": 0, "p100": 1, "k80": 2}.get(gpu_type.split("_")[0])
    best = 0
    for name, specs in data.items():
        for k, s in enumerate(specs if isinstance(specs, list) else [specs]):
            parts = s.split(":") if isinstance(s, str) else []
            if len(parts) != 3 or not all(x.isascii() and x.isdigit() for x in parts):
                raise InputError(f"{p}: {name}[{k}]", f"expected \"V100:P100:K80\" counts, "
                                                      f"got {repr(s)[:60]}")
            if any(len(x) > 15 for x in parts):
                raise InputError(f"{p}: {name}[{k}]", "a GPU count of more than 15 digits")
            if col is not None:
                best = max(best, int(parts[col]))
    return best


def load(trace: str | Path, policy: Policy, *, throughputs: str | Path | None = None,
         gpu_type: str = "v100", cluster_spec: str | Path | None = None,
         gpus_per_server: int = 4) -> Imported:
    """The instance from one Gavel ``.trace`` file (docs/traces.md, ``gavel``)."""
    if gpus_per_server < 1:
        raise InputError("gpus_per_server", f"must be at least 1, got {gpus_per_server}")
    path = str(trace)
    text = read_text(path)
    if throughputs is None:
        throughputs = find_near(path, "simulation_throughputs.json")
        if throughputs is None:
            raise InputError("throughputs", f"no simulation_throughputs.json near {path}; "
                                              "give the file")
    thr = read_throughputs(throughputs, gpu_type)
    spec_path = cluster_spec if cluster_spec is not None else \
        find_near(path, "cluster_specs.json", 1)
    spec_gpus = read_cluster_spec(spec_path, gpu_type) if spec_path is not None else 0
    if spec_path is not None and spec_gpus < gpus_per_server:
        # a spec read and then ignored gave an unbounded cluster, described as "no spec"
        raise InputError(str(spec_path), f"its clusters have at most {spec_gpus} {gpu_type} "
                                         f"GPUs, fewer than one node of {gpus_per_server} "
                                         f"(--gpus-per-server); choose another --gpu-type, "
                                         f"--gpus-per-server or --cluster-spec")
    reader = Reader(path, policy.skip_bad)
    table = []
    for line, fields in _rows(path, text):
        if len(fields) != len(COLUMNS):
            reader.bad(line, f"expected {len(COLUMNS)} tab-separated columns "
                             f"({', '.join(COLUMNS)}), got {len(fields)}")
            continue
        table.append((line, dict(zip(COLUMNS, fields, strict=True))))

    unmeasured: list[int] = []

    def parse(line: int, row: dict[str, str]) -> TraceJob:
        jt = row["job_type"]
        if not jt:
            raise RowError("column job_type: empty")
        if row["needs_data_dir"] not in ("0", "1"):
            raise RowError(f"column needs_data_dir: expected 0 or 1, got "
                           f"{row['needs_data_dir']!r}")
        steps = number(row, "total_steps", minimum=1, integer=True)
        arrival = number(row, "arrival_time")
        sf = int(number(row, "scale_factor", minimum=1, integer=True))
        measured = {w: t for w, t in thr.get(jt, {}).items() if t > 0}
        speed = measured.get(sf)
        if speed is None:
            # The traces ask for scale factors the throughput file never measured (e.g.
            # Recommendation at 4 GPUs): scale linearly from the largest measured one below.
            below = [w for w in measured if w < sf]
            if not below:
                raise RowError(f"column job_type: no positive measured throughput for "
                               f"({jt!r}, ≤ {sf}) on {gpu_type} in {throughputs}")
            w0 = max(below)
            speed = measured[w0] * sf / w0
            unmeasured.append(line)
        pairs = tuple(sorted(measured.items()))
        return TraceJob(f"L{line}", line, arrival, steps / speed, sf, (1.0,), pairs, jt)

    usable = parse_rows(reader, table, parse)
    max_nodes = spec_gpus // gpus_per_server if spec_path is not None else None
    source = (f"{gpus_per_server}-GPU {gpu_type} nodes, at most the {spec_gpus} {gpu_type} GPUs "
              f"of {Path(spec_path).name}" if spec_path is not None else
              f"{gpus_per_server}-GPU {gpu_type} nodes (no cluster spec found)")
    spec = ClusterSpec(("gpu",), ((gpu_type, (float(gpus_per_server),)),), True,
                       max_nodes or None, source)
    out = build("gavel", path, reader, usable, spec, policy,
                {"throughputs": str(throughputs), "gpu_type": gpu_type,
                 "cluster_spec": str(spec_path) if spec_path else None})
    lines = set(out.instance.extra["trace"]["lines"])
    out.instance.extra["trace"]["unmeasured_scale_lines"] = \
        [k for k in unmeasured if k in lines]
    return out


def _rows(path: str, text: str):
    try:
        yield from rows(text, delimiter="\t")
    except InputError as err:
        raise InputError(path + err.place[1:], err.message) from None
