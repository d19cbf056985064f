"""The dual subroutine against brute force (SPEC §3: exact optimum of steps 1–3) and its tie
rules (step 4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from oasis_opt.model import ps_needed
from oasis_opt.online.subroutine import JobSpec, UnitPricer, best_schedule, payoff_upper_bound


def _slot_min_cost(unit: np.ndarray, free: np.ndarray, demand: np.ndarray, units: int) -> float:
    """Least cost of ``units`` units in one slot, every per-server split enumerated; each
    server's count is checked against its free capacity directly (no floor formula)."""
    options = []
    for s in range(unit.shape[0]):
        ok = [n for n in range(units + 1) if np.all(demand * n <= free[s] + 1e-9)]
        options.append(ok)
    best = math.inf
    for split in itertools.product(*options):
        if sum(split) == units:
            best = min(best, float(np.dot(unit, split)))
    return best


def brute_force(job: JobSpec, wp, pp, wf, pf) -> float:
    """Best payoff over every per-slot worker count sequence (−inf when none finishes)."""
    T = wp.shape[0]
    a, V, N = job.arrival, job.workload, job.max_workers
    slot_cost = {}
    for t in range(a, T):
        uw = wp[t] @ job.worker_demand
        up = pp[t] @ job.ps_demand
        for w in range(N + 1):
            slot_cost[t, w] = (_slot_min_cost(uw, wf[t], job.worker_demand, w)
                               + _slot_min_cost(up, pf[t], job.ps_demand,
                                                ps_needed(w, job.ps_ratio)))
    best = -math.inf
    for seq in itertools.product(range(N + 1), repeat=T - a):
        done = np.cumsum(seq)
        hit = np.flatnonzero(done >= V)
        if not hit.size:
            continue
        last = int(hit[0])  # completion at slot a + last; later slots only add cost
        cost = sum(slot_cost[a + k, w] for k, w in enumerate(seq[: last + 1]))
        if math.isfinite(cost):
            best = max(best, float(job.utility[last]) - cost)
    return best


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(2, 5))
    H = int(rng.integers(1, 4))
    K = int(rng.integers(1, 3))
    R = 2
    a = int(rng.integers(0, T))
    N = int(rng.integers(1, 4))
    gamma = float(rng.choice([1, 2, 3]))
    V = int(rng.integers(1, N * (T - a) + 1))
    if seed % 5 == 0:
        V += 1  # sometimes more than the horizon allows
    alpha = rng.integers(0, 3, size=R).astype(float)
    beta = rng.integers(0, 3, size=R).astype(float)
    if seed % 7 == 0:
        alpha[:] = 0.0  # no demand: capped by N only
    util = np.sort(rng.uniform(0, 30, size=T))[::-1].copy()
    job = JobSpec(a, V, N, gamma, alpha, beta, util)
    # Integer prices half the time: many exact ties.
    if seed % 2:
        wp = rng.integers(0, 4, size=(T, H, R)).astype(float)
        pp = rng.integers(0, 4, size=(T, K, R)).astype(float)
    else:
        wp = rng.uniform(0, 5, size=(T, H, R))
        pp = rng.uniform(0, 5, size=(T, K, R))
    cap_w = rng.integers(1, 7, size=(H, R)).astype(float)  # servers of different sizes
    cap_p = rng.integers(1, 7, size=(K, R)).astype(float)
    wf = cap_w[None] - rng.integers(0, 4, size=(T, H, R))
    pf = cap_p[None] - rng.integers(0, 4, size=(T, K, R))
    return job, wp, pp, np.maximum(wf, 0.0), np.maximum(pf, 0.0)


def check_plan(job: JobSpec, res, wp, pp, wf, pf) -> None:
    """The returned plan fits, does the work by t̂, and costs what it says."""
    a, V = job.arrival, job.workload
    y, z = res.workers, res.ps
    assert not y[:a].any() and not z[:a].any()
    assert not y[res.t_hat + 1:].any() and not z[res.t_hat + 1:].any()
    w = y.sum(axis=1)
    assert (w <= job.max_workers).all()
    assert (z.sum(axis=1) >= ps_needed(w, job.ps_ratio)).all()
    assert w.sum() >= V
    assert (y[:, :, None] * job.worker_demand <= wf + 1e-9).all()
    assert (z[:, :, None] * job.ps_demand <= pf + 1e-9).all()
    cost = float(np.einsum("th,thr,r->", y, wp, job.worker_demand)
                 + np.einsum("tk,tkr,r->", z, pp, job.ps_demand))
    assert cost == pytest.approx(res.cost, rel=1e-9, abs=1e-9)
    assert res.utility == job.utility[res.t_hat - a]
    assert res.payoff == pytest.approx(res.utility - res.cost, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(250))
