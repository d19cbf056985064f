"""Utilities of any size solved exactly (``oasis_opt/offline/scale.py``): with every f_i(1)
near 1e-9 HiGHS's absolute tolerances ended the MILP at once, "optimal" at 2.2e-9 against
an optimum of 2.5e-9, with the gap reported 0."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from bruteforce import best_utility
from conftest import INSTANCES

from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict, load_schedule
from oasis_opt.offline import SolveStatus, solve
from oasis_opt.offline.scale import objective_scale, scaled_instance
from oasis_opt.utility import Deadline, Linear, Sigmoid, Table
from oasis_opt.validate import validate


def times(utility: dict, k: float) -> dict:
    """A utility of the instance format multiplied by ``k``."""
    u = dict(utility)
    if u["kind"] == "sigmoid":
        u["gamma1"] *= k
    elif u["kind"] == "table":
        u["values"] = [v * k for v in u["values"]]
    elif u["kind"] == "deadline":
        u["value"] *= k
    else:
        u["value"], u["decay"] = u["value"] * k, u["decay"] * k
    return u


def small(k: float, name: str = "small-s0.json") -> dict:
    data = json.loads((INSTANCES / name).read_text())
    for j in data["jobs"]:
        j["utility"] = times(j["utility"], k)
    return data


TINY = {  # a contended pool, the four utility families, an optimum brute force finds
    "format": "oasis-instance/1", "name": "tiny", "horizon": 4, "resources": ["gpu", "cpu"],
    "worker_servers": [{"name": "w", "capacity": [2, 8]}],
    "ps_servers": [{"name": "p", "capacity": [0, 4]}],
    "jobs": [
        {"id": "a", "arrival": 0, "workload": 3, "max_workers": 2, "ps_ratio": 2,
         "worker_demand": [1, 2], "ps_demand": [0, 2],
         "utility": {"kind": "sigmoid", "gamma1": 10, "gamma2": 1, "gamma3": 2}},
        {"id": "b", "arrival": 0, "workload": 2, "max_workers": 2, "ps_ratio": 1,
         "worker_demand": [1, 2], "ps_demand": [0, 2],
         "utility": {"kind": "table", "values": [9, 8, 1]}},
        {"id": "c", "arrival": 1, "workload": 2, "max_workers": 1, "ps_ratio": 1,
         "worker_demand": [1, 2], "ps_demand": [0, 2],
         "utility": {"kind": "linear", "value": 7, "decay": 2.5}},
        {"id": "d", "arrival": 2, "workload": 1, "max_workers": 1, "ps_ratio": 1,
         "worker_demand": [1, 2], "ps_demand": [0, 2],
         "utility": {"kind": "deadline", "value": 3, "deadline": 2}}]}


@pytest.mark.parametrize("utility", [Sigmoid(3.7, 0.9, 4.2), Table((5.5, 3.25, 1e-3, 0.0)),
                                     Deadline(2.2, 3), Linear(6.1, 0.7)])
@pytest.mark.parametrize("exponent", [-40, -3, 29, 300])
def test_a_power_of_two_scales_every_value_exactly(utility, exponent):
    k = math.ldexp(1.0, exponent)
    assert np.array_equal(utility.scaled(k).values(12), utility.values(12) * k)
    assert all(utility.scaled(k).at(d) == utility.at(d) * k for d in range(1, 13))


def test_the_scale_brings_the_largest_utility_into_one_to_two():
    assert objective_scale(instance_from_dict(small(1.0))) == 1.0
    assert objective_scale(instance_from_dict(small(1e6))) == 1.0  # large ones as they are
    for k in (0.75, 1e-3, 2.0 ** -30, 1e-9, 1e-250):
        inst = instance_from_dict(small(k))
        s = objective_scale(inst)
        top = max(j.utility.at(1) for j in inst.jobs)
        assert math.frexp(s)[0] == 0.5  # a power of two
        assert s == 1.0 if top >= 1.0 else 1.0 <= top * s < 2.0
    assert objective_scale(instance_from_dict(small(1e-3))) > 1.0


@pytest.mark.parametrize("k", [1e-9, 2.0 ** -30, 3e-7, 1e-200])
def test_tiny_utilities_reach_the_brute_force_optimum(k):
    data = copy.deepcopy(TINY)
    for j in data["jobs"]:
        j["utility"] = times(j["utility"], k)
    inst = instance_from_dict(data)
    expected = best_utility(inst)
    assert expected > 0
    schedule, rep = solve(inst)
    assert rep.status is SolveStatus.OPTIMAL
    assert rep.objective == pytest.approx(expected, rel=1e-9)
    assert rep.bound == pytest.approx(expected, rel=1e-6) and rep.gap <= 1e-6
    v = validate(inst, schedule)  # on the instance as given, utilities recomputed
    assert v.feasible and v.total_utility == pytest.approx(schedule.total_utility, rel=1e-12)


@pytest.mark.parametrize("modeler,method", [("auto", "auto"), ("pyomo", "compact"),
                                            ("pulp", "compact"), ("auto", "colgen")])
def test_every_route_reports_in_the_instances_units(modeler, method):
    """small-s0 with its utilities × 1e-9: the optimum × 1e-9 (rel. 1e-6), the schedule's
    utilities those of the instance bit for bit, and every figure of the report, the
    progress and the floor in the same units."""
    limit = 3 if method == "colgen" else 60  # column generation uses what it is given
    unit, _ = solve(instance_from_dict(small(1.0)), modeler=modeler, method=method,
                    time_limit=limit)
    inst = instance_from_dict(small(1e-9))
    seen: list[tuple[float, float | None, float]] = []
    rounds: list = []
    schedule, rep = solve(inst, modeler=modeler, method=method, time_limit=limit,
                          on_progress=lambda s, inc, b: seen.append((s, inc, b)),
                          on_round=rounds.append)
    assert all(r.bound < 1e-6 and r.incumbent < 1e-6 for r in rounds)  # trace scale only
    if method != "colgen":
        assert rep.status is SolveStatus.OPTIMAL
        assert schedule.total_utility == pytest.approx(unit.total_utility * 1e-9, rel=1e-6)
    assert schedule.total_utility == rep.objective <= rep.bound
    assert rep.bound <= sum(j.utility.at(1) for j in inst.jobs) * (1 + 1e-12)
    assert schedule.extras["bound"] == rep.bound
    assert rep.solver_objective is None or rep.solver_objective < 1e-6
    v = validate(inst, schedule)
    assert v.feasible and v.total_utility == schedule.total_utility
    assert [j.utility for j in schedule.jobs] == [inst.utility_at(i, j.completion_slot)
                                                  if j.completed else 0.0
                                                  for i, j in enumerate(schedule.jobs)]
    assert seen and all(b < 1e-6 and (inc is None or inc < 1e-6) for _, inc, b in seen)
    assert all(b < 1e-6 and (inc is None or inc < 1e-6) for _, inc, b in rep.history)
    assert all(v <= rep.objective * (1 + 1e-9) for v in rep.floor_runs.values()
               if isinstance(v, float))


def test_given_floor_schedules_join_in_the_instances_units():
    inst = instance_from_dict(small(1e-9))
    from oasis_opt import run
    fifo = run(inst, "fifo")
    schedule, rep = solve(inst, time_limit=30, floor_schedules={"fifo": fifo})
    assert rep.floor_runs["fifo"] == fifo.total_utility
    assert rep.objective >= fifo.total_utility


def test_the_scaled_instance_keeps_everything_but_the_utilities():
    inst = instance_from_dict(small(1.0))
    twice = scaled_instance(inst, 2.0)
    assert twice.name == inst.name and twice.horizon == inst.horizon
    assert np.array_equal(twice.utility_table, 2.0 * inst.utility_table)
    assert np.array_equal(twice.worker_demand, inst.worker_demand)


def test_utilities_too_small_to_schedule_by_are_refused(tmp_path):
    data = small(1.0)
    for j in data["jobs"]:
        j["utility"] = {"kind": "table", "values": [1e-310]}
    with pytest.raises(InputError, match="too small to solve for"):
        solve(instance_from_dict(data))
    path = tmp_path / "u.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "solve", str(path), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "the most a job can earn is" in r.stderr and not out.exists()


def test_cli_solve_of_tiny_utilities(tmp_path):
    path, out = tmp_path / "u.json", tmp_path / "s.json"
    path.write_text(json.dumps(small(1e-9)))
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "solve", str(path), "--json",
                        "-o", str(out)], capture_output=True, text=True, check=True)
    got = json.loads(r.stdout)
    unit, _ = solve(instance_from_dict(small(1.0)))
    assert got["status"] == "optimal"
    assert got["total_utility"] == pytest.approx(unit.total_utility * 1e-9, rel=1e-6)
    saved = load_schedule(out)
    assert saved.total_utility == got["total_utility"]


@pytest.mark.parametrize("unit", [1e-9, 2.0 ** -27, 0.3])
def test_small_capacities_and_demands_reach_the_brute_force_optimum(unit):
    """TINY with every capacity and demand of its first resource (the GPUs of both pools)
    multiplied by ``unit``: HiGHS takes a matrix entry of at most 1e-9 for 0, and with
    demands of 1e-9 the schedule used three times the capacity (exit 1)."""
    data = copy.deepcopy(TINY)
    for server in data["worker_servers"] + data["ps_servers"]:
        server["capacity"][0] *= unit
    for j in data["jobs"]:
        j["worker_demand"][0] *= unit
        j["ps_demand"][0] *= unit
    inst = instance_from_dict(data)
    expected = best_utility(inst)
    assert expected == pytest.approx(best_utility(instance_from_dict(TINY)), rel=1e-12)
    for modeler, method in (("auto", "auto"), ("pulp", "compact"), ("auto", "colgen")):
        limit = 3 if method == "colgen" else 20  # column generation uses what it is given
        schedule, rep = solve(inst, modeler=modeler, method=method, time_limit=limit)
        assert validate(inst, schedule).feasible
        assert rep.objective == pytest.approx(expected, rel=1e-9), (modeler, method)


def test_one_pool_of_tiny_servers_beside_a_pool_of_large_ones():
    """Demands of 1e-9 GPUs on worker servers of 1e-8 beside a PS server of 1 GPU: each
    pool is measured in its own unit (``unit_scales``); at most 10 workers fit a slot."""
    data = {"format": "oasis-instance/1", "name": "units", "horizon": 3, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [1e-8]}],
            "ps_servers": [{"name": "p", "capacity": [1]}],
            "jobs": [{"id": f"j{i}", "arrival": 0, "workload": 20, "max_workers": 50,
                      "ps_ratio": 1, "worker_demand": [1e-9], "ps_demand": [1e-9],
                      "utility": {"kind": "table", "values": [10 - i, 5, 1]}}
                     for i in range(3)]}
    inst = instance_from_dict(data)
    schedule, rep = solve(inst)
    assert validate(inst, schedule).feasible
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == 5.0  # one job, two slots


def _one_slot(name: str, capacity: float, jobs, ps_ratio: float | None = 100.0):
    """One slot, one worker server of ``capacity`` GPUs (and a PS server no job needs), and
    one job per ``(id, workers, demand, value)``: ``workers`` of ``demand`` GPUs finish it,
    worth ``value``; ``ps_ratio`` None: each job's own worker count."""
    return instance_from_dict({
        "format": "oasis-instance/1", "name": name, "horizon": 1, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "capacity": [capacity]}],
        "ps_servers": [{"name": "p", "capacity": [1]}],
        "jobs": [{"id": i, "arrival": 0, "workload": n, "max_workers": n,
                  "ps_ratio": n if ps_ratio is None else ps_ratio, "worker_demand": [d],
                  "ps_demand": [0], "utility": {"kind": "table", "values": [v]}}
                 for i, n, d, v in jobs]})


