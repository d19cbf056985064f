"""oasis-adaptive (issue 13): OASiS with U and L estimated online. Its schedules validate, its
certificate bounds OPT wherever OPT is known (manifest optima, brute force), its estimate ends
at the oracle bounds without doubling, and it decides as OASiS when the first job already
fixes the bounds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from bruteforce import best_utility
from conftest import INSTANCES

from oasis_opt import algorithms
from oasis_opt.adversary_search import SearchSpace, random_instance
from oasis_opt.cli import main
from oasis_opt.io import instance_from_dict, load_instance, schedule_to_dict
from oasis_opt.online import adaptive
from oasis_opt.online import prices as pr
from oasis_opt.validate import validate

MANIFEST = json.loads((INSTANCES / "manifest.json").read_text())["instances"]


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["name"])
def test_dcert_bounds_the_manifest_optimum(entry):
    inst = load_instance(INSTANCES / entry["file"])
    sched = algorithms.run("oasis-adaptive", inst)  # validated inside run
    assert sched.algorithm == "oasis-adaptive"
    assert validate(inst, sched).feasible
    opt = entry["optimum"]
    assert sched.total_utility <= opt * (1 + 1e-6) + 1e-9
    assert sched.extras["D_cert"] >= opt * (1 - 1e-6) - 1e-9


def test_dcert_bounds_the_brute_force_optimum_on_tiny_random_instances():
    space = SearchSpace(jobs=3, horizon=3, worker_servers=1, ps_servers=1, max_workload=4,
                        max_workers=2)
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(100):
        inst = instance_from_dict(random_instance(rng, space))
        opt = best_utility(inst)
        if opt <= 0:
            continue  # nothing can earn: D_cert = 0 = OPT says little
        checked += 1
        if checked > 12:
            break
        for doubling in (True, False):
            sched = algorithms.run("oasis-adaptive", inst, doubling=doubling)
            assert sched.total_utility <= opt + 1e-9
            assert sched.extras["D_cert"] >= opt - 1e-9 * max(1.0, opt)
    assert checked > 12


def test_estimate_without_doubling_ends_at_the_oracle_bounds():
    inst = load_instance(INSTANCES / "testbed-s1.json")
    est = adaptive.BoundEstimate(inst, doubling=False)
    for i in map(int, np.argsort(inst.arrival, kind="stable")):
        est.see(i)
    final = pr.bounds_from_terms(inst, est.u_w, est.u_ps, est.opt_lb)
    oracle = pr.default_bounds(inst)
    for key in ("U_w", "L_w", "U_ps", "L_ps"):
        assert np.array_equal(getattr(final, key), getattr(oracle, key)), key
    assert final.opt_lb == oracle.opt_lb


def test_doubling_estimate_is_within_a_factor_two():
    inst = load_instance(INSTANCES / "small-s2.json")
    est = adaptive.BoundEstimate(inst, doubling=True)
    changes = 0
    for i in map(int, np.argsort(inst.arrival, kind="stable")):
        b = est.see(i)
        changes += b is not None
        if b is None:
            continue
        for U, u, on in ((b.U_w, est.u_w, b.worker_priced), (b.U_ps, est.u_ps, b.ps_priced)):
            used = on & np.isfinite(u) & (u > 0)
            assert (U[used] >= u[used] * (1 - 1e-12)).all()
            assert (U[used] < 2 * u[used]).all()
        if est.opt_lb > 0:
            assert est.opt_lb / 2 < b.opt_lb <= est.opt_lb
    assert 1 <= changes == est.updates


def test_same_decisions_as_oasis_when_the_first_job_fixes_the_bounds(tiny_dict):
    # j0 arrives first and is worth the most per unit of every resource and alone: the
    # estimate is exact from the first arrival on, so every price and decision is OASiS's.
    tiny_dict["jobs"][1]["utility"] = {"kind": "table", "values": [1, 1, 0]}
    inst = instance_from_dict(tiny_dict)
    a = algorithms.run("oasis-adaptive", inst, doubling=False)
    o = algorithms.run("oasis", inst)
    assert a.extras["bound_updates"] == 1
    assert schedule_to_dict(a)["jobs"] == schedule_to_dict(o)["jobs"]
    assert a.extras["D_cert"] == pytest.approx(o.extras["D_cert"])
    assert a.extras["alpha"] == pytest.approx(o.extras["alpha"])


def test_a_later_more_valuable_job_changes_the_bounds(tiny_dict):
    tiny_dict["jobs"][1]["utility"] = {"kind": "table", "values": [1000, 900, 0]}
    inst = instance_from_dict(tiny_dict)
    a = algorithms.run("oasis-adaptive", inst)
    assert a.extras["bound_updates"] == 2
    assert a.extras["D0"] == 0.0  # nothing is known before the first arrival
    assert math.isfinite(a.extras["alpha"]) and a.extras["alpha"] >= 1


def test_cli_run_takes_the_price_scales(tmp_path, capfd):
    inst = str(INSTANCES / "small-s1.json")
    assert main(["run", inst, "--algorithm", "oasis-adaptive", "--u-scale", "2", "--json",
                 "-o", str(tmp_path / "s.json")]) == 0
    data = json.loads(capfd.readouterr().out)
    assert data["algorithm"] == "oasis-adaptive" and data["u_scale"] == 2.0
    assert main(["validate", inst, str(tmp_path / "s.json")]) == 0
    assert main(["run", inst, "--algorithm", "fifo", "--u-scale", "2"]) == 2
    assert "oasis-adaptive" in capfd.readouterr().err


def test_ratio_report_checks_the_adaptive_certificate():
    from oasis_opt.ratio import compare
    rep = compare(load_instance(INSTANCES / "testbed-s1.json"), ["oasis", "oasis-adaptive"])
    rows = {r["algorithm"]: r for r in rep.rows}
    assert rows["oasis-adaptive"]["dcert_ge_opt"] is True
    assert rows["oasis-adaptive"]["within_2alpha"] is None  # no guarantee claimed
    assert rows["oasis"]["within_2alpha"] is not None
