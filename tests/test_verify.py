"""``oasis-opt verify`` (issue 20): its maximum is the one a direct loop over the same instances
(brute-force OPT, the algorithm run directly) finds, its argmax file reproduces the ratio, its
counts add up to the space's size, its exact DP agrees with brute force and the MILP, bad spaces
are refused naming the field with nothing run, and a rerun resumes."""

from __future__ import annotations

import copy
import itertools
import json
import math

import numpy as np
import pytest
from bruteforce import best_utility

from oasis_opt import algorithms
from oasis_opt import verifier as verify
from oasis_opt.adversary_search import SearchSpace, random_instance
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict, load_instance

#: Small enough to list by hand: 2·2·1·1·1·1·2 = 8 options per job, 64 instances.
SPACE = {
    "format": "oasis-space/1", "name": "hand", "horizon": 3, "resources": ["gpu", "cpu"],
    "worker_servers": [[2, 4]], "ps_servers": [[1, 2]], "jobs": 2,
    "arrival": [0, 1], "workload": [1, 3], "max_workers": [2], "ps_ratio": [2],
    "worker_demand": [[1, 1]], "ps_demand": [[0, 1]],
    "utility": [{"kind": "table", "values": [4, 1]}, {"kind": "table", "values": [1, 1, 1]}],
}


def hand_instances(space: dict) -> list[dict]:
    """Every instance of ``space`` built directly from its lists (no code of the module):
    jobs vary in file order, the first field of a job the slowest."""
    fields = ["arrival", "workload", "max_workers", "ps_ratio", "worker_demand", "ps_demand",
              "utility"]
    options = list(itertools.product(*(space[f] for f in fields)))
    out = []
    for combo in itertools.product(options, repeat=space["jobs"]):
        jobs = []
        for i, vals in enumerate(combo):
            job = {"id": f"j{i}", **dict(zip(fields, copy.deepcopy(vals), strict=True))}
            job["requested_workers"] = job["max_workers"]
            jobs.append(job)
        out.append({
            "format": "oasis-instance/1", "name": "x", "horizon": space["horizon"],
            "resources": space["resources"],
            "worker_servers": [{"name": f"w{h}", "capacity": c}
                               for h, c in enumerate(space["worker_servers"])],
            "ps_servers": [{"name": f"p{k}", "capacity": c}
                           for k, c in enumerate(space["ps_servers"])],
            "jobs": jobs})
    return out


def direct_maximum(space: dict, algorithm: str) -> tuple[float, int, dict[str, int]]:
    best, arg, counts = -math.inf, -1, {}
    for n, d in enumerate(hand_instances(space)):
        inst = instance_from_dict(d)
        opt = best_utility(inst)
        alg = algorithms.run(algorithm, inst).total_utility
        status = "opt_zero" if opt <= 1e-6 else ("alg_zero" if alg <= 1e-6 * opt else "ok")
        counts[status] = counts.get(status, 0) + 1
        if status == "ok" and opt / alg > best:
            best, arg = opt / alg, n
    return best, arg, counts


@pytest.mark.parametrize("algorithm", ["oasis", "fifo", "rrh"])
def test_maximum_equals_a_direct_loop_and_the_argmax_file_reproduces_it(
        tmp_path, capfd, algorithm):
    path = tmp_path / "space.json"
    path.write_text(json.dumps(SPACE))
    out = tmp_path / "out"
    assert main(["verify", str(path), "--algorithm", algorithm, "-o", str(out), "--json"]) == 0
    data = json.loads(capfd.readouterr().out)
    best, arg, counts = direct_maximum(SPACE, algorithm)
    assert data["size"] == 64 == len(hand_instances(SPACE))
    assert data["counts"] == counts
    assert sum(data["counts"].values()) == data["size"] == data["evaluated"]
    assert data["exact"] and data["opt_methods"] == {"dp": 64}
    assert data["max_ratio"] == pytest.approx(best, rel=1e-9)
    assert data["argmax_index"] == arg  # ties: the smallest index, as the loop
    inst = load_instance(out / "argmax.json")
    assert instance_from_dict(hand_instances(SPACE)[arg]).num_jobs == inst.num_jobs
    ratio = best_utility(inst) / algorithms.run(algorithm, inst).total_utility
    assert ratio == pytest.approx(data["max_ratio"], rel=1e-9)
    rows = (out / "instances.csv").read_text().splitlines()
    assert len(rows) == 1 + 64
    assert (out / "histogram.png").read_bytes()[:4] == b"\x89PNG"
    dist = (out / "distribution.csv").read_text().splitlines()[1:]
    assert sum(int(r.split(",")[2]) for r in dist) == 64


