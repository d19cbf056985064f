"""Speed of each baseline's whole run on the paper preset (200 jobs, 100 slots, 40 + 40
servers): the slot loop, the policy and building the schedule; validation is timed apart.

Run: ``pytest benchmarks/bench_baselines.py --benchmark-only``.
"""

from __future__ import annotations

import pytest

from oasis_opt import algorithms
from oasis_opt.generator import generate
from oasis_opt.model import Instance
from oasis_opt.validate import validate

BASELINES = ["fifo", "drf", "rrh", "tetris"]


@pytest.fixture(scope="module")
def paper() -> Instance:
    return generate("paper", seed=1)


@pytest.mark.parametrize("name", BASELINES)
def test_baseline_paper(benchmark, paper: Instance, name: str) -> None:
    run = algorithms.get(name)
    schedule = benchmark(run, paper)
    report = validate(paper, schedule)
    assert report.feasible, report.violations[:3]
    benchmark.extra_info.update({
        "instance": paper.name, "jobs": paper.num_jobs, "horizon": paper.horizon,
        "worker_servers": len(paper.worker_names), "ps_servers": len(paper.ps_names),
        "resources": len(paper.resources), "total_utility": schedule.total_utility,
        "completed": schedule.completed,
    })
