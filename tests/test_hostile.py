"""Inputs no user should send (issue 14, SPEC §5): each case from the issue, end to end through
the command line, by exit status and message; schedules that are written pass the validator."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from oasis_opt import cli
from oasis_opt.io import load_instance, load_schedule
from oasis_opt.model import ps_needed
from oasis_opt.validate import validate

ROOT = Path(__file__).resolve().parent.parent
BASE = json.loads((ROOT / "instances" / "small-s0.json").read_text())
ALGORITHMS = ["oasis", "fifo", "drf", "rrh", "tetris"]


def _write(tmp_path: Path, doc: dict | str, name: str = "inst.json") -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def _mutate(**job_fields) -> dict:
    d = copy.deepcopy(BASE)
    d["jobs"][0].update(job_fields)
    if "workload" in job_fields:
        d["jobs"][0].pop("training", None)
    return d


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("field,value,message", [
    ("arrival", "3", r"jobs\[0\]\.arrival: expected an integer, got a string"),
    ("workload", True, r"jobs\[0\]\.workload: expected an integer, got a boolean"),
    ("ps_ratio", 1e-300, r"jobs\[0\]\.ps_ratio: 1e-300 means 4e\+300 PSs in a slot"),
    ("ps_ratio", 1e300, r"jobs\[0\]\.ps_ratio: 1e\+300 is too large"),
    ("workload", 10**15, r"jobs\[0\]\.workload: 1e\+15 is too large \(limit 1e\+12\)"),
    ("utility", {"kind": "sigmoid", "gamma1": 1e300, "gamma2": 1, "gamma3": 2},
     r"jobs\[0\]\.utility\.gamma1: 1e\+300 is too large"),
])
@pytest.mark.parametrize("command", ["run", "solve"])
def test_hostile_job_field_is_refused_with_nothing_written(tmp_path, capsys, field, value,
                                                            message, command):
    inst = _write(tmp_path, _mutate(**{field: value}))
    out = tmp_path / "out.json"
    argv = [command, inst, "-o", out] + (["--algorithm", "oasis"] if command == "run" else [])
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    import re
    assert re.search(message, err), err
    assert not out.exists()


def test_capacity_given_as_a_string_is_malformed(tmp_path, capsys):
    d = copy.deepcopy(BASE)
    d["worker_servers"][0]["capacity"][0] = "4"
    code, _, err = _run(capsys, "run", _write(tmp_path, d), "--algorithm", "fifo")
    assert code == 2
    assert "worker_servers[0].capacity[0]: expected a number, got a string ('4')" in err


def test_integral_float_counts_as_an_integer(tmp_path, capsys):
    d = _mutate(max_workers=4.0, arrival=0.0)
    code, _, err = _run(capsys, "run", _write(tmp_path, d), "--algorithm", "fifo")
    assert code == 0, err


@pytest.mark.parametrize("where,value,message", [
    (("worker_servers", 0, "count"), 10_000_000,
     r"worker_servers\[0\]\.count: 10000002 servers × 6 slots × 4 resources is too large"),
    (("horizon",), 50_000_000, r"horizon: 6 servers × 50000000 slots × 4 resources is too large"),
])
@pytest.mark.parametrize("command", ["run", "solve", "ratio"])
def test_huge_sizes_are_refused_before_allocation(tmp_path, capsys, where, value, message,
                                                  command):
    import re
    d = copy.deepcopy(BASE)
    target = d
    for p in where[:-1]:
        target = target[p]
    target[where[-1]] = value
    inst = _write(tmp_path, d)
    argv = [command, inst] + (["--algorithm", "oasis"] if command == "run" else [])
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert re.search(message, err), err
    assert "--max-memory" in err


def test_max_memory_lowers_and_raises_the_limit(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OASIS_MAX_MEMORY", raising=False)
    import os
    inst = ROOT / "instances" / "small-s0.json"
    code, _, err = _run(capsys, "run", inst, "--algorithm", "fifo", "--max-memory", "1K")
    assert code == 2 and "limit 1 KiB" in err
    assert "OASIS_MAX_MEMORY" not in os.environ  # the limit was this command's only
    code, _, err = _run(capsys, "run", inst, "--algorithm", "fifo", "--max-memory", "lots")
    assert code == 2 and "--max-memory: expected a size such as 512M" in err
    d = copy.deepcopy(BASE)
    d["worker_servers"][0]["count"] = 300_000  # ~230 MiB of per-slot state
    big = _write(tmp_path, d)
    code, _, err = _run(capsys, "validate", big, ROOT / "instances" / "small-s0.json",
                        "--max-memory", "100M")
    assert code == 2 and "worker_servers[0].count" in err
    code, _, err = _run(capsys, "validate", big, ROOT / "instances" / "small-s0.json",
                        "--max-memory", "4G")
    assert code == 2 and "format: expected 'oasis-schedule/1'" in err  # past the size check


def test_generate_past_the_memory_limit_names_the_size_given(tmp_path, capsys, monkeypatch):
    """``generate``'s size check names the option that made the instance large, and the
    limit itself where no size was given (it named --jobs for ``--max-memory 1`` alone)."""
    monkeypatch.delenv("OASIS_MAX_MEMORY", raising=False)
    out = tmp_path / "x.json"
    for extra, place in (([], "--max-memory:"), (["--jobs", "4"], "--jobs:"),
                         (["--horizon", "9"], "--horizon:")):
        code, _, err = _run(capsys, "generate", "--preset", "small", "--max-memory", "1",
                            *extra, "-o", out)
        assert code == 2 and err.strip().endswith("raise it with --max-memory)"), err
        assert f"error: {place}" in err and not out.exists()
    code, _, err = _run(capsys, "generate", "--preset", "small", "--max-memory", "1M",
                        "--jobs", "100000000", "-o", out)
    assert code == 2 and "error: --jobs: an instance of 100000000 jobs" in err


def test_ps_counts_from_large_ratios_are_never_zero():
    assert ps_needed(4, 1e11) == 1
    assert ps_needed(0, 1e11) == 0
    assert list(ps_needed(np.array([0, 1, 5, 9]), 1e9)) == [0, 1, 1, 1]
    assert ps_needed(3, 1 / 3) == 9  # float noise in 3 / (1/3) does not add a PS
    assert ps_needed(7, 2) == 4


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_places_a_ps_when_one_serves_all_workers(tmp_path, capsys, algorithm):
    d = copy.deepcopy(BASE)
    for j in d["jobs"]:
        j["ps_ratio"] = 1e9  # one PS for any number of workers, never zero
    inst = _write(tmp_path, d)
    out = tmp_path / "s.json"
    code, _, err = _run(capsys, "run", inst, "--algorithm", algorithm, "-o", out)
    assert code == 0, err
    instance, sched = load_instance(inst), load_schedule(out)
    assert validate(instance, sched).feasible
    ran = [a for j in sched.jobs for a in j.allocations if sum(a.workers.values())]
    assert ran and all(sum(a.ps.values()) >= 1 for a in ran)


def test_huge_workload_without_training_is_rejected_not_allocated(tmp_path, capsys):
    inst = _write(tmp_path, _mutate(workload=10**12))
    out = tmp_path / "s.json"
    code, _, err = _run(capsys, "run", inst, "--algorithm", "oasis", "-o", out, "--json")
    assert code == 0, err
    sched = load_schedule(out)
    assert not sched.jobs[0].completed and not sched.jobs[0].allocations
    assert validate(load_instance(inst), sched).feasible


def test_dp_beyond_the_memory_limit_is_refused_naming_the_job(tmp_path, capsys, monkeypatch):
    # Zero demands: every worker fits, so 10^5 workers a slot can finish 5·10^5 units of work
    # in 6 slots — a DP of (W + V) × slots cells, refused under a 50 MiB limit.
    d = _mutate(workload=500_000, max_workers=100_000, requested_workers=100_000,
                ps_ratio=1000, worker_demand=[0, 0, 0, 0], ps_demand=[0, 0, 0, 0])
    inst = _write(tmp_path, d)
    code, _, err = _run(capsys, "run", inst, "--algorithm", "oasis", "--max-memory", "50M")
    assert code == 2
    assert "jobs[0].workload: OASiS's dynamic programme for a workload of 500000" in err


def test_schedule_with_an_astronomic_worker_count_is_malformed(tmp_path, capsys):
    inst = ROOT / "instances" / "small-s0.json"
    out = tmp_path / "s.json"
    assert _run(capsys, "run", inst, "--algorithm", "fifo", "-o", out)[0] == 0
    s = json.loads(out.read_text())
    job = next(j for j in s["jobs"] if j["allocations"])
    server = next(iter(job["allocations"][0]["workers"]))
    job["allocations"][0]["workers"][server] = 10**30
    code, _, err = _run(capsys, "validate", inst, _write(tmp_path, s, "bad.json"))
    assert code == 2
    assert "is too large" in err and "workers" in err


@pytest.mark.parametrize("field,value,message", [
    ("slot", "3", "expected an integer, got a string"),
    ("completed", 1, "jobs[0].completed: expected true or false, got 1"),
    ("utility", "48.2", "expected a number, got a string"),
])
def test_schedule_type_errors_are_malformed_not_violations(tmp_path, capsys, field, value,
                                                           message):
    inst = ROOT / "instances" / "small-s0.json"
    out = tmp_path / "s.json"
    assert _run(capsys, "run", inst, "--algorithm", "fifo", "-o", out)[0] == 0
    s = json.loads(out.read_text())
    job = next(j for j in s["jobs"] if j["allocations"])
    if field == "slot":
        job["allocations"][0]["slot"] = value
    else:
        job[field] = value
    code, _, err = _run(capsys, "validate", inst, _write(tmp_path, s, "bad.json"))
    assert code == 2, err
    assert message in err


@pytest.mark.parametrize("text,message", [
    ('{"format": "oasis-instance/1", "horizon": NaN}', "NaN is not a JSON number"),
    ('{"format": "oasis-instance/1", "horizon": 4, "horizon": 5}', "duplicate key 'horizon'"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"horizon": 1' + "0" * 5000 + "}", "not valid JSON"),
])
def test_json_that_python_would_accept_is_still_refused(tmp_path, capsys, text, message):
    code, _, err = _run(capsys, "run", _write(tmp_path, text), "--algorithm", "fifo")
    assert code == 2
    assert message in err and "inst.json" in err


@pytest.mark.parametrize("edit,place", [
    (lambda d: d.update(name="\ud800"), "name"),
    (lambda d: d["jobs"][2].update(id="j\udc00"), "jobs[2].id"),
    (lambda d: d["jobs"][0].update({"\udbff": 1}), "jobs[0]"),
])
def test_a_lone_surrogate_is_no_text(tmp_path, capsys, edit, place):
    """``"name": "\\ud800"`` is valid JSON that Python reads as a string no file, hash or
    terminal can take: 'internal error: 'utf-8' codec can't encode character' (exit 1) when
    the algorithm seeded itself from the name, or the schedule was written."""
    d = copy.deepcopy(BASE)
    edit(d)
    p = _write(tmp_path, json.dumps(d, ensure_ascii=True))
    out = tmp_path / "s.json"
    code, _, err = _run(capsys, "run", p, "-a", "fifo", "-o", out)
    assert code == 2, err
    assert f"inst.json: {place}: a lone surrogate" in err and "internal" not in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_surrogate_pair_is_a_character(tmp_path, capsys):
    d = copy.deepcopy(BASE)
    d["name"] = "\U0001f600"
    p = _write(tmp_path, json.dumps(d, ensure_ascii=True))  # "\ud83d\ude00"
    assert "\\ud83d\\ude00" in p.read_text()
    code, _, err = _run(capsys, "run", p, "-a", "fifo", "-o", tmp_path / "s.json")
    assert code == 0, err
    assert load_schedule(tmp_path / "s.json").instance == "\U0001f600"


def test_bytes_that_are_not_utf8(tmp_path, capsys):
    p = tmp_path / "inst.json"
    p.write_bytes(b'{"format": "\xff\xfe"}')
    code, _, err = _run(capsys, "validate", p, p)
    assert code == 2 and "not UTF-8" in err


def test_a_solver_error_never_exits_zero(tmp_path, capsys, monkeypatch):
    from oasis_opt import offline
    real = offline.solve

    def failing(instance, **kw):
        sched, rep = real(instance, **kw)
        from dataclasses import replace
        return sched, replace(rep, status=offline.SolveStatus.ERROR)

    monkeypatch.setattr(offline, "solve", failing)
    out = tmp_path / "s.json"
    code, _, err = _run(capsys, "solve", ROOT / "instances" / "small-s0.json", "-o", out)
    assert code == 1
    assert "solver error" in err and "Traceback" not in err
    assert not out.exists()


def test_an_internal_failure_is_one_line_and_exit_one(capsys, monkeypatch):
    from oasis_opt import algorithms

    def broken(name, instance, **params):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(algorithms, "run", broken)
    code, _, err = _run(capsys, "run", ROOT / "instances" / "small-s0.json", "--algorithm",
                        "fifo")
    assert code == 1
    assert err.strip().splitlines() == [
        "oasis-opt run: internal error: boom (set OASIS_DEBUG=1 for a traceback)"]