def _proves(inst, opt: float, modeler: str) -> None:
    """Brute force finds ``opt``, and ``solve`` through ``modeler`` proves it, validated."""
    assert best_utility(inst) == opt
    schedule, rep = solve(inst, modeler=modeler)
    assert validate(inst, schedule).feasible
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == opt


@pytest.mark.parametrize("demand", [1e-9, 3e-8, 2.0 ** -21])
@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_a_tiny_demand_beside_a_whole_server_is_not_read_as_none(demand, modeler):
    """A job of ten workers of ``demand`` GPUs beside one that fills the 4-GPU server alone:
    they cannot share the slot, OPT is 7. HiGHS drops matrix entries of 1e-9 or less, and a
    demand of 1e-9 read as none let the MILP run both (12); the careful solve saw the same
    model, so ``solve`` ended "feasible" with the floor's 5. Such a resource is measured in
    a unit that brings the least demand to 2^-20 (``scale.TINY``)."""
    _proves(_one_slot("wide", 4, (("a", 10, demand, 5), ("b", 4, 1, 7))), 7.0, modeler)


def test_the_validator_tolerance_is_relative_to_the_capacity():
    """Three workers of 1e-9 GPUs on a server of 2e-9: over capacity by half of it (the
    tolerance was an absolute 1e-9 below a capacity of 1, and accepted them)."""
    data = copy.deepcopy(TINY)
    data["worker_servers"][0]["capacity"][0] = 2e-9
    for j in data["jobs"]:
        j["worker_demand"][0] = 1e-9
    inst = instance_from_dict(data)
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    y, z = np.zeros((T, H), dtype=np.int64), np.zeros((T, K), dtype=np.int64)
    y[:, 0], z[:, 0] = 2, 1  # job a (γ = 2): two workers and one PS a slot
    from oasis_opt.model import Schedule
    ok = Schedule.from_arrays(inst, "hand", {0: y}, {0: z}, trim=True)
    assert validate(inst, ok).feasible
    y3, z3 = y.copy(), z.copy()
    y3[:, 0], z3[:, 0] = 3, 2
    data["jobs"][0]["max_workers"] = 3
    inst3 = instance_from_dict(data)
    over = validate(inst3, Schedule.from_arrays(inst3, "hand", {0: y3}, {0: z3}, trim=True))
    assert not over.feasible
    assert any("capacity" in str(v) for v in over.violations)


