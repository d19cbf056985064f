"""Instances whose demands HiGHS's default feasibility tolerances (1e-6 absolute on a MIP's
rows) do not serve. Demands of 1e-8 beside 1, or 0.33333334 three times, sum past a capacity
by less than that and more than the validator's 1e-9·C, so ``solve`` ended "algorithm error"
(exit 1) on valid instances; and HiGHS's presolve, given a PS demand of 1e-8 beside demands
of 1 and 0.33333334, called 1.0 optimal where 2.0 is (and 12 where 13 is at tight
tolerances). Demands below ``highs.FINE_DEMAND`` of their capacity are now solved carefully
from the start (``highs.CAREFUL``: tolerances 1e-9, no presolve), and a schedule that
overfills a server anyway (or whose worth is not HiGHS's objective, or a proven optimum below
an online schedule) is solved again carefully (``offline/report.py``, ``solved_again``);
where that fails too, the floor stands."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from bruteforce import best_utility
from conftest import INSTANCES, add_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from oasis_opt.formulations import highs
from oasis_opt.formulations.common import (
    CAREFUL_TOL,
    PLAIN,
    ROW_SLACK,
    Options,
    maximal_patterns,
    row_capacity,
)

from oasis_opt import algorithms
from oasis_opt.errors import InputError
from oasis_opt.generator import PRESETS, generate
from oasis_opt.io import instance_from_dict, load_instance
from oasis_opt.model import CAP_TOL, FIT_EPS, Schedule
from oasis_opt.offline import SolveStatus, scale, solve
from oasis_opt.utility import value
from oasis_opt.validate import overfilled, validate


def overshoot(pool: str) -> dict:
    """Job b (worth 10) needs the whole server alone; job a (worth 5) two more workers or
    PSs of 1e-8: 1 + 2e-8 > 1 + 1e-9, so only one of them fits (brute force: 10). HiGHS
    takes both (15) at its default tolerances."""
    ws, ps = [{"name": "w", "capacity": [1]}], [{"name": "p", "capacity": [1]}]
    if pool == "worker":
        a_w, a_p, b_w, b_p = [1e-8], [0], [1], [0]
    else:  # a roomy worker server: the PS pool carries the demands
        ws = [{"name": "w", "capacity": [100]}]
        a_w, a_p, b_w, b_p = [1], [1e-8], [1], [1]
    return {"format": "oasis-instance/1", "name": f"overshoot-{pool}", "horizon": 1,
            "resources": ["gpu"], "worker_servers": ws, "ps_servers": ps,
            "jobs": [{"id": "a", "arrival": 0, "workload": 2, "max_workers": 2, "ps_ratio": 1,
                      "worker_demand": a_w, "ps_demand": a_p,
                      "utility": {"kind": "table", "values": [5]}},
                     {"id": "b", "arrival": 0, "workload": 1, "max_workers": 1, "ps_ratio": 1,
                      "worker_demand": b_w, "ps_demand": b_p,
                      "utility": {"kind": "table", "values": [10]}}]}


def one_slot_job(i: str, worker: float, ps: float, values: list[float], workload: int = 1,
                 workers: int = 1) -> dict:
    return {"id": i, "arrival": 0, "workload": workload, "max_workers": workers,
            "ps_ratio": 1, "worker_demand": [worker], "ps_demand": [ps],
            "utility": {"kind": "table", "values": values}}


def thirds() -> dict:
    """Three jobs of 0.33333334 on servers of 1: only two fit a slot (3 × 0.33333334 =
    1.00000002); brute force 4 (j2 and one more in slot 0). HiGHS put all three in slot 0 (5);
    with the floor as MIP start it reported 5 and returned the start's vector."""
    return {"format": "oasis-instance/1", "name": "thirds", "horizon": 2,
            "resources": ["gpu"], "worker_servers": [{"name": "w", "capacity": [1]}],
            "ps_servers": [{"name": "p", "capacity": [1]}],
            "jobs": [one_slot_job("j0", 0.33333334, 0.33333334, [1]),
                     one_slot_job("j1", 0.33333334, 0.33333334, [1]),
                     one_slot_job("j2", 0.33333334, 0.33333334, [3, 1])]}


def presolved() -> dict:
    """Brute force 2 (j2 alone, or j0 and j1); HiGHS's presolve at its default tolerances
    proved 1.0 optimal (the PS row holds 1, 0.33333334 and 1e-8)."""
    return {"format": "oasis-instance/1", "name": "presolved", "horizon": 1,
            "resources": ["gpu"], "worker_servers": [{"name": "w", "capacity": [2]}],
            "ps_servers": [{"name": "p", "capacity": [1]}],
            "jobs": [one_slot_job("j0", 0.33333334, 1, [1]),
                     one_slot_job("j1", 0.7, 0.33333334, [1]),
                     one_slot_job("j2", 0.66666667, 1e-8, [2], 2, 2)]}


