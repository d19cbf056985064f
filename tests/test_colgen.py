"""Column generation (SPEC §2, the schedule LP): LP bound ≥ OPT ≥ price-and-branch incumbent on
every manifest instance; the bound is no weaker than the compact MILP's LP relaxation; the
pricing oracle returns the true most-reduced-cost column (brute force over every per-server
allocation); the bound stays valid when stopped early."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pulp
import pytest
from conftest import INSTANCES
from oasis_opt.formulations import colgen, colgen_scale, compact_pulp
from oasis_opt.formulations.common import SPEC_OPTIONS, Options

from oasis_opt.io import load_instance
from oasis_opt.offline import colgen_inputs
from oasis_opt.online.subroutine import JobSpec, best_schedule
from oasis_opt.validate import validate

MANIFEST = json.loads((INSTANCES / "manifest.json").read_text())["instances"]


def _tol(x: float) -> float:
    return 1e-6 * max(1.0, abs(x))


@pytest.mark.parametrize("bound_only", [False, True], ids=["full", "bound-only"])
@pytest.mark.parametrize("entry", MANIFEST, ids=[e["name"] for e in MANIFEST])
def test_bound_opt_incumbent_sandwich(entry, bound_only):
    """Also the trace-scale path (``bound_only``: fixed-rate columns, the LP rounded, no
    price-and-branch; tests/test_colgen_scale.py)."""
    inst = load_instance(INSTANCES / entry["file"])
    kw = colgen_inputs(inst)
    res = colgen.solve(inst, **kw, mip_time_limit=5.0, bound_only=bound_only)
    opt = entry["optimum"]
    assert res.extras["lp_proven"]
    # never worse than its seeds
    assert res.schedule.total_utility >= max((s.total_utility for s in kw["seeds"]),
                                             default=0.0) - _tol(opt)
    assert res.bound >= opt - _tol(opt)
    assert res.schedule.total_utility <= opt + _tol(opt)
    rep = validate(inst, res.schedule)
    assert rep.feasible, rep.violations
    assert rep.total_utility == pytest.approx(res.schedule.total_utility)


def _compact_lp(inst, options) -> float:
    m = compact_pulp.build(inst, options)
    for v in m.problem.variables():
        v.cat = pulp.LpContinuous
    m.problem.solve(pulp.HiGHS(msg=False))
    return float(pulp.value(m.problem.objective) or 0.0)


@pytest.mark.parametrize("name", ["small-s0", "small-s2", "edge-zero-tail", "edge-last-slot"])
@pytest.mark.parametrize("options", [SPEC_OPTIONS, Options(packing="server")],
                         ids=["spec-rows", "tightened-server"])
def test_bound_no_weaker_than_compact_lp(name, options):
    """The schedule LP convexifies each job's schedules (Dantzig–Wolfe on job blocks), so its
    bound is at most the LP relaxation of the compact model in server form."""
    inst = load_instance(INSTANCES / f"{name}.json")
    res = colgen.solve(inst, **colgen_inputs(inst))
    assert res.extras["lp_proven"]
    assert res.bound <= _compact_lp(inst, options) + _tol(res.bound)


def _brute_best_payoff(inst, i, p, q) -> float:
    """max over every schedule of job i (every per-server allocation in every slot, within the
    full capacities) of f(t̂ − a + 1) − priced cost; −inf when none finishes."""
    job = inst.jobs[i]
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    zmax = math.ceil(job.max_workers / job.ps_ratio - 1e-9)
    per_slot = []  # for each slot: {work: least cost}
    for t in range(T):
        best: dict[int, float] = {0: 0.0}
        if t >= job.arrival:
            for y in itertools.product(range(job.max_workers + 1), repeat=H):
                w = sum(y)
                if w == 0 or w > job.max_workers:
                    continue
                if any((job.worker_demand * y[h] > inst.worker_capacity[h] + 1e-9).any()
                       for h in range(H)):
                    continue
                for z in itertools.product(range(zmax + 1), repeat=K):
                    if job.ps_ratio * sum(z) < w - 1e-9:
                        continue
                    if any((job.ps_demand * z[k] > inst.ps_capacity[k] + 1e-9).any()
                           for k in range(K)):
                        continue
                    cost = sum(y[h] * float(p[t, h] @ job.worker_demand) for h in range(H)) + \
                        sum(z[k] * float(q[t, k] @ job.ps_demand) for k in range(K))
                    best[w] = min(best.get(w, math.inf), cost)
        per_slot.append(best)
    V = job.workload
    states = {0: 0.0}
    answer = -math.inf
    for t in range(T):
        nxt: dict[int, float] = {}
        for v, c in states.items():
            for w, cw in per_slot[t].items():
                v2 = min(V, v + w)
                nxt[v2] = min(nxt.get(v2, math.inf), c + cw)
        states = nxt
        if V in states and t >= job.arrival:
            answer = max(answer, inst.utility_at(i, t) - states[V])
    return answer


@pytest.mark.parametrize("name", ["edge-zero-tail", "edge-last-slot", "edge-never-fits",
                                  "edge-zero-capacity"])
def test_pricing_oracle_is_exact_at_lp_duals(name):
    inst = load_instance(INSTANCES / f"{name}.json")
    T, R = inst.horizon, len(inst.resources)
    H, K = len(inst.worker_names), len(inst.ps_names)
    master = colgen._Master(inst)
    rng = np.random.default_rng(0)
    # The LP duals of a master seeded with each job's fastest schedule, and random prices.
    for i in range(inst.num_jobs):
        b = best_schedule(JobSpec.from_instance(inst, i), np.zeros((T, H, R)),
                          np.zeros((T, K, R)), inst.worker_capacity, inst.ps_capacity)
        col = colgen_scale.column_of(inst, i, b.worker_counts, b.ps_counts) \
            if math.isfinite(b.payoff) else None
        if col is not None:
            master.add(col)
    prices = []
    if master.columns:
        _, duals = master.solve_lp()
        n = master.n_w + master.n_p
        prices.append((duals[:master.n_w].reshape(T, H, R),
                       duals[master.n_w:n].reshape(T, K, R)))
    prices += [(rng.uniform(0, 3, (T, H, R)), rng.uniform(0, 3, (T, K, R))) for _ in range(3)]
    for p, q in prices:
        for i in range(inst.num_jobs):
            got = best_schedule(JobSpec.from_instance(inst, i), p, q, inst.worker_capacity,
                                inst.ps_capacity).payoff
            want = _brute_best_payoff(inst, i, p, q)
            if math.isinf(want):
                assert got == want
            else:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_bound_valid_when_stopped_early():
    inst = load_instance(INSTANCES / "testbed-s1.json")
    opt = next(e["optimum"] for e in MANIFEST if e["name"] == "testbed-s1")
    for iterations in (1, 2, 4):
        res = colgen.solve(inst, **colgen_inputs(inst), max_iterations=iterations, mip_time_limit=1.0)
        assert res.bound >= opt - _tol(opt)
        assert validate(inst, res.schedule).feasible


def test_implied_rows_are_exact():
    cap = np.array([[4.0, 16.0, 40.0]])
    demand = np.array([[1.0, 4.0, 10.0], [1.0, 2.0, 5.0]])
    # cpu/16 ≤ gpu/4 and bw/40 ≤ gpu/4 for both jobs: only the gpu row binds
    assert colgen.implied_rows(cap, demand).tolist() == [[True, False, False]]
    # with a job whose bw share (20/40) exceeds its gpu share, bw implies gpu and cpu
    demand[1, 2] = 20.0
    assert colgen.implied_rows(cap, demand).tolist() == [[False, False, True]]
    assert colgen.implied_rows(cap, np.zeros((2, 3))).tolist() == [[False, False, False]]