def test_column_generations_rounds_are_told_in_the_instances_units():
    from oasis_opt.formulations.colgen_scale import Round

    from oasis_opt.offline.scale import unscaled_rounds
    got: list = []
    tell = unscaled_rounds(got.append, 2.0 ** 30)
    tell(Round(3, 1.5, 2.0 ** 30, 2.0 ** 31, 2.0 ** 29, 3.0, 100, None, 7))
    assert (got[0].lp, got[0].bound, got[0].incumbent, got[0].gap) == (1.0, 2.0, 0.5, 3.0)
    assert (got[0].iteration, got[0].columns, got[0].jobs) == (3, 100, 7)


def test_the_brute_force_gives_a_job_of_a_huge_ps_ratio_its_one_ps():
    """ceil(1/1e12 − 1e-9) is 0: the brute force allowed no PS and found an optimum of 0
    where one worker and one PS earn 1 (docs/model.md: never 0 PSs for a positive count)."""
    data = {"format": "oasis-instance/1", "name": "g", "horizon": 1, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [1]}],
            "ps_servers": [{"name": "p", "capacity": [1]}],
            "jobs": [{"id": "a", "arrival": 0, "workload": 1, "max_workers": 1,
                      "ps_ratio": gamma, "worker_demand": [1], "ps_demand": [1],
                      "utility": {"kind": "table", "values": [1]}} for gamma in [1e12]]}
    assert best_utility(instance_from_dict(data)) == 1.0


