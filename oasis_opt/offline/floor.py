"""The floor of a time-limited solve: the best schedule of the online algorithms (SPEC §6: the
answer is never worse than the best online algorithm's), which is also HiGHS's MIP start and
the loose-instance rule's input (``plan.route_options``).

The algorithms run cheapest first within a share of the time limit (``floor_time_share``).
On the compact route with the built-in algorithms the floor is *lazy* (issue 22, round 7):
the three cheap algorithms of ``FLOOR_FIRST`` run before the solve, the rest only if the
solve does not prove the optimum. A proven optimum (gap 0) is at least every feasible
schedule's utility, every online algorithm's included, so the promise holds either way; on
sub-second instances the whole floor was a third of the call (loose-s0: 0.065 of 0.19 s).

A caller that has already run some of the algorithms hands their schedules over
(``solve(floor_schedules={name: schedule})``, ``given_schedules``): each is checked by the
validator and joins the floor as that algorithm's run, and no algorithm so named runs again
(``ratio.compare`` runs the algorithms first and gives the solve the time they left).
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from ..errors import InputError
from ..limits import OutOfTime, deadline
from ..model import REL_TOL, Instance, Schedule
from .clock import Clock, Tracker
from .report import SolveReport, SolveStatus, below, relative_gap, restate

#: What each built-in algorithm costs in the floor, relative to the others (CPU seconds on
#: the whole Philly trace, docs/performance.md; OASiS's 138 s and oasis-adaptive's 130 s less
#: their certificate, which the floor does not compute: 45 % of OASiS's time on e5k); the
#: floor runs them cheapest first so that a budget cut leaves out the dear ones, and the lazy
#: floor's reserve is estimated from them.
FLOOR_COSTS = {"fifo": 23.0, "rrh": 38.0, "tetris": 39.0, "oasis-adaptive": 71.0,
               "oasis": 76.0, "drf": 354.0}
#: What the floor passes to a built-in algorithm: only its schedule is wanted, so OASiS and
#: oasis-adaptive run without their dual certificate (``D_cert``, one more subroutine call per
#: job at the end; the same schedule). On 5 000 Philly jobs in 5-minute slots (e5k) the
#: certificate was 17 of OASiS's 33 s.
FLOOR_PARAMS: dict[str, dict[str, object]] = {"oasis": {"certificate": False},
                                              "oasis-adaptive": {"certificate": False}}
#: The built-in algorithms from the cheapest to the dearest.
FLOOR_COST_ORDER = tuple(sorted(FLOOR_COSTS, key=FLOOR_COSTS.__getitem__))
#: The share of the time limit the floor may spend: the next algorithm starts only while the
#: floor's seconds plus twice the last run's stay within it (the runs grow by at most about
#: 2.5× from one to the next in ``FLOOR_COST_ORDER``).
FLOOR_SHARE = 0.25
#: At trace scale (column generation's ``schedule_cells`` above ``SCHEDULE_CELLS``: its
#: bound-only route) the share is this instead: the route's schedule beats the floor's best by
#: far (7 % on 5 000 Philly jobs), while the whole floor took 33 s of a 600 s limit on a quiet
#: machine and 90–120 s under load (docs/performance.md, "Round 6"). It is the route's
#: master's seeds that matter there (``floor_first``): a tenth lets OASiS, Tetris and RRH
#: (27 s on 5 000 Philly jobs) all run at 600 s; at a twentieth Tetris was left out after
#: OASiS on a loaded machine.
FLOOR_TRACE_SHARE = 0.1
#: ... but never less than this many seconds: SPEC §6 allows 10 s past the limit, and a short
#: limit on a small instance keeps every algorithm's schedule (all take well under a second).
FLOOR_MIN_SECONDS = 2.0
#: The seconds of the floor of a solve without a time limit (the lazy floor,
#: ``FLOOR_WITHOUT_LIMIT``: a MIP start and the loose rule's input, never the answer, which is
#: the proven optimum), its runs stopped there like a time-limited floor's. On the instances
#: the package is measured on the floor takes well under a second; one job of 10⁶ workers of
#: 10⁻⁹ GPU kept the plain ``solve`` 12.7 s in Tetris's one-at-a-time placements where the
#: solve alone takes 0.27 s (an outside audit), and DRF and Tetris take up to 2·10⁷ of them.
FLOOR_UNTIMED_SECONDS = 5.0
#: The lazy floor's first algorithms (issue 22, round 7). Over the benchmark's 59 instances
#: (seven generated families seeds 0–5, three trace slices, the fourteen hard-mix ones) Tetris
#: gave the floor on 32 and RRH on 14, together in about a fifth of the six's time; where RRH
#: was the best, Tetris's start alone cost HiGHS up to 1.6x (ps-heavy-s1 3.75 against 2.30
#: CPU s, uniform-1r-s1 0.71 against 0.62), the pair's start matched the full floor's. The
#: loose rule (``plan.LOOSE_FLOOR_SHARE``) picked the same route from the pair on all 59.
#: FIFO, the cheapest, is best on none of them, but on a constructed tiny loose instance
#: (tests/test_route_rule.py) it is the one that reaches the loose share: it runs too.
FLOOR_FIRST = ("fifo", "rrh", "tetris")
#: The lazy floor runs without a time limit too (issue 22, round 11): the compact route's
#: MIP start and the loose rule (``plan.LOOSE_FLOOR_SHARE``) came only with a limit, so
#: ``oasis-opt solve`` without one took another route (loose-s0: 0.63 s against 0.18 s
#: with ``--time-limit``, the comparator 0.06 s; docs/offline-journal.md, round 11). Only
#: where the floor would be lazy (the compact route, the built-in algorithms, no
#: ``customize``); its rest runs after the solve unless the optimum is proven, as with a
#: limit.
FLOOR_WITHOUT_LIMIT = True
#: The reserve kept for the rest of a lazy floor: its estimated seconds (the first ones' time
#: scaled by ``FLOOR_COSTS``) times this margin.
FLOOR_REST_MARGIN = 1.5
#: ``floor_runs``' entry for an algorithm the lazy floor did not run: the solve proved the
#: optimum first (it is ≥ every online schedule).
NOT_NEEDED = "skipped: optimum proven"
#: ``floor_runs``' entry for an algorithm the floor's budget left out (``Floor.run``); the
#: time a route leaves unused gives it a second chance (``Floor.second_chance``).
SKIPPED = "skipped: time budget"
#: The second chance may run until ``SECOND_CHANCE_FACTOR·S + SECOND_CHANCE_SECONDS`` from
#: the solve's start: within SPEC §6's promise (1.1·S + 10 s), and before the command line's
#: last resort wakes (1.1·S + 5 s, ``lifeline.py``), so that the answer and its file still go
#: out in time. An instance of 2 000 000 slots at ``--time-limit 5``: the floor's 2 s went to a
#: partial FIFO, the route ended at 4.6 s, and RRH's better schedule takes 8 s (an outside
#: audit).
SECOND_CHANCE_FACTOR = 1.1
SECOND_CHANCE_SECONDS = 4.0


def floor_names(floor: Sequence[str] | None) -> tuple[str, ...]:
    """The floor's algorithms: the built-in ones (``algorithms.REGISTRY``) unless named; a
    user's algorithm, slow or not, never slows every solve unasked."""
    from .. import algorithms
    if floor is None:
        return tuple(algorithms.REGISTRY)
    if isinstance(floor, str):
        floor = [floor]
    if not isinstance(floor, Iterable):
        raise InputError("floor", f"expected algorithm names, got {type(floor).__name__}")
    floor = list(floor)
    for name in floor:
        if not isinstance(name, str):
            raise InputError("floor", f"expected algorithm names, got {type(name).__name__}")
        try:
            algorithms.check(name)  # any name the registry resolves, module:function too
        except InputError as err:
            raise InputError("floor", err.message) from None
    return tuple(floor)


