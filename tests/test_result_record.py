"""One result record for every path (issue 22): every back-end — highspy, Pyomo, PuLP, a
race, another MILP solver, column generation (in process and guarded), a customized model, an
LNS window — returns ``formulations.result.SolveResult``, and the public ``SolveReport`` is
built from it in one place (``offline.report.finish``) with the figures it carries."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import INSTANCES
from oasis_opt.formulations import colgen, lns
from oasis_opt.formulations.common import prepare
from oasis_opt.formulations.pattern_master import PatternMaster, generate
from oasis_opt.formulations.result import SolveResult
from oasis_opt.formulations.status import SolveStatus

from oasis_opt import offline, solvers
from oasis_opt.io import load_instance
from oasis_opt.model import REL_TOL
from oasis_opt.offline import backends, colgen_route, compact, custom, race, report
from oasis_opt.offline.clock import Clock, Tracker
from oasis_opt.online.subroutine import JobSpec
from oasis_opt.validate import validate

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = {e["name"]: e for e in json.loads((INSTANCES / "manifest.json").read_text())[
    "instances"]}
NAME = "small-s0"
OPT = MANIFEST[NAME]["optimum"]


def _close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= 1e-6 * max(1.0, abs(b))


@pytest.fixture
def seen(monkeypatch) -> list[SolveResult]:
    """The record every route hands to ``report.finish`` (each route imports it by name)."""
    out: list[SolveResult] = []

    def spy(instance, result, *args, **kwargs):
        out.append(result)
        return report.finish(instance, result, *args, **kwargs)
    for module in (compact, custom, colgen_route):
        monkeypatch.setattr(module, "finish", spy)
    return out


def _agree(inst, result: SolveResult, schedule, rep: offline.SolveReport) -> None:
    """The report's figures are the record's; the schedule's extras lead with its extras."""
    assert type(result) is SolveResult
    assert rep.build_seconds == result.build_seconds
    assert rep.handover_seconds == result.handover_seconds
    assert rep.solve_seconds == result.solve_seconds
    assert rep.solver_objective == result.objective
    assert rep.status is result.status or (rep.status is SolveStatus.OPTIMAL
                                           and rep.gap is not None and rep.gap <= REL_TOL)
    assert list(schedule.extras)[:len(result.extras)] == list(result.extras)
    assert all(schedule.extras[k] == v for k, v in result.extras.items())
    assert schedule.extras["status"] == rep.status.value
    assert schedule.extras["solver_objective"] == result.objective
    assert rep.to_dict()["status"] == rep.status.value
    assert validate(inst, schedule).feasible