def test_subroutine_equals_brute_force(seed: int) -> None:
    job, wp, pp, wf, pf = random_case(seed)
    res = best_schedule(job, wp, pp, wf, pf)
    expected = brute_force(job, wp, pp, wf, pf)
    if expected == -math.inf:
        assert res.payoff == -math.inf and res.t_hat is None
        assert not res.workers.any() and not res.ps.any()
    else:
        assert res.payoff == pytest.approx(expected, rel=1e-9, abs=1e-9)
        check_plan(job, res, wp, pp, wf, pf)
    again = best_schedule(job, wp, pp, wf, pf)  # a pure function: same answer, same plan
    assert again.payoff == res.payoff or (math.isinf(res.payoff) and math.isinf(again.payoff))
    assert np.array_equal(again.workers, res.workers) and np.array_equal(again.ps, res.ps)


def test_infeasible_when_workload_exceeds_what_the_horizon_allows() -> None:
    T, H, K, R = 3, 2, 1, 1
    job = JobSpec(1, 5, 2, 1.0, np.ones(R), np.ones(R), np.full(T, 10.0))  # ≤ 4 units in 2 slots
    res = best_schedule(job, np.ones((T, H, R)), np.ones((T, K, R)),
                        np.full((H, R), 9.0), np.full((K, R), 9.0))
    assert res.payoff == -math.inf and res.t_hat is None and not res.fits


def test_infeasible_when_no_ps_room() -> None:
    T, H, K, R = 3, 2, 1, 1
    job = JobSpec(0, 1, 2, 2.0, np.ones(R), np.ones(R), np.full(T, 10.0))
    res = best_schedule(job, np.ones((T, H, R)), np.ones((T, K, R)),
                        np.full((H, R), 9.0), np.zeros((K, R)))
    assert res.payoff == -math.inf


def test_slot_constant_free_capacity_broadcasts() -> None:
    job, wp, pp, _, _ = random_case(3)
    T, H, R = wp.shape
    K = pp.shape[1]
    cw, cp = np.full((H, R), 4.0), np.full((K, R), 4.0)
    a = best_schedule(job, wp, pp, cw, cp)
    b = best_schedule(job, wp, pp, np.broadcast_to(cw, (T, H, R)), np.broadcast_to(cp, (T, K, R)))
    assert a.payoff == b.payoff and np.array_equal(a.workers, b.workers)


# --- ties (SPEC §3 step 4) ----------------------------------------------------------------


def _flat(T: int, value: float = 100.0) -> np.ndarray:
    return np.full(T, value)


def test_equal_servers_fill_lower_index_first() -> None:
    T, H, K, R = 2, 3, 2, 1
    job = JobSpec(0, 3, 3, 3.0, np.ones(R), np.ones(R), _flat(T))
    res = best_schedule(job, np.ones((T, H, R)), np.ones((T, K, R)),
                        np.full((H, R), 2.0), np.full((K, R), 2.0))
    assert res.t_hat == 0
    assert res.workers[0].tolist() == [2, 1, 0]
    assert res.ps[0].tolist() == [1, 0]


def test_costs_equal_within_tolerance_go_to_lower_index() -> None:
    T, H, K, R = 1, 2, 1, 1
    job = JobSpec(0, 1, 1, 1.0, np.ones(R), np.zeros(R), _flat(T))
    wp = np.array([[[1.0], [1.0 - 1e-12]]])  # server 1 is cheaper by float noise only
    res = best_schedule(job, wp, np.zeros((T, K, R)), np.ones((H, R)), np.ones((K, R)))
    assert res.workers[0].tolist() == [1, 0]
    wp = np.array([[[1.0], [1.0 - 1e-6]]])  # a real difference
    res = best_schedule(job, wp, np.zeros((T, K, R)), np.ones((H, R)), np.ones((K, R)))
    assert res.workers[0].tolist() == [0, 1]


def test_equal_payoffs_pick_earliest_last_slot() -> None:
    T, H, K, R = 4, 1, 1, 1
    job = JobSpec(1, 2, 2, 2.0, np.ones(R), np.ones(R), _flat(T))
    res = best_schedule(job, np.ones((T, H, R)), np.ones((T, K, R)),
                        np.full((H, R), 5.0), np.full((K, R), 5.0))
    assert res.t_hat == 1 and res.workers[:, 0].tolist() == [0, 2, 0, 0]