def test_a_job_that_cannot_finish_does_not_hide_the_scale():
    """Utilities near 1e-8 beside a job worth 1 that arrives in the last slot and needs two
    worker-slots at one worker a slot: keyed on the largest f_i(1), the scale stayed 1 and
    HiGHS called 2e-8 optimal where brute force finds 3e-8."""
    data = {"format": "oasis-instance/1", "name": "x", "horizon": 3, "resources": ["gpu"],
            "worker_servers": [{"name": "w0", "capacity": [2]}],
            "ps_servers": [{"name": "p0", "capacity": [2]}],
            "jobs": [
                {"id": "j0", "arrival": 0, "workload": 3, "max_workers": 3, "ps_ratio": 1,
                 "worker_demand": [2], "ps_demand": [1],
                 "utility": {"kind": "table", "values": [3e-08, 1e-08, 1e-08]}},
                {"id": "j1", "arrival": 1, "workload": 1, "max_workers": 3, "ps_ratio": 1,
                 "worker_demand": [1], "ps_demand": [0],
                 "utility": {"kind": "table", "values": [2e-08, 2e-08, 1e-08]}},
                {"id": "j2", "arrival": 1, "workload": 3, "max_workers": 3, "ps_ratio": 1,
                 "worker_demand": [1], "ps_demand": [0],
                 "utility": {"kind": "table", "values": [2e-08, 1e-08, 1e-08]}},
                {"id": "big", "arrival": 2, "workload": 2, "max_workers": 1, "ps_ratio": 1,
                 "worker_demand": [1], "ps_demand": [1],
                 "utility": {"kind": "table", "values": [1]}}]}
    inst = instance_from_dict(data)
    from oasis_opt.offline.scale import alone_values
    assert alone_values(inst)[3] == 0.0 and objective_scale(inst) > 1.0
    expected = best_utility(inst)
    for modeler in ("auto", "pyomo", "pulp"):
        _, rep = solve(inst, modeler=modeler)
        assert rep.objective == pytest.approx(expected, rel=1e-9), modeler


