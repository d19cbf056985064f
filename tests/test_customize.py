"""Your own constraints in the exact model (issue 19, item 2): ``offline.solve(customize=fn)``
on both modellers, against brute force and against the plain solve of the instance the rows
describe; rows the MILP's usual extraction would undo; the floor; errors by message."""

from __future__ import annotations

import copy

import pulp
import pyomo.environ as pyo
import pytest
from bruteforce import best_utility
from conftest import INSTANCES, add_rows, tiny_instance_dict

from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict, instance_to_dict, load_instance
from oasis_opt.model import REL_TOL
from oasis_opt.offline import SolveStatus, solve
from oasis_opt.validate import validate

MODELERS = ("pyomo", "pulp")
SMALL = ("small-s0", "small-s2", "small-s4")


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def forbid(job_id):
    return lambda m: add_rows(m, [m.done[job_id] == 0])


def cap_workers(job_id, most):
    return lambda m: add_rows(m, [m.workers[job_id, t] <= most for t in m.slots])


def solved(instance, modeler, customize, **kw):
    schedule, report = solve(instance, modeler=modeler, customize=customize, **kw)
    assert validate(instance, schedule).feasible
    assert report.status is SolveStatus.OPTIMAL
    assert close(schedule.total_utility, report.objective)
    return schedule, report


def without(d: dict, job_id: str) -> dict:
    d = copy.deepcopy(d)
    d["jobs"] = [j for j in d["jobs"] if j["id"] != job_id]
    return d


def capped(d: dict, job_id: str, most: int) -> dict:
    d = copy.deepcopy(d)
    for j in d["jobs"]:
        if j["id"] == job_id:
            j["max_workers"] = most
            j.pop("requested_workers", None)
    return d


def _busiest(instance) -> list[str]:
    """Ids of the jobs the plain optimum completes, most workers first: rows on them bind."""
    schedule, _ = solve(instance)
    y, _ = schedule.to_arrays(instance)
    done = [jr.id for jr in schedule.jobs if jr.completed]
    return sorted(done, key=lambda j: -y[instance.job_index[j]].max())


@pytest.mark.parametrize("modeler", MODELERS)
def test_forbid_a_job_on_the_tiny_instance_is_brute_force_without_it(modeler):
    d = tiny_instance_dict()
    instance = instance_from_dict(d)
    for job in ("j0", "j1"):
        schedule, report = solved(instance, modeler, forbid(job))
        reduced = instance_from_dict(without(d, job))
        assert close(report.objective, best_utility(reduced)), job
        assert not schedule.jobs[instance.job_index[job]].completed


@pytest.mark.parametrize("modeler", MODELERS)
def test_cap_a_job_on_the_tiny_instance_is_brute_force_with_that_max_workers(modeler):
    d = tiny_instance_dict()
    instance = instance_from_dict(d)
    for most in (1, 2, 3):
        schedule, report = solved(instance, modeler, cap_workers("j0", most))
        assert close(report.objective, best_utility(instance_from_dict(capped(d, "j0", most))))
        y, _ = schedule.to_arrays(instance)
        assert y[0].sum(axis=1).max() <= most


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("modeler", MODELERS)
def test_forbid_and_cap_match_the_modified_instance(name, modeler):
    """Forbidding a job that the optimum completes gives the optimum of the instance without
    it; capping its workers one below what the optimum gives it, the optimum with that
    ``max_workers``; both in each modeller, schedules checked directly."""
    instance = load_instance(INSTANCES / f"{name}.json")
    d = instance_to_dict(instance)
    job = _busiest(instance)[0]
    i = instance.job_index[job]
    schedule, report = solved(instance, modeler, forbid(job))
    assert close(report.objective, solve(instance_from_dict(without(d, job)))[1].objective)
    assert not schedule.jobs[i].completed
    most = int(solve(instance)[0].to_arrays(instance)[0][i].sum(axis=1).max()) - 1
    if most >= 1:
        schedule, report = solved(instance, modeler, cap_workers(job, most))
        plain = solve(instance_from_dict(capped(d, job, most)))[1].objective
        assert close(report.objective, plain)
        assert schedule.to_arrays(instance)[0][i].sum(axis=1).max() <= most


def _slot_cap(most):
    def rows(m):
        add_rows(m, [sum(m.workers[j, t] for j in m.jobs) <= most for t in m.slots])
    return rows


@pytest.fixture(scope="module")
def trace_instance(trace_path):
    """The plain solve of this trace-shaped instance rebuilds whole workers with its own
    small MILP, which is where a cap of 5 workers per slot used to come back as 8."""
    return load_instance(trace_path)


