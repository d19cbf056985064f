"""The ``trace`` experiment: every algorithm and the exact optimum (or its bound) on slices of
each public trace at two loads (docs/results.md, "Real traces").

A task is one (trace, slice, load): the slice ``k`` (the task's seed) is the jobs
``start + k·jobs … start + (k+1)·jobs − 1`` of the trace in submission order, imported with the
default mapping (docs/traces.md) and ``--load`` set to the task's load; the offline solve runs
with a time limit, then every registered algorithm. The traces come from the samples shipped in
``instances/traces/`` (philly, gavel, pollux, tiresias) and, for alibaba, whose files the
project does not ship, from ``$OASIS_TRACES`` or ``../shared/traces`` next to the repository;
without them the alibaba tasks are left out.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tasks import Task

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "instances" / "traces"
LOADS = (1.0, 2.0)


@dataclass(frozen=True)
class TraceSlice:
    """Where one trace's slices start, and how it is imported."""

    label: str
    fmt: str
    path: str  # relative to its root: "samples:" (instances/traces) or "shared:" (the copies)
    start: int
    options: tuple[tuple[str, Any], ...] = ()


TRACES = (
    TraceSlice("philly", "philly", "samples:adaptdl/philly.csv", 200),
    TraceSlice("gavel", "gavel", "samples:gavel/msr/seed=0/6214e9.trace", 40),
    TraceSlice("pollux", "pollux", "samples:adaptdl/workloads/workload-1.csv", 0),
    TraceSlice("tiresias", "tiresias", "samples:tiresias/60_job.csv", 0, ),
    TraceSlice("alibaba", "alibaba", "shared:alibaba-gpu-v2023/openb_pod_list_default.csv", 2000),
)


def shared_root() -> Path:
    return Path(os.environ.get("OASIS_TRACES") or ROOT.parent / "shared" / "traces")


def resolve(path: str) -> Path:
    root, rel = path.split(":", 1)
    return (SAMPLES if root == "samples" else shared_root()) / rel


def tasks(seeds: int, quick: bool) -> list[Task]:
    """``seeds`` slices of each trace at each load; quick: two tiny tiresias slices."""
    from ..algorithms import builtin_names
    algos = tuple(builtin_names())
    if quick:
        return [Task("trace", k, {"trace": "tiresias", "jobs": 5, "horizon": 15, "load": load,
                                  "time_limit": 5.0}, algos)
                for k in range(seeds) for load in LOADS]
    out = []
    for t in TRACES:
        if not resolve(t.path).exists():
            continue  # alibaba without the shared copies
        out += [Task("trace", k, {"trace": t.label, "jobs": 40, "horizon": 100, "load": load,
                                  "time_limit": 30.0}, algos)
                for k in range(seeds) for load in LOADS]
    return out


def instance_for(params: dict[str, Any], k: int):
    """The instance of slice ``k`` for one task's parameters."""
    from . import Policy, import_trace
    t = next(x for x in TRACES if x.label == params["trace"])
    jobs = int(params["jobs"])
    policy = Policy(jobs=jobs, start=t.start + k * jobs, horizon=int(params["horizon"]),
                    load=float(params["load"]),
                    name=f"{t.label}-s{t.start + k * jobs}-load{params['load']:g}")
    return import_trace(t.fmt, resolve(t.path), policy, **dict(t.options)).instance


def execute(task: Task) -> list[dict[str, Any]]:
    """OPT by the exact engine (or its bound at the time limit), then every algorithm."""
    from .. import algorithms
    from ..offline import solve
    inst = instance_for(task.params, task.seed)
    _, rep = solve(inst, time_limit=task.params.get("time_limit", 30.0))
    optimal = rep.status == "optimal"
    opt = rep.objective if optimal else rep.bound
    base = {"experiment": task.experiment, "seed": task.seed, "params": task.params_key,
            "instance": inst.name, "jobs": inst.num_jobs, "horizon": inst.horizon,
            "worker_servers": len(inst.worker_names), "ps_servers": len(inst.ps_names),
            "opt": opt, "opt_kind": "optimal" if optimal else "bound",
            "status": rep.status.value}
    rows = []
    for name in task.algorithms:
        sched = algorithms.run(name, inst)
        ex = sched.extras
        u = sched.total_utility
        ratio = opt / u if u > 1e-12 else (1.0 if opt <= 1e-12 else math.inf)
        alpha = ex.get("alpha")
        rows.append({**base, "algorithm": name, "utility": u, "completed": sched.completed,
                     "ratio": ratio, "alpha": alpha,
                     "bound_2alpha": 2 * alpha if alpha is not None else None,
                     "d_cert": ex.get("D_cert"), "seconds": ex.get("seconds")})
    rows.append({**base, "algorithm": "optimal", "utility": rep.objective,
                 "ratio": opt / rep.objective if rep.objective > 1e-12 else None,
                 "seconds": rep.seconds})
    return rows