def given_schedules(instance: Instance, schedules: Mapping[str, Schedule] | None
                    ) -> dict[str, Schedule]:
    """``solve``'s ``floor_schedules``, checked: ``{name: schedule}`` of ``instance``, each
    passed by the validator (``validate.validate``, the one that checks every schedule),
    or ``InputError`` at ``floor_schedules.NAME`` naming its first broken rules."""
    from ..validate import validate
    if schedules is None:
        return {}
    if not isinstance(schedules, Mapping):
        raise InputError("floor_schedules", "expected {algorithm name: Schedule}, got "
                                            f"{type(schedules).__name__}")
    out: dict[str, Schedule] = {}
    for name, schedule in schedules.items():
        place = f"floor_schedules.{name}"
        if not isinstance(name, str) or not name:
            raise InputError("floor_schedules", f"expected algorithm names, got {name!r}")
        if not isinstance(schedule, Schedule):
            raise InputError(place, f"expected a Schedule, got {type(schedule).__name__}")
        try:
            report = validate(instance, schedule)
        except InputError as err:  # an unknown job or server
            raise InputError(f"{place}.{err.place}" if err.place else place,
                             err.message) from None
        if not report.feasible:
            raise InputError(place, "breaks a rule of the model: "
                             + "; ".join(str(v) for v in report.violations[:5]))
        out[name] = schedule
    return out