def presolved_tightly() -> dict:
    """Brute force 13 (j0 in slot 0, j1 in slot 1); HiGHS's presolve at tolerances 1e-10
    proved 12 optimal (the PS row holds 1, 0.33333333 and 1e-6), its defaults 15 (over
    capacity by 1e-6)."""
    def job(i, arrival, workers, ps_ratio, w, p, values):
        return {"id": i, "arrival": arrival, "workload": 1, "max_workers": workers,
                "ps_ratio": ps_ratio, "worker_demand": [w], "ps_demand": [p],
                "utility": {"kind": "table", "values": values}}
    return {"format": "oasis-instance/1", "name": "presolved-tightly", "horizon": 2,
            "resources": ["r0"], "worker_servers": [{"name": "w0", "capacity": [1]},
                                                    {"name": "w1", "capacity": [2]}],
            "ps_servers": [{"name": "p0", "capacity": [1]}],
            "jobs": [job("j0", 0, 2, 2, 0.33333334, 1e-6, [8, 5]),
                     job("j1", 1, 2, 4, 0.33333333, 0.33333333, [5, 1]),
                     job("j2", 0, 1, 1, 0.5, 1, [2])]}


CASES = {"overshoot-worker": lambda: overshoot("worker"),
         "overshoot-PS": lambda: overshoot("PS"), "thirds": thirds, "presolved": presolved,
         "presolved-tightly": presolved_tightly}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_the_optimum_of_fine_demands_is_brute_forces(case, modeler):
    instance = instance_from_dict(CASES[case]())
    schedule, report = solve(instance, modeler=modeler)
    assert report.status is SolveStatus.OPTIMAL
    assert report.objective == best_utility(instance)
    assert validate(instance, schedule).feasible
    assert report.bound >= report.objective


def test_fine_demands_are_solved_carefully_from_the_start():
    assert highs.fine_demands(instance_from_dict(overshoot("PS")))
    assert highs.fine_demands(instance_from_dict(presolved()))
    assert not highs.fine_demands(instance_from_dict(thirds()))
    # every shipped instance and the generator's presets keep HiGHS's defaults: the careful
    # solve changes no timing of theirs
    shipped = [load_instance(p) for p in sorted(INSTANCES.glob("*.json"))
               if p.name != "manifest.json"]
    generated = [generate(preset, seed=seed) for preset in PRESETS for seed in range(3)]
    assert len(shipped) > 10
    assert not any(highs.fine_demands(i) for i in shipped + generated)


@pytest.mark.parametrize("case", ["overshoot-worker", "thirds"])
@pytest.mark.parametrize("modeler", ["pyomo", "pulp"])
def test_a_customized_model_is_solved_again_too(case, modeler):
    instance = instance_from_dict(CASES[case]())

    def roomy(m):  # a row every schedule keeps: the model is the plain one
        add_rows(m, [sum(m.workers[j, t] for j in m.jobs) <= 10 for t in m.slots])
    schedule, report = solve(instance, modeler=modeler, customize=roomy)
    assert report.status is SolveStatus.OPTIMAL
    assert report.objective == best_utility(instance)
    assert validate(instance, schedule).feasible


def test_the_overfilling_incumbents_are_withdrawn_from_the_progress(monkeypatch):
    # without a floor, HiGHS at its defaults reports all three thirds in slot 0 (5) first:
    # the validator refuses it, and a point withdraws it before the tight solve's 4. (The
    # thirds are near_whole, so the solve is careful from the start: not here.)
    monkeypatch.setattr(highs, "near_whole", lambda instance: False)
    instance = instance_from_dict(thirds())
    seen = []
    _, report = solve(instance, time_limit=20, floor=(),
                      on_progress=lambda *p: seen.append(p))
    assert report.objective == 4.0 and report.status is SolveStatus.OPTIMAL
    incumbents = [p[1] for p in seen]
    assert 5.0 in incumbents
    withdrawn = incumbents.index(5.0) + 1
    assert incumbents[withdrawn] is None
    assert report.history[-1][1] == report.objective
    assert all(p[1] is None or p[1] <= p[2] for p in report.history[withdrawn:])


def test_where_care_does_not_help_the_floor_stands(monkeypatch):
    # the second solve at HiGHS's defaults fails again: the solver gives no schedule, the
    # floor's is the answer, and nothing is called optimal
    monkeypatch.setattr(highs, "CAREFUL", {})
    instance = instance_from_dict(thirds())
    schedule, report = solve(instance, time_limit=20, floor=("fifo",))
    assert validate(instance, schedule).feasible
    assert report.floor == "fifo" and report.objective < 5.0
    assert report.status is not SolveStatus.OPTIMAL
    assert report.bound >= best_utility(instance)


def test_overfilled_lists_the_capacity_violations_alone():
    instance = instance_from_dict(overshoot("worker"))
    both = Schedule.from_arrays(instance, "x", {0: np.array([[2]]), 1: np.array([[1]])},
                                {0: np.array([[2]]), 1: np.array([[1]])})
    found = overfilled(instance, both)
    assert [v.rule for v in found] == ["capacity"]
    assert "used 1.0000000200000001 > capacity 1" in found[0].message
    assert [str(v) for v in found] == [str(v) for v in validate(instance, both).violations
                                       if v.rule == "capacity"]


@pytest.mark.parametrize("case", ["overshoot-PS", "thirds"])
def test_cli_solve_of_fine_demands_exits_0(tmp_path, case):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(CASES[case]()))
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "solve", str(path), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "optimal"
    assert out["total_utility"] == best_utility(instance_from_dict(CASES[case]()))


#: Demands whose sums land just past a capacity: thirds rounded to eight digits, tenths
#: (inexact in binary), and 1e-8 beside whole units.
FINE = [0.33333334, 0.66666667, 0.33333333, 0.1, 0.3, 0.7, 1e-8, 1e-6, 0.5, 1]


