"""The exact offline optimum (SPEC §2): pick a route by its predicted cost, build the compact
MILP (or run column generation), hand it to HiGHS, read back a schedule and a typed report.

This is the one module (with ``formulations/`` and ``solvers.py``) that talks to solver APIs:
highspy directly (``formulations/compact_highspy.py``, the default), Pyomo's maintained HiGHS
interface (``pyomo.contrib.solver``) and PuLP's ``pulp.HiGHS`` (through highspy).

Time limits bound the whole call (SPEC §6). ``solve`` fixes a deadline ``start + time_limit``
at its first line and every step gets what is left of it:

1. the online algorithms of the registry run first (well under a second at the paper's
   scale); the best of their schedules is the *floor*: the answer is never worse;
2. the route is picked from predicted costs, before anything large is built: the compact
   MILP's columns, rows and nonzeros are counted from the index sets (``Prep.model_size``),
   turned into seconds with a per-nonzero cost measured for each modeller, and compared with
   the budget. The cut rows whose size grows with the square of the horizon (the PS cuts;
   the cumulative rows and completion cuts too unless chained) are dropped when they would
   eat the budget; Pyomo or PuLP hand over to highspy when their build would; column generation
   takes instances too large for the compact model;
3. HiGHS gets the time left minus a reserve for extraction and validation, and a callback
   interrupts it at the deadline if it overshoots (a long root LP);
4. the better of the solver's schedule and the floor is returned; the bound is the least of
   the solver's dual bound and ``Σ_i max_t f_i``, and never below the utility returned.

What the report means:

- ``total_utility`` (``objective``) is the utility of the returned schedule, recomputed from
  the instance after trimming every job after the first slot at which its work reaches V_i. For
  a proven optimum it equals the solver's objective (1e-6 rel.). For a time-limited incumbent
  it can only be higher: the MILP may have chosen a completion slot ``c_it`` later than the one
  the work reaches, and ``f_i`` is non-increasing; the trimmed schedule is itself a feasible
  MILP point, so the solver's bound still covers it;
- ``bound`` ≥ OPT ≥ ``total_utility``; ``gap = (bound − total_utility) / total_utility``
  (relative to the incumbent, as Gurobi's ``MIPGap``); 0 when both are 0, ``None`` when the
  incumbent is 0 and the bound is not;
- ``history``: ``(seconds, incumbent, bound)`` whenever either side improved (incumbent
  ``None`` before the first one), from the floor to the end;
- seconds: ``build_seconds`` (preprocessing and the model), ``handover_seconds`` (model to
  HiGHS and the solution back), ``solve_seconds`` (HiGHS run time), ``seconds`` (the whole
  call: floor, extraction and validation included).

A failure of the solver on valid input raises ``SolverError`` (the CLI: exit 1, one line).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Any

from .errors import InputError, SolverError
from .formulations.highs import new_highs, quiet_stdout, threads_for
from .model import REL_TOL, Instance, Schedule

#: HiGHS threads: the machine's cores are shared with other work, and HiGHS's MIP search is
#: essentially serial; one thread avoids oversubscription.
THREADS = 1
MODELERS = ("auto", "highspy", "pyomo", "pulp")
METHODS = ("auto", "compact", "colgen")

#: Progress callback: (elapsed seconds, incumbent utility or None, bound).
Progress = Callable[[float, "float | None", float], None]


class SolveStatus(str, Enum):
    """How the solve ended: proven optimal (within ``mip_gap``), stopped by the time limit (or
    another limit) with the incumbent, or feasible without proof (column generation)."""

    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    #: column generation finished without a time limit, but price-and-branch left a gap to
    #: the LP bound: a feasible schedule and a valid bound, optimality not proven.
    FEASIBLE = "feasible"
    #: kept for readers of old reports; ``solve`` raises ``SolverError`` instead.
    ERROR = "error"


@dataclass(frozen=True)
class SolveReport:
    """The outcome of one offline solve (module docstring for the meaning of each figure)."""

    status: SolveStatus
    objective: float  # utility of the returned schedule = SPEC §6 total_utility
    bound: float
    gap: float | None
    build_seconds: float
    handover_seconds: float
    solve_seconds: float
    seconds: float
    modeler: str
    method: str
    solver_objective: float | None = None  # the MILP's own objective value of the incumbent
    history: tuple[tuple[float, float | None, float], ...] = ()
    #: what ran: e.g. ``compact/highspy/full``, ``compact/highspy/lean``, ``colgen``; and
    #: the online algorithm whose schedule was returned, when it beat the solver's
    route: str = ""
    floor: str | None = None

    @property
    def total_utility(self) -> float:
        return self.objective

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        d["total_utility"] = d.pop("objective")
        d["history"] = [list(h) for h in self.history]
        return d


@dataclass(frozen=True)
class _Raw:
    """What a modeller route hands back: solver outcome, counts by index, timings."""

    status: SolveStatus
    solver_objective: float | None
    bound: float | None
    values: tuple[dict, ...]  # y, z, λ_w, λ_z by index (empty without an incumbent)
    build: float
    handover: float
    solve: float


class _Clock:
    """The deadline of one call: ``start + time_limit`` (None: no limit)."""

    def __init__(self, time_limit: float | None) -> None:
        self.start = time.perf_counter()
        self.limit = time_limit
        self.deadline = None if time_limit is None else self.start + time_limit

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()


@dataclass(eq=False)
class _Tracker:
    """The best incumbent and the least bound seen so far; every change is appended to the
    history and reported to ``on_progress``."""

    clock: _Clock
    on_progress: Progress | None
    incumbent: float | None = None
    bound: float = math.inf
    history: list[tuple[float, float | None, float]] = field(default_factory=list)

    def update(self, incumbent: float | None = None, bound: float | None = None) -> None:
        changed = False
        if incumbent is not None and math.isfinite(incumbent) and (
                self.incumbent is None or incumbent > self.incumbent + REL_TOL * max(
                    1.0, abs(incumbent))):
            self.incumbent, changed = float(incumbent), True
        if bound is not None and math.isfinite(bound) and bound < self.bound - REL_TOL * max(
                1.0, abs(bound)):
            self.bound, changed = float(bound), True
        if changed:
            point = (round(self.clock.elapsed(), 4), self.incumbent, self.bound)
            self.history.append(point)
            if self.on_progress is not None:
                self.on_progress(*point)


#: The longest time limit taken (seconds); waits and solver options overflow far beyond it.
MAX_TIME_LIMIT = 1e7


def solve(instance: Instance, modeler: str = "auto", time_limit: float | None = None,
          mip_gap: float = 0.0, method: str = "auto",
          options: Any = None, solver: str = "highs",
          on_progress: Progress | None = None, *,
          customize: Callable[[Any], Any] | None = None,
          floor: Sequence[str] | None = None) -> tuple[Schedule, SolveReport]:
    """Solve the offline problem of ``instance`` exactly, or within ``time_limit`` seconds of
    wall time for the whole call (module docstring), and return the validated schedule and
    its report.

    ``method``: ``compact`` (the time-indexed MILP), ``colgen`` (column generation: LP bound and
    price-and-branch schedule), ``auto`` (by predicted cost). ``modeler``: ``auto`` (highspy
    directly), ``highspy``, ``pyomo`` or ``pulp`` for the compact MILP (Pyomo and PuLP hand
    over to highspy when their build would not fit the time limit). ``options``:
    ``formulations.common.Options`` (tightenings). ``solver``: ``highs``, or another MILP solver
    for the compact model (``oasis_opt.solvers``; forces ``compact``). ``on_progress(seconds,
    incumbent, bound)`` is called whenever either side improves.

    ``customize(model)``: your own rows, added to the compact MILP after it is built (the
    Pyomo ``ConcreteModel`` with ``modeler`` ``pyomo`` or ``auto``, the ``pulp.LpProblem``
    with ``pulp``); its job-level components are in docs/offline.md ("Your own
    constraints"). The tightenings valid only for the unmodified model are off
    (``formulations/custom.py``), the returned schedule is the solver's solution as solved
    (it keeps every row you added), and the floor is used only if it keeps them too.

    ``floor``: the online algorithms whose best schedule is the floor of a time-limited solve
    (default: the built-in ones, ``algorithms.REGISTRY``; ``()`` for none).

    Errors name the parameter (``InputError("time_limit", …)``), not a command-line flag.
    """
    clock = _Clock(time_limit)
    if modeler not in MODELERS:
        raise InputError("modeler", f"unknown modeler {modeler!r}; choose from "
                                    f"{', '.join(MODELERS)}")
    if method not in METHODS:
        raise InputError("method", f"unknown method {method!r}; choose from "
                                   f"{', '.join(METHODS)}")
    if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
        raise InputError("time_limit", f"must be a positive number, got {time_limit}")
    if time_limit is not None and time_limit > MAX_TIME_LIMIT:  # timeouts past this overflow
        raise InputError("time_limit", f"{time_limit:g} s is too long (limit "
                                       f"{MAX_TIME_LIMIT:g} s, about 115 days)")
    if not 0 <= mip_gap < 1:
        raise InputError("mip_gap", f"must be in [0, 1), got {mip_gap}")
    names = _floor_names(floor)
    if customize is not None:
        modeler = _customize_route(customize, modeler, method, solver)
    elif solver != "highs":  # another solver takes the compact model (oasis_opt.solvers)
        from . import solvers
        modeler, method = solvers.check(solver), "compact"
    tracker = _Tracker(clock, on_progress)
    # f_i is non-increasing: no job earns more than f_i(1), the bound until a better one
    tracker.update(bound=float(instance.utility_table[:, 0].clip(min=0).sum())
                   if instance.num_jobs else 0.0)
    # a customized model's floor counts only once it keeps the user's rows (_solve_custom)
    best = _floor(instance, tracker, names, report=customize is None) \
        if time_limit is not None else None
    if customize is not None:
        return _solve_custom(instance, modeler, clock, tracker, mip_gap, options, best,
                             customize)
    method = _choose_method(instance, method, clock)
    if method == "colgen":
        return _solve_colgen(instance, clock, tracker, mip_gap, best)
    return _solve_compact(instance, modeler, clock, tracker, mip_gap, options, solver, best)


def relative_gap(bound: float, incumbent: float) -> float | None:
    """``(bound − incumbent) / |incumbent|``; 0 when both are 0 (to 1e-6), None when only the
    incumbent is."""
    if abs(incumbent) <= REL_TOL:
        return 0.0 if abs(bound) <= REL_TOL else None
    return max(0.0, (bound - incumbent) / abs(incumbent))


# --- the floor: the best online schedule ------------------------------------------------


def _floor_names(floor: Sequence[str] | None) -> tuple[str, ...]:
    """The floor's algorithms: the built-in ones (``algorithms.REGISTRY``) unless named; a
    user's algorithm, slow or not, never slows every solve unasked."""
    from . import algorithms
    if floor is None:
        return tuple(algorithms.REGISTRY)
    if isinstance(floor, str):
        floor = [floor]
    for name in floor:
        try:
            algorithms.check(name)  # any name the registry resolves, module:function too
        except InputError as err:
            raise InputError("floor", err.message) from None
    return tuple(floor)


def _floor(instance: Instance, tracker: _Tracker, names: Sequence[str],
           report: bool = True) -> Schedule | None:
    """The best schedule of the online algorithms ``names`` (each validated by
    ``algorithms.run``): all of them, since the answer must not be worse than any; together
    the built-in ones take well under a second at the paper's scale (docs/offline.md). An
    algorithm that fails (its bug, or its own size guard) is left out: the floor is a safety
    net for the exact answer, not a test of the algorithms (their own tests are). With
    ``report`` its utility goes to the tracker at once."""
    from . import algorithms
    best: Schedule | None = None
    for name in names:
        try:
            schedule = algorithms.run(name, instance)
        except Exception:  # noqa: BLE001 — see the docstring
            continue
        if best is None or schedule.total_utility > best.total_utility:
            best = schedule
    if best is not None and report:
        tracker.update(incumbent=best.total_utility)
    return best


# --- the route by predicted cost ----------------------------------------------------------

#: Without a time limit ``auto`` takes the compact MILP while jobs × slots × servers stays
#: below this; beyond it, column generation. Measured on the paper preset (80 servers,
#: docs/offline.md): 40 jobs × 20 slots (64 000) and 60 × 30 (144 000) prove optimal in 1 and
#: 5 s; 80 × 40 (256 000) is still open after 60 s (gap 0.04 %), where column generation stops
#: by itself in 16 s.
COMPACT_SIZE_LIMIT = 150_000
#: With a time limit of S seconds, the compact MILP is taken up to ``CELLS_PER_SECOND · S``
#: cells as well (at most ``COMPACT_SIZE_LIMIT``): HiGHS's root LP alone grows about linearly.
CELLS_PER_SECOND = 5_000
#: Seconds per (predicted) nonzero of preprocessing and model build, measured on models of
#: 3 k–3 M nonzeros (docs/offline.md): highspy arrays 2–5 µs, Pyomo 25–40 µs plus its
#: hand-over, PuLP 9–24 µs; rounded up, since a late answer breaks the contract.
BUILD_SECONDS_PER_NNZ = {"highspy": 6.0e-6, "pyomo": 5.0e-5, "pulp": 3.0e-5}
#: Bytes per nonzero while the model is built (Python lists or modelling objects).
BUILD_BYTES_PER_NNZ = {"highspy": 120, "pyomo": 2_000, "pulp": 1_500}
#: Share of the budget the model build may take; beyond it the cheaper medium is used.
BUILD_SHARE = 0.25
#: Share of the budget the quadratic cut rows may take to build (else ``LEAN``).
CUT_SHARE = 0.10
#: Without a time limit the cut rows are dropped beyond this many nonzeros.
CUT_NNZ_LIMIT = 3_000_000


def instance_features(instance: Instance) -> dict[str, Any]:
    """What the route is chosen from (issue 22), a pure function of the instance:

    - ``worker_shapes``, ``ps_shapes``: distinct capacity vectors of each pool;
    - ``shared_workers``, ``shared_ps``: share of the pool's servers that have an identical
      twin (a group of ≥ 2: where pattern packing removes symmetry);
    - ``worker_classes``: distinct worker demand vectors among the jobs (demand classes);
    - ``jobs``, ``horizon``, ``resources``;
    - ``fill``: the largest ``Σ_i V_i·α_ir / (T·Σ_h C_hr)`` over the worker resources (above
      1 not every job can finish);
    - ``ps_binds``: some job's PSs demand a resource (else the PS pool never binds, as in the
      trace imports).
    """
    def shapes(capacity: Any) -> tuple[int, float]:
        if not len(capacity):
            return 0, 0.0
        _, counts = np.unique(capacity, axis=0, return_counts=True)
        return int(len(counts)), float(counts[counts >= 2].sum() / len(capacity))

    import numpy as np
    w_shapes, w_shared = shapes(instance.worker_capacity)
    p_shapes, p_shared = shapes(instance.ps_capacity)
    J = instance.num_jobs
    classes = int(len(np.unique(instance.worker_demand, axis=0))) if J else 0
    cap = instance.worker_capacity.sum(axis=0) * instance.horizon
    need = (instance.workload[:, None] * instance.worker_demand).sum(axis=0) if J else cap * 0
    fill = float(max((need[r] / cap[r] for r in range(len(cap)) if cap[r] > 0), default=0.0))
    return {"jobs": J, "horizon": int(instance.horizon),
            "resources": len(instance.resources), "worker_shapes": w_shapes,
            "ps_shapes": p_shapes, "shared_workers": w_shared, "shared_ps": p_shared,
            "worker_classes": classes, "fill": fill,
            "ps_binds": bool(J and instance.ps_demand.any())}


def route_options(instance: Instance) -> Any:
    """The formulation of the default route, from the instance's features (issue 22):
    ``None`` (the defaults: demand-class pattern packing) or server packing.

    Patterns pay where identical servers make them exact symmetry breaking: measured
    side by side on the `hard`, `mixed`, `ps-heavy` families and hard-mix-01…06
    (docs/offline.md, issue 22), pattern packing was faster wherever every PS server has an
    identical twin (`hard`: 2.1–3.1x; hard-mix-03, -04, -06: 1.6–17x) and slower where the PS
    pool holds a server of its own shape (1.3–2.6x on 8 of 9 instances), whatever the worker
    pool; checked on `mixed-2r`, `loose`, `ps-light` and hard-mix-07…12, the rule's route
    took less CPU on 11 of 15, about as much on 3, more on 1. PS integrality is what is hard
    in this model (docs/offline.md, round 3), and a single PS server's patterns only enlarge
    it. Where no job demands a PS resource the PS
    pool cannot bind and patterns stay (they carry the continuous workers of the trace
    imports, ``Prep.flow_workers``)."""
    from .formulations.common import Options
    f = instance_features(instance)
    if f["ps_binds"] and f["shared_ps"] < 1.0:
        return Options(packing="server")
    return None


def _cells(instance: Instance) -> int:
    """Jobs × slots from arrival × servers: an upper bound on the allocation cells."""
    slots = int((instance.horizon - instance.arrival).sum()) if instance.num_jobs else 0
    return slots * (len(instance.worker_names) + len(instance.ps_names))


def _choose_method(instance: Instance, method: str, clock: _Clock) -> str:
    """``auto``: compact while the allocation cells stay below ``COMPACT_SIZE_LIMIT`` (and
    ``CELLS_PER_SECOND`` times the budget), else column generation."""
    if method != "auto":
        return method
    limit = COMPACT_SIZE_LIMIT
    if clock.limit is not None:
        limit = min(limit, max(20_000, CELLS_PER_SECOND * clock.limit))
    return "compact" if _cells(instance) <= limit else "colgen"


def _plan(prep: Any, modeler: str, clock: _Clock, solver: str) -> tuple[Any, str]:
    """(prep, modeler) of the route: the cut rows dropped (``common.LEAN``) when their
    predicted build does not fit, the build handed to highspy when the requested modeller's
    would not."""
    from .formulations.common import LEAN, prepare
    budget = clock.remaining()
    medium = "highspy" if modeler == "auto" else modeler
    nnz = prep.model_size()["nonzeros"]
    cuts = prep.cut_nonzeros()
    if cuts and (nnz > CUT_NNZ_LIMIT if budget is None
                 else cuts * BUILD_SECONDS_PER_NNZ["highspy"] > CUT_SHARE * budget):
        # chained, only the PS cuts grow with the square of the horizon
        dropped = ("ps_cuts",) if prep.options.chained else ("cumulative", "completion_cuts",
                                                             "ps_cuts")
        lean = replace(prep.options, **{k: getattr(LEAN, k) for k in dropped})
        prep = prepare(prep.instance, lean)
        nnz = prep.model_size()["nonzeros"]
    if solver == "highs" and medium != "highspy" and budget is not None \
            and nnz * BUILD_SECONDS_PER_NNZ[medium] > BUILD_SHARE * budget:
        medium = "highspy"
    return prep, medium


# --- the compact route ------------------------------------------------------------------


def _solve_compact(instance: Instance, modeler: str, clock: _Clock, tracker: _Tracker,
                   mip_gap: float, options: Any, solver: str,
                   floor: Schedule | None) -> tuple[Schedule, SolveReport]:
    from .formulations.common import prepare
    from .limits import check_allocation

    t0 = time.perf_counter()
    prep = prepare(instance, options if options is not None else route_options(instance))
    if not prep.active:  # no job can earn anything: the empty schedule is optimal
        raw, medium = _Raw(SolveStatus.OPTIMAL, 0.0, 0.0, (), 0.0, 0.0, 0.0), \
            ("highspy" if modeler == "auto" else modeler)
    else:
        prep, medium = _plan(prep, modeler, clock, solver)
        size = prep.model_size()
        check_allocation("instance", size["nonzeros"] * BUILD_BYTES_PER_NNZ.get(medium, 2_000),
                         f"the compact MILP ({size['columns']} columns, {size['rows']} rows, "
                         f"{size['nonzeros']} nonzeros)")
        tracker.update(bound=prep.upper_bound())
        left = clock.remaining()
        if left is not None and size["nonzeros"] * BUILD_SECONDS_PER_NNZ[
                medium if medium in BUILD_SECONDS_PER_NNZ else "pyomo"] > 0.5 * left:
            # even the cheapest build would not leave HiGHS time: the floor is the answer
            raw, medium = _Raw(SolveStatus.TIME_LIMIT, None, None, (), 0.0, 0.0, 0.0), "skipped"
        elif solver != "highs":
            from . import solvers
            r = solvers.solve(solver, prep, _highs_budget(clock, prep), mip_gap, THREADS)
            raw = _Raw(SolveStatus(r.status), r.objective, r.bound, r.values, r.build_seconds,
                       r.handover_seconds, r.solve_seconds)
            if raw.status is SolveStatus.ERROR:
                raise SolverError(f"{solver} failed on {instance.name}")
        elif _portfolio_wanted(prep, modeler, options, medium, clock.remaining()):
            variants = [prep] + [prepare(instance, replace(prep.options, **o))
                                 for o, _ in PORTFOLIO[1:]]
            winner, raw = _solve_portfolio(variants, [s for _, s in PORTFOLIO], clock,
                                           tracker, mip_gap, floor)
            prep, medium = variants[winner], f"portfolio{winner}"
        elif medium == "highspy" and clock.limit is not None and _can_fork():
            # one racer in a child process: killed at the deadline if HiGHS overshoots (its
            # interrupt callbacks are not called in every phase of the root), its last
            # incumbent kept
            _, raw = _solve_portfolio([prep], [0], clock, tracker, mip_gap, floor)
        else:
            raw = _ROUTES[medium](prep, clock, tracker, mip_gap, start=floor)
    prep_seconds = time.perf_counter() - t0 - raw.build - raw.handover - raw.solve
    schedule = _extract(prep, raw)
    status = raw.status
    tracker.update(incumbent=schedule.total_utility if raw.values or not prep.active else None,
                   bound=raw.bound)
    chosen = None
    if floor is not None and floor.total_utility > schedule.total_utility + REL_TOL * max(
            1.0, abs(floor.total_utility)):
        schedule, chosen = floor, str(floor.algorithm)
        if status is SolveStatus.OPTIMAL and mip_gap == 0:  # a wrong model: say so
            raise SolverError(f"the proven optimum of {instance.name} "
                              f"({raw.solver_objective}) is below {chosen}'s schedule "
                              f"({floor.total_utility})")
    raced = medium.startswith("portfolio")
    medium = "highspy" if raced else medium
    o = prep.options
    rows = "full" if o.completion_cuts else "nocuts" if o.cumulative else "lean"
    route = f"compact/{solver if solver != 'highs' else medium}/{rows}" + ("+race" if raced
                                                                           else "")
    return _finish(instance, schedule, status, tracker, clock, prep.upper_bound(),
                   medium if solver == "highs" else modeler, "compact", route, chosen,
                   prep_seconds + raw.build, raw.handover, raw.solve, raw.solver_objective,
                   extra={"solver": solver, "packing": prep.packing})


def _highs_budget(clock: _Clock, prep: Any) -> float | None:
    """HiGHS's share of the time left: all but a reserve for extraction and validation
    (measured ≈ 2 µs per allocation cell, plus a margin)."""
    left = clock.remaining()
    if left is None:
        return None
    cells = len(prep.y_index) + len(prep.z_index)
    # whole workers from continuous ones: a transportation MILP over the y cells
    flow = 0.2 + 2e-5 * len(prep.y_index) if prep.flow_workers else 0.0
    # HiGHS finishes its current step after the limit (seen: 7 % late on a loaded machine)
    return max(0.05, 0.95 * left - 0.3 - 5e-6 * cells - flow)


def _finish(instance: Instance, schedule: Schedule, status: SolveStatus, tracker: _Tracker,
            clock: _Clock, trivial: float, modeler: str, method: str, route: str,
            floor: str | None, build: float, handover: float, solve_seconds: float,
            solver_objective: float | None, extra: dict[str, Any] | None = None
            ) -> tuple[Schedule, SolveReport]:
    """Validate the schedule, settle the bound (≤ the trivial one, ≥ the utility), and build
    the report and the schedule's extras."""
    from .algorithms import InvalidScheduleError
    from .validate import validate

    report = validate(instance, schedule)
    if not report.feasible:
        raise InvalidScheduleError(
            f"the offline solver produced an infeasible schedule on {instance.name}: "
            + "; ".join(str(v) for v in report.violations[:5]))
    utility = schedule.total_utility
    bound = max(min(tracker.bound, trivial), utility)
    tracker.update(incumbent=utility, bound=bound)
    gap = relative_gap(bound, utility)
    if status is not SolveStatus.OPTIMAL and gap is not None and gap <= REL_TOL:
        status = SolveStatus.OPTIMAL  # the bound met the incumbent: proven after all
    seconds = clock.elapsed()
    result = SolveReport(
        status=status, objective=utility, bound=bound, gap=gap, build_seconds=build,
        handover_seconds=handover, solve_seconds=solve_seconds, seconds=seconds,
        modeler=modeler, method=method, solver_objective=solver_objective,
        history=tuple(tracker.history), route=route, floor=floor)
    if status is SolveStatus.OPTIMAL or (floor is None and method == "compact"):
        algorithm = "optimal"
    else:
        algorithm = floor or method
    extras = {**(extra or {}), "status": status.value, "bound": bound, "gap": gap,
              "seconds": seconds, "modeler": modeler, "method": method, "route": route,
              "solver_objective": solver_objective}
    if floor is not None:
        extras["floor"] = floor
    schedule = Schedule(schedule.instance, algorithm, utility, schedule.jobs, extras)
    return schedule, result


def _extract(prep: Any, raw: _Raw, exact: bool = False) -> Schedule:
    """The schedule of the solver's values: trimmed after completion, jobs that do not
    complete dropped (``common.schedule_from_values``); with ``exact`` (a customized model)
    exactly as solved (``_as_solved``)."""
    from .formulations.common import schedule_from_values
    if exact:
        return _as_solved(prep, raw)
    if not raw.values:
        return schedule_from_values(prep, {}, {})
    y, z, lw, lz = raw.values
    if prep.flow_workers:  # continuous workers: whole ones from the same completions
        from .formulations.flow import integral_workers
        y, z = integral_workers(prep, y, z, lw)
    return schedule_from_values(prep, y, z, lw, lz)


# --- your own constraints (customize) -----------------------------------------------------


def _customize_route(customize: Any, modeler: str, method: str, solver: str) -> str:
    """The modeller a customized solve builds with: PuLP if asked, else Pyomo. The routes
    that cannot carry a user's rows are refused, naming the parameter."""
    if not callable(customize):
        raise InputError("customize", f"must be a function taking the model, got "
                                      f"{type(customize).__name__}")
    if modeler == "highspy":
        raise InputError("modeler", "customize adds rows to a Pyomo or PuLP model: use "
                                    "pyomo (the default with customize) or pulp")
    if method == "colgen":
        raise InputError("method", "column generation builds its own model and cannot take "
                                   "the rows of customize: use compact or auto")
    if solver != "highs":
        raise InputError("solver", "customize runs HiGHS only")
    return "pulp" if modeler == "pulp" else "pyomo"


def _solve_custom(instance: Instance, modeler: str, clock: _Clock, tracker: _Tracker,
                  mip_gap: float, options: Any, floor: Schedule | None,
                  customize: Callable[[Any], Any]) -> tuple[Schedule, SolveReport]:
    """The compact MILP with the user's rows, on Pyomo or PuLP and HiGHS, never raced nor
    handed to highspy (``formulations/custom.py`` for what changes). The solution is
    returned exactly as solved; the floor (its jobs that earn nothing left out) and the
    empty schedule are candidates only if they keep every row of the customized model."""
    from .formulations.common import prepare
    from .formulations.custom import custom_options
    from .limits import check_allocation

    t0 = time.perf_counter()
    prep = prepare(instance, custom_options(options))
    size = prep.model_size()
    check_allocation("instance", size["nonzeros"] * BUILD_BYTES_PER_NNZ[modeler],
                     f"the compact MILP ({size['columns']} columns, {size['rows']} rows, "
                     f"{size['nonzeros']} nonzeros)")
    tracker.update(bound=prep.upper_bound())
    empty = Schedule.from_arrays(instance, "none", {}, {})
    candidates = ([_earning(instance, floor)] if floor is not None else []) + [empty]
    kept: list[Schedule] = []
    hook = _user_rows(customize, modeler, candidates, tracker, kept)
    try:
        if prep.active:
            raw = _ROUTES[modeler](prep, clock, tracker, mip_gap, customize=hook)
        else:  # no job can earn: the model has no variables, the empty schedule is all
            from .formulations import compact_pulp, compact_pyomo
            hook((compact_pulp if modeler == "pulp" else compact_pyomo).build(
                instance, prep=prep))
            if not kept:
                raise SolverError("Infeasible")
            raw = _Raw(SolveStatus.OPTIMAL, 0.0, 0.0, (), 0.0, 0.0, 0.0)
    except SolverError as exc:
        if "nfeasible" in str(exc):  # the user's rows leave no schedule
            raise InputError("customize", f"with the rows of {_name_of(customize)} the model "
                                          f"of {instance.name} has no solution ({exc})") from None
        raise
    prep_seconds = time.perf_counter() - t0 - raw.build - raw.handover - raw.solve
    schedule = _extract(prep, raw, exact=True)
    if not raw.values and not kept:
        raise SolverError(f"no schedule that keeps the rows of {_name_of(customize)} was "
                          f"found for {instance.name} within the time limit")
    tracker.update(incumbent=schedule.total_utility if raw.values else None, bound=raw.bound)
    chosen = None
    if kept and kept[0].total_utility > schedule.total_utility + REL_TOL * max(
            1.0, abs(kept[0].total_utility)):
        schedule, chosen = kept[0], str(kept[0].algorithm)
        if raw.status is SolveStatus.OPTIMAL and mip_gap == 0:  # a wrong model: say so
            raise SolverError(f"the proven optimum of the customized {instance.name} "
                              f"({raw.solver_objective}) is below {chosen}'s schedule "
                              f"({schedule.total_utility})")
    return _finish(instance, schedule, raw.status, tracker, clock, prep.upper_bound(),
                   modeler, "compact", f"compact/{modeler}/custom", chosen,
                   prep_seconds + raw.build, raw.handover, raw.solve, raw.solver_objective,
                   extra={"solver": "highs", "customized": _name_of(customize)})


def _name_of(fn: Any) -> str:
    """How a message names the user's function: ``customize function 'mymod.cap'``."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    return f"customize function {(f'{module}.' if module else '') + name!r}"


def _user_rows(customize: Callable[[Any], Any], modeler: str, candidates: list[Schedule],
               tracker: _Tracker, kept: list[Schedule]) -> Callable[[Any], None]:
    """What the route calls on its built model: ``customize`` on the user's view of it (the
    Pyomo model, or PuLP's problem), errors named; then the objective must be untouched, and
    the first candidate (best first) whose variable values keep every bound and row of the
    customized model goes into ``kept`` and to the tracker."""
    from .formulations import compact_pulp, compact_pyomo
    from .formulations.custom import point

    def hook(model: Any) -> None:
        target = model.problem if modeler == "pulp" else model
        objective = _objective_of(target, modeler)
        try:
            customize(target)
        except Exception as exc:  # the user's code: any failure is named, not a traceback
            raise InputError("customize", f"{_name_of(customize)} raised "
                                          f"{type(exc).__name__}: {exc}") from exc
        if _objective_of(target, modeler) != objective:
            raise InputError("customize", f"{_name_of(customize)} changed the objective; the "
                                          f"solve maximises the total utility: add rows or "
                                          f"bounds only")
        satisfies = compact_pulp.satisfies if modeler == "pulp" else compact_pyomo.satisfies
        for schedule in sorted(candidates, key=lambda s: -s.total_utility):
            values = point(model.prep, schedule)
            if values is not None and satisfies(model, values):
                kept.append(schedule)
                tracker.update(incumbent=schedule.total_utility)
                break
    return hook


def _objective_of(target: Any, modeler: str) -> tuple[Any, ...]:
    """What identifies the objective: PuLP's objective and sense; Pyomo's active objectives
    and their expressions and senses."""
    if modeler == "pulp":
        return (id(target.objective), target.sense)
    import pyomo.environ as pyo
    return tuple((id(o), id(o.expr), int(o.sense))
                 for o in target.component_data_objects(pyo.Objective, active=True))


def _earning(instance: Instance, schedule: Schedule) -> Schedule:
    """``schedule`` without the jobs that earn nothing (the customized model holds no
    allocation of a job that does not complete in its useful window)."""
    y, z = schedule.to_arrays(instance)
    keep = [instance.job_index[jr.id] for jr in schedule.jobs
            if jr.completed and jr.utility > 0]
    return Schedule.from_arrays(instance, schedule.algorithm, {i: y[i] for i in keep},
                                {i: z[i] for i in keep}, schedule.extras)


def _as_solved(prep: Any, raw: _Raw) -> Schedule:
    """The schedule exactly as solved by a customized model (one variable per server,
    ``exact_completion``): counts rounded, nothing trimmed or dropped, so every row the user
    added holds for it. Its completion slots are the model's ``c``; a difference would mean
    a wrong model, and is raised."""
    import numpy as np

    inst = prep.instance
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    workers: dict[int, np.ndarray] = {}
    ps: dict[int, np.ndarray] = {}
    finish: dict[int, int] = {}
    if raw.values:
        y, z, _, _, c = raw.values
        for values, out, width in ((y, workers, H), (z, ps, K)):
            for (i, h, t), v in values.items():
                n = round(v or 0.0)
                if n > 0:
                    out.setdefault(i, np.zeros((T, width), dtype=np.int64))[t, h] += n
        finish = {i: t for (i, t), v in c.items() if v is not None and v > 0.5}
    for i in set(workers) | set(ps):
        workers.setdefault(i, np.zeros((T, H), dtype=np.int64))
        ps.setdefault(i, np.zeros((T, K), dtype=np.int64))
    schedule = Schedule.from_arrays(inst, "optimal", workers, ps)
    for i, jr in enumerate(schedule.jobs):
        if jr.completion_slot != finish.get(i):
            raise SolverError(f"the customized model of {inst.name} completes job {jr.id!r} "
                              f"in slot {finish.get(i)}, its solved allocation in slot "
                              f"{jr.completion_slot}")
    return schedule


# --- column generation ------------------------------------------------------------------


#: The heuristics whose schedules seed column generation: its first columns and the start of
#: its MILP (the result is never worse than the best of them).
COLGEN_SEEDS = ("oasis", "tetris", "rrh")
#: Seconds kept after a guarded column generation is stopped: validation and the report.
COLGEN_RESERVE = 0.5


def colgen_inputs(instance: Instance) -> dict[str, Any]:
    """What ``colgen.solve`` takes from outside ``formulations/`` (which imports neither the
    algorithm registry nor the validator): ``seeds``, the ``COLGEN_SEEDS`` heuristics'
    schedules (OASiS without its dual certificate: only the schedule is wanted), and
    ``check``, the validator as a predicate. ``colgen.solve(instance, **colgen_inputs(instance),
    …)``."""
    from . import algorithms
    from .validate import validate
    seeds = [algorithms.get(name)(instance, **({"certificate": False} if name == "oasis"
                                               else {}))
             for name in (COLGEN_SEEDS if instance.num_jobs else ())]
    return {"seeds": seeds, "check": lambda schedule: validate(instance, schedule).feasible}


def _solve_colgen(instance: Instance, clock: _Clock, tracker: _Tracker, mip_gap: float,
                  floor: Schedule | None) -> tuple[Schedule, SolveReport]:
    """Column generation (LP bound) and price-and-branch (schedule), on highspy directly:
    ``formulations/colgen.py``, given the time left, the heuristics' schedules, the validator
    and a progress callback.

    With a time limit it runs in a forked child (where one can be started), like the compact
    route's racer: every loop of column generation checks the shared deadline and every HiGHS
    run is interrupted there, but a phase that checks nothing (a root LP, a long pricing
    round on a loaded machine) must not break the contract (issue 22: a 40-job instance of
    nine server shapes had not answered after 300 s of a 100 s limit). The child sends every
    improving schedule and bound; at the deadline the parent stops it and keeps the last."""
    from .formulations import colgen
    from .formulations.common import Options, prepare
    from .formulations.deadline import Deadline

    kwargs: dict[str, Any] = {"mip_gap": max(mip_gap, 1e-4), **colgen_inputs(instance)}
    left = clock.remaining()
    stop_at = None
    if left is not None:
        kwargs["time_limit"] = max(0.05, 0.97 * left - 1.0)  # validation and extras after it
        stop_at = clock.deadline - COLGEN_RESERVE  # type: ignore[operator]
        kwargs["deadline"] = Deadline(stop_at)
    t0 = time.perf_counter()
    try:
        if stop_at is not None and _can_fork():
            res = _colgen_guarded(instance, kwargs, stop_at, tracker)
        else:
            with quiet_stdout():
                res = colgen.solve(instance, on_progress=lambda _s, inc, b: tracker.update(
                    inc, b), **kwargs)
    except (InputError, SolverError):
        raise
    except Exception as exc:  # a bug or solver failure on valid input
        raise SolverError(f"column generation failed on {instance.name}: "
                          f"{type(exc).__name__}: {exc}") from exc
    seconds = time.perf_counter() - t0
    schedule = res.incumbent
    tracker.update(incumbent=schedule.total_utility, bound=res.bound)
    chosen = None
    if floor is not None and floor.total_utility > schedule.total_utility:
        schedule, chosen = floor, str(floor.algorithm)
    utility = schedule.total_utility
    gap = relative_gap(max(res.bound, utility), utility)
    if gap is not None and gap <= max(mip_gap, REL_TOL):
        status = SolveStatus.OPTIMAL
    elif not res.proven or res.mip_status == "time_limit" or clock.limit is not None:
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.FEASIBLE
    trivial = prepare(instance, Options(packing="server")).upper_bound()
    if math.isfinite(res.bound):
        trivial = min(trivial, res.bound)
    extra = {"lp_proven": res.proven, "lp_value": res.lp_value,
             "iterations": res.iterations, "columns": res.columns,
             "lp_seconds": res.lp_seconds, "pricing_seconds": res.pricing_seconds,
             "mip_seconds": res.mip_seconds, "mip_status": res.mip_status,
             "bound_seconds": res.bound_seconds}
    return _finish(instance, schedule, status, tracker, clock, trivial, "highspy", "colgen",
                   "colgen", chosen, 0.0, 0.0, seconds, utility, extra=extra)


def _colgen_worker(instance: Instance, kwargs: dict[str, Any], conn: Any) -> None:
    """Column generation in a forked child: ``("progress", incumbent, bound)`` and
    ``("schedule", schedule)`` on every improvement, ``("done", result)``, ``("input", place,
    message)`` (bad input: exit 2 as in-process) or ``("error", text)`` at the end."""
    import highspy

    from .formulations import colgen
    try:
        highspy.Highs.resetGlobalScheduler(True)  # a pool inherited from the parent is dead
        with quiet_stdout():
            res = colgen.solve(instance, on_progress=lambda _s, inc, b: conn.send(
                ("progress", inc, b)), on_schedule=lambda s: conn.send(("schedule", s)),
                **kwargs)
        conn.send(("done", res))
    except InputError as exc:  # too large an input, say: the parent raises it as such
        conn.send(("input", exc.place, exc.message))
    except Exception as exc:  # reported to the parent, which raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _colgen_guarded(instance: Instance, kwargs: dict[str, Any], stop_at: float,
                    tracker: _Tracker) -> Any:
    """``colgen.solve`` in a child process stopped at ``stop_at``; its result, or (stopped)
    one made of the last schedule and the least bound it sent."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    from .formulations.colgen import ColgenResult

    ctx = mp.get_context("fork")  # as the portfolio: no re-import of the user's main module
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_colgen_worker, daemon=True, args=(instance, kwargs, send))
    proc.start()
    send.close()
    best: Schedule | None = None
    bound = math.inf
    try:
        while True:
            left = stop_at - time.perf_counter()
            if left <= 0 or not wait([recv], timeout=left):
                break  # the deadline: stop the child, keep what it sent
            try:
                msg = recv.recv()
            except EOFError:
                raise SolverError("column generation ended without a result") from None
            if msg[0] == "progress":  # incumbents count once their schedule is here
                tracker.update(bound=msg[2])
                if msg[2] is not None and math.isfinite(msg[2]):
                    bound = min(bound, msg[2])
            elif msg[0] == "schedule":
                if best is None or msg[1].total_utility > best.total_utility:
                    best = msg[1]
                    tracker.update(incumbent=best.total_utility)
            elif msg[0] == "done":
                return msg[1]
            elif msg[0] == "input":
                raise InputError(msg[1], msg[2])
            else:
                raise SolverError(f"column generation failed on {instance.name}: {msg[1]}")
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join(timeout=2.0)
        if proc.is_alive():
            proc.kill()
        recv.close()
    if best is None:
        best = Schedule.from_arrays(instance, "colgen", {}, {})
    return ColgenResult(bound, 0.0, False, best, "time_limit", 0, 0)