def test_utilities_near_1e_9_give_the_maximum_of_the_space_scaled_by_1e9(tmp_path):
    """FIFO does not look at the utilities, so the space with every utility × 1e-9 has the
    same ratios (OASiS and RRH admit by an absolute 1e-9, SPEC §3 and baselines/rrh.py):
    every instance was counted ``opt_zero`` ("nothing can earn") there, as OPT ≤ 1e-6 was
    taken for 0."""
    algorithm = "fifo"
    tiny = copy.deepcopy(SPACE)
    for u in tiny["utility"]:
        u["values"] = [v * 1e-9 for v in u["values"]]
    got = verify.verify(verify.space_from_dict(tiny), algorithm, out=tmp_path / "t")
    best, arg, counts = direct_maximum(SPACE, algorithm)
    assert got.counts == counts
    assert got.max_ratio == pytest.approx(best, rel=1e-9)
    assert got.argmax == arg


def test_instances_are_numbered_like_the_direct_loop():
    sp = verify.space_from_dict(copy.deepcopy(SPACE))
    for n, d in enumerate(hand_instances(SPACE)):
        got = sp.instance_dict(n)
        assert got["jobs"] == d["jobs"], n


def test_the_two_alpha_check_counts_the_instances_within_the_share(tmp_path):
    sp = verify.space_from_dict(copy.deepcopy(SPACE))
    res = verify.verify(sp, "oasis", out=tmp_path, max_share=1.0)
    b = res.bound_check
    assert b is not None and b["held"] + b["violations"] == b["instances"]
    shares = [verify.job_share(instance_from_dict(d)) for d in hand_instances(SPACE)]
    assert b["instances"] == res.counts["ok"] + res.counts.get("alg_zero", 0)
    assert max(shares) <= 1.0
    narrow = verify.reduce_rows(sp, "oasis", {}, verify_rows(tmp_path), 0, 0.3, 0.0)
    assert narrow.bound_check["instances"] < b["instances"]  # share 0.5 > 0.3 on cpu
    assert verify.verify(sp, "fifo", out=tmp_path / "f").bound_check is None  # no α


def verify_rows(out):
    import csv
    with open(out / "instances.csv") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("seed", range(40))
def test_dp_optimum_equals_brute_force_and_the_milp(seed):
    rng = np.random.default_rng(seed)
    sp = SearchSpace(jobs=int(rng.integers(1, 4)), horizon=int(rng.integers(1, 5)),
                     worker_servers=int(rng.integers(1, 3)), ps_servers=int(rng.integers(1, 3)),
                     max_capacity=4, max_demand=2, max_workload=4, max_workers=3,
                     max_ps_ratio=3)
    inst = instance_from_dict(random_instance(rng, sp))
    dp = verify.dp_optimum(inst)
    assert dp is not None
    assert dp == pytest.approx(verify.milp_optimum(inst), rel=1e-9, abs=1e-9)
    if inst.num_jobs <= 2:
        assert dp == pytest.approx(best_utility(inst), rel=1e-9, abs=1e-9)


def test_the_milp_takes_over_where_the_dp_table_is_too_large(monkeypatch):
    rng = np.random.default_rng(3)
    inst = instance_from_dict(random_instance(rng, SearchSpace(jobs=3, horizon=4)))
    monkeypatch.setattr(verify, "DP_WORK_LIMIT", 0)
    assert verify.dp_optimum(inst) is None
    opt, method = verify.exact_opt(inst)
    monkeypatch.undo()
    assert method == "milp" and opt == pytest.approx(verify.dp_optimum(inst), rel=1e-9)


def _bad(**change) -> dict:
    d = copy.deepcopy(SPACE)
    for k, v in change.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    return d


