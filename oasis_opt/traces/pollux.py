"""The Pollux simulator's workloads (petuum/adaptdl, osdi21-artifact, ``simulator/``).

``workloads*/workload-N.csv``: header ``name,time,application,num_replicas,batch_size``.
Each application's measurements sit in ``apps/APP/`` (``--apps``, default: the ``apps`` folder
next to the workload's folder or above):

- steps to train: the last ``iteration`` of ``validation-B.csv`` for the job's batch size B
  (one row per epoch, the simulator's fixed epoch count);
- seconds per step at w replicas, local batch ``b = B / w``: ``step_time + sync_time`` from
  ``placements.csv`` for w packed onto 4-GPU nodes (placement digits = GPUs per node, e.g.
  ``44`` for 8), or from ``scalability.csv`` (the fewest nodes with ``num_replicas = w``) past
  16; linear in b between measured local batch sizes, the smallest one's time below them, and
  proportional to b above the largest (gradient accumulation);
- run time alone ``steps · t(n)`` at the requested replicas n; throughput ``θ(w) = 1/t(w)``
  steps per second at every measured w, which bounds the elasticity.

The cluster is the simulator's: 4-GPU nodes, at most 16 of them (``--gpus-per-server``).
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cache
from pathlib import Path

from ..errors import InputError, some
from ..io import is_folder
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
    table,
)

COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
PLACEMENT_COLUMNS = ("placement", "local_bsz", "step_time", "sync_time")
SCALABILITY_COLUMNS = ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time")
VALIDATION_COLUMNS = ("progress", "iteration", "metric", "grad_sqr", "grad_var")
#: The Pollux simulator's cluster: 16 nodes of 4 GPUs.
NODES, GPUS_PER_NODE = 16, 4


def packed(w: int, per_node: int = GPUS_PER_NODE) -> str:
    """The placement string of w GPUs packed onto nodes: ``6 → "24"``, ``8 → "44"``."""
    full, rest = divmod(w, per_node)
    return "".join(sorted(([str(rest)] if rest else []) + [str(per_node)] * full))


class App:
    """One application's measurements (``apps/APP``), read strictly and lazily."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._curves: dict[tuple[str, int], list[tuple[float, float]]] | None = None

    def _read(self, name: str, cols: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
        path = self.folder / name
        if not path.exists():
            raise InputError(str(path), "missing measurement file")
        return table(path, [cols], what="measurement file")[1]

    def curves(self) -> dict[tuple[str, int], list[tuple[float, float]]]:
        """``{("p", placement) or ("s", replicas): [(local_bsz, seconds per step)]}``."""
        if self._curves is not None:
            return self._curves
        out: dict[tuple[str, int], dict[float, float]] = {}
        nodes_seen: dict[int, int] = {}
        for fname, cols in (("placements.csv", PLACEMENT_COLUMNS),
                            ("scalability.csv", SCALABILITY_COLUMNS)):
            for line, row in self._read(fname, cols):
                try:
                    b = number(row, "local_bsz", positive=True)
                    t = number(row, "step_time") + number(row, "sync_time")
                    if t <= 0:  # would read as "not measured" where the job asks for it
                        raise RowError("columns step_time + sync_time: a step takes no time "
                                       "(0 s)")
                    if fname == "placements.csv":
                        p = row["placement"]
                        # '²' is a digit, not an int; int() refuses 4 300 digits and more
                        if not (p.isascii() and p.isdigit()) or len(p) > 64:
                            raise RowError(f"column placement: expected GPU counts per node "
                                           f"(at most 64 nodes), got {p[:60]!r}")
                        key = ("p", int(p))
                    else:
                        nodes = int(number(row, "num_nodes", minimum=1, integer=True))
                        w = int(number(row, "num_replicas", minimum=1, integer=True))
                        if nodes_seen.setdefault(w, nodes) != nodes:
                            if nodes > nodes_seen[w]:
                                continue  # keep the fewest nodes for w replicas
                            out.pop(("s", w), None)
                            nodes_seen[w] = nodes
                        key = ("s", w)
                except RowError as err:
                    raise InputError(f"{self.folder / fname}:{line}", str(err)) from None
                out.setdefault(key, {})[b] = t
        self._curves = {k: sorted(v.items()) for k, v in out.items()}
        return self._curves

    def seconds_per_step(self, w: int, batch: float) -> float | None:
        """``t(w)`` at local batch ``batch / w``; None when w was not measured."""
        c = self.curves()
        # placements.csv covers up to 4 nodes of 4 GPUs; scalability.csv the larger counts
        curve = c.get(("p", int(packed(w)))) if w <= 4 * GPUS_PER_NODE else c.get(("s", w))
        if not curve:
            return None
        b = batch / w
        xs = [x for x, _ in curve]
        k = bisect_left(xs, b)
        if k < len(xs) and xs[k] == b:
            return curve[k][1]
        if k == 0:
            return curve[0][1]
        if k == len(xs):
            return curve[-1][1] * b / xs[-1]
        (x0, y0), (x1, y1) = curve[k - 1], curve[k]
        return y0 + (y1 - y0) * (b - x0) / (x1 - x0)

    @cache  # noqa: B019 (one App per import)
    def steps(self, batch: int) -> int | None:
        """Steps to train at total batch size ``batch``: the last ``iteration``."""
        name = f"validation-{batch}.csv"
        if not (self.folder / name).exists():
            return None
        last = 0
        for line, row in self._read(name, VALIDATION_COLUMNS):
            try:
                it = int(number(row, "iteration", minimum=0, integer=True))
            except RowError as err:
                raise InputError(f"{self.folder / name}:{line}", str(err)) from None
            last = max(last, it)
        if last == 0:  # the file is there: its rows, not its absence, are what is wrong
            raise InputError(str(self.folder / name), "no row with a positive iteration: no "
                                                      "steps to train")
        return last


def load(trace: str | Path, policy: Policy, *, apps: str | Path | None = None) -> Imported:
    """The instance from one Pollux ``workload-N.csv`` (docs/traces.md, ``pollux``)."""
    path = str(trace)
    if apps is None:
        apps = find_near(path, "apps", 2)
        if apps is None:
            raise InputError("apps", f"no apps/ folder near {path}; give the folder of the "
                                       "applications' measurements")
    apps = Path(apps)
    if not is_folder(apps):
        raise InputError("apps", f"{apps} is not a folder")
    reader = Reader(path, policy.skip_bad)
    _, rows = table(path, [COLUMNS], reader)
    known = {d.name: App(d) for d in sorted(apps.iterdir()) if d.is_dir()}
    max_w = NODES * GPUS_PER_NODE

    def parse(line: int, row: dict[str, str]) -> TraceJob:
        name = row["name"]
        if not name:
            raise RowError("column name: empty")
        submit = number(row, "time")
        app_name = row["application"]
        if app_name not in known:
            raise RowError(f"column application: {app_name!r} has no measurements in {apps} "
                           f"(known: {some(known)})")
        app = known[app_name]
        n = int(number(row, "num_replicas", minimum=1, integer=True))
        batch = int(number(row, "batch_size", minimum=1, integer=True))
        steps = app.steps(batch)
        if steps is None:
            raise RowError(f"column batch_size: no validation-{batch}.csv for {app_name}")
        t = app.seconds_per_step(n, batch)
        if t is None or t <= 0:
            raise RowError(f"column num_replicas: {n} replicas of {app_name} were not measured")
        cap = min(max_w, int(policy.elastic * n + 1e-9))
        pairs = []
        for w in range(1, cap + 1):
            tw = app.seconds_per_step(w, batch)
            if tw is not None and tw > 0:
                pairs.append((w, 1.0 / tw))
        return TraceJob(name, line, submit, steps * t, n, (1.0,), tuple(pairs), app_name)

    usable = parse_rows(reader, rows, parse)
    spec = ClusterSpec(("gpu",), (("gpu", (float(GPUS_PER_NODE),)),), True, NODES,
                       f"the Pollux simulator's {NODES} nodes of {GPUS_PER_NODE} GPUs")
    return build("pollux", path, reader, usable, spec, policy, {"apps": str(apps)})