@st.composite
def fine_demands(draw):
    """Tiny instances (brute force) whose demands are ``FINE`` on capacities of 1 or 2, one
    or two worker servers."""
    n_jobs = draw(st.integers(2, 3))
    vec = st.lists(st.sampled_from(FINE), min_size=1, max_size=1)

    def job(i):
        n = draw(st.integers(1, 3))
        return {"id": f"j{i}", "arrival": 0, "workload": draw(st.integers(1, 3)),
                "max_workers": n, "ps_ratio": draw(st.sampled_from([1, 2, 4])),
                "worker_demand": draw(vec), "ps_demand": draw(vec),
                "utility": {"kind": "table", "values": sorted(
                    draw(st.lists(st.integers(1, 20), min_size=1, max_size=2)), reverse=True)}}
    return {"format": "oasis-instance/1", "name": "fine", "horizon": draw(st.integers(1, 2)),
            "resources": ["gpu"],
            "worker_servers": [{"name": f"w{k}", "capacity": [draw(st.sampled_from([1, 2]))]}
                               for k in range(draw(st.integers(1, 2)))],
            "ps_servers": [{"name": "p", "capacity": [draw(st.sampled_from([1, 2]))]}],
            "jobs": [job(i) for i in range(n_jobs)]}


@settings(max_examples=60, deadline=None)
@given(fine_demands())
def test_fine_demands_match_bruteforce(d):
    instance = instance_from_dict(d)
    schedule, report = solve(instance)
    assert report.status is SolveStatus.OPTIMAL
    assert abs(report.objective - best_utility(instance)) <= 1e-9
    assert validate(instance, schedule).feasible


def test_a_proven_optimum_its_schedule_does_not_earn_is_solved_again(monkeypatch):
    # HiGHS's integrality tolerance times a large workload counts work that was not done:
    # the MILP's "optimum" then exceeds what its schedule earns. Simulated: the first solve
    # claims one more than it has; the careful one is believed.
    from oasis_opt.offline import backends
    real, calls = backends.solve_highspy, []

    def claims_more(*args, careful=False, **kwargs):
        calls.append(careful)
        raw = real(*args, careful=careful, **kwargs)
        return raw if careful else replace(raw, objective=raw.objective + 1.0)
    monkeypatch.setitem(backends.ROUTES, "highspy", claims_more)
    monkeypatch.setattr(backends, "solve_highspy", claims_more)
    instance = instance_from_dict(thirds())
    schedule, report = solve(instance, floor=())
    assert calls == [False, True]
    assert report.status is SolveStatus.OPTIMAL and report.objective == 4.0


def test_solve_refuses_workloads_its_milp_cannot_resolve(tmp_path):
    d = overshoot("worker")
    d["worker_servers"][0]["capacity"] = [1e15]
    d["jobs"][0].update(workload=10**9, max_workers=10**9, ps_ratio=10**6)
    with pytest.raises(InputError, match=r"jobs\[0\]\.workload: 1000000000 worker-slots"):
        solve(instance_from_dict(d))
    path = tmp_path / "i.json"
    path.write_text(json.dumps(d))
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "solve", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "more than the exact solver resolves" in r.stderr
    # a job that cannot finish does not count: the solve goes on without it
    d["jobs"][0].update(max_workers=1)
    _, report = solve(instance_from_dict(d))
    assert report.status is SolveStatus.OPTIMAL and report.objective == 10.0


def test_oasis_refuses_a_huge_dp_before_building_its_tables():
    # the PS table of 1e7 + 1 worker counts (80 MB and more) was built before the check
    import tracemalloc

    from oasis_opt.algorithms import run
    d = overshoot("worker")
    d["worker_servers"][0]["capacity"] = [1e15]
    d["ps_servers"][0]["capacity"] = [1e15]
    d["jobs"][0].update(workload=10**7, max_workers=10**7, ps_ratio=10**6)
    instance = instance_from_dict(d)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="dynamic programme"):
            run("oasis", instance)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6


def test_ratio_refuses_such_a_workload_before_the_algorithms_run(monkeypatch):
    from oasis_opt.ratio import compare
    d = overshoot("worker")
    d["worker_servers"][0]["capacity"] = [1e15]
    d["jobs"][0].update(workload=10**9, max_workers=10**9, ps_ratio=10**6)
    ran = []
    monkeypatch.setattr(algorithms, "run", lambda *a, **k: ran.append(a))
    with pytest.raises(InputError, match=r"jobs\[0\]\.workload"):
        compare(instance_from_dict(d))
    assert ran == []


def test_the_careful_solve_proves_the_same_optimum_on_ordinary_instances(monkeypatch):
    # tolerances of 1e-10 without presolve made HiGHS 1.16 prove 181.9 "optimal" on this
    # instance in 0.02 s (391.5 is): the careful options must not break what they do not fix
    from oasis_opt.generator import generate
    instance = generate("mixed", seed=0)
    _, plain = solve(instance, floor=())
    monkeypatch.setattr(highs, "fine_demands", lambda instance: True)
    _, careful = solve(instance, floor=())
    assert plain.status is careful.status is SolveStatus.OPTIMAL
    assert abs(careful.objective - plain.objective) <= 1e-6 * plain.objective


