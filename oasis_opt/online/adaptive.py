"""oasis-adaptive: OASiS without oracle price bounds (issue 13).

OASiS's default bounds (SPEC §3) are computed from the whole instance — every job's utility and
demand, future arrivals included — which an online scheduler cannot know. oasis-adaptive runs
the same online loop (``oasis.run``), the same dual subroutine and the same price functions
(``prices``), but sets U and L from the jobs seen so far, updating them at each arrival
*before* the job's decision:

* per job i, ``prices.job_bound_terms`` gives ``f_i(ceil(V_i/N_i))/α_i[r]`` (and β alike) and
  ``f_i(ceil(V_i/w_max_i))``, the utility it earns alone in the empty cluster;
* ``u[r]`` = the running maximum of the first over the jobs seen, ``o`` that of the second;
* doubling (default): the estimates move in powers of two, ``Û[r] = u_first[r]·2^k`` with the
  smallest k such that ``Û[r] ≥ u[r]``, and ``Ô = o_first·2^m`` with the largest m such that
  ``Ô ≤ o``; so ``u ≤ Û < 2u`` and ``o/2 < Ô ≤ o``, and the bounds change only
  ``O(log(u_max/u_first) + log(o_max/o_first))`` times, not at every arrival;
* ``prices.bounds_from_terms(instance, Û_w, Û_ps, Ô)``: ``U = Û``, ``L = Ô/(2·n·T·ΣC)``; the
  capacities and the horizon are known to the operator, only the jobs are not.

When the estimate changes, every slot is re-priced from the resources in use
(``PriceState.rebound``). Because the current job is seen before its decision, ``Û ≥
f_i(d_min)/α_i[r]`` still holds for it, so a job never pays to fill a resource, as in OASiS.

What it gives up (docs/oasis.md): the 2α proof needs fixed bounds — ``D0 ≤ OPT/2`` and
``ΔD ≤ α·ΔP`` at every arrival. A bound change raises the price of resources already in use
without any primal gain, so ``ΔD > α·ΔP`` at those arrivals (``relationship_failures`` lists
them), and no competitive ratio is claimed. What remains: ``D_cert`` at the final prices is
still a feasible dual of the schedule-packing LP, so ``D_cert ≥ OPT`` holds exactly as for OASiS;
``D0 = 0`` (nothing seen yet).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ..limits import OutOfTime
from ..model import Instance, Schedule
from . import oasis
from . import prices as pr

NAME = "oasis-adaptive"


class BoundEstimate:
    """The running (optionally doubled) estimate of U and OPT_lb over the jobs seen so far."""

    def __init__(self, instance: Instance, doubling: bool = True) -> None:
        R = len(instance.resources)
        self.instance = instance
        self.doubling = doubling
        self.u_w = np.full(R, -np.inf)  # running maxima of the per-job terms
        self.u_ps = np.full(R, -np.inf)
        self.opt_lb = 0.0
        self._first_w = np.full(R, math.nan)  # the first positive term: doubling's base
        self._first_ps = np.full(R, math.nan)
        self._first_lb = math.nan
        self._current: tuple[bytes, bytes, float] | None = None
        self.updates = 0

    @staticmethod
    def _up(x: np.ndarray, base: np.ndarray) -> np.ndarray:
        """``base·2^k`` with the smallest integer k ≥ 0 such that it is ≥ x (−inf stays)."""
        out = x.copy()
        ok = np.isfinite(x) & (x > 0)
        with np.errstate(over="ignore", divide="ignore"):
            k = np.ceil(np.log2(x[ok] / base[ok]) - 1e-12)
            up = base[ok] * np.exp2(np.maximum(k, 0.0))
        out[ok] = np.where(np.isfinite(up), up, x[ok])  # past doubles' range: x itself
        return out

    def see(self, i: int) -> pr.PriceBounds | None:
        """Take job i into the estimate; the new bounds if the estimate changed, else None."""
        t = pr.job_bound_terms(self.instance, i)
        self.u_w = np.maximum(self.u_w, t.u_w)
        self.u_ps = np.maximum(self.u_ps, t.u_ps)
        self.opt_lb = max(self.opt_lb, t.opt_lb)
        for first, u in ((self._first_w, self.u_w), (self._first_ps, self.u_ps)):
            fresh = np.isnan(first) & np.isfinite(u) & (u > 0)
            first[fresh] = u[fresh]
        if math.isnan(self._first_lb) and self.opt_lb > 0:
            self._first_lb = self.opt_lb
        if self.doubling:
            U_w = self._up(self.u_w, self._first_w)
            U_ps = self._up(self.u_ps, self._first_ps)
            o = self.opt_lb
            ratio = o / self._first_lb if o > 0 else 0.0
            if 0 < ratio < math.inf:  # first_lb·2^k ≤ o (ldexp: no overflow of 2^k alone)
                o = math.ldexp(self._first_lb, math.floor(math.log2(ratio) + 1e-12))
        else:
            U_w, U_ps, o = self.u_w, self.u_ps, self.opt_lb
        key = (U_w.tobytes(), U_ps.tobytes(), float(o))
        if key == self._current:
            return None
        self._current = key
        self.updates += 1
        return pr.bounds_from_terms(self.instance, U_w, U_ps, o,
                                    ("bounds estimated online from the jobs seen so far",))

    def initial(self) -> pr.PriceBounds:
        """Before any arrival nothing is known: OPT_lb = 0, every price 0."""
        R = len(self.instance.resources)
        return pr.bounds_from_terms(self.instance, np.full(R, -np.inf), np.full(R, -np.inf),
                                    0.0, ("bounds estimated online from the jobs seen so far",))


def run(instance: Instance, *, u_scale: float = 1.0, l_scale: float = 1.0,
        doubling: bool = True, certificate: bool = True, **_: Any) -> Schedule:
    """OASiS with U and L estimated online (module docstring); ``u_scale``/``l_scale``
    multiply the estimates (to study a systematic misestimate on top of the online one)."""
    est = BoundEstimate(instance, doubling=doubling)
    try:
        sched = oasis.run(instance, u_scale=u_scale, l_scale=l_scale, bounds=est.initial(),
                          certificate=certificate, bounds_update=est.see)
    except OutOfTime as err:
        if err.partial is not None:  # OASiS's partial schedule, under this name
            partial = err.partial
            err.partial = lambda: replace(partial(), algorithm=NAME)
        raise
    return replace(sched, algorithm=NAME, extras={**sched.extras, "doubling": doubling})
