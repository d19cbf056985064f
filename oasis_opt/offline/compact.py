"""The compact route: prepare the time-indexed MILP, plan it (``plan.plan_route``), hand it
to one back-end, a race or another MILP solver, and settle the report against the floor."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from ..errors import SolverError
from ..formulations.common import Stopped
from ..formulations.highs import SECOND, presolve_off
from ..formulations.result import SolveResult
from ..model import REL_TOL, Instance, Schedule
from . import backends, race
from .clock import Clock, Tracker
from .floor import Floor
from .plan import (
    BUILD_SECONDS_PER_NNZ,
    PREPARE_SECONDS_PER_CELL,
    RACE_DELAY,
    SHARE_INCUMBENTS,
    allocation_cells,
    compact_in_time,
    cores_free,
    guard_wanted,
    loose_rule,
    plan_route,
    portfolio_wanted,
    prepare_bytes,
    race_at_home,
    racers,
    route_options,
    routes_race,
    settle_fallback,
    solve_bytes,
)
from .report import (
    SolveReport,
    SolveStatus,
    below,
    extract,
    finish,
    second_opinion,
    solved_again,
)


def solve_compact(instance: Instance, modeler: str, clock: Clock, tracker: Tracker,
                  mip_gap: float, options: Any, solver: str, floor: Schedule | None,
                  lazy: Floor | None = None, prepared: Any = None, *,
                  stop: Callable[[], bool] | None = None, prober: race.Prober | None = None
                  ) -> tuple[Schedule, SolveReport]:
    """The compact route. ``floor``: the best online schedule so far (the MIP start, the
    answer if the solve's is worse). With ``lazy`` (``floor.Floor`` of which only
    ``FLOOR_FIRST`` ran) the solve keeps the time the rest needs (``Floor.reserve``), and
    the rest runs only if the solve does not prove the optimum. ``prepared``:
    ``route_prep``'s model made before the floor (``sized_route``). ``stop``: the route
    shares the machine with column generation (``route_race``): HiGHS runs alone (no
    portfolio) in a child process, stopped once ``stop()`` is true. ``prober``
    (``early_prober``): the plain model in a child since the solve's start; its proof, as
    soon as it is known, is the answer (the patterns' count, planning and solving stop
    there), and it stands for the route's own probe of that model (``probe_model``) but
    before a race in children, where it goes on beside that probe; where the route races at
    home with its partner held, it goes on as the probe beside the racer at home; where that
    partner would be its own model started at once, it is that partner and no race is
    forked (``_prober_partner``); where the planned model solves alone it goes on past its
    window (``keep_prober``); before any other race it ends unless it has proven."""
    from ..formulations.common import PLAIN, prepare
    from ..limits import check_allocation
    from ..validate import overfilled

    t0 = time.perf_counter()
    # the solve's clock: the call's, less the lazy floor's reserve
    solving = clock if lazy is None else clock.reserving(lazy.reserve())
    cells = check_index_sets(instance)
    left = solving.remaining()
    if left is not None and cells * PREPARE_SECONDS_PER_CELL > 0.5 * left:
        # not even the index sets fit in the time: the floor is the answer
        return _unprepared(instance, clock, tracker, floor, lazy)
    probed = _probed(prober, instance, tracker)
    if not probed:
        try:  # the prober's proof, once it is in, stops the patterns' count
            prep = route_prep(instance, options, floor, prepared,
                              stop=None if prober is None or not PREP_STOPS else prober.proven)
        except Stopped:
            probed = _probed(prober, instance, tracker)
    if probed:
        prep = probed[1]
    if not prep.active:  # no job can earn anything: the empty schedule is optimal
        raw = SolveResult(SolveStatus.OPTIMAL, 0.0, 0.0,
                          solver="highspy" if modeler == "auto" else modeler)
    elif probed:
        raw = probed[0]  # the plain model proved in the prober before the route was planned
    else:
        prep, medium = plan_route(prep, modeler, solving, solver)
        size = prep.model_size()
        check_allocation("instance", solve_bytes(size["nonzeros"], medium),
                         f"the compact MILP ({size['columns']} columns, {size['rows']} rows, "
                         f"{size['nonzeros']} nonzeros)")
        tracker.update(bound=prep.upper_bound())
        left = solving.remaining()
        skipped = left is not None and size["nonzeros"] * BUILD_SECONDS_PER_NNZ[
            medium if medium in BUILD_SECONDS_PER_NNZ else "pyomo"] > 0.5 * left
        # where the route races, the prober (which has had the other core, idle at the
        # start) goes on as the probe beside a racer at home whose partner is held
        # (``race.solve_portfolio``'s ``prober``), and beside the plain probe that comes
        # before a race in children (``plain_probe``); where a race at home would start
        # its own model at once as the partner, it is that partner and the planned model
        # solves alone (``_prober_partner``); before any other race that starts its partner
        # at once, it ends here unless it has proven. Elsewhere it goes on beside the
        # planned model, which stops at its proof (``halt``)
        idle, beside, first, partner = prober is not None, False, False, False
        if prober is not None and not skipped and portfolio_wanted(
                prep, modeler, options, medium, solving.remaining(), idle):
            probed = _probed(prober, instance, tracker)
            beside = not probed and _held_partner(prep)
            # a race in children comes after the plain probe (``plain_probe``): the prober
            # goes on beside that probe, and ends before the race
            first = not probed and not beside and PROBER_BESIDE_PROBE and \
                not race_at_home(prep)
            # a race at home whose partner, started at once, is the prober's own model
            partner = not probed and not beside and not first and _prober_partner(prep)
            if not (beside or first or partner):
                prober.close()
                prober = None
        plain = None if skipped or stop is not None or probed or (
            prober is not None and not first) else \
            probe_model(prep, modeler, options, medium, solver, solving)
        if first and plain is None:  # no probe to go on beside: the race takes both cores
            prober.close()
            prober, first = None, False
        halt = None if prober is None else prober.proven
        # racing at home, the probe runs beside the first racer in the partner's wait
        # (``probe_model``), else first
        racing = PROBE_BESIDE and RACE_DELAY > 0 and plain is not None and \
            race_at_home(prep) and portfolio_wanted(prep, modeler, options, medium,
                                                    solving.remaining(), idle)
        if skipped:
            # even the cheapest build would not leave HiGHS time: the floor is the answer
            raw = SolveResult(SolveStatus.TIME_LIMIT, solver="skipped")
        elif probed or (probed := _probed(prober, instance, tracker)):
            raw, prep = probed
        elif plain is not None and not racing and (
                probed := plain_probe(plain, solving, tracker, mip_gap, floor, halt)
                or _probed(prober, instance, tracker)):
            raw, prep = probed  # PLAIN (or the prober) proved within ``PROBE_SECONDS``
        elif solver != "highs":
            from .. import solvers
            raw = solvers.solve(solver, prep, backends.highs_budget(solving, prep), mip_gap,
                                backends.THREADS)
            if raw.status is SolveStatus.ERROR:
                raise SolverError(f"{solver} failed on {instance.name}")
        elif stop is not None and medium == "highspy" and race.can_fork():
            raw = race.solve_portfolio([prep], [0], solving, tracker, mip_gap, floor,
                                       stop=stop)
        elif not partner and (racing or beside or portfolio_wanted(
                prep, modeler, options, medium, solving.remaining(), idle)):
            if first:  # the race takes both cores
                prober.close()
            pairs = racers(prep)
            # the seed partner is the planned model itself; another is prepared in its
            # racer's process once it starts (and here only if it wins)
            variants = [prep] + [prep if o == prep.options else partial(prepare, instance, o)
                                 for o, _ in pairs[1:]]
            # where the partner is the probe's model (PLAIN at seed 0, beside the server
            # model), it starts at once instead of after a probe of its own model
            at_once = racing and pairs[1] == (PLAIN, 0)
            raw = race.solve_portfolio(
                variants, [s for _, s in pairs], solving, tracker, mip_gap, floor,
                [0.0] + [0.0 if at_once else RACE_DELAY] * (len(pairs) - 1),
                share=SHARE_INCUMBENTS, home=race_at_home(prep),
                probe=(plain, PROBE_SECONDS) if racing and not at_once else None,
                prober=prober if beside else None)
            winner = raw.extras["racer"]
            prep = race.prepared(variants[winner]) if winner < len(variants) else \
                plain if plain is not None else prober_model(instance)  # the probe's
        elif guard_wanted(prep, medium, solving.remaining()):
            # one racer in a child process: killed at the deadline if HiGHS overshoots (its
            # interrupt callbacks are not called in every phase of the root), its last
            # incumbent kept; small models solve in this process (plan.GUARD_MIN_NONZEROS)
            keep_prober(prober)
            raw = race.solve_portfolio([prep], [0], solving, tracker, mip_gap, floor,
                                       stop=halt)
        else:
            keep_prober(prober)
            watch = {} if halt is None or medium != "highspy" else {"halt": halt}
            try:
                raw = backends.ROUTES[medium](prep, solving, tracker, mip_gap, start=floor,
                                              **watch)
            except SolverError:  # HiGHS's "Solve error" at its first options: once more,
                # carefully (r102874: without presolve and given the floor's start, HiGHS
                # ended in an error; carefully it proves the optimum)
                tracker.retract(None if floor is None else floor.total_utility)
                raw = backends.ROUTES[medium](prep, solving, tracker, mip_gap, start=floor,
                                              careful=True, **watch)
        if raw.status is not SolveStatus.OPTIMAL and (
                probed := _probed(prober, instance, tracker)):
            raw, prep = probed  # the prober's proof stopped the planned model's solve
    prep_seconds = time.perf_counter() - t0 - raw.build_seconds - raw.handover_seconds \
        - raw.solve_seconds
    schedule = extract(prep, raw)

    def again(clock: Clock = solving, careful: bool | str = True) -> SolveResult:
        # HiGHS's defaults failed the model: carefully (or the second opinion's options)
        return backends.ROUTES.get(raw.solver, backends.solve_highspy)(
            prep, clock, tracker, mip_gap, start=floor, careful=careful)
    retried = bool(raw.values) and (overfilled(instance, schedule)
                                    or bool(raw.extras.get("disagreed"))
                                    or _short(raw, schedule))
    if retried:  # a schedule over capacity, or HiGHS's objective not what it is worth
        raw, schedule = solved_again(instance, raw, tracker, None if floor is None
                                     else floor.total_utility, again, lambda r: extract(prep, r))
    if lazy is not None:  # a proven optimum is ≥ every online schedule (floor.py)
        floor = lazy.settle(raw.status is SolveStatus.OPTIMAL and mip_gap == 0)
    if not retried and below(floor, schedule) and raw.status is SolveStatus.OPTIMAL \
            and mip_gap == 0:  # a proven optimum below an online schedule: once more
        raw, schedule = solved_again(instance, raw, tracker, floor.total_utility, again,
                                     lambda r: extract(prep, r))
        retried = True
    if not retried and raw.status is SolveStatus.OPTIMAL and raw.values and \
            solver == "highs" and presolve_off(instance):
        # an optimum proven without presolve, checked by a solve with it (HiGHS proved wrong
        # ones without: r18551, r46354)
        raw, schedule = second_opinion(instance, raw, schedule, tracker, solving,
                                       partial(again, careful=SECOND),
                                       lambda r: extract(prep, r))
    status = raw.status
    tracker.update(incumbent=schedule.total_utility if raw.values or not prep.active else None,
                   bound=raw.bound)
    chosen = None
    if below(floor, schedule):
        earned, schedule, chosen = schedule.total_utility, floor, str(floor.algorithm)
        if status is SolveStatus.OPTIMAL and mip_gap == 0:  # a wrong model: say so
            raise SolverError(f"the proven optimum of {instance.name} (the solver's "
                              f"objective {raw.objective}, its schedule {earned}) is below "
                              f"{chosen}'s schedule ({floor.total_utility})")
    medium = raw.solver
    raced = raw.extras.get("racers", 1) > 1
    o = prep.options
    rows = "plain" if replace(o, ps_relaxed=False) == PLAIN else "full" \
        if o.completion_cuts else "nocuts" if o.cumulative else "lean"
    # the PS counts relaxed, then made whole (``Options.ps_relaxed``) or solved whole after
    relaxed = {"repaired": "+ps-relaxed", "whole": "+ps-whole"}.get(
        raw.extras.get("ps_relaxed"), "")
    # a solver skipped for time says so whichever was asked for (it read compact/scip/full)
    shown = solver if solver != "highs" and medium != "skipped" else medium
    route = f"compact/{shown}/{rows}{relaxed}" + ("+race" if raced else "")
    raw = replace(raw, build_seconds=prep_seconds + raw.build_seconds,
                  extras={"solver": solver, "packing": prep.packing})
    return finish(instance, raw, schedule, tracker, clock, prep.upper_bound(),
                  medium if solver == "highs" else modeler, "compact", route, chosen)


#: Seconds of HiGHS the default route first gives the plain model (``common.PLAIN``, the
#: comparator's rows) where it planned another (patterns, the server model with its cuts; not
#: the continuous workers of the trace imports): on easy instances the planned model's extra
#: rows and patterns cost more than the whole plain solve. Measured on 48 instances of a
#: generator the route was never fitted on (12–16 jobs and slots, two or three server shapes,
#: 2–4 resources; docs/offline-journal.md, round 40): the planned model took 0.3–2.3 s where
#: PLAIN proves in 0.05–0.25 s (fresh-101: 2.32 s with patterns, 0.14 s PLAIN, the comparator
#: 0.16 s). Unproven by then, the planned route runs as before, this much later.
PROBE_SECONDS = 0.3
#: Whether the probe runs (``plain_probe``).
PLAIN_PROBE = True
#: Whether a race at home takes the probe beside its first racer (``probe_model``), not
#: before the race in this process.
PROBE_BESIDE = True


def keep_prober(prober: race.Prober | None) -> None:
    """Tell a running prober to go on past its window (``race.Prober.keep``): the planned
    model solves alone, in this process or its guard, and no racer will want the other
    core."""
    if prober is not None and PROBER_KEPT:
        prober.keep()


def _prober_partner(prep: Any) -> bool:
    """The race of ``prep`` runs its first racer at home and starts PLAIN at seed 0 at once
    as its partner (``plan.racers``' server pair), the model a running prober solves since
    the solve's start: the prober goes on as that partner (``PROBER_AS_PLAIN_PARTNER``),
    where it used to end and a new child to solve its model again from scratch (with the
    floor's start, which the prober has not: round 45 measured both)."""
    from ..formulations.common import PLAIN
    return PROBER_AS_PLAIN_PARTNER and race_at_home(prep) and racers(prep)[1] == (PLAIN, 0)


def _held_partner(prep: Any) -> bool:
    """The race of ``prep`` runs its first racer at home with a partner held for
    ``RACE_DELAY`` (not PLAIN at seed 0 started at once), where a running prober can stand
    for the probe beside it (``race.solve_portfolio``'s ``prober``)."""
    from ..formulations.common import PLAIN
    return PROBER_IN_RACE and race_at_home(prep) and RACE_DELAY > 0 \
        and racers(prep)[1] != (PLAIN, 0)


def probe_model(prep: Any, modeler: str, options: Any, medium: str, solver: str,
                clock: Clock) -> Any:
    """PLAIN's prep where the default route probes it (``plain_probe``) before the planned
    model ``prep``, else None: the default route only (no ``options``, highspy, HiGHS), a
    planned model other than PLAIN and not of continuous workers (``Prep.flow_workers``: the
    trace imports, where patterns win by far), PLAIN small enough to keep the deadline
    in-process (``plan.GUARD_MIN_NONZEROS``) and at least twice the probe's time left.

    Where the planned model races with its first racer at home (``plan.race_at_home``), the
    probe runs beside it on the core the partner's wait (``RACE_DELAY``) leaves idle, where
    it costs no time if it does not prove (issue 22, round 41): in the partner's process
    before the partner (``race.solve_portfolio``'s ``probe``), or, where the partner is
    PLAIN at seed 0 itself (beside the server model, ``plan.racers``), as the partner,
    started at once."""
    from ..formulations.common import PLAIN, prepare
    from .plan import GUARD_MIN_NONZEROS
    if not (PLAIN_PROBE and modeler == "auto" and options is None and medium == "highspy"
            and solver == "highs") or prep.options == PLAIN or prep.flow_workers:
        return None
    left = clock.remaining()
    if left is not None and left < 2 * backends.window_for(PROBE_SECONDS):
        return None
    plain = prepare(prep.instance, PLAIN)
    return plain if plain.model_size()["nonzeros"] < GUARD_MIN_NONZEROS else None


#: Whether a solve of the default route starts the plain model at once in a forked child
#: (``early_prober``), beside the floor and the route's planning.
EARLY_PROBE = True
#: ... for this many seconds of HiGHS (at 0.3 it missed fresh-201, whose plain model needs
#: 0.3 s without a start, and the race's partner won at 0.86 s instead of 0.35: round 43).
EARLY_PROBE_SECONDS = 0.4
#: Whether that prober goes on as the probe beside a race at home (``_held_partner``).
PROBER_IN_RACE = True
#: ... on instances of at most this many allocation cells (``plan.allocation_cells``): the
#: plain model has at most 13 nonzeros a cell on the benchmark's families (hard-s0 12.5,
#: the 12-job Philly slices 12.2), so these stay below ``plan.GUARD_MIN_NONZEROS``, the
#: probe's bound, which the child checks too.
EARLY_PROBE_CELLS = 1_500
#: Whether the prober goes on beside the plain probe (``plain_probe``) where the route races in
#: children after that probe (a model too large to race at home: ``plan.race_at_home``),
#: where it used to end and the probe to solve the plain model again from scratch.
PROBER_BESIDE_PROBE = True
#: Whether it goes on past its window where the planned model solves without a race
#: (``keep_prober``): a second search on a core no racer wants, where it used to stop at
#: ``EARLY_PROBE_SECONDS`` (issue 22, round 44).
PROBER_KEPT = True
#: Whether it goes on as the partner of a race at home whose partner is its own model, PLAIN
#: at seed 0 (``_prober_partner``), instead of a child started to solve that again.
PROBER_AS_PLAIN_PARTNER = True
#: Whether its proof stops the planned model's preparation (``common.prepare``'s ``stop``):
#: counting patterns took 0.03–0.11 s on 15-job instances, and a proof that came in
#: meanwhile was read only after it (issue 22, round 44).
PREP_STOPS = True


def early_prober(instance: Instance, clock: Clock, mip_gap: float) -> race.Prober | None:
    """The plain model (``common.PLAIN``, the comparator's rows) solved for
    ``EARLY_PROBE_SECONDS`` of HiGHS in a forked child from the start of a default-route
    solve (the caller's conditions: the compact route with the built-in floor, highspy, no
    options), while this process runs the floor, plans the route and solves the planned
    model in this process or its guard; the first proof wins. Where the route races at
    home with its partner held, the prober is the probe beside the racer at home (the
    partner held until its window is over); before any other race it ends
    (``solve_compact``'s ``prober``). Without a MIP start it is not the planned PLAIN's
    twin: the floor's start halved PLAIN's time on fresh-113 and took it from 0.15 to 0.6 s
    on fresh-108 (issue 22, round 43). On small instances
    (``EARLY_PROBE_CELLS``) with a core idle now (``plan.core_idle``) and twice the window
    left, else None.

    Where the plain model proves in a fraction of a second, the floor's algorithms, the
    route's planning (patterns, the LP bounds of ``plan.cut_gain``) and the planned model
    took longer than the whole plain solve (issue 22, round 42: fresh-211 0.088 s of which
    0.022 s HiGHS, the comparator 0.023 s). Unlike ``plain_probe`` it costs this process
    no wait where it does not prove, only the fork and its copy-on-write pages (0.01–0.03 s
    on `loose`, measured side by side: docs/offline-journal.md, round 42)."""
    from functools import partial

    from .plan import GUARD_MIN_NONZEROS, core_idle
    left = clock.remaining()
    if not (PLAIN_PROBE and EARLY_PROBE) or allocation_cells(instance) > EARLY_PROBE_CELLS \
            or left is not None and left < 2 * backends.window_for(EARLY_PROBE_SECONDS) \
            or not core_idle():
        return None
    return race.Prober(partial(prober_model, instance), EARLY_PROBE_SECONDS, left, mip_gap,
                       GUARD_MIN_NONZEROS)


def prober_model(instance: Instance) -> Any:
    """The prober's model (``early_prober``): PLAIN's prep, in the child and wherever its
    proof is extracted."""
    from ..formulations.common import PLAIN, prepare
    return prepare(instance, PLAIN)


def plain_probe(plain: Any, clock: Clock, tracker: Tracker, mip_gap: float,
                floor: Schedule | None, halt: Callable[[], bool] | None = None
                ) -> tuple[SolveResult, Any] | None:
    """``(result, plain)`` where the plain model ``plain`` (``probe_model``), solved first
    for ``PROBE_SECONDS`` in this process, proves the optimum; else None. The probe's
    incumbents and bound reach ``tracker`` only with its proof. ``halt()`` true stops it
    (the early prober beside it has proven)."""
    window = backends.window_for(PROBE_SECONDS)  # (highs_budget keeps a reserve out of it)
    raw = backends.solve_highspy(plain, clock.within(window), Tracker(clock, None), mip_gap,
                                 start=floor, halt=halt)
    if raw.status is not SolveStatus.OPTIMAL:
        return None
    tracker.update(incumbent=raw.objective, bound=raw.bound)
    return raw, plain


def _probed(prober: race.Prober | None, instance: Instance, tracker: Tracker
            ) -> tuple[SolveResult, Any] | None:
    """``(result, PLAIN's prep)`` where ``prober`` (``early_prober``) has proven the
    optimum by now, else None; its incumbent and bound reach ``tracker`` then."""
    raw = None if prober is None else prober.proof()
    if raw is None:
        return None
    tracker.update(incumbent=raw.objective, bound=raw.bound)
    return raw, prober_model(instance)


def check_index_sets(instance: Instance) -> int:
    """The compact MILP's allocation cells (``allocation_cells``), refused (``InputError``)
    where their index sets alone would pass ``--max-memory``. ``solve`` asks before its
    floor runs where the compact route is chosen: ``--method compact --time-limit 60`` on
    the whole Philly trace was refused after 47 s of online algorithms."""
    from ..limits import check_allocation
    cells = allocation_cells(instance)
    check_allocation("instance", prepare_bytes(cells),
                     f"the compact MILP's index sets ({cells} allocation cells)")
    return cells


def _short(raw: SolveResult, schedule: Schedule) -> bool:
    """A proven optimum whose schedule earns less than the solver's objective (SPEC §2: they
    are equal, 1e-6 rel.): work the MILP counted within its integrality tolerance was not
    done."""
    return raw.status is SolveStatus.OPTIMAL and raw.objective is not None and \
        schedule.total_utility < raw.objective - REL_TOL * max(1.0, abs(raw.objective))


def route_prep(instance: Instance, options: Any, floor: Schedule | None,
               prepared: Any = None, stop: Callable[[], bool] | None = None) -> Any:
    """The prepared model of the compact route before ``plan_route``: ``options``, or where
    they are None the default route's formulation (``route_options`` from the instance and
    ``floor``'s utility, then ``settle_fallback``). ``prepared``: this function's answer
    without a floor (``solve`` sized the model with it), kept unless the floor turns the
    loose rule on. ``stop``: ``common.prepare``'s (``Stopped`` once it is true).
    ``benchmarks/seed_alone.py`` plans with it too (issue 22)."""
    from ..formulations.common import prepare
    if options is not None:
        return prepare(instance, options, stop=stop)
    utility = None if floor is None else floor.total_utility
    if prepared is not None and not loose_rule(instance, utility):
        return prepared
    return settle_fallback(prepare(instance, route_options(instance, utility), stop=stop))


def sized_route(instance: Instance, clock: Clock) -> tuple[str, Any]:
    """``auto``'s method where the cells chose the compact route and a time limit is set
    (``plan.compact_in_time``): ``("compact", prep)`` with the default route's model made
    before the floor (``route_prep``; ``solve_compact`` keeps it); ``("race", prep)`` where
    that model has too many rows for the compact route alone but few enough to race it
    against column generation on two free cores (``plan.routes_race``, ``plan.cores_free``;
    ``route_race.solve_race``); else ``("colgen", None)``. With fewer than
    ``SIZED_MIN_JOBS`` jobs, or where not even the index sets would be ready in time,
    nothing is prepared here: ``("compact", None)``.

    ``--max-memory`` (``limits.max_memory``) counts too: where the compact model's index sets
    or its build would pass it, column generation answers instead of a refusal, and the race
    needs both routes' room: the compact solve (``solve_bytes``) within half of it."""
    from ..limits import max_memory
    left, cells = clock.remaining(), allocation_cells(instance)
    if compact_in_time(math.inf, clock.limit, instance.num_jobs) or left is not None and \
            cells * PREPARE_SECONDS_PER_CELL > 0.5 * left:
        return "compact", None  # compact whatever its size, or not even sized in time
    memory = max_memory()
    if prepare_bytes(cells) > memory:
        return "colgen", None
    prep = route_prep(instance, None, None)
    size = prep.model_size()
    build = solve_bytes(size["nonzeros"], "highspy")
    if compact_in_time(size["rows"], clock.limit, instance.num_jobs):
        return ("compact", prep) if build <= memory else ("colgen", None)
    if routes_race(size["rows"], clock.limit, instance.num_jobs) and build <= 0.5 * memory \
            and cores_free(clock.limit):
        return "race", prep
    return "colgen", None


def _unprepared(instance: Instance, clock: Clock, tracker: Tracker, floor: Schedule | None,
                lazy: Floor | None) -> tuple[Schedule, SolveReport]:
    """The compact route's answer where even its index sets would not be ready in time: the
    floor (the rest of a lazy one first, within what is left), else the empty schedule; the
    bound is the tracker's (Σ_i f_i(1) until something better)."""
    if lazy is not None:
        floor = lazy.settle(False)
    raw = SolveResult(SolveStatus.TIME_LIMIT, solver="skipped", extras={"packing": None})
    schedule = floor if floor is not None else Schedule(instance.name, "compact", 0.0, ())
    return finish(instance, raw, schedule, tracker, clock, tracker.bound, "highspy",
                  "compact", "compact/skipped/unprepared",
                  None if floor is None else str(floor.algorithm))
