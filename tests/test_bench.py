"""``oasis_opt.bench``: the growth measurement, the CI summary, and the shape of
``oasis-opt bench --quick --json`` (one JSON object; the quick run takes about 15 s, so it runs
once, through the CLI)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from oasis_opt import bench
from oasis_opt.online.subroutine import best_schedule


def test_growth_cases_double_one_size_and_are_feasible():
    for axis, key in (("horizon", 0), ("servers", 1), ("workload", None)):
        small, large = bench.growth_case(axis, 1), bench.growth_case(axis, 2)
        if key is not None:
            assert large[1].shape[key] == 2 * small[1].shape[key]
        else:
            assert large[0].workload == 2 * small[0].workload
        for case in (small, large):
            best = best_schedule(*case)
            assert best.fits and best.payoff > 0  # the DP ran to the end, work was done
            assert int(best.workers.sum()) >= case[0].workload


def test_paired_growth_sees_linear_and_quadratic(monkeypatch):
    """Synthetic costs on a fake CPU clock (the real one made this test fail under load):
    n and 2n units (exponent 1), n² and 4n² (2), and a burst of load that slows one side of
    one round by 3× is left out by the median of the paired ratios."""
    clock = {"now": 0.0, "calls": 0, "burst": None, "slowed": 0}
    monkeypatch.setattr(bench.time, "thread_time", lambda: clock["now"])

    def work(units: float):
        def call() -> None:
            clock["calls"] += 1
            slow = 3.0 if clock["burst"] is not None and \
                clock["burst"][0] <= clock["calls"] < clock["burst"][1] else 1.0
            clock["slowed"] += slow > 1
            clock["now"] += 1e-3 * units * slow
        return call

    small, _, lin = bench.paired_growth(work(4), work(8), rounds=5, sample_seconds=0.01)
    assert small == pytest.approx(4e-3) and math.log2(lin) == pytest.approx(1.0)
    _, _, quad = bench.paired_growth(work(4), work(16), rounds=5, sample_seconds=0.01)
    assert math.log2(quad) == pytest.approx(2.0)
    # 4 calls of warm-up and sizing, then rounds of 3 small and 2 large calls; round 1 runs
    # the large side first: the burst slows only its 2 large calls
    base = clock["calls"]
    clock["burst"] = (base + 9, base + 11)
    _, large, ratio = bench.paired_growth(work(4), work(8), rounds=5, sample_seconds=0.01)
    assert clock["calls"] == base + 4 + 5 * 5 and clock["slowed"] == 2
    assert math.log2(ratio) == pytest.approx(1.0) and large == pytest.approx(8e-3)


def test_growth_rejects_unknown_axis():
    with pytest.raises(ValueError, match="unknown axis"):
        bench.growth("jobs")


def test_summarize_pytest_json():
    data = {"benchmarks": [
        {"fullname": "benchmarks/bench_scaling.py::test_growth_exponent[servers]",
         "stats": {"median": 0.002, "min": 0.001, "max": 0.003, "rounds": 5},
         "extra_info": {"exponent": 1.04, "limit": 1.6, "large_size": {"T": 20, "H": 400}}},
        {"fullname": "benchmarks/bench_baselines.py::test_baseline_paper[fifo]",
         "stats": {"median": 0.15, "min": 0.15, "max": 0.15, "rounds": 1},
         "extra_info": {"jobs": 200, "horizon": 100, "worker_servers": 40, "ps_servers": 40,
                        "completed": 91}},
    ]}
    rows = bench.summarize_pytest_json(data)
    assert [r["name"] for r in rows] == ["bench_baselines.py::test_baseline_paper[fifo]",
                                         "bench_scaling.py::test_growth_exponent[servers]"]
    assert rows[0]["size"] == "jobs=200 T=100 H=40 K=40" and rows[0]["figures"] == "completed=91"
    assert rows[1]["size"] == "T=20 H=400" and rows[1]["figures"] == "exponent=1.04, limit=1.6"
    assert set(bench.SUMMARY_COLUMNS) <= set(rows[0])


def test_cli_bench_quick_json():
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "bench", "--quick", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # one JSON object and nothing else on stdout
    assert r.stdout.strip().startswith("{") and r.stdout.strip().endswith("}")
    assert data["quick"] is True and isinstance(data["machine"], str)
    assert data["columns"] == bench.COLUMNS
    names = [row["name"] for row in data["rows"]]
    for expected in ("OASiS decision", "OASiS run", "fifo run", "drf run", "rrh run",
                     "tetris run", "exact solver", "colgen bound", "growth in horizon",
                     "growth in servers", "growth in workload"):
        assert expected in names
    for row in data["rows"]:
        assert set(bench.COLUMNS) <= set(row)
        assert math.isfinite(row["median"])
    solver = next(row for row in data["rows"] if row["name"] == "exact solver")
    assert solver["status"] == "optimal"
    colgen = next(row for row in data["rows"] if row["name"] == "colgen bound")
    assert colgen["bound"] >= colgen["incumbent"] - 1e-6 * max(1.0, abs(colgen["incumbent"]))
