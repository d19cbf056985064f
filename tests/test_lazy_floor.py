"""The lazy floor (``offline/floor.py``, issue 22 round 7): on the compact route with the
built-in algorithms only ``FLOOR_FIRST`` runs before the solve; the rest runs only where the
solve does not prove the optimum, within the reserve the solve leaves it. A proven optimum
is the same as with the whole floor (and as brute force and the other modellers); without a
proof the answer is still the best online schedule or better."""

from __future__ import annotations

import pytest
from bruteforce import best_utility
from conftest import INSTANCES
from oasis_opt.formulations.result import SolveResult
from test_ps_rate import one_ps_server

from oasis_opt import algorithms
from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict, load_instance
from oasis_opt.model import REL_TOL
from oasis_opt.offline import FLOOR_FIRST, SolveStatus, backends, solve
from oasis_opt.offline.clock import Clock, Tracker
from oasis_opt.offline.floor import NOT_NEEDED, Floor
from oasis_opt.validate import validate

EVERY = tuple(algorithms.REGISTRY)  # named: the floor runs whole, as before round 7


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(b))


@pytest.mark.parametrize("modeler", ["auto", "pyomo", "pulp"])
def test_proven_optimum_skips_the_rest_and_agrees(modeler, monkeypatch):
    """Brute force, the whole floor and the lazy one prove the same optimum; the lazy one ran
    ``FLOOR_FIRST`` only and says why the others did not run. (Without the early prober,
    whose proof may come before ``FLOOR_FIRST`` has run: the next test.)"""
    from oasis_opt.offline import compact
    monkeypatch.setattr(compact, "EARLY_PROBE", False)
    instance = instance_from_dict(one_ps_server())
    expected = best_utility(instance)
    lazy_s, lazy = solve(instance, modeler=modeler, time_limit=30)
    _, whole = solve(instance, modeler=modeler, time_limit=30, floor=EVERY)
    assert lazy.status is whole.status is SolveStatus.OPTIMAL
    assert close(lazy.objective, expected) and close(whole.objective, expected)
    assert validate(instance, lazy_s).feasible
    assert [n for n, v in lazy.floor_runs.items() if v != NOT_NEEDED] == list(FLOOR_FIRST)
    assert set(lazy.floor_runs) == set(EVERY)
    assert all(not isinstance(v, str) for v in whole.floor_runs.values())


def test_a_floor_run_stops_before_its_next_algorithm_once_told():
    """``Floor.run(until=...)``: the solve's prober has proven the optimum
    (``compact.early_prober``), so the floor's first algorithms that have not started stay
    pending, and ``settle`` says they were not needed."""
    instance = instance_from_dict(one_ps_server())
    clock = Clock(30.0)
    tracker = Tracker(clock, None)
    floor = Floor(instance, tracker, EVERY, clock, first=FLOOR_FIRST)
    asked = []
    best = floor.run(FLOOR_FIRST, until=lambda: asked.append(1) or len(asked) > 1)
    assert [name for name, _ in floor.ran] == [FLOOR_FIRST[0]] and len(asked) == 2
    assert best is not None and validate(instance, best).feasible
    floor.settle(True)
    assert list(tracker.floor_runs) == [FLOOR_FIRST[0], *floor.order[1:]]
    assert all(tracker.floor_runs[n] == NOT_NEEDED for n in floor.order[1:])


def test_lazy_and_whole_floor_prove_the_same_optimum(monkeypatch):
    """A generated instance of each kind the route treats differently (PLAIN on a loose one,
    patterns on identical pools, the server model): the same optimum either way, validated.
    No race (``OASIS_PORTFOLIO=0``): whether one runs depends on an idle core, not the floor."""
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    for instance in (generate("loose", seed=0), load_instance(INSTANCES / "small-s0.json"),
                     generate("mixed-2r", seed=3)):
        lazy_s, lazy = solve(instance, time_limit=60)
        _, whole = solve(instance, time_limit=60, floor=EVERY)
        assert lazy.status is whole.status is SolveStatus.OPTIMAL, instance.name
        assert close(lazy.objective, whole.objective), instance.name
        assert lazy.route == whole.route, instance.name  # the loose rule saw the same floor
        assert validate(instance, lazy_s).feasible
        assert lazy.bound >= lazy.objective


def test_the_rest_runs_when_the_solve_does_not_prove(monkeypatch):
    """A solve that stops on its limit with nothing found: every algorithm runs after it and
    the best online schedule is the answer; the solve had the clock less the reserve."""
    instance = generate("mixed", seed=0)
    seen = {}

    def nothing(prep, clock, tracker, mip_gap, start=None):
        seen["left"] = clock.remaining()
        return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
    monkeypatch.setitem(backends.ROUTES, "highspy", nothing)
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    schedule, report = solve(instance, time_limit=30)
    best = max(algorithms.run(n, instance).total_utility for n in EVERY)
    assert report.status is SolveStatus.TIME_LIMIT
    assert all(not isinstance(v, str) for v in report.floor_runs.values())
    assert set(report.floor_runs) == set(EVERY)
    assert close(report.objective, best) and report.floor is not None
    assert validate(instance, schedule).feasible
    assert seen["left"] < 30 - 0.001  # the reserve for the rest was kept from the solve


