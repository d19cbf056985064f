"""The ``trace`` experiment: every algorithm and the offline optimum (or an interval around
it) on slices of each public trace (docs/results.md, "Public traces").

Two sets of slices, chosen by ``scale`` (``oasis-opt experiment trace --scale …``):

- the quick set (``scale`` 40, the default): a task is one (trace, slice, load), the slice
  ``k`` (the task's seed) being jobs ``start + k·40 … start + (k+1)·40 − 1`` of the trace in
  submission order, imported with the default mapping (docs/traces.md), 100 slots and
  ``--load`` 1 or 2; the traces are the samples in ``instances/traces/`` and Alibaba from
  ``$OASIS_TRACES`` or ``../shared/traces`` (left out when absent);
- research scale (issue 21): slices of ``N`` jobs (1 000 and 5 000, any size given) of the
  whole traces in ``$OASIS_TRACES`` or ``../shared/traces`` (``SCALE_TRACES``: Philly's
  82 247 jobs, Alibaba's 6 203, Gavel's VC of 2 000, Tiresias's 1 001-job backlog; Pollux's
  workloads have 160 jobs), at load 1.5 with the importer's automatic slot length and horizon
  (docs/traces.md, "Slot length and horizon"); ``whole`` is every job of the Philly trace.
  A slice larger than the trace holds is left out (``SCALE_TRACES[…].sizes``).

Each task runs every algorithm once, then the offline solve once (:func:`opt_interval`, the
one call of ``offline.solve``; ``time_limit`` and ``method`` are parameters) with the best
built-in schedule as its floor, so that no algorithm runs twice (on the whole Philly trace
the six take about 12 CPU-minutes). It reports per algorithm its utility and OPT/ALG as the
interval ``[incumbent/ALG, bound/ALG]`` (incumbent ≤ OPT ≤ bound; equal ends where OPT is
proven). Long tasks report their steps (import, each algorithm, the solve's rounds) as lines
to the hook :func:`report_steps` installs (the CLI prints them on stderr).
"""

from __future__ import annotations

import math
import os
import re
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputError
from ..io import DATA_FOLDER, SOURCE_FOLDER, check_schedule_size
from ..model import Schedule
from ..ratio import ratio
from ..tasks import COLUMNS, Task

ROOT = Path(__file__).resolve().parents[2]
LOADS = (1.0, 2.0)
#: The load of the research-scale slices: the importer's default (contended).
SCALE_LOAD = 1.5
#: The quick set's slice size and the research-scale sizes run by ``--scale research``.
QUICK_JOBS = 40
RESEARCH_SIZES = (1000, 5000)
#: The solve's time limit per task (seconds): the quick set's, and research scale's default.
QUICK_TIME_LIMIT = 30.0
SCALE_TIME_LIMIT = 300.0
#: ``--scale whole``'s default: column generation's bound on the whole Philly trace took
#: 36 minutes with a 2 400 s limit (docs/results.md); with the six algorithms before it
#: (about 12 CPU-minutes) the task ends in about an hour on 2 cores.
WHOLE_TIME_LIMIT = 2400.0
#: The trace experiment's CSV: the experiments' columns, then the interval and its parts.
TRACE_COLUMNS = (*COLUMNS, "scale", "slot_seconds", "incumbent", "ratio_lo", "ratio_hi",
                 "validated", "time_limit", "method", "route", "note")


@dataclass(frozen=True)
class TraceSlice:
    """Where one trace's slices start, and how it is imported; ``usable``: the jobs the file
    holds (research scale: slices past them are left out)."""

    label: str
    fmt: str
    path: str  # relative to its root: "samples:" (instances/traces) or "shared:" (the copies)
    start: int
    options: tuple[tuple[str, Any], ...] = ()
    usable: int | None = None  # usable jobs of the file (research scale: what fits)