@pytest.mark.parametrize("change, place, text", [
    ({"worker_demand": [[1, 1], [2]]}, "worker_demand[1]", "expected 2 values"),
    ({"worker_servers": [[2]]}, "worker_servers[0]", "expected 2 values"),
    ({"workload": []}, "workload", "empty list"),
    ({"arrivals": [0]}, "arrivals", "unknown field"),
    ({"utility": None}, "utility", "missing field"),
    ({"arrival": [0, 3]}, "arrival[1]", "horizon"),
    ({"workload": [1, "2"]}, "workload[1]", "expected an integer"),
    ({"utility": [{"kind": "table", "values": [1, 2]}]}, "utility[0]", "increas"),
    ({"utility": [{"kind": "nope"}]}, "utility[0]", "kind"),
    ({"workload": [2, 2]}, "workload[1]", "repeats workload[0]"),
    ({"format": "oasis-instance/1"}, "format", "oasis-space/1"),
    ({"jobs": 10**9}, "jobs", "jobs per instance 1e+09 is too large (limit 10000)"),
    # each value alone passes; the most workers over the smallest ratio do not
    ({"max_workers": [1, 100000], "ps_ratio": [1, 0.01]}, "ps_ratio[1]",
     "1e+07 PSs in a slot for max_workers 100000"),
])
def test_malformed_spaces_are_refused_naming_the_field_with_nothing_run(
        tmp_path, capfd, change, place, text):
    path = tmp_path / "space.json"
    path.write_text(json.dumps(_bad(**change)))
    out = tmp_path / "out"
    assert main(["verify", str(path), "--algorithm", "oasis", "-o", str(out)]) == 2
    err = capfd.readouterr().err
    assert f"error: {place}" in err and text in err, err
    assert "Traceback" not in err and not out.exists()
    with pytest.raises(InputError, match="^" + place.replace("[", r"\[")):
        verify.space_from_dict(_bad(**change))


def test_a_space_too_large_is_refused_up_front(tmp_path, capfd):
    big = _bad(jobs=40)  # 8^40 instances
    path = tmp_path / "space.json"
    path.write_text(json.dumps(big))
    out = tmp_path / "out"
    assert main(["verify", str(path), "--algorithm", "oasis", "-o", str(out)]) == 2
    err = capfd.readouterr().err
    assert "--max-instances" in err and "1.329e+36 instances" in err, err
    # past what a float holds (8^10000 ≈ 7.9·10^9030) the size is still printed, not raised
    path.write_text(json.dumps(_bad(jobs=10_000)))
    assert main(["verify", str(path), "--algorithm", "oasis", "-o", str(out)]) == 2
    err = capfd.readouterr().err
    assert "7.941e+9030 instances" in err and "Traceback" not in err, err
    assert main(["verify", str(tmp_path / "space.json"), "--algorithm", "oasis",
                 "--max-instances", "63", "-o", str(out)]) == 2
    assert main(["verify", str(path), "--algorithm", "no-such", "-o", str(out)]) == 2
    # a raised limit let 10^12 instances build gigabytes of tasks before anything ran
    path.write_text(json.dumps(_bad(jobs=14)))  # 8^14 ≈ 4.4e12 instances
    assert main(["verify", str(path), "--algorithm", "oasis", "--max-instances", str(10**13),
                 "-o", str(out)]) == 2
    err = capfd.readouterr().err
    assert "error: --max-instances: a row of results in memory for each of 4,398,046,511,104 " \
        "instances is too large: about 8.19e+03 TiB (limit " in err, err
    assert not out.exists()


def test_bad_algorithm_parameters_are_refused_before_any_worker_starts(tmp_path, capfd):
    out = tmp_path / "out"
    from pathlib import Path
    tiny = Path(__file__).resolve().parents[1] / "instances" / "spaces" / "tiny-2jobs.json"
    assert main(["verify", str(tiny), "--algorithm", "oasis",
                 "--param", "u_scale=-1", "--workers", "2", "-o", str(out)]) == 2
    assert "u_scale" in capfd.readouterr().err and not out.exists()