def test_alone_values_are_what_the_model_lets_each_job_earn():
    """``alone_values`` against ``formulations.common.prepare``'s earliest completions, on
    the shipped instances and the hard-mix ones: the same value for every active job, 0 for
    the others."""
    from oasis_opt.formulations.common import PLAIN, prepare

    from oasis_opt.io import load_instance
    from oasis_opt.offline.scale import alone_values
    paths = [p for p in sorted(INSTANCES.glob("*.json")) if p.name != "manifest.json"][:8]
    hard_mix = sorted((INSTANCES.parent.parent / "shared" / "bench" / "hard-mix")
                      .glob("hard-mix-*.json"))[:4]
    for path in paths + hard_mix:
        inst = load_instance(path)
        if inst.num_jobs * inst.horizon > 200_000:
            continue
        prep = prepare(inst, PLAIN)
        want = np.zeros(inst.num_jobs)
        for i in prep.active:
            want[i] = prep.gain[i, prep.earliest[i]]
        assert np.array_equal(alone_values(inst), want), path.name


@pytest.mark.parametrize("gamma", [1e9, 1e12])
def test_a_job_of_a_huge_ps_ratio_still_needs_one_ps(gamma):
    """⌈1/γ − 1e-9⌉ is 0 from γ ≈ 1e9 on: the model allowed the job no PS at all and proved
    0 below FIFO's 1 (SolverError, exit 1); ``model.ps_needed`` gives one."""
    data = {"format": "oasis-instance/1", "name": "x", "horizon": 1, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [1]}],
            "ps_servers": [{"name": "p", "capacity": [1]}],
            "jobs": [{"id": "a", "arrival": 0, "workload": 1, "max_workers": 1,
                      "ps_ratio": gamma, "worker_demand": [1], "ps_demand": [1],
                      "utility": {"kind": "table", "values": [1]}}]}
    inst = instance_from_dict(data)
    assert best_utility(inst) == 1.0
    for modeler, method in (("auto", "auto"), ("pyomo", "compact"), ("pulp", "compact")):
        _, rep = solve(inst, modeler=modeler, method=method)
        assert rep.status is SolveStatus.OPTIMAL and rep.objective == 1.0, modeler


def test_fit_counts_of_a_huge_capacity_do_not_overflow():
    """1e15 GPUs over demands of 1e-9 is 1e24 units: cast to int64 it wrapped to −2⁶³, the
    utility scale read every job as unable to run and jumped to 2³⁰, and HiGHS failed."""
    from oasis_opt.formulations.colgen_scale import MANY_UNITS, server_fits
    assert server_fits(np.array([[1e15]]), np.array([1e-9]))[0] == MANY_UNITS
    U = 1e12
    data = {"format": "oasis-instance/1", "name": "x", "horizon": 3, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [1e15]}],
            "ps_servers": [{"name": "p", "capacity": [2]}],
            "jobs": [{"id": i, "arrival": 0, "workload": v, "max_workers": n, "ps_ratio": 1,
                      "worker_demand": [1e-9], "ps_demand": [1],
                      "utility": {"kind": "table", "values": [u * U for u in values]}}
                     for i, v, n, values in (("a", 3, 2, (1, 0.7, 0.2)),
                                             ("c", 2, 2, (0.9, 0.8, 0.1)),
                                             ("e", 1, 1, (0.6, 0.5, 0.4)))]}
    inst = instance_from_dict(data)
    assert objective_scale(inst) == 1.0
    expected = best_utility(inst)
    _, rep = solve(inst)
    assert rep.status is SolveStatus.OPTIMAL
    assert rep.objective == pytest.approx(expected, rel=1e-9)


