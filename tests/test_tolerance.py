"""Schedules the solver's feasibility tolerance lets overfill a server
(``offline/compact.py``, ``within_capacity``). HiGHS holds a MIP's rows to 1e-6 absolute;
demands of 1e-8 beside 1 (or 0.33333334 three times) sum past a capacity by less than that
and more than the validator's 1e-9·C, so ``solve`` ended "algorithm error" (exit 1) on
valid instances. It now solves once more with tight tolerances, and where that is not
enough the solver gives no schedule and the floor stands."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from bruteforce import best_utility
from conftest import add_rows

from oasis_opt.io import instance_from_dict
from oasis_opt.model import Schedule
from oasis_opt.offline import SolveStatus, backends, solve
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


@pytest.mark.parametrize("pool", ["worker", "PS"])
@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_an_overshoot_within_the_solvers_tolerance_is_solved_again(pool, modeler):
    instance = instance_from_dict(overshoot(pool))
    schedule, report = solve(instance, modeler=modeler)
    assert report.status is SolveStatus.OPTIMAL
    assert report.objective == best_utility(instance) == 10.0
    assert validate(instance, schedule).feasible
    assert report.bound >= report.objective


@pytest.mark.parametrize("modeler", ["pyomo", "pulp"])
def test_a_customized_model_is_solved_again_too(modeler):
    instance = instance_from_dict(overshoot("worker"))

    def roomy(m):  # a row every schedule keeps: the model is the plain one
        add_rows(m, [sum(m.workers[j, t] for j in m.jobs) <= 10 for t in m.slots])
    schedule, report = solve(instance, modeler=modeler, customize=roomy)
    assert report.status is SolveStatus.OPTIMAL and report.objective == 10.0
    assert validate(instance, schedule).feasible


def test_the_overfilling_incumbents_are_withdrawn_from_the_progress():
    instance = instance_from_dict(overshoot("worker"))
    seen = []
    _, report = solve(instance, time_limit=20, floor=(),
                      on_progress=lambda *p: seen.append(p))
    assert report.objective == 10.0
    # HiGHS reported 15 first, which the validator refuses: a point withdraws it
    incumbents = [p[1] for p in seen]
    assert 15.0 in incumbents
    withdrawn = incumbents.index(15.0) + 1
    assert incumbents[withdrawn] is None
    assert report.history[-1][1] == report.objective
    assert all(p[1] is None or p[1] <= p[2] for p in report.history[withdrawn:])


def test_where_tight_tolerances_do_not_help_the_floor_stands(monkeypatch):
    # the second solve at HiGHS's default tolerances overfills again: the solver gives no
    # schedule, the floor's (b alone) is the answer, and nothing is claimed optimal
    monkeypatch.setattr(backends, "TIGHT_TOLERANCE", None)
    instance = instance_from_dict(overshoot("worker"))
    schedule, report = solve(instance, time_limit=20)
    assert validate(instance, schedule).feasible
    assert report.objective == 10.0 and report.floor is not None
    assert report.status is not SolveStatus.OPTIMAL
    assert report.bound >= 10.0


def test_overfilled_lists_the_capacity_violations_alone():
    instance = instance_from_dict(overshoot("worker"))
    both = Schedule.from_arrays(instance, "x", {0: np.array([[2]]), 1: np.array([[1]])},
                                {0: np.array([[2]]), 1: np.array([[1]])})
    found = overfilled(instance, both)
    assert [v.rule for v in found] == ["capacity"]
    assert "used 1.0000000200000001 > capacity 1" in found[0].message
    assert [str(v) for v in found] == [str(v) for v in validate(instance, both).violations
                                       if v.rule == "capacity"]


def test_cli_solve_of_an_overshoot_exits_0(tmp_path):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(overshoot("PS")))
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "solve", str(path), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_utility"] == 10.0
