"""``ratio.compare(time_limit=S)`` keeps SPEC §6 for the whole command: the algorithms run
first, the offline solve gets the time they left and reuses their schedules as its floor
(``offline.solve(floor_schedules=…)``), so no algorithm runs twice; a handed-over schedule
still goes through the validator; without a limit the answers are those of the solve and of
``algorithms.run`` called directly."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from conftest import INSTANCES

from oasis_opt import algorithms, offline, optcache, ratio
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.io import load_instance, schedule_from_dict, schedule_to_dict
from oasis_opt.offline import SolveStatus, backends
from oasis_opt.offline.floor import FLOOR_PARAMS, NOT_NEEDED
from oasis_opt.validate import validate

pytest.importorskip("highspy")

EVERY = tuple(algorithms.REGISTRY)


def tol(x: float) -> float:
    return 1e-6 * max(1.0, abs(x))


@pytest.fixture
def small():
    return load_instance(INSTANCES / "small-s1.json")


@pytest.fixture
def calls(monkeypatch):
    """Every ``algorithms.run`` call, counted by (name, parameters given)."""
    seen: Counter = Counter()
    real = algorithms.run

    def counting(name, instance, **params):
        seen[(algorithms.label(name), bool(params))] += 1
        return real(name, instance, **params)
    monkeypatch.setattr(algorithms, "run", counting)
    return seen


@pytest.fixture
def solves(monkeypatch):
    """The keyword arguments of every ``offline.solve`` call."""
    seen: list[dict] = []
    real = offline.solve

    def recording(instance, **kwargs):
        seen.append(kwargs)
        return real(instance, **kwargs)
    monkeypatch.setattr(offline, "solve", recording)
    return seen


def _slow(seconds: float):
    def run(instance):
        time.sleep(seconds)
        return algorithms.run("fifo", instance)
    return run


# --- (a) the whole command within 1.1·S + 10 s ---------------------------------------------


def test_a_slow_algorithm_leaves_the_solve_the_rest_of_the_limit(calls, solves):
    """A user's algorithm that takes 3 s and hard-s6 (about 25 CPU s to prove) under a 6 s
    limit: the solve gets what is left (under 3 s), the whole call returns within
    1.1·6 + 10 s, and the interval is valid: the bound is ≥ every algorithm's utility and the
    incumbent ≥ the best built-in one's (the floor's promise). The slow one ran once."""
    instance = generate("hard", seed=6)
    algorithms.register("slow-3s", _slow(3.0))
    try:
        start = time.perf_counter()
        rep = ratio.compare(instance, [*EVERY, "slow-3s"], time_limit=6.0, modeler="auto")
        took = time.perf_counter() - start
    finally:
        algorithms.unregister("slow-3s")
    assert took <= 1.1 * 6.0 + 10
    assert len(solves) == 1
    assert ratio.SOLVE_MIN_SECONDS <= solves[0]["time_limit"] <= 6.0 - 3.0
    assert rep.status in ("time_limit", "optimal")  # a machine fast enough may prove it
    rows = {r["algorithm"]: r for r in rep.rows}
    assert set(rows) == {*EVERY, "slow-3s"}
    assert all(rep.bound >= r["utility"] - tol(rep.bound) for r in rows.values())
    assert rep.opt >= max(rows[n]["utility"] for n in EVERY) - tol(rep.opt)
    assert rep.bound >= rep.opt and rep.reference >= rep.opt
    assert any(n.startswith("time limit 6 s for the whole command") for n in rep.notes)
    assert calls[("slow-3s", False)] == 1


def test_algorithms_past_the_limit_are_named_and_a_bound_still_comes_back(small, solves):
    """Algorithms that alone take longer than the limit cannot be interrupted: the notes say
    the command overruns, and the solve still gets its minimum and returns a valid bound."""
    algorithms.register("slow-1s", _slow(1.2))
    try:
        rep = ratio.compare(small, ["fifo", "slow-1s"], time_limit=1.0, modeler="auto")
    finally:
        algorithms.unregister("slow-1s")
    assert solves[0]["time_limit"] == ratio.SOLVE_MIN_SECONDS
    assert any("more than the 1 s time limit" in n and "overruns" in n for n in rep.notes)
    assert rep.bound is not None
    assert all(rep.bound >= r["utility"] - tol(rep.bound) for r in rep.rows)


def test_solve_budget() -> None:
    assert ratio.solve_budget(100.0, 30.0) == 70.0
    assert ratio.solve_budget(100.0, 95.0) == 10.0  # a tenth of the limit at least
    assert ratio.solve_budget(4.0, 3.5) == 1.0 == ratio.solve_budget(4.0, 40.0)  # 1 s


# --- (b) no algorithm runs twice -----------------------------------------------------------


def test_built_in_algorithms_run_once(small, calls, solves):
    """Every built-in compared under a limit: each runs once (in ``compare``); the solve is
    handed their schedules and runs none of them again."""
    rep = ratio.compare(small, list(EVERY), time_limit=30.0, modeler="auto")
    assert rep.status == "optimal"
    assert {n: calls[(n, False)] for n in EVERY} == dict.fromkeys(EVERY, 1)
    assert set(solves[0]["floor_schedules"]) == set(EVERY)


def test_the_floor_runs_only_what_was_not_handed_over(small, calls):
    """Two algorithms compared, one of them with parameters: the solve's floor is handed
    FIFO's schedule only (OASiS's with other parameters stands for no floor algorithm) and
    runs the built-in ones it needs (the lazy floor: RRH and Tetris before the solve, the
    rest only without a proof); nothing runs twice with the same parameters."""
    ratio.compare(small, {"fifo": {}, "oasis": {"u_scale": 0.5}}, time_limit=30.0,
                  modeler="auto")
    assert calls[("fifo", False)] == 1 and calls[("oasis", True)] == 1
    assert all(c == 1 for c in calls.values()), calls
    assert calls[("rrh", False)] == calls[("tetris", False)] == 1  # the lazy floor's first


def test_solve_uses_handed_over_schedules_lazily(monkeypatch, calls):
    """``offline.solve(floor_schedules=…)`` on the lazy route: the handed-over FLOOR_FIRST
    schedules are not run again; a solve that finds nothing runs the rest after it, each
    once, and answers with the best; the reserve for the rest was estimated from the given
    ones' seconds and kept from the solve's clock; a schedule under a name of its own joins
    the floor."""
    from oasis_opt.formulations.result import SolveResult
    instance = generate("mixed", seed=0)
    given = {n: algorithms.run(n, instance) for n in ("fifo", "rrh", "tetris")}
    given["mine"] = algorithms.run("oasis", instance, u_scale=0.5)
    calls.clear()
    seen = {}

    def nothing(prep, clock, tracker, mip_gap, start=None):
        seen["left"], seen["start"] = clock.remaining(), start
        return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
    monkeypatch.setitem(backends.ROUTES, "highspy", nothing)
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    schedule, report = offline.solve(instance, time_limit=30, floor_schedules=given)
    rest = [n for n in EVERY if n not in given]
    # each once, as the floor runs it (FLOOR_PARAMS: OASiS without its certificate)
    assert dict(calls) == {(n, bool(FLOOR_PARAMS.get(n))): 1 for n in rest}
    assert set(report.floor_runs) == {*EVERY, "mine"}
    assert all(not isinstance(v, str) for v in report.floor_runs.values())
    best = max([*given.values(), *(algorithms.run(n, instance) for n in rest)],
               key=lambda s: s.total_utility)
    assert report.objective == pytest.approx(best.total_utility)
    assert validate(instance, schedule).feasible
    assert seen["start"] is not None  # the given schedules' best was the MIP start
    assert seen["left"] < 30 - 0.001


def test_a_proven_optimum_needs_no_rest(small, calls):
    """Handed FLOOR_FIRST's schedules, a solve that proves the optimum runs no algorithm."""
    given = {n: algorithms.run(n, small) for n in offline.FLOOR_FIRST}
    calls.clear()
    _, report = offline.solve(small, time_limit=30, floor_schedules=given)
    assert report.status is SolveStatus.OPTIMAL and not calls
    assert {n for n, v in report.floor_runs.items() if v == NOT_NEEDED} == \
        set(EVERY) - set(offline.FLOOR_FIRST)


