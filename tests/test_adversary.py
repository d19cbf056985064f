"""The adversary (issue 13): its reported ratio is OPT/ALG of the file it writes, its OPT is the
brute-force optimum, its result is determined by seed and evaluations, and it beats random
sampling at equal budget."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

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
    with pytest.raises(SystemExit) as stop:  # a usage error: argparse's exit 2
        main(["adversary", "--algorithm", "oasis", "--evaluations", "0",
              "-o", str(tmp_path / "w.json")])
    assert stop.value.code == 2
    assert "--evaluations" in capfd.readouterr().err
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize("argv,message", [
    (["--family", "threshold", "-a", "fifo"],
     "--algorithm: applies to a search, not to --family"),
    (["--family", "threshold", "--evaluations", "7"],
     "--evaluations: applies to a search, not to --family"),
    (["--family", "threshold", "--certified"], "--certified: applies to a search, not to"),
    (["--family", "threshold", "--jobs", "5"], "--jobs: applies to a search, not to --family"),
    (["-a", "fifo", "--evaluations", "1", "--share", "0.1"],
     "--share: applies to --family, not to a search"),
    (["-a", "fifo", "--evaluations", "1", "--steps", "3"],
     "--steps: applies to --family, not to a search"),
])
def test_options_of_the_other_mode_are_refused(tmp_path, capfd, argv, message):
    """``--family threshold -a fifo`` wrote OASiS's tightness table (the algorithm left out
    silently), ``-a fifo --share 0.1`` searched without the share: one mode's options were
    ignored by the other, exit 0."""
    out = tmp_path / "w"
    assert main(["adversary", *argv, "-o", str(out)]) == 2
    err = capfd.readouterr().err
    assert err.strip() == f"oasis-opt adversary: error: {message}" or message in err, err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("flag,least", [("--jobs", 1), ("--horizon", 1),
                                        ("--worker-servers", 1), ("--ps-servers", 1),
                                        ("--steps", 2)])
def test_a_count_below_its_least_says_the_least(tmp_path, capfd, flag, least):
    """``--jobs -1`` said "must be at least 0" and 0 then "must be in 1…8"."""
    family = ["--family", "threshold"] if flag == "--steps" else ["-a", "fifo"]
    for value in ("-1", str(least - 1)):
        with pytest.raises(SystemExit) as stop:
            main(["adversary", *family, flag, value, "-o", str(tmp_path / "w")])
        assert stop.value.code == 2
        assert f"{flag} must be at least {least}, got '{value}'" in capfd.readouterr().err
    assert not (tmp_path / "w").exists()


# --- certified scoring and the family seed (issue 20, item 3) -----------------------------


def test_certified_score_brackets_the_proven_optimum():
    from oasis_opt.adversary_search import Candidate, evaluate
    rng = np.random.default_rng(11)
    space = SearchSpace(jobs=4, horizon=4)
    for k in range(4):
        d = random_instance(rng, space)
        proven = evaluate(Candidate(k, "search", d, "oasis"))
        cert = evaluate(Candidate(k, "search", d, "oasis", time_limit=0.05, certified=True))
        if proven.status != "ok":
            continue
        assert cert.opt <= proven.opt * (1 + 1e-9) and cert.upper >= proven.opt * (1 - 1e-6)
        assert cert.alg == pytest.approx(proven.alg)  # the algorithm's side is exact


def test_family_seed_lies_in_the_regime_and_is_valid():
    from oasis_opt.adversary_search import family_seed
    from oasis_opt.verifier import job_share
    space = SearchSpace(jobs=30, horizon=4, max_share=0.1)
    rng = np.random.default_rng(0)
    for _ in range(5):
        inst = instance_from_dict(family_seed(rng, space))
        assert inst.num_jobs == 30 and job_share(inst) <= 0.1 + 1e-12
        peaks = inst.utility_table[:, 0]
        assert (np.diff(peaks) >= 0).all()  # values rise along the sequence


def test_certified_search_at_regime_scale_reports_a_reproducible_lower_bound(tmp_path, capfd):
    out = tmp_path / "w.json"
    with pytest.raises(InputError, match="--certified"):
        SearchSpace(jobs=20).check()
    assert main(["adversary", "--algorithm", "oasis", "--jobs", "20", "--max-share", "0.25",
                 "--certified", "--seed-family", "threshold", "--evaluations", "4",
                 "--time-limit", "0.5", "-o", str(out), "--json"]) == 0
    data = json.loads(capfd.readouterr().out)
    assert data["scoring"] == "certified lower bound on OPT"
    inst = load_instance(out)
    alg = algorithms.run("oasis", inst).total_utility
    assert alg == pytest.approx(data["alg"], rel=1e-9)
    assert data["ratio"] == pytest.approx(data["opt"] / alg, rel=1e-9)
    assert data["upper_ratio"] >= data["ratio"] * (1 - 1e-9)
    _, rep = solve(inst, time_limit=5)
    assert rep.bound >= data["opt"] * (1 - 1e-6)  # the certified OPT is achievable


#: A user's scheduler (``hangs:run``) that answers as FIFO for its first ``AFTER - 1`` calls
#: and then never returns: the candidates run in this process, and nothing can stop it.
HANGS = """
import time
from oasis_opt import algorithms
calls = 0
def run(instance):
    global calls
    calls += 1
    if calls >= {after}:
        while True:
            time.sleep(1.0)
    return algorithms.run("fifo", instance)
