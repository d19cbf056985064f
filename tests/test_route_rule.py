"""The route chosen by the instance (issue 22): demand-class patterns only where every PS
server has an identical twin or the PS pool cannot bind; server packing elsewhere where its
rows lower the LP bound by ``CUT_GAIN`` or more, the plain server model where they do not or
where the floor comes close to the trivial bound; each with the same proven optimum (the
brute force's)."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from bruteforce import best_utility
from conftest import INSTANCES
from oasis_opt.formulations.common import PLAIN, Options

from oasis_opt import algorithms
from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict
from oasis_opt.model import REL_TOL
from oasis_opt.offline import SolveStatus, instance_features, route_options, solve
from oasis_opt.offline.plan import (
    CUT_GAIN,
    LOOSE_FLOOR_SHARE,
    PATTERN_MIN_SHARED_WORKERS,
    PLAIN_MIN_FILL,
    POOLED_BELOW_SECONDS,
    POOLED_MIN_JOBS,
    cut_gain,
    floor_share,
    pooled_colgen,
)
from oasis_opt.validate import validate

MANIFEST = json.loads((INSTANCES / "manifest.json").read_text())["instances"]


def test_patterns_stay_on_identical_ps_servers():
    for preset in ("hard", "testbed"):
        assert route_options(generate(preset, seed=1)) is None, preset


def test_patterns_need_twins_among_the_worker_servers_too():
    """Every PS server with an identical twin is not enough: patterns also need
    ``PATTERN_MIN_SHARED_WORKERS`` of the worker servers to have one (issue 22, round 44).
    Where the worker servers differ, the server branch decides (``server_or_plain``), and
    the route proves the brute-force optimum; with twin worker servers, patterns stay."""
    d = tiny_heterogeneous()
    d["ps_servers"][1]["capacity"] = list(d["ps_servers"][0]["capacity"])  # twin PSs
    unlike = instance_from_dict(d)
    f = instance_features(unlike)
    assert f["ps_binds"] and f["shared_ps"] == 1.0
    assert f["shared_workers"] < PATTERN_MIN_SHARED_WORKERS
    assert route_options(unlike) in (PLAIN, Options(packing="server"))
    sched, rep = solve(unlike)
    assert rep.status is SolveStatus.OPTIMAL and validate(unlike, sched).feasible
    expected = best_utility(unlike)
    assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected)
    d["worker_servers"][1]["capacity"] = list(d["worker_servers"][0]["capacity"])
    twins = instance_from_dict(d)
    assert instance_features(twins)["shared_workers"] == 1.0
    assert route_options(twins) is None


def test_integral_servers_take_the_plain_model():
    """½- and 1-GPU jobs on 4-GPU servers, no PS resource demanded: each server's capacity
    row is its knapsack's integer hull, patterns add nothing; one demand class (the trace
    imports) keeps patterns, which make the workers continuous."""
    instance = generate("uniform-1r", seed=1)
    f = instance_features(instance)
    assert f["integral_servers"] and not f["ps_binds"] and f["worker_classes"] == 2
    assert route_options(instance) == PLAIN
    base = tiny_heterogeneous()
    one_class = instance_from_dict({**base, "resources": ["gpu"],
                                    "worker_servers": [{"name": "w", "capacity": [4]}],
                                    "ps_servers": [{"name": "p", "capacity": [1]}],
                                    "jobs": [{**j, "worker_demand": [1], "ps_demand": [0]}
                                             for j in base["jobs"]]})
    assert instance_features(one_class)["integral_servers"]
    assert route_options(one_class) is None
    assert not instance_features(generate("hard", seed=1))["integral_servers"]


def test_server_packing_where_ps_servers_differ_and_its_rows_tighten():
    """Where the PS servers differ and the work fills the worker pool (fill ≥
    ``PLAIN_MIN_FILL``): the server model where its rows cut ``CUT_GAIN`` or more off the LP
    bound (ps-light-s0: 11 %, mixed-s2: 1.7 %), PLAIN where they do not (mixed-s0 0.5 %,
    ps-heavy-s1 0.4 %, ps-light-s2 0.7 %)."""
    for preset, seed, server in (("mixed", 0, False), ("ps-heavy", 1, False),
                                 ("ps-light", 2, False), ("ps-light", 0, True),
                                 ("mixed", 2, True)):
        instance = generate(preset, seed=seed)
        f = instance_features(instance)
        assert f["ps_binds"] and f["shared_ps"] < 1.0 and f["fill"] >= PLAIN_MIN_FILL, preset
        gain = cut_gain(instance)
        assert gain is not None and (gain >= CUT_GAIN) == server, (preset, seed, gain)
        expected = Options(packing="server") if server else PLAIN
        assert route_options(instance) == expected, (preset, seed)


def tiny_ps_light() -> dict:
    """``tiny_heterogeneous`` with one PS serving up to 8 workers (γ = 8) and two PS servers
    of different shapes that hold one PS each: the PS rate rounding of the PS cuts lowers
    the LP bound by 4.5 %, so the route keeps the server model."""
    d = tiny_heterogeneous()
    for j in d["jobs"]:
        j["ps_ratio"] = 8
    d["ps_servers"][0]["capacity"] = [1, 2]
    d["ps_servers"][1]["capacity"] = [0, 2]
    return d


def tiny_heterogeneous() -> dict:
    """Two worker servers and two PS servers, each pair of different shapes; three jobs that
    contend, with fractional demands and a table utility."""
    def job(jid, arrival, workload, n, gamma, wd, pd, utility):
        return {"id": jid, "arrival": arrival, "workload": workload, "max_workers": n,
                "ps_ratio": gamma, "worker_demand": wd, "ps_demand": pd, "utility": utility}
    return {"format": "oasis-instance/1", "name": "tiny-mixed", "horizon": 3,
            "resources": ["gpu", "cpu"],
            "worker_servers": [{"name": "w0", "capacity": [2, 8]},
                               {"name": "w1", "capacity": [1, 6]}],
            "ps_servers": [{"name": "p0", "capacity": [0, 4]}, {"name": "p1", "capacity": [0, 2]}],
            "jobs": [job("a", 0, 4, 2, 1, [1, 2], [0, 2], {"kind": "table", "values": [9, 6, 2]}),
                     job("b", 0, 3, 2, 2, [0.5, 3], [0, 1],
                         {"kind": "sigmoid", "gamma1": 8, "gamma2": 1, "gamma3": 2}),
                     job("c", 1, 2, 1, 1, [1, 1], [0, 2], {"kind": "table", "values": [7, 7]})]}


def test_server_route_proves_the_brute_force_optimum():
    instance = instance_from_dict(tiny_ps_light())
    assert cut_gain(instance) >= CUT_GAIN
    assert route_options(instance) == Options(packing="server")
    sched, rep = solve(instance)
    assert rep.status is SolveStatus.OPTIMAL
    expected = best_utility(instance)
    assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected)
    assert validate(instance, sched).feasible
    assert sched.extras["packing"] == "server"


def floor_utility(instance) -> float:
    return max(algorithms.run(name, instance).total_utility for name in algorithms.REGISTRY)


def test_loose_instances_take_the_plain_model():
    for preset, seed in (("loose", 1), ("mixed-2r", 0)):
        instance = generate(preset, seed=seed)
        floor = floor_utility(instance)
        assert floor_share(instance, floor) >= LOOSE_FLOOR_SHARE, preset
        assert route_options(instance, floor) == PLAIN, preset
        # no floor (no time limit): the fill and the LP decide; the server rows tighten
        # nothing, so PLAIN where the worker pool is loaded (loose-s1, fill 0.88), the
        # server model where it is not (mixed-2r-s0, 0.51)
        assert cut_gain(instance) < CUT_GAIN, preset
        loaded = instance_features(instance)["fill"] >= PLAIN_MIN_FILL
        assert loaded == (preset == "loose"), preset
        assert route_options(instance) == (PLAIN if loaded else Options(packing="server"))
    tight = generate("mixed", seed=2)
    assert route_options(tight, floor_utility(tight)) == Options(packing="server")


def test_plain_route_proves_the_other_modellers_optimum():
    """A loose tiny instance: with a time limit the route is plain, and its proven optimum is
    the one of the default model in PuLP (PLAIN against the brute force on every tiny
    instance: test_offline.py)."""
    d = tiny_heterogeneous()
    d["worker_servers"][0]["capacity"] = [4, 16]
    d["ps_servers"][0]["capacity"] = [0, 8]
    for j, n in zip(d["jobs"], (4, 3, 2), strict=True):
        j["max_workers"] = n
    instance = instance_from_dict(d)
    assert route_options(instance, floor_utility(instance)) == PLAIN
    sched, rep = solve(instance, time_limit=30)
    assert rep.status is SolveStatus.OPTIMAL and rep.route.endswith("/plain")
    _, other = solve(instance, modeler="pulp", options=Options())
    assert other.status is SolveStatus.OPTIMAL
    assert abs(rep.objective - other.objective) <= REL_TOL * max(1.0, other.objective)
    assert rep.bound >= other.objective - REL_TOL * max(1.0, other.objective)
    assert validate(instance, sched).feasible


def test_server_packing_runs_without_root_restarts():
    """``Options.restart`` auto: off where the packing resolves to servers (the route's
    server packing, the fallback of too many patterns, PLAIN since round 17), on with
    patterns."""
    from oasis_opt.formulations.common import prepare
    from oasis_opt.formulations.highs import mip_options
    instance = generate("mixed", seed=2)
    assert mip_options(prepare(instance, route_options(instance))) == {
        "mip_allow_restart": False}
    assert mip_options(prepare(instance, PLAIN)) == {"mip_allow_restart": False}
    assert mip_options(prepare(generate("hard", seed=1))) == {}
    assert mip_options(prepare(generate("hard", seed=1), Options(restart=False))) == {
        "mip_allow_restart": False}


def test_plain_runs_without_the_root_reduced_cost_heuristic_where_gamma_is_one():
    """``Options.root_heuristic`` (issue 22 round 8): PLAIN's auto setting turns HiGHS's
    root reduced-cost heuristic off only where every job needs one PS per worker (γ_i ≤ 1,
    the `ps-heavy` family); other PS ratios and the other models keep HiGHS's default. A
    search setting, not a row: PLAIN with it on and off proves the brute force's optimum on
    highspy (the medium it reaches) on a γ = 1 instance, and the schedule validates."""

    from oasis_opt.formulations.common import prepare
    from oasis_opt.formulations.highs import mip_options
    key = "mip_heuristic_run_root_reduced_cost"
    assert PLAIN.root_heuristic is None and Options().root_heuristic is True
    heavy = generate("ps-heavy", seed=0)
    assert all(job.ps_ratio <= 1 for job in heavy.jobs)
    assert mip_options(prepare(heavy, PLAIN))[key] is False
    assert key not in mip_options(prepare(heavy, Options(packing="server")))
    assert key not in mip_options(prepare(generate("mixed", seed=0), PLAIN))
    d = tiny_ps_light()
    for job in d["jobs"]:
        job["ps_ratio"] = 1
    instance = instance_from_dict(d)
    expected = best_utility(instance)
    for options in (PLAIN, replace(PLAIN, root_heuristic=True)):
        assert (key in mip_options(prepare(instance, options))) is (options == PLAIN)
        sched, rep = solve(instance, modeler="highspy", options=options)
        assert rep.status is SolveStatus.OPTIMAL
        assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected), options
        assert validate(instance, sched).feasible


def test_racers_where_the_rule_is_unsure_and_the_seed_partner():
    """``plan.racers``, a pure function of the planned model: where the route packs by server
    and the PS pool binds, the server model races PLAIN; where it took PLAIN, on any pool,
    PLAIN races itself at HiGHS random seed ``SEED_PARTNER`` (issue 22 round 6), with its PS
    counts relaxed and made whole after where a job shares a PS (round 10); on
    patterns (identical PS servers) and on other models where no PS capacity binds, the
    cut-free variant with another seed, as before."""
    from oasis_opt.formulations.common import prepare

    from oasis_opt.offline.plan import PORTFOLIO, SEED_PARTNER, racers
    assert SEED_PARTNER != 0
    instance = instance_from_dict(tiny_ps_light())
    prep = prepare(instance, route_options(instance))
    assert racers(prep) == [(prep.options, 0), (PLAIN, 0)]
    # PLAIN's partner: PLAIN at another seed, its PS counts relaxed where a job shares a PS
    # (γ > 1, issue 22 round 10), whole where none does (γ = 1)
    plain = prepare(generate("mixed", seed=0), PLAIN)
    assert not plain.ps_free and racers(plain) == [
        (PLAIN, 0), (replace(PLAIN, ps_relaxed=True), SEED_PARTNER)]
    heavy = prepare(generate("ps-heavy", seed=0), PLAIN)
    assert (heavy.instance.ps_ratio <= 1).all() and not heavy.ps_free
    assert racers(heavy) == [(PLAIN, 0), (PLAIN, SEED_PARTNER)]
    uniform = generate("uniform-1r", seed=1)  # PLAIN where no PS row can bind: the same
    free_plain = prepare(uniform, route_options(uniform))
    assert free_plain.ps_free and racers(free_plain) == [(PLAIN, 0), (PLAIN, SEED_PARTNER)]
    fallback = prepare(instance, Options(pattern_limit=0))  # too many patterns: servers
    assert fallback.packing == "server" and racers(fallback)[1] == (PLAIN, 0)
    hard = prepare(generate("hard", seed=1))
    assert hard.packing == "pattern"
    (first, _), (second, seed) = racers(hard)
    assert first == hard.options and seed == PORTFOLIO[1][1]
    assert not second.completion_cuts and not second.ps_dominance
    free = instance_from_dict({**tiny_heterogeneous(), "jobs": [
        {**j, "ps_demand": [0, 0]} for j in tiny_heterogeneous()["jobs"]]})
    assert racers(prepare(free, Options(packing="server")))[1][0] != PLAIN


def test_plain_races_only_where_a_ps_row_can_bind(monkeypatch):
    """``plan.portfolio_wanted``: PLAIN on a binding PS pool races (against itself at
    another seed) when the race is allowed; PLAIN where no PS capacity row can bind
    (`uniform-1r`: sub-second proofs, where the forked racer cost more than it saved, issue
    22 round 6) never does; nothing races with ``OASIS_PORTFOLIO=0``."""
    from oasis_opt.formulations.common import prepare

    from oasis_opt.offline.plan import portfolio_wanted
    uniform = generate("uniform-1r", seed=1)
    free = prepare(uniform, route_options(uniform))
    bound = prepare(generate("mixed", seed=1), PLAIN)
    assert free.options == PLAIN and free.ps_free and not bound.ps_free
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    assert portfolio_wanted(bound, "auto", None, "highspy", 60.0)
    assert not portfolio_wanted(free, "auto", None, "highspy", 60.0)
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    assert not portfolio_wanted(bound, "auto", None, "highspy", 60.0)


def test_the_seed_race_proves_the_single_runs_optimum(monkeypatch):
    """The seed race (PLAIN against itself at seed ``SEED_PARTNER``), both racers started at
    once on a small PLAIN instance (mixed-2r-s3, a binding PS pool) and through ``solve``
    with the race forced: the same proven optimum as one in-process run and as the Pyomo modeller's
    default model, a validated schedule, a bound ≥ the optimum; the partner alone (seed
    ``SEED_PARTNER``) proves it too."""
    from oasis_opt.formulations.common import prepare

    from oasis_opt import offline
    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.plan import SEED_PARTNER, racers
    instance = generate("mixed-2r", seed=3)
    prep = prepare(instance, route_options(instance, floor_utility(instance)))
    assert prep.options == PLAIN and not prep.ps_free
    seeds = [s for _, s in racers(prep)]
    _, single = solve(instance, options=PLAIN)
    _, ref = solve(instance, modeler="pyomo", options=Options())
    for rep in (single, ref):
        assert rep.status is SolveStatus.OPTIMAL
    clock = Clock(60.0)
    raced = offline.race.solve_portfolio([prep, prep], seeds, clock, Tracker(clock, None),
                                         0.0, None, [0.0, 0.0])
    clock = Clock(60.0)
    partner = offline.race.solve_portfolio([prep], [SEED_PARTNER], clock,
                                           Tracker(clock, None), 0.0, None)
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    monkeypatch.setattr(offline.compact, "RACE_DELAY", 0.0)  # both racers run, however quick
    monkeypatch.setattr(offline.compact, "EARLY_PROBE", False)  # (its proof would end the race)
    sched, rep = solve(instance, time_limit=60)
    assert rep.route == "compact/highspy/plain+race", rep.route
    assert validate(instance, sched).feasible
    for got in (raced, partner, rep):
        assert got.status is SolveStatus.OPTIMAL
        for opt in (single.objective, ref.objective):
            assert abs(got.objective - opt) <= REL_TOL * max(1.0, opt)
    assert raced.extras["racers"] == 2
    assert rep.bound >= ref.objective - REL_TOL * max(1.0, ref.objective)


def test_plain_against_the_server_model_proves_the_comparators_optimum(monkeypatch):
    """The race forced (on a busy machine it runs only from a long limit on): ps-heavy-s0
    (PLAIN, raced against itself at another seed since round 6) proves with either racer the optimum of the plain direct-highspy comparator
    (benchmarks/direct_highspy.py, a second modeller) and of Pyomo, and validates."""
    import sys
    from pathlib import Path
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import direct_highspy
    instance = generate("ps-heavy", seed=0)
    sched, rep = solve(instance, time_limit=120)
    assert rep.route.endswith("+race") and rep.status is SolveStatus.OPTIMAL
    h = direct_highspy.build(instance)
    h.setOptionValue("mip_rel_gap", 0.0)  # proven to gap 0, as ours
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    _, ref = solve(instance, modeler="pyomo")
    for opt in (h.getInfo().objective_function_value, ref.objective):
        assert abs(rep.objective - opt) <= REL_TOL * max(1.0, opt)
    assert validate(instance, sched).feasible


def test_the_lp_bounds_cut_gain_compares_are_bounds():
    """``compact_highspy.relaxation_bound``: the LP optimum of each model is ≥ the brute-force
    optimum, the server model's ≤ PLAIN's (its rows only add), and ``cut_gain`` is their
    relative difference."""
    from oasis_opt.formulations.common import prepare
    from oasis_opt.formulations.compact_highspy import relaxation_bound
    for d in (tiny_heterogeneous(), tiny_ps_light()):
        instance = instance_from_dict(d)
        opt = best_utility(instance)
        server = relaxation_bound(prepare(instance, Options(packing="server")))
        plain = relaxation_bound(prepare(instance, PLAIN))
        assert opt - REL_TOL * max(1.0, opt) <= server <= plain + REL_TOL * max(1.0, plain)
        assert abs(cut_gain(instance) - (plain - server) / server) <= 1e-9


def test_pattern_fallback_weighs_plain_as_the_server_branch():
    """``plan.settle_fallback``: where the default's patterns fall back to server packing
    (too many patterns; here forced by ``pattern_limit=0`` on the `hard` preset, whose PS
    servers are identical) on a binding PS pool, PLAIN is taken by the server branch's rule
    (fill ≥ ``PLAIN_MIN_FILL`` and a gain below ``CUT_GAIN``: hard-s1, 0.3 %), the server
    model is kept where the rows cut more (hard-s3, 2.1 %); patterns, explicit options and a
    PS pool that cannot bind are left alone."""
    from oasis_opt.formulations.common import prepare

    from oasis_opt.offline.plan import settle_fallback
    for seed, plain in ((1, True), (3, False)):
        instance = generate("hard", seed=seed)
        fallback = prepare(instance, Options(pattern_limit=0))
        assert fallback.packing == "server" and not fallback.ps_free
        assert instance_features(instance)["fill"] >= PLAIN_MIN_FILL
        assert (cut_gain(instance) < CUT_GAIN) == plain, seed
        settled = settle_fallback(fallback)
        assert (settled.options == PLAIN) == plain, seed
        assert settled is fallback or settled.packing == "server"
    patterns = prepare(generate("hard", seed=1))
    assert patterns.packing == "pattern" and settle_fallback(patterns) is patterns
    chosen = prepare(generate("hard", seed=1), Options(packing="server"))
    assert settle_fallback(chosen) is chosen  # server packing asked for: kept
    free = instance_from_dict({**tiny_heterogeneous(), "jobs": [
        {**j, "ps_demand": [0, 0]} for j in tiny_heterogeneous()["jobs"]]})
    lone = prepare(free, Options(pattern_limit=0))
    assert lone.ps_free and settle_fallback(lone) is lone


def test_the_model_not_its_cells_decides_compact_or_colgen():
    """With a time limit the default route sizes its model: 30 `small` jobs × 20 slots on
    four servers are 1 908 cells (compact by cells at any limit) but ~6 200 rows, too many
    for 5 s (300 a second) and few enough for 25 s; the prepared model is kept. Fewer than
    ``SIZED_MIN_JOBS`` jobs stay compact."""
    from oasis_opt.offline.clock import Clock
    from oasis_opt.offline.compact import route_prep, sized_route
    from oasis_opt.offline.plan import (
        COMPACT_MIN_ROWS,
        ROWS_PER_SECOND,
        SIZED_MIN_JOBS,
        choose_method,
        compact_in_time,
    )
    instance = generate("small", seed=7, jobs=30, horizon=20)
    assert choose_method(instance, "auto", Clock(5.0)) == "compact"
    rows = route_prep(instance, None, None).model_size()["rows"]
    assert ROWS_PER_SECOND * 5.0 < rows <= ROWS_PER_SECOND * 25.0
    assert sized_route(instance, Clock(5.0)) == ("colgen", None)
    method, prep = sized_route(instance, Clock(25.0))
    assert method == "compact" and prep.model_size()["rows"] == rows
    # the solve takes the model made before the floor unless the floor turns the loose
    # rule on (the one way it changes the formulation)
    assert route_prep(instance, None, None, prepared=prep) is prep
    assert compact_in_time(COMPACT_MIN_ROWS, 0.001)
    assert compact_in_time(10**9, None)
    assert not compact_in_time(COMPACT_MIN_ROWS + 1, 0.001)
    assert compact_in_time(10**9, 0.001, jobs=SIZED_MIN_JOBS - 1)
    few = generate("small", seed=7, jobs=SIZED_MIN_JOBS - 1, horizon=20)
    assert sized_route(few, Clock(0.5)) == ("compact", None)


def test_a_loose_floor_re_prepares_the_sized_model():
    from oasis_opt.offline.compact import route_prep
    instance = generate("loose", seed=1)
    early = route_prep(instance, None, None)
    floor = floor_utility(instance)
    assert floor_share(instance, floor) >= LOOSE_FLOOR_SHARE

    class Floor:  # route_prep reads the floor's utility only
        total_utility = floor
    prep = route_prep(instance, None, Floor(), prepared=early)  # type: ignore[arg-type]
    assert prep is not early and prep.options == PLAIN


def test_auto_answers_a_model_too_large_for_its_limit_by_column_generation():
    """...and the answer is a validated schedule under its bound."""
    instance = generate("small", seed=7, jobs=30, horizon=20)
    schedule, report = solve(instance, time_limit=2.0)
    assert report.method == "colgen" and report.route == "colgen"
    assert validate(instance, schedule).feasible
    assert report.bound >= report.objective - REL_TOL * max(1.0, report.objective)
    # an explicit method, modeler or options keeps the compact model
    _, compact = solve(instance, time_limit=2.0, method="compact")
    assert compact.method == "compact"


def test_between_the_compact_rows_and_the_race_rows_the_two_routes_race(monkeypatch):
    """``plan.routes_race``: with a time limit and ``SIZED_MIN_JOBS`` jobs or more, a model
    past the compact route's rows (``compact_in_time``) and within ``RACE_ROWS_PER_SECOND``
    per second (and ``RACE_MAX_ROWS``) races; never without a limit or with fewer jobs.
    ``sized_route`` takes the race only where ``cores_free`` (``OASIS_PORTFOLIO``)."""
    from oasis_opt.offline.clock import Clock
    from oasis_opt.offline.compact import route_prep, sized_route
    from oasis_opt.offline.plan import (
        RACE_MAX_ROWS,
        RACE_ROWS_PER_SECOND,
        ROWS_PER_SECOND,
        SIZED_MIN_JOBS,
        routes_race,
    )
    assert not routes_race(ROWS_PER_SECOND * 10, 10.0, SIZED_MIN_JOBS)  # compact alone
    assert routes_race(ROWS_PER_SECOND * 10 + 1, 10.0, SIZED_MIN_JOBS)
    assert routes_race(RACE_ROWS_PER_SECOND * 10, 10.0, SIZED_MIN_JOBS)
    assert not routes_race(RACE_ROWS_PER_SECOND * 10 + 1, 10.0, SIZED_MIN_JOBS)
    assert not routes_race(RACE_MAX_ROWS + 1, 10_000.0, SIZED_MIN_JOBS)
    assert not routes_race(10**9, None, SIZED_MIN_JOBS)
    assert not routes_race(RACE_ROWS_PER_SECOND * 10, 10.0, SIZED_MIN_JOBS - 1)
    instance = generate("small", seed=3, jobs=30, horizon=12)
    rows = route_prep(instance, None, None).model_size()["rows"]
    assert ROWS_PER_SECOND * 6.0 < rows <= RACE_ROWS_PER_SECOND * 6.0
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    method, prep = sized_route(instance, Clock(6.0))
    assert method == "race" and prep.model_size()["rows"] == rows
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")  # no second core: column generation
    assert sized_route(instance, Clock(6.0)) == ("colgen", None)


def test_the_race_keeps_the_better_answer_and_the_proof_stops_the_other(monkeypatch):
    """30 `small` jobs × 12 slots race at 6 s (above); here the rows-per-second rule is
    scaled so that they race at 20 s, which leaves the compact MILP time to prove the optimum
    on a loaded machine too (at 6 s it failed once under three processes on two cores). It
    proves it (the same as without a time limit, where only the compact route runs), and
    column generation, which alone leaves a gap at 30 s, is stopped within two seconds of the
    proof instead of running to its deadline. The answer passes the validator and names the
    race in its route."""
    from oasis_opt.offline import plan, route_race
    from oasis_opt.offline.plan import RACE_ROWS_PER_SECOND, ROWS_PER_SECOND
    monkeypatch.setattr(plan, "ROWS_PER_SECOND", ROWS_PER_SECOND * 6.0 / 20.0)
    monkeypatch.setattr(plan, "RACE_ROWS_PER_SECOND", RACE_ROWS_PER_SECOND * 6.0 / 20.0)
    instance = generate("small", seed=3, jobs=30, horizon=12)
    exact, _ = solve(instance)
    ended: dict[str, float] = {}

    def spy(name, f):
        def run(*args, **kwargs):
            out = f(*args, **kwargs)
            ended[name] = out[1].seconds
            return out
        return run
    monkeypatch.setattr(route_race, "solve_compact", spy("compact", route_race.solve_compact))
    monkeypatch.setattr(route_race, "solve_colgen", spy("colgen", route_race.solve_colgen))
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    schedule, report = solve(instance, time_limit=20.0)
    assert report.route.startswith("compact/highspy/") and report.route.endswith("+colgen")
    assert report.status is SolveStatus.OPTIMAL and report.method == "compact"
    assert abs(report.objective - exact.total_utility) <= 1e-6 * exact.total_utility
    assert report.bound >= report.objective and report.gap is not None and report.gap <= 1e-6
    assert schedule.algorithm == "optimal" and schedule.extras["route"] == report.route
    assert validate(instance, schedule).feasible
    assert set(ended) == {"compact", "colgen"}
    assert ended["colgen"] - ended["compact"] < 2.0, ended  # stopped, not run to its end
    history = [h[2] for h in report.history]
    assert history == sorted(history, reverse=True)


def test_a_lagging_load_average_is_checked_against_the_cores_busy_now(monkeypatch):
    """``cores_free``: the one-minute load average still counts a solve that raced on both
    cores and has ended; where it says busy, what the other processes take now decides
    (``busy_cores`` from /proc/stat over ``IDLE_WINDOW``)."""
    from oasis_opt.offline import plan
    monkeypatch.delenv("OASIS_PORTFOLIO", raising=False)
    monkeypatch.setattr(plan.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(plan.os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    assert plan.cores_free(10.0)
    monkeypatch.setattr(plan.os, "getloadavg", lambda: (2.6, 2.0, 1.0))
    monkeypatch.setattr(plan, "busy_cores", lambda window: 0.1)
    assert plan.cores_free(10.0)  # the average lags: the cores are idle now
    monkeypatch.setattr(plan, "busy_cores", lambda window: 1.0)
    assert not plan.cores_free(10.0)  # another process holds a core
    assert plan.cores_free(plan.PORTFOLIO_LONG_BUDGET)  # a long limit races regardless
    monkeypatch.setattr(plan, "busy_cores", lambda window: None)
    assert not plan.cores_free(10.0)  # cannot tell: assume busy
    monkeypatch.setenv("OASIS_PORTFOLIO", "0")
    assert not plan.cores_free(plan.PORTFOLIO_LONG_BUDGET)


def test_busy_cores_reads_the_machine():
    from oasis_opt.offline.plan import busy_cores
    busy = busy_cores(0.05)
    if busy is None:
        pytest.skip("no /proc/stat here")
    import os
    assert 0.0 <= busy <= (os.cpu_count() or 1) + 1e-9


def test_auto_sizes_the_compact_model_against_max_memory_too(monkeypatch):
    """Where the compact model's solve (its build and HiGHS's run, ``plan.solve_bytes``)
    would pass ``--max-memory``, ``auto`` with a time limit answers by column generation
    instead of refusing; the race needs the solve within half of it (both routes live at
    once)."""
    from oasis_opt import limits
    from oasis_opt.offline.clock import Clock
    from oasis_opt.offline.compact import route_prep, sized_route
    from oasis_opt.offline.plan import solve_bytes
    instance = generate("small", seed=3, jobs=30, horizon=12)
    build = solve_bytes(route_prep(instance, None, None).model_size()["nonzeros"], "highspy")
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    monkeypatch.setenv(limits.ENV, str(int(4 * build)))
    assert sized_route(instance, Clock(6.0))[0] == "race"
    assert sized_route(instance, Clock(30.0))[0] == "compact"
    monkeypatch.setenv(limits.ENV, str(int(1.5 * build)))
    assert sized_route(instance, Clock(6.0)) == ("colgen", None)  # no room for both
    assert sized_route(instance, Clock(30.0))[0] == "compact"
    monkeypatch.setenv(limits.ENV, str(int(0.5 * build)))
    assert sized_route(instance, Clock(30.0)) == ("colgen", None)
    schedule, report = solve(instance, time_limit=6.0)
    assert report.route == "colgen" and validate(instance, schedule).feasible


def test_column_generation_pools_many_jobs_on_unlike_servers_or_one_resource():
    """``plan.pooled_colgen`` (round 27): the pooled master below trace scale from
    ``POOLED_MIN_JOBS`` jobs where the worker pool has three shapes or more (`mixed`) or the
    model one resource (`uniform-1r`), not on alike servers of four resources (`hard`) nor
    on fewer jobs."""
    def shapes(inst):
        return instance_features(inst)["worker_shapes"]
    mixed = generate("mixed", seed=1, jobs=POOLED_MIN_JOBS, horizon=20)
    assert shapes(mixed) >= 3 and pooled_colgen(mixed)
    assert not pooled_colgen(generate("mixed", seed=1, jobs=POOLED_MIN_JOBS - 1, horizon=20))
    hard = generate("hard", seed=1, jobs=200, horizon=20)
    assert shapes(hard) == 1 and len(hard.resources) == 4 and not pooled_colgen(hard)
    one = generate("uniform-1r", seed=1, jobs=POOLED_MIN_JOBS, horizon=20)
    assert len(one.resources) == 1 and pooled_colgen(one)
    # round 28: with less than POOLED_BELOW_SECONDS left every instance from 70 jobs pools
    assert not pooled_colgen(hard, POOLED_BELOW_SECONDS) and pooled_colgen(hard, 30.0)
    assert not pooled_colgen(generate("mixed", seed=1, jobs=POOLED_MIN_JOBS - 1, horizon=20),
                             10.0)


def test_the_pooled_route_answers_within_its_limit_with_a_valid_bound():
    """On a pooled instance the colgen route runs the pooled master (``bound_only`` in the
    report's extras) in its guarded child; its schedule is valid, never below the floor's
    best, and its bound is at least that schedule."""
    instance = generate("mixed", seed=2, jobs=POOLED_MIN_JOBS, horizon=20)
    best = max(algorithms.run(a, instance).total_utility for a in ("fifo", "tetris", "rrh"))
    schedule, report = solve(instance, method="colgen", time_limit=8.0)
    assert schedule.extras["bound_only"] is True
    assert validate(instance, schedule).feasible
    assert schedule.total_utility >= best * (1 - REL_TOL)
    assert report.bound >= schedule.total_utility * (1 - REL_TOL)


def test_the_per_server_route_follows_the_pooled_one_in_the_time_it_leaves(monkeypatch):
    """Where the pooled route ends with seconds of its limit left and its gap open, the
    per-server route runs in them, started from the pooled schedule; the answer keeps the
    better schedule and the lesser bound."""
    from oasis_opt.offline import colgen_route, race
    calls = []
    real = race.colgen_guarded

    def spy(instance, kwargs, *args, **kw):
        out = real(instance, kwargs, *args, **kw)
        calls.append((kwargs["bound_only"], len(kwargs.get("seeds", ())), out))
        return out
    monkeypatch.setattr(race, "colgen_guarded", spy)
    monkeypatch.setattr(colgen_route, "FOLLOW_ON_SECONDS", 0.5)
    instance = generate("mixed", seed=2, jobs=POOLED_MIN_JOBS, horizon=20)
    schedule, report = solve(instance, method="colgen", time_limit=10.0)
    assert len(calls) == 2, calls  # the pooled route leaves its gap open here
    (first, seeds, pooled), (second, more, per_server) = calls
    assert first is True and second is False and more == seeds + 1
    assert report.bound <= min(pooled.bound, per_server.bound) + 1e-9 * report.bound
    assert schedule.total_utility >= pooled.schedule.total_utility * (1 - REL_TOL)
    assert validate(instance, schedule).feasible


def test_the_follow_on_is_held_to_the_callers_target_not_the_routes(monkeypatch):
    """The pooled route stops once its gap is within the route's 1e-4; the per-server route
    after it is held to the caller's target (``mip_gap`` 0: ``REL_TOL``). Held to 1e-4 it
    found the pooled schedule already within it and stopped at once: 1 000 Philly jobs (the
    trace experiment's slice from job 1 000) ended 20 793.68 ≤ 20 795.30, ``time_limit``,
    after 26 s of 300, where the per-server route proves 20 793.99 optimal. Here both routes
    are stand-ins (their bounds are not real ones): the pooled one closes to 5e-5."""
    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline import colgen_route, race
    instance = generate("mixed", seed=2, jobs=POOLED_MIN_JOBS, horizon=20)
    start = algorithms.run("tetris", instance)
    value = start.total_utility
    extras = dict.fromkeys(colgen_route.COLGEN_EXTRAS, 0)
    targets = []

    def stand_in(inst, kwargs, *args, **kw):
        targets.append((kwargs["bound_only"], kwargs["mip_gap"]))
        bound = value * (1 + 5e-5) if kwargs["bound_only"] else value
        return SolveResult(SolveStatus.OPTIMAL, value, bound, schedule=start, solver="colgen",
                           extras=extras)
    monkeypatch.setattr(race, "colgen_guarded", stand_in)
    schedule, report = solve(instance, method="colgen", time_limit=30.0)
    assert targets == [(True, 1e-4), (False, REL_TOL)]
    assert validate(instance, schedule).feasible


def recording(monkeypatch, started: list) -> type:
    """``race.Prober`` replaced by a subclass that appends each prober it starts to
    ``started``; the subclass, for stand-ins to build on."""
    from oasis_opt.offline import race

    class Recorded(race.Prober):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)
    monkeypatch.setattr(race, "Prober", Recorded)
    return Recorded


def waited(halt, seconds: float) -> bool:
    """Sleep until ``halt()`` (a racer's stop: another has proven) is true or ``seconds``
    have passed; whether it was true. The stand-ins below wait so in place of a solve."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if halt():
            return True
        time.sleep(0.01)
    return bool(halt())


def test_the_default_route_tries_the_plain_model_first(monkeypatch):
    """On easy instances the planned model's patterns and cut rows cost more than the whole
    plain solve (a generator the route was never fitted on: fresh-101 took 2.3 s with
    patterns, 0.14 s with PLAIN, the comparator 0.16 s), so the default route gives PLAIN
    ``PROBE_SECONDS`` first (``compact.plain_probe``): its proof is the answer, with the
    optimum the planned route proves. Here the probe gets all the time it needs (a loaded
    machine must not decide the route); off, the planned model answers; with ``options``
    given, no probe. (The probe in this process: where no prober runs in a child, the
    next test's ``compact.early_prober``.)"""
    from oasis_opt.io import load_instance
    from oasis_opt.offline import compact
    inst = load_instance(INSTANCES / "small-s3.json")
    opt = next(e["optimum"] for e in MANIFEST if e["name"] == "small-s3")
    monkeypatch.setattr(compact, "EARLY_PROBE", False)
    monkeypatch.setattr(compact, "PROBE_SECONDS", 60.0)
    schedule, report = solve(inst)
    assert report.status is SolveStatus.OPTIMAL and report.route == "compact/highspy/plain"
    assert report.objective == pytest.approx(opt, rel=1e-6)
    assert validate(inst, schedule).feasible
    monkeypatch.setattr(compact, "PLAIN_PROBE", False)
    _, planned = solve(inst)
    assert "plain" not in planned.route and planned.objective == pytest.approx(opt, rel=1e-6)
    monkeypatch.setattr(compact, "PLAIN_PROBE", True)
    _, given = solve(inst, options=Options())
    assert "plain" not in given.route


def test_a_race_at_home_probes_the_plain_model_in_its_waiting_partner(monkeypatch):
    """Where the planned model races with its first racer at home (``plan.race_at_home``),
    the plain probe runs beside it, not before the race: in the partner's process while it
    waits (``race.solve_portfolio``'s ``probe``; patterns, hard-s5), or as the partner,
    started at once, where that is PLAIN at seed 0 (the server model, ps-light-s9). Given
    all the time it needs, the probe's proof is the answer (PLAIN's rows; with patterns the
    race's one racer: the partner never started); a probe that proves nothing leaves the
    race to the planned model and its partner. The optimum of the Pyomo modeller's default
    model and a valid schedule every time; a probe is refused outside a race at home."""
    from oasis_opt.formulations.common import prepare
    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline import backends, compact, race
    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.plan import portfolio_wanted, race_at_home
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    monkeypatch.setattr(compact, "EARLY_PROBE", False)  # (its test is the next one)
    in_process = []
    monkeypatch.setattr(compact, "plain_probe", lambda *a: in_process.append(a))
    monkeypatch.setattr(compact, "PROBE_SECONDS", 20.0)  # (the limit keeps twice its window)
    solve_highspy, solve_portfolio = backends.solve_highspy, race.solve_portfolio
    calls = []

    def recorded(*args, **kwargs):
        calls.append((args[6], kwargs.get("probe")))  # (delays, probe)
        return solve_portfolio(*args, **kwargs)
    monkeypatch.setattr(race, "solve_portfolio", recorded)

    def home_racer_waits(prep, *args, halt=None, **kwargs):
        # the planned model at home starts only once another racer has proven (its HiGHS
        # then stops at once): the probe must win
        if prep.options != PLAIN and halt is not None:
            waited(halt, 30.0)
        return solve_highspy(prep, *args, halt=halt, **kwargs)

    def probe_ends_unproven(prep, *args, **kwargs):
        if prep.options == PLAIN:  # the probe's run, in the partner's process
            return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        return solve_highspy(prep, *args, **kwargs)
    for preset, seed, packing in (("hard", 5, "pattern"), ("ps-light", 9, "server")):
        inst = generate(preset, seed=seed)  # PLAIN proves each in 0.6 s and 1.5 s
        _, ref = solve(inst, modeler="pyomo", options=Options())
        assert ref.status is SolveStatus.OPTIMAL
        prep = compact.route_prep(inst, None, None)
        assert prep.packing == packing and prep.options != PLAIN and race_at_home(prep)
        assert portfolio_wanted(prep, "auto", None, "highspy", 60.0)
        monkeypatch.setattr(backends, "solve_highspy", home_racer_waits)
        calls.clear()
        schedule, report = solve(inst, time_limit=60)
        assert report.status is SolveStatus.OPTIMAL and report.route.startswith(
            "compact/highspy/plain"), report.route
        assert report.objective == pytest.approx(ref.objective, rel=1e-6)
        assert validate(inst, schedule).feasible and not in_process
        (delays, probe), = calls
        if packing == "server":  # the partner is PLAIN: at once, no probe
            assert delays == [0.0, 0.0] and probe is None
            continue
        assert delays == [0.0, compact.RACE_DELAY] and probe is not None
        assert report.route == "compact/highspy/plain"
        monkeypatch.setattr(backends, "solve_highspy", probe_ends_unproven)
        schedule, report = solve(inst, time_limit=60)
        assert report.status is SolveStatus.OPTIMAL and "plain" not in report.route
        assert report.objective == pytest.approx(ref.objective, rel=1e-6)
        assert validate(inst, schedule).feasible and not in_process
    monkeypatch.setattr(backends, "solve_highspy", solve_highspy)
    clock = Clock(60.0)
    with pytest.raises(ValueError, match="partner is held"):
        solve_portfolio([prep, prep], [0, 1], clock, Tracker(clock, None), 0.0, None,
                        probe=(prepare(inst, PLAIN), 1.0))
    with pytest.raises(ValueError, match="one probe"):  # (refused before the prober is used)
        solve_portfolio([prep, prep], [0, 1], clock, Tracker(clock, None), 0.0, None,
                        home=True, probe=(prepare(inst, PLAIN), 1.0), prober=object())


def test_the_early_prober_answers_where_the_plain_model_proves_first(monkeypatch):
    """The default route's plain model runs in a child from the solve's start
    (``compact.early_prober``) while the floor runs and the route is planned and solved.
    Its proof, once known, is the answer: before the route is planned (the route's planning
    never runs), or while the planned model runs in this process (its HiGHS stopped by the
    prober, ``halt``). Where the route races at home with its partner held, the prober
    goes on beside the racer at home as its probe (``race.solve_portfolio``'s ``prober``):
    its proof stops the racer at home, and the partner, held until the prober's window is
    over, never starts. Where the prober may not go on (``PROBER_IN_RACE`` off) and has not
    proven by then, it ends and the race goes as without it (its partner probes the plain
    model). A prober that proves nothing leaves the answer to the route. The optimum of the
    Pyomo modeller's default model and a valid schedule every time; no prober on a busy
    machine or on large instances."""
    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline import backends, compact, plan, race
    from oasis_opt.offline.clock import Clock

    monkeypatch.setattr(plan, "core_idle", lambda: True)
    # (the limit keeps twice its window)
    monkeypatch.setattr(compact, "EARLY_PROBE_SECONDS", 20.0)
    started: list[race.Prober] = []

    Recorded = recording(monkeypatch, started)

    class Patient(Recorded):
        """A prober whose first look waits for the child's verdict."""

        def proof(self):
            self.conn.poll(30.0)
            return super().proof()
    inst = generate("hard", seed=5)  # patterns; PLAIN proves it in about 0.6 s
    _, ref = solve(inst, modeler="pyomo", options=Options())
    assert ref.status is SolveStatus.OPTIMAL

    def answered(probed: bool) -> str:
        started.clear()
        schedule, report = solve(inst, time_limit=60)
        assert report.status is SolveStatus.OPTIMAL
        assert report.route.startswith("compact/highspy/plain") is probed, report.route
        assert report.objective == pytest.approx(ref.objective, rel=1e-6)
        assert validate(inst, schedule).feasible and len(started) == 1
        assert not started[0].proc.is_alive()  # stopped at the end
        return report.route
    monkeypatch.setattr(race, "Prober", Patient)

    def never_planned(*args, **kwargs):
        raise AssertionError("the route was planned after the prober's proof")
    with monkeypatch.context() as m:
        m.setattr(compact, "route_prep", never_planned)
        answered(True)
    monkeypatch.setattr(race, "Prober", Recorded)
    solve_highspy = backends.solve_highspy

    def planned_waits(prep, *args, halt=None, **kwargs):
        # the planned model (patterns) waits for its halt, the prober's proof, and then
        # stops without an incumbent (HiGHS may prove a small model before it asks): the
        # prober's proof must be the answer
        if prep.options != PLAIN and halt is not None:
            waited(halt, 30.0)
            return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        return solve_highspy(prep, *args, halt=halt, **kwargs)
    monkeypatch.setattr(backends, "solve_highspy", planned_waits)
    with monkeypatch.context() as m:  # no race: the planned model in this process
        m.setattr(compact, "portfolio_wanted", lambda *args: False)
        m.setitem(backends.ROUTES, "highspy", planned_waits)  # (the in-process call)
        answered(True)
    assert started[0].proof() is not None
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")  # a race at home, its partner held
    calls = []

    def recorded(*args, **kwargs):
        calls.append((kwargs.get("probe"), kwargs.get("prober")))
        return solve_portfolio(*args, **kwargs)
    solve_portfolio = race.solve_portfolio
    monkeypatch.setattr(race, "solve_portfolio", recorded)
    # the racer at home (``planned_waits``) stopped by the prober's proof; the partner, held
    # through the prober's window, never started (no "+race")
    assert answered(True) == "compact/highspy/plain"
    assert len(calls) == 1 and calls[0][0] is None and calls[0][1] is started[0]
    assert started[0].proof() is not None
    calls.clear()
    # not beside the race: the prober ends as it starts, unproven (PLAIN takes 0.6 s here)
    monkeypatch.setattr(compact, "PROBER_IN_RACE", False)
    monkeypatch.setattr(compact, "EARLY_PROBE_SECONDS", 0.3)
    monkeypatch.setattr(compact, "PROBE_SECONDS", 0.3)
    monkeypatch.setattr(backends, "solve_highspy", solve_highspy)
    started.clear()
    schedule, report = solve(inst, time_limit=60)  # (the planned model or the probe wins)
    assert report.status is SolveStatus.OPTIMAL and validate(inst, schedule).feasible
    assert report.objective == pytest.approx(ref.objective, rel=1e-6)
    assert len(started) == 1 and started[0].proof() is None and not started[0].proc.is_alive()
    # the partner's probe, as in round 41
    assert len(calls) == 1 and calls[0][0] is not None and calls[0][1] is None
    monkeypatch.setattr(race, "solve_portfolio", solve_portfolio)
    monkeypatch.setattr(compact, "EARLY_PROBE_SECONDS", 20.0)
    monkeypatch.setattr(race, "Prober", Patient)
    monkeypatch.setattr(plan, "GUARD_MIN_NONZEROS", 0)  # the child refuses to probe
    answered(False)
    monkeypatch.setattr(plan, "GUARD_MIN_NONZEROS", 20_000)
    monkeypatch.setattr(plan, "core_idle", lambda: False)
    assert compact.early_prober(inst, Clock(60.0), 0.0) is None
    monkeypatch.setattr(plan, "core_idle", lambda: True)
    assert compact.early_prober(inst, Clock(1.0), 0.0) is None  # not twice its window
    assert compact.early_prober(generate("paper", seed=0), Clock(60.0), 0.0) is None


def test_the_early_prober_stops_the_patterns_and_goes_on_beside_the_plain_probe(monkeypatch):
    """Two places where the prober's proof was read late or its work thrown away (issue 22,
    round 44). A proof that comes in while the planned model's patterns are counted stops
    the count (``common.prepare``'s ``stop``; 0.03–0.11 s on 15-job instances): the route is
    never planned. Where the race runs in children after an in-process plain probe
    (``plan.race_at_home`` false), the prober goes on beside that probe, whose HiGHS its
    proof stops, and ends before the race: it used to end there and the probe to solve the
    plain model again from scratch. The optimum of the Pyomo modeller's default model and a
    valid schedule every time; off (``PROBER_BESIDE_PROBE``), the prober ends first."""
    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline import backends, compact, plan, race

    monkeypatch.setattr(plan, "core_idle", lambda: True)
    monkeypatch.setattr(compact, "EARLY_PROBE_SECONDS", 20.0)
    inst = generate("hard", seed=5)  # patterns; PLAIN proves it in about 0.6 s
    _, ref = solve(inst, modeler="pyomo", options=Options())
    assert ref.status is SolveStatus.OPTIMAL
    started: list[race.Prober] = []
    planning = [False]

    class Late(race.Prober):
        """A prober whose proof is read only once the patterns are being counted, and
        then waits for the child's verdict."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

        def proof(self):
            if not planning[0]:
                return self.result
            if not self.ended:
                self.conn.poll(30.0)
            return super().proof()
    route_prep = compact.route_prep

    def counted(instance, options, floor, prepared=None, stop=None):
        planning[0] = True
        assert stop is not None
        return route_prep(instance, options, floor, prepared, stop=stop)

    def never(*args, **kwargs):
        raise AssertionError("the route was planned after the prober's proof")
    with monkeypatch.context() as m:
        m.setattr(race, "Prober", Late)
        m.setattr(compact, "route_prep", counted)
        m.setattr(compact, "plan_route", never)
        schedule, report = solve(inst, time_limit=60)
    assert report.status is SolveStatus.OPTIMAL and report.route == "compact/highspy/plain"
    assert report.objective == pytest.approx(ref.objective, rel=1e-6)
    assert validate(inst, schedule).feasible and started[0].proof() is not None

    recording(monkeypatch, started)
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    monkeypatch.setattr(compact, "race_at_home", lambda prep: False)  # the race in children
    monkeypatch.setattr(compact, "PROBE_SECONDS", 20.0)
    solve_highspy, solve_portfolio = backends.solve_highspy, race.solve_portfolio
    raced = []

    def recorded(*args, **kwargs):
        raced.append(started[-1].proc.is_alive())
        return solve_portfolio(*args, **kwargs)
    monkeypatch.setattr(race, "solve_portfolio", recorded)

    def probe_waits(prep, *args, halt=None, **kwargs):
        # the in-process plain probe (given the floor's start; the prober's has none) waits
        # for its halt (the prober's proof) and stops without an incumbent: the prober's
        # proof must be the answer
        if prep.options == PLAIN and kwargs.get("start") is not None:
            waited(halt, 30.0)
            return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        return solve_highspy(prep, *args, halt=halt, **kwargs)
    monkeypatch.setattr(backends, "solve_highspy", probe_waits)
    started.clear()
    schedule, report = solve(inst, time_limit=60)
    assert report.status is SolveStatus.OPTIMAL and report.route == "compact/highspy/plain"
    assert report.objective == pytest.approx(ref.objective, rel=1e-6)
    assert validate(inst, schedule).feasible and not raced
    assert len(started) == 1 and started[0].proof() is not None

    halts = []

    def plain_unproven(prep, *args, halt=None, **kwargs):
        # neither the prober's PLAIN nor the probe proves: the race answers, the prober
        # ended before it
        if prep.options == PLAIN:
            halts.append(halt)  # (the probe's, in this process; the child's stays there)
            return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        return solve_highspy(prep, *args, halt=halt, **kwargs)
    monkeypatch.setattr(backends, "solve_highspy", plain_unproven)
    monkeypatch.setattr(compact, "PROBE_SECONDS", 0.3)
    for beside in (True, False):
        monkeypatch.setattr(compact, "PROBER_BESIDE_PROBE", beside)
        started.clear()
        raced.clear()
        halts.clear()
        schedule, report = solve(inst, time_limit=60)
        assert report.status is SolveStatus.OPTIMAL and "plain" not in report.route
        assert report.objective == pytest.approx(ref.objective, rel=1e-6)
        assert validate(inst, schedule).feasible
        assert raced == [False] and started[0].proof() is None
        # beside the probe, the prober's proof would have stopped it
        assert len(halts) == 1 and (halts[0] is not None) is beside


def test_the_early_prober_keeps_on_where_the_planned_model_solves_alone(monkeypatch):
    """Where the planned model solves without a race (in this process here), no racer will
    want the other core, so the prober goes on past its window (``compact.keep_prober``,
    issue 22 round 44), where it used to stop at ``EARLY_PROBE_SECONDS``; its proof, past
    that window, stops the planned model and is the answer. Off (``PROBER_KEPT``), it
    stops there unproven and the planned model answers. Here the prober's plain model
    proves only past its window (a stand-in waits for it, or for its halt), and the planned
    model waits for its halt a few seconds: the optimum of the Pyomo modeller's default
    model and a valid schedule either way."""
    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline import backends, compact, plan, race

    monkeypatch.setattr(plan, "core_idle", lambda: True)
    window = 1.5  # (planning takes a fraction of it: "keep" comes before it is over)
    monkeypatch.setattr(compact, "EARLY_PROBE_SECONDS", window)
    inst = generate("hard", seed=5)  # patterns; PLAIN proves it in about 0.6 s
    _, ref = solve(inst, modeler="pyomo", options=Options())
    assert ref.status is SolveStatus.OPTIMAL
    started: list[race.Prober] = []

    recording(monkeypatch, started)
    solve_highspy = backends.solve_highspy

    def late(prep, *args, halt=None, start=None, **kwargs):
        if prep.options == PLAIN and start is None:  # the prober's model, in the child:
            # halted once its window is over unless it was kept (past the window's end)
            if waited(halt, window + 0.3):
                return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        elif prep.options != PLAIN and halt is not None:  # the planned model, here
            if waited(halt, 4.0):
                return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        return solve_highspy(prep, *args, halt=halt, start=start, **kwargs)
    monkeypatch.setattr(backends, "solve_highspy", late)
    monkeypatch.setitem(backends.ROUTES, "highspy", late)  # (the in-process call)
    monkeypatch.setattr(compact, "portfolio_wanted", lambda *args: False)
    for kept in (True, False):
        monkeypatch.setattr(compact, "PROBER_KEPT", kept)
        started.clear()
        schedule, report = solve(inst, time_limit=60)
        assert report.status is SolveStatus.OPTIMAL
        assert report.route.startswith("compact/highspy/plain") is kept, report.route
        assert report.objective == pytest.approx(ref.objective, rel=1e-6)
        assert validate(inst, schedule).feasible
        assert len(started) == 1 and (started[0].proof() is not None) is kept
        assert not started[0].proc.is_alive()


def test_the_early_prober_is_the_partner_the_race_would_start_again(monkeypatch):
    """Where the route races at home with PLAIN at seed 0 started at once as the partner
    (``plan.racers``' server pair), the prober, which solves that model since the solve's
    start, goes on as that partner (``compact.PROBER_AS_PLAIN_PARTNER``, issue 22 round
    45): no race is forked, the planned model runs here with the prober's proof as its halt, and
    that proof is the answer. Off, the prober ends unproven at the race and a forked child
    solves PLAIN at seed 0 again, whose proof stops the racer at home. Here the prober's
    model proves only after the route is planned (a stand-in waits a second first) and the
    planned model waits for its halt: the optimum of the Pyomo modeller's default model and
    a valid schedule either way. fresh-102 (``benchmarks/fresh_families.py``): PLAIN with
    the PS counts relaxed against PLAIN."""
    import sys
    from pathlib import Path

    from oasis_opt.formulations.result import SolveResult

    from oasis_opt.offline import backends, compact, plan, race

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import fresh_families
    inst = fresh_families.family("fresh-a", 3)[2]
    assert inst.name == "fresh-102"
    monkeypatch.setattr(plan, "core_idle", lambda: True)
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")  # race regardless of the machine's load
    monkeypatch.setattr(compact, "EARLY_PROBE_SECONDS", 20.0)
    _, ref = solve(inst, modeler="pyomo", options=Options())
    assert ref.status is SolveStatus.OPTIMAL
    started: list[race.Prober] = []
    races: list[int] = []

    recording(monkeypatch, started)
    solve_portfolio = race.solve_portfolio

    def recorded(preps, *args, **kwargs):
        races.append(len(preps))
        return solve_portfolio(preps, *args, **kwargs)
    monkeypatch.setattr(race, "solve_portfolio", recorded)
    solve_highspy = backends.solve_highspy

    def late(prep, clock, tracker, mip_gap, random_seed=0, start=None, *, halt=None,
             **kwargs):
        if prep.options == PLAIN and start is None:  # the prober's model, in its child
            time.sleep(1.0)
        elif prep.options != PLAIN and halt is not None:  # the planned model, at home
            if waited(halt, 30.0):
                return SolveResult(SolveStatus.TIME_LIMIT, solver="highspy")
        return solve_highspy(prep, clock, tracker, mip_gap, random_seed, start, halt=halt,
                             **kwargs)
    monkeypatch.setattr(backends, "solve_highspy", late)
    monkeypatch.setitem(backends.ROUTES, "highspy", late)  # (the in-process call)
    for partner in (True, False):
        monkeypatch.setattr(compact, "PROBER_AS_PLAIN_PARTNER", partner)
        started.clear()
        races.clear()
        schedule, report = solve(inst, time_limit=60)
        assert report.status is SolveStatus.OPTIMAL
        assert report.route == ("compact/highspy/plain" if partner
                                else "compact/highspy/plain+race"), report.route
        assert report.objective == pytest.approx(ref.objective, rel=1e-6)
        assert validate(inst, schedule).feasible
        assert races == ([] if partner else [2])
        assert len(started) == 1 and (started[0].proof() is not None) is partner
        assert not started[0].proc.is_alive()


def test_the_compact_solves_memory_counts_the_solver_and_every_racer(monkeypatch):
    """The compact MILP's size check counts the solver's run, not only the build
    (``plan.solve_bytes``): a limit between the two is refused up front, naming the MILP and
    its size, where the build alone passed it (an outside audit: `paper` at ``--max-memory
    1G``, estimated at 953 MiB, grew past 6 GiB). A race runs only where every racer's solve
    fits (``portfolio_wanted``): each builds and solves its own model."""
    from oasis_opt.errors import InputError
    from oasis_opt.offline import compact
    from oasis_opt.offline.plan import build_bytes, portfolio_wanted, racers, solve_bytes
    inst = generate("hard", seed=1)
    prep = compact.route_prep(inst, None, None)
    nonzeros = prep.model_size()["nonzeros"]
    build, whole = build_bytes(nonzeros, "highspy"), solve_bytes(nonzeros, "highspy")
    assert whole > 2 * build
    monkeypatch.setenv("OASIS_MAX_MEMORY", str((build + whole) // 2))
    with pytest.raises(InputError, match=r"the compact MILP \(.* is too large"):
        solve(inst, method="compact", floor=())
    monkeypatch.setenv("OASIS_PORTFOLIO", "1")
    n = len(racers(prep))
    assert n >= 2
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(int((n - 0.5) * whole)))
    assert not portfolio_wanted(prep, "auto", None, "highspy", 60.0)
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(n * whole))
    assert portfolio_wanted(prep, "auto", None, "highspy", 60.0)