# --- the portfolio: two variants race on two cores ---------------------------------------

#: The variants that race (options, HiGHS random seed); the first is the planned model
#: itself. Measured on the hard preset (docs/offline.md): the no-cut variant's proof times
#: are least correlated with the default's, so the first proof comes earlier.
PORTFOLIO: tuple[tuple[dict[str, Any], int], ...] = (
    ({}, 0), ({"completion_cuts": False, "ps_cuts": False, "ps_dominance": False}, 1))
#: Below this many nonzeros a model proves in well under a second: no processes for it.
PORTFOLIO_MIN_NONZEROS = 3_000
#: From this many seconds of budget on, the race runs even on a busy machine.
PORTFOLIO_LONG_BUDGET = 100.0


def _portfolio_wanted(prep: Any, modeler: str, options: Any, medium: str,
                      budget: float | None) -> bool:
    """Race only the default model on highspy, on a model worth a process, in a top-level
    process, while a core is idle or the time limit is long. On a busy machine two racers
    halve each other's speed (measured: hard-s3 took 1.8x the comparator's wall time racing
    at load 4 on 2 cores, 0.57x alone at load 7), which costs seconds on instances that prove
    in seconds; with ``PORTFOLIO_LONG_BUDGET`` seconds or more the proof is what is at stake,
    and the two models' proof times differ by more than that factor (the 30-job, 317-slot
    Philly instance: the cut-free model proves it in about 200 s, the default alone leaves
    2.9 % at 300 s). ``OASIS_PORTFOLIO=1`` races regardless, ``0`` never."""
    import multiprocessing as mp
    wanted = os.environ.get("OASIS_PORTFOLIO", "")
    if wanted == "0" or not (modeler == "auto" and options is None and medium == "highspy"
                             and prep.options.completion_cuts
                             and prep.model_size()["nonzeros"] >= PORTFOLIO_MIN_NONZEROS):
        return False
    # only a top-level process races: a sweep's or Dask's workers already share the cores
    # (and daemonic workers may not have children)
    if mp.parent_process() is not None or not _can_fork():
        return False
    cores = os.cpu_count() or 1
    if wanted == "1" or (budget is not None and budget >= PORTFOLIO_LONG_BUDGET):
        return cores >= 2
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available here: assume busy
        return False
    # this process counts about 1 in the load average: below cores − 0.5 the other core
    # is mostly idle
    return cores >= 2 and load < cores - 0.5


