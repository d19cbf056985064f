"""Large slices (issue 21): the automatic slot length and horizon of ``import … --jobs all``
(docs/traces.md, "Slot length and horizon"), and the research-scale ``trace`` experiment on
tiny slices through its parameters."""

from __future__ import annotations

import json
import math
from pathlib import Path

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
