"""The experiments that check the paper's findings (SPEC, top; issue 5), each a CSV of raw rows
and a PNG figure.

- ``ratio``: OPT/ALG of every algorithm over ``small`` instances (one per seed); OASiS's
  spread beside the paper's 1.1–1.5.
- ``utility-vs-jobs``: total utility and completed jobs as the load grows (``paper`` preset,
  50 … 300 jobs).
- ``regime``: the 2α guarantee's regime, max share of a server 1 … 0.05 (``regime.py``).
- ``estimation-error``: OASiS (and oasis-adaptive) when U or L is under- or over-estimated
  (×0.1 … ×10), with scarce
  (200 jobs) and plentiful (50 jobs) resources on the ``paper`` preset.
- ``runtime``: OASiS decision time vs horizon and number of servers (``paper`` preset).

Rows are keyed by (experiment, seed, params, algorithm): a rerun skips what the CSV holds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import regime as _regime
from .errors import InputError, expect_executor, expect_integer, expect_path
from .tasks import COLUMNS, NUMBERS, ResultStore, Task, run_tasks
from .traces import experiment as _trace

ONLINE = ("oasis", "oasis-adaptive", "fifo", "drf", "rrh", "tetris")
#: Algorithms that take the price-bound scales u_scale, l_scale.
SCALED = ("oasis", "oasis-adaptive")
#: Seeds one experiment accepts: its tasks are listed before any runs.
MAX_SEEDS = 100_000
FACTORS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)


def _instance(params: dict[str, Any], seed: int):
    from .generator import generate
    # named PRESET-sSEED as in the results files so far (their rows give the sizes)
    return generate(params["preset"], seed=seed, jobs=params.get("jobs"),
                    horizon=params.get("horizon"), servers=params.get("servers"),
                    name=f"{params['preset']}-s{seed}")


def _size(inst) -> dict[str, Any]:
    return {"instance": inst.name, "jobs": inst.num_jobs, "horizon": inst.horizon,
            "worker_servers": len(inst.worker_names), "ps_servers": len(inst.ps_names)}


def _run_algorithm(name: str, inst, **params: Any) -> dict[str, Any]:
    from . import algorithms
    from .io import check_schedule_size
    check_schedule_size(inst, algorithms=[name])
    sched = algorithms.run(name, inst, **params)
    ex = sched.extras
    row = {"algorithm": name, "utility": sched.total_utility, "completed": sched.completed,
           "seconds": ex.get("seconds"), "alpha": ex.get("alpha"), "d_cert": ex.get("D_cert")}
    if ex.get("alpha") is not None:
        row["bound_2alpha"] = 2 * ex["alpha"]
    if ex.get("decision_ms_median") is not None:
        row["decision_ms"] = ex["decision_ms_median"]
    elif ex.get("seconds") is not None and inst.num_jobs:
        row["decision_ms"] = 1e3 * ex["seconds"] / inst.num_jobs
    return row


def _base(task: Task) -> dict[str, Any]:
    return {"experiment": task.experiment, "seed": task.seed, "params": task.params_key}


# --- task functions (module level: they are pickled to worker processes) -----------------


def execute_ratio(task: Task) -> list[dict[str, Any]]:
    """OPT by the exact solver (or its bound at the time limit), then every algorithm."""
    from .offline import solve
    inst = _instance(task.params, task.seed)
    _, rep = solve(inst, time_limit=task.params.get("time_limit", 60.0))
    opt = rep.objective if rep.status == "optimal" else rep.bound
    kind = "optimal" if rep.status == "optimal" else "bound"
    rows = []
    for name in task.algorithms:
        row = {**_base(task), **_size(inst), **_run_algorithm(name, inst), "opt": opt,
               "opt_kind": kind, "status": rep.status.value}
        u = row["utility"]
        row["ratio"] = opt / u if u > 1e-12 else (1.0 if opt <= 1e-12 else math.inf)
        rows.append(row)
    return rows


def execute_runs(task: Task) -> list[dict[str, Any]]:
    """Each algorithm on one generated instance; OASiS takes ``u_scale``/``l_scale``."""
    inst = _instance(task.params, task.seed)
    rows = []
    for name in task.algorithms:
        params = {k: task.params[k] for k in ("u_scale", "l_scale") if k in task.params}
        rows.append({**_base(task), **_size(inst),
                     **_run_algorithm(name, inst, **(params if name in SCALED else {}))})
    return rows


# --- experiment definitions --------------------------------------------------------------


@dataclass(frozen=True)
class Experiment:
    name: str
    question: str
    default_seeds: int
    tasks: Callable[[int, bool], list[Task]]
    execute: Callable[[Task], list[dict[str, Any]]]
    figure: Callable[[list[dict[str, str]], Path], None]
    #: the CSV's columns, and the keyword options ``tasks`` takes beyond (seeds, quick)
    columns: tuple[str, ...] = COLUMNS
    options: tuple[str, ...] = ()


def _ratio_tasks(seeds: int, quick: bool) -> list[Task]:
    params = {"preset": "small", "time_limit": 60.0}
    if quick:
        params.update(horizon=6, jobs=4)
    return [Task("ratio", s, params, ONLINE) for s in range(seeds)]


def _jobs_tasks(seeds: int, quick: bool) -> list[Task]:
    counts, extra = ((10, 20), {"horizon": 20, "servers": 4}) if quick else \
        ((50, 100, 150, 200, 300), {})
    return [Task("utility-vs-jobs", s, {"preset": "paper", "jobs": n, **extra}, ONLINE)
            for n in counts for s in range(seeds)]


def _estimation_tasks(seeds: int, quick: bool) -> list[Task]:
    factors = (0.1, 1.0, 10.0) if quick else FACTORS
    scarcity = {"scarce": 200, "plentiful": 50}
    extra = {"horizon": 20, "servers": 4} if quick else {}
    if quick:
        scarcity = {"scarce": 30, "plentiful": 6}
    out = []
    for label, jobs in scarcity.items():
        for which in ("u_scale", "l_scale"):
            for f in factors:
                if f == 1.0 and which == "l_scale":
                    continue  # the same run as u_scale = 1
                p = {"preset": "paper", "jobs": jobs, "scarcity": label, "u_scale": 1.0,
                     "l_scale": 1.0, **extra}
                p[which] = f
                out += [Task("estimation-error", s, p, SCALED) for s in range(seeds)]
    return out


def _runtime_tasks(seeds: int, quick: bool) -> list[Task]:
    if quick:
        grid = [{"horizon": t, "servers": 4} for t in (10, 20)] + \
               [{"horizon": 10, "servers": s} for s in (2, 8)]
        jobs = 10
    else:
        grid = [{"horizon": t, "servers": 40} for t in (25, 50, 100, 200)] + \
               [{"horizon": 100, "servers": s} for s in (10, 20, 80)]
        jobs = 100
    return [Task("runtime", s, {"preset": "paper", "jobs": jobs, **g}, ("oasis",))
            for g in grid for s in range(seeds)]


def _figure(name: str) -> Callable[[list[dict[str, str]], Path], None]:
    def draw(rows: list[dict[str, str]], path: Path) -> None:
        from . import plots
        getattr(plots, name.replace("-", "_"))(rows, path)
    return draw


EXPERIMENTS: dict[str, Experiment] = {
    "ratio": Experiment("ratio", "OPT/ALG over many small instances", 30, _ratio_tasks,
                        execute_ratio, _figure("ratio")),
    "utility-vs-jobs": Experiment("utility-vs-jobs", "utility and completions vs load", 3,
                                  _jobs_tasks, execute_runs, _figure("utility-vs-jobs")),
    "estimation-error": Experiment("estimation-error", "OASiS under price-bound errors", 3,
                                   _estimation_tasks, execute_runs,
                                   _figure("estimation-error")),
    "runtime": Experiment("runtime", "OASiS decision time vs horizon and servers", 3,
                          _runtime_tasks, execute_runs, _figure("runtime")),
}

# Real traces (issue 12): slices of each public trace at two loads, and at research scale
# (issue 21: 1 000 / 5 000 jobs, the whole Philly trace); oasis_opt/traces/experiment.py
EXPERIMENTS["trace"] = Experiment("trace", "every algorithm vs OPT on slices of public traces", 2,
                                  _trace.tasks, _trace.execute, _trace.figure,
                                  columns=_trace.TRACE_COLUMNS,
                                  options=("scale", "time_limit", "method"))
# The regime of the 2α guarantee (issue 13): max share 1 … 0.05; oasis_opt/regime.py
EXPERIMENTS["regime"] = Experiment("regime", "OPT/ALG, α·ΔP < ΔD and D_cert/OPT vs max share",
                                   4, _regime.tasks, _regime.execute, _regime.figure)


def run_experiment(name: str, *, seeds: int | None = None, out: str | Path = "results",
                   quick: bool = False, progress: bool = False,
                   executor: Executor | None = None,
                   algorithms: Sequence[str] = (), scale: Any = None,
                   time_limit: float | None = None,
                   method: str | None = None) -> dict[str, Any]:
    """Run (or resume) one experiment; write ``OUT/NAME.csv`` and ``OUT/NAME.png``.

    ``algorithms``: more algorithms (any name the registry resolves: a user's own scheduler)
    beside the built-ins, in the experiments that compare a set of algorithms (``ratio``,
    ``utility-vs-jobs``, ``trace``, ``regime``); their rows share the CSV and the figure.
    ``scale`` (slice sizes, ``"research"`` = 1 000 and 5 000 jobs, ``"whole"``),
    ``time_limit`` (the offline solve's, per task) and ``method`` (``offline.solve``'s): the
    ``trace`` experiment's (oasis_opt/traces/experiment.py)."""
    if not isinstance(name, str) or name not in EXPERIMENTS:  # a list: unhashable
        raise InputError("name", f"unknown experiment {name!r}; choose from "
                                 f"{', '.join(EXPERIMENTS)}")
    if seeds is not None:
        expect_integer("seeds", seeds)
    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        # the task list is built up front: a huge count would fill memory before any runs
        raise InputError("seeds", f"must be in 1 … {MAX_SEEDS}, got {seeds}")
    expect_path("out", out)  # '' wrote NAME.csv into the working folder
    if isinstance(algorithms, str) or not isinstance(algorithms, Iterable):  # not its letters
        raise InputError("algorithms", f"expected a list of algorithm names, got "
                                       f"{type(algorithms).__name__}")
    expect_executor("executor", executor)
    exp = EXPERIMENTS[name]
    out = Path(out)
    extra = {k: v for k, v in (("scale", scale), ("time_limit", time_limit),
                               ("method", method)) if v is not None}
    for k in extra:
        if k not in exp.options:
            raise InputError(k, f"applies to the trace experiment, not {name}")
    from .io import check_output
    figure = check_output(out / f"{name}.png")  # drawn after the run: refused now, not then
    store = ResultStore(out / f"{name}.csv", columns=exp.columns, numbers=NUMBERS)
    before = len(store.rows)
    start = time.perf_counter()
    tasks = exp.tasks(seeds or (2 if quick else exp.default_seeds), quick, **extra)
    if algorithms:
        from . import algorithms as registry
        for a in algorithms:
            registry.check(a)
        tasks = [replace(t, algorithms=tuple(dict.fromkeys((*t.algorithms, *algorithms))))
                 if len(t.algorithms) > 1 else t for t in tasks]
    from .progress import step_lines
    # the trace experiment's long tasks (the whole Philly trace: an hour) report their steps
    with _trace.report_steps(step_lines(progress)):
        ran = run_tasks(tasks, exp.execute, store, executor=executor, progress=progress,
                        description=name)
    exp.figure(store.rows, figure)
    return {"experiment": name, "csv": str(out / f"{name}.csv"), "figure": str(figure),
            "rows": len(store.rows), "new_rows": len(store.rows) - before, "tasks_run": ran,
            "seconds": time.perf_counter() - start, "summary": summarize(name, store.rows)}


def summarize(name: str, rows: Sequence[dict[str, str]]) -> dict[str, Any]:
    """Numbers the docs quote: medians per algorithm and setting."""
    if name == "trace":
        return _trace.summary(rows)
    if name == "regime":
        return _regime.summary(rows)
    from . import plots
    return plots.summary(name, rows)