def _seconds_of(schedule: Schedule) -> float | None:
    """The seconds ``algorithms.run`` recorded for a schedule handed over, if it did."""
    s = schedule.extras.get("seconds")
    ok = isinstance(s, numbers.Real) and not isinstance(s, bool) and math.isfinite(s) and s >= 0
    return float(s) if ok else None


def floor_time_share(instance: Instance) -> float:
    """The share of the time limit the floor may spend on ``instance``: ``FLOOR_SHARE``, or
    ``FLOOR_TRACE_SHARE`` at trace scale."""
    return FLOOR_TRACE_SHARE if _trace_scale(instance) else FLOOR_SHARE


def floor_first(instance: Instance) -> tuple[str, ...]:
    """The algorithms the floor runs first on ``instance``, before the cheapest: at trace
    scale the seeds of column generation's master (``colgen_route.COLGEN_SEEDS``: OASiS,
    Tetris, RRH), which is seeded with their schedules and the floor's best
    (``colgen_route.trace_seeds``); none elsewhere. On 5 000 Philly jobs in 5-minute slots
    (e5k) the first restricted LP was 553 877 seeded with Tetris's schedule alone (the
    floor's best, cheapest first), 567 494 with OASiS's and 568 338 with the three; at 600 s
    on one core the bound ended at 581 130 with Tetris's alone, 584 651 with OASiS's alone
    and 579 395 with the three (docs/performance.md, rounds 18 and 19)."""
    from .colgen_route import COLGEN_SEEDS
    return COLGEN_SEEDS if _trace_scale(instance) else ()


def _trace_scale(instance: Instance) -> bool:
    """Column generation's bound-only route (``schedule_cells`` above ``SCHEDULE_CELLS``)."""
    from ..formulations.colgen_scale import SCHEDULE_CELLS, schedule_cells
    return schedule_cells(instance) > SCHEDULE_CELLS