TRACES = (
    TraceSlice("philly", "philly", "samples:adaptdl/philly.csv", 200),
    TraceSlice("gavel", "gavel", "samples:gavel/msr/seed=0/6214e9.trace", 40),
    TraceSlice("pollux", "pollux", "samples:adaptdl/workloads/workload-1.csv", 0),
    TraceSlice("tiresias", "tiresias", "samples:tiresias/60_job.csv", 0, ),
    TraceSlice("alibaba", "alibaba", "shared:alibaba-gpu-v2023/openb_pod_list_default.csv", 2000),
)
#: The research-scale sources: whole traces, slices from ``start`` (Philly's first thousand
#: jobs span weeks at a trickle; from 1 000 on it is busy), ``usable`` the file's usable jobs
#: with the default mapping (a slice past them is left out).
SCALE_TRACES = (
    TraceSlice("philly", "philly", "shared:adaptdl/philly.csv", 1000, usable=82247),
    TraceSlice("gavel", "gavel", "shared:gavel/msr/seed=0/6214e9.trace", 0, usable=2000),
    TraceSlice("tiresias", "tiresias", "shared:tiresias/yarn-gput1000.csv", 0, usable=1001),
    TraceSlice("alibaba", "alibaba", "shared:alibaba-gpu-v2023/openb_pod_list_default.csv",
               1000, usable=6203),
)
#: ``--scale whole``: this trace, every job.
WHOLE = "philly"


def shared_root() -> Path:
    return Path(os.environ.get("OASIS_TRACES") or ROOT.parent / "shared" / "traces")


def samples_root() -> Path:
    """The trace samples: installed with the package (``oasis_opt/data/instances/traces``),
    or the repository's ``instances/traces`` (a checkout, an editable install). A
    non-editable install had none, and ``experiment trace`` ended in "cannot read trace"
    (an outside audit)."""
    installed = DATA_FOLDER / "traces"
    return installed if installed.is_dir() else SOURCE_FOLDER / "traces"


def resolve(path: str) -> Path:
    root, rel = path.split(":", 1)
    return (samples_root() if root == "samples" else shared_root()) / rel


def parse_scale(scale: str | int | Sequence[str | int] | None) -> tuple[int | str, ...]:
    """``"40,1000"``, ``[1000, "whole"]``, ``"research"`` (= 1000, 5000) → sizes and
    ``"whole"``; None: the quick set (40)."""
    if scale is None:
        return (QUICK_JOBS,)
    items = scale.split(",") if isinstance(scale, str) else \
        [scale] if isinstance(scale, int) else list(scale)
    out: list[int | str] = []
    for item in items:
        text = str(item).strip()
        if text == "research":
            out += RESEARCH_SIZES
        elif text == "whole":
            out.append("whole")
        elif re.fullmatch(r"[0-9]+", text) and int(text) >= 1:  # ASCII digits only
            out.append(int(text))
        else:
            raise InputError("scale", f"expected slice sizes (jobs), 'research' or 'whole', "
                                      f"got {text!r}")
    return tuple(dict.fromkeys(out))