def _near_capacity(capacity: float, over: float, tiny: bool) -> dict:
    """Job a (worth 5): two workers of ``capacity/2·(1 + over)``, their sum past the server
    by ``over`` of it; job b (worth 1 in either slot): one worker of 1e-9·capacity, so that
    a resource measured in a finer unit (``scale.TINY``) or a careful solve can see it."""
    jobs = [{"id": "a", "arrival": 0, "workload": 2, "max_workers": 2, "ps_ratio": 2,
             "worker_demand": [capacity / 2 * (1 + over)], "ps_demand": [0],
             "utility": {"kind": "table", "values": [5]}}]
    if tiny:
        jobs.append({"id": "b", "arrival": 0, "workload": 1, "max_workers": 1, "ps_ratio": 1,
                     "worker_demand": [max(1e-9, capacity * 1e-9)], "ps_demand": [0],
                     "utility": {"kind": "table", "values": [1, 1]}})
    return {"format": "oasis-instance/1", "name": "near", "horizon": 2, "resources": ["g"],
            "worker_servers": [{"name": "w", "capacity": [capacity]}],
            "ps_servers": [{"name": "p", "capacity": [1]}], "jobs": jobs}


@pytest.mark.parametrize("tiny", [False, True], ids=["alone", "beside-1e-9"])
@pytest.mark.parametrize("over", [1e-13, 1e-12, 1e-10, 5e-10, 2e-9])
@pytest.mark.parametrize("capacity", [1e-6, 1.0, 1e3, 1e12])
def test_the_optimum_is_at_least_every_online_schedule(capacity, over, tiny):
    """Loads a hair past a capacity: the online algorithms place a unit while it fits within
    ``model.FIT_EPS`` of itself, the validator accepts 1e-9·C, and the exact solver's rows
    allow ``ROW_SLACK``·C between them. With rows of exactly C the MILP proved less than
    RRH's or OASiS's validated schedule (``solve`` failed: "proven optimum below rrh's
    schedule"), and with the 1e-9 job beside (a finer unit, a careful solve) it answered
    "feasible" with nothing: its row was left out as unable to bind by the validator's
    margin, and the schedule then failed the validator. Every online schedule validates,
    and ``solve`` proves at least the best of them, without a floor to lean on."""
    inst = instance_from_dict(_near_capacity(capacity, over, tiny))
    best = 0.0
    for name in algorithms.REGISTRY:
        schedule = algorithms.run(name, inst)
        assert validate(inst, schedule).feasible, name
        best = max(best, schedule.total_utility)
    schedule, rep = solve(inst, floor=())
    assert rep.status is SolveStatus.OPTIMAL
    assert validate(inst, schedule).feasible
    assert rep.objective >= best
    if over < ROW_SLACK:  # brute force fits what the validator accepts: 1e-9·C past C
        assert rep.objective == pytest.approx(best_utility(inst), rel=1e-9)


@pytest.mark.parametrize("capacity", [1e-3, 1.0, 1.1, 1.6384, 2.0, 1e3, 1e12])
def test_the_tolerances_nest(capacity):
    """What a placement may overfill (``FIT_EPS``, of a unit ≤ C) lies inside the MILP's
    row slack, whose right-hand side plus HiGHS's careful tolerance stays inside the
    validator's (never below C)."""
    assert 2 * FIT_EPS <= ROW_SLACK <= CAP_TOL / 2
    assert highs.CAREFUL["mip_feasibility_tolerance"] == CAREFUL_TOL
    rhs = float(row_capacity(np.array([[capacity]]), np.array([[capacity / 3]]))[0, 0])
    assert capacity <= rhs <= capacity * (1 + ROW_SLACK)
    assert rhs + CAREFUL_TOL <= capacity * (1 + CAP_TOL) or rhs == capacity


def test_a_load_just_past_the_validators_margin_is_not_the_optimum():
    """Seed 44 678 of the numeric-range search: one slot, a worker server of 1e-4 GPUs
    (measured in units of 2^-14, 1.6384), job b's two workers and job c's one load it
    1.0005e-9 of itself past C, just out of the validator's margin. The rows' slack
    (C·(1 + 5e-10)) plus HiGHS's careful 1e-9 let both solves run them, the schedule failed
    the validator twice, and ``solve`` fell back to "feasible" on the floor; the right-hand
    side is now held so that what HiGHS may pass stays valid, and OPT (b alone) is proven."""
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "r44678", "horizon": 1, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "capacity": [1e-4]}],
        "ps_servers": [{"name": "p", "capacity": [2218.9]}, {"name": "q",
                                                            "capacity": [269310.27]}],
        "jobs": [{"id": "b", "arrival": 0, "workload": 1, "max_workers": 3, "ps_ratio": 1,
                  "worker_demand": [5.0000000000050004e-05], "ps_demand": [8196.6],
                  "utility": {"kind": "deadline", "value": 674.15, "deadline": 1}},
                 {"id": "c", "arrival": 0, "workload": 2, "max_workers": 3, "ps_ratio": 2,
                  "worker_demand": [2.500000005e-05], "ps_demand": [602.96],
                  "utility": {"kind": "table", "values": [1.0]}}]})
    for modeler in ("auto", "pyomo", "pulp"):
        schedule, rep = solve(inst, modeler=modeler)
        assert rep.status is SolveStatus.OPTIMAL, modeler
        assert rep.objective == pytest.approx(674.15, rel=1e-12) == best_utility(inst)
        assert validate(inst, schedule).feasible


