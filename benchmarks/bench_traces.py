"""Whole traces (issue 21): each online algorithm's ``oasis-opt run`` and the validator on the
whole Philly trace (82 247 jobs), as separate processes, with peak RSS and CPU seconds in
``extra_info`` (``benchmarks/whole_trace.py`` measures them).

Opt-in (tens of CPU minutes): ``OASIS_WHOLE_TRACE=../shared/traces/adaptdl/philly.csv pytest
benchmarks/bench_traces.py --benchmark-only``. Targets (issue 21): each run within 10 minutes
and 4 GiB on 2 cores.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from whole_trace import ALGORITHMS, import_whole, measure, oasis_opt  # noqa: E402

TRACE = os.environ.get("OASIS_WHOLE_TRACE")
pytestmark = pytest.mark.skipif(not TRACE, reason="set OASIS_WHOLE_TRACE to philly.csv")


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "philly-all.json"
    result = import_whole(Path(TRACE or ""), out)
    assert result["exit"] == 0, result
    return out


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_whole_trace(benchmark, whole: Path, algorithm: str) -> None:
    sched = whole.with_name(f"{algorithm}.json")
    figures: dict[str, dict] = {}

    def run() -> None:
        figures["run"] = measure([*oasis_opt(), "run", str(whole), "--algorithm", algorithm,
                                  "-o", str(sched)])

    benchmark.pedantic(run, rounds=1, iterations=1)
    figures["validate"] = measure([*oasis_opt(), "validate", str(whole), str(sched)])
    assert figures["run"]["exit"] == 0 and figures["validate"]["exit"] == 0, figures
    benchmark.extra_info.update({f"{k}_{f}": v for k, d in figures.items()
                                 for f, v in d.items()})
    assert figures["run"]["peak_rss_mib"] <= 4096