# --- (c) a handed-over schedule goes through the validator -----------------------------------


def _broken(instance):
    """FIFO's schedule with one allocation blown past every capacity."""
    data = schedule_to_dict(algorithms.run("fifo", instance))
    job = next(j for j in data["jobs"] if j["allocations"])
    alloc = job["allocations"][0]
    server = next(iter(alloc["workers"]))
    alloc["workers"][server] = 1000
    return schedule_from_dict(data)


@pytest.mark.parametrize("time_limit", [None, 10.0])
def test_a_schedule_that_breaks_a_rule_is_refused(small, time_limit):
    bad = _broken(small)
    assert not validate(small, bad).feasible
    with pytest.raises(InputError, match=r"floor_schedules\.fifo: breaks a rule of the model"):
        offline.solve(small, time_limit=time_limit, floor_schedules={"fifo": bad})
    with pytest.raises(InputError, match=r"floor_schedules\.x: expected a Schedule"):
        offline.solve(small, time_limit=time_limit, floor_schedules={"x": "fifo"})


def test_a_schedule_of_another_instance_is_refused(small):
    other = load_instance(INSTANCES / "testbed-s1.json")
    with pytest.raises(InputError, match=r"floor_schedules\.oasis"):
        offline.solve(small, time_limit=10, floor_schedules={
            "oasis": algorithms.run("oasis", other)})