def test_fine_demands_count_only_where_a_row_may_bind():
    """Seed 64 215 of the search: a PS demand of 2.9e-8 (and 2.9e-5) beside a PS capacity of
    2.9e7 that no job can fill; the worker rows bind. The solve was careful for a row it
    never builds, and HiGHS without presolve proved 205 004 optimal through PuLP where
    7.07e10 is (``solve`` then failed: "proven optimum below rrh's schedule"). Only a
    resource on which some server may bind makes a solve careful now; the same tiny demand
    where the PS row binds still does."""
    data = {
        "format": "oasis-instance/1", "name": "r64215", "horizon": 3, "resources": ["r0"],
        "worker_servers": [{"name": "w0", "capacity": [1.0294541981448495e-09]},
                           {"name": "w1", "capacity": [232520050.0700497]}],
        "ps_servers": [{"name": "p0", "capacity": [28600012.27794444]}],
        "jobs": [{"id": "j1", "arrival": 0, "workload": 1, "max_workers": 1, "ps_ratio": 1,
                  "worker_demand": [232520049.83752966], "ps_demand": [2.860001227794444e-08],
                  "utility": {"kind": "table", "values": [11780.396140490871,
                                                          812.6473091361875,
                                                          280.0125955158295, 0.0]}},
                 {"id": "j2", "arrival": 0, "workload": 1, "max_workers": 3, "ps_ratio": 2,
                  "worker_demand": [23252004.983752966], "ps_demand": [2.8600012277944436e-05],
                  "utility": {"kind": "table", "values": [70654974628.76067,
                                                          193223.98705968057,
                                                          10.218489785251254, 0.0]}}]}
    inst = instance_from_dict(data)
    assert not highs.fine_demands(inst)
    for modeler in ("auto", "pyomo", "pulp"):
        schedule, rep = solve(inst, modeler=modeler)
        assert rep.status is SolveStatus.OPTIMAL
        assert rep.objective == pytest.approx(best_utility(inst), rel=1e-9)
    # j2's two PSs fill the server, and j1's PS of 1e-9 (below 1e-4 of it) may not fit
    data["ps_servers"][0]["capacity"] = [5.72e-5]
    data["jobs"][0]["ps_demand"] = [1e-9]
    assert highs.fine_demands(instance_from_dict(data))


#: Instances of the numeric-range search (round 26) proved wrong "optimal" through every
#: modeller without a floor (``floor=()``), found by an online schedule earning
#: more: r572 (40.32, proved 0) and r708 (14.63, proved 0.62), a worker or PS of
#: 9.99999999e14 on a server of 1e15 (``highs.near_whole``: its presolve); r2705 (107.14,
#: proved 40.74), rows of 1e15 measured at 2^49 (``scale.BIG``); r6072 (53.37, proved 0
#: through PuLP), two PSs of 2e13 on servers of 3.999999996e13; r21984 (68.07, proved
#: 45.18), the demand-class patterns (``test_patterns_test_fit_one_way``).
NUMERIC_CASES = json.loads((Path(__file__).parent / "numeric_cases.json").read_text())


@pytest.mark.parametrize("name", ["r572", "r708", "r2705"])
@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_near_whole_capacities_and_huge_rows_are_proven_right(name, modeler):
    instance = instance_from_dict(NUMERIC_CASES[name])
    opt = best_utility(instance)
    for floor in ((), None):
        schedule, report = solve(instance, modeler=modeler, floor=floor)
        assert report.status is SolveStatus.OPTIMAL
        assert report.objective == pytest.approx(opt, rel=1e-9)
        assert validate(instance, schedule).feasible and report.bound >= opt - 1e-9 * opt


@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_two_ps_over_by_a_sliver_do_not_make_the_optimum_zero(modeler):
    """r6072: j1 (4 worker-slots, one worker a slot, from slot 1 of 3) cannot complete; OPT
    has j0 done in its first slot (3 workers, one PS) and j2 in two (2 workers and 2 PSs of
    2e13 a slot, one on each PS server of 3.999999996e13: two on one are over by 1e-9·C).
    Too many servers for the brute force: the optimum is their values at those durations."""
    instance = instance_from_dict(NUMERIC_CASES["r6072"])
    u = {j.id: j.utility for j in instance.jobs}
    opt = value(u["j0"], 1) + value(u["j2"], 2)
    schedule, report = solve(instance, modeler=modeler, floor=())
    assert report.status is SolveStatus.OPTIMAL
    assert report.objective == pytest.approx(opt, rel=1e-9)
    assert validate(instance, schedule).feasible


def test_near_whole_capacities_are_solved_without_presolve():
    assert highs.near_whole(instance_from_dict(NUMERIC_CASES["r572"]))
    assert highs.near_whole(instance_from_dict(NUMERIC_CASES["r6072"]))
    assert highs.care_options(instance_from_dict(NUMERIC_CASES["r572"])) == \
        highs.NO_PRESOLVE
    assert highs.near_whole(instance_from_dict(thirds()))  # 1 / 0.33333334
    # whole quotients (4 GPUs of 1, 0.3 of 0.1) are not near: HiGHS's defaults serve them,
    # and every shipped instance and preset keeps them
    assert not highs.near_whole(instance_from_dict(overshoot("worker")))
    shipped = [load_instance(p) for p in sorted(INSTANCES.glob("*.json"))
               if p.name != "manifest.json"]
    generated = [generate(preset, seed=seed) for preset in PRESETS for seed in range(3)]
    assert not any(highs.near_whole(i) for i in shipped + generated)