def _can_fork() -> bool:
    """A child process is possible: fork exists and this process is no daemon (Dask's and
    ``multiprocessing.Pool``'s workers may not have children)."""
    import multiprocessing as mp
    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def _portfolio_worker(prep: Any, random_seed: int, time_limit: float | None, mip_gap: float,
                      start: Schedule | None, conn: Any) -> None:
    """One racer (a forked child: ``prep`` is inherited, not pickled): build and solve its
    variant; send ``("progress", incumbent, bound)`` on every improvement, ``("values",
    objective, values)`` with every improving incumbent (so that the parent keeps it if it
    has to kill this process at the deadline), and ``("done", raw)`` or ``("error", text)``
    at the end."""
    try:
        # a scheduler inherited from the parent of another thread count is reset by the
        # first run (formulations/highs.py)
        clock = _Clock(time_limit)
        tracker = _Tracker(clock, lambda _s, inc, b: conn.send(("progress", inc, b)))
        raw = _solve_highspy(prep, clock, tracker, mip_gap, random_seed, start,
                             on_values=lambda obj, v: conn.send(("values", obj, v)))
        conn.send(("done", raw))
    except Exception as exc:  # reported to the parent, which decides
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _solve_portfolio(preps: list[Any], seeds: list[int], clock: _Clock, tracker: _Tracker,
                     mip_gap: float, start: Schedule | None) -> tuple[int, _Raw]:
    """Race the variants in child processes; the first proof wins and the others are
    stopped. Without a proof (time limit) the best incumbent wins, and the bound is the least
    of their bounds (each is a bound on the same OPT). Returns (winner, its result)."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    # fork: quick, and it re-imports nobody's main module (spawn and forkserver would run a
    # user's script again); each child resets HiGHS's thread pool before it solves
    ctx = mp.get_context("fork")
    left = _highs_budget(clock, preps[0])
    budget = None if left is None else max(0.05, left - 0.5)  # the processes start
    procs, conns = [], {}
    try:
        for k, (prep, seed) in enumerate(zip(preps, seeds, strict=True)):
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_portfolio_worker, daemon=True, args=(
                prep, seed, budget, mip_gap, start, send))
            p.start()
            send.close()
            procs.append(p)
            conns[recv] = k
        done: dict[int, _Raw] = {}
        errors: dict[int, str] = {}
        found: dict[int, tuple[float, tuple[dict, ...]]] = {}  # best incumbent of each
        bounds: dict[int, float] = {}
        while conns:
            left = clock.remaining()
            ready = wait(list(conns), timeout=None if left is None else max(0.0, left + 0.2))
            if not ready:
                break  # past the deadline: the racers are killed, their incumbents kept
            for c in ready:
                k = conns[c]
                try:
                    msg = c.recv()
                except EOFError:  # the racer died without a word
                    errors.setdefault(k, "the process ended without a result")
                    del conns[c]
                    continue
                if msg[0] == "progress":
                    tracker.update(msg[1], msg[2])
                    if msg[2] is not None and math.isfinite(msg[2]):
                        bounds[k] = min(bounds.get(k, math.inf), msg[2])
                    continue
                if msg[0] == "values":
                    if k not in found or msg[1] > found[k][0]:
                        found[k] = (msg[1], msg[2])
                    continue
                del conns[c]
                if msg[0] == "done":
                    done[k] = msg[1]
                else:
                    errors[k] = msg[1]
            if any(r.status is SolveStatus.OPTIMAL for r in done.values()):
                break
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=2.0)
            if p.is_alive():
                p.kill()
    for k, (obj, values) in found.items():  # killed racers: their last incumbent
        if k not in done:
            done[k] = _Raw(SolveStatus.TIME_LIMIT, obj, bounds.get(k), values, 0.0, 0.0,
                           clock.elapsed())
    if not done:
        if errors:
            raise SolverError("every racer of the portfolio failed: "
                              + "; ".join(errors.values()))
        return 0, _Raw(SolveStatus.TIME_LIMIT, None, min(bounds.values(), default=None), (),
                       0.0, 0.0, clock.elapsed())  # nothing found: the floor answers
    proven = [k for k, r in done.items() if r.status is SolveStatus.OPTIMAL]
    if proven:
        return proven[0], done[proven[0]]
    best = max(done, key=lambda k: -math.inf if done[k].solver_objective is None
               else done[k].solver_objective)
    bounds = [r.bound for r in done.values() if r.bound is not None]
    return best, replace(done[best], bound=min(bounds) if bounds else None)


# --- the three media of the compact MILP ---------------------------------------------------


def _status_of(model_status: Any) -> SolveStatus:
    """HiGHS model status → ours; anything but optimal or a limit is a solver failure."""
    import highspy
    s = highspy.HighsModelStatus
    if model_status == s.kOptimal:
        return SolveStatus.OPTIMAL
    limits = {s.kTimeLimit, s.kIterationLimit, s.kInterrupt}
    if hasattr(s, "kSolutionLimit"):
        limits.add(s.kSolutionLimit)
    if model_status in limits:
        return SolveStatus.TIME_LIMIT
    return SolveStatus.ERROR


def _watch(h: Any, clock: _Clock, tracker: _Tracker, sense: float,
           on_solution: Callable[[float, Any], None] | None = None) -> None:
    """Callbacks on a ``Highs`` object: every improving incumbent and, at most twice a second,
    the dual bound go to the tracker (``sense`` −1 where the model is ``min −utility``); HiGHS
    is interrupted once the wall-clock deadline has passed (its own time limit counts only
    its run, and can overshoot in a long root LP)."""
    last = [0.0]

    def improving(e: Any) -> None:
        out = e.data_out
        tracker.update(sense * out.objective_function_value, sense * out.mip_dual_bound)
        if on_solution is not None:
            on_solution(sense * out.objective_function_value, out.mip_solution)

    def interrupt(e: Any) -> None:
        now = time.perf_counter()
        if clock.deadline is not None and now > clock.deadline:
            e.interrupt()
        if now - last[0] >= 0.5 and e.data_out is not None:
            last[0] = now
            bound = sense * e.data_out.mip_dual_bound
            tracker.update(bound=bound)

    def lp_interrupt(e: Any) -> None:
        if clock.deadline is not None and time.perf_counter() > clock.deadline:
            e.interrupt()
    h.cbMipImprovingSolution.subscribe(improving)
    h.cbMipInterrupt.subscribe(interrupt)
    h.cbSimplexInterrupt.subscribe(lp_interrupt)
    h.cbIpmInterrupt.subscribe(lp_interrupt)


def _solve_highspy(prep: Any, clock: _Clock, tracker: _Tracker, mip_gap: float,
                   random_seed: int = 0, start: Schedule | None = None,
                   on_values: Callable[[float, tuple[dict, ...]], None] | None = None) -> _Raw:
    """The compact MILP as arrays (``formulations/compact_highspy.py``) on highspy, with
    callbacks for progress and the deadline, and ``start`` (the floor) as a MIP start;
    ``on_values(objective, values)`` gets every improving incumbent's values."""
    import highspy
    import numpy as np

    from .formulations import compact_highspy

    t0 = time.perf_counter()
    m = compact_highspy.build(prep.instance, prep=prep)
    build = time.perf_counter() - t0
    t1 = time.perf_counter()
    h = new_highs()
    h.setOptionValue("threads", THREADS)
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("random_seed", int(random_seed))
    budget = _highs_budget(clock, prep)
    if budget is not None:
        h.setOptionValue("time_limit", float(budget))
    h.passModel(m.lp())
    x = compact_highspy.start_vector(m, start) if start is not None else None
    if x is not None:  # HiGHS checks it and starts from it (or ignores an infeasible one)
        sol = highspy.HighsSolution()
        sol.col_value = x.tolist()
        sol.value_valid = True
        h.setSolution(sol)

    def solution(obj: float, x: Any) -> None:
        if on_values is not None:
            on_values(obj, compact_highspy.values(m, np.asarray(x)))
    _watch(h, clock, tracker, 1.0, solution if on_values is not None else None)
    handover = time.perf_counter() - t1
    t2 = time.perf_counter()
    h.run()
    highs_seconds = time.perf_counter() - t2
    t3 = time.perf_counter()
    status = _status_of(h.getModelStatus())
    if status is SolveStatus.ERROR:
        raise SolverError(f"HiGHS failed on {prep.instance.name}: "
                          f"{h.modelStatusToString(h.getModelStatus())}")
    info = h.getInfo()
    values: tuple[dict, ...] = ()
    incumbent = None
    if info.primal_solution_status == 2:
        incumbent = float(info.objective_function_value)
        values = compact_highspy.values(m, np.asarray(h.getSolution().col_value))
    bound = float(info.mip_dual_bound) if info.mip_node_count >= 0 else None
    handover += time.perf_counter() - t3
    return _Raw(status, incumbent, bound, values, build, handover, highs_seconds)