# --- (d) without a limit nothing changes; the cache key keeps the limit --------------------


def test_without_a_limit_the_answers_are_unchanged(small, solves):
    names = ["oasis", "fifo", "drf"]
    rep = ratio.compare(small, names)
    assert solves == [{"modeler": "pyomo", "time_limit": None, "solver": "highs"}]
    _, direct = offline.solve(small, modeler="pyomo")
    assert rep.status == "optimal" and rep.opt == direct.objective
    assert rep.bound == direct.bound and rep.reference == direct.objective
    for row in rep.rows:
        assert row["utility"] == algorithms.run(row["algorithm"], small).total_utility
    assert not any("time limit" in n for n in rep.notes)


def test_the_cache_is_keyed_by_the_commands_limit(small, tmp_path, solves):
    """The solve had less than S, but the cache key holds S (``bench --opt-cache`` writes
    and ``ratio`` reads under it): a second call is answered by the cache and says so."""
    first = ratio.compare(small, ["oasis"], time_limit=30.0, opt_cache=tmp_path)
    key = optcache.key(small, optcache.settings_of(30.0, modeler="pyomo"))
    assert (tmp_path / f"{key}.json").exists()
    assert solves[0]["time_limit"] < 30.0 and "floor_schedules" in solves[0]
    second = ratio.compare(small, ["oasis"], time_limit=30.0, opt_cache=tmp_path)
    assert len(solves) == 1 and second.opt == first.opt and second.status == "optimal"
    assert any("came from the opt cache" in n for n in second.notes)


def test_ratio_refuses_a_master_too_large_before_its_algorithms_run(monkeypatch, calls):
    """``compare`` makes ``solve``'s up-front size refusals before the algorithms run
    (``offline.check_route_sizes``): column generation's least master above
    ``--max-memory`` is refused naming it, and no algorithm has run (an outside audit:
    ``ratio --max-memory 200M`` on 20 000 Philly jobs was refused after 15 s of them)."""
    from oasis_opt.formulations import colgen
    from oasis_opt.formulations.colgen_scale import with_count_rows
    inst = load_instance(INSTANCES / "testbed-s0.json")
    nbytes, _ = colgen.master_bytes(with_count_rows(inst), True, pool_all=True)
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(int(nbytes / 2)))
    with pytest.raises(InputError, match="column-generation master .* too large"):
        ratio.compare(inst, ["fifo", "tetris"], time_limit=60, method="colgen")
    assert not calls
