"""OASiS: the online primal-dual scheduler (SPEC §3; Bao et al., INFOCOM 2018, Algorithm 1).

Jobs are taken in arrival order (ties: file order). For each, the dual subroutine
(``subroutine.best_schedule``) finds the schedule of largest payoff ``u_i`` at the current prices
and within the free capacity; the job is admitted, irrevocably, when ``u_i > 1e-9``; its
resources are added to ``g`` and the prices of the slots it uses rise.

Certificate (``extras``; see docs/oasis.md): the dual objective

    D = Σ_i u_i + Σ_t Σ_h Σ_r p_h[t][r]·C_h[r] + Σ_t Σ_k Σ_r q_k[t][r]·C_k[r]

before the first arrival (``D0 = OPT_lb/2`` with the default bounds), after each arrival
(``D_after``) and at the end (``D_final``); the primal ``P = Σ`` admitted utilities; ``α``; the
arrivals where ``α·ΔP < ΔD`` (``relationship_failures``); and the certified upper bound

    D_cert = Σ_i max(0, u*_i) + Σ p·C + Σ q·C   (final prices)

where ``u*_i`` is job i's best payoff at the final prices against the *full* capacities. Any
non-negative prices with such ``u*`` are a feasible dual of the schedule-packing LP (SPEC §2),
so ``D_cert ≥ LP ≥ OPT``. ``D_final`` may fall below OPT: a schedule blocked by a small leftover
capacity is never priced during the run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import InputError
from ..limits import OutOfTime, on_time
from ..model import Instance, Schedule, SlotCounts
from . import prices as pr
from .subroutine import TIE_TOL, JobSpec, UnitPricer, best_schedule, payoff_upper_bound

#: A job is admitted when its best payoff exceeds this (SPEC §3 step 3).
ADMIT_TOL = 1e-9


def run(
    instance: Instance,
    *,
    u_scale: float = 1.0,
    l_scale: float = 1.0,
    bounds: pr.PriceBounds | Mapping[str, Any] | None = None,
    certificate: bool = True,
    bounds_update: Callable[[int], pr.PriceBounds | None] | None = None,
    **_: Any,
) -> Schedule:
    """Run OASiS on ``instance``.

    Args:
        u_scale, l_scale: multiply the price bounds U and L (estimation-error study); must be
            positive (``InputError`` otherwise).
        bounds: price bounds to use instead of the defaults of SPEC §3 (a ``PriceBounds`` or a
            mapping with R-vectors ``U_w, L_w, U_ps, L_ps``); the scales apply on top.
        certificate: compute ``D_cert`` (one more subroutine call per job at the end).
        bounds_update: called with each job's index before its decision (oasis-adaptive's
            online estimate); a returned ``PriceBounds`` (scales applied on top) replaces the
            current bounds and every slot is re-priced from the resources in use. The jump in
            ``Σ p·C`` counts in that arrival's ΔD. None: the bounds stay fixed (OASiS).
    """
    res = instance.resources
    base = pr.default_bounds(instance) if bounds is None else pr.from_mapping(bounds, instance)
    b = pr.scaled(base, u_scale, l_scale, res)
    alpha = b.alpha
    T = instance.horizon
    wstate = pr.PriceState(instance.worker_capacity, b.U_w, b.L_w, T)
    pstate = pr.PriceState(instance.ps_capacity, b.U_ps, b.L_ps, T)

    order = np.argsort(instance.arrival, kind="stable")  # arrival order, ties: file order
    workers: dict[int, SlotCounts] = {}  # sparse: memory grows with the admitted work
    pss: dict[int, SlotCounts] = {}
    payoff: dict[str, float | None] = {}
    d_after: dict[str, float] = {}
    failures: list[dict[str, Any]] = []
    decision_s: list[float] = []
    def dual_cost() -> float:
        """``Σ p·C`` over the horizon (D0 at the start), refused where it is no finite double:
        ``--l-scale 1e308`` kept every bound finite and gave D0, D_final and D_cert null."""
        cost = wstate.dual_cost() + pstate.dual_cost()
        if not math.isfinite(cost):
            name, x = ("l_scale", l_scale) if l_scale != 1.0 else ("bounds", None)
            raise InputError(name, f"{'' if x is None else repr(float(x)) + ' '}takes the dual "
                                   "cost Σ p·C over the horizon (the certificate's D) out of a "
                                   "double's range")
        return cost

    price_cost = dual_cost()
    D0 = price_cost
    u_sum = 0.0
    P = 0.0
    D = D0
    bound_updates = 0
    # Jobs of workload 1 (three quarters of the Philly trace) share one UnitPricer's tables
    # between two changes of the prices (an admission, new bounds): the same answer as
    # best_schedule, without rebuilding the per-slot tables at every decision.
    unit: UnitPricer | None = None
    for i in map(int, order):
        try:
            on_time()  # a time-limited solve's floor (limits.deadline)
        except OutOfTime as err:  # the jobs admitted so far have their whole schedules
            err.partial = lambda: Schedule.from_counts(
                instance, "oasis", workers, pss,
                {"partial": f"stopped by the time limit at arrival {len(payoff) + 1} of "
                            f"{instance.num_jobs}"})
            raise
        job = instance.jobs[i]
        spec = JobSpec.from_instance(instance, i)
        start = time.perf_counter()
        new_bounds = bounds_update(i) if bounds_update is not None else None
        if new_bounds is not None:
            b = pr.scaled(new_bounds, u_scale, l_scale, res)
            alpha = b.alpha
            wstate.rebound(b.U_w, b.L_w)
            pstate.rebound(b.U_ps, b.L_ps)
            price_cost = dual_cost()
            bound_updates += 1
            unit = None
        if spec.workload == 1:
            if unit is None:
                unit = UnitPricer(wstate.price, pstate.price, wstate.free, pstate.free,
                                  pr.slot_classes(wstate, pstate))
            best = unit.best(spec)
        else:
            best = best_schedule(spec, wstate.price, pstate.price, wstate.free, pstate.free,
                                 pr.slot_classes(wstate, pstate))
        dP = 0.0
        admitted = best.payoff > ADMIT_TOL
        if admitted:
            workers[i], pss[i] = best.worker_counts, best.ps_counts
            wstate.add_counts(best.worker_counts, spec.worker_demand)
            pstate.add_counts(best.ps_counts, spec.ps_demand)
            unit = None
            u_sum += best.payoff
            dP = _earned(spec, best.worker_counts)
            P += dP
            price_cost = dual_cost()
        decision_s.append(time.perf_counter() - start)
        # SPEC §5: ≤ 0 for a rejected job; a payoff within the admission tolerance is 0.
        payoff[job.id] = (best.payoff if admitted else min(best.payoff, 0.0)) if best.fits \
            else None
        D_new = u_sum + price_cost
        dD = D_new - D
        if alpha * dP < dD - TIE_TOL * max(1.0, abs(dD)):
            failures.append({"job": job.id, "dP": dP, "dD": dD})
        D = D_new
        d_after[job.id] = D

    D_cert = None
    cert_s = 0.0
    if certificate:
        start = time.perf_counter()
        classes = pr.slot_classes(wstate, pstate)
        unit = UnitPricer(wstate.price, pstate.price, instance.worker_capacity,
                          instance.ps_capacity, classes)
        D_cert = price_cost + sum(_certified_payoff(instance, i, wstate.price, pstate.price,
                                                    classes, unit)
                                  for i in range(instance.num_jobs))
        cert_s = time.perf_counter() - start

    extras: dict[str, Any] = {
        "payoff": payoff,
        "D0": D0,
        "D_final": D,
        "D_cert": D_cert,
        "alpha": alpha,
        "two_alpha": 2.0 * alpha,
        "P": P,
        "D_after": d_after,
        "relationship_failures": failures,
        "max_job_share": _max_job_share(instance, workers, pss),
        "max_unit_share": _max_unit_share(instance),
        "bounds": b.to_dict(res),
        "u_scale": u_scale,
        "l_scale": l_scale,
        "notes": list(b.notes),
        **({"bound_updates": bound_updates} if bounds_update is not None else {}),
        "decision_ms_median": 1e3 * float(np.median(decision_s)) if decision_s else 0.0,
        "decision_seconds": float(sum(decision_s)),
        "certificate_seconds": cert_s,
    }
    return Schedule.from_counts(instance, "oasis", workers, pss, extras)


def _certified_payoff(instance: Instance, i: int, worker_price: np.ndarray,
                      ps_price: np.ndarray, classes: np.ndarray | None = None,
                      unit: UnitPricer | None = None) -> float:
    """``u*_i = max(0, best payoff at these prices against the full capacities)``; the exact
    subroutine runs only when a cheap upper bound leaves room for a positive payoff. ``unit``:
    a ``UnitPricer`` at the same prices, capacities and labels, for jobs of workload 1 (the
    same payoff; cheaper than the bound)."""
    spec = JobSpec.from_instance(instance, i)
    if unit is not None and spec.workload == 1:
        return max(0.0, unit.best(spec).payoff)
    args = (spec, worker_price, ps_price, instance.worker_capacity, instance.ps_capacity)
    if payoff_upper_bound(*args, classes) <= 0.0:
        return 0.0
    return max(0.0, best_schedule(*args, classes).payoff)


def _earned(job: JobSpec, y: SlotCounts) -> float:
    """f_i at the slot where the work first reaches V_i (read from the job's utility row, the
    numbers ``Instance.utility_at`` gives, without building the row again)."""
    # Entries are sorted by slot, so the entry where the running total first reaches V_i is
    # in that slot.
    slot = int(y.slot[np.searchsorted(np.cumsum(y.count), job.workload)])
    return float(job.utility[slot - job.arrival])


def _max_job_share(instance: Instance, workers: Mapping[int, SlotCounts],
                   pss: Mapping[int, SlotCounts]) -> float:
    """Largest share of one server resource one admitted job holds in one slot:
    ``max α_i[r]·y_ih(t)/C_h[r]`` (and alike for PSs). The 2α guarantee assumes it is small."""
    out = 0.0
    for counts, demand, cap in ((workers, instance.worker_demand, instance.worker_capacity),
                                (pss, instance.ps_demand, instance.ps_capacity)):
        inv = np.divide(1.0, cap, out=np.zeros_like(cap), where=cap > 0)  # (S, R)
        for i, c in counts.items():
            peak = np.zeros(cap.shape[0], dtype=np.int64)  # (S,) most units in one slot
            np.maximum.at(peak, c.server, c.count)
            out = max(out, float((peak[:, None] * demand[i][None, :] * inv).max(initial=0.0)))
    return out


def _max_unit_share(instance: Instance) -> float:
    """Largest share of a server resource one worker or PS of any job takes:
    ``max α_i[r]/C_h[r]`` over servers with ``C_h[r] > 0`` (and alike for PSs)."""
    out = 0.0
    for demand, cap in ((instance.worker_demand, instance.worker_capacity),
                        (instance.ps_demand, instance.ps_capacity)):
        if demand.size == 0 or cap.size == 0:
            continue
        inv = np.divide(1.0, cap, out=np.zeros_like(cap), where=cap > 0)
        out = max(out, float((demand[:, None, :] * inv[None]).max(initial=0.0)))
    return out if math.isfinite(out) else math.inf
