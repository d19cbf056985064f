"""``solve --solver``: every open solver agrees with HiGHS and the manifest, statuses and bounds
are read truthfully, and unavailable solvers are refused with what to install."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from oasis_opt import solvers
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import load_instance
from oasis_opt.offline import solve
from oasis_opt.validate import validate

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
MANIFEST = json.loads((INSTANCES / "manifest.json").read_text())
#: the manifest's instances that every open solver proves in well under a second
QUICK = [e for e in MANIFEST["instances"] if e["jobs"] <= 8 and e["seconds"] < 2]
TOL = MANIFEST["rel_tol"]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(b))


@pytest.mark.parametrize("solver", ["cbc", "scip"])
@pytest.mark.parametrize("entry", QUICK, ids=[e["name"] for e in QUICK])
def test_open_solvers_agree_with_highs_and_manifest(solver, entry):
    inst = load_instance(INSTANCES / entry["file"])
    _, ref = solve(inst, method="compact")
    sched, rep = solve(inst, solver=solver)
    assert rep.status.value == "optimal"
    assert _close(rep.objective, entry["optimum"])
    assert _close(rep.objective, ref.objective)
    assert rep.bound >= entry["optimum"] * (1 - TOL)
    assert rep.gap is not None and rep.gap <= TOL
    assert rep.modeler == solvers.SOLVERS[solver].modeler
    assert sched.extras["solver"] == solver
    check = validate(inst, sched)
    assert check.feasible and _close(check.total_utility, entry["optimum"])


def test_quick_set_is_not_empty():
    assert len(QUICK) >= 8  # the agreement test above must cover the edge and small instances


@pytest.mark.parametrize("solver", ["cbc", "scip"])
def test_time_limit_gives_true_status_and_valid_bound(solver):
    """testbed-s0 needs ~6 s: after 1 s the status says so (PuLP's LpStatus would say
    Optimal for CBC) and the bound still covers the manifest's optimum."""
    entry = next(e for e in MANIFEST["instances"] if e["name"] == "testbed-s0")
    inst = load_instance(INSTANCES / entry["file"])
    sched, rep = solve(inst, solver=solver, time_limit=1.0)
    opt = entry["optimum"]
    assert rep.status.value in ("time_limit", "optimal")
    assert rep.objective <= opt * (1 + TOL)
    assert rep.bound >= opt * (1 - TOL)
    if rep.status.value == "time_limit":
        assert rep.bound > rep.objective
        assert rep.bound < sum(float(inst.utility_table[i].max()) for i in range(inst.num_jobs)) \
            or solver == "scip"  # CBC's logged bound is tighter than the trivial one
    assert validate(inst, sched).feasible


def test_cbc_bound_is_rounded_up():
    log = "Result - Stopped on time limit\n\nObjective value:  268.48\nUpper bound:  315.173\n"
    assert solvers.cbc_bound_from_log(log) == pytest.approx(315.1735)
    assert solvers.cbc_bound_from_log("Upper bound:  1.23457e+06\n") == pytest.approx(1234575)
    assert solvers.cbc_bound_from_log("Lower bound:  -12\n") == pytest.approx(-11.5)
    assert solvers.cbc_bound_from_log("Result - Optimal solution found\n") is None


def test_unknown_solver_is_refused():
    inst = load_instance(INSTANCES / "small-s0.json")
    with pytest.raises(InputError, match="unknown solver 'glpk'; choose from highs, cbc, scip"):
        solve(inst, solver="glpk")


@pytest.mark.parametrize("name,package", [("gurobi", "gurobipy"), ("cplex", "cplex"),
                                          ("xpress", "xpress"), ("copt", "coptpy")])
def test_missing_commercial_solver_names_what_to_install(name, package, capsys):
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    code = main(["solve", str(INSTANCES / "small-s0.json"), "--solver", name])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{name} is not available" in err and f"pip install {package}" in err
    assert "Traceback" not in err


def test_cli_json_adds_solver(tmp_path, capfd):
    out = tmp_path / "opt.json"
    code = main(["solve", str(INSTANCES / "small-s1.json"), "--solver", "cbc", "--json",
                 "-o", str(out)])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and data["solver"] == "cbc" and data["modeler"] == "pulp"
    assert _close(data["total_utility"], 231.48965056912695)
    assert json.loads(out.read_text())["extras"]["solver"] == "cbc"


