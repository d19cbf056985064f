"""The column-generation route (``formulations/colgen.py``): its inputs from outside
``formulations/`` (``colgen_inputs``), the call's deadline handed down, a guarded child
process under a time limit (``race.colgen_guarded``), and the report."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any

from ..errors import InputError, SolverError
from ..formulations.highs import quiet_stdout
from ..limits import no_room
from ..model import REL_TOL, Instance, Schedule
from . import race
from .clock import Clock, Tracker
from .plan import allocation_cells, pooled_colgen, prepare_bytes
from .report import SolveReport, SolveStatus, finish, relative_gap

# --- column generation ------------------------------------------------------------------


#: The heuristics whose schedules seed column generation: its first columns and the start of
#: its MILP (the result is never worse than the best of them).
COLGEN_SEEDS = ("oasis", "tetris", "rrh")
#: Seconds kept after a guarded column generation is stopped: validation and the report.
COLGEN_RESERVE = 0.5
#: Column generation's extras (``colgen.result``) that its report's schedule carries.
COLGEN_EXTRAS = ("lp_proven", "lp_value", "iterations", "columns", "lp_seconds",
                 "pricing_seconds", "mip_seconds", "mip_status", "bound_seconds",
                 "lns_ejections", "lns_moves")


#: The gap at which column generation stops (``colgen.solve``'s ``mip_gap``) where the
#: caller's target is tighter; the report then says ``feasible`` with its gap. Measured
#: against the caller's 1e-6 (round 29, docs/performance.md): on 1 000 Gavel jobs the
#: per-server route stops at 0.008 % after 13.6 s of a 60 s limit, and held to 1e-6 it ran to
#: the limit (54 s) without moving either side; nine shipped and hard-mix instances at 30 s
#: never reached 1e-4 either way.
COLGEN_GAP_FLOOR = 1e-4

#: Below trace scale, where the pooled route ended with this many seconds of its limit left
#: and its gap open, the per-server route runs in them, its schedule for a start.
FOLLOW_ON = True
FOLLOW_ON_SECONDS = 5.0


def _per_server_after(instance: Instance, kwargs: dict[str, Any], res: Any,
                      deadline: Any, tracker: Tracker, stop: Any, mip_gap: float) -> Any:
    """The pooled route's result, improved by the per-server route in the time it left: the
    better schedule and the lesser bound."""
    left = deadline.left()
    gap = relative_gap(max(res.bound, res.schedule.total_utility), res.schedule.total_utility)
    if left < FOLLOW_ON_SECONDS or gap is None or gap <= max(mip_gap, REL_TOL):
        return res
    # the caller's own target: the pooled route stops at the route's 1e-4 (``solve_colgen``),
    # and a follow-on held to it found the pooled schedule already within it and stopped at
    # once (1 000 Philly jobs: 20 793.68 ≤ 20 795.30 after 26 s of 300, where the per-server
    # route proves 20 793.99 optimal)
    more = {**kwargs, "bound_only": False, "time_limit": max(0.05, left - 0.5),
            "mip_gap": max(mip_gap, REL_TOL), "seeds": [*kwargs.get("seeds", ()), res.schedule]}
    try:
        if race.can_fork():
            nxt = race.colgen_guarded(instance, more, deadline, tracker, stop)
        else:
            from ..formulations import colgen
            with quiet_stdout():
                nxt = colgen.solve(instance, on_progress=lambda _s, inc, b: tracker.update(
                    inc, b), **more)
    except SolverError:  # the child failed: the pooled answer stands
        return res
    best = nxt.schedule if nxt.schedule.total_utility > res.schedule.total_utility \
        else res.schedule
    stopped = nxt.status is SolveStatus.TIME_LIMIT
    notes = [*res.extras.get("notes", ()), *nxt.extras.get("notes", ())]
    return replace(res, schedule=best, bound=min(res.bound, nxt.bound),
                   objective=best.total_utility, status=nxt.status if stopped else res.status,
                   extras={**res.extras, **({"notes": notes} if notes else {})})


def _room_for_prepare(instance: Instance) -> bool:
    """Whether the compact model's index sets (``prepare``, for its upper bound beside
    column generation's) fit beside what the process holds (``limits.no_room``,
    ``plan.prepare_bytes``): 145 MiB for 400 paper jobs, after a column generation that had
    left its own phases out at ``--max-memory 200M`` (round 42)."""
    return no_room(prepare_bytes(allocation_cells(instance)), "the compact model's bound") \
        is None


def _tell_notes(res: Any, on_round: Callable[[Any], None] | None, jobs: int) -> None:
    """The phases a guarded column generation left out for want of memory (its result's
    ``notes``, ``limits.need_room``) as progress lines, one ``colgen.Round`` each."""
    from ..formulations.colgen import Round
    if on_round is None:
        return
    x = res.extras
    inc = res.schedule.total_utility
    gap = relative_gap(max(res.bound, inc), inc)
    for note in x.get("notes", ()):
        on_round(Round(x["iterations"], 0.0, x["lp_value"], res.bound, inc,
                       math.inf if gap is None else gap, x["columns"], None,
                       jobs, note))


def colgen_inputs(instance: Instance, seeds: bool = True,
                  until: float | None = None) -> dict[str, Any]:
    """What ``colgen.solve`` takes from outside ``formulations/`` (which imports neither the
    algorithm registry nor the validator): ``seeds``, the ``COLGEN_SEEDS`` heuristics'
    schedules (OASiS without its dual certificate: only the schedule is wanted), and
    ``check``, the validator as a predicate. ``colgen.solve(instance, **colgen_inputs(instance),
    …)``; without ``seeds`` the heuristics do not run (the caller has a schedule). ``until``:
    the ``perf_counter`` instant the heuristics stop at (``limits.deadline``); those not
    done by then are left out."""
    from .. import algorithms
    from ..limits import OutOfTime, deadline
    from ..validate import validate
    made = []
    try:
        with deadline(until):
            for name in COLGEN_SEEDS if instance.num_jobs and seeds else ():
                made.append(algorithms.get(name)(instance, **({"certificate": False}
                                                             if name == "oasis" else {})))
    except OutOfTime:
        pass
    return {"seeds": made, "check": lambda schedule: validate(instance, schedule).feasible}


def trace_seeds(schedules: Sequence[Schedule], best: Schedule | None) -> list[Schedule]:
    """The floor's schedules that seed the master at trace scale: those of ``COLGEN_SEEDS``,
    in the order they ran, and the floor's best where it is another algorithm's. The other
    schedules' columns cost the bound and the incumbent: on 5 000 Philly jobs from job 60 000
    (g5k) the six schedules of the floor ended at 263 412 ≤ 271 244 (2.97 %) at 600 s and
    these at 265 001 ≤ 269 896 (1.85 %); e5k, p5k, a5k and d5k gained too
    (docs/performance.md, round 19)."""
    chosen = [s for s in schedules if s.algorithm in COLGEN_SEEDS]
    if best is not None and all(s is not best for s in chosen):
        chosen.append(best)
    return chosen


def solve_colgen(instance: Instance, clock: Clock, tracker: Tracker, mip_gap: float,
                 floor: Schedule | None, executor: Executor | None = None,
                 on_round: Callable[[Any], None] | None = None,
                 floor_schedules: Sequence[Schedule] = (), *,
                 stop: Callable[[], bool] | None = None,
                 on_start: Callable[[], None] | None = None
                 ) -> tuple[Schedule, SolveReport]:
    """Column generation (LP bound) and price-and-branch (schedule), on highspy directly:
    ``formulations/colgen.py``, given the time left, the heuristics' schedules, the validator
    and a progress callback.

    With a time limit it runs in a forked child (where one can be started), like the compact
    route's racer: every loop of column generation checks the shared deadline and every HiGHS
    run is interrupted there, but a phase that checks nothing (a root LP, a long pricing
    round on a loaded machine) must not break the contract (issue 22: a 40-job instance of
    nine server shapes had not answered after 300 s of a 100 s limit). The child sends every
    improving schedule and bound; at the deadline the parent stops it and keeps the last.

    At trace scale (``colgen.schedule_cells`` above ``colgen.SCHEDULE_CELLS``) column
    generation computes the bound only and runs in this process: its loops stop at the
    deadline between pricing chunks, and its pricing may go to ``executor`` (a process pool or
    Dask client's executor, which a forked child could not use). Below trace scale the pooled
    master is chosen by ``plan.pooled_colgen`` (many jobs on servers of three shapes or more, or
    one resource, or any shapes with under ``plan.POOLED_BELOW_SECONDS`` left), in the guarded
    child. A time-limited call seeds column
    generation with ``floor_schedules`` (every schedule the floor made, within its share of
    the limit; at trace scale ``COLGEN_SEEDS`` run first, ``floor.floor_first``, and only
    theirs and the floor's best seed the master, ``trace_seeds``) instead
    of running ``COLGEN_SEEDS`` again outside the clock: on 20 000 jobs of 10 slots those
    three took 26 s of a 5 s limit. ``on_round(colgen.Round)``
    reports each round and every ``colgen.ROUND_EVERY`` seconds of pricing.

    ``stop`` and ``on_start``: ``race.colgen_guarded``'s, for a race with the compact route
    (``route_race``); ``on_start`` is called before an unguarded run too."""
    from ..formulations import colgen
    from ..formulations.common import Options, prepare

    trace_scale = colgen.schedule_cells(instance) > colgen.SCHEDULE_CELLS
    bound_only = pooled_colgen(instance, clock.remaining())  # trace scale included
    given = list(floor_schedules) or ([floor] if floor is not None else [])
    if trace_scale:
        given = trace_seeds(given, floor)
    left = clock.remaining()  # the heuristics take at most half of it
    inputs = colgen_inputs(instance, seeds=not given,
                           until=None if left is None else time.perf_counter() + 0.5 * left)
    if given:
        inputs["seeds"] = given
    kwargs: dict[str, Any] = {"mip_gap": max(mip_gap, COLGEN_GAP_FLOOR), "bound_only": bound_only,
                              **inputs}
    left = clock.remaining()
    deadline = None
    if left is not None:
        # column generation keeps its own reserve in it (3 % and up to a second) to hand the
        # schedule back, validated after it; a second 3 % here left 35 s of 600 unused at
        # 5 000 jobs, where validation and the report take about one
        kwargs["time_limit"] = max(0.05, left - COLGEN_RESERVE)
        # the call's own deadline, less the reserve for validation and the report
        deadline = kwargs["deadline"] = clock.deadline.before(COLGEN_RESERVE)
    t0 = time.perf_counter()
    if on_round is not None:  # seconds of the whole call, as the progress points
        told = on_round
        on_round = lambda r: told(replace(r, seconds=clock.elapsed()))  # noqa: E731
    try:
        if deadline is not None and race.can_fork() and not trace_scale and executor is None:
            res = race.colgen_guarded(instance, kwargs, deadline, tracker, stop, on_start)
            _tell_notes(res, on_round, instance.num_jobs)  # the child hears no rounds
        else:
            if on_start is not None:
                on_start()
            with quiet_stdout():
                res = colgen.solve(instance, on_progress=lambda _s, inc, b: tracker.update(
                    inc, b), executor=executor, on_round=on_round, **kwargs)
    except (InputError, SolverError):
        raise
    except Exception as exc:  # a bug or solver failure on valid input
        raise SolverError(f"column generation failed on {instance.name}: "
                          f"{type(exc).__name__}: {exc}") from exc
    if bound_only and not trace_scale and FOLLOW_ON and deadline is not None:
        res = _per_server_after(instance, kwargs, res, deadline, tracker, stop, mip_gap)
    seconds = time.perf_counter() - t0
    schedule = res.schedule
    tracker.update(incumbent=schedule.total_utility, bound=res.bound)
    chosen = None
    if floor is not None and floor.total_utility > schedule.total_utility:
        schedule, chosen = floor, str(floor.algorithm)
    utility = schedule.total_utility
    gap = relative_gap(max(res.bound, utility), utility)
    if gap is not None and gap <= max(mip_gap, REL_TOL):
        status = SolveStatus.OPTIMAL
    elif res.status is SolveStatus.TIME_LIMIT:  # a limit stopped a stage (``colgen.result``)
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.FEASIBLE
    if math.isfinite(res.bound) and (trace_scale or not _room_for_prepare(instance)):
        # ``prepare`` builds the compact model's index sets: 9.3 GB on the whole Philly trace
        # for a bound column generation has already beaten
        trivial = res.bound
    else:
        trivial = prepare(instance, Options(packing="server")).upper_bound()
        if math.isfinite(res.bound):
            trivial = min(trivial, res.bound)
    res = replace(res, status=status, objective=utility, solve_seconds=seconds,
                  extras={**{k: res.extras[k] for k in COLGEN_EXTRAS},
                          "bound_only": bound_only,
                          **{k: res.extras[k] for k in ("notes",) if k in res.extras}})
    return finish(instance, res, schedule, tracker, clock, trivial, "highspy", "colgen",
                  "colgen", chosen)
