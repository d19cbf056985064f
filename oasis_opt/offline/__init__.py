"""The exact offline optimum (SPEC §2): pick a route by its predicted cost, build the compact
MILP (or run column generation), hand it to HiGHS, read back a schedule and a typed report.

This package (with ``formulations/`` and ``solvers.py``) talks to solver APIs:
highspy directly (``formulations/compact_highspy.py``, the default), Pyomo's maintained HiGHS
interface (``pyomo.contrib.solver``) and PuLP's ``pulp.HiGHS`` (through highspy). Its parts:
``plan`` (the route, from the instance), ``clock`` (the one deadline, the progress),
``floor`` (the best online schedule), ``compact``, ``colgen_route`` and ``custom`` (the
routes), ``route_race`` (the compact route and column generation side by side),
``backends`` (the three media of the compact MILP), ``race`` (forked solves stopped at the
deadline) and ``report``.

Time limits bound the whole call (SPEC §6). ``solve`` fixes a deadline ``start + time_limit``
at its first line and every step gets what is left of it:

1. the online algorithms of the registry run first (well under a second at the paper's
   scale); the best of their schedules is the *floor*: the answer is never worse. At trace
   scale they take minutes, so they run cheapest first within a quarter of the limit
   (``FLOOR_SHARE``, at least ``FLOOR_MIN_SECONDS``), a tenth where column generation
   computes the bound only (``FLOOR_TRACE_SHARE``, its master's seeds ``COLGEN_SEEDS``
   first: ``floor_first``; its schedule is far better, the floor's schedules of
   ``COLGEN_SEEDS`` and its best are its master's seeds, ``trace_seeds``, and the floor the
   safety net). On the compact route with the built-in algorithms only
   ``FLOOR_FIRST`` runs now, the rest after the solve if it did not prove the optimum
   (``floor.py``). Schedules the caller has made already (``floor_schedules``) join the
   floor, validated, and their algorithms do not run again;
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

Every figure is in the instance's units. Where no job can earn 1 alone, or a pool's
capacities are below 1 or far above its demands, the instance is solved with its utilities
or those units multiplied by powers of two, where the solvers' absolute tolerances act as
relative ones, and the answer divided back, exactly (``scale.py``).

A failure of the solver on valid input raises ``SolverError`` (the CLI: exit 1, one line).
"""


from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from ..errors import InputError, expect_callable, expect_executor, expect_number
from ..io import check_schedule_size
from ..model import REL_TOL, Instance, Schedule, check_instance
from ..utility import trivial_bound
from .backends import THREADS
from .clock import MAX_TIME_LIMIT, Clock, Progress, Tracker
from .colgen_route import COLGEN_RESERVE, COLGEN_SEEDS, colgen_inputs, solve_colgen
from .compact import check_index_sets, early_prober, sized_route, solve_compact
from .custom import customize_route, solve_custom
from .floor import (
    FLOOR_COST_ORDER,
    FLOOR_FIRST,
    FLOOR_MIN_SECONDS,
    FLOOR_SHARE,
    FLOOR_TRACE_SHARE,
    FLOOR_WITHOUT_LIMIT,
    Floor,
    after_route,
    floor_first,
    floor_names,
    floor_time_share,
    given_schedules,
)
from .plan import (
    BUILD_BYTES_PER_NNZ,
    BUILD_SECONDS_PER_NNZ,
    BUILD_SHARE,
    CELLS_PER_SECOND,
    COMPACT_SIZE_LIMIT,
    CUT_NNZ_LIMIT,
    CUT_SHARE,
    GUARD_MIN_NONZEROS,
    METHODS,
    MODELERS,
    PORTFOLIO,
    PORTFOLIO_LONG_BUDGET,
    PORTFOLIO_MIN_NONZEROS,
    choose_method,
    instance_features,
    route_options,
)
from .report import SolveReport, SolveStatus, relative_gap, restate
from .route_race import solve_race
from .scale import (
    check_counts,
    objective_scale,
    scaled_given,
    scaled_instance,
    scaled_schedule,
    unit_scales,
    unscaled_progress,
    unscaled_report,
    unscaled_rounds,
    unscaled_schedules,
)

