"""Utilities brought to the scale the solvers' tolerances are set for (``solve``).

HiGHS stops a MILP at an absolute gap (``mip_abs_gap``, 1e-6) and reads reduced costs to an
absolute tolerance (1e-7); the package's own comparisons are ``1e-6·max(1, |x|)``. Both are
relative (SPEC §2: 1e-6 rel.) only where the utilities are of order one or more: with every
``f_i(1)`` near 1e-9, HiGHS found the objective "optimal" at once, at 2.2e-9 against an
optimum of 2.5e-9. ``solve`` therefore runs on the instance with every utility multiplied by
a power of two ``k`` that brings the most one job can earn alone into [1, 2) where it lies
below 1 (``objective_scale``), and divides what it reports by ``k``. A power of two scales every
value of every family exactly (``Utility.scaled``), and sums of them too, so the schedule's
utilities are, bit for bit, those of the instance as given (tests/test_scale.py).

The same holds for the capacity rows: HiGHS takes a matrix entry of at most 1e-9 for 0, so
demands of 1e-9 on servers of 1e-8 (both within SPEC §5's range) gave a schedule that used
three times the capacity. Each pool's resource whose largest capacity lies below 1, or
exceeds its least demand by more than ``WIDE``, is measured in a power-of-two unit
(``unit_scales``): its capacities and demands are multiplied by the same factor. What fits
where is unchanged, exactly, and so is every schedule; the online algorithms compare
shares of capacity, which do not change either.

Utilities of order one or more are solved as they are (``k = 1``). A customized model
(``solve(customize=…)``) is not scaled either: its rows may hold the user's own constants
in utility units. The floor's online algorithms see the scaled utilities, so OASiS's
admission threshold (a payoff above 1e-9, SPEC §3) is relative to the scale there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Instance, Schedule
from .clock import Progress
from .report import SolveReport

#: Below this most a job earns alone (``alone_values``) the utilities are scaled up to
#: [1, 2); below this largest capacity a pool's resource is measured in a smaller unit.
SCALE_BELOW = 1.0
#: At most ``2**MAX_EXPONENT``: past it a double cannot hold the scaled parameters, and
#: utilities that small carry no digits to schedule by (refused, ``objective_scale``).
MAX_EXPONENT = 1000
#: The schedule extras of ``solve`` in utility units (``report.finish``, ``colgen_route``).
UTILITY_EXTRAS = ("bound", "solver_objective", "lp_value")


def alone_values(instance: Instance) -> np.ndarray:
    """(J,) what each job earns alone on the empty cluster: ``f_i(⌈V_i / w_i⌉)`` at its most
    workers a slot ``w_i = min(N_i, Σ_h fits_h, ⌊γ_i·Σ_k fits_k⌋)`` (``w_max`` of
    ``formulations/common.py``, computed here per demand class without ``prepare``'s
    (J, servers) arrays, which trace scale cannot afford; tests/test_scale.py checks the two
    agree), 0 where it cannot finish within the horizon. The optimum is at least the
    largest, and no term of the objective exceeds it."""
    from ..formulations.colgen_scale import server_fits
    from ..formulations.common import row_capacity
    J, T = instance.num_jobs, instance.horizon
    out = np.zeros(J)
    if not J:
        return out

    def fits(capacity: np.ndarray, rows: np.ndarray, d: np.ndarray) -> int:
        """Units of ``d`` the pool holds, each server by its model rows (``row_capacity``):
        ``floor(C/d + 1e-9)`` counted a demand of (1 + 1e-9)·C as one unit, which no row
        takes, and a job worth 10 that no schedule of the model holds kept the utilities of
        1e-8 unscaled: HiGHS proved 0 optimal (round 27's search)."""
        n = server_fits(capacity, d)
        need = d > 0
        if need.any():
            n = np.where((n[:, None] * d[need] > rows[:, need]).any(axis=1), n - 1, n)
        return int(np.maximum(n, 0).sum())

    def pool(demand: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        classes, inverse = np.unique(demand, axis=0, return_inverse=True)
        rows = row_capacity(capacity, demand) if len(capacity) else capacity
        counts = [fits(capacity, rows, d) if len(capacity) else 0 for d in classes]
        return np.array(counts, dtype=float)[np.asarray(inverse).reshape(-1)]
    by_ps = np.floor(instance.ps_ratio * pool(instance.ps_demand, instance.ps_capacity) + 1e-9)
    rate = np.minimum(np.minimum(instance.max_workers, pool(instance.worker_demand,
                                                            instance.worker_capacity)), by_ps)
    for i in np.flatnonzero(rate > 0):
        d = math.ceil(int(instance.workload[i]) / int(rate[i]))
        if int(instance.arrival[i]) + d <= T:
            out[i] = max(0.0, instance.jobs[i].utility.at(d))
    return out


#: The largest workload (worker-slots) of a job that can finish that ``solve`` takes. The
#: MILPs' rows carry it, and the most workers a slot (at most it), as coefficients: at 1e9
#: HiGHS proved 3 optimal where 13 is (one job of 1e9 workers beside a small one), at 1e12 it
#: died of SIGFPE, and its integrality tolerance (1e-6, 1e-9 when careful) times such a
#: coefficient is work counted that was not done.
MAX_EXACT_WORKLOAD = 1e8


def check_counts(instance: Instance) -> None:
    """Refuse (``InputError`` naming ``jobs[i].workload``) an instance a job of which could
    finish alone (``alone_values``) with a workload above ``MAX_EXACT_WORKLOAD``: no route of
    ``solve`` computes its optimum exactly. The online algorithms take it (``run``)."""
    big = np.flatnonzero(instance.workload > MAX_EXACT_WORKLOAD)
    if not big.size:
        return
    finish = alone_values(instance) > 0
    for i in big:
        if finish[i]:
            raise InputError(f"jobs[{i}].workload",
                             f"{int(instance.workload[i])} worker-slots is more than the exact "
                             f"solver resolves (limit {MAX_EXACT_WORKLOAD:.0e}): its MILP "
                             f"would count work that was not done; measure the workload in "
                             f"coarser units (longer slots), or use the online algorithms")


def objective_scale(instance: Instance) -> float:
    """The power of two ``k`` that ``solve`` multiplies the utilities by: 1 where the most a
    job earns alone (``alone_values``) is at least ``SCALE_BELOW`` or 0, else the one that
    brings it into [1, 2); keyed on what jobs can earn, so that a job worth 1 that cannot
    finish does not hide the scale of the rest. ``InputError`` where even
    ``2**MAX_EXPONENT`` does not reach 1."""
    top = float(alone_values(instance).max(initial=0.0))
    if not 0.0 < top < SCALE_BELOW:
        return 1.0
    if 1 - math.frexp(top)[1] > MAX_EXPONENT:  # top = m·2^e, 0.5 ≤ m < 1
        raise InputError("jobs", f"the most a job can earn is {top:.3g}, too small to solve for "
                                 f"(at least 2^-{MAX_EXPONENT}, about "
                                 f"{2.0 ** -MAX_EXPONENT:.1g}): multiply the utilities by a "
                                 f"constant")
    return _power_up(top)


def _power_up(top: float) -> float:
    """The power of two that brings ``top`` (> 0, < 1) into [1, 2), at most
    ``2**MAX_EXPONENT``."""
    return math.ldexp(1.0, min(MAX_EXPONENT, 1 - math.frexp(top)[1]))


#: A pool's resource whose largest capacity exceeds its smallest positive demand by more
#: than this (more units than any job's workers, ``io.MAX_COUNT``) is measured in units of
#: that demand (``unit_scales``).
WIDE = float(1 << 40)
#: A pool's resource whose smallest positive demand lies below this (and not ``WIDE``) is
#: measured in a unit that brings it into [TINY, 2·TINY): HiGHS drops matrix entries of
#: 1e-9 or less (``small_matrix_value``), so a demand of 1e-9 beside a capacity of 4 read
#: as none, and a job of ten such workers beside one filling the server gave 12 for 7.
TINY = 2.0**-20
#: The most a capacity that can bind becomes in its unit (``unit_scales``): HiGHS refuses a
#: matrix entry of 1e15 or more (``large_matrix_value``) and takes a row bound of 1e20 for
#: none, and such a row holds entries (demands, column generation's α·y) up to its capacity.
#: It was 2^49: HiGHS 1.16 at its defaults proved 40.74 optimal where 107.14 is on rows
#: measured at 2^47 to 2^49 (tests/test_tolerance.py, r2705); 2^36 leaves a margin of 2^10.
BIG = 2.0**36


def unit_scales(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(R,) factors for the worker pool's resources and (R,) for the PS pool's, powers of two:
    where the pool's largest capacity C of the resource exceeds its smallest positive
    demand d below 1 by more than ``WIDE``, the one that brings d into [1, 2) (a capacity
    of 1e15 over demands of 1e-8: column generation's master read duals of such rows so
    badly that it called a schedule 12 % under the optimum optimal); else the larger of the
    one that brings d into [``TINY``, 2·``TINY``) where d lies below ``TINY`` and the one
    that brings C into [1, 2) where C lies below 1 (capacities are at least 1e-9, SPEC §5);
    else 1. But a capacity that may bind (below what every job's most units a slot hold
    together) is brought to ``BIG`` at most, by a unit below 1 where it is larger: 1e-9
    GPUs beside 1e12 on a server of 4e12 were measured in units of 2^-30 GPUs, HiGHS
    refused the entries of 1e21 (the solve crashed) or took the row bound of 4e21 for none
    (15 proven where OPT is 12); and it refuses an entry of 1e15 (a demand of 1e15 on a
    server of 1e15 beside others), the largest SPEC §5 allows. The cap is on the pool's
    capacities together (where one may bind): column generation's masters pool servers
    into one row, and two servers of 5e14 made a row of 1e15 that HiGHS refused a column of.
    A row that cannot bind is not built, so where its capacity ends above 1e20 nothing is
    lost."""
    from ..formulations.common import may_bind, most_units
    R = len(instance.resources)
    most = most_units(instance)

    def pool(capacity: np.ndarray, demand: np.ndarray, units: np.ndarray) -> np.ndarray:
        top = capacity.max(axis=0) if len(capacity) else np.zeros(R)
        binds = may_bind(capacity.reshape(-1, R), demand.reshape(-1, R), units)  # (S, R)
        out = np.ones(R)
        for r in range(R):
            d = demand[:, r][demand[:, r] > 0] if len(demand) else demand[:0, r]
            least = float(d.min()) if d.size else 0.0
            if 0.0 < least < 1.0 and top[r] > WIDE * least:
                out[r] = _power_up(least)
            else:
                if 0.0 < least < TINY:
                    out[r] = _power_up(least / TINY)
                if 0.0 < top[r] < SCALE_BELOW:
                    out[r] = max(out[r], _power_up(float(top[r])))
            c = capacity[:, r] if len(capacity) else top[:0]
            if (binds[:, r] & (c > 0)).any():
                # the pool's whole capacity: column generation's masters pool servers into
                # one row (alike ones, or all), whose entries reach its sum
                out[r] = min(out[r], _power_down(BIG / float(c[c > 0].sum())))
        return out
    return (pool(instance.worker_capacity, instance.worker_demand, most[0]),
            pool(instance.ps_capacity, instance.ps_demand, most[1]))


def _power_down(x: float) -> float:
    """The largest power of two at most ``x`` (> 0)."""
    return math.ldexp(1.0, math.frexp(x)[1] - 1)


def scaled_instance(instance: Instance, k: float, worker_units: np.ndarray | None = None,
                    ps_units: np.ndarray | None = None) -> Instance:
    """``instance`` (the same name) with every job's utility multiplied by ``k`` and, where
    given, each resource's capacities and demands of the worker pool by ``worker_units`` and
    of the PS pool by ``ps_units`` (``unit_scales``)."""
    R = len(instance.resources)
    wu = np.ones(R) if worker_units is None else np.asarray(worker_units, dtype=float)
    pu = np.ones(R) if ps_units is None else np.asarray(ps_units, dtype=float)

    def groups(gs: tuple, units: np.ndarray) -> tuple:
        return tuple(replace(g, capacity=tuple(float(c * u) for c, u in
                                               zip(g.capacity, units, strict=True)))
                     for g in gs)
    jobs = tuple(replace(j, utility=j.utility.scaled(k) if k != 1.0 else j.utility,
                         worker_demand=np.asarray(j.worker_demand) * wu,
                         ps_demand=np.asarray(j.ps_demand) * pu) for j in instance.jobs)
    return replace(instance, worker_groups=groups(instance.worker_groups, wu),
                   ps_groups=groups(instance.ps_groups, pu), jobs=jobs)


def scaled_schedule(schedule: Schedule, k: float,
                    extras: tuple[str, ...] = UTILITY_EXTRAS) -> Schedule:
    """``schedule`` with its utilities (per job, the total, the numeric ``extras`` named)
    multiplied by ``k``; its allocations as they are."""
    jobs = tuple(replace(j, utility=j.utility * k) for j in schedule.jobs)
    more = {key: _over(v, 1.0 / k) if key in extras else v  # × k
            for key, v in schedule.extras.items()}
    return Schedule(schedule.instance, schedule.algorithm, schedule.total_utility * k, jobs,
                    more)


def _over(x: Any, k: float) -> Any:
    """``x / k`` for a number, anything else (None, a message) as it is."""
    return x / k if isinstance(x, (int, float)) and not isinstance(x, bool) else x


def unscaled_report(report: SolveReport, k: float) -> SolveReport:
    """``solve``'s report of the scaled instance in the given instance's units (the gap is a
    ratio and stays)."""
    return replace(report, objective=report.objective / k, bound=report.bound / k,
                   solver_objective=_over(report.solver_objective, k),
                   history=tuple((s, _over(inc, k), _over(b, k))
                                 for s, inc, b in report.history),
                   floor_runs={name: _over(v, k) for name, v in report.floor_runs.items()})


def unscaled_progress(on_progress: Progress | None, k: float) -> Progress | None:
    """``on_progress`` hearing the scaled solve in the given instance's units."""
    if on_progress is None:
        return None
    told = on_progress
    return lambda s, inc, b: told(s, _over(inc, k), _over(b, k))


def unscaled_schedules(on_schedule: Callable[[Schedule], None] | None,
                       k: float) -> Callable[[Schedule], None] | None:
    """``on_schedule`` told the scaled solve's schedules in the given instance's units."""
    if on_schedule is None:
        return None
    told = on_schedule
    return lambda schedule: told(scaled_schedule(schedule, 1.0 / k))


def unscaled_rounds(on_round: Callable[[Any], None] | None,
                    k: float) -> Callable[[Any], None] | None:
    """``on_round`` hearing column generation's rounds (``colgen.Round``) in the given
    instance's units."""
    if on_round is None:
        return None
    told = on_round
    return lambda r: told(replace(r, lp=_over(r.lp, k), bound=_over(r.bound, k),
                                  incumbent=_over(r.incumbent, k)))


def scaled_given(given: Mapping[str, Schedule], k: float) -> dict[str, Schedule]:
    """The caller's floor schedules (checked on the given instance) in the scaled units."""
    return {name: scaled_schedule(s, k) for name, s in given.items()}
