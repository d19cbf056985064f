"""The pattern master (``formulations/pattern_master.py``) and LNS (``formulations/lns.py``):
identical servers packed exactly, its LP a valid bound no weaker than the schedule LP, its
MILP's schedules mapped to servers and validated, against the brute force (tests/bruteforce.py)
on tiny instances with identical servers; column generation's anytime history and its whole-
budget time limit."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from bruteforce import best_utility
from conftest import INSTANCES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oasis_opt.formulations import colgen, lns
from oasis_opt.formulations.pattern_master import PatternMaster, dive, generate
from oasis_opt.formulations.status import SolveStatus

from oasis_opt.generator import generate as make_instance
from oasis_opt.io import instance_from_dict, load_instance
from oasis_opt.offline import colgen_inputs
from oasis_opt.online.subroutine import JobSpec
from oasis_opt.validate import validate

MANIFEST = {e["name"]: e for e in json.loads((INSTANCES / "manifest.json").read_text())
            ["instances"]}


def _tol(x: float) -> float:
    return 1e-6 * max(1.0, abs(x))


def _job(i, n, demand, utility, workload=None):
    return {"id": f"j{i}", "arrival": 0, "workload": workload or n, "max_workers": n,
            "ps_ratio": 4, "worker_demand": demand, "ps_demand": [0, 1],
            "utility": {"kind": "table", "values": [utility]}}


def _packing_instance():
    """Two identical servers (4 GPU, 40 Gbps), one slot: 3 workers of 20 Gbps (job A) and 4 of
    5 Gbps (job B) fit the pair's totals (7 GPU, 80 Gbps) but no split over the two servers
    (2 A fill one server's bandwidth; the other holds 1 A and 3 B at most). OPT = 10."""
    return instance_from_dict({
        "format": "oasis-instance/1", "name": "packing", "horizon": 1,
        "resources": ["gpu", "bw"],
        "worker_servers": [{"name": "w", "count": 2, "capacity": [4, 40]}],
        "ps_servers": [{"name": "p", "capacity": [0, 8]}],
        "jobs": [_job(0, 3, [1, 20], 10.0), _job(1, 4, [1, 5], 10.0)]})


def test_pattern_rows_cut_the_schedule_lp():
    inst = _packing_instance()
    opt = best_utility(inst)
    assert opt == pytest.approx(10.0)
    specs = [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    pm = PatternMaster(inst)
    assert pm.pools[0].pattern == [True]  # the two servers are one pattern unit
    proven, lp = generate(pm, specs)
    assert proven
    # the schedule LP takes both jobs (their totals fit); the patterns do not
    plain = colgen.ColgenStats(math.inf, 0.0, False, SolveStatus.NO_SOLUTION, 0, 0)
    master = colgen._Master(inst, aggregate=True)
    assert colgen._generate(master, specs, plain, start=time.perf_counter(), deadline=None,
                            max_iterations=100, smoothing=0.0)
    assert plain.lp_value == pytest.approx(20.0)
    assert opt - 1e-6 <= lp < 20.0 - 1e-3
    res = colgen.solve(inst, **colgen_inputs(inst))
    assert res.schedule.total_utility == pytest.approx(opt)
    assert res.bound >= opt - _tol(opt)
    assert validate(inst, res.schedule).feasible


@st.composite
def identical_server_instances(draw):
    """1–3 jobs, 2 identical worker servers (sometimes 2 identical PS servers), horizon ≤ 3."""
    r = draw(st.integers(1, 2))
    vec = st.lists(st.sampled_from([0, 1, 2, 3]), min_size=r, max_size=r)
    cap = draw(vec)
    jobs = []
    for i in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 3))
        jobs.append({"id": f"j{i}", "arrival": draw(st.integers(0, 1)),
                     "workload": draw(st.integers(1, 5)), "max_workers": n,
                     "ps_ratio": draw(st.sampled_from([1, 2, 1.5])),
                     "worker_demand": draw(vec), "ps_demand": draw(vec),
                     "utility": {"kind": "table", "values": sorted(
                         draw(st.lists(st.floats(0, 50), min_size=1, max_size=3)),
                         reverse=True)}})
    return {"format": "oasis-instance/1", "name": "h", "horizon": draw(st.integers(2, 3)),
            "resources": [f"r{k}" for k in range(r)],
            "worker_servers": [{"name": "w", "count": 2, "capacity": cap}],
            "ps_servers": [{"name": "p", "count": draw(st.integers(1, 2)),
                            "capacity": draw(vec)}],
            "jobs": jobs}


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(identical_server_instances())
def test_pattern_master_against_brute_force(d):
    inst = instance_from_dict(d)
    opt = best_utility(inst)
    specs = [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    pm = PatternMaster(inst)
    proven, lp = generate(pm, specs)
    assert proven
    assert lp >= opt - _tol(opt)  # the pattern LP is a bound
    res = colgen.solve(inst, **colgen_inputs(inst), mip_time_limit=2.0)
    assert res.bound >= opt - _tol(opt)
    assert res.bound <= lp + _tol(lp) or res.bound <= res.extras["lp_value"] + _tol(lp)
    assert res.schedule.total_utility <= opt + _tol(opt)
    rep = validate(inst, res.schedule)
    assert rep.feasible, rep.violations
    assert rep.total_utility == pytest.approx(res.schedule.total_utility)


@pytest.mark.parametrize("name", ["testbed-s0", "testbed-s2", "small-s1"])
def test_history_and_progress(name):
    inst = load_instance(INSTANCES / f"{name}.json")
    seen = []
    res = colgen.solve(inst, **colgen_inputs(inst), on_progress=lambda *p: seen.append(p), mip_time_limit=4.0)
    opt = MANIFEST[name]["optimum"]
    assert seen == res.extras["history"] and res.extras["history"]
    secs, incs, bounds = zip(*res.extras["history"], strict=True)
    assert list(secs) == sorted(secs)
    assert list(incs) == sorted(incs)  # the incumbent only improves
    assert list(bounds) == sorted(bounds, reverse=True)  # the bound only falls
    assert all(i <= b + _tol(b) for i, b in zip(incs, bounds, strict=True))
    assert all(b >= opt - _tol(opt) for b in bounds)
    assert incs[-1] == pytest.approx(res.schedule.total_utility)
    assert bounds[-1] == pytest.approx(res.bound)
    assert validate(inst, res.schedule).feasible


def test_lns_never_worsens():
    inst = load_instance(INSTANCES / "testbed-s1.json")
    specs = [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    pm = PatternMaster(inst)
    generate(pm, specs)
    x = np.zeros(len(pm.columns))
    lam = np.zeros(pm.n_lam)  # the empty schedule: every job free in a full window
    move = lns.search(pm, specs, x, lam, 0, inst.horizon - 1, 10.0)
    sched = pm.schedule(*move.values)
    rep = validate(inst, sched)
    assert rep.feasible, rep.violations
    assert sched.total_utility == pytest.approx(move.objective)
    opt = MANIFEST["testbed-s1"]["optimum"]
    assert 0 < move.objective <= opt + _tol(opt)
    # a narrow window around that schedule keeps or improves it
    again = lns.search(pm, specs, *move.values, 3, 6, 10.0)
    assert again.objective >= move.objective - _tol(move.objective)
    assert validate(inst, pm.schedule(*again.values)).feasible


@pytest.mark.slow
def test_time_limit_is_the_whole_budget():
    """100 jobs of the paper preset do not close to 1e-4 in a few seconds: the solve must stop
    by the limit (5 % + 2 s), with a valid schedule at least as good as the best heuristic."""
    inst = make_instance("paper", seed=1, jobs=100)
    limit = 6.0
    t = time.perf_counter()
    res = colgen.solve(inst, **colgen_inputs(inst), time_limit=limit)
    took = time.perf_counter() - t
    assert took <= 1.05 * limit + 2.0
    inc = res.schedule.total_utility
    assert validate(inst, res.schedule).feasible
    assert res.bound >= inc
    assert math.isfinite(res.bound)
    from oasis_opt import algorithms
    assert inc >= algorithms.run("oasis", inst).total_utility - 1e-6


def test_pack_finds_integer_patterns_or_none():
    pm = PatternMaster(_packing_instance())
    P = np.array([[2, 0], [0, 2], [1, 1]])
    got = pm.pack(P, np.array([3, 1]), 2)
    assert got is not None and got.sum() <= 2 and (got @ P >= [3, 1]).all()
    # half of (2, 0) and half of (0, 2) cover (1, 1) in one server, no integer choice does
    assert pm.pack(np.array([[2, 0], [0, 2]]), np.array([1, 1]), 1) is None
    assert pm.pack(P, np.zeros(2, dtype=int), 0) is not None


@pytest.mark.parametrize("name", ["testbed-s0", "testbed-s1", "small-s0"])
def test_dive_gives_a_valid_schedule(name):
    inst = load_instance(INSTANCES / f"{name}.json")
    specs = [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    pm = PatternMaster(inst)
    generate(pm, specs)
    got = dive(pm, specs, time.perf_counter() + 20.0)
    assert got is not None
    sched = pm.schedule(*got)
    rep = validate(inst, sched)
    assert rep.feasible, rep.violations
    opt = MANIFEST[name]["optimum"]
    assert 0 < sched.total_utility <= opt + _tol(opt)
    assert sched.total_utility == pytest.approx(sum(pm.columns[k].value
                                                    for k in np.flatnonzero(got[0] > 0.5)))


def test_a_class_of_small_jobs_fills_a_server():
    """Four one-worker jobs of one demand class on two servers of 2 GPUs: a server holds two of
    them, more than any one job's own count (the patterns must allow it, else the LP bound
    falls below OPT = 40)."""
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "class", "horizon": 1, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "count": 2, "capacity": [2]}],
        "ps_servers": [{"name": "p", "capacity": [0]}],
        "jobs": [{"id": f"j{i}", "arrival": 0, "workload": 1, "max_workers": 1,
                  "ps_ratio": 1, "worker_demand": [1], "ps_demand": [0],
                  "utility": {"kind": "table", "values": [10.0]}} for i in range(4)]})
    assert best_utility(inst) == pytest.approx(40.0)
    specs = [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    pm = PatternMaster(inst)
    proven, lp = generate(pm, specs)
    assert proven and lp >= 40.0 - 1e-6
    res = colgen.solve(inst, **colgen_inputs(inst))
    assert res.schedule.total_utility == pytest.approx(40.0)
    assert validate(inst, res.schedule).feasible


def test_lns_moves_count_the_windows_kept(monkeypatch):
    """``lns_moves`` counts the windows whose move was kept, as at trace scale
    (``trace_lns.search``'s count), not every window searched."""
    inst = load_instance(INSTANCES / "testbed-s1.json")
    searched, kept = [0], [0]
    real_search, real_mip = lns.search, PatternMaster.solve_mip

    def search(*args, **kwargs):
        searched[0] += 1
        return real_search(*args, **kwargs)

    def on_schedule(_sched):
        kept[0] += searched[0] > 0  # an incumbent the moves found

    monkeypatch.setattr(colgen.lns, "search", search)
    # the MILP given a moment only, so that the moves have something to find
    monkeypatch.setattr(PatternMaster, "solve_mip",
                        lambda self, _limit, *args: real_mip(self, 0.01, *args))
    res = colgen.solve(inst, mip_time_limit=10.0, mip_gap=0.0, diving=False,
                       on_schedule=on_schedule)
    assert validate(inst, res.schedule).feasible
    assert 1 <= kept[0] < searched[0]  # (without a time limit it stops after fruitless ones)
    assert res.extras["lns_moves"] == kept[0]
