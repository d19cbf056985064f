"""Large slices (issue 21): the automatic slot length and horizon of ``import … --jobs all``
(docs/traces.md, "Slot length and horizon"), and the research-scale ``trace`` experiment on
tiny slices through its parameters."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from oasis_opt import algorithms
from oasis_opt.cli import main
from oasis_opt.traces import Policy, import_trace
from oasis_opt.traces.common import AUTO_MIN_JOBS, MAX_AUTO_SLOTS, SLOT_LADDER, TraceJob, auto_slots

PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"


def _philly(path: Path, jobs: int, every_minutes: int, duration) -> Path:
    """``jobs`` one-GPU jobs, one every ``every_minutes`` from 2017-10-01, job k running
    ``duration(k)`` seconds."""
    lines = []
    for k in range(jobs):
        m = k * every_minutes
        day, hour, minute = 1 + m // 1440, (m // 60) % 24, m % 60
        d = duration(k)
        lines.append(f"2017-10-{day:02d} {hour:02d}:{minute:02d}:00,{d}.0,1,{d}.0,a\n")
    path.write_text(PHILLY_HEADER + "".join(lines), encoding="utf-8")
    return path


def _jobs(submits, durations) -> list[TraceJob]:
    return [TraceJob(f"j{k}", k, s, d, 1, (1.0,)) for k, (s, d) in
            enumerate(zip(submits, durations, strict=True))]


def test_ladder_rule_by_hand():
    # 200 jobs over 199 minutes; durations 100 … 299 s: D50 (lower) = 199, D75 (lower) = 249
    jobs = _jobs([60.0 * k for k in range(200)], [100.0 + k for k in range(200)])
    # the smallest ladder value ≥ 199 s is 300; ⌊(11940 + 249) / 300⌋ + 1 = 41 < 100
    assert auto_slots(jobs) == (300.0, 100)
    # a long span: 200 jobs a day apart, D50 = 199 s → 300 s gives 57 314 slots, too many;
    # the first ladder value with at most 3000: 7200 s (⌊17 193 849 / 7200⌋ + 1 = 2389;
    # 3600 s would give 4 777)
    jobs = _jobs([86400.0 * k for k in range(200)], [100.0 + k for k in range(200)])
    S, T = auto_slots(jobs)
    assert (S, T) == (7200.0, math.floor((199 * 86400 + 249) / 7200) + 1)
    assert T <= MAX_AUTO_SLOTS and S in SLOT_LADDER
    smaller = SLOT_LADDER[SLOT_LADDER.index(S) - 1]
    assert math.floor((199 * 86400 + 249) / smaller) + 1 > MAX_AUTO_SLOTS


def test_flags_win_and_small_slices_keep_todays_defaults(tmp_path):
    trace = _philly(tmp_path / "p.csv", 300, 60, lambda k: 100 + 10 * k)  # 299 hours
    small = import_trace("philly", trace, Policy(jobs=AUTO_MIN_JOBS))
    # at most AUTO_MIN_JOBS jobs: 100 slots, S = ceil((A + D75) / 100) as before
    span, d75 = 99 * 3600, 100 + 10 * 74
    assert small.instance.horizon == 100
    assert small.slot_seconds == math.ceil((span + d75) / 100)
    assert "auto_slots" not in small.instance.extra["trace"]["mapping"]
    # --jobs all: D50 (lower) = 100 + 10·149 = 1590 s → 1800 s; ⌊(1 076 400 + 2340)/1800⌋ + 1
    whole = import_trace("philly", trace, Policy(jobs=None))
    assert whole.slot_seconds == 1800.0
    assert whole.instance.horizon == math.floor((299 * 3600 + 100 + 10 * 224) / 1800) + 1
    assert whole.instance.extra["trace"]["mapping"]["auto_slots"] == "ladder"
    assert whole.instance.extra["trace"]["mapping"]["horizon"] == whole.instance.horizon
    assert max(j.arrival for j in whole.instance.jobs) < whole.instance.horizon
    # a given horizon keeps the span formula for S; a given S gets the horizon that holds
    # the arrivals; both given: both used
    h = import_trace("philly", trace, Policy(jobs=None, horizon=400))
    assert (h.instance.horizon, h.slot_seconds) == \
        (400, math.ceil((299 * 3600 + 100 + 10 * 224) / 400))
    s = import_trace("philly", trace, Policy(jobs=None, slot_seconds=3600))
    assert (s.slot_seconds, s.instance.horizon) == (3600, 300)
    both = import_trace("philly", trace, Policy(jobs=None, slot_seconds=600, horizon=2000))
    assert (both.slot_seconds, both.instance.horizon) == (600, 2000)


def test_cli_jobs_all_reports_the_chosen_slots(tmp_path, capfd):
    trace = _philly(tmp_path / "p.csv", 300, 60, lambda k: 100 + 10 * k)
    out = tmp_path / "all.json"
    assert main(["import", "philly", str(trace), "--jobs", "all", "-o", str(out), "--json"]) == 0
    got = json.loads(capfd.readouterr().out)
    assert (got["jobs"], got["slot_seconds"], got["horizon"]) == (300, 1800.0, 600)


# --- the research-scale experiment, on tiny slices ----------------------------------------------


def test_scale_experiment_smoke(tmp_path, monkeypatch):
    from oasis_opt.experiments import run_experiment
    from oasis_opt.traces import experiment as texp
    # the whole traces are not shipped: the same code on the shipped Philly sample, tiny slices
    monkeypatch.setattr(texp, "SCALE_TRACES", (
        texp.TraceSlice("philly", "philly", "samples:adaptdl/philly.csv", 300, usable=2000),))
    res = run_experiment("trace", seeds=1, out=tmp_path, scale="12,3000", time_limit=5)
    with open(tmp_path / "trace.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == texp.TRACE_COLUMNS
        rows = list(reader)
    # 3000 jobs do not fit in the sample's 2000 from job 300: only the 12-job slice ran
    assert res["tasks_run"] == 1
    assert {r["algorithm"] for r in rows} == {*algorithms.builtin_names(), "optimal"}
    for r in rows:
        assert r["validated"] == "True", r
        assert r["scale"] == "12" and r["jobs"] == "12" and r["time_limit"] == "5.0"
        lo, hi = float(r["ratio_lo"]), float(r["ratio_hi"])
        assert 1 - 1e-9 <= lo <= hi * (1 + 1e-6), r  # incumbent ≥ every ALG; ≤ the bound
        assert float(r["incumbent"]) <= float(r["opt"]) * (1 + 1e-6) + 1e-9
    assert set(res["summary"]) == {"philly-12@1.5"}
    assert (tmp_path / "trace.png").stat().st_size > 1000
    # resumable: a rerun runs nothing
    again = run_experiment("trace", seeds=1, out=tmp_path, scale="12", time_limit=5)
    assert again["tasks_run"] == 0 and again["new_rows"] == 0


def test_scale_options_refused_by_name():
    from oasis_opt.errors import InputError
    from oasis_opt.experiments import run_experiment
    with pytest.raises(InputError, match="expected slice sizes"):
        run_experiment("trace", scale="big")
    with pytest.raises(InputError, match="applies to the trace experiment"):
        run_experiment("ratio", scale="1000")
    with pytest.raises(InputError, match="unknown method"):
        run_experiment("trace", scale="1000", method="magic")


def test_cli_scale_flag_named(capfd):
    assert main(["experiment", "ratio", "--scale", "1000"]) == 2
    err = capfd.readouterr().err
    assert "--scale: applies to the trace experiment, not ratio" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("method, bound_only", [("auto", False), ("colgen", True)])
def test_no_algorithm_runs_twice(monkeypatch, method, bound_only):
    """A task runs each algorithm once: the solve's floor (and, at trace scale, column
    generation's seeds) is the best schedule the task already has. Counted by wrapping every
    built-in registry entry; ``bound_only`` makes column generation take its trace-scale path
    (bound only, seeded by the floor) on a small slice."""
    import importlib
    import sys
    import types

    from oasis_opt.formulations import colgen

    from oasis_opt.tasks import Task
    from oasis_opt.traces import experiment as texp
    calls: dict[str, int] = {}
    # each registry entry points at a counting wrapper (oasis-adaptive calls OASiS's module
    # function itself, not through the registry: that is not a second run)
    counting = types.ModuleType("counting_algorithms")
    for name, target in list(algorithms.REGISTRY.items()):
        module, attr = target.split(":")
        original = getattr(importlib.import_module(module), attr)

        def counted(instance, *args, _name=name, _original=original, **kwargs):
            calls[_name] = calls.get(_name, 0) + 1
            return _original(instance, *args, **kwargs)
        setattr(counting, name.replace("-", "_"), counted)
        monkeypatch.setitem(algorithms.REGISTRY, name,
                            f"counting_algorithms:{name.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, "counting_algorithms", counting)
    if bound_only:
        monkeypatch.setattr(colgen, "SCHEDULE_CELLS", 0)
    monkeypatch.setattr(texp, "SCALE_TRACES", (
        texp.TraceSlice("philly", "philly", "samples:adaptdl/philly.csv", 300, usable=2000),))
    task = texp.tasks(1, False, scale="12", time_limit=10, method=method)[0]
    lines: list[str] = []
    with texp.report_steps(lines.append):
        rows = texp.execute(Task(task.experiment, task.seed, task.params, task.algorithms))
    assert calls == {name: 1 for name in algorithms.REGISTRY}
    opt = next(r for r in rows if r["algorithm"] == "optimal")
    best = max(r["utility"] for r in rows if r["algorithm"] != "optimal")
    assert opt["validated"] and opt["utility"] >= best * (1 - 1e-9)  # the floor counted
    assert opt["opt"] >= opt["utility"] * (1 - 1e-6)
    if bound_only:
        assert opt["route"] == "colgen"
    # the steps: the import, every algorithm, the solve
    text = "\n".join(lines)
    assert "importing" in text and "offline solve" in text
    assert all(f"running {name}" in text for name in algorithms.REGISTRY)