def test_backtracking_pushes_work_early_at_equal_cost() -> None:
    T, H, K, R = 3, 1, 1, 1
    job = JobSpec(0, 3, 2, 2.0, np.ones(R), np.zeros(R), _flat(T))
    res = best_schedule(job, np.ones((T, H, R)), np.zeros((T, K, R)),
                        np.full((H, R), 5.0), np.full((K, R), 5.0))
    assert res.t_hat == 1
    assert res.workers[:, 0].tolist() == [2, 1, 0]


def test_later_finish_wins_when_cheaper_enough() -> None:
    T, H, K, R = 3, 1, 1, 1
    job = JobSpec(0, 2, 1, 1.0, np.ones(R), np.zeros(R), np.array([100.0, 100.0, 99.0]))
    wp = np.array([1.0, 5.0, 1.0]).reshape(T, 1, 1)
    res = best_schedule(job, wp, np.zeros((T, K, R)), np.ones((H, R)), np.ones((K, R)))
    assert res.t_hat == 2 and res.cost == 2.0 and res.payoff == 97.0
    assert res.workers[:, 0].tolist() == [1, 0, 1]


def test_negative_prices_are_refused() -> None:
    T, H, K, R = 2, 1, 1, 1
    job = JobSpec(0, 1, 1, 1.0, np.ones(R), np.ones(R), _flat(T))
    with pytest.raises(ValueError, match="non-negative"):
        best_schedule(job, -np.ones((T, H, R)), np.ones((T, K, R)), np.ones((H, R)),
                      np.ones((K, R)))


@pytest.mark.parametrize("seed", range(250))
def test_payoff_upper_bound_is_sound(seed: int) -> None:
    from oasis_opt.online.subroutine import payoff_upper_bound
    job, wp, pp, wf, pf = random_case(seed)
    exact = best_schedule(job, wp, pp, wf, pf).payoff
    assert payoff_upper_bound(job, wp, pp, wf, pf) >= exact - 1e-9


def _with_alike_slots(seed: int):
    """A random case whose slots from ``u`` on (a tail) and one earlier pair are copies of one
    slot each, with the labels that say so."""
    job, wp, pp, wf, pf = random_case(seed)
    T = wp.shape[0]
    rng = np.random.default_rng(seed + 10_000)
    u = int(rng.integers(0, T))
    classes = np.arange(T)
    for arr in (wp, pp, wf, pf):
        arr[u:] = arr[u]
    classes[u:] = -1
    if u >= 2:  # an alike pair in the middle too
        for arr in (wp, pp, wf, pf):
            arr[1] = arr[0]
        classes[1] = classes[0]
    return job, wp, pp, wf, pf, classes


@pytest.mark.parametrize("seed", range(200))
def test_slot_classes_give_the_same_schedule(seed: int) -> None:
    """Labels only merge the tables of alike slots and end the DP V slots into the alike tail:
    the same schedule and payoff as without them, and the brute-force optimum."""
    job, wp, pp, wf, pf, classes = _with_alike_slots(seed)
    plain = best_schedule(job, wp, pp, wf, pf)
    merged = best_schedule(job, wp, pp, wf, pf, classes)
    assert merged.t_hat == plain.t_hat
    assert merged.payoff == pytest.approx(plain.payoff, rel=1e-12, abs=1e-12) or (
        math.isinf(plain.payoff) and math.isinf(merged.payoff))
    assert np.array_equal(merged.workers, plain.workers)
    assert np.array_equal(merged.ps, plain.ps)
    expected = brute_force(job, wp, pp, wf, pf)
    if expected > -math.inf:
        assert merged.payoff == pytest.approx(expected, rel=1e-9, abs=1e-9)
    # the sparse counts are the dense arrays' entries
    y = merged.worker_counts
    assert int(y.count.sum()) == int(merged.workers.sum())
    assert (merged.workers[y.slot, y.server] == y.count).all()


@pytest.mark.parametrize("seed", range(50))
def test_slot_classes_with_full_capacities(seed: int) -> None:
    """The certificate's call: (H, R) free capacity the same in every slot."""
    job, wp, pp, wf, pf, classes = _with_alike_slots(seed)
    cw, cp = wf.max(axis=0), pf.max(axis=0)
    plain = best_schedule(job, wp, pp, cw, cp)
    merged = best_schedule(job, wp, pp, cw, cp, classes)
    assert merged.t_hat == plain.t_hat and np.array_equal(merged.workers, plain.workers)
    assert payoff_upper_bound(job, wp, pp, cw, cp, classes) == pytest.approx(
        payoff_upper_bound(job, wp, pp, cw, cp), rel=1e-12, abs=1e-12) or math.isinf(
        payoff_upper_bound(job, wp, pp, cw, cp))


