"""The three media of the compact MILP on HiGHS: highspy directly (with callbacks for
progress and the deadline), Pyomo's ``pyomo.contrib.solver`` and PuLP's ``pulp.HiGHS``; and
HiGHS's share of the time left (``highs_budget``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import SolverError
from ..formulations import highs
from ..formulations.highs import (
    care_options,
    mip_options,
    new_highs,
    quiet_stdout,
    threads_for,
)
from ..formulations.result import SolveResult
from ..formulations.status import pyomo_status
from ..model import REL_TOL, Schedule
from .clock import Clock, Tracker
from .report import SolveStatus

#: HiGHS threads: the machine's cores are shared with other work, and HiGHS's MIP search is
#: essentially serial; one thread avoids oversubscription.
THREADS = 1


def highs_budget(clock: Clock, prep: Any) -> float | None:
    """HiGHS's share of the time left: all but a reserve for extraction and validation
    (measured ≈ 2 µs per allocation cell, plus a margin)."""
    left = clock.remaining()
    if left is None:
        return None
    cells = len(prep.y_index) + len(prep.z_index)
    # whole workers from continuous ones: a transportation MILP over the y cells
    flow = 0.2 + 2e-5 * len(prep.y_index) if prep.flow_workers else 0.0
    # HiGHS finishes its current step after the limit (seen: 7 % late on a loaded machine)
    return max(0.05, HIGHS_SHARE * left - HIGHS_RESERVE - 5e-6 * cells - flow)


#: ``highs_budget``: HiGHS's share of the time left, less a reserve (seconds).
HIGHS_SHARE = 0.95
HIGHS_RESERVE = 0.3


def window_for(seconds: float) -> float:
    """The time left in which ``highs_budget`` gives HiGHS about ``seconds`` (a small model:
    its cells' reserve aside); ``compact.plain_probe``'s window."""
    return (seconds + HIGHS_RESERVE) / HIGHS_SHARE


# --- the three media of the compact MILP ---------------------------------------------------


def status_of(model_status: Any) -> SolveStatus:
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


def watch(h: Any, clock: Clock, tracker: Tracker, sense: float,
          on_solution: Callable[[float, Any], None] | None = None,
          incumbents: bool = True, halt: Callable[[], bool] | None = None) -> None:
    """Callbacks on a ``Highs`` object: every improving incumbent and, at most twice a second,
    the dual bound go to the tracker (``sense`` −1 where the model is ``min −utility``); HiGHS
    is interrupted once the wall-clock deadline has passed (its own time limit counts only
    its run, and can overshoot in a long root LP), or once ``halt()`` is true (asked at each
    of those callbacks: another racer has proven the optimum, ``race.solve_portfolio``).
    Without ``incumbents`` (a relaxation's run) only the bound goes to the tracker."""
    last = [0.0]

    def improving(e: Any) -> None:
        out = e.data_out
        tracker.update(sense * out.objective_function_value if incumbents else None,
                       sense * out.mip_dual_bound)
        if on_solution is not None:
            on_solution(sense * out.objective_function_value, out.mip_solution)

    def stopping() -> bool:
        return clock.deadline.passed() or halt is not None and halt() or highs.interrupted()

    def interrupt(e: Any) -> None:
        now = time.perf_counter()
        if stopping():
            e.interrupt()
        if now - last[0] >= 0.5 and e.data_out is not None:
            last[0] = now
            bound = sense * e.data_out.mip_dual_bound
            tracker.update(bound=bound)

    def lp_interrupt(e: Any) -> None:
        if stopping():
            e.interrupt()
    h.cbMipImprovingSolution.subscribe(improving)
    h.cbMipInterrupt.subscribe(interrupt)
    h.cbSimplexInterrupt.subscribe(lp_interrupt)
    h.cbIpmInterrupt.subscribe(lp_interrupt)


def highspy_mip(m: Any, clock: Clock, tracker: Tracker, mip_gap: float, random_seed: int = 0,
                start: Schedule | None = None,
                on_values: Callable[[float, tuple[dict, ...]], None] | None = None,
                lp: Any = None, incumbents: bool = True,
                careful: bool | str = False, halt: Callable[[], bool] | None = None) -> Any:
    """A quiet ``Highs`` holding the built compact MILP ``m`` (``compact_highspy.build``) as
    every highspy solve of the route runs it, ready to run: one thread (``THREADS``), gap
    ``mip_gap``, ``random_seed``, ``mip_options`` of its formulation, HiGHS's share of the
    clock (``highs_budget``), ``start`` (the floor) as MIP start, and the callbacks of
    ``watch``; ``on_values(objective, values)`` gets every improving incumbent's values.
    ``lp``: the model to hold instead of ``m.lp()`` (the same columns; ``ps_relax.whole_lp``);
    without ``incumbents`` (a relaxation) neither the tracker nor ``on_values`` hears of
    incumbents. ``careful``: HiGHS's ``care_options`` (tight tolerances, no presolve), as
    where the instance has ``fine_demands``. ``halt``: ``watch``'s.
    ``benchmarks/seed_alone.py`` times its ``run`` (issue 22)."""
    import highspy
    import numpy as np

    from ..formulations import compact_highspy

    prep = m.prep
    h = new_highs()
    h.setOptionValue("threads", THREADS)
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("random_seed", int(random_seed))
    for key, value in {**mip_options(prep), **care_options(prep.instance, careful)}.items():
        h.setOptionValue(key, value)
    budget = highs_budget(clock, prep)
    if budget is not None:
        h.setOptionValue("time_limit", float(budget))
    h.passModel(m.lp() if lp is None else lp)
    x = compact_highspy.start_vector(m, start) if start is not None else None
    if x is not None:  # HiGHS checks it and starts from it (or ignores an infeasible one)
        sol = highspy.HighsSolution()
        sol.col_value = x.tolist()
        sol.value_valid = True
        h.setSolution(sol)

    def solution(obj: float, x: Any) -> None:
        if on_values is not None:
            on_values(obj, compact_highspy.values(m, np.asarray(x)))
    watch(h, clock, tracker, 1.0, solution if on_values is not None and incumbents else None,
          incumbents, halt)
    return h


def take_schedules(h: Any, m: Any, inbox: Callable[[], Schedule | None]) -> dict[str, int]:
    """Hand HiGHS the schedules another racer found (issue 22 round 10): at each of HiGHS's
    queries for a user solution (after its set-up, in the root, before every dive), the
    schedule ``inbox()`` returns (None: nothing new), mapped to this model's columns as the
    floor's start is (``compact_highspy.start_vector``), if it beats this run's incumbent
    (as HiGHS reports it at the query). HiGHS checks it and takes it as its incumbent (no
    improving-solution callback follows: HiGHS 1.16 calls none for a user solution).
    Returns the counters, kept up to date: ``received`` (schedules handed over) and
    ``accepted`` (handed over and HiGHS's incumbent at its next query: its presolve may
    reject a solution whose image in its reduced space violates a row,
    docs/offline-journal.md round 10)."""
    import math

    from ..formulations import compact_highspy
    from ..model import REL_TOL

    pending: list[float | None] = [None]
    counts = {"received": 0, "accepted": 0}

    def query(e: Any) -> None:
        obj = float(e.data_out.objective_function_value)
        best = obj if math.isfinite(obj) else -math.inf
        if pending[0] is not None and best >= pending[0] - REL_TOL * max(1.0, pending[0]):
            counts["accepted"] += 1
        pending[0] = None
        schedule = inbox()
        if schedule is None or schedule.total_utility <= best + REL_TOL * max(
                1.0, abs(schedule.total_utility)):
            return
        x = compact_highspy.start_vector(m, schedule)
        if x is None:
            return
        e.data_in.setSolution(x)
        counts["received"] += 1
        pending[0] = float(schedule.total_utility)
    h.cbMipUserSolution.subscribe(query)
    return counts


def solve_highspy(prep: Any, clock: Clock, tracker: Tracker, mip_gap: float,
                  random_seed: int = 0, start: Schedule | None = None,
                  on_values: Callable[[float, tuple[dict, ...]], None] | None = None,
                  inbox: Callable[[], Schedule | None] | None = None,
                  careful: bool | str = False, halt: Callable[[], bool] | None = None
                  ) -> SolveResult:
    """The compact MILP as arrays (``formulations/compact_highspy.py``) on highspy, with
    callbacks for progress and the deadline, and ``start`` (the floor) as a MIP start
    (``highspy_mip``); ``on_values(objective, values)`` gets every improving incumbent's
    values; ``inbox``: other racers' schedules, handed over while HiGHS runs
    (``take_schedules``; its counters in the result's ``extras``); ``halt()`` true
    interrupts HiGHS (``watch``: another racer has proven the optimum).

    With ``Options.ps_relaxed`` HiGHS first solves the model with the PS counts continuous
    (a relaxation: its incumbents are not reported, its bound is); its solution is made
    whole (``formulations/ps_relax.repair``), and where that fails the whole model is solved
    in the time left, its bound the least of the two. ``extras["ps_relaxed"]`` says which:
    ``repaired`` or ``whole``."""
    import numpy as np

    from ..formulations import compact_highspy, ps_relax

    t0 = time.perf_counter()
    m = compact_highspy.build(prep.instance, prep=prep)
    build = time.perf_counter() - t0
    relaxed = prep.options.ps_relaxed and bool(m.z) and not prep.flow_workers
    handover = seconds = 0.0
    shared: dict[str, int] = {}

    def attempt(lp: Any, report: bool) -> Any:
        """One HiGHS run of ``lp`` within the budget; incumbents reported if ``report``."""
        nonlocal handover, seconds, shared
        t1 = time.perf_counter()
        h = highspy_mip(m, clock, tracker, mip_gap, random_seed, start, on_values, lp, report,
                        careful, halt)
        if inbox is not None and report:  # a relaxation's incumbent is not comparable
            shared = take_schedules(h, m, inbox)
        handover += time.perf_counter() - t1
        t2 = time.perf_counter()
        h.run()
        seconds += time.perf_counter() - t2
        if status_of(h.getModelStatus()) is SolveStatus.ERROR:
            raise SolverError(f"HiGHS failed on {prep.instance.name}: "
                              f"{h.modelStatusToString(h.getModelStatus())}")
        return h

    h = attempt(None, not relaxed)
    status, info = status_of(h.getModelStatus()), h.getInfo()
    bound = float(info.mip_dual_bound) if info.mip_node_count >= 0 else None
    x = np.asarray(h.getSolution().col_value) if info.primal_solution_status == 2 else None
    extras: dict[str, Any] = {}
    if relaxed:
        t3 = time.perf_counter()
        # each repair within a share of the time left, and of what the relaxation took
        left = clock.remaining()
        cap = max(1.0, seconds) if left is None else min(left, max(1.0, seconds))
        whole = None if x is None else ps_relax.repair(m, x, cap)
        handover += time.perf_counter() - t3
        extras["ps_relaxed"] = "repaired" if whole is not None else "whole"
        if whole is None and status is SolveStatus.OPTIMAL:  # only a bound: the whole model
            tracker.update(bound=bound)
            h = attempt(ps_relax.whole_lp(m), True)
            status, info = status_of(h.getModelStatus()), h.getInfo()
            if info.mip_node_count >= 0:
                bound = float(info.mip_dual_bound) if bound is None else \
                    min(bound, float(info.mip_dual_bound))
            whole = np.asarray(h.getSolution().col_value) \
                if info.primal_solution_status == 2 else None
        x = whole
    values: tuple[dict, ...] = ()
    incumbent = None
    if x is not None:
        values = compact_highspy.values(m, x)
        claimed, worth = float(info.objective_function_value), float(np.dot(m.cost, x))
        incumbent = worth if relaxed else claimed
        if relaxed:  # the repaired solution: worth the relaxed one's vector (z is not in f)
            tracker.update(incumbent=incumbent)
        if abs(worth - claimed) > REL_TOL * max(1.0, abs(claimed)):
            # HiGHS 1.16, given a MIP start, once ended "Optimal" at 2.0 with a solution
            # vector worth 1.0 (and, relaxed, at 3.0 with the start's vector worth 2.0, which
            # the repair kept): the vector is what is returned, so it is what counts, and its
            # optimality is not proven
            incumbent = worth
            extras["disagreed"] = True  # compact.py solves it again, tightly
            if status is SolveStatus.OPTIMAL:
                status = SolveStatus.FEASIBLE
    return SolveResult(status, incumbent, bound, values, build_seconds=build,
                       handover_seconds=handover, solve_seconds=seconds, solver="highspy",
                       extras={**shared, **extras})


def solve_pyomo(prep: Any, clock: Clock, tracker: Tracker, mip_gap: float,
                start: Schedule | None = None,
                customize: Callable[[Any], None] | None = None,
                careful: bool | str = False) -> SolveResult:
    """Pyomo model → ``pyomo.contrib.solver`` HiGHS (persistent interface). Pyomo's interface
    takes no callbacks: the history has the end points only, and the deadline rests on the
    predicted build (``plan_route``) and HiGHS's own time limit. ``customize(model)`` runs after
    the build (``solve_custom``); the values then carry ``c`` as a fifth dict. ``careful``:
    HiGHS's ``care_options``, as where the instance has ``fine_demands``."""
    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus

    from ..formulations import compact_pyomo

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
        res = opt.solve(m, time_limit=highs_budget(clock, prep), rel_gap=mip_gap,
                        threads=THREADS, raise_exception_on_nonoptimal_result=False,
                        load_solutions=False, timer=timer,
                        solver_options=care_options(prep.instance, careful))
    highs_seconds = float(res.timing_info.highs_time)
    tc = res.termination_condition
    status = pyomo_status(tc, res.solution_status in (SolutionStatus.optimal,
                                                      SolutionStatus.feasible))
    if status is SolveStatus.ERROR:
        raise SolverError(f"HiGHS (through Pyomo) failed on {prep.instance.name}: {tc.name}")
    values: tuple[dict, ...] = ()
    incumbent = res.incumbent_objective
    if incumbent is not None:
        res.solution_loader.load_vars()
        values = compact_pyomo.values(m)
        if customize is not None:
            values = (*values, {k: v.value for k, v in m.c.items()})
    handover = time.perf_counter() - t1 - highs_seconds
    return SolveResult(status, _float(incumbent), _float(res.objective_bound), values,
                       build_seconds=build, handover_seconds=handover,
                       solve_seconds=highs_seconds, solver="pyomo")


def solve_pulp(prep: Any, clock: Clock, tracker: Tracker, mip_gap: float,
               start: Schedule | None = None,
               customize: Callable[[Any], None] | None = None,
               careful: bool | str = False) -> SolveResult:
    """PuLP problem → ``pulp.HiGHS`` (highspy). The steps of ``HiGHS.actualSolve`` are run one
    by one to time the hand-over and to put callbacks on PuLP's ``Highs`` object; status and
    bound come from HiGHS itself, not ``LpStatus`` (which says "Optimal" after a time limit).
    PuLP hands HiGHS ``min −objective``, so objective and dual bound come back negated.
    ``customize(model)`` runs after the build, and ``careful`` is taken, as in
    ``solve_pyomo``."""
    import pulp

    from ..formulations import compact_pulp

    t0 = time.perf_counter()
    m = compact_pulp.build(prep.instance, prep=prep)
    if customize is not None:
        customize(m)
    build = time.perf_counter() - t0
    problem = m.problem
    solver = pulp.HiGHS(msg=False, timeLimit=highs_budget(clock, prep), gapRel=mip_gap,
                        threads=THREADS, **care_options(prep.instance, careful))
    t1 = time.perf_counter()
    with quiet_stdout():  # the first Highs() of a process prints a banner on stdout
        solver.createAndConfigureSolver(problem)
    solver.buildSolverModel(problem)
    h = problem.solverModel
    watch(h, clock, tracker, -1.0)
    handover = time.perf_counter() - t1
    t2 = time.perf_counter()
    with threads_for(THREADS):
        solver.callSolver(problem)
    highs_seconds = time.perf_counter() - t2
    t3 = time.perf_counter()
    st, sol_st = solver.findSolutionValues(problem)
    problem.assignStatus(st, sol_st)
    info = h.getInfo()
    status = status_of(h.getModelStatus())
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
    return SolveResult(status, incumbent, bound, values, build_seconds=build,
                       handover_seconds=handover, solve_seconds=highs_seconds, solver="pulp")


#: (prep, clock, tracker, mip_gap, start=, careful=) → the compact MILP's result
ROUTES: dict[str, Callable[..., SolveResult]] = {
  "highspy": solve_highspy, "pyomo": solve_pyomo, "pulp": solve_pulp,
}


def _float(x: Any) -> float | None:
    return None if x is None else float(x)