class Floor:
    """The online algorithms ``names`` of one solve, run in one go (``run()``) or in two
    parts (``run(FLOOR_FIRST)``, then ``settle``). Each schedule is validated by
    ``algorithms.run``; the best one wins, ties to the one named first. With a ``clock`` they
    run cheapest first (``FLOOR_COST_ORDER``; those of ``first`` among ``names`` before all,
    in that order), and one starts only while the floor stays
    within ``share`` of the time limit (at least ``FLOOR_MIN_SECONDS``) by the estimate
    above; the first always starts. Each run stops (``limits.deadline``: ``OutOfTime``) at
    the floor's budget's end or half of the call's time left, the later (``_stop_at``); its
    decisions so far join the floor (``_keep_partial``), and of the rest only the built-ins
    cheaper than it by ``FLOOR_COSTS`` still run, each stopped the same way ("skipped: time
    budget" for the others). An algorithm that
    fails (its bug, or its own size guard) is left out: the floor is a safety net for the
    exact answer, not a test of the algorithms (their own tests are). What each one gave,
    or why nothing, goes to ``tracker.floor_runs`` (the report's ``floor_runs``). With
    ``report`` the best utility goes to the tracker as soon as it is known.

    ``given``: schedules already made (``given_schedules``, validated), by algorithm name:
    they count as runs of the floor (``floor_runs`` their utility; ties after the named
    algorithms), an algorithm of ``names`` among them does not run, and the seconds
    ``algorithms.run`` recorded on the built-in ones (``FLOOR_COSTS``) enter ``reserve``'s
    estimate as if they had run here (they spent none of this call's budget)."""

    def __init__(self, instance: Instance, tracker: Tracker, names: Sequence[str],
                 clock: Clock | None = None, share: float = FLOOR_SHARE,
                 report: bool = True, given: Mapping[str, Schedule] | None = None,
                 first: Sequence[str] = ()) -> None:
        self.instance, self.tracker, self.clock, self.report = instance, tracker, clock, report
        given = dict(given or {})
        self.rank = {name: i for i, name in enumerate([*names, *(n for n in given
                                                                 if n not in names)])}
        self.order = [n for n in first if n in names] + sorted(
            (n for n in names if n not in first), key=self._cost_rank)
        self.budget = None if clock is None else FLOOR_UNTIMED_SECONDS \
            if clock.limit is None else max(share * clock.limit, FLOOR_MIN_SECONDS)
        self.ran: list[tuple[str, Schedule]] = []
        self.offered = 0  # how many of ``ran`` the tracker was offered (``Tracker.offer``)
        self.spent = 0.0  # seconds the floor's runs have taken
        self.last = 0.0  # seconds of the last run
        #: (name, seconds) of every run timed: the floor's own and the given ones that say
        self.timed: list[tuple[str, float]] = []
        for name in sorted(given, key=self._cost_rank):
            self.ran.append((name, given[name]))
            tracker.floor_runs[name] = given[name].total_utility
            seconds = _seconds_of(given[name])
            # only a built-in's seconds say what the pending built-ins will take: a user's
            # scheduler of 3 s made the reserve take the whole limit from the solve
            if seconds is not None and name in FLOOR_COSTS:
                self.timed.append((name, seconds))

    def _cost_rank(self, name: str) -> tuple[int, int]:
        """Cheapest first (``FLOOR_COST_ORDER``; others after it), then as named."""
        return (FLOOR_COST_ORDER.index(name) if name in FLOOR_COST_ORDER
                else len(FLOOR_COST_ORDER), self.rank[name])

    def _elapsed(self) -> float:
        return self.clock.elapsed() if self.clock is not None else 0.0

    def pending(self) -> list[str]:
        """The algorithms not yet run or skipped, cheapest first."""
        return [n for n in self.order if n not in self.tracker.floor_runs]

    def run(self, names: Sequence[str] | None = None, budget: float | None = None, *,
            shared: bool = True, until: Callable[[], bool] | None = None
            ) -> Schedule | None:
        """Run the pending algorithms (those of ``names`` only, if given) within the floor's
        budget (``shared``: its share of the limit) and ``budget`` seconds from now, if
        given; the best schedule so far. ``until()`` true leaves the rest pending: the
        solve's prober has proven the optimum (``compact.early_prober``)."""
        todo = [n for n in self.pending() if names is None or n in names]
        left = None if self.budget is None or not shared else self.budget - self.spent
        if budget is not None:
            left = budget if left is None else min(left, budget)
        start = self._elapsed()
        runs = self.tracker.floor_runs  # what each algorithm gave, or why nothing
        from .. import algorithms
        #: after a run the budget stopped, the dearest that may still run (``FLOOR_COSTS``)
        cheaper_than: float | None = None
        for k, name in enumerate(todo):
            if until is not None and until():
                break  # (``settle`` then says they were not needed)
            if cheaper_than is not None:
                if not FLOOR_COSTS.get(name, math.inf) < cheaper_than:
                    runs[name] = SKIPPED
                    continue
            elif self.ran and left is not None and \
                    self._elapsed() - start + self._next_seconds(name) > left:
                runs.update({n: SKIPPED for n in todo[k:]})
                break
            t0 = self._elapsed()
            try:
                with deadline(self._stop_at(start, left)):
                    self.ran.append((name, algorithms.run(name, self.instance,
                                                         **FLOOR_PARAMS.get(name, {}))))
                runs[name] = self.ran[-1][1].total_utility
            except OutOfTime as err:  # its placement loops or slots passed the floor's time
                runs[name] = SKIPPED
                self._keep_partial(name, err)
                # the cheaper built-ins still run, each stopped the same way: at trace scale
                # OASiS goes first and a short limit stopped it, and FIFO's 2.6 s on 20 000
                # Philly jobs was skipped with the rest (the answer: the empty schedule)
                cost = FLOOR_COSTS.get(name, -math.inf)
                cheaper_than = cost if cheaper_than is None else min(cheaper_than, cost)
                continue
            except Exception as err:  # noqa: BLE001 — see the class docstring
                runs[name] = f"failed: {str(err)[:300] or type(err).__name__}"
                continue
            finally:
                self.last = self._elapsed() - t0
                self.timed.append((name, self.last))
        self.spent += self._elapsed() - start
        best = self.best()
        if best is not None and self.report:
            self.tracker.update(incumbent=best.total_utility)
        if self.report:  # every schedule so far, the given ones too, once
            for _, schedule in self.ran[self.offered:]:
                self.tracker.offer(schedule)
            self.offered = len(self.ran)
        return best

    def _keep_partial(self, name: str, err: OutOfTime) -> None:
        """A run stopped by the time budget: its decisions so far (``OutOfTime.partial``),
        validated, join the floor as ``name``'s run, and ``floor_runs`` says so ("partial:
        stopped by the time limit in slot 900 of 2615"). On the whole Philly trace with
        ``--time-limit 60`` no algorithm finished, and the answer was the empty schedule."""
        if err.partial is None:
            return
        from ..validate import validate
        try:
            schedule = err.partial()
            feasible = validate(self.instance, schedule).feasible
        except Exception:  # noqa: BLE001 — as a failing run: left out
            return
        if feasible and schedule.completed:  # (one that finished nothing adds nothing)
            self.ran.append((name, schedule))
            self.tracker.floor_runs[name] = \
                f"partial: {schedule.extras.get('partial', 'stopped by the time limit')}"

    def _stop_at(self, start: float, left: float | None) -> float | None:
        """The ``perf_counter`` instant a run of the floor stops at (``limits.deadline``):
        the floor's budget's end (``left`` seconds from ``start``, on the clock), or half of
        the call's time left where that is later. The estimates decide which runs start (at
        trace scale they let OASiS, Tetris and RRH all finish); this only keeps a run that
        places a million workers one by one from taking the whole limit. None without a
        budget (no clock); without a time limit, the budget's end (``FLOOR_UNTIMED_SECONDS``)."""
        if self.clock is None or left is None:
            return None
        at = self.clock.start + start + left
        remaining = self.clock.remaining()
        return at if remaining is None else max(at, time.perf_counter() + 0.5 * remaining)

    def _next_seconds(self, name: str) -> float:
        """What ``name`` is expected to take after the last run: twice the last run's
        seconds (the runs grow by at most about 2.5× from one to the next in
        ``FLOOR_COST_ORDER``), or the last run's scaled by ``FLOOR_COSTS`` where ``name`` is
        known to be the cheaper of the two (``floor_first``'s OASiS, then Tetris: on a loaded
        machine twice OASiS's 20 s left Tetris's 6 s out of a 60 s budget)."""
        last = self.timed[-1][0] if self.timed else None
        if last in FLOOR_COSTS and name in FLOOR_COSTS and FLOOR_COSTS[name] < FLOOR_COSTS[last]:
            return self.last * FLOOR_COSTS[name] / FLOOR_COSTS[last]
        return 2.0 * self.last

    def schedules(self) -> list[Schedule]:
        """Every schedule the floor has made, in the order they ran."""
        return [schedule for _, schedule in self.ran]

    def best(self) -> Schedule | None:
        """The best schedule of those run (ties to the one named first)."""
        return max(self.ran, key=lambda r: (r[1].total_utility, -self.rank[r[0]]),
                   default=(None, None))[1]

    def reserve(self) -> float:
        """Seconds to keep for the pending algorithms: the timed runs so far (given ones
        included) scaled by ``FLOOR_COSTS`` (an unknown algorithm costs as the dearest) times
        ``FLOOR_REST_MARGIN``, within what is left of the floor's budget."""
        todo = self.pending()
        if not todo:
            return 0.0
        dearest = max(FLOOR_COSTS.values())
        done = sum(FLOOR_COSTS.get(n, dearest) for n, _ in self.timed) or dearest
        want = FLOOR_REST_MARGIN * sum(s for _, s in self.timed) * sum(
            FLOOR_COSTS.get(n, dearest) for n in todo) / done
        return want if self.budget is None else max(0.0, min(want, self.budget - self.spent))

    def second_chance(self) -> Schedule | None:
        """After a route that ended unproven: the algorithms the floor's budget left out
        (``SKIPPED``) run in the time left until ``SECOND_CHANCE_FACTOR·S +
        SECOND_CHANCE_SECONDS``, the floor's share no longer held back for the route
        (cheapest first, each stopped at that instant as in ``run``); the best schedule so
        far. Audit 2's 3 000 unit jobs at
        ``--time-limit 20``: column generation ended at 4.9 s with OASiS's 143 442.597
        (OASiS, run first at trace scale, had spent the floor's 2 s) where FIFO's schedule,
        skipped, earns 143 442.862."""
        if self.clock is None or self.clock.limit is None:
            return self.best()
        left = self.clock.start + SECOND_CHANCE_FACTOR * self.clock.limit \
            + SECOND_CHANCE_SECONDS - time.perf_counter()
        skipped = [n for n in self.order if self.tracker.floor_runs.get(n) == SKIPPED]
        if not skipped or left <= 0:
            return self.best()
        for name in skipped:
            del self.tracker.floor_runs[name]
        return self.run(skipped, budget=left, shared=False)

    def settle(self, proven: bool) -> Schedule | None:
        """The floor after the solve: where it proved the optimum the pending algorithms are
        not needed (``NOT_NEEDED``); else they run within what is left of the time limit
        (the reserve kept for them), or of the ``FLOOR_MIN_SECONDS`` every floor may take
        if that is more (as the floor that runs in one go: a limit too short for the solve
        still gets every algorithm's schedule on a small instance)."""
        if proven:
            self.tracker.floor_runs.update({n: NOT_NEEDED for n in self.pending()})
            return self.best()
        left = self.clock.remaining() if self.clock is not None else None
        return self.run(budget=None if left is None
                        else max(left, FLOOR_MIN_SECONDS - self.spent))