@pytest.mark.parametrize("seed", range(200))
def test_unit_pricer_is_best_schedule_for_unit_jobs(seed: int) -> None:
    """Column generation's pricing of V = 1 jobs (``UnitPricer``, tables shared per demand
    class) gives ``best_schedule``'s answer byte for byte: payoff, cost, t̂, counts. Prices
    with exact ties, flat stretches and float-noise ties; slots where nothing fits."""
    job, wp, pp, wf, pf = random_case(seed)
    rng = np.random.default_rng(1000 + seed)
    T, H, _ = wp.shape
    if seed % 3 == 0:  # long flat stretches (the work moves back across them) and noise ties
        wp = np.repeat(wp[:1], T, axis=0) * (1 + 1e-12 * rng.integers(0, 2, size=wp.shape))
    util = np.sort(rng.choice([5.0, 10.0, 30.0], size=T))[::-1].copy()
    cw, cp = wf.max(axis=0), pf.max(axis=0)
    if seed % 4 == 1:
        cp = np.zeros_like(cp)  # no PS room: nothing fits unless β = 0
    pricer = UnitPricer(wp, pp, cw, cp)
    for a in range(T):
        unit = JobSpec(a, 1, job.max_workers, job.ps_ratio, job.worker_demand, job.ps_demand,
                       util[:T - a])
        want = best_schedule(unit, wp, pp, cw, cp)
        got = pricer.best(unit)
        assert (got.payoff, got.cost, got.t_hat, got.utility) == \
            (want.payoff, want.cost, want.t_hat, want.utility)
        for g, w in ((got.worker_counts, want.worker_counts), (got.ps_counts, want.ps_counts)):
            assert all(np.array_equal(getattr(g, f), getattr(w, f))
                       for f in ("slot", "server", "count"))


def _same_answer(got, want) -> None:
    assert (got.payoff, got.cost, got.t_hat, got.utility) == \
        (want.payoff, want.cost, want.t_hat, want.utility)
    for g, w in ((got.worker_counts, want.worker_counts), (got.ps_counts, want.ps_counts)):
        assert all(np.array_equal(getattr(g, f), getattr(w, f))
                   for f in ("slot", "server", "count"))


@pytest.mark.parametrize("seed", range(200))
def test_unit_pricer_with_free_capacity_per_slot_and_labels(seed: int) -> None:
    """OASiS's use of ``UnitPricer``: free capacity per slot, (T, H, R), and its slot labels
    (an alike tail and an alike pair): ``best_schedule``'s answer with the same labels, byte
    for byte, for a unit job arriving in every slot; labels or not, the same answer."""
    job, wp, pp, wf, pf, classes = _with_alike_slots(seed)
    T = wp.shape[0]
    rng = np.random.default_rng(2000 + seed)
    util = np.sort(rng.choice([5.0, 10.0, 30.0], size=T))[::-1].copy()
    if seed % 4 == 1:
        wf[classes == classes[0]] = 0.0  # nothing fits in the first slot nor its copies
    labelled = UnitPricer(wp, pp, wf, pf, classes)
    plain = UnitPricer(wp, pp, wf, pf)
    for a in range(T):
        unit = JobSpec(a, 1, job.max_workers, job.ps_ratio, job.worker_demand, job.ps_demand,
                       util[:T - a])
        want = best_schedule(unit, wp, pp, wf, pf, classes)
        _same_answer(labelled.best(unit), want)
        _same_answer(plain.best(unit), best_schedule(unit, wp, pp, wf, pf))


@pytest.mark.parametrize("seed", range(250))
def test_convex_pricing_equals_brute_force(seed: int) -> None:
    """``best_schedule(convex=True)`` (column generation's pricing): the brute-force optimum
    and a plan that fits and costs what it says; with no PS cost (β = 0: every slot's cost
    convex) it takes the increment merge, otherwise the DP. Half the cases get slot labels."""
    job, wp, pp, wf, pf = random_case(seed)
    if seed % 2:
        job = JobSpec(job.arrival, job.workload, job.max_workers, job.ps_ratio,
                      job.worker_demand, np.zeros_like(job.ps_demand), job.utility)
    classes = None
    if seed % 4 >= 2:
        job, wp, pp, wf, pf, classes = _with_alike_slots(seed)
    res = best_schedule(job, wp, pp, wf, pf, classes, convex=True)
    expected = brute_force(job, wp, pp, wf, pf)
    if expected == -math.inf:
        assert res.payoff == -math.inf and res.t_hat is None
    else:
        assert res.payoff == pytest.approx(expected, rel=1e-9, abs=1e-9)
        check_plan(job, res, wp, pp, wf, pf)
        dp = best_schedule(job, wp, pp, wf, pf, classes)
        assert res.payoff == pytest.approx(dp.payoff, rel=1e-12, abs=1e-12)