def _solve_pyomo(prep: Any, clock: _Clock, tracker: _Tracker, mip_gap: float,
                 start: Schedule | None = None,
                 customize: Callable[[Any], None] | None = None) -> _Raw:
    """Pyomo model → ``pyomo.contrib.solver`` HiGHS (persistent interface). Pyomo's interface
    takes no callbacks: the history has the end points only, and the deadline rests on the
    predicted build (``_plan``) and HiGHS's own time limit. ``customize(model)`` runs after
    the build (``_solve_custom``); the values then carry ``c`` as a fifth dict."""
    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import TerminationCondition

    from .formulations import compact_pyomo

    t0 = time.perf_counter()
    m = compact_pyomo.build(prep.instance, prep=prep)
    if customize is not None:
        customize(m)
    build = time.perf_counter() - t0
    opt = SolverFactory("highs")
    timer = HierarchicalTimer()
    t1 = time.perf_counter()
    # set_instance captures HiGHS output itself; quiet_stdout is belt and braces
    with threads_for(THREADS), quiet_stdout():
        res = opt.solve(m, time_limit=_highs_budget(clock, prep), rel_gap=mip_gap,
                        threads=THREADS, raise_exception_on_nonoptimal_result=False,
                        load_solutions=False, timer=timer)
    highs_seconds = float(res.timing_info.highs_time)
    tc = res.termination_condition
    if tc == TerminationCondition.convergenceCriteriaSatisfied:
        status = SolveStatus.OPTIMAL
    elif tc in (TerminationCondition.maxTimeLimit, TerminationCondition.iterationLimit,
                TerminationCondition.objectiveLimit, TerminationCondition.interrupted):
        status = SolveStatus.TIME_LIMIT
    else:
        raise SolverError(f"HiGHS (through Pyomo) failed on {prep.instance.name}: {tc.name}")
    values: tuple[dict, ...] = ()
    incumbent = res.incumbent_objective
    if incumbent is not None:
        res.solution_loader.load_vars()
        values = compact_pyomo.values(m)
        if customize is not None:
            values = (*values, {k: v.value for k, v in m.c.items()})
    handover = time.perf_counter() - t1 - highs_seconds
    return _Raw(status, _float(incumbent), _float(res.objective_bound), values, build, handover,
                highs_seconds)