def test_a_pool_that_may_bind_is_measured_below_big():
    instance = instance_from_dict(NUMERIC_CASES["r2705"])
    workers, _ = scale.unit_scales(instance)
    assert 2 * 1e15 * workers[0] <= scale.BIG < 2 * 2 * 1e15 * workers[0]


def test_patterns_test_fit_one_way():
    """r21984 (round 26's search): PSs of 3.125e10 and 15.625 on servers of 3.125e10 (in
    their unit). The counts tried held the small ones to none beside the large one, and the
    maximality test called two of them alone "not maximal" (the large one fit on top, within
    1e-9 of the rest): neither pattern was kept, the job with the small PSs never ran, and
    the default route proved 45.18 where the server model and column generation prove
    68.07, which is OPT: in the one slot only j0 and j3 can complete, and both do. One limit
    now, the server model's row C·(1 + ROW_SLACK)."""
    big, small = np.array([3.125e10]), np.array([15.625])
    assert maximal_patterns([big, small], [1, 2], big) == [(1, 1), (0, 2)]
    assert maximal_patterns([np.array([0.33333334])], [5], np.array([1.0])) == [(2,)]
    assert maximal_patterns([np.array([1 / 3]), np.array([0.5])], [5, 5],
                            np.array([1.0])) == [(3, 0), (1, 1), (0, 2)]
    instance = instance_from_dict(NUMERIC_CASES["r21984"])
    server, _ = solve(instance, options=PLAIN, floor=())
    for modeler in ("auto", "pyomo", "pulp"):
        schedule, report = solve(instance, modeler=modeler, floor=())
        assert report.status is SolveStatus.OPTIMAL
        assert report.objective == pytest.approx(server.total_utility, rel=1e-12)
        assert report.objective == pytest.approx(68.07337407960499, rel=1e-12)
        assert validate(instance, schedule).feasible


def test_a_second_solve_is_not_the_first_again(monkeypatch):
    """r18551 (round 26's search): a worker demand of 1e-6 beside capacities of 1000 makes
    the first solve careful (``fine_demands``); through PuLP it proved 39.91 where tetris's
    schedule earns 45.01, and the second solve, careful again with the same options, proved
    39.91 again: ``solve`` failed ("the proven optimum ... is below tetris's schedule"). A
    second solve after a careful one keeps its tolerances and presolves (``highs.TIGHT``)."""
    instance = instance_from_dict(NUMERIC_CASES["r18551"])
    assert highs.fine_demands(instance)
    assert highs.care_options(instance) == highs.CAREFUL
    assert highs.care_options(instance, careful=True) == highs.TIGHT
    assert highs.care_options(instance_from_dict(thirds()), careful=True) == highs.CAREFUL
    server, _ = solve(instance, options=PLAIN)
    schedule, report = solve(instance, modeler="pulp")
    assert report.status is SolveStatus.OPTIMAL and validate(instance, schedule).feasible
    assert report.objective == pytest.approx(server.total_utility, rel=1e-9)
    assert report.objective >= algorithms.run("tetris", instance).total_utility - 1e-9


def test_a_pattern_is_maximal_by_the_load_of_its_counts_not_the_order_they_were_added():
    """r25834 (round 37's search): on a PS server of 2e12 (its limit 2e12 + 1 000), one PS
    of 1e12 and one of 1 000.0000000000001 left 1e12 of room in floats taken item by item,
    so another 1e12 "fit" and (1, 1) was not maximal, while after two of 1e12 the small one
    did not fit: only (2, 0) was kept, and every medium proved 50.83 where the server model
    proves 62.54. Fit and maximality are now one test of the counts' load, summed exactly
    near the limit (``common.EXACT_NEAR``)."""
    big, small = np.array([1e12]), np.array([1000.0000000000001])
    assert maximal_patterns([big, small], [2, 1], np.array([2e12])) == [(2, 0), (1, 1)]
    assert maximal_patterns([small, big], [1, 2], np.array([2e12])) == [(1, 1), (0, 2)]
    instance = instance_from_dict(NUMERIC_CASES["r25834"])
    server, _ = solve(instance, options=PLAIN, floor=())
    assert server.total_utility == pytest.approx(62.541105000060725, rel=1e-12)
    for modeler in ("highspy", "pyomo", "pulp"):
        # the patterns asked for: on these unlike worker servers the default route takes
        # the server branch (``plan.PATTERN_MIN_SHARED_WORKERS``)
        schedule, report = solve(instance, modeler=modeler, floor=(), options=Options())
        assert report.route.startswith(f"compact/{modeler}/full")
        assert schedule.extras["packing"] == "pattern"
        assert report.status is SolveStatus.OPTIMAL and validate(instance, schedule).feasible
        assert report.objective == pytest.approx(server.total_utility, rel=1e-12)