__all__ = [
    "BUILD_BYTES_PER_NNZ", "BUILD_SECONDS_PER_NNZ", "BUILD_SHARE", "CELLS_PER_SECOND",
    "COLGEN_RESERVE", "COLGEN_SEEDS", "COMPACT_SIZE_LIMIT", "CUT_NNZ_LIMIT", "CUT_SHARE",
    "FLOOR_COST_ORDER", "FLOOR_FIRST", "FLOOR_MIN_SECONDS", "FLOOR_SHARE", "FLOOR_TRACE_SHARE",
    "FLOOR_WITHOUT_LIMIT",
    "GUARD_MIN_NONZEROS", "MAX_TIME_LIMIT", "METHODS", "MODELERS", "PORTFOLIO",
    "PORTFOLIO_LONG_BUDGET", "PORTFOLIO_MIN_NONZEROS", "THREADS", "Progress", "SolveReport",
    "SolveStatus",
    "check_arguments", "check_counts", "check_route_sizes", "check_settings", "colgen_inputs",
    "floor_first",
    "floor_time_share",
    "instance_features", "relative_gap", "route_options",
    "solve",
]


def solve(instance: Instance, modeler: str = "auto", time_limit: float | None = None,
          mip_gap: float = 0.0, method: str = "auto",
          options: Any = None, solver: str = "highs",
          on_progress: Progress | None = None, *,
          customize: Callable[[Any], Any] | None = None,
          floor: Sequence[str] | None = None,
          floor_schedules: Mapping[str, Schedule] | None = None,
          executor: Executor | None = None,
          on_round: Callable[[Any], None] | None = None,
          on_schedule: Callable[[Schedule], None] | None = None
          ) -> tuple[Schedule, SolveReport]:
    """Solve the offline problem of ``instance`` exactly, or within ``time_limit`` seconds of
    wall time for the whole call (module docstring), and return the validated schedule and
    its report.

    ``method``: ``compact`` (the time-indexed MILP), ``colgen`` (column generation: LP bound and
    price-and-branch schedule), ``auto`` (by predicted cost; with a time limit, where the
    compact model's size leaves the choice open and two cores are free, both at once: the
    better schedule and the least bound, ``route_race``). ``modeler``: ``auto`` (highspy
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
    ``floor_schedules``: ``{name: schedule}`` the caller has already made (``ratio.compare``
    runs the algorithms first): each one is checked by the validator first (``InputError``
    at ``floor_schedules.NAME`` if it breaks a rule) and joins the floor as that
    algorithm's run; an algorithm of ``floor`` so named does not run again, the others run as
    without it (the lazy floor's among them). Name a schedule by the algorithm that made it
    with its default parameters, else by a name of its own: it joins the floor without
    standing for one of its algorithms. Without a time limit only the lazy floor runs
    (``FLOOR_WITHOUT_LIMIT``: the compact route, ``floor`` and ``customize`` None); they join
    it there and are otherwise not used (but still checked).

    ``executor`` (``tasks.make_executor``: a process pool or Dask) prices column generation's
    jobs in parallel at trace scale (the same bound); ``on_round(colgen.Round)`` reports its
    rounds (docs/offline.md, "A certified bound at trace scale"). ``on_schedule(schedule)``
    is told each better schedule the floor makes, validated, in the instance's units while
    the solve goes on: what ``oasis-opt solve`` writes should the solver not return by the
    command's time limit (``cli``'s lifeline).

    Errors name the parameter (``InputError("time_limit", …)``), not a command-line flag.
    """
    check_settings(modeler, time_limit, mip_gap, method, solver)  # before the clock adds to S
    clock = Clock(time_limit)
    check_instance(instance)
    check_arguments(options, on_progress=on_progress, on_round=on_round,
                    on_schedule=on_schedule)
    expect_executor("executor", executor)
    check_counts(instance)
    names = floor_names(floor)
    given = given_schedules(instance, floor_schedules)
    # small utilities and capacities are solved at a scale the solvers' absolute tolerances
    # fit (scale.py); never a customized model, whose rows may hold constants in its units
    k, (workers, ps) = (1.0, (None, None)) if customize is not None else \
        (objective_scale(instance), unit_scales(instance))
    if k == 1.0 and all(u is None or (u == 1.0).all() for u in (workers, ps)):
        return unproven_at_gap(*_solve(instance, modeler, time_limit, mip_gap, method, options,
                                       solver, on_progress, customize, floor, names, given,
                                       executor, on_round, clock, on_schedule), mip_gap)
    schedule, report = _solve(scaled_instance(instance, k, workers, ps), modeler, time_limit,
                              mip_gap, method, options, solver,
                              unscaled_progress(on_progress, k), customize, floor, names,
                              scaled_given(given, k), executor, unscaled_rounds(on_round, k),
                              clock, unscaled_schedules(on_schedule, k))
    return unproven_at_gap(scaled_schedule(schedule, 1.0 / k), unscaled_report(report, k),
                           mip_gap)