"""


def _adversary_with(tmp_path, after: int, budget: float
                    ) -> tuple[subprocess.CompletedProcess, float]:
    (tmp_path / "hangs.py").write_text(HANGS.format(after=after))
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "oasis_opt", "adversary", "--algorithm", "hangs:run",
         "--budget", str(budget), "--seed", "0", "-o", "worst.json", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(tmp_path)})
    return run, time.perf_counter() - start


def test_a_budget_ends_a_search_whose_scheduler_never_returns(tmp_path):
    """``adversary --budget 2`` with a scheduler that sleeps forever never stopped (an outside
    audit): it hangs on the instance the search tries it on first. Now the command answers by
    the budget's promise (1.1·S + 10 s): nothing was evaluated, exit 1, one line naming the
    algorithm, the instance it ran on kept beside -o, no -o file."""
    run, seconds = _adversary_with(tmp_path, after=1, budget=2)
    assert seconds < 30, seconds
    assert run.returncode == 1 and run.stdout == "", (run.returncode, run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert lines[-1] == (
        "oasis-opt adversary: algorithm error: nothing was evaluated within --budget 2: "
        "algorithm 'hangs:run' still ran on the instance the search tries it on first (an "
        "algorithm cannot be interrupted); the instance it ran on is in 'worst-failed.json'"), \
        run.stderr
    assert not (tmp_path / "worst.json").exists()
    assert load_instance(tmp_path / "worst-failed.json").num_jobs == 4


def test_a_budget_answers_with_the_candidates_evaluated_before_the_hang(tmp_path):
    """The scheduler returns for the probe and the first round (1 + 16 calls) and for the
    first pair of the second round, then hangs: the answer is that of the 9 evaluations done,
    the same as a search of 9 evaluations (the search and random candidates run in pairs),
    written as usual, exit 0, and a note names the algorithm still running."""
    run, seconds = _adversary_with(tmp_path, after=20, budget=5)
    assert seconds < 40, seconds
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["evaluations"] == 9, data
    assert data["note"] == ("the budget ended while algorithm 'hangs:run' still ran on search "
                            "candidate 9 (an algorithm cannot be interrupted): the answer is "
                            "that of the 9 evaluations done"), data
    again = search("fifo", evaluations=9, seed=0)
    assert (data["ratio"], data["opt"], data["alg"], data["random_ratio"]) == \
        (again.ratio, again.opt, again.alg, again.random_ratio)
    assert load_instance(tmp_path / "worst.json").num_jobs == 4
    assert (tmp_path / "worst.trajectory.csv").read_text().count("\n") == 1 + 2 * 9
