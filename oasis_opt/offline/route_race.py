"""The compact MILP and column generation side by side (issue 22, item 2: race cheaply where
the choice is unclear). Under a time limit, a compact model too large for the compact route
alone but small enough that its root LP may finish (``plan.routes_race``) is solved by both
routes at once, each in its own child process on its own core: the better schedule is the
answer and the least of the two bounds its bound (each bounds the same optimum). Either
route's proof stops the other, and so does the pair closing the gap together (one's
incumbent meeting the other's bound).

Column generation runs from a thread of this process that only waits on its child
(``race.colgen_guarded``); the compact route runs from the calling thread, one HiGHS racer
in a child (``race.solve_portfolio``). The two children are forked one after the other, never
at once. Both report to one ``Tracker``, so progress lines interleave in time order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..model import REL_TOL, Instance, Schedule
from .clock import Clock, Tracker
from .colgen_route import solve_colgen
from .compact import solve_compact
from .report import SolveReport, SolveStatus, relative_gap, restate

#: Seconds the compact route waits for column generation's child to have started (it forks
#: after the floor's schedules are handed over: well under a second).
FORK_WAIT = 5.0


def solve_race(instance: Instance, clock: Clock, tracker: Tracker, mip_gap: float,
               floor: Schedule | None, floor_schedules: Sequence[Schedule],
               prepared: Any) -> tuple[Schedule, SolveReport]:
    """Both routes on ``instance`` until the deadline, a proof, or the two closing the gap
    (to ``mip_gap``); ``floor`` and ``floor_schedules`` as for ``solve_colgen`` (the
    compact route's MIP start is ``floor``), ``prepared`` the compact model
    (``compact.sized_route``). The report's route is ``COMPACT+colgen`` (``COMPACT`` the
    compact route's own, e.g. ``compact/highspy/plain``) and its method the winner's."""
    stopped = threading.Event()
    forked = threading.Event()
    tolerance = max(mip_gap, REL_TOL)

    def stop() -> bool:
        if stopped.is_set():
            return True
        gap = None if tracker.incumbent is None else relative_gap(tracker.bound,
                                                                   tracker.incumbent)
        return gap is not None and gap <= tolerance

    out: dict[str, Any] = {}

    def colgen_side() -> None:
        try:
            out["colgen"] = solve_colgen(instance, clock, tracker, mip_gap, floor,
                                         floor_schedules=floor_schedules, stop=stop,
                                         on_start=forked.set)
            if out["colgen"][1].status is SolveStatus.OPTIMAL:
                stopped.set()
        except BaseException as exc:  # raised in the calling thread, which stops now
            out["error"] = exc
            stopped.set()
        finally:
            forked.set()

    side = threading.Thread(target=colgen_side, name="oasis-colgen", daemon=True)
    side.start()
    forked.wait(FORK_WAIT)
    try:
        compact = solve_compact(instance, "auto", clock, tracker, mip_gap, None, "highs",
                                floor, None, prepared, stop=stop)
    except BaseException:
        stopped.set()  # the compact route failed (or was interrupted): so does the other
        side.join()
        raise
    if compact[1].status is SolveStatus.OPTIMAL:
        stopped.set()
    side.join()
    if "error" in out:
        raise out["error"]
    return _merge(compact, out["colgen"], clock, tracker, mip_gap)


def _merge(compact: tuple[Schedule, SolveReport], colgen: tuple[Schedule, SolveReport],
           clock: Clock, tracker: Tracker, mip_gap: float) -> tuple[Schedule, SolveReport]:
    """The better of the two answers (the compact route's on a tie), with the least bound;
    optimal where either route proved it or the pair's gap is within ``mip_gap``."""
    (c_schedule, c_report), (g_schedule, g_report) = compact, colgen
    better = g_report.objective > c_report.objective + REL_TOL * max(
        1.0, abs(g_report.objective))
    schedule, report = (g_schedule, g_report) if better else (c_schedule, c_report)
    # each route's ``finish`` has told the tracker its answer already; restate keeps the
    # bound ≥ the utility
    bound = min(c_report.bound, g_report.bound)
    gap = relative_gap(max(bound, report.objective), report.objective)
    statuses = {c_report.status, g_report.status}
    if SolveStatus.OPTIMAL in statuses or (gap is not None and gap <= max(mip_gap, REL_TOL)):
        status = SolveStatus.OPTIMAL
    elif SolveStatus.TIME_LIMIT in statuses:
        status = SolveStatus.TIME_LIMIT
    else:
        status = report.status
    return restate(schedule, report, status=status, bound=bound,
                   route=f"{c_report.route}+colgen", history=tuple(tracker.history),
                   seconds=clock.elapsed())
