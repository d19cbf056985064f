"""The exact offline optimum (SPEC §2): build the compact MILP, hand it to HiGHS, read back a
schedule and a typed report.

This is the one module (with ``formulations/``) that talks to solver APIs: Pyomo's maintained
HiGHS interface (``pyomo.contrib.solver``) and PuLP's ``pulp.HiGHS`` (through highspy).

What the report means:

- ``total_utility`` (``objective``) is the utility of the extracted schedule, recomputed from the
  instance after trimming every job after the first slot at which its work reaches V_i. For a
  proven optimum it equals the solver's objective (1e-6 rel.). For a time-limited incumbent it
  can only be higher: the MILP may have chosen a completion slot ``c_it`` later than the one the
  work reaches, and ``f_i`` is non-increasing; the trimmed schedule is itself a feasible MILP
  point, so the solver's bound still covers it;
- ``bound`` is HiGHS's dual bound, tightened to ``Σ_i max_t f_i`` when that is smaller, and never
  below ``total_utility``;
- ``gap = (bound − total_utility) / total_utility`` (relative to the incumbent, as Gurobi's
  ``MIPGap``); 0 when both are 0, ``None`` when the incumbent is 0 and the bound is not.
- seconds: ``build_seconds`` (preprocessing and the Python model), ``handover_seconds`` (model
  to HiGHS and the solution back: Pyomo's ``set_instance`` and loading, PuLP's column/row
  passing), ``solve_seconds`` (HiGHS run time), ``seconds`` (the whole call, extraction and
  validation included).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

from .errors import InputError
from .model import REL_TOL, Instance, Schedule

#: HiGHS threads: the machine's cores are shared with other work, and HiGHS's MIP search is
#: essentially serial; one thread avoids oversubscription.
THREADS = 1
MODELERS = ("pyomo", "pulp")
METHODS = ("auto", "compact", "colgen")


class SolveStatus(str, Enum):
    """How the solve ended: proven optimal (within ``mip_gap``), stopped by the time limit (or
    another limit) with the incumbent, or a solver error (the empty schedule is returned)."""

    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    #: column generation finished without a time limit, but price-and-branch left a gap to
    #: the LP bound: a feasible schedule and a valid bound, optimality not proven.
    FEASIBLE = "feasible"
    ERROR = "error"


@dataclass(frozen=True)
class SolveReport:
    """The outcome of one offline solve (module docstring for the meaning of each figure)."""

    status: SolveStatus
    objective: float  # utility of the extracted schedule = SPEC §6 total_utility
    bound: float
    gap: float | None
    build_seconds: float
    handover_seconds: float
    solve_seconds: float
    seconds: float
    modeler: str
    method: str
    solver_objective: float | None = None  # the MILP's own objective value of the incumbent

    @property
    def total_utility(self) -> float:
        return self.objective

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        d["total_utility"] = d.pop("objective")
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


def solve(instance: Instance, modeler: str = "pyomo", time_limit: float | None = None,
          mip_gap: float = 0.0, method: str = "auto",
          options: Any = None, solver: str = "highs") -> tuple[Schedule, SolveReport]:
    """Solve the offline problem of ``instance`` exactly (or until ``time_limit`` seconds of
    HiGHS time) and return the validated schedule and its report.

    ``method``: ``compact`` (the time-indexed MILP), ``colgen`` (column generation: LP bound and
    price-and-branch schedule), ``auto`` (compact up to ``COMPACT_SIZE_LIMIT``, else colgen).
    ``options``: ``formulations.common.Options`` (tightenings). ``solver``: ``highs``, or
    another MILP solver for the compact model (``oasis_opt.solvers``; forces ``compact``).
    """
    from .validate import validate

    if modeler not in MODELERS:
        raise InputError("--modeler", f"unknown modeler {modeler!r}; choose from "
                                      f"{', '.join(MODELERS)}")
    if method not in METHODS:
        raise InputError("--method", f"unknown method {method!r}; choose from "
                                     f"{', '.join(METHODS)}")
    if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
        raise InputError("--time-limit", f"must be a positive number, got {time_limit}")
    if not 0 <= mip_gap < 1:
        raise InputError("--mip-gap", f"must be in [0, 1), got {mip_gap}")
    if solver != "highs":  # another solver takes the compact model (oasis_opt.solvers)
        from . import solvers
        modeler, method = solvers.check(solver), "compact"
    method = _choose_method(instance, method)
    if method == "colgen":
        return _solve_colgen(instance, time_limit, mip_gap, modeler)

    from .formulations.common import prepare

    start = time.perf_counter()
    prep = prepare(instance, options)
    prep_seconds = time.perf_counter() - start
    if not prep.active:  # no job can earn anything: the empty schedule is optimal
        raw = _Raw(SolveStatus.OPTIMAL, 0.0, 0.0, (), 0.0, 0.0, 0.0)
    elif solver != "highs":
        r = solvers.solve(solver, prep, time_limit, mip_gap, THREADS)
        raw = _Raw(SolveStatus(r.status), r.objective, r.bound, r.values, r.build_seconds,
                   r.handover_seconds, r.solve_seconds)
    else:
        raw = _ROUTES[modeler](prep, time_limit, mip_gap)
    schedule = _extract(prep, raw)
    utility = schedule.total_utility
    bound = _bound(raw, prep.upper_bound(), utility)
    report = validate(instance, schedule)
    if not report.feasible:
        from .algorithms import InvalidScheduleError
        raise InvalidScheduleError(
            f"the offline solver produced an infeasible schedule on {instance.name}: "
            + "; ".join(str(v) for v in report.violations[:5]))
    seconds = time.perf_counter() - start
    result = SolveReport(
        status=raw.status, objective=utility, bound=bound, gap=relative_gap(bound, utility),
        build_seconds=prep_seconds + raw.build, handover_seconds=raw.handover,
        solve_seconds=raw.solve, seconds=seconds, modeler=modeler, method=method,
        solver_objective=raw.solver_objective)
    schedule = schedule.with_extras(status=result.status.value, bound=result.bound,
                                    gap=result.gap, seconds=seconds, modeler=modeler,
                                    method=method, solver=solver,
                                    solver_objective=raw.solver_objective)
    return schedule, result


def relative_gap(bound: float, incumbent: float) -> float | None:
    """``(bound − incumbent) / |incumbent|``; 0 when both are 0 (to 1e-6), None when only the
    incumbent is."""
    if abs(incumbent) <= REL_TOL:
        return 0.0 if abs(bound) <= REL_TOL else None
    return max(0.0, (bound - incumbent) / abs(incumbent))


#: ``auto`` takes the compact MILP while jobs × slots × servers stays below this; beyond it,
#: column generation. Measured on the paper preset (80 servers, docs/offline.md): 40 jobs ×
#: 20 slots (64 000) and 60 × 30 (144 000) prove optimal in 1 and 5 s; 80 × 40 (256 000)
#: is still open after 60 s (gap 0.04 %), where column generation stops by itself in 16 s.
COMPACT_SIZE_LIMIT = 150_000


def _choose_method(instance: Instance, method: str) -> str:
    """``auto``: compact for small instances, column generation for large ones."""
    if method != "auto":
        return method
    size = instance.num_jobs * instance.horizon * (len(instance.worker_names)
                                                   + len(instance.ps_names))
    return "compact" if size <= COMPACT_SIZE_LIMIT else "colgen"


def _solve_colgen(instance: Instance, time_limit: float | None, mip_gap: float,
                  modeler: str) -> tuple[Schedule, SolveReport]:
    """Column generation (LP bound) and price-and-branch (schedule), on highspy directly:
    ``formulations/colgen.py``. ``modeler`` does not apply (reported as ``highspy``)."""
    from .formulations import colgen
    from .validate import validate

    start = time.perf_counter()
    with _quiet_stdout():
        res = colgen.solve(instance, time_limit=time_limit, mip_gap=max(mip_gap, 1e-4))
    schedule = res.incumbent
    utility = schedule.total_utility
    report = validate(instance, schedule)
    if not report.feasible:
        from .algorithms import InvalidScheduleError
        raise InvalidScheduleError(
            f"column generation produced an infeasible schedule on {instance.name}: "
            + "; ".join(str(v) for v in report.violations[:5]))
    bound = max(res.bound, utility)
    gap = relative_gap(bound, utility)
    if gap is not None and gap <= max(mip_gap, REL_TOL):
        status = SolveStatus.OPTIMAL
    elif not res.proven or res.mip_status == "time_limit":
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.FEASIBLE
    seconds = time.perf_counter() - start
    result = SolveReport(
        status=status, objective=utility, bound=bound, gap=gap, build_seconds=0.0,
        handover_seconds=0.0, solve_seconds=seconds, seconds=seconds, modeler="highspy",
        method="colgen", solver_objective=utility)
    extras = {"status": status.value, "bound": bound, "gap": gap, "seconds": seconds,
              "method": "colgen", "lp_proven": res.proven, "lp_value": res.lp_value,
              "iterations": res.iterations, "columns": res.columns,
              "lp_seconds": res.lp_seconds, "pricing_seconds": res.pricing_seconds,
              "mip_seconds": res.mip_seconds, "mip_status": res.mip_status,
              "bound_seconds": res.bound_seconds}
    return Schedule(schedule.instance, "optimal" if status is SolveStatus.OPTIMAL else "colgen",
                    utility, schedule.jobs, extras), result


def _extract(prep: Any, raw: _Raw) -> Schedule:
    from .formulations.common import schedule_from_values
    if raw.status is SolveStatus.ERROR or not raw.values:
        return schedule_from_values(prep, {}, {})
    return schedule_from_values(prep, *raw.values)


def _bound(raw: _Raw, trivial: float, utility: float) -> float:
    """The solver's dual bound, or the trivial ``Σ_i max f_i`` when smaller or missing; never
    below the incumbent's utility (trimming can only raise it, and the solver's tolerances
    can leave the bound a hair under it)."""
    bound = trivial
    if raw.bound is not None and math.isfinite(raw.bound):
        bound = min(bound, raw.bound)
    return max(bound, utility)


# --- the two modeller routes -------------------------------------------------------------


def _solve_pyomo(prep: Any, time_limit: float | None, mip_gap: float) -> _Raw:
    """Pyomo model → ``pyomo.contrib.solver`` HiGHS (persistent interface)."""
    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import TerminationCondition

    from .formulations import compact_pyomo

    t0 = time.perf_counter()
    m = compact_pyomo.build(prep.instance, prep=prep)
    build = time.perf_counter() - t0
    opt = SolverFactory("highs")
    timer = HierarchicalTimer()
    t1 = time.perf_counter()
    with _quiet_stdout():  # set_instance captures HiGHS output itself; belt and braces
        res = opt.solve(m, time_limit=time_limit, rel_gap=mip_gap, threads=THREADS,
                        raise_exception_on_nonoptimal_result=False, load_solutions=False,
                        timer=timer)
    highs_seconds = float(res.timing_info.highs_time)
    tc = res.termination_condition
    if tc == TerminationCondition.convergenceCriteriaSatisfied:
        status = SolveStatus.OPTIMAL
    elif tc in (TerminationCondition.maxTimeLimit, TerminationCondition.iterationLimit,
                TerminationCondition.objectiveLimit, TerminationCondition.interrupted):
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.ERROR
    values: tuple[dict, ...] = ()
    incumbent = res.incumbent_objective
    if incumbent is not None and status is not SolveStatus.ERROR:
        res.solution_loader.load_vars()
        values = compact_pyomo.values(m)
    handover = time.perf_counter() - t1 - highs_seconds
    return _Raw(status, _float(incumbent), _float(res.objective_bound), values, build, handover,
                highs_seconds)


def _solve_pulp(prep: Any, time_limit: float | None, mip_gap: float) -> _Raw:
    """PuLP problem → ``pulp.HiGHS`` (highspy). The steps of ``HiGHS.actualSolve`` are run one
    by one to time the hand-over; status and bound come from HiGHS itself, not ``LpStatus``
    (which says "Optimal" after a time limit). PuLP hands HiGHS ``min −objective``, so the
    objective and the dual bound come back negated."""
    import highspy
    import pulp

    from .formulations import compact_pulp

    t0 = time.perf_counter()
    m = compact_pulp.build(prep.instance, prep=prep)
    build = time.perf_counter() - t0
    problem = m.problem
    solver = pulp.HiGHS(msg=False, timeLimit=time_limit, gapRel=mip_gap, threads=THREADS)
    t1 = time.perf_counter()
    with _quiet_stdout():  # the first Highs() of a process prints a banner on stdout
        solver.createAndConfigureSolver(problem)
    solver.buildSolverModel(problem)
    handover = time.perf_counter() - t1
    h = problem.solverModel
    solver.callSolver(problem)
    highs_seconds = float(h.getRunTime())
    t2 = time.perf_counter()
    st, sol_st = solver.findSolutionValues(problem)
    problem.assignStatus(st, sol_st)
    info = h.getInfo()
    model_status = h.getModelStatus()
    has_solution = info.primal_solution_status == 2
    if model_status == highspy.HighsModelStatus.kOptimal:
        status = SolveStatus.OPTIMAL
    elif model_status in (highspy.HighsModelStatus.kTimeLimit,
                          highspy.HighsModelStatus.kIterationLimit,
                          highspy.HighsModelStatus.kInterrupt,
                          getattr(highspy.HighsModelStatus, "kSolutionLimit", None)):
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.ERROR
    sense = -1.0  # maximisation handed over as min(−obj)
    incumbent = sense * info.objective_function_value if has_solution else None
    bound = sense * info.mip_dual_bound if info.mip_node_count >= 0 else None
    values: tuple[dict, ...] = ()
    if has_solution and status is not SolveStatus.ERROR:
        values = compact_pulp.values(m)
    handover += time.perf_counter() - t2
    return _Raw(status, incumbent, bound, values, build, handover, highs_seconds)


_ROUTES: dict[str, Callable[[Any, float | None, float], _Raw]] = {
    "pyomo": _solve_pyomo, "pulp": _solve_pulp,
}


def _float(x: Any) -> float | None:
    return None if x is None else float(x)


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Send whatever native code writes on file descriptor 1 to /dev/null for a moment
    (HiGHS's banner); library code never prints."""
    fd = 1  # native code writes to the process's fd 1 whatever sys.stdout is
    sys.stdout.flush()
    saved = os.dup(fd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
        os.close(devnull)