def unproven_at_gap(schedule: Schedule, report: SolveReport, mip_gap: float
                    ) -> tuple[Schedule, SolveReport]:
    """A solve that a ``mip_gap`` above ``REL_TOL`` ended with the gap still open is not a
    proof: status ``feasible``, not ``optimal``. It said "optimal" beside a gap of 17 % (an
    outside audit, ``--mip-gap 0.5``), and every reader that takes an optimal status for
    OPT (a sweep's ``opt`` column, ``ratio``, ``verify``) took the incumbent for it. At the
    default ``mip_gap`` 0 nothing changes."""
    if mip_gap > REL_TOL and report.status is SolveStatus.OPTIMAL \
            and (report.gap is None or report.gap > REL_TOL):
        return restate(schedule, report, status=SolveStatus.FEASIBLE, bound=report.bound,
                       route=report.route, history=report.history, seconds=report.seconds)
    return schedule, report


def _solve(instance: Instance, modeler: str, time_limit: float | None, mip_gap: float,
           method: str, options: Any, solver: str, on_progress: Progress | None,
           customize: Callable[[Any], Any] | None, floor: Sequence[str] | None,
           names: Sequence[str], given: Mapping[str, Schedule], executor: Executor | None,
           on_round: Callable[[Any], None] | None, clock: Clock,
           on_schedule: Callable[[Schedule], None] | None = None
           ) -> tuple[Schedule, SolveReport]:
    """``solve`` once its settings and given schedules are checked and its utilities and
    units scaled (``scale.objective_scale``, ``scale.unit_scales``)."""
    if customize is not None:
        modeler = customize_route(customize, modeler, method, solver)
    elif solver != "highs":  # another solver takes the compact model (oasis_opt.solvers)
        from .. import solvers
        modeler, method = solvers.check(solver), "compact"
    prepared = None
    if customize is None:
        chosen = choose_method(instance, method, clock)
        if method == "auto" and chosen == "compact" and time_limit is not None \
                and modeler == "auto" and options is None:
            # the model's rows, not its cells, say whether its root LP fits the limit
            chosen, prepared = sized_route(instance, clock)
        method = chosen
    if customize is None:
        _check_route(instance, method)  # refused before the floor's seconds, not after
    # the compact route with the built-in floor runs it lazily (floor.py): FLOOR_FIRST now,
    # the rest only if the solve does not prove the optimum
    lazy = floor is None and customize is None and method == "compact"
    # without a time limit only the lazy floor runs: its start and the loose rule pay there
    # too (FLOOR_WITHOUT_LIMIT); a named or customized floor is the time limit's promise
    floored = time_limit is not None or (lazy and FLOOR_WITHOUT_LIMIT)
    # every schedule the floor makes is kept to the end, beside the route's own answer;
    # refused before the first line of progress. Not OASiS's tables: where one would not
    # fit, OASiS refuses that job as it decides it and the floor goes on without OASiS
    runs = names if floored else ()
    check_schedule_size(instance, 1, held=len(set(given) | set(runs)))
    tracker = Tracker(clock, on_progress, on_schedule=on_schedule)
    # f_i is non-increasing: no job earns more than f_i(1), the bound until a better one
    # (per job: the dense (J, T) utility table is 1.8 GB on the whole Philly trace)
    tracker.update(bound=trivial_bound(j.utility for j in instance.jobs))
    online = Floor(instance, tracker, names, clock, floor_time_share(instance),
                   report=customize is None, given=given, first=floor_first(instance)) \
        if floored else None
    # the default route's plain model in a child meanwhile (compact.early_prober)
    prober = early_prober(instance, clock, mip_gap) if lazy and modeler == "auto" \
        and options is None and solver == "highs" else None
    with prober if prober is not None else contextlib.nullcontext():  # stopped at the end
        # a customized model's floor counts only once it keeps the user's rows (solve_custom)
        best = None if online is None else online.run(
            FLOOR_FIRST if lazy else None, until=None if prober is None else prober.proven)
        if customize is not None:
            return solve_custom(instance, modeler, clock, tracker, mip_gap, options, best,
                                customize)
        if method == "race":  # compact and column generation side by side (route_race.py)
            answer = solve_race(instance, clock, tracker, mip_gap, best,
                                [] if online is None else online.schedules(), prepared)
        elif method == "colgen":
            answer = solve_colgen(instance, clock, tracker, mip_gap, best, executor, on_round,
                                  [] if online is None else online.schedules())
        else:
            answer = solve_compact(instance, modeler, clock, tracker, mip_gap, options, solver,
                                   best, online if lazy else None, prepared, prober=prober)
    # the algorithms the floor's budget left out, in the time the route did not use
    return answer if online is None else after_route(online, *answer, clock, mip_gap)


