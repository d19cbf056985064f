"""The adversary (issue 13): its reported ratio is OPT/ALG of the file it writes, its OPT is the
brute-force optimum, its result is determined by seed and evaluations, and it beats random
sampling at equal budget."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from bruteforce import best_utility

from oasis_opt import algorithms
from oasis_opt.adversary_search import (
    Candidate,
    SearchSpace,
    evaluate,
    mutate,
    random_instance,
    score_ratio,
    search,
)
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict, load_instance
from oasis_opt.offline import solve


def test_reported_ratio_equals_opt_over_alg_of_the_written_file(tmp_path, capfd):
    out = tmp_path / "worst.json"
    assert main(["adversary", "--algorithm", "oasis", "--evaluations", "24", "--seed", "3",
                 "-o", str(out), "--json"]) == 0
    data = json.loads(capfd.readouterr().out)
    assert data["evaluations"] == 24 and data["ratio"] > 1.0
    inst = load_instance(out)
    _, rep = solve(inst)
    alg = algorithms.run("oasis", inst).total_utility
    assert rep.status.value == "optimal"
    assert rep.objective == pytest.approx(data["opt"], rel=1e-9)
    assert alg == pytest.approx(data["alg"], rel=1e-9)
    assert rep.objective / alg == pytest.approx(data["ratio"], rel=1e-9)
    assert data["two_alpha"] == pytest.approx(
        algorithms.run("oasis", inst).extras["two_alpha"])
    rows = (tmp_path / "worst.trajectory.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 24  # header, then every search and random evaluation
    assert (tmp_path / "worst.trajectory.png").read_bytes()[:4] == b"\x89PNG"


def test_opt_of_each_candidate_is_the_brute_force_optimum():
    space = SearchSpace(jobs=2, horizon=3, worker_servers=1, ps_servers=1, max_workload=4,
                        max_workers=2)
    res = search("fifo", space=space, evaluations=12, seed=1)
    assert res.instance is not None
    assert best_utility(instance_from_dict(res.instance)) == pytest.approx(res.opt, rel=1e-9)
    rng = np.random.default_rng(7)
    for k in range(4):  # random candidates too, not only the winner
        d = random_instance(rng, space)
        out = evaluate(Candidate(k, "random", d, "rrh"))
        if out.status in ("ok", "alg_zero"):
            assert best_utility(instance_from_dict(d)) == pytest.approx(out.opt, rel=1e-9)


def test_result_depends_on_seed_and_evaluations_only():
    from oasis_opt.tasks import make_executor
    a = search("tetris", evaluations=20, seed=5)
    with make_executor(2) as ex:
        b = search("tetris", evaluations=20, seed=5, executor=ex)
    assert a.instance == b.instance and a.ratio == b.ratio
    assert a.random_ratio == b.random_ratio and a.trajectory == b.trajectory
    # a time budget stops between rounds; the evaluations it reports reproduce the result
    c = search("tetris", budget=0.5, seed=5)
    d = search("tetris", evaluations=c.evaluations, seed=5)
    assert c.instance == d.instance and c.ratio == d.ratio


@pytest.mark.slow
@pytest.mark.parametrize("algorithm,seed", [("oasis", 0), ("tetris", 1), ("rrh", 3)])
def test_search_beats_random_sampling_at_equal_budget(algorithm, seed):
    res = search(algorithm, evaluations=100, seed=seed)
    assert res.ratio is not None and res.random_ratio is not None
    assert res.ratio > res.random_ratio
    assert res.counts["random"] and sum(res.counts["random"].values()) == 100


@pytest.mark.parametrize("share", [None, 0.25, 0.1])
def test_moves_keep_instances_valid_and_within_the_share(share):
    space = SearchSpace(jobs=6, max_share=share)
    rng = np.random.default_rng(0)
    d = random_instance(rng, space)
    for _ in range(200):
        d = mutate(rng, d, space)
        inst = instance_from_dict(d)  # refuses anything malformed
        peaks = inst.utility_table[:, 0]
        assert ((peaks == 0) | ((peaks >= 1) & (peaks <= space.max_value))).all()
        assert (np.diff(inst.utility_table, axis=1) <= 0).all()
        if share is not None:  # a job's workers (PSs) together hold at most the share
            n = inst.max_workers[:, None]
            z = np.ceil(inst.max_workers / inst.ps_ratio - 1e-9)[:, None]
            assert (n * inst.worker_demand <= share * inst.worker_capacity.min(axis=0)
                    + 1e-9).all()
            assert (z * inst.ps_demand <= share * inst.ps_capacity.min(axis=0) + 1e-9).all()


def test_ratio_without_a_finite_value():
    assert score_ratio(0.0, 0.0) == ("opt_zero", None)
    assert score_ratio(5.0, 0.0) == ("alg_zero", math.inf)
    assert score_ratio(6.0, 2.0) == ("ok", 3.0)


def test_bad_arguments_are_refused(tmp_path, capfd):
    with pytest.raises(InputError, match="unknown algorithm"):
        search("nope", evaluations=1)
    with pytest.raises(InputError, match="^jobs: "):
        search("oasis", space=SearchSpace(jobs=50), evaluations=1)
    assert main(["adversary", "--algorithm", "oasis", "--evaluations", "0",
                 "-o", str(tmp_path / "w.json")]) == 2
    assert "--evaluations" in capfd.readouterr().err
    assert not (tmp_path / "w.json").exists()
