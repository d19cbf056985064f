"""The report of an offline solve and the settling of every route's outcome into it: the
status (``SolveStatus``, one type for every path, ``formulations/status.py``), the public
``SolveReport``, ``finish`` (validation, bound, extras: the one place a report is built from a
route's ``formulations.result.SolveResult``) and ``extract`` (the schedule of a solver's
values)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..formulations.result import SolveResult
from ..formulations.status import SolveStatus
from ..model import REL_TOL, Instance, Schedule
from .clock import Clock, Tracker

__all__ = ["SolveReport", "SolveStatus", "extract", "finish", "relative_gap", "restate"]


@dataclass(frozen=True)
class SolveReport:
    """The outcome of one offline solve (the package docstring, ``oasis_opt.offline``, for the
    meaning of each figure)."""

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
    #: the floor's algorithms in the order they ran: utility, "skipped: time budget",
    #: "skipped: optimum proven" (the lazy floor) or "failed: …"; without a time limit only
    #: the lazy floor runs (``floor.FLOOR_WITHOUT_LIMIT``), else it is empty
    floor_runs: dict[str, float | str] = field(default_factory=dict, hash=False)

    @property
    def total_utility(self) -> float:
        return self.objective

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        d["total_utility"] = d.pop("objective")
        d["history"] = [list(h) for h in self.history]
        return d


def relative_gap(bound: float, incumbent: float) -> float | None:
    """``(bound − incumbent) / |incumbent|``; 0 when both are 0 (to 1e-6), None when only the
    incumbent is."""
    if abs(incumbent) <= REL_TOL:
        return 0.0 if abs(bound) <= REL_TOL else None
    return max(0.0, (bound - incumbent) / abs(incumbent))


def finish(instance: Instance, result: SolveResult, schedule: Schedule, tracker: Tracker,
           clock: Clock, trivial: float, modeler: str, method: str, route: str,
           floor: str | None) -> tuple[Schedule, SolveReport]:
    """The one place a route's outcome becomes the public report: validate ``schedule`` (the
    result's own, or the floor's when ``floor`` names the algorithm that beat it), settle
    the bound (≤ the trivial one, ≥ the utility), and build the report and the schedule's
    extras. From ``result``: the status (raised to optimal when the bound meets the utility),
    the seconds, the solver's objective and the route's extras, which lead the schedule's."""
    from ..algorithms import InvalidScheduleError
    from ..validate import validate

    report = validate(instance, schedule)
    if not report.feasible:
        raise InvalidScheduleError(
            f"the offline solver produced an infeasible schedule on {instance.name}: "
            + "; ".join(str(v) for v in report.violations[:5]))
    utility = schedule.total_utility
    bound = max(min(tracker.bound, trivial), utility)
    tracker.update(incumbent=utility, bound=bound)
    gap = relative_gap(bound, utility)
    status = result.status
    if status is not SolveStatus.OPTIMAL and gap is not None and gap <= REL_TOL:
        status = SolveStatus.OPTIMAL  # the bound met the incumbent: proven after all
    seconds = clock.elapsed()
    solved = SolveReport(
        status=status, objective=utility, bound=bound, gap=gap,
        build_seconds=result.build_seconds, handover_seconds=result.handover_seconds,
        solve_seconds=result.solve_seconds, seconds=seconds, modeler=modeler, method=method,
        solver_objective=result.objective,
        history=tuple(tracker.history), route=route, floor=floor,
        floor_runs=dict(tracker.floor_runs))
    extras = {**result.extras, "status": status.value, "bound": bound, "gap": gap,
              "seconds": seconds, "modeler": modeler, "method": method, "route": route,
              "solver_objective": result.objective}
    if floor is not None:
        extras["floor"] = floor
    schedule = Schedule(schedule.instance, _algorithm(solved), utility, schedule.jobs, extras)
    return schedule, solved


def _algorithm(report: SolveReport) -> str:
    """The name a solve's schedule carries: ``optimal`` when proven (or the compact route's
    own incumbent), else the floor's algorithm that beat the route, else the method."""
    if report.status is SolveStatus.OPTIMAL or (report.floor is None
                                                and report.method == "compact"):
        return "optimal"
    return report.floor or report.method


def restate(schedule: Schedule, report: SolveReport, *, status: SolveStatus, bound: float,
            route: str, history: tuple[tuple[float, float | None, float], ...],
            seconds: float) -> tuple[Schedule, SolveReport]:
    """A finished solve (``finish``'s pair) with what a later look settled: its status, a
    bound (kept ≥ the utility), route, history and seconds; the schedule's name and extras
    follow (``route_race``: the better of two routes, the least of their bounds)."""
    bound = max(bound, report.objective)
    gap = relative_gap(bound, report.objective)
    report = replace(report, status=status, bound=bound, gap=gap, route=route,
                     history=history, seconds=seconds)
    extras = {**schedule.extras, "status": status.value, "bound": bound, "gap": gap,
              "seconds": seconds, "route": route, "method": report.method}
    return Schedule(schedule.instance, _algorithm(report), report.objective, schedule.jobs,
                    extras), report


def extract(prep: Any, result: SolveResult) -> Schedule:
    """The schedule of the solver's values: trimmed after completion, jobs that do not
    complete dropped (``common.schedule_from_values``); a customized model's is taken exactly
    as solved instead (``custom.as_solved``)."""
    from ..formulations.common import schedule_from_values
    if not result.values:
        return schedule_from_values(prep, {}, {})
    y, z, lw, lz = result.values
    if prep.flow_workers:  # continuous workers: whole ones from the same completions
        from ..formulations.flow import integral_workers
        y, z = integral_workers(prep, y, z, lw)
    return schedule_from_values(prep, y, z, lw, lz)