# --- summary and figure -------------------------------------------------------------------


def _groups(rows) -> dict[tuple[str, float], dict[str, list[dict[str, str]]]]:
    import json
    out: dict[tuple[str, float], dict[str, list[dict[str, str]]]] = {}
    for r in rows:
        p = json.loads(r["params"])
        out.setdefault((p["trace"], float(p["load"])), {}).setdefault(r["algorithm"], []) \
            .append(r)
    return out


def _median(xs: list[float]) -> float | None:
    xs = sorted(x for x in xs if not math.isnan(x))
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def _brackets(by_alg: dict[str, list[dict[str, str]]], alg: str) -> list[tuple[float, float]]:
    """Per slice, ``(incumbent / ALG, OPT-or-bound / ALG)``: the true OPT/ALG lies between
    (equal ends where OPT is proven), since incumbent ≤ OPT ≤ bound."""
    incumbent = {r["seed"]: float(r["utility"]) for r in by_alg.get("optimal", [])}
    out = []
    for r in by_alg.get(alg, []):
        u, top = float(r["utility"]), float(r["opt"])
        low = incumbent.get(r["seed"], top)
        out.append((low / u, top / u) if u > 1e-12 else (math.inf, math.inf))
    return out


def summary(rows) -> dict[str, Any]:
    """Per (trace, load): each algorithm's median OPT/ALG over the slices, as the interval
    ``[incumbent/ALG, bound/ALG]`` where the solver stopped at its time limit, how many
    slices were proven optimal, and the median utility and completions."""
    out: dict[str, Any] = {}
    for (trace, load), by_alg in sorted(_groups(rows).items()):
        opt_rows = by_alg.get("optimal", [])
        entry: dict[str, Any] = {
            "slices": len(opt_rows),
            "proven_optimal": sum(1 for r in opt_rows if r["opt_kind"] == "optimal"),
            "median_gap": _median([float(r["ratio"]) - 1 for r in opt_rows if r["ratio"]]),
            "median_ratio": {}, "median_ratio_low": {}, "median_utility": {},
            "median_completed": {}}
        for alg, rs in by_alg.items():
            if alg == "optimal":
                continue
            br = _brackets(by_alg, alg)
            entry["median_ratio"][alg] = _median([hi for _, hi in br])
            entry["median_ratio_low"][alg] = _median([lo for lo, _ in br])
            entry["median_utility"][alg] = _median([float(r["utility"]) for r in rs])
            entry["median_completed"][alg] = _median([float(r["completed"]) for r in rs])
        out[f"{trace}@{load:g}"] = entry
    return out


def figure(rows, path: Path) -> None:
    """One panel per trace: each algorithm's OPT/ALG at each load (median over slices), drawn
    as the interval from incumbent/ALG to bound/ALG (a single tick where OPT is proven)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _groups(rows)
    traces = [t.label for t in TRACES if any(k[0] == t.label for k in groups)]
    algos = sorted({a for g in groups.values() for a in g if a != "optimal"},
                   key=lambda a: (a != "oasis", a))
    n = max(1, len(traces))
    fig, axes = plt.subplots(1, n, figsize=(2.9 * n, 3.8), sharey=True, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / max(1, len(algos))
    cap = 5.0
    for ax, trace in zip(axes[0], traces, strict=False):
        loads = sorted(ld for (t, ld) in groups if t == trace)
        for a, alg in enumerate(algos):
            color = colors[a % len(colors)]
            for x, load in enumerate(loads):
                br = _brackets(groups[(trace, load)], alg)
                if not br:
                    continue
                lo = min(_median([b[0] for b in br]) or cap, cap)
                hi = min(_median([b[1] for b in br]) or cap, cap)
                pos = x + (a - (len(algos) - 1) / 2) * width
                ax.bar(pos, max(hi - lo, 0.0), width * 0.9, bottom=lo, color=color,
                       alpha=0.85, label=alg if x == 0 else None)
                ax.hlines([lo, hi], pos - width * 0.45, pos + width * 0.45, color=color,
                          linewidth=1.5)
        ax.axhline(1.0, color="grey", linewidth=0.6, linestyle="--")
        ax.set_xticks(range(len(loads)), [f"load {ld:g}" for ld in loads])
        ax.set_title(trace)
        ax.grid(axis="y", linewidth=0.3)
    axes[0][0].set_ylabel(f"OPT / ALG (median over slices, capped at {cap:g})")
    axes[0][0].set_ylim(0.9, None)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(algos), frameon=False)
    fig.suptitle("Public traces: OPT/ALG of each algorithm; a bar spans incumbent/ALG to "
                 "bound/ALG where the solver hit its time limit", fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.94))
    from ..plots import save_figure
    save_figure(fig, path)
