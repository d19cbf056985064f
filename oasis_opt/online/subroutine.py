"""OASiS's dual subroutine (SPEC §3, the paper's Algorithm 2): one job's best schedule at
given prices.

Given per-slot prices of every worker server ``p_h[t][r]`` and PS server ``q_k[t][r]``, the
capacity still free, and one job ``i``, find the schedule that maximises the payoff

    payoff = f_i(t̂ − a_i + 1) − Σ_t Σ_h (Σ_r α_i[r]·p_h[t][r])·y_h(t)
                               − Σ_t Σ_k (Σ_r β_i[r]·q_k[t][r])·z_k(t)

over schedules that do ``V_i`` units of work in slots ``a_i … t̂``, with at most ``N_i`` workers
and ``ceil(y(t)/γ_i)`` PSs per slot, within the free capacity.

1. Per slot, a worker on h costs ``c_h(t) = Σ_r α_i[r]·p_h[t][r]`` and h takes at most
   ``n_h(t) = min_{r: α_i[r]>0} floor(free_h[t][r]/α_i[r])`` workers (``N_i`` when α_i = 0).
   ``Wcost_t(w)`` = cost of the ``w`` cheapest workers (greedy by unit cost, ties within
   ``1e-9·max(1,|c|)`` to the lower server index); ``Pcost_t(z)`` alike;
   ``cost_t(w) = Wcost_t(w) + Pcost_t(ceil(w/γ_i))``, ``+∞`` where it does not fit.
2. ``best_t[v] = min_{0≤w≤min(N_i,v)} best_{t−1}[v−w] + cost_t(w)``, ``v = 0 … V_i``,
   ``best_{a_i−1} = [0, ∞, …]``. With non-negative prices ``cost_t`` is non-decreasing in ``w``,
   hence ``best_t`` in ``v``, so states above ``V_i`` (over-work) are never cheaper and the state
   space stops at ``V_i``.
3. ``payoff(t̂) = f_i(t̂ − a_i + 1) − best_t̂[V_i]``; the largest wins, ties to the earliest t̂.
4. Backtracking from t̂ down to ``a_i``: with ``v`` units left, slot t takes the fewest ``w`` with
   ``best_{t−1}[v−w] + cost_t(w)`` equal (within tolerance) to ``best_t[v]``: work goes as
   early as it can at equal cost.

The function is pure (arrays in, arrays out) so that it doubles as the pricing oracle of column
generation: pass LP duals of the capacity rows as prices and the full capacities as ``free``;
the reduced cost of the returned column is ``payoff − μ_i`` (μ_i the dual of ``Σ_l x_il ≤ 1``).

Cost: O(S·(H + K)·N) to build the slot tables and O(S·N·V) for the DP, S = T − a_i slots; the
only Python loops are over slots and worker counts, never over servers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..limits import check_allocation, max_memory
from ..model import FIT_EPS, Instance, SlotCounts, ps_needed

#: Two costs or payoffs are equal when they differ by at most ``TIE_TOL·max(1, |x|)`` (SPEC §3).
TIE_TOL = 1e-9


@dataclass(frozen=True)
class JobSpec:
    """One job's data as the subroutine reads it.

    ``worker_demand`` α and ``ps_demand`` β have shape (R,); ``utility`` has shape (≥ T − a,)
    with ``utility[d-1] = f(d)`` (a row of ``Instance.utility_table``).
    """

    arrival: int
    workload: int
    max_workers: int
    ps_ratio: float
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    utility: np.ndarray
    place: str = ""  # where the job is in its file (``jobs[3]``), for size refusals

    @classmethod
    def from_instance(cls, instance: Instance, i: int) -> JobSpec:
        job = instance.jobs[i]
        return cls(job.arrival, job.workload, job.max_workers, float(job.ps_ratio),
                   instance.worker_demand[i], instance.ps_demand[i], instance.utility_row(i),
                   f"jobs[{i}]")


@dataclass(frozen=True)
class BestSchedule:
    """The subroutine's answer.

    ``worker_counts`` / ``ps_counts``: the schedule as sparse (slot, server, count) entries
    (empty when nothing fits); ``workers`` (T, H) and ``ps`` (T, K) are the same as dense int64
    arrays, built on first use. ``cost`` the priced cost ``best_t̂[V]`` (inf when nothing
    fits); ``t_hat`` the chosen last slot (None when nothing fits; the work may complete earlier
    only at a cost tie, never later); ``utility`` ``f(t̂ − a + 1)``; ``payoff = utility − cost``
    (−inf when nothing fits).
    """

    payoff: float
    cost: float
    t_hat: int | None
    utility: float
    worker_counts: SlotCounts
    ps_counts: SlotCounts
    shape: tuple[int, int, int]  # (T, H, K)

    @property
    def fits(self) -> bool:
        return self.t_hat is not None

    @cached_property
    def workers(self) -> np.ndarray:
        return self.worker_counts.to_dense(self.shape[0], self.shape[1])

    @cached_property
    def ps(self) -> np.ndarray:
        return self.ps_counts.to_dense(self.shape[0], self.shape[2])


def _tol(x: np.ndarray | float) -> np.ndarray | float:
    return TIE_TOL * np.maximum(1.0, np.abs(x))


def fit_counts(free: np.ndarray, demand: np.ndarray, cap: int, start: int,
               horizon: int) -> np.ndarray:
    """(horizon − start, S): ``min(cap, min_{r: d_r>0} floor(free[t][s][r] / d_r))``, ≥ 0.

    ``free`` is (T, S, R), or (S, R) for the same free capacity in every slot.
    """
    n_slots = horizon - start
    S = free.shape[-2]
    need = demand > 0
    if not need.any():
        return np.full((n_slots, S), cap, dtype=np.int64)
    f = free[start:] if free.ndim == 3 else free[None]
    rs = need.nonzero()[0].tolist()
    # min_r floor(x_r + ε) = floor(min_r x_r + ε): floor and adding a constant are
    # monotone, so the minimum can come first; one pairwise minimum per resource on (T, S)
    # planes is several times faster than a reduction over the short last axis.
    # (ε = FIT_EPS absorbs float noise in g = Σ α·y, values like 2.9999999999999996.)
    n = f[..., rs[0]] / demand[rs[0]]
    for r in rs[1:]:
        np.minimum(n, f[..., r] / demand[r], out=n)
    n += FIT_EPS
    np.floor(n, out=n)
    np.maximum(n, 0, out=n)
    np.minimum(n, cap, out=n)
    n = n.astype(np.int64)
    return np.broadcast_to(n, (n_slots, S)) if free.ndim == 2 else n


def _first_and_inverse(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(labels, return_index=True, return_inverse=True)[1:]`` by the same stable
    sort, without its general machinery (once per decision): each distinct label's first
    position, in label order, and every position's index into them."""
    perm = labels.argsort(kind="stable")
    ordered = labels[perm]
    new = np.empty(labels.size, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inv = np.empty(labels.size, dtype=np.int64)
    inv[perm] = new.cumsum() - 1
    return perm[new], inv


def _tie_order(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(S, H) server order per slot: ascending unit cost; costs equal within tolerance (chained
    in sorted order) are ordered by server index. Also the costs in that order when the
    stable sort is the answer (None otherwise), which the caller would gather again."""
    S, H = cost.shape
    o = cost.argsort(axis=1, kind="stable")  # exact ties already go to the lower index
    sv = cost[np.arange(S)[:, None], o]
    if H <= 1 or S == 0:
        return o, sv
    d = sv[:, 1:] - sv[:, :-1]
    # Fast exit: no positive gap within tolerance anywhere, so the stable order is the answer.
    # (Rows are sorted, so the largest |cost| is in the first or the last column; gaps are
    # ≥ 0, so "a gap in (0, thr]" is "more gaps ≤ thr than gaps = 0".)
    thr = TIE_TOL * max(1.0, -float(np.minimum.reduce(sv[:, 0])),
                        float(np.maximum.reduce(sv[:, -1])))
    if np.count_nonzero(d <= thr) == np.count_nonzero(d == 0):
        return o, sv
    gap = d > _tol(sv[:, 1:])
    group_sorted = np.concatenate([np.zeros((S, 1), dtype=np.int64),
                                   np.cumsum(gap, axis=1)], axis=1)
    group = np.empty_like(group_sorted)
    group[np.arange(S)[:, None], o] = group_sorted
    return np.argsort(group * H + np.arange(H), axis=1), None


@dataclass(frozen=True)
class _Greedy:
    """Per slot: servers in fill order, their counts and the counts before them (fill order),
    and ``table[s, w]``, the cost of the w cheapest units (inf past the total count)."""

    order: np.ndarray  # (S, H)
    counts: np.ndarray  # (S, H)
    cum: np.ndarray  # (S, H): the counts up to and including each server (fill order)
    table: np.ndarray  # (S, W+1)

    @classmethod
    def by_index(cls, counts: np.ndarray) -> _Greedy:
        """The fill order where every unit costs 0 (``_tie_order``: by server index), without
        the cost table."""
        S, H = counts.shape
        return cls(np.broadcast_to(np.arange(H), (S, H)), counts, counts.cumsum(axis=1),
                   np.empty((S, 0)))

    def place(self, units: np.ndarray, first_slot: int,
              classes: np.ndarray | None = None) -> SlotCounts:
        """``units[s]`` units in slot ``first_slot + s``, filled in order, as sparse counts;
        ``classes[s]``: the row of slot s in these tables (None: row s)."""
        used = units.nonzero()[0]
        row = used if classes is None else classes[used]
        n = self.counts[row]
        take = np.minimum(np.maximum(units[used, None] - (self.cum[row] - n), 0), n)
        rows = np.zeros_like(take)
        rows[np.arange(used.size)[:, None], self.order[row]] = take
        return SlotCounts.from_rows(used + first_slot, rows, checked=False)


def _greedy(unit_cost: np.ndarray, counts: np.ndarray, most: int) -> _Greedy:
    """``table[s, w]`` = cost of the w cheapest units in slot s, w = 0 … most, all slots at once:
    the k-th cheapest unit sits on the first server (in fill order) whose cumulative count
    reaches k, found for every (s, k) by one ``searchsorted`` on row-offset cumulative counts."""
    S, H = unit_cost.shape
    order, sorted_cost = _tie_order(unit_cost)
    n = counts[np.arange(S)[:, None], order]
    cum = n.cumsum(axis=1)
    if not (H and most):
        table = np.full((S, most + 1), np.inf)
        table[:, 0] = 0.0
        return _Greedy(order, n, cum, table)
    # The costs in fill order with a column of +inf after each row: flat index s·(H+1) + j.
    c = np.empty((S, H + 1))
    c[:, H] = np.inf
    if sorted_cost is None:
        c[:, :H] = unit_cost[np.arange(S)[:, None], order]
    else:
        c[:, :H] = sorted_cost
    step = most + 2  # row s lives in [s·step, s·step + most + 1]: rows never overlap
    s_idx = np.arange(S, dtype=np.int64)[:, None]
    off = s_idx * step
    flat = (np.minimum(cum, most + 1) + off).ravel()
    k = np.arange(1, most + 1, dtype=np.int64)
    # pos = s·H + j, j the server (fill order) holding the k-th unit, j = H when slot s has
    # fewer than k units; pos + s is then (s, j) in ``c``, whose +inf column stands for "none".
    pos = flat.searchsorted((k[None, :] + off).ravel()).reshape(S, most)
    table = np.empty((S, most + 1))
    table[:, 0] = 0.0
    c.take(pos + s_idx).cumsum(axis=1, out=table[:, 1:])
    return _Greedy(order, n, cum, table)


def best_schedule(
    job: JobSpec,
    worker_price: np.ndarray,
    ps_price: np.ndarray,
    worker_free: np.ndarray,
    ps_free: np.ndarray,
    classes: np.ndarray | None = None,
    convex: bool = False,
) -> BestSchedule:
    """The payoff-maximising schedule of ``job`` at fixed prices (SPEC §3 steps 1–4).

    Args:
        job: the job's data (``JobSpec.from_instance(instance, i)``).
        worker_price: (T, H, R) ``p_h[t][r] ≥ 0`` (an LP's capacity-row duals for column
            generation; noise down to −1e-9 counts as 0).
        ps_price: (T, K, R) ``q_k[t][r] ≥ 0``.
        worker_free: (T, H, R) free worker capacity, or (H, R) when the same in every slot
            (full capacities for column generation).
        ps_free: (T, K, R) or (K, R) free PS capacity.
        classes: optional (T,) labels; slots with equal labels must have equal prices and free
            capacity in both pools (OASiS labels every slot no job uses alike). The per-slot
            tables are then built once per label, so a decision costs O(labels·(H+K)) rather
            than O(slots·(H+K)), and the DP ends V slots into the run of alike slots that ends
            the horizon. The answer is the same as without labels (up to the last bits of a
            payoff where two schedules tie exactly).
        convex: when every slot's ``cost_t(w)`` is convex in w (checked; e.g. no PS cost),
            step 2 by merging the slots' cost increments (``_convex_plan``) instead of the
            O(S·W·V) DP: the same best payoff (up to float rounding), t̂ the earliest best,
            possibly another schedule of that cost. Column generation's pricing asks for it;
            OASiS does not (its schedules stay those of the DP).

    Returns:
        ``BestSchedule`` with the counts (sparse, and as (T, H) and (T, K) arrays), the cost,
        t̂ and the payoff; payoff −inf and t̂ None when no schedule finishes by slot T − 1
        within the capacity.
    """
    T, H, _ = worker_price.shape
    K = ps_price.shape[1]
    a, V, N = job.arrival, int(job.workload), int(job.max_workers)
    none = BestSchedule(-math.inf, math.inf, None, 0.0, SlotCounts.empty(), SlotCounts.empty(),
                        (T, H, K))
    S = T - a
    if S <= 0 or N <= 0:
        return none
    S_all = S
    # One representative slot per class among a … a+S−1; ``inv[s]`` is slot a+s's class.
    if classes is None:
        reps = np.arange(a, T)
        inv = None
    else:
        # A run of alike slots at the end (slots no job uses yet): a schedule's units in it can
        # be moved to the run's first V slots at the same cost, so best_t[V] stops falling V
        # slots into the run, and with f non-increasing no later last slot pays more. The DP
        # stops there.
        lab = classes[a:]
        other = np.flatnonzero(lab != lab[-1])
        S = int(min(S, (other[-1] + 1 if other.size else 0) + V))
        first, inv = _first_and_inverse(lab[:S])
        reps = a + first
    wprice, pprice = worker_price[reps], ps_price[reps]  # the prices this job can pay
    if min(np.minimum.reduce(wprice, axis=None, initial=0.0),
           np.minimum.reduce(pprice, axis=None, initial=0.0)) < -TIE_TOL:
        raise ValueError("prices must be non-negative")
    wfree = worker_free[reps] if worker_free.ndim == 3 else worker_free
    pfree = ps_free[reps] if ps_free.ndim == 3 else ps_free
    # No slot takes more workers than fit on all servers together: cost_t(w) = +inf beyond,
    # so W = min(N, V, that) gives the same tables and DP, and bounds their size by what the
    # cluster can hold rather than by the job's numbers (a workload of 10^12 costs nothing
    # when it cannot finish).
    fw = fit_counts(wfree, job.worker_demand, min(N, V), 0, reps.size)  # (classes, H)
    wmax = int(min(N, V, fw.sum(axis=1).max(initial=0)))
    if wmax == 0 or wmax * S_all < V:
        return none  # nothing fits, or the work cannot be done by the horizon
    # the tables' size is checked before anything of size wmax is built
    _check_size(job, S, wmax, int(ps_needed(wmax, job.ps_ratio)), V, H, K)
    # PSs per worker count; for a few counts by the scalar ps_needed (the same arithmetic as
    # its array form, without numpy's call overhead).
    if wmax <= 64:
        psn = np.array([ps_needed(w, job.ps_ratio) for w in range(wmax + 1)], dtype=np.int64)
    else:
        psn = np.asarray(ps_needed(np.arange(wmax + 1), job.ps_ratio), dtype=np.int64)
    zmax = int(psn[-1])

    # Step 1: per-slot cost tables, all classes at once, then one row per slot.
    cw = np.maximum(wprice @ job.worker_demand, 0.0)  # (classes, H)
    cp = np.maximum(pprice @ job.ps_demand, 0.0)  # (classes, K)
    fp = fit_counts(pfree, job.ps_demand, zmax, 0, reps.size)
    util = np.asarray(job.utility[:S], dtype=float)
    W = wmax
    if _costs_nothing(cw, cp) and not (convex and 2 * V > S):
        # Zero prices (``FreeCapacity.best`` of column generation's end phase asks for the
        # earliest completion within what is free): cost_t(w) is 0 up to the units slot t
        # holds, +inf beyond, so best_t[v] is 0 for v up to the units slots a … t hold, and
        # step 4's fewest units at slot t are min(V, held by t) − min(V, held by t−1); the
        # servers fill in index order. The DP's table and plan in closed form (the DP took
        # three quarters of the ejections' time on e5k, round 32).
        holds = np.minimum(np.minimum(fw.sum(axis=1), W),
                           psn.searchsorted(fp.sum(axis=1), side="right") - 1)
        held = np.cumsum(holds if inv is None else holds[inv])
        done = np.where(held >= V, 0.0, np.inf)
        pay = util - done
        s_hat = _first_best(pay)
        if s_hat is None:
            return none
        ws = np.zeros(S, dtype=np.int64)
        ws[:s_hat + 1] = np.diff(np.minimum(held[:s_hat + 1], V), prepend=0)
        return BestSchedule(float(pay[s_hat]), 0.0, a + s_hat, float(util[s_hat]),
                            _Greedy.by_index(fw).place(ws, a, inv),
                            _Greedy.by_index(fp).place(psn[ws], a, inv), (T, H, K))
    gw = _greedy(cw, fw, wmax)
    gp = _greedy(cp, fp, zmax)
    cost = gw.table + gp.table[:, psn]  # (S, W+1), cost_t(w); inf where it does not fit
    if inv is not None:
        cost = cost[inv]
    if convex and 2 * V > S:
        plan = _convex_plan(cost, S, V, util,
                            _stop_after(job, util, cw, fw, cp, fp, inv, S, V))
        if plan is not None:
            payoff, spent, s_hat, ws = plan
            if s_hat < 0:
                return none
            return BestSchedule(payoff, spent, a + s_hat, float(util[s_hat]),
                                gw.place(ws, a, inv), gp.place(psn[ws], a, inv), (T, H, K))
    # By units: V steps of three calls over all S slots; by slots: at most S steps of two
    # calls, often far fewer (the early stop). Units win clearly only when V is well below S
    # (e.g. V = 1 on long traces); on the paper preset V ≈ S and slots are the cheaper pass.
    if 2 * V <= S:
        bp = _dp_by_units(cost, S, W, V)
    else:
        # A big table is filled row by row as the DP reaches it (the early stop may leave
        # most rows untouched); a small one at once, which is one call instead of S.
        lazy = (S + 1) * (W + V + 1) > 1 << 20
        bp = np.empty((S + 1, W + V + 1)) if lazy else np.full((S + 1, W + V + 1), np.inf)
        bp[0] = np.inf
        bp[0, W] = 0.0
        stop = _stop_after(job, util, cw, fw, cp, fp, inv, S, V)
        _dp_by_slots(bp, cost, S, W, V, util, stop, lazy)

    # Step 3: the best last slot, ties to the earliest.
    done = bp[1:, W + V]  # (S,) best_t̂[V] for t̂ = a … T−1
    pay = util - done  # −inf where nothing fits (done = +inf)
    s_hat = _first_best(pay)
    if s_hat is None:
        return none

    # Step 4: backtrack from t̂, fewest workers at (tolerance-)equal cost, then place all slots
    # at once.
    # (Python floats on short rows: the same IEEE sums and comparisons as numpy, without a
    # numpy call per candidate.)
    taken = [0] * (s_hat + 1)
    v = V
    target = float(done[s_hat])  # best_{t̂}[V]; then the state the chosen w leaves
    for s in range(s_hat, -1, -1):
        if v == 0:
            break
        k = W if W < v else v
        prev = bp[s, W + v - k:W + v + 1].tolist()  # best_{a+s−1}[v−k … v]
        step = cost[s, :k + 1].tolist()  # cost_{a+s}(0 … k)
        limit = target + TIE_TOL * max(1.0, abs(target))
        w = 0
        for j in range(k + 1):
            if prev[k - j] + step[j] <= limit:
                w = j
                break
        taken[s] = w
        v -= w
        target = prev[k - w]  # best_{a+s−1}[v], the next slot's target
    ws = np.zeros(S, dtype=np.int64)
    ws[:s_hat + 1] = taken
    return BestSchedule(float(pay[s_hat]), float(done[s_hat]), a + s_hat, float(util[s_hat]),
                        gw.place(ws, a, inv), gp.place(psn[ws], a, inv), (T, H, K))


def _first_best(pay: np.ndarray) -> int | None:
    """Step 3's choice: the index of the largest payoff, ties (within ``_tol``) to the
    earliest; None when no payoff is finite (nothing fits)."""
    if not np.isfinite(pay).any():
        return None
    m = float(pay.max())
    return int((pay >= m - _tol(m)).nonzero()[0][0])


def _costs_nothing(cw: np.ndarray, cp: np.ndarray) -> bool:
    """Every finite ``cost_t(w)`` is 0: no unit cost of a worker or PS server is positive."""
    return not cw.any() and not cp.any()


def _dp_by_slots(bp: np.ndarray, cost: np.ndarray, S: int, W: int, V: int,
                 util: np.ndarray, stop: np.ndarray, lazy: bool) -> None:
    """Step 2, one slot at a time: ``best_t[v] = min_w best_{t−1}[v−w] + cost_t(w)``.

    Row s of ``bp`` holds best_{a+s−1}[v] at column W + v, after W columns of +inf, so that
    ``view[s, j, v] = best_{a+s−1}[v − (W − j)]``: one slot's update is one add and one
    min-reduction over j (w = W − j), vectorised over v. Only states that can still reach V by
    slot T−1 (v ≥ V − (S−1−s)·W) and that s+1 slots reach (v ≤ (s+1)·W) are computed.
    After slot s, if no later last slot can beat the best payoff so far by more than the
    rounding margin (``stop[s+1]``, an upper bound on those payoffs, below it), the later rows
    are left unfilled but for ``best[V] = +inf``: those last slots cannot be chosen, so the
    answer is the same. ``bp`` row 0 is set by the caller; rows 1 … are +inf already, or
    with ``lazy`` are set to +inf here as they are reached."""
    # (``np.ndarray`` on bp's buffer: the view ``as_strided`` makes, at a fraction of its cost;
    # bp is a fresh C-contiguous table, and view[S, W, V] is its last element.)
    view = np.ndarray((S + 1, W + 1, V + 1), dtype=bp.dtype, buffer=bp,
                      strides=(bp.strides[0], bp.strides[1], bp.strides[1]))
    view.flags.writeable = False
    # cost_rev[s, j, 0] = cost_t(W − j): a column, so that a slot's add broadcasts over v.
    cost_rev = np.ascontiguousarray(cost[:, ::-1])[:, :, None]
    tmp = np.empty((W + 1, V + 1))
    best = bar = -math.inf
    hi = 0
    utl, stp = util.tolist(), stop.tolist()  # Python floats: the checks cost no numpy call
    # The margin scales with the largest utility and cost: a sum of V costs carries a rounding
    # error of about V·2⁻⁵³ of itself, far below 1e-7 of the larger of the two.
    finite = cost[np.isfinite(cost)]
    scale = float(np.abs(util).max(initial=0.0)) + V * float(finite.max(initial=0.0))
    done = bp[:, W + V]
    # While every state 0 … V is computed (lo = 0, hi = V), the slices are the same each slot:
    # take them once (views; ``np.add``/``reduce`` per slot are then the only calls).
    full_in, full_out = view[:, :, :], bp[1:, W:]
    for s in range(S):
        lo = V - (S - 1 - s) * W
        hi += W
        if lazy:
            bp[s + 1] = np.inf
        if lo <= 0 and hi >= V:
            hi = V
            np.add(full_in[s], cost_rev[s], out=tmp)
            np.minimum.reduce(tmp, axis=0, out=full_out[s])
        else:
            lo = max(lo, 0)
            hi = min(hi, V)
            if lo > hi:
                continue
            t = tmp[:, : hi - lo + 1]
            np.add(view[s, :, lo:hi + 1], cost_rev[s], out=t)
            np.minimum.reduce(t, axis=0, out=bp[s + 1, W + lo:W + hi + 1])
            if hi < V:
                continue  # V not reached yet: no payoff, no stop
        pay = utl[s] - float(done[s + 1])
        if pay > best:
            best = pay
            bar = best - 1e-7 * max(1.0, abs(best), scale)  # changes only with best
        if s + 1 < S and stp[s + 1] < bar:
            done[s + 2:] = np.inf  # the later last slots: never reached
            return


def _convex_plan(cost: np.ndarray, S: int, V: int, util: np.ndarray, stop: np.ndarray
                 ) -> tuple[float, float, int, np.ndarray] | None:
    """Step 2–4 when every slot's cost is convex in w: ``cost_t(w) = Σ_{k≤w} d_t(k)`` with
    non-decreasing increments ``d_t(1) ≤ d_t(2) ≤ …`` (+inf past what fits). Then ``best_t[V]``,
    the least cost of V units in slots a … t, is the sum of the V smallest increments of those
    slots: any choice of V increments that takes a prefix of each slot's is a schedule, and
    convexity makes the V smallest such a prefix. Slot by slot the V smallest so far are kept
    sorted and a slot's increments below the largest kept one are merged in: O(V) per slot
    that changes them, against the DP's O(W·V) per slot. The early stop is the DP's
    (``stop``, an upper bound on later payoffs). Returns (payoff, cost, s_hat, units per
    slot) — s_hat −1 when V is never reached —, or None when some slot's cost is not convex
    (e.g. a PS cost, ``ceil(w/γ)`` steps), for the DP to answer."""
    with np.errstate(invalid="ignore"):  # inf − inf is nan: past what fits
        inc = np.diff(cost, axis=1)  # (S, W)
        inc[np.isnan(inc)] = np.inf
        if (inc[:, 1:] < inc[:, :-1] - _tol(inc[:, :-1])).any():
            return None
    done = np.full(S, np.inf)
    kept = np.empty(0)
    total = math.inf
    best = bar = -math.inf
    finite = cost[np.isfinite(cost)]
    scale = float(np.abs(util).max(initial=0.0)) + V * float(finite.max(initial=0.0))
    fits = np.isfinite(inc).sum(axis=1).tolist()
    utl, stp = util.tolist(), stop.tolist()
    last = -1
    for s in range(S):
        row = inc[s, :fits[s]]
        if kept.size < V:  # V not reachable yet: gather
            kept = np.concatenate([kept, row])
            if kept.size < V:
                continue
            kept.sort(kind="stable")
            kept = kept[:V]
            total = float(kept.sum())
        elif row.size and row[0] < kept[-1]:
            m = int(row.searchsorted(kept[-1]))  # the slot's increments below the largest kept
            merged = np.insert(kept, kept.searchsorted(row[:m], side="right"), row[:m])
            kept = merged[:V]
            total = float(kept.sum())
        done[s] = total
        last = s
        pay = utl[s] - total
        if pay > best:
            best = pay
            bar = best - 1e-7 * max(1.0, abs(best), scale)
        if s + 1 < S and stp[s + 1] < bar:
            break
    if last < 0:
        return 0.0, math.inf, -1, np.zeros(S, dtype=np.int64)
    pay_all = util[:last + 1] - done[:last + 1]
    s_hat = _first_best(pay_all)  # finite at ``last``
    assert s_hat is not None
    # Units per slot: the V smallest increments of slots a … t̂, ties to the earlier slot
    # (and within a slot to its first increments, so each slot's take is a prefix).
    rows = inc[:s_hat + 1]
    slot, k = np.nonzero(np.isfinite(rows))
    pick = np.lexsort((k, slot, rows[slot, k]))[:V]
    ws = np.bincount(slot[pick], minlength=S).astype(np.int64)
    return float(pay_all[s_hat]), float(done[s_hat]), s_hat, ws


def _dp_by_units(cost: np.ndarray, S: int, W: int, V: int) -> np.ndarray:
    """Step 2, one unit of work at a time (fewer steps when V is well below S): with cost_t(0) = 0,
    ``best_t[v] = min(best_{t−1}[v], min_{1≤w≤min(W,v)} best_{t−1}[v−w] + cost_t(w))``, so
    state v over all slots is a running minimum of candidates from states v−W … v−1, which
    are complete by then. Same sums and minima as ``_dp_by_slots``, hence the same table on
    every state that can reach V. Returns the (S+1, W+V+1) table of ``_dp_by_slots`` as a view
    of one stored state-major (each state's slots contiguous)."""
    bq = np.empty((W + V + 1, S + 1))
    bq[:W] = np.inf  # padding: negative states
    bq[W] = 0.0  # nothing done costs nothing, in every slot
    bq[W + 1:, 0] = np.inf  # before the first slot nothing is done
    ct = np.ascontiguousarray(cost.T)  # (W+1, S)
    buf = np.empty((W, S))
    cand = np.empty(S)
    for v in range(1, V + 1):
        k = min(W, v)
        # candidates best_{a+s−1}[v−w] + cost_{a+s}(w), w = 1 … k, for every slot s
        if k == 1:
            np.add(bq[W + v - 1, :S], ct[1], out=cand)
        else:
            np.add(bq[W + v - k:W + v, :S][::-1], ct[1:k + 1], out=buf[:k])
            np.minimum.reduce(buf[:k], axis=0, out=cand)
        np.minimum.accumulate(cand, out=bq[W + v, 1:])
    return bq.T


def _stop_after(job: JobSpec, util: np.ndarray, cw: np.ndarray, fw: np.ndarray,
                cp: np.ndarray, fp: np.ndarray, inv: np.ndarray | None, S: int,
                V: int) -> np.ndarray:
    """(S + 1,) ``stop[s]``: an upper bound on the payoff of any schedule whose last slot is
    a + s or later (−inf past the end): ``max_{s' ≥ s} f(s'+1) − V·m_w(s') − ceil(V/γ)·m_ps(s')``
    with ``m(s')`` the least unit cost of a usable server in slots a … a+s' (as in
    ``payoff_upper_bound``)."""
    lower = np.zeros(S)
    for c, f, units in ((cw, fw, V), (cp, fp, int(ps_needed(V, job.ps_ratio)))):
        if not units:
            continue
        unit = np.minimum.reduce(np.where(f > 0, c, np.inf), axis=1, initial=np.inf)
        if inv is not None:
            unit = unit[inv]
        lower += units * np.minimum.accumulate(unit)
    d_min = max(1, -(-V // max(1, job.max_workers)))
    ub = util - lower
    ub[:d_min - 1] = -np.inf
    out = np.full(S + 1, -np.inf)
    out[:S] = np.maximum.accumulate(ub[::-1])[::-1]
    return out


def dp_cells(S: Any, W: Any, Z: Any, V: Any, H: int, K: int) -> Any:
    """The 8-byte cells of ``best_schedule``'s tables (``_check_size``), scalars or arrays."""
    return (S + 1) * (W + V + 1) + (W + 1) * (V + 1) + 4 * S * (W + Z + 2) + 2 * S * (H + K)


#: Demand classes × servers past which ``fit_table`` gives no table (its caller bounds by
#: the jobs alone).
FIT_TABLE_CELLS = 10**7


def fit_table(capacity: np.ndarray, demand: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """(classes, S) units of each distinct row of ``demand`` (J, R) that fit on each server
    of the empty ``capacity`` (S, R) (``FIT_EPS`` as ``fit_counts``), and each job's class;
    None where a row is zero (no bound) or the classes × servers pass
    ``FIT_TABLE_CELLS``."""
    classes, inverse = np.unique(demand, axis=0, return_inverse=True)
    if capacity.shape[0] * len(classes) > FIT_TABLE_CELLS or \
            not (classes > 0).any(axis=1).all():
        return None
    table = np.zeros((len(classes), capacity.shape[0]))
    for c, d in enumerate(classes):
        pos = d > 0
        table[c] = np.floor(capacity[:, pos] / d[pos] + FIT_EPS).min(axis=1)
    return table, inverse.reshape(-1)


def largest_tables(inst: Instance) -> tuple[float, int, int, int]:
    """(bytes, job, slots, workers) of the largest tables ``best_schedule`` may build for
    one job of ``inst``, as ``_check_size`` sizes them (``dp_cells``) on the empty cluster,
    the most any decision of OASiS or any pricing of column generation sees: ``S = T − a_i``
    slots, ``W = min(N_i, V_i, the job's workers that fit on all servers)``, ``Z =
    ps_needed(W)``; none where those cannot do the work by the horizon. Job −1: none. One
    table lives at a time (issue 21: sized before OASiS runs, ``io.check_schedule_size``,
    and before column generation prices, ``colgen.pricing_bytes``)."""
    s = inst.horizon - np.asarray(inst.arrival, dtype=float)
    v, m = np.asarray(inst.workload, dtype=float), np.asarray(inst.max_workers, dtype=float)
    w = np.minimum(m, v)
    table = fit_table(inst.worker_capacity, inst.worker_demand)
    if table is not None:
        w = np.minimum(w, table[0].sum(axis=1)[table[1]])
    cells = 8.0 * dp_cells(s, w, np.asarray(ps_needed(w, inst.ps_ratio), dtype=float), v,
                           len(inst.worker_names), len(inst.ps_names))
    cells[(w <= 0) | (s <= 0) | (w * s < v)] = 0.0
    if not cells.size or cells.max() <= 0:
        return 0.0, -1, 0, 0
    i = int(np.argmax(cells))
    return float(cells[i]), i, int(s[i]), int(w[i])


def _check_size(job: JobSpec, S: int, W: int, Z: int, V: int, H: int, K: int) -> None:
    """Refuse (``InputError``) a DP whose tables would not fit in the memory limit: the DP
    rows (S+1)·(W+V+1), one slot's update (W+1)·(V+1), the greedy tables and their search
    arrays, S·(W+1) and S·(Z+1) several times over."""
    cells = dp_cells(S, W, Z, V, H, K)
    if 8.0 * cells <= max_memory():
        return  # the usual case: no message to build (this runs once per decision)
    check_allocation(f"{job.place}.workload" if job.place else "workload", 8.0 * cells,
                     f"OASiS's dynamic programme for a workload of {V} over {S} slots "
                     f"with up to {W} workers a slot")


def payoff_upper_bound(
    job: JobSpec,
    worker_price: np.ndarray,
    ps_price: np.ndarray,
    worker_free: np.ndarray,
    ps_free: np.ndarray,
    classes: np.ndarray | None = None,
) -> float:
    """A cheap upper bound on ``best_schedule(...).payoff`` (same arguments), used to skip
    jobs that cannot have a positive payoff:

        max_{t̂ ≥ a + d_min − 1}  f(t̂ − a + 1) − V·m_w(t̂) − ceil(V/γ)·m_ps(t̂)

    with ``d_min = ceil(V/N)`` (no schedule finishes sooner) and ``m(t̂)`` the least unit cost of
    a usable server in slots ``a … t̂``: every unit of work is a worker-slot, and
    ``Σ_t ceil(y(t)/γ) ≥ ceil(V/γ)`` PS-slots are needed, all before t̂. −inf when nothing can
    finish by the horizon.
    """
    T = worker_price.shape[0]
    a, V, N = job.arrival, int(job.workload), int(job.max_workers)
    if N <= 0:
        return -math.inf
    d_min = max(1, -(-V // N))
    if a + d_min > T:
        return -math.inf
    lower = np.zeros(T - a)
    # ``classes`` as in ``best_schedule``: the per-slot minima once per class.
    if classes is None:
        reps, inv = np.arange(a, T), None
    else:
        _, first, inv = np.unique(classes[a:], return_index=True, return_inverse=True)
        reps = a + first
    for price, free, demand, units in (
            (worker_price, worker_free, job.worker_demand, V),
            (ps_price, ps_free, job.ps_demand, int(ps_needed(V, job.ps_ratio)))):
        usable = fit_counts(free[reps] if free.ndim == 3 else free, demand, 1, 0,
                            reps.size) > 0  # (classes, servers)
        unit = np.where(usable, price[reps] @ demand, np.inf).min(axis=1, initial=np.inf)
        if inv is not None:
            unit = unit[inv]
        lower += units * np.maximum(np.minimum.accumulate(unit), 0.0)
    bound = np.asarray(job.utility[d_min - 1:T - a], dtype=float) - lower[d_min - 1:]
    return float(bound.max())


class UnitPricer:
    """``best_schedule`` for jobs of workload V = 1 at one set of prices and free capacities:
    the same answer, byte for byte, at a fraction of the cost.

    With V = 1 the DP of step 2 is ``best_t[1] = min_{t' ≤ t} cost_{t'}(1)``, where
    ``cost_t(1) = Wcost_t(1) + Pcost_t(ceil(1/γ))`` depends on the job only through its demand
    vectors α, β and its PS count ``ceil(1/γ)``. Those per-slot tables (``_greedy`` over every
    slot, the same tie order as ``best_schedule``'s) are built once per demand class and
    shared by all unit jobs of the class; a job then costs its utility row, a running minimum,
    an argmax and the backtracking of step 4 in closed form (the work moves back from t̂ while
    the previous slot's ``best[1]`` is within tolerance of the current target).

    Two users: column generation's pricing (one pricer per round, full capacities: free
    (H, R) and (K, R); on the first 5 000 Philly jobs three quarters have V = 1), and OASiS
    (one pricer per state of its prices: free (T, H, R) and (T, K, R), ``classes`` its slot
    labels as in ``best_schedule``, the tables built once per label; between two admissions
    every unit job's decision shares them)."""

    def __init__(self, worker_price: np.ndarray, ps_price: np.ndarray,
                 worker_free: np.ndarray, ps_free: np.ndarray,
                 classes: np.ndarray | None = None) -> None:
        if worker_free.ndim != ps_free.ndim:
            raise ValueError("UnitPricer needs both pools' free capacity per slot, or neither")
        self.wp, self.pp, self.wf, self.pf = worker_price, ps_price, worker_free, ps_free
        # one representative slot per label and every slot's row (None: a row per slot)
        self.reps, self.inv = (None, None) if classes is None else \
            _first_and_inverse(np.asarray(classes))
        self.tables: dict[tuple[bytes, bytes, int], tuple[np.ndarray, _Greedy, _Greedy]] = {}

    def _class(self, job: JobSpec, z: int) -> tuple[np.ndarray, _Greedy, _Greedy]:
        key = (job.worker_demand.tobytes(), job.ps_demand.tobytes(), z)
        if key not in self.tables:
            if min(np.minimum.reduce(self.wp, axis=None, initial=0.0),
                   np.minimum.reduce(self.pp, axis=None, initial=0.0)) < -TIE_TOL:
                raise ValueError("prices must be non-negative")
            rows = slice(None) if self.reps is None else self.reps
            wp, pp = self.wp[rows], self.pp[rows]
            n = wp.shape[0]
            wf = self.wf[rows] if self.wf.ndim == 3 else self.wf
            pf = self.pf[rows] if self.pf.ndim == 3 else self.pf
            gw = _greedy(np.maximum(wp @ job.worker_demand, 0.0),
                         fit_counts(wf, job.worker_demand, 1, 0, n), 1)
            gp = _greedy(np.maximum(pp @ job.ps_demand, 0.0),
                         fit_counts(pf, job.ps_demand, z, 0, n), z)
            cost = gw.table[:, 1] + gp.table[:, z]
            self.tables[key] = (cost if self.inv is None else cost[self.inv], gw, gp)
        return self.tables[key]

    def best(self, job: JobSpec) -> BestSchedule:
        """``best_schedule(job, prices, free, classes)`` for a job with ``job.workload == 1``."""
        T, H, _ = self.wp.shape
        K = self.pp.shape[1]
        a = job.arrival
        none = BestSchedule(-math.inf, math.inf, None, 0.0, SlotCounts.empty(),
                            SlotCounts.empty(), (T, H, K))
        if int(job.workload) != 1:
            raise ValueError("UnitPricer prices jobs of workload 1 only")
        if T - a <= 0 or int(job.max_workers) <= 0:
            return none
        if self.wf.ndim == 2 and not fit_counts(self.wf, job.worker_demand, 1, 0, 1).any():
            return none  # no server takes one worker: wmax = 0 (per slot: cost +inf below)
        z = int(ps_needed(1, job.ps_ratio))
        cost, gw, gp = self._class(job, z)
        done = np.minimum.accumulate(cost[a:])  # best_t[1], t = a … T−1
        pay = np.asarray(job.utility[:T - a], dtype=float) - done
        s_hat = _first_best(pay)
        if s_hat is None:
            return none
        # Step 4 with V = 1: at slot s (target best_s[1]) the work stays back (w = 0) when
        # best_{s−1}[1] ≤ target + tolerance, and the target becomes best_{s−1}[1].
        d = done[:s_hat + 1]
        back = d[:-1] <= d[1:] + _tol(d[1:])
        stay = np.flatnonzero(~back)
        s_work = int(stay[-1]) + 1 if stay.size else 0
        units = np.zeros(T, dtype=np.int64)
        units[a + s_work] = 1
        psn = np.zeros(T, dtype=np.int64)
        psn[a + s_work] = z
        return BestSchedule(float(pay[s_hat]), float(done[s_hat]), a + s_hat,
                            float(job.utility[s_hat]), gw.place(units, 0, self.inv),
                            gp.place(psn, 0, self.inv), (T, H, K))


def best_units(pricer: UnitPricer, jobs: list[JobSpec]) -> list[BestSchedule]:
    """``[pricer.best(job) for job in jobs]`` (every job of workload 1), the same answers, with
    the work shared by the jobs of one demand class and arrival slot (column generation's
    pricing, issue 21: nine in ten of the first 5 000 Philly jobs).

    For arrival a the running minimum ``best_t[1] = min_{a ≤ t' ≤ t} cost_{t'}(1)`` and the
    backtracking of step 4 — the slot the work moves back to from t̂, ``1 +`` the last
    s < t̂ − a with ``best_{a+s}[1] > best_{a+s+1}[1] + tol`` — are the same for every job of
    the class that arrives at a; a job then costs one row of its utility against them (the
    payoffs of a group as one matrix), and the placement of its one unit is shared by the
    jobs that run in the same slot."""
    out: list[BestSchedule | None] = [None] * len(jobs)
    if not jobs:
        return []
    T, H, _ = pricer.wp.shape
    K = pricer.pp.shape[1]
    none = BestSchedule(-math.inf, math.inf, None, 0.0, SlotCounts.empty(),
                        SlotCounts.empty(), (T, H, K))
    groups: dict[tuple[bytes, bytes, int, int], list[int]] = {}
    for n, job in enumerate(jobs):
        a = job.arrival
        if int(job.workload) != 1:
            raise ValueError("best_units prices jobs of workload 1 only")
        if T - a <= 0 or int(job.max_workers) <= 0 or (
                pricer.wf.ndim == 2
                and not fit_counts(pricer.wf, job.worker_demand, 1, 0, 1).any()):
            out[n] = none
            continue
        z = int(ps_needed(1, job.ps_ratio))
        key = (job.worker_demand.tobytes(), job.ps_demand.tobytes(), z, a)
        groups.setdefault(key, []).append(n)
    placed: dict[tuple[bytes, bytes, int, int], tuple[SlotCounts, SlotCounts]] = {}
    for key, members in groups.items():
        a, z = key[3], key[2]
        cost, gw, gp = pricer._class(jobs[members[0]], z)
        done = np.minimum.accumulate(cost[a:])
        L = T - a
        # where the backtracking stops: best_{s}[1] > best_{s+1}[1] + tol, last one below t̂
        stop = ~(done[:-1] <= done[1:] + _tol(done[1:]))
        last = np.maximum.accumulate(np.where(stop, np.arange(L - 1), -1)) if L > 1 \
            else np.zeros(0, dtype=np.int64)
        util = np.stack([np.asarray(jobs[n].utility[:L], dtype=float) for n in members])
        pay = util - done[None, :]
        finite = np.isfinite(pay).any(axis=1)
        m = pay.max(axis=1)
        for row, n in enumerate(members):
            if not finite[row]:
                out[n] = none
                continue
            mr = float(m[row])
            s_hat = int((pay[row] >= mr - _tol(mr)).argmax())
            s_work = int(last[s_hat - 1]) + 1 if s_hat > 0 else 0
            t = a + s_work
            where = key[:3] + (t,)
            if where not in placed:
                units = np.zeros(T, dtype=np.int64)
                units[t] = 1
                psn = np.zeros(T, dtype=np.int64)
                psn[t] = z
                placed[where] = (gw.place(units, 0, pricer.inv), gp.place(psn, 0, pricer.inv))
            w_counts, p_counts = placed[where]
            out[n] = BestSchedule(float(pay[row, s_hat]), float(done[s_hat]), a + s_hat,
                                  float(util[row, s_hat]), w_counts, p_counts, (T, H, K))
    return out  # type: ignore[return-value]
