"""OASiS resource prices and their bounds (SPEC §3, the paper's §IV-A).

A resource's price grows exponentially with its utilisation ``g/C`` from a lower bound ``L``
(nothing used) to an upper bound ``U`` (full)::

    p_h[t][r] = L_w[r] · (U_w[r] / L_w[r]) ^ (g_h[t][r] / C_h[r])       (worker pool)
    q_k[t][r] = L_ps[r] · (U_ps[r] / L_ps[r]) ^ (g_k[t][r] / C_k[r])    (PS pool)

Default bounds, derived from the instance (SPEC §3):

* ``U_w[r] = max_i f_i(d_i_min) / α_i[r]`` over jobs with ``α_i[r] > 0``, where
  ``d_i_min = ceil(V_i / N_i)``: a full resource costs more, per unit of demand, than any job can
  gain, so a job never pays to use a full resource. ``U_ps`` alike with ``β``.
* ``OPT_lb = max_i f_i(ceil(V_i / w_max_i))`` (0 when the job cannot finish by the horizon):
  the best utility one job earns alone in the empty cluster, ``w_max_i`` being the most
  workers (≤ N_i, with their PSs) one slot of the empty cluster takes. It is a lower bound on OPT.
* ``L_w[r] = OPT_lb / (2·n·T·Σ_h C_h[r])`` with ``n`` the number of (pool, resource) pairs of
  positive total capacity. Each pair then contributes ``T·Σ_h L_w[r]·C_h[r] = OPT_lb/(2n)`` to the
  initial dual objective, so ``D0 = Σ_pairs OPT_lb/(2n) = OPT_lb/2 ≤ OPT/2``: ``n`` splits the
  half of OPT_lb evenly over the priced pairs.
* ``α = max over priced pairs of max(1, ln(U/L))``; OASiS is 2α-competitive when each job's
  demand is small next to a server's capacity.

A (pool, r) pair with zero total capacity has no price (0 here) and is left out of ``n`` and
``α``; a pair no job demands keeps ``U = L`` (constant price). Scale factors multiply the
defaults (``U·u_scale``, ``L·l_scale``); should ``U < L`` follow, ``U = L`` is used (prices must
not fall as utilisation rises) and a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..limits import on_time
from ..model import Instance, SlotCounts, ps_needed
from ..utility import value as utility_value

POOLS = ("worker", "ps")


@dataclass(frozen=True)
class PriceBounds:
    """Price bounds per pool and resource; arrays have shape (R,).

    ``worker_priced[r]`` (``ps_priced[r]``) is False for a pair with zero total capacity: its
    price is 0 and it counts in neither ``n`` nor ``α``.
    """

    U_w: np.ndarray
    L_w: np.ndarray
    U_ps: np.ndarray
    L_ps: np.ndarray
    worker_priced: np.ndarray
    ps_priced: np.ndarray
    opt_lb: float
    notes: tuple[str, ...] = field(default=())

    @property
    def n(self) -> int:
        """Number of priced (pool, resource) pairs."""
        return int(self.worker_priced.sum() + self.ps_priced.sum())

    @property
    def alpha(self) -> float:
        """``α = max over priced pairs of max(1, ln(U/L))`` (1 when nothing is priced)."""
        logs = [1.0]
        for U, L, on in ((self.U_w, self.L_w, self.worker_priced),
                         (self.U_ps, self.L_ps, self.ps_priced)):
            for r in np.flatnonzero(on):
                if L[r] > 0:
                    logs.append(math.log(U[r] / L[r]))
        return max(logs)

    def to_dict(self, resources: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for pool, U, L, on in (("worker", self.U_w, self.L_w, self.worker_priced),
                               ("ps", self.U_ps, self.L_ps, self.ps_priced)):
            out[pool] = {res: {"U": float(U[r]), "L": float(L[r])}
                         for r, res in enumerate(resources) if on[r]}
        out.update(opt_lb=self.opt_lb, n=self.n)
        return out


def max_workers_alone(instance: Instance, i: int) -> int:
    """``w_max``: the most workers job i runs in one slot of the empty cluster, with its PSs."""
    job = instance.jobs[i]
    per_w = _fit_counts(instance.worker_capacity, instance.worker_demand[i], job.max_workers)
    z_cap = int(ps_needed(job.max_workers, job.ps_ratio))
    per_p = _fit_counts(instance.ps_capacity, instance.ps_demand[i], z_cap)
    w = min(job.max_workers, int(per_w.sum()))
    z = int(per_p.sum())
    if ps_needed(w, job.ps_ratio) > z:
        # The most workers z PSs serve is about z·γ: jump there, then correct the float
        # rounding by single steps (a loop from N down would take N steps for N = 10^12).
        top = w
        w = min(top, math.floor(z * job.ps_ratio + 1e-9))
        while w > 0 and ps_needed(w, job.ps_ratio) > z:
            w -= 1
        while w < top and ps_needed(w + 1, job.ps_ratio) <= z:
            w += 1
    return w


def _fit_counts(capacity: np.ndarray, demand: np.ndarray, cap: int) -> np.ndarray:
    """Per server, ``min(cap, min_{r: d_r>0} floor(C[r]/d[r]))``."""
    need = demand > 0
    if not need.any():
        return np.full(capacity.shape[0], cap, dtype=np.int64)
    fit = np.floor(capacity[:, need] / demand[need] + 1e-9).min(axis=1)
    return np.minimum(fit, cap).astype(np.int64)


def opt_lower_bound(instance: Instance) -> float:
    """``OPT_lb = max_i f_i(ceil(V_i / w_max_i))`` over jobs that can finish alone (SPEC §3)."""
    return max((job_bound_terms(instance, i).opt_lb for i in range(instance.num_jobs)),
               default=0.0)


def default_bounds(instance: Instance) -> PriceBounds:
    """The bounds of SPEC §3, derived from the instance (see the module docstring). A pass
    over the jobs before the first arrival (2.3 s on the 82 247 jobs of the whole Philly
    trace), so it keeps ``limits.deadline`` too: the last resort of a time-limited solve
    (``lifeline``) ran OASiS's to 6.5 s past the instant it had to write by."""
    terms = []
    for i in range(instance.num_jobs):
        on_time()
        terms.append(job_bound_terms(instance, i))
    R = len(instance.resources)
    u_w = np.max([t.u_w for t in terms], axis=0) if terms else np.full(R, -np.inf)
    u_ps = np.max([t.u_ps for t in terms], axis=0) if terms else np.full(R, -np.inf)
    opt_lb = max((t.opt_lb for t in terms), default=0.0)
    return bounds_from_terms(instance, u_w, u_ps, opt_lb)