@pytest.mark.parametrize("modeler", MODELERS)
def test_total_workers_per_slot_cap_is_kept(modeler, trace_instance):
    for instance, most in ((load_instance(INSTANCES / "small-s0.json"), 5),
                           (trace_instance, 5)):
        plain_y = solve(instance)[0].to_arrays(instance)[0]
        assert plain_y.sum(axis=(0, 2)).max() > most  # the cap binds
        schedule, report = solved(instance, modeler, _slot_cap(most))
        y, _ = schedule.to_arrays(instance)
        assert y.sum(axis=(0, 2)).max() <= most
        other = "pulp" if modeler == "pyomo" else "pyomo"
        assert close(report.objective, solved(instance, other, _slot_cap(most))[1].objective)


@pytest.mark.parametrize("modeler", MODELERS)
def test_maintenance_window_on_a_server_is_kept(modeler):
    """Server w0 takes no worker in slots 1–3 (its per-server allocations,
    ``server_workers[j, h, t]``); the schedule holds nothing there and both modellers agree."""
    instance = load_instance(INSTANCES / "small-s0.json")
    h = instance.worker_index["w0"]
    plain_y = solve(instance)[0].to_arrays(instance)[0]
    assert plain_y[:, 1:4, h].sum() > 0  # the window binds

    def window(m):
        add_rows(m, [sum(m.server_workers[j, "w0", t] for j in m.jobs) == 0 for t in (1, 2, 3)])
    schedule, report = solved(instance, modeler, window)
    y, _ = schedule.to_arrays(instance)
    assert y[:, 1:4, h].sum() == 0
    other = "pulp" if modeler == "pyomo" else "pyomo"
    assert close(report.objective, solved(instance, other, window)[1].objective)


@pytest.mark.parametrize("modeler", MODELERS)
def test_rows_the_plain_extraction_would_undo_are_kept(modeler):
    """Rows that trimming after completion or dropping idle allocations would break: a job
    that may not finish in slot 1 (its work fits in slot 1; the plain MILP could do it there
    and still set its last slot to 2, and extraction would trim it back to 1), and a job
    that must hold a worker in slot 2. The schedule is returned as solved, so both hold."""
    instance = instance_from_dict(tiny_instance_dict())
    plain, _ = solve(instance)
    assert plain.jobs[1].completion_slot == 1

    def late(m):
        add_rows(m, [m.done["j1"] == 1, m.finish["j1", 1] == 0])
    schedule, _ = solved(instance, modeler, late)
    assert schedule.jobs[1].completed and schedule.jobs[1].completion_slot == 2

    def contradiction(m):  # all its work in slot 1, yet not finished there: no schedule
        add_rows(m, [m.done["j1"] == 1, m.finish["j1", 1] == 0, m.workers["j1", 1] >= 2])
    with pytest.raises(InputError, match="has no solution"):
        solve(instance, modeler=modeler, customize=contradiction)

    def busy(m):
        add_rows(m, [m.workers["j0", 2] >= 1, m.done["j0"] == 1])
    schedule, _ = solved(instance, modeler, busy)
    y, _ = schedule.to_arrays(instance)
    assert y[0, 2].sum() >= 1 and schedule.jobs[0].completion_slot >= 2


def test_no_rows_keep_the_optimum_and_the_floor():
    """An empty customize gives the plain optimum on both modellers; with a time limit the
    floor (here OASiS's schedule) is checked against the model and accepted, and the
    history shows it; a row that OASiS's schedule breaks keeps it out of the history."""
    instance = load_instance(INSTANCES / "small-s0.json")
    from oasis_opt import algorithms
    optimum = solve(instance)[1].objective
    floor = algorithms.run("oasis", instance)
    assert floor.total_utility < optimum - 1
    for modeler in MODELERS:
        _, report = solved(instance, modeler, lambda m: None, time_limit=30, floor=["oasis"])
        assert close(report.objective, optimum)
        first = [inc for _, inc, _ in report.history if inc is not None][0]
        assert close(first, floor.total_utility)  # the floor was checked and kept
    job = next(jr.id for jr in floor.jobs if jr.completed)
    for modeler in MODELERS:
        schedule, report = solved(instance, modeler, forbid(job), time_limit=30,
                                  floor=["oasis"])
        assert all(not close(inc, floor.total_utility)
                   for _, inc, _ in report.history if inc is not None)
        assert report.floor is None and not schedule.jobs[instance.job_index[job]].completed


def test_floor_names():
    instance = load_instance(INSTANCES / "small-s0.json")
    with pytest.raises(InputError, match="^floor: unknown algorithm 'nope'"):
        solve(instance, time_limit=10, floor=["nope"])
    _, report = solve(instance, time_limit=30, floor=())
    assert report.history[0][1] is None  # no floor: the first point is a bound only
    _, report = solve(instance, time_limit=30, floor=["fifo"])
    fifo = next(inc for _, inc, _ in report.history if inc is not None)
    from oasis_opt import algorithms
    assert close(fifo, algorithms.run("fifo", instance).total_utility)