def test_convex_pricing_on_long_jobs() -> None:
    """Many slots, a workload of hundreds: the merge's payoff is the DP's and its plan valid."""
    rng = np.random.default_rng(7)
    T, H, K, R = 120, 6, 1, 1
    for trial in range(6):
        wp = rng.choice([0.0, 0.5, 1.0, 2.0], size=(T, H, R)) * rng.uniform(0.5, 1.5)
        pp = np.zeros((T, K, R))
        util = np.sort(rng.uniform(50, 400, size=T))[::-1].copy()
        job = JobSpec(int(rng.integers(0, 10)), int(rng.integers(100, 400)), 8, 4.0,
                      np.ones(R), np.zeros(R), util)
        wf = np.full((H, R), float(rng.integers(1, 4)))
        pf = np.ones((K, R))
        dp = best_schedule(job, wp, pp, wf, pf)
        cv = best_schedule(job, wp, pp, wf, pf, convex=True)
        assert cv.payoff == pytest.approx(dp.payoff, rel=1e-12, abs=1e-9), trial
        if dp.fits:
            check_plan(job, cv, wp, pp, np.broadcast_to(wf, (T, H, R)),
                       np.broadcast_to(pf, (T, K, R)))


def _zero_price_cases():
    """Small random cases (brute force checks them) and long ones (many slots, workloads of
    tens to hundreds: both DPs, the alike tail), all at zero prices, with
    and without slot labels."""
    for seed in range(120):
        job, wp, pp, wf, pf = random_case(seed)
        if seed % 2:
            job, wp, pp, wf, pf, classes = _with_alike_slots(seed)
        else:
            classes = None
        yield job, np.zeros_like(wp), np.zeros_like(pp), wf, pf, classes, True
    rng = np.random.default_rng(11)
    for trial in range(24):
        T, H, K, R = int(rng.integers(40, 160)), int(rng.integers(1, 6)), 2, 2
        cap_w, cap_p = rng.integers(1, 5, size=(H, R)), rng.integers(1, 4, size=(K, R))
        wf = np.maximum(cap_w[None] - rng.integers(0, 4, size=(T, H, R)), 0).astype(float)
        pf = np.maximum(cap_p[None] - rng.integers(0, 3, size=(T, K, R)), 0).astype(float)
        u = int(rng.integers(T // 2, T))  # an alike tail from slot u on
        wf[u:], pf[u:] = wf[u], pf[u]
        classes = np.concatenate([np.arange(u), np.full(T - u, u)]) if trial % 2 else None
        util = np.sort(rng.choice([0.0, 1.0, 5.0, 20.0], size=T))[::-1].copy()  # plateaus
        job = JobSpec(int(rng.integers(0, T // 3)), int(rng.integers(1, 2 * T)),
                      int(rng.integers(1, 9)), float(rng.choice([1, 2, 4])),
                      rng.integers(0, 2, size=R).astype(float),
                      rng.integers(0, 2, size=R).astype(float), util)
        yield job, np.zeros((T, H, R)), np.zeros((T, K, R)), wf, pf, classes, False


def test_zero_prices_take_the_dps_answer_in_closed_form(monkeypatch) -> None:
    """At zero prices (``FreeCapacity.best``'s call) the closed form gives the DP's answer
    byte for byte (t̂ the earliest of the best utilities, the fewest units in the last slots),
    its plan fits, and its payoff is the brute-force optimum."""
    from oasis_opt.online import subroutine

    cases = list(_zero_price_cases())
    closed = [best_schedule(*case[:6]) for case in cases]
    monkeypatch.setattr(subroutine, "_costs_nothing", lambda cw, cp: False)
    fitted = 0
    for (job, wp, pp, wf, pf, classes, small), got in zip(cases, closed, strict=True):
        _same_answer(got, best_schedule(job, wp, pp, wf, pf, classes))
        if got.fits:
            fitted += 1
            check_plan(job, got, wp, pp, np.broadcast_to(wf, wp.shape),
                       np.broadcast_to(pf, pp.shape))
        if small:
            assert got.payoff == brute_force(job, wp, pp, wf, pf)
    assert fitted >= len(cases) // 3, fitted  # not only "nothing fits" on both sides