@pytest.mark.parametrize("name", ["r18551", "r46354"])
def test_an_optimum_proven_without_presolve_gets_a_second_opinion(name):
    """Without presolve (``highs.presolve_off``: fine demands or near-whole capacities)
    HiGHS 1.16 proved wrong optima through PuLP and Pyomo with no floor to catch them: 39.91
    on r18551 (45.01 is) and 0 on r46354 (32.44 is). A second solve with presolve checks
    such a proof (``report.second_opinion``): every medium proves the server model's
    optimum, with the user's rows (none here) too, and no bound is below an online
    schedule."""
    instance = instance_from_dict(NUMERIC_CASES[name])
    assert highs.presolve_off(instance)
    assert "presolve" not in highs.care_options(instance, careful=highs.SECOND)
    server, _ = solve(instance, options=PLAIN, floor=())
    online = max(algorithms.run(a, instance).total_utility
                 for a in ("oasis", "fifo", "drf", "rrh", "tetris"))
    assert server.total_utility >= online - 1e-9
    runs = [(modeler, None) for modeler in ("highspy", "pyomo", "pulp")] + [
        (modeler, lambda model: None) for modeler in ("pyomo", "pulp")]  # the custom route
    for modeler, customize in runs:
        schedule, report = solve(instance, modeler=modeler, floor=(), customize=customize)
        assert report.status is SolveStatus.OPTIMAL and validate(instance, schedule).feasible
        assert report.objective == pytest.approx(server.total_utility, rel=1e-9)
        assert report.bound >= online - 1e-9
        assert report.history[-1][2] >= online - 1e-9


def test_a_second_opinion_keeps_the_better_schedule_and_the_bounds_it_leaves():
    """``second_opinion`` on made-up results over r46354's schedules (none, 0; OASiS's,
    32.44): the first solve's optimum below the second's schedule is dropped with its bound,
    the tracker's too; a second bound below the first's schedule is dropped; where both
    stand the bound is the lesser and the first is kept."""
    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.report import credible, second_opinion

    instance = instance_from_dict(NUMERIC_CASES["r46354"])
    good = algorithms.run("oasis", instance)
    none = Schedule.from_arrays(instance, "x", {}, {})
    v = good.total_utility
    read = {"none": none, "good": good}

    def opinion(first, second):
        tracker = Tracker(Clock(None), None)
        tracker.update(incumbent=read[first[0]].total_utility, bound=first[1])
        raw = SolveResult(SolveStatus.OPTIMAL, read[first[0]].total_utility, first[1],
                          (first[0],), solve_seconds=1.0)
        other = SolveResult(second[2], read[second[0]].total_utility, second[1],
                            (second[0],), solve_seconds=2.0)
        result, schedule = second_opinion(instance, raw, read[first[0]], tracker,
                                          tracker.clock, lambda clock: other,
                                          lambda r: read[r.values[0]])
        assert result.solve_seconds == 3.0
        return result, schedule, tracker

    # the first proved 0 where the second found OASiS's schedule and proved it
    result, schedule, tracker = opinion(("none", 0.0), ("good", v, SolveStatus.OPTIMAL))
    assert schedule is good and result.status is SolveStatus.OPTIMAL and result.bound == v
    assert tracker.bound == v and tracker.history[-1][2] == v  # (the 0 withdrawn)
    # ... and where the second ran out of time with no bound of its own: none stands
    result, schedule, tracker = opinion(("none", 0.0), ("good", None, SolveStatus.TIME_LIMIT))
    assert schedule is good and result.status is SolveStatus.TIME_LIMIT
    assert result.bound is None and tracker.bound == float("inf")
    # the second wrong: its bound (0) below the first's schedule; the first kept
    result, schedule, tracker = opinion(("good", v), ("none", 0.0, SolveStatus.OPTIMAL))
    assert schedule is good and result.status is SolveStatus.OPTIMAL and result.bound == v
    # both stand: the lesser bound
    result, schedule, _ = opinion(("good", v + 1), ("good", v, SolveStatus.OPTIMAL))
    assert schedule is good and result.bound == v
    assert credible([None, 5.0, 3.0], 4.0) == 5.0 and credible([3.0], 4.0) is None
    assert credible([4.0 - 1e-9], 4.0) == 4.0 - 1e-9 and credible([], None) is None


def test_a_solve_error_is_solved_again_carefully():
    """r102874 (round 26's search): near-whole capacities (PSs of 9.99999999e14 on servers of
    1e15), so HiGHS runs without presolve; given the floor's schedule as its start it ended
    in "Solve error" and ``solve`` failed (exit 1 on a valid instance). The compact route
    solves once more carefully, as where a schedule overfills."""
    instance = instance_from_dict(NUMERIC_CASES["r102874"])
    assert highs.care_options(instance) == highs.NO_PRESOLVE
    server, _ = solve(instance, options=PLAIN, floor=())
    schedule, report = solve(instance, modeler="highspy")
    assert report.status is SolveStatus.OPTIMAL and validate(instance, schedule).feasible
    assert report.objective == pytest.approx(server.total_utility, rel=1e-9)


def test_column_generation_proves_its_lp_only_where_its_duals_do():
    """r605706 (round 26's search): HiGHS's LP of the master returned duals at which a column
    already in it had a reduced cost of 12.3 (PSs of 1e6 beside capacities of 3.3e14), so no
    column entered, the LP's 52.56 was taken as proven, and ``--method colgen`` called its
    52.86 optimal where DRF's schedule earns 64.87. Such a round proves nothing
    (``pattern_master.lp_proven``): the bound is the least Lagrangian one, valid at any
    prices, and nothing is called optimal below DRF."""
    from oasis_opt.formulations.pattern_master import lp_proven
    assert lp_proven(52.56, 52.56 + 1e-5) and not lp_proven(52.56, 64.87)
    assert not lp_proven(52.56, float("inf"))
    instance = instance_from_dict(NUMERIC_CASES["r605706"])
    drf = algorithms.run("drf", instance).total_utility
    assert drf == pytest.approx(64.87119149482524)
    schedule, report = solve(instance, method="colgen", floor=(), time_limit=5)
    assert validate(instance, schedule).feasible
    assert report.bound >= drf - 1e-9 * drf
    assert report.status is not SolveStatus.OPTIMAL or report.objective >= drf - 1e-9 * drf