def solved_again(instance: Instance, raw: SolveResult, tracker: Tracker,
                 best: float | None, again: Callable[[], SolveResult],
                 read: Callable[[SolveResult], Schedule]) -> tuple[SolveResult, Schedule]:
    """The result and schedule of a solve that HiGHS's defaults failed (``raw``, its
    schedule ``read(raw)``), solved once more by ``again()`` carefully: tight tolerances,
    no presolve (``formulations.highs.CAREFUL``). Its callers' signs: the schedule overfills a
    server (HiGHS holds a MIP's rows to 1e-6 absolute, so demands such as 0.33333334, or
    1e-8 beside 1, sum past a capacity by more than the validator's 1e-9·C and less than
    that); HiGHS's objective is not its vector's worth, or more than its schedule earns; a
    proven optimum below an online schedule. The incumbents reported are withdrawn down to
    ``best`` (the best schedule known valid; None for none) first. The bound is the least of
    the two that no valid schedule contradicts (``credible``). Where the second schedule
    overfills too, or none came, the result has no values (the solver gives no schedule)
    and is not optimal."""
    from ..validate import overfilled

    tracker.retract(best)
    second = again()
    seconds = _seconds(raw, second)
    schedule = read(second)
    if second.values and not overfilled(instance, schedule):
        valid = max(schedule.total_utility, -math.inf if best is None else best)
        bound = _withdraw(tracker, credible((raw.bound, second.bound), valid), valid)
        return replace(second, bound=bound, **seconds), schedule
    bound = _withdraw(tracker, credible((raw.bound, second.bound), best), best)
    tracker.retract(best)  # the second solve's incumbents too
    status = SolveStatus.FEASIBLE if second.status is SolveStatus.OPTIMAL else second.status
    none = replace(second, status=status, objective=None, bound=bound, values=(), **seconds)
    return none, read(none)


#: The second opinion on an optimum proven without presolve (``second_opinion``) takes at
#: most this share of the first solve's time, and this many seconds more: where
#: ``formulations.highs.presolve_off`` (extreme numbers) a proof costs up to twice its solve.
SECOND_OPINION_SHARE = 1.0
SECOND_OPINION_SECONDS = 1.0


def second_opinion(instance: Instance, raw: SolveResult, schedule: Schedule, tracker: Tracker,
                   clock: Clock, again: Callable[[Clock], SolveResult],
                   read: Callable[[SolveResult], Schedule]) -> tuple[SolveResult, Schedule]:
    """An optimum proven without presolve (``raw``, its valid ``schedule``;
    ``formulations.highs.presolve_off``) checked by a second solve with it (``again`` on
    ``clock`` cut to ``SECOND_OPINION_SHARE`` of the first's time and
    ``SECOND_OPINION_SECONDS``; ``highs.SECOND``: the first's tolerances). HiGHS 1.16
    without presolve proved 0 "optimal" on r46354 through PuLP, where 32.44 is, and 39.91 on
    r18551 (tolerances 1e-9) through PuLP and Pyomo, where 45.01 is; with presolve it
    proves both (and at 1e-10 it
    proved 12 where 13 is on another instance, ``highs.CAREFUL``: neither is trusted
    alone). Without an online schedule to compare (``floor=()``) nothing else would see it.
    The better valid schedule is kept, with its solve's result; a bound below it is dropped
    (``credible``): the solver's error, not a relaxation's, and the tracker's least bound is
    withdrawn with it. The kept solve is optimal only where its own bound stands."""
    from ..validate import overfilled

    took = raw.build_seconds + raw.handover_seconds + raw.solve_seconds
    second = again(clock.within(SECOND_OPINION_SHARE * took + SECOND_OPINION_SECONDS))
    other = read(second)
    if second.values and not overfilled(instance, other) and \
            below(other, schedule):  # the first solve's optimum was not one
        result, schedule = second, other
    else:
        result = raw
    best = schedule.total_utility
    tracker.retract(best)  # an incumbent of the second whose schedule overfilled
    bound = _withdraw(tracker, credible((raw.bound, second.bound), best), best)
    status = result.status
    if status is SolveStatus.OPTIMAL and credible((result.bound,), best) is None:
        status = SolveStatus.FEASIBLE
    return replace(result, status=status, bound=bound, **_seconds(raw, second)), schedule


def credible(bounds: Iterable[float | None], best: float | None) -> float | None:
    """The least of ``bounds`` (None: none) that ``best``, the utility of a schedule known
    valid (None: none), does not contradict: a bound below a valid schedule's utility
    beyond the tolerance is a solver's error, not a relaxation's. None where none is left."""
    floor = -math.inf if best is None else best - REL_TOL * max(1.0, abs(best))
    return min((b for b in bounds if b is not None and b >= floor), default=None)


def _withdraw(tracker: Tracker, bound: float | None, best: float | None) -> float | None:
    """``bound`` (``credible``'s); the tracker's least bound withdrawn to it (to none, which
    ``finish`` reads as the trivial bound) where ``best`` contradicts it: one a solve
    reported before a valid schedule showed it wrong."""
    if credible((tracker.bound,), best) is None:
        tracker.retract_bound(math.inf if bound is None else bound)
    return bound


def _seconds(first: SolveResult, second: SolveResult) -> dict[str, float]:
    """The time two solves of one model took, field by field."""
    return {f: getattr(first, f) + getattr(second, f)
            for f in ("build_seconds", "handover_seconds", "solve_seconds")}


def below(better: Schedule | None, schedule: Schedule) -> bool:
    """``schedule`` earns less than ``better`` (beyond the 1e-6 relative tolerance): the
    floor, or a schedule that keeps a customized model's rows, beats the solver's."""
    return better is not None and better.total_utility > schedule.total_utility + REL_TOL * max(
        1.0, abs(better.total_utility))