def test_column_generation_on_a_capacity_1e23_times_a_demand_keeps_a_valid_bound():
    """1e15 GPUs over demands of 1e-8: column generation's master read the duals of such
    rows so badly that it stopped at 1.4e12 + 1, bound included, and called it optimal
    where brute force finds 1.6e12; the pool's GPUs are now counted in units of the least
    demand (``unit_scales``)."""
    from oasis_opt.offline.scale import unit_scales
    U = 1e12
    data = {"format": "oasis-instance/1", "name": "x", "horizon": 3, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [1e15]}],
            "ps_servers": [{"name": "p", "capacity": [2]}],
            "jobs": [{"id": i, "arrival": 0, "workload": v, "max_workers": n, "ps_ratio": 1,
                      "worker_demand": [d], "ps_demand": [1],
                      "utility": {"kind": "table", "values": [u * U for u in values]}}
                     for i, v, n, d, values in (("a", 3, 2, 1e-8, (1, 0.7, 0.2)),
                                                ("c", 2, 2, 1e-8, (0.9, 0.8, 0.1)),
                                                ("e", 1, 1, 1e-8, (0.6, 0.5, 0.4)),
                                                ("b", 1, 1, 1, (1 / U, 1 / U)))]}
    inst = instance_from_dict(data)
    workers, ps = unit_scales(inst)
    assert 1.0 <= 1e-8 * workers[0] < 2.0 and ps[0] == 1.0
    expected = best_utility(inst)
    schedule, rep = solve(inst, method="colgen", time_limit=5)
    assert validate(inst, schedule).feasible
    assert rep.bound >= expected * (1 - 1e-9)
    assert rep.status is not SolveStatus.OPTIMAL or rep.objective == pytest.approx(expected)


def test_an_overshoot_finer_than_six_digits_is_shown_with_its_digits():
    data = copy.deepcopy(TINY)
    data["worker_servers"][0]["capacity"][0] = 1.0
    data["jobs"][0]["worker_demand"][0] = 0.50000002
    data["jobs"][0]["max_workers"] = 2
    inst = instance_from_dict(data)
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    y, z = np.zeros((T, H), dtype=np.int64), np.zeros((T, K), dtype=np.int64)
    y[:2, 0], z[:2, 0] = 2, 1
    from oasis_opt.model import Schedule
    v = validate(inst, Schedule.from_arrays(inst, "hand", {0: y}, {0: z}, trim=True))
    assert not v.feasible
    assert any("used 1.00000004 > capacity 1 " in str(x) for x in v.violations), v.violations


@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_a_tiny_demand_beside_large_ones_keeps_the_rows_in_highs_range(modeler):
    """1e-9 GPUs beside workers of 1e12 on a server of 4e12: b's four workers and c's one do
    not fit together, OPT is 12 (a and b). The unit that brings 1e-9 to 1 (``WIDE``) made
    the demands 1e21 and the capacity 4e21: HiGHS refused the model ("Empty"), PuLP's
    reader failed, and through Pyomo the row bound above 1e20 counted as none (15 "proven",
    an error). A capacity that may bind is kept at most ``BIG`` in its unit."""
    inst = _one_slot("span", 4e12, (("a", 1, 1e-9, 5), ("b", 4, 1e12, 7), ("c", 1, 1e12, 3)))
    _proves(inst, 12.0, modeler)
    schedule, rep = solve(inst, method="colgen", time_limit=3)
    assert validate(inst, schedule).feasible and rep.bound >= 12.0 - 1e-9


@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_a_demand_of_1e15_on_a_server_it_fills(modeler):
    """A worker of 1e15 GPUs (the largest demand docs/model.md allows) on a server of 1e15
    beside jobs of 5e14 that cannot join it: OPT 7. HiGHS refuses a matrix entry of 1e15
    (the solve crashed, PuLP's reader failed, Pyomo proved 15); a capacity that may bind
    above ``BIG`` is measured in a unit below 1."""
    _proves(_one_slot("top", 1e15, (("a", 1, 1e15, 7), ("b", 2, 5e14, 5), ("c", 1, 5e14, 3)),
                      ps_ratio=None), 7.0, modeler)


def test_a_linear_decay_that_overflows_when_scaled_keeps_the_first_value():
    """A job worth 9e-20 at once and nothing after (decay 1e300): the utilities are
    multiplied by 2^64, the decay overflowed to inf, f(1) = max(0, v − inf·0) was 0 and
    ``solve`` proved 0 optimal."""
    data = {"format": "oasis-instance/1", "name": "decay", "horizon": 2, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [1]}],
            "ps_servers": [{"name": "p", "capacity": [1]}],
            "jobs": [{"id": "a", "arrival": 0, "workload": 1, "max_workers": 1,
                      "ps_ratio": 1, "worker_demand": [1], "ps_demand": [1],
                      "utility": {"kind": "linear", "value": 9e-20, "decay": 1e300}}]}
    inst = instance_from_dict(data)
    assert Linear(9e-20, 1e300).scaled(2.0**64).at(1) == 9e-20 * 2.0**64
    assert best_utility(inst) == 9e-20
    schedule, rep = solve(inst)
    assert validate(inst, schedule).feasible
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == 9e-20