def test_a_tiny_limit_keeps_the_floor():
    """A limit too short for HiGHS to prove: the answer is never worse than any online
    algorithm's, and every algorithm the floor's budget allows has run."""
    instance = generate("paper", seed=2, jobs=60, horizon=30)
    schedule, report = solve(instance, time_limit=0.3, method="compact")
    best = max(algorithms.run(n, instance).total_utility for n in EVERY)
    assert report.status is SolveStatus.TIME_LIMIT
    assert report.objective >= best - REL_TOL * best
    assert NOT_NEEDED not in report.floor_runs.values()
    assert validate(instance, schedule).feasible


def test_without_a_limit_the_lazy_floor_runs_and_the_route_is_the_same(monkeypatch):
    """No time limit (issue 22, round 11): the lazy floor still runs (its start and the loose
    rule), so the route is the time-limited one; the optimum is the brute force's and the
    rest of the floor is skipped as proven. A named floor does not run without a limit."""
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    instance = generate("loose", seed=0)
    s, unlimited = solve(instance)
    _, limited = solve(instance, time_limit=60)
    assert unlimited.status is SolveStatus.OPTIMAL
    assert unlimited.route == limited.route == "compact/highspy/plain"  # the loose rule
    assert close(unlimited.objective, limited.objective)
    assert [n for n, v in unlimited.floor_runs.items() if v != NOT_NEEDED] == list(FLOOR_FIRST)
    assert validate(instance, s).feasible
    small = instance_from_dict(one_ps_server())
    _, named = solve(small, floor=["fifo"])
    assert named.floor_runs == {} and close(named.objective, best_utility(small))


def test_without_a_limit_and_without_a_proof_the_rest_runs(monkeypatch):
    """Without a limit a solve that ends unproven (here: a back-end that finds nothing) still
    answers with the best online schedule: the rest of the lazy floor runs after it."""
    instance = generate("mixed", seed=0)
    monkeypatch.setitem(backends.ROUTES, "highspy", lambda prep, clock, tracker, mip_gap,
                        start=None: SolveResult(SolveStatus.TIME_LIMIT, solver="highspy"))
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    schedule, report = solve(instance)
    best = max(algorithms.run(n, instance).total_utility for n in EVERY)
    assert set(report.floor_runs) == set(EVERY)
    assert NOT_NEEDED not in report.floor_runs.values()
    assert close(report.objective, best) and validate(instance, schedule).feasible


def test_the_floor_runs_oasis_without_its_certificate():
    """Only the floor's schedules are wanted: OASiS and oasis-adaptive run without their dual
    certificate (``FLOOR_PARAMS``) and give the schedules their plain runs give."""
    instance = generate("mixed", seed=1)
    floor = Floor(instance, Tracker(Clock(None), None), ["oasis", "oasis-adaptive"])
    floor.run()
    for name, schedule in floor.ran:
        alone = algorithms.run(name, instance)
        assert alone.extras["D_cert"] is not None
        assert schedule.extras["D_cert"] is None and schedule.extras["certificate_seconds"] == 0
        assert schedule.jobs == alone.jobs
        assert schedule.total_utility == alone.total_utility


def test_a_slow_schedule_of_the_users_leaves_the_solve_its_time():
    """A schedule handed to the floor from a user's scheduler that took 3 s (``ratio
    --time-limit 1`` with it): its seconds entered the reserve's estimate for the pending
    built-ins, the reserve took the whole limit and the solve answered at once with a bound
    only (218.3 ≤ OPT ≤ 385.3). Only built-ins' seconds estimate built-ins now: proven."""
    inst = load_instance(INSTANCES / "small-s1.json")
    fifo = algorithms.run("fifo", inst)
    mine = fifo.__class__(fifo.instance, "mine", fifo.total_utility, fifo.jobs,
                          {**fifo.extras, "seconds": 3.0})
    _, unlimited = solve(inst)
    schedule, report = solve(inst, time_limit=1.0, floor_schedules={"mine": mine})
    assert report.status is SolveStatus.OPTIMAL
    assert report.objective == pytest.approx(unlimited.objective, rel=REL_TOL)
    assert validate(inst, schedule).feasible


def test_the_floor_of_a_solve_without_a_limit_keeps_to_its_seconds(monkeypatch):
    """Without a time limit the lazy floor ran to the end of every run: one job of 10⁶
    workers of 10⁻⁹ GPU kept the plain ``solve`` 12.7 s in Tetris's one-at-a-time placements
    where the solve alone takes 0.27 s (an outside audit). It now keeps to
    ``FLOOR_UNTIMED_SECONDS`` (here 0.5 s): Tetris is stopped, and the answer is still the
    proven optimum."""
    from oasis_opt.offline import floor
    monkeypatch.setattr(floor, "FLOOR_UNTIMED_SECONDS", 0.5)
    n = 10**6
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "tiny-workers", "horizon": 2,
        "resources": ["gpu"], "worker_servers": [{"name": "w", "capacity": [1]}],
        "ps_servers": [{"name": "p", "capacity": [1]}],
        "jobs": [{"id": "a", "arrival": 0, "workload": n, "max_workers": n, "ps_ratio": n,
                  "worker_demand": [1e-9], "ps_demand": [1e-9],
                  "utility": {"kind": "deadline", "value": 5, "deadline": 2}}]})
    schedule, report = solve(inst)
    assert report.status is SolveStatus.OPTIMAL and report.objective == pytest.approx(5.0)
    assert report.floor_runs["fifo"] == pytest.approx(5.0)
    assert report.floor_runs["tetris"] == "skipped: time budget"
    assert validate(inst, schedule).feasible