@pytest.mark.parametrize("command", ["solve", "ratio"])
def test_colgen_with_another_solver_is_refused(tmp_path, capfd, command):
    """Other solvers take the compact model: ``--method colgen --solver scip`` ran it
    without a word (``"method": "compact"``). Refused before anything runs."""
    out = tmp_path / "x.json"
    code = main([command, str(INSTANCES / "small-s1.json"), "--method", "colgen",
                 "--solver", "cbc", *(["-o", str(out)] if command == "solve" else [])])
    captured = capfd.readouterr()
    assert code == 2 and captured.out == "" and not out.exists()
    assert captured.err == (f"oasis-opt {command}: error: --method: colgen runs on HiGHS; solver "
                            "'cbc' takes the compact model (method compact, or auto)\n")


def test_ratio_takes_solver(capfd):
    code = main(["ratio", str(INSTANCES / "small-s3.json"), "--solver", "scip",
                 "--algorithms", "oasis,fifo", "--json"])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and data["solver"] == "scip"
    assert _close(data["opt"], 114.73768945699823)


def test_licence_failures_are_bad_input_other_failures_solver_errors(monkeypatch):
    """A solver that refuses the model for its licence (size-limited pip licences) is exit 2
    with what to install; any other failure is a SolverError (exit 1), never a wrong answer."""
    from oasis_opt.formulations.common import prepare

    from oasis_opt.errors import SolverError
    inst = load_instance(INSTANCES / "small-s0.json")
    prep = prepare(inst)

    def licence(*_a):
        raise RuntimeError("Model too large for size-limited license")

    def crash(*_a):
        raise RuntimeError("segmentation of the tree failed")
    monkeypatch.setitem(solvers.ROUTES, "cbc", licence)
    with pytest.raises(InputError, match="^solver: cbc refused the model: Model too large"):
        solvers.solve("cbc", prep, None, 0.0)
    monkeypatch.setitem(solvers.ROUTES, "cbc", crash)
    with pytest.raises(SolverError, match="cbc failed: RuntimeError: segmentation"):
        solvers.solve("cbc", prep, None, 0.0)


def test_gap_and_time_reach_the_legacy_solvers_natively():
    assert solvers.legacy_options("cplex", 12.5, 0.0, 1) == {
        "mipgap": 0.0, "threads": 1, "timelimit": 12.5}
    # Xpress: a negative maxtime stops at the limit even without a MIP solution
    assert solvers.legacy_options("xpress", 12.5, 0.01, 2) == {
        "mipgap": 0.01, "threads": 2, "maxtime": -13}
    assert "maxtime" not in solvers.legacy_options("xpress", None, 0.0, 1)


@pytest.mark.skipif(importlib.util.find_spec("pyscipopt") is None, reason="needs pyscipopt")
def test_ctrl_c_during_scip_ends_the_solve(monkeypatch):
    """SCIP takes Ctrl-C itself and stops with its incumbent (termination "interrupted"):
    ``solve --solver scip`` then printed a "time_limit" answer and exited 0 where every
    other route exits 130. An interrupted run now raises ``KeyboardInterrupt`` (here SCIP's
    answer is stood in for: the signal's timing is not the test's)."""
    from pyomo.contrib.solver.common.results import TerminationCondition
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

    class Interrupted:
        termination_condition = TerminationCondition.interrupted
    monkeypatch.setattr(ScipDirect, "solve", lambda self, model, **kwargs: Interrupted())
    entry = next(e for e in MANIFEST["instances"] if e["name"] == "testbed-s0")
    with pytest.raises(KeyboardInterrupt):
        solve(load_instance(INSTANCES / entry["file"]), solver="scip", time_limit=60.0)


def test_a_solver_skipped_for_time_is_named_so_in_the_route(monkeypatch):
    """Where building the model for another solver would not leave it time, the solve
    answers with the floor and that solver never runs; its route read ``compact/scip/full``
    (an outside audit: ``--solver scip --time-limit 60`` answered in 0.6 s). It now reads
    ``compact/skipped/…``, as the HiGHS route's does."""
    from oasis_opt.offline import compact
    monkeypatch.setitem(compact.BUILD_SECONDS_PER_NNZ, "pyomo", 1.0)
    monkeypatch.setitem(compact.BUILD_SECONDS_PER_NNZ, "pulp", 1.0)
    inst = load_instance(INSTANCES / "small-s0.json")
    sched, rep = solve(inst, solver="cbc", time_limit=5.0)
    assert rep.route.startswith("compact/skipped/") and rep.solve_seconds == 0
    assert validate(inst, sched).feasible