def test_resume_runs_only_the_missing_chunks_and_gives_the_same_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(verify, "CHUNK", 10)
    sp = verify.space_from_dict(copy.deepcopy(SPACE))
    first = verify.verify(sp, "oasis", out=tmp_path)
    assert first.evaluated == 64
    csv_path = tmp_path / "instances.csv"
    lines = csv_path.read_text().splitlines(keepends=True)
    kept = [lines[0]] + [r for r in lines[1:] if not r.startswith("verify,6,")]
    csv_path.write_text("".join(kept) + "verify,2,{partial line")  # chunk 6 lost, a torn tail
    again = verify.verify(sp, "oasis", out=tmp_path)
    assert again.evaluated == 4  # chunk 6 holds instances 60-63
    assert again.summary() | {"seconds": 0, "evaluated": 0} == \
        first.summary() | {"seconds": 0, "evaluated": 0}
    assert verify.verify(sp, "oasis", out=tmp_path).evaluated == 0
    other = verify.space_from_dict(_bad(horizon=4))
    with pytest.raises(InputError, match="another space"):
        verify.verify(other, "oasis", out=tmp_path)


def test_process_pool_gives_the_in_process_answer(tmp_path, monkeypatch):
    from oasis_opt.tasks import make_executor
    monkeypatch.setattr(verify, "CHUNK", 7)  # the workers import the module: CHUNK is 500
    sp = verify.space_from_dict(copy.deepcopy(SPACE))
    serial = verify.verify(sp, "drf", out=tmp_path / "a")
    monkeypatch.undo()
    with make_executor(2) as ex:
        pooled = verify.verify(sp, "drf", out=tmp_path / "b", executor=ex)
    assert pooled.summary() | {"seconds": 0} == serial.summary() | {"seconds": 0}


def test_named_spaces_parse():
    from pathlib import Path
    for path in sorted((Path(__file__).resolve().parents[1] / "instances" / "spaces")
                       .glob("*.json")):
        sp = verify.load_space(path)
        assert sp.size <= verify.DEFAULT_MAX_INSTANCES, path


@pytest.mark.parametrize("edit,message", [
    (lambda r: r.replace(",fifo,0,ok,", ",fifo,x,ok,"), "instances.csv:2: column index: "
                                                        "expected an instance number"),
    (lambda r: r.replace(",fifo,0,ok,", ",fifo,99999,ok,"), "instances.csv:2: column index: "
                                                            "expected an instance number"),
    (lambda r: r.replace(",fifo,0,ok,", ",fifo,1,ok,"), "instances.csv:3: instance 1 is "
                                                        "stored twice (also line 2)"),
    (lambda r: r.replace(",fifo,0,ok,", ",fifo,0,weird,"), "instances.csv:2: column status: "
                                                           "expected one of"),
    (lambda r: r.replace(",ok,8.0,8.0,1.0,", ",ok,nan,8.0,inf,"), "instances.csv:2: column "
                                                                  "opt: expected a number"),
    # float() read these as 10, 8 and 8: an edited OPT counted as a number
    (lambda r: r.replace(",ok,8.0,8.0,1.0,", ",ok,1_0,8.0,1.0,"), "instances.csv:2: column "
                                                                  "opt: expected a number, "
                                                                  "got '1_0'"),
    (lambda r: r.replace(",ok,8.0,8.0,1.0,", ",ok, 8.0,8.0,1.0,"), "instances.csv:2: column "
                                                                   "opt: expected a number"),
    (lambda r: r.replace(",ok,8.0,8.0,1.0,", ",ok,8.0,٨,1.0,"), "instances.csv:2: column "
                                                               "alg: expected a number"),
    (lambda r: r.replace(",ok,8.0,8.0,1.0,", ",ok,8.0,8.0,Infinity,"),
     "instances.csv:2: column ratio: expected a number"),
    (lambda r: "\n".join(r.splitlines()[:2] + r.splitlines()[3:]) + "\n",
     "instances.csv: instance 1 is missing (its chunk 0 is stored)"),
])
def test_a_damaged_results_file_is_refused_naming_its_line(tmp_path, capsys, edit, message):
    """A resumed instances.csv was trusted: a damaged row ended in 'internal error' (exit 1)
    or was counted as it read ("abc" for OPT, an unknown status)."""
    from pathlib import Path
    tiny = Path(__file__).resolve().parents[1] / "instances" / "spaces" / "tiny-2jobs.json"
    out = tmp_path / "v"
    assert main(["verify", str(tiny), "-a", "fifo", "-o", str(out)]) == 0
    store = out / "instances.csv"
    text = store.read_text()
    assert ",fifo,0,ok,8.0,8.0,1.0," in text
    store.write_text(edit(text))
    capsys.readouterr()
    assert main(["verify", str(tiny), "-a", "fifo", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