def _solve_pulp(prep: Any, clock: _Clock, tracker: _Tracker, mip_gap: float,
                start: Schedule | None = None,
                customize: Callable[[Any], None] | None = None) -> _Raw:
    """PuLP problem → ``pulp.HiGHS`` (highspy). The steps of ``HiGHS.actualSolve`` are run one
    by one to time the hand-over and to put callbacks on PuLP's ``Highs`` object; status and
    bound come from HiGHS itself, not ``LpStatus`` (which says "Optimal" after a time limit).
    PuLP hands HiGHS ``min −objective``, so objective and dual bound come back negated.
    ``customize(model)`` runs after the build, as in ``_solve_pyomo``."""
    import pulp

    from .formulations import compact_pulp

    t0 = time.perf_counter()
    m = compact_pulp.build(prep.instance, prep=prep)
    if customize is not None:
        customize(m)
    build = time.perf_counter() - t0
    problem = m.problem
    solver = pulp.HiGHS(msg=False, timeLimit=_highs_budget(clock, prep), gapRel=mip_gap,
                        threads=THREADS)
    t1 = time.perf_counter()
    with quiet_stdout():  # the first Highs() of a process prints a banner on stdout
        solver.createAndConfigureSolver(problem)
    solver.buildSolverModel(problem)
    h = problem.solverModel
    _watch(h, clock, tracker, -1.0)
    handover = time.perf_counter() - t1
    t2 = time.perf_counter()
    with threads_for(THREADS):
        solver.callSolver(problem)
    highs_seconds = time.perf_counter() - t2
    t3 = time.perf_counter()
    st, sol_st = solver.findSolutionValues(problem)
    problem.assignStatus(st, sol_st)
    info = h.getInfo()
    status = _status_of(h.getModelStatus())
    if status is SolveStatus.ERROR:
        raise SolverError(f"HiGHS (through PuLP) failed on {prep.instance.name}: "
                          f"{h.modelStatusToString(h.getModelStatus())}")
    has_solution = info.primal_solution_status == 2
    sense = -1.0  # maximisation handed over as min(−obj)
    incumbent = sense * info.objective_function_value if has_solution else None
    bound = sense * info.mip_dual_bound if info.mip_node_count >= 0 else None
    values: tuple[dict, ...] = ()
    if has_solution:
        values = compact_pulp.values(m)
        if customize is not None:
            values = (*values, {k: v.varValue for k, v in m.c.items()})
    handover += time.perf_counter() - t3
    return _Raw(status, incumbent, bound, values, build, handover, highs_seconds)


_ROUTES: dict[str, Callable[..., _Raw]] = {  # (prep, clock, tracker, mip_gap, start=)
    "highspy": _solve_highspy, "pyomo": _solve_pyomo, "pulp": _solve_pulp,
}


def _float(x: Any) -> float | None:
    return None if x is None else float(x)