@pytest.mark.parametrize("method", ["auto", "colgen"])
def test_a_value_no_schedule_earns_may_overflow_when_scaled(method):
    """Seed 45 414 of the numeric-range search: a job of 5 worker-slots at 2 workers a slot
    finishes in 3 slots at the soonest, worth 1e-300 there; its table's 4e11 and 3e11 for 1
    and 2 slots are out of reach. The utility scale 2^997 made them inf, OASiS's subroutine
    (column generation's pricing) read inf − inf and failed with an IndexError. Scaled
    parameters are held at the largest double (``utility._times``)."""
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "r45414", "horizon": 3, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "capacity": [4]}],
        "ps_servers": [{"name": "p", "capacity": [4]}],
        "jobs": [{"id": "a", "arrival": 0, "workload": 5, "max_workers": 2, "ps_ratio": 2,
                  "worker_demand": [1], "ps_demand": [1],
                  "utility": {"kind": "table", "values": [4e11, 3e11, 1e-300]}}]})
    schedule, rep = solve(inst, method=method)
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == 1e-300
    assert validate(inst, schedule).feasible


@pytest.mark.parametrize("method", ["auto", "colgen"])
def test_values_held_at_the_largest_double_do_not_overflow_the_trivial_bound(method):
    """Two jobs worth 1e15 that cannot finish in the one slot beside one worth 1e-300 that
    can (seed 50 999 of the search): both values are held at the largest double once scaled,
    and ``Σ f_i(1)``, the bound before any other, overflowed ``math.fsum`` (OverflowError
    on every route). It is inf now (``utility.trivial_bound``), and the solve proves 1e-300."""
    jobs = [{"id": i, "arrival": 0, "workload": 2, "max_workers": 1, "ps_ratio": 1,
             "worker_demand": [1], "ps_demand": [1],
             "utility": {"kind": "table", "values": [1e15]}} for i in ("a", "b")]
    jobs.append({"id": "c", "arrival": 0, "workload": 1, "max_workers": 1, "ps_ratio": 1,
                 "worker_demand": [1], "ps_demand": [1],
                 "utility": {"kind": "table", "values": [1e-300]}})
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "r50999", "horizon": 1, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "capacity": [4]}],
        "ps_servers": [{"name": "p", "capacity": [4]}], "jobs": jobs})
    schedule, rep = solve(inst, method=method)
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == 1e-300
    assert validate(inst, schedule).feasible


def test_a_pooled_row_stays_below_highss_largest_entry():
    """Seed 64 343 of the search: two worker servers of 1e15 (measured in units of 2, 5e14
    each) that one job of two workers of 1e15 fills. Column generation's aggregated master
    pools alike servers into one row of 1e15, and HiGHS refused the column of 1e15 on it
    (``formulations.highs`` raised). ``scale.BIG`` caps the pool's capacities together."""
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "r64343", "horizon": 3, "resources": ["r0"],
        "worker_servers": [{"name": "w0", "capacity": [1e15]}, {"name": "w1",
                                                               "capacity": [1e15]}],
        "ps_servers": [{"name": "p0", "capacity": [1e15]}],
        "jobs": [{"id": "j0", "arrival": 1, "workload": 2, "max_workers": 2, "ps_ratio": 3,
                  "worker_demand": [1e15], "ps_demand": [0.0],
                  "utility": {"kind": "deadline", "value": 892.2752670548379, "deadline": 2}},
                 {"id": "j1", "arrival": 1, "workload": 4, "max_workers": 2,
                  "ps_ratio": 0.6666666666666666, "worker_demand": [142857142857000.0],
                  "ps_demand": [200000020000000.0],
                  "utility": {"kind": "table", "values": [123193435972830.23, 0.0]}}]})
    opt = best_utility(inst)
    for method in ("auto", "colgen"):
        schedule, rep = solve(inst, method=method)
        assert rep.status is SolveStatus.OPTIMAL and rep.objective == pytest.approx(opt)
        assert validate(inst, schedule).feasible