ROUTES = {  # name: (solve's keyword arguments, the route the report names)
    "highspy": ({"modeler": "highspy", "method": "compact"}, "compact/highspy/"),
    "pyomo": ({"modeler": "pyomo", "method": "compact"}, "compact/pyomo/"),
    "pulp": ({"modeler": "pulp", "method": "compact"}, "compact/pulp/"),
    "colgen": ({"method": "colgen"}, "colgen"),
    "colgen-guarded": ({"method": "colgen", "time_limit": 20.0}, "colgen"),
    "customize": ({"customize": lambda m: None}, "compact/pyomo/custom"),
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_every_route_reports_from_the_one_record(route, seen):
    kwargs, name = ROUTES[route]
    inst = load_instance(INSTANCES / f"{NAME}.json")
    schedule, rep = offline.solve(inst, **kwargs)
    assert len(seen) == 1
    _agree(inst, seen[0], schedule, rep)
    assert rep.route.startswith(name)
    if rep.method == "colgen":  # price-and-branch: a schedule and a bound, no proof here
        assert rep.objective <= OPT * (1 + 1e-6) <= rep.bound * (1 + 2e-6)
    else:
        assert _close(rep.objective, OPT) and rep.status is SolveStatus.OPTIMAL


@pytest.mark.parametrize("guard", [False, True])
def test_the_race_reports_from_the_one_record(guard, seen, monkeypatch):
    """The portfolio (several racers) and the guard (one) in forked children."""
    if not race.can_fork():
        pytest.skip("no fork here")
    monkeypatch.setattr(compact, "portfolio_wanted", lambda *a: not guard)
    monkeypatch.setattr(compact, "guard_wanted", lambda *a: guard)
    monkeypatch.setattr(compact, "RACE_DELAY", 0.0)  # both racers run, however quick
    monkeypatch.setattr(compact, "EARLY_PROBE", False)  # (the partner would wait for it)
    inst = load_instance(INSTANCES / f"{NAME}.json")
    schedule, rep = offline.solve(inst, method="compact", time_limit=60.0)
    _agree(inst, seen[0], schedule, rep)
    assert rep.route.endswith("" if guard else "+race") and rep.modeler == "highspy"
    assert _close(rep.objective, OPT)


def test_external_solver_reports_from_the_one_record(seen):
    if solvers.availability("cbc") is not None:
        pytest.skip("CBC is not available")
    inst = load_instance(INSTANCES / f"{NAME}.json")
    schedule, rep = offline.solve(inst, solver="cbc")
    _agree(inst, seen[0], schedule, rep)
    assert rep.route.startswith("compact/cbc/") and _close(rep.objective, OPT)


def test_every_back_end_returns_the_one_record():
    """Called directly: each names itself in ``solver`` and agrees on the optimum."""
    inst = load_instance(INSTANCES / f"{NAME}.json")
    prep = prepare(inst, offline.route_options(inst))
    results = {}
    for name, route in backends.ROUTES.items():
        clock = Clock(None)
        results[name] = route(prep, clock, Tracker(clock, None), 0.0)
    clock = Clock(60.0)
    results["portfolio"] = race.solve_portfolio([prep, prep], [0, 1], clock,
                                                Tracker(clock, None), 0.0, None)
    for name in ("cbc", "scip"):
        if solvers.availability(name) is None:
            results[name] = solvers.solve(name, prep, None, 0.0)
    results["colgen"] = colgen.solve(inst, **offline.colgen_inputs(inst))
    for name, result in results.items():
        assert type(result) is SolveResult, name
        assert result.solver == ("highspy" if name == "portfolio" else name)
        assert result.bound is not None and result.bound >= OPT * (1 - 1e-6), name
        if name != "colgen":  # exact MILP solvers: the proven optimum
            assert result.status is SolveStatus.OPTIMAL, name
            assert _close(result.objective, OPT), (name, result.objective)
    assert results["portfolio"].extras == {"racer": results["portfolio"].extras["racer"],
                                           "racers": 2}
    assert results["colgen"].schedule is not None
    cg = results["colgen"]
    assert cg.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)  # no limit, bound proven
    assert cg.objective == cg.schedule.total_utility <= OPT * (1 + 1e-6)
    assert {"lp_proven", "mip_status", *colgen_route.COLGEN_EXTRAS} <= set(
        results["colgen"].extras)


def test_an_lns_window_returns_the_one_record():
    inst = load_instance(INSTANCES / "testbed-s1.json")
    specs = [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    pm = PatternMaster(inst)
    generate(pm, specs)
    move = lns.search(pm, specs, np.zeros(len(pm.columns)), np.zeros(pm.n_lam), 0,
                      inst.horizon - 1, 10.0)
    assert type(move) is SolveResult and move.solver == "lns"
    assert _close(move.objective, pm.schedule(*move.values).total_utility)
    assert set(move.extras) == {"free_jobs", "new_columns", "priced_out"}


def test_no_other_result_record():
    """The records the one replaced stay gone (no aliases), and no other dataclass carries a
    ``status`` of the solve's type."""
    gone = {"Raw", "SolverRun", "ColgenResult", "Move"}
    for path in [*(ROOT / "oasis_opt").rglob("*.py"), *(ROOT / "formulations").glob("*.py")]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assert node.name not in gone, (path, node.name)
                fields = {n.target.id: ast.unparse(n.annotation) for n in node.body
                          if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
                if fields.get("status") == "SolveStatus":
                    assert node.name in ("SolveResult", "SolveReport"), (path, node.name)
            elif isinstance(node, ast.Assign):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                assert not names & gone, (path, names)