@dataclass(frozen=True)
class JobBoundTerms:
    """One job's share in the default bounds; the bounds are maxima of these over the jobs.

    ``u_w[r] = f_i(ceil(V_i/N_i)) / α_i[r]`` (−inf where ``α_i[r] = 0``: the job does not
    use r), ``u_ps`` alike with β, and ``opt_lb = f_i(ceil(V_i/w_max_i))`` (0 when the job
    cannot finish alone by the horizon)."""

    u_w: np.ndarray
    u_ps: np.ndarray
    opt_lb: float


def job_bound_terms(instance: Instance, i: int) -> JobBoundTerms:
    """Job i's ``JobBoundTerms``: what an online estimate of the bounds learns at its
    arrival (oasis-adaptive), and what ``default_bounds`` takes the maximum of."""
    job = instance.jobs[i]
    # f_i(d_min) with d_min = ceil(V_i/N_i), read from the utility family itself (d_min may
    # exceed the horizon; SPEC §3 takes it as written).
    fmax = utility_value(job.utility, max(1, math.ceil(job.workload / job.max_workers)))

    def per_unit(demand: np.ndarray) -> np.ndarray:
        out = np.full(demand.shape, -np.inf)
        np.divide(fmax, demand, out=out, where=demand > 0)
        return out

    w = max_workers_alone(instance, i)
    lb = 0.0
    if w > 0:
        d = math.ceil(job.workload / w)
        if job.arrival + d - 1 <= instance.horizon - 1:
            lb = instance.utility_at(i, job.arrival + d - 1)
    return JobBoundTerms(per_unit(instance.worker_demand[i]), per_unit(instance.ps_demand[i]),
                         lb)