def numeric_search():
    """``tools/numeric_search.py`` as a module."""
    import importlib.util
    path = Path(__file__).resolve().parent.parent / "tools" / "numeric_search.py"
    spec = importlib.util.spec_from_file_location("numeric_search", path)
    search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(search)
    return search


def test_the_numeric_search_makes_the_pinned_instances_from_their_seeds(tmp_path):
    """``tools/numeric_search.py`` regenerates the instances it found (their seeds are their
    names), so a change to its generator is seen here, and its command runs."""
    search = numeric_search()
    for name in ("r102874", "r18551", "r21984", "r46354", "r25834"):
        made = search.instance(int(name[1:]))
        assert {**made, "name": name} == NUMERIC_CASES[name]
    assert search.main(["0", "3", "--routes", "compact", "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize("mode, seeds", [("tiny", ["0", "6"]), ("ordinary", ["0", "3"])])
def test_the_numeric_search_modes_run_and_find_nothing_on_a_few_seeds(tmp_path, capsys, mode,
                                                                      seeds):
    """Its brute-force mode (every route against ``bruteforce.best_utility``) and its mode
    of ordinary numbers (the routes against each other) run on every route, and a few seeds
    of each find nothing; the tiny instances are ones brute force takes (its docstring)."""
    search = numeric_search()
    for seed in range(int(seeds[0]), int(seeds[1])):
        data = search.GENERATORS[mode](seed)
        assert data == search.GENERATORS[mode](seed)  # reproducible from the seed
        if mode == "tiny":
            assert len(data["jobs"]) <= 3 and data["horizon"] <= 4
            assert search.enumeration(data) <= search.TINY_ENUM
            for pool in ("worker_servers", "ps_servers"):
                assert sum(g.get("count", 1) for g in data[pool]) <= 2
    code = search.main([*seeds, "--mode", mode, "--routes", "compact,colgen,limited",
                        "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().out
    assert json.loads(capsys.readouterr().err)["instances"] >= 2


def test_the_numeric_search_sees_a_wrong_optimum_and_a_wrong_bound(monkeypatch):
    """A route that calls half the optimum optimal, or gives half of it as its bound, is a
    failure against brute force and against the other routes' schedules."""
    import oasis_opt.offline as offline
    search = numeric_search()
    seed = next(s for s in range(100) if search.brute_force(
        instance_from_dict(search.tiny(s)))[0] > 1)
    data = search.tiny(seed)
    inst = instance_from_dict(data)
    real = offline.solve

    def halved(instance, **kw):
        schedule, report = real(instance, **kw)
        if kw.get("modeler") == "pulp":
            return replace(schedule, total_utility=schedule.total_utility / 2), report
        if kw.get("method") == "colgen":
            return schedule, replace(report, bound=report.bound / 2)
        return schedule, report

    monkeypatch.setattr(offline, "solve", halved)
    runs = search.solves("compact") + search.solves("colgen")
    found, _ = search.judge(inst, data, "tiny", runs)
    failures = {(f["route"], f["what"]) for f in found if f["kind"] == "failure"}
    assert ("pulp-nofloor", "optimum below brute force") in failures
    assert any(route == "pulp-nofloor" and what.endswith("'s schedule")
               for route, what in failures)  # below another route's (or online) schedule
    assert ("colgen", "bound below brute force") in failures
    assert {route for route, _ in failures} == {"pulp-nofloor", "colgen"}
    found, _ = search.judge(inst, data, "ordinary", runs)  # the routes against each other
    assert {f["route"] for f in found if f["kind"] == "failure"} == {"pulp-nofloor", "colgen"}


# Round 27's search (``--mode extreme``, minimised): a job whose demand is (1 + 1e-9)·C
# counted as earning ~10 alone (``floor(C/d + 1e-9)`` = 1), so the utilities of ~1e-8 that
# the model's rows can hold were not scaled up, and HiGHS proved 0 (or 1.8e-5 where 4.9e-4
# fits strictly) optimal without a floor to catch it.
@pytest.mark.parametrize("name", ["e2019365", "e2104895", "e2111499", "e2113019"])
@pytest.mark.parametrize("modeler", ["highspy", "pulp", "pyomo"])
def test_a_job_only_the_validators_tolerance_fits_does_not_set_the_scale(name, modeler):
    instance = instance_from_dict(NUMERIC_CASES[name])
    loose = best_utility(instance)  # brute force at the validator's tolerance: the top end
    best = max(algorithms.run(a, instance).total_utility
               for a in ("fifo", "drf", "tetris", "rrh", "oasis"))
    assert 0 < best <= loose
    schedule, report = solve(instance, modeler=modeler, floor=())
    assert report.status is SolveStatus.OPTIMAL
    assert schedule.total_utility >= best * (1 - 1e-6)
    assert schedule.total_utility <= loose * (1 + 1e-6)
    assert report.bound >= schedule.total_utility * (1 - 1e-9)