def test_customize_errors_name_the_function_and_the_parameter():
    instance = load_instance(INSTANCES / "small-s0.json")

    def broken(m):
        raise KeyError("no such job")
    with pytest.raises(InputError, match="^customize: customize function "
                                         "'.*broken' raised KeyError: 'no such job'"):
        solve(instance, customize=broken)
    with pytest.raises(InputError, match="^customize: .* raised KeyError"):
        solve(instance, modeler="pulp", customize=lambda p: p.workers["nobody", 0])
    with pytest.raises(InputError, match="^modeler: customize adds rows"):
        solve(instance, modeler="highspy", customize=lambda m: None)
    with pytest.raises(InputError, match="^method: column generation"):
        solve(instance, method="colgen", customize=lambda m: None)
    with pytest.raises(InputError, match="^customize: must be a function"):
        solve(instance, customize=3)

    def objective(m):
        m.utility.deactivate()
        m.mine = pyo.Objective(expr=m.workers["j0", 0])
    with pytest.raises(InputError, match="changed the objective"):
        solve(instance, customize=objective)

    def pulp_objective(p):
        p += p.workers["j0", 0]
    with pytest.raises(InputError, match="changed the objective"), \
            pytest.warns(UserWarning, match="Overwriting"):
        solve(instance, modeler="pulp", customize=pulp_objective)

    def impossible(m):
        add_rows(m, [m.done[j] == 1 for j in m.jobs] + [m.workers["j0", t] == 0
                                                        for t in m.slots])
    for modeler in MODELERS:
        with pytest.raises(InputError, match="^customize: with the rows of customize "
                                             "function .*impossible.* has no solution"):
            solve(instance, modeler=modeler, customize=impossible)


def test_library_errors_name_parameters_not_flags():
    instance = load_instance(INSTANCES / "small-s0.json")
    for kw, place in (({"time_limit": -1}, "time_limit"), ({"time_limit": 1e9}, "time_limit"),
                      ({"mip_gap": 2}, "mip_gap"), ({"modeler": "x"}, "modeler"),
                      ({"method": "x"}, "method"), ({"solver": "glpk"}, "solver")):
        with pytest.raises(InputError) as err:
            solve(instance, **kw)
        assert err.value.place == place, (kw, str(err.value))


@pytest.mark.parametrize("path", sorted(INSTANCES.glob("edge-*.json")), ids=lambda p: p.stem)
def test_edge_instances_without_rows_keep_the_plain_optimum(path):
    """The empty instance (no variables at all) included: the function still sees the model."""
    instance = load_instance(path)
    seen = []
    for modeler in MODELERS:
        _, report = solved(instance, modeler, seen.append)
        assert close(report.objective, solve(instance)[1].objective)
    assert isinstance(seen[0], pyo.ConcreteModel) and isinstance(seen[1], pulp.LpProblem)


def test_the_examples_in_the_docs_run(monkeypatch):
    """The Python block of docs/offline.md "Your own constraints" runs as written."""
    from conftest import ROOT
    text = (ROOT / "docs/offline.md").read_text()
    section = text.split("## Your own constraints")[1].split("\n## ")[0]
    blocks = [b.split("```")[0] for b in section.split("```python\n")[1:]]
    assert blocks
    monkeypatch.chdir(ROOT)
    for block in blocks:
        exec(compile(block, "docs/offline.md", "exec"), {})


@pytest.mark.parametrize("modeler", ["pyomo", "pulp"])
def test_rows_that_replace_the_models_own_components_are_refused(modeler):
    """``m.c = Constraint(…)`` replaced the completion variables c and ended in a traceback
    inside the floor check; now one message names the component."""
    instance = load_instance(INSTANCES / "small-s1.json")

    def clobber(m):
        if modeler == "pyomo":
            m.c = pyo.Constraint(expr=m.done["j0"] == 0)
        else:
            m.workers = {}

    name = "c" if modeler == "pyomo" else "workers"
    with pytest.raises(InputError, match=f"replaced or removed the model's '{name}'"):
        solve(instance, modeler=modeler, customize=clobber)


# PuLP 3.3 deletes a row only through its deprecated mapping, which is what a user does here
@pytest.mark.filterwarnings("ignore:Using LpProblem.constraints as a dict:DeprecationWarning")
@pytest.mark.parametrize("modeler", MODELERS)
def test_rows_that_drop_the_models_own_rows_are_refused(modeler):
    """Deactivating the capacity rows (Pyomo) or deleting them (PuLP) gave, on Pyomo, status
    'feasible' with utility 0 and no word why (the solution broke capacity, the validator
    refused it); now one message names the function and a row."""
    instance = load_instance(INSTANCES / "small-s0.json")

    def no_capacity(m):
        if modeler == "pyomo":
            for c in m.component_objects(pyo.Constraint, active=True):
                if c.local_name.endswith("capacity"):
                    c.deactivate()
        else:
            for name in [n for n in m.constraints if "capacity" in n]:
                del m.constraints[name]

    with pytest.raises(InputError, match=r"^customize: customize function '.*no_capacity' "
                                         r"deactivated or removed \d+ of the model's own rows "
                                         r"\(e\.g\. '.*capacity.*'\); add rows or bounds only"):
        solve(instance, modeler=modeler, customize=no_capacity)