def bounds_from_terms(instance: Instance, u_w: np.ndarray, u_ps: np.ndarray,
                      opt_lb: float, notes: tuple[str, ...] = ()) -> PriceBounds:
    """SPEC §3's bounds from given maxima: ``U = u`` on priced pairs some job uses (``u[r] >
    −inf``), ``U = L`` on the others, and ``L = opt_lb / (2·n·T·Σ C[r])``. With the maxima over
    all jobs this is ``default_bounds``; with the jobs seen so far, oasis-adaptive's estimate."""
    R = len(instance.resources)
    T = instance.horizon
    worker_total = instance.worker_capacity.sum(axis=0) if instance.worker_names else np.zeros(R)
    ps_total = instance.ps_capacity.sum(axis=0) if instance.ps_names else np.zeros(R)
    worker_priced = worker_total > 0
    ps_priced = ps_total > 0
    n = int(worker_priced.sum() + ps_priced.sum())
    out_notes = list(notes)
    if opt_lb <= 0:
        out_notes.append("OPT_lb = 0: no job can earn utility alone in the empty cluster; "
                         "every job is rejected")

    def pool(total: np.ndarray, priced: np.ndarray,
             u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        L = np.zeros(R)
        U = np.zeros(R)
        if opt_lb <= 0:
            return U, L
        for r in np.flatnonzero(priced):
            L[r] = opt_lb / (2.0 * n * T * total[r])
            U[r] = float(u[r]) if u[r] > -np.inf else L[r]
        return U, L

    U_w, L_w = pool(worker_total, worker_priced, np.asarray(u_w, dtype=float))
    U_ps, L_ps = pool(ps_total, ps_priced, np.asarray(u_ps, dtype=float))
    return _floor_u(PriceBounds(U_w, L_w, U_ps, L_ps, worker_priced, ps_priced, float(opt_lb),
                                tuple(out_notes)), instance.resources)


def scaled(bounds: PriceBounds, u_scale: float, l_scale: float,
           resources: tuple[str, ...]) -> PriceBounds:
    """``U·u_scale`` and ``L·l_scale``; ``U < L`` afterwards is raised to ``U = L`` with a note."""
    for name, x in (("u_scale", u_scale), ("l_scale", l_scale)):
        if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
            raise InputError(name, f"must be a positive number, got {x!r}")
    if u_scale == 1.0 and l_scale == 1.0:
        return bounds
    with np.errstate(over="ignore", under="ignore"):
        out = replace(bounds, U_w=bounds.U_w * u_scale, L_w=bounds.L_w * l_scale,
                      U_ps=bounds.U_ps * u_scale, L_ps=bounds.L_ps * l_scale)
    lost = any(((L > 0) & (L * l_scale == 0)).any() for L in (bounds.L_w, bounds.L_ps))
    if lost or _out_of_range(out) is not None:
        name, x = max((("u_scale", u_scale), ("l_scale", l_scale)),
                      key=lambda p: abs(math.log(p[1])))
        raise InputError(name, f"{float(x)!r} takes the price bounds out of a double's range "
                               "(U·u_scale, L·l_scale and U/L must be finite and L positive)")
    return _floor_u(out, resources)


def _out_of_range(b: PriceBounds) -> str | None:
    """The pool ("worker", "ps") where a priced pair's U, L or U/L is not a finite double, else
    None: OASiS's α = ln(U/L) would be infinite and its prices NaN."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for pool, U, L, on in (("worker", b.U_w, b.L_w, b.worker_priced),
                               ("ps", b.U_ps, b.L_ps, b.ps_priced)):
            U, L = U[on], L[on]
            pos = L > 0
            if not (np.isfinite(U).all() and np.isfinite(L).all()
                    and np.isfinite(U[pos] / L[pos]).all()):
                return pool
    return None


#: The keys of a caller's price bounds (``from_mapping``).
BOUND_KEYS = ("U_w", "L_w", "U_ps", "L_ps")


def from_mapping(data: PriceBounds | Mapping[str, Any], instance: Instance) -> PriceBounds:
    """Bounds given by the caller: a ``PriceBounds`` or a mapping with ``U_w, L_w, U_ps, L_ps``
    (R-vectors); pairs with zero total capacity stay unpriced whatever is given."""
    if isinstance(data, PriceBounds):
        return _floor_u(data, instance.resources)
    # a list or string would answer ``"U_w" in data`` with False and silently give the
    # defaults: refuse anything but a mapping, and any key that is not a bound's name
    if not isinstance(data, Mapping):
        raise InputError("bounds", "expected an object with keys U_w, L_w, U_ps, L_ps, "
                                   f"got {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in BOUND_KEYS)
    if unknown:
        raise InputError("bounds", f"unknown key {unknown[0]!r}; expected some of "
                                   + ", ".join(BOUND_KEYS))
    base = default_bounds(instance)
    R = len(instance.resources)
    arrays: dict[str, np.ndarray] = {}
    for key in BOUND_KEYS:
        if key not in data:
            arrays[key] = getattr(base, key)
            continue
        given = data[key]
        if isinstance(given, np.ndarray):
            given = given.tolist()
        if (not isinstance(given, (list, tuple))
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for v in given)):
            raise InputError(f"bounds.{key}", f"expected a list of {R} numbers "
                                              f"(one per resource), got {given!r:.60}")
        a = np.asarray(given, dtype=float)
        if a.shape != (R,):
            raise InputError(f"bounds.{key}", f"expected {R} values, got {a.size}")
        if not np.all(np.isfinite(a)) or (a < 0).any():
            raise InputError(f"bounds.{key}", "must be finite and non-negative")
        arrays[key] = a
    for key, on in (("L_w", base.worker_priced), ("L_ps", base.ps_priced)):
        if (arrays[key][on] <= 0).any():
            raise InputError(f"bounds.{key}", "must be positive on every priced resource")
    out = PriceBounds(arrays["U_w"], arrays["L_w"], arrays["U_ps"], arrays["L_ps"],
                      base.worker_priced, base.ps_priced, base.opt_lb,
                      base.notes + ("price bounds given by the caller",))
    pool = _out_of_range(out)
    if pool is not None:
        U, L = ("U_w", "L_w") if pool == "worker" else ("U_ps", "L_ps")
        raise InputError("bounds", f"{U}/{L} overflows a double (α = ln(U/L) would be "
                                   "infinite)")
    return _floor_u(out, instance.resources)


def _floor_u(b: PriceBounds, resources: tuple[str, ...]) -> PriceBounds:
    """Zero the unpriced pairs and raise ``U`` to ``L`` where it fell below (with a note)."""
    notes = list(b.notes)
    arrays = {}
    for pool, U, L, on in (("worker", b.U_w, b.L_w, b.worker_priced),
                           ("ps", b.U_ps, b.L_ps, b.ps_priced)):
        U = np.where(on, U, 0.0)
        L = np.where(on, L, 0.0)
        low = on & (U < L)
        if low.any():
            names = ", ".join(resources[r] for r in np.flatnonzero(low))
            notes.append(f"U < L on the {pool} pool ({names}): U set to L, constant price")
            U = np.where(low, L, U)
        arrays[pool] = (U, L)
    return replace(b, U_w=arrays["worker"][0], L_w=arrays["worker"][1],
                   U_ps=arrays["ps"][0], L_ps=arrays["ps"][1], notes=tuple(notes))


class PriceState:
    """Used resources and prices of one pool, updated in place as jobs are admitted.

    ``used`` (T, S, R) is ``g[t][s][r]``, ``price`` (T, S, R) the price
    ``L[r]·exp(ln(U[r]/L[r]) · g/C[s][r])`` (0 on unpriced pairs; ``L`` on a server whose own
    capacity for r is 0), ``free`` (T, S, R) is ``C − g``. ``touched`` (T,) marks the slots
    any admission used; all other slots hold the same prices (``L``) and free capacity (``C``).
    """

    def __init__(self, capacity: np.ndarray, U: np.ndarray, L: np.ndarray, horizon: int) -> None:
        S, R = capacity.shape
        self.capacity = capacity
        self.L = L
        ratio = np.divide(U, L, out=np.ones_like(L, dtype=float), where=L > 0)
        self.log_ratio = np.log(ratio)  # (R,); 0 on unpriced pairs
        self.inv_cap = np.divide(1.0, capacity, out=np.zeros_like(capacity, dtype=float),
                                 where=capacity > 0)  # (S, R); 0 where a server lacks r
        self.touched = np.zeros(horizon, dtype=bool)  # slots some admitted job uses
        self.used = np.zeros((horizon, S, R))
        self.free = np.broadcast_to(capacity, (horizon, S, R)).copy()
        self.price = np.broadcast_to(L, (horizon, S, R)).copy()

    def add(self, counts: np.ndarray, demand: np.ndarray) -> None:
        """Admit ``counts`` (T, S) units of ``demand`` (R,): update g, free and the prices of
        the slots it touches."""
        slots = np.flatnonzero(counts.any(axis=1))
        if slots.size == 0:
            return
        self.touched[slots] = True
        load = counts[slots, :, None] * demand[None, None, :]  # (t, S, R)
        self.used[slots] += load
        self.free[slots] = self.capacity[None] - self.used[slots]
        self.price[slots] = self.L * np.exp(self.log_ratio * self.used[slots] * self.inv_cap)

    def add_counts(self, counts: SlotCounts, demand: np.ndarray) -> None:
        """``add`` for sparse counts: the same arithmetic on the slots they touch only."""
        if counts.slot.size == 0:
            return
        # Only the (slot, server) entries change (each appears once in SlotCounts): the same
        # elementwise arithmetic as ``add`` on them, none on the servers the job leaves alone.
        t, h = counts.slot, counts.server
        self.touched[t] = True
        used = self.used[t, h] + counts.count[:, None] * demand  # (entries, R)
        self.used[t, h] = used
        self.free[t, h] = self.capacity[h] - used
        self.price[t, h] = self.L * np.exp(self.log_ratio * used * self.inv_cap[h])

    def rebound(self, U: np.ndarray, L: np.ndarray) -> None:
        """New bounds for the same use ``g``: every slot re-priced (oasis-adaptive, when its
        estimate of U or L changes)."""
        self.L = L
        ratio = np.divide(U, L, out=np.ones_like(L, dtype=float), where=L > 0)
        self.log_ratio = np.log(ratio)
        self.price = self.L * np.exp(self.log_ratio * self.used * self.inv_cap)

    def dual_cost(self) -> float:
        """``Σ_t Σ_s Σ_r price·C``."""
        return float(np.einsum("tsr,sr->", self.price, self.capacity))


def slot_classes(*states: PriceState) -> np.ndarray:
    """(T,) labels for ``best_schedule(classes=...)``: a slot some pool's admissions touched is
    its own class (its index); all untouched slots share the class −1 (same prices and free
    capacity in every pool)."""
    touched = states[0].touched
    for s in states[1:]:
        touched = touched | s.touched
    return np.where(touched, np.arange(touched.size), -1)