def after_route(online: Floor, schedule: Schedule, report: SolveReport, clock: Clock,
                mip_gap: float) -> tuple[Schedule, SolveReport]:
    """A route's answer (``finish``'s pair) after the floor's second chance: unproven, the
    algorithms the floor's budget left out run in the time the route did not use
    (``Floor.second_chance``), and the floor's best is the answer where it earns more
    (``report.below``): SPEC §6, never worse than the best online algorithm. A proven answer
    is returned as it is."""
    if report.status is SolveStatus.OPTIMAL:
        return schedule, report
    best = online.second_chance()
    report = replace(report, floor_runs=dict(online.tracker.floor_runs))
    if best is None or not below(best, schedule):
        return schedule, replace(report, seconds=clock.elapsed())
    utility, name = best.total_utility, str(best.algorithm)
    gap = relative_gap(max(report.bound, utility), utility)
    status = SolveStatus.OPTIMAL if gap is not None and gap <= max(mip_gap, REL_TOL) \
        else report.status
    ours = Schedule(best.instance, name, utility, best.jobs, {**schedule.extras, "floor": name})
    return restate(ours, replace(report, objective=utility, floor=name), status=status,
                   bound=report.bound, route=report.route,
                   history=tuple(online.tracker.history), seconds=clock.elapsed())