def tasks(seeds: int, quick: bool, *, scale: Any = None, time_limit: float | None = None,
          method: str = "auto") -> list[Task]:
    """``seeds`` slices of each trace per size (the quick set at each of two loads);
    ``quick``: two tiny Tiresias slices. ``scale``: :func:`parse_scale`; ``time_limit``: the
    solve's per task (default 30 s for 40-job slices, 300 s at research scale, 2 400 s for
    the whole trace)."""
    from ..algorithms import builtin_names
    algos = tuple(builtin_names())
    if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
        raise InputError("time_limit", f"must be a positive number, got {time_limit}")
    from ..offline import METHODS
    if method not in METHODS:
        raise InputError("method", f"unknown method {method!r}; choose from "
                                   f"{', '.join(METHODS)}")
    solve = {} if method == "auto" else {"method": method}
    sizes = parse_scale(scale)  # refused by name even where --quick does not use it
    if quick:
        return [Task("trace", k, {"trace": "tiresias", "jobs": 5, "horizon": 15, "load": load,
                                  "time_limit": time_limit or 5.0, **solve}, algos)
                for k in range(seeds) for load in LOADS]
    out = []
    for size in sizes:
        if size == QUICK_JOBS:
            for t in TRACES:
                if not resolve(t.path).exists():
                    continue  # alibaba without the shared copies
                out += [Task("trace", k, {"trace": t.label, "jobs": QUICK_JOBS, "horizon": 100,
                                          "load": load,
                                          "time_limit": time_limit or QUICK_TIME_LIMIT,
                                          **solve}, algos)
                        for k in range(seeds) for load in LOADS]
            continue
        for t in SCALE_TRACES:
            if size == "whole" and t.label != WHOLE or not resolve(t.path).exists():
                continue
            fits = 1 if size == "whole" else \
                max(0, ((t.usable or 0) - t.start) // int(size))
            out += [Task("trace", k, {"trace": t.label, "jobs": size, "load": SCALE_LOAD,
                                      "scale": str(size),
                                      "time_limit": time_limit or (
                                          WHOLE_TIME_LIMIT if size == "whole"
                                          else SCALE_TIME_LIMIT), **solve},
                         algos)
                    for k in range(min(seeds, fits))]
    if not out:  # every size past what the traces here hold: nothing would run
        held = [f"{t.label} {t.usable - t.start}" for t in SCALE_TRACES
                if t.usable is not None and resolve(t.path).exists()]
        sizes = ", ".join(str(x) for x in parse_scale(scale))
        raise InputError("scale", f"no trace here holds a slice of {sizes} jobs (whole traces "
                                  f"are read from $OASIS_TRACES or {shared_root()}: "
                                  + (f"usable jobs {', '.join(held)})" if held else
                                     "none found there)"))
    return out


def instance_for(params: dict[str, Any], k: int):
    """The instance of slice ``k`` for one task's parameters (``scale`` in the parameters:
    research scale, the importer's own slot length and horizon)."""
    from . import Policy, import_trace
    at_scale = "scale" in params
    t = next(x for x in (SCALE_TRACES if at_scale else TRACES) if x.label == params["trace"])
    if params["jobs"] == "whole":
        policy = Policy(jobs=None, start=0, load=float(params["load"]),
                        name=f"{t.label}-whole-load{params['load']:g}")
    else:
        jobs = int(params["jobs"])
        first = t.start + k * jobs
        policy = Policy(jobs=jobs, start=first,
                        horizon=None if at_scale else int(params["horizon"]),
                        load=float(params["load"]),
                        name=f"{t.label}-s{first}" + (f"-n{jobs}" if at_scale else "")
                        + f"-load{params['load']:g}")
    imported = import_trace(t.fmt, resolve(t.path), policy, **dict(t.options))
    # research scale promises its sizes (the quick set's last slice may be shorter)
    if at_scale and policy.jobs is not None and imported.instance.num_jobs != policy.jobs:
        raise InputError("scale", f"{t.label} holds {imported.instance.num_jobs} jobs from "
                                  f"{policy.start}, not {policy.jobs}")
    return imported


@dataclass(frozen=True)
class OptInterval:
    """What the offline solve says of OPT: ``incumbent ≤ OPT ≤ bound``, ``validated`` the
    validator's verdict on the solve's schedule. When the solve was refused or failed
    (``status`` ``refused``/``failed``, the reason in ``note``) ``bound`` is None and
    ``incumbent`` 0: :func:`execute` then takes the best online schedule as the incumbent."""

    incumbent: float
    bound: float | None
    status: str
    route: str
    seconds: float
    validated: bool
    note: str = ""

    @property
    def proven(self) -> bool:
        return self.status == "optimal"


def opt_interval(inst, *, time_limit: float, method: str = "auto",
                 floor: Schedule | tuple[()] | None = None,
                 on_step: Callable[[str], None] | None = None) -> OptInterval:
    """The one call of ``offline.solve`` in this experiment (so a better bound or route there
    shows here): the validated incumbent and the bound within ``time_limit`` seconds. A solve
    refused for size (``InputError``) or failing (``SolverError``, out of memory) gives
    ``bound`` None and the note; the caller's online schedules then give the incumbent.

    ``floor``: the best online schedule the caller already has (a ``Schedule``, handed over
    as ``floor_schedules`` and validated again): the solve's
    floor and, at trace scale, column generation's seed, instead of the solve running the
    algorithms again; ``()``: none (the caller's algorithms all failed); None: the solve's
    own floor (it runs the built-in algorithms). ``on_step``:
    one line per round of column generation and per improvement of the solve (at most one
    every ``STEP_EVERY`` seconds unless the incumbent improves)."""
    from ..errors import SolverError
    from ..offline import solve
    from ..progress import solve_lines
    from ..validate import validate
    kwargs: dict[str, Any] = {}
    if floor is not None:  # the caller's schedule, validated again, and no algorithm run
        kwargs["floor"] = ()
        if isinstance(floor, Schedule):
            kwargs["floor_schedules"] = {str(floor.algorithm) or "floor": floor}
    if on_step is not None:
        kwargs.update(on_round=_round_lines(on_step), on_progress=solve_lines(
            lambda seconds, text: on_step(f"solve {seconds:.0f} s: {text}"), STEP_EVERY))
    start = time.perf_counter()
    try:
        sched, rep = solve(inst, time_limit=time_limit, method=method, **kwargs)
    except InputError as err:
        return OptInterval(0.0, None, "refused", "", time.perf_counter() - start, True,
                           f"{err.place}: {err.message}")
    except (SolverError, MemoryError) as err:
        return OptInterval(0.0, None, "failed", "", time.perf_counter() - start, True,
                           f"{type(err).__name__}: {err}")
    ok = validate(inst, sched).feasible
    return OptInterval(float(rep.objective), float(rep.bound), rep.status.value, rep.route,
                       rep.seconds, ok)


# --- steps of a long task -----------------------------------------------------------------

#: Where :func:`execute` reports its steps (one line each), or None; :func:`report_steps`
#: sets it. Worker processes forked after it is set (the default local pool on Linux)
#: inherit it; Dask workers and spawned processes do not (their tasks report nothing).
_STEPS: Callable[[str], None] | None = None
#: The solve's progress lines at most this often (seconds) unless the incumbent improves.
STEP_EVERY = 30.0


@contextmanager
def report_steps(on_step: Callable[[str], None] | None) -> Iterator[None]:
    """While inside, :func:`execute` reports its steps to ``on_step(line)``: the import, each
    algorithm's utility and seconds, the solve's rounds and improvements."""
    global _STEPS
    before, _STEPS = _STEPS, on_step
    try:
        yield
    finally:
        _STEPS = before


def _round_lines(on_step: Callable[[str], None]) -> Callable[[Any], None]:
    """Column generation's rounds (``colgen.Round``) as lines."""
    from ..progress import round_text

    def show(r: Any) -> None:
        on_step(f"solve {r.seconds:.0f} s: {round_text(r)}")
    return show


def _over(x: float | None, u: float) -> float | None:
    """``x / u`` as :func:`oasis_opt.ratio.ratio` computes OPT/ALG (zero within its relative
    tolerance, inf for a positive ``x`` over zero), except 0/0: 1 here, where ``ratio`` says
    None. In this CSV a slice on which OPT (or its bound) and ALG are both 0 is one the
    algorithm matched, and its row must stay in the medians; ``x`` None (no bound): None."""
    if x is None:
        return None
    q = ratio(x, u)
    return 1.0 if q is None else q


class _Figures(NamedTuple):
    """What ``execute`` keeps of an algorithm's schedule once it has run."""

    total_utility: float
    completed: int
    extras: Mapping[str, Any]


def execute(task: Task) -> list[dict[str, Any]]:
    """Every algorithm once, then the offline interval (:func:`opt_interval`) with the best
    built-in schedule as the solve's floor, and every algorithm against the interval."""
    from .. import algorithms
    params = task.params
    step = _STEPS
    started = time.perf_counter()

    def say(text: str) -> None:
        if step is not None:
            step(f"[{time.perf_counter() - started:7.0f} s] {label}: {text}")
    label = f"{params['trace']}-{params['jobs']}#{task.seed}"
    say("importing")
    imported = instance_for(params, task.seed)
    inst = imported.instance
    say(f"{inst.num_jobs} jobs, {inst.horizon} slots of {imported.slot_seconds:g} s, "
        f"{len(inst.worker_names)} servers")
    limit = float(params.get("time_limit", QUICK_TIME_LIMIT))
    method = params.get("method", "auto")
    # the floor's schedule and the one being made: the others are kept as their figures
    check_schedule_size(inst, min(2, len(task.algorithms)), task.algorithms)
    runs: list[tuple[str, _Figures | None, bool, str]] = []
    # the solve's own floor would be the best built-in schedule (ties to the first in
    # registry order; a user's algorithm never joins it): the same schedule, not run again;
    # () where every built-in one failed (the solve's floor would have none either)
    floor: Schedule | tuple[()] = ()
    for name in task.algorithms:
        say(f"running {name}")
        try:
            made = algorithms.run(name, inst)
        except algorithms.InvalidScheduleError as err:  # reported, not hidden
            runs.append((name, None, False, str(err)))
            say(f"{name}: invalid schedule")
            continue
        runs.append((name, _Figures(made.total_utility, made.completed, made.extras),
                     True, ""))
        say(f"{name}: utility {made.total_utility:.8g}, {made.completed} completed, "
            f"{made.extras['seconds']:.0f} s")
        if name in algorithms.REGISTRY and (
                isinstance(floor, tuple) or made.total_utility > floor.total_utility):
            floor = made
        del made  # (one schedule of trace scale is hundreds of MiB)
    say(f"offline solve (method {method}, time limit {limit:g} s)")
    solved = opt_interval(inst, time_limit=limit, method=method, floor=floor,
                          on_step=None if step is None else say)
    say(f"solve {solved.status}: incumbent {solved.incumbent:.8g}, bound "
        + ("none" if solved.bound is None else f"{solved.bound:.8g}")
        + f", {solved.seconds:.0f} s" + (f" ({solved.note})" if solved.note else ""))
    best_online = max((s.total_utility for _, s, ok, _ in runs if ok), default=0.0)
    # the solve's floor already holds the best built-in one; a refused solve has none
    incumbent = max(solved.incumbent, best_online)
    bound = solved.bound
    base = {"experiment": task.experiment, "seed": task.seed, "params": task.params_key,
            "instance": inst.name, "jobs": inst.num_jobs, "horizon": inst.horizon,
            "worker_servers": len(inst.worker_names), "ps_servers": len(inst.ps_names),
            "opt": bound, "opt_kind": "optimal" if solved.proven else
            ("bound" if bound is not None else "none"),
            "status": solved.status, "scale": params.get("scale", str(params["jobs"])),
            "slot_seconds": imported.slot_seconds, "incumbent": incumbent,
            "time_limit": limit, "method": method, "route": solved.route}
    rows = []
    for name, sched, ok, error in runs:
        if sched is None:
            rows.append({**base, "algorithm": name, "validated": False, "note": error})
            continue
        ex = sched.extras
        u = sched.total_utility
        alpha = ex.get("alpha")
        hi = _over(bound, u)
        rows.append({**base, "algorithm": name, "utility": u, "completed": sched.completed,
                     "ratio": hi, "ratio_lo": _over(incumbent, u), "ratio_hi": hi,
                     "alpha": alpha, "bound_2alpha": 2 * alpha if alpha is not None else None,
                     "d_cert": ex.get("D_cert"), "seconds": ex.get("seconds"),
                     "validated": ok})
    rows.append({**base, "algorithm": "optimal", "utility": incumbent,
                 "ratio": _over(bound, incumbent), "ratio_lo": 1.0 if bound is not None else
                 None, "ratio_hi": _over(bound, incumbent), "seconds": solved.seconds,
                 "validated": solved.validated, "note": solved.note})
    return rows


# --- summary and figure -------------------------------------------------------------------


Group = tuple[str, str, float]  # (trace, research-scale size or "whole" ("": 40 jobs), load)


def _groups(rows) -> dict[Group, dict[str, list[dict[str, str]]]]:
    import json
    out: dict[Group, dict[str, list[dict[str, str]]]] = {}
    for r in rows:
        p = json.loads(r["params"])
        key = (p["trace"], str(p.get("scale", "")), float(p["load"]))
        out.setdefault(key, {}).setdefault(r["algorithm"], []).append(r)
    return out


def _label(group: Group) -> str:
    """``philly@1`` for the quick set (as before), ``philly-1000@1.5`` at research scale."""
    trace, size, load = group
    return f"{trace}-{size}@{load:g}" if size else f"{trace}@{load:g}"


def _size(by_alg: dict[str, list[dict[str, str]]]) -> str:
    """The slice size of a group as its tasks asked (``40``, ``1000``, ``whole``)."""
    import json
    row = next(r for rs in by_alg.values() for r in rs)
    return str(json.loads(row["params"])["jobs"])


def _median(xs: list[float]) -> float | None:
    """The median of the numbers that are not NaN; None when none are."""
    kept = [x for x in xs if not math.isnan(x)]
    return statistics.median(kept) if kept else None


def _number(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def _brackets(by_alg: dict[str, list[dict[str, str]]], alg: str
              ) -> list[tuple[float, float | None]]:
    """Per slice, ``(incumbent / ALG, bound / ALG)`` from the rows (``bound / ALG`` None where
    the solve gave no bound): the true OPT/ALG lies between."""
    out = []
    for r in by_alg.get(alg, []):
        lo = _number(r["ratio_lo"])
        if lo is not None:
            out.append((lo, _number(r["ratio_hi"])))
    return out


def summary(rows) -> dict[str, Any]:
    """Per (trace, slice size, load): each algorithm's median OPT/ALG over the slices as the
    interval ``[incumbent/ALG, bound/ALG]`` (``median_ratio_low``, ``median_ratio``; None
    where no slice has a bound), how many slices were proven optimal, the solve's median gap
    ``bound/incumbent − 1``, and the median utility and completions."""
    out: dict[str, Any] = {}
    for group, by_alg in sorted(_groups(rows).items()):
        opt_rows = by_alg.get("optimal", [])
        entry: dict[str, Any] = {
            "slices": len(opt_rows),
            "jobs": _median([float(r["jobs"]) for r in opt_rows]),
            "horizon": _median([float(r["horizon"]) for r in opt_rows]),
            "proven_optimal": sum(1 for r in opt_rows if r["opt_kind"] == "optimal"),
            "with_bound": sum(1 for r in opt_rows if r["opt_kind"] != "none"),
            "median_gap": _median([float(r["ratio"]) - 1 for r in opt_rows if r["ratio"]]),
            "median_ratio": {}, "median_ratio_low": {}, "median_utility": {},
            "median_completed": {}}
        for alg, rs in by_alg.items():
            if alg == "optimal":
                continue
            br = _brackets(by_alg, alg)
            entry["median_ratio"][alg] = _median([hi for _, hi in br if hi is not None])
            entry["median_ratio_low"][alg] = _median([lo for lo, _ in br])
            entry["median_utility"][alg] = _median([float(r["utility"]) for r in rs
                                                    if r["utility"]])
            entry["median_completed"][alg] = _median([float(r["completed"]) for r in rs
                                                      if r["completed"]])
        out[_label(group)] = entry
    return out


def figure(rows, path: Path) -> None:
    """One panel per trace: each algorithm's OPT/ALG for each (slice size, load) (median over
    slices), drawn as the interval from incumbent/ALG to bound/ALG (a single tick where OPT
    is proven; an open bar up to the cap where the solve gave no bound)."""
    from ..plots import pyplot
    plt = pyplot()

    groups = _groups(rows)
    labels = dict.fromkeys([t.label for t in TRACES] + [t.label for t in SCALE_TRACES])
    traces = [t for t in labels if any(k[0] == t for k in groups)]
    algos = sorted({a for g in groups.values() for a in g if a != "optimal"},
                   key=lambda a: (a != "oasis", a))
    n = max(1, len(traces))

    def order(key: Group) -> tuple[float, float]:
        return (math.inf if key[1] == "whole" else float(key[1] or 0), key[2])

    fig, axes = plt.subplots(1, n, figsize=(2.9 * n, 3.8), sharey=True, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / max(1, len(algos))
    cap = 5.0
    for ax, trace in zip(axes[0], traces, strict=False):
        keys = sorted((k for k in groups if k[0] == trace), key=order)
        for a, alg in enumerate(algos):
            color = colors[a % len(colors)]
            for x, key in enumerate(keys):
                br = _brackets(groups[key], alg)
                if not br:
                    continue
                lo = min(_median([b[0] for b in br]) or cap, cap)
                his = [b[1] for b in br if b[1] is not None]
                hi = min(_median(his) or cap, cap) if his else cap
                pos = x + (a - (len(algos) - 1) / 2) * width
                ax.bar(pos, max(hi - lo, 0.0), width * 0.9, bottom=lo, color=color,
                       alpha=0.85 if his else 0.3, label=alg if x == 0 else None)
                ax.hlines([lo, hi] if his else [lo], pos - width * 0.45, pos + width * 0.45,
                          color=color, linewidth=1.5)
        ax.axhline(1.0, color="grey", linewidth=0.6, linestyle="--")
        ax.set_xticks(range(len(keys)), [f"{_size(groups[k])} jobs\nload {k[2]:g}"
                                         for k in keys], fontsize=7)
        ax.set_title(trace)
        ax.grid(axis="y", linewidth=0.3)
    axes[0][0].set_ylabel(f"OPT / ALG (median over slices, capped at {cap:g})")
    axes[0][0].set_ylim(0.9, None)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=max(1, len(algos)), frameon=False)
    fig.suptitle("Public traces: OPT/ALG of each algorithm; a bar spans incumbent/ALG to "
                 "bound/ALG where the solve hit its time limit", fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.94))
    from ..plots import save_figure
    save_figure(fig, path)