def check_route_sizes(instance: Instance, method: str = "auto",
                      time_limit: float | None = None) -> None:
    """The size refusals ``solve`` makes before its floor runs (``InputError`` naming the
    size above ``--max-memory``), for a caller that runs algorithms before it solves
    (``ratio.compare``): the compact route's index sets where that route is certain, the
    least column-generation master where column generation is chosen. Where ``auto`` with a
    time limit picks the compact route, ``solve`` sizes the model itself and may still
    choose column generation (``compact.sized_route``): nothing is refused here then.
    ``ratio --max-memory 200M`` on 20 000 Philly jobs was refused after 15 s of online
    algorithms (an outside audit, round 41)."""
    chosen = choose_method(instance, method, Clock(time_limit))
    if chosen == "colgen" or method == "compact" or time_limit is None:
        _check_route(instance, chosen)


def _check_route(instance: Instance, method: str) -> None:
    """The up-front size refusal of ``method``'s route: the compact MILP's index sets
    (``compact.check_index_sets``), column generation's least master
    (``colgen.check_least_master``)."""
    if method == "compact":
        check_index_sets(instance)
    elif method == "colgen":
        from ..formulations.colgen import check_least_master
        check_least_master(instance)


def check_arguments(options: Any = None, **callbacks: Any) -> None:
    """``solve``'s ``options`` (None or ``formulations.common.Options``) and its callbacks
    (None or functions), refused by name before the solve starts: they failed deep inside,
    "'int' object has no attribute 'ps_cuts'", or as a column generation ``SolverError``."""
    from ..formulations.common import Options
    if options is not None and not isinstance(options, Options):
        raise InputError("options", f"expected formulations.common.Options, got "
                                    f"{type(options).__name__}")
    for place, fn in callbacks.items():
        expect_callable(place, fn)


def check_settings(modeler: str = "auto", time_limit: float | None = None,
                   mip_gap: float = 0.0, method: str = "auto", solver: str = "highs") -> None:
    """``solve``'s settings, refused as ``solve`` refuses them (``InputError`` naming the
    parameter): a caller that does other work first (``ratio.compare``) checks them before.
    Column generation asked for by name with another solver than HiGHS is refused: those
    take the compact model, and the solve went there without a word."""
    if modeler not in MODELERS:
        raise InputError("modeler", f"unknown modeler {modeler!r}; choose from "
                                    f"{', '.join(MODELERS)}")
    if method not in METHODS:
        raise InputError("method", f"unknown method {method!r}; choose from "
                                   f"{', '.join(METHODS)}")
    if time_limit is not None:
        expect_number("time_limit", time_limit)
    expect_number("mip_gap", mip_gap)
    if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
        raise InputError("time_limit", f"must be a positive number, got {time_limit}")
    if time_limit is not None and time_limit > MAX_TIME_LIMIT:  # timeouts past this overflow
        raise InputError("time_limit", f"{time_limit:g} s is too long (limit "
                                       f"{MAX_TIME_LIMIT:g} s, about 115 days)")
    if not 0 <= mip_gap < 1:
        raise InputError("mip_gap", f"must be in [0, 1), got {mip_gap}")
    if method == "colgen" and solver != "highs":
        raise InputError("method", f"colgen runs on HiGHS; solver {solver!r} takes the "
                                   "compact model (method compact, or auto)")
