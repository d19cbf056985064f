"""Files and the validator at the largest shipped size: loading ``instances/paper-s1.json``
(200 jobs, 100 slots, 40 + 40 servers), loading an OASiS schedule of it, and validating that
schedule. Every schedule any code produces goes through ``validate``, so its cost is part of
every run. And a hostile schedule: 20 of its jobs on every worker server in every slot (4 000
overfilled cells, each naming its 20 holders; 80 000 entries).

    pytest benchmarks/bench_io.py --benchmark-only
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oasis_opt.io import load_instance, load_schedule, save_schedule
from oasis_opt.model import Allocation, Instance, JobResult, Schedule
from oasis_opt.online import oasis
from oasis_opt.validate import validate

PAPER = Path(__file__).resolve().parents[1] / "instances" / "paper-s1.json"


@pytest.fixture(scope="module")
def paper() -> Instance:
    return load_instance(PAPER)


@pytest.fixture(scope="module")
def schedule_file(paper: Instance, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("io") / "oasis.json"
    save_schedule(oasis.run(paper, certificate=False), path)
    return path


def _size(inst: Instance, sched: Schedule | None = None) -> dict[str, int]:
    out = {"jobs": inst.num_jobs, "horizon": inst.horizon,
           "worker_servers": len(inst.worker_names), "ps_servers": len(inst.ps_names),
           "instance_bytes": PAPER.stat().st_size}
    if sched is not None:
        out.update(scheduled_jobs=len(sched.jobs),
                   allocations=sum(len(j.allocations) for j in sched.jobs))
    return out


def test_load_instance(benchmark) -> None:
    inst = benchmark.pedantic(load_instance, args=(PAPER,), rounds=5, iterations=1)
    benchmark.extra_info.update(_size(inst))


def test_load_schedule(benchmark, paper: Instance, schedule_file: Path) -> None:
    sched = benchmark.pedantic(load_schedule, args=(schedule_file,), rounds=5, iterations=1)
    benchmark.extra_info.update(_size(paper, sched), schedule_bytes=schedule_file.stat().st_size)


def test_validate(benchmark, paper: Instance, schedule_file: Path) -> None:
    sched = load_schedule(schedule_file)
    report = benchmark.pedantic(validate, args=(paper, sched), rounds=5, iterations=1)
    assert report.feasible, report.violations[:3]
    benchmark.extra_info.update(_size(paper, sched), total_utility=report.total_utility)


def test_validate_crowded(benchmark, paper: Instance) -> None:
    every = {name: 1 for name in paper.worker_names}
    sched = Schedule(paper.name, "crowd", 0.0, tuple(
        JobResult(job.id, False, None, 0.0, tuple(Allocation(t, every, {})
                                                  for t in range(paper.horizon)))
        for job in paper.jobs[:20]))
    report = benchmark.pedantic(validate, args=(paper, sched), rounds=3, iterations=1)
    over = [v for v in report.violations if v.rule == "capacity"]
    assert len(over) >= paper.horizon * len(paper.worker_names)
    benchmark.extra_info.update(_size(paper, sched), violations=len(report.violations))
