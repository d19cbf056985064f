"""The online algorithms' memory (issue 21, round 42): the schedule's size is estimated from
the instance before any algorithm runs (``io.schedule_counts``/``schedule_bytes``), routes
that would pass ``--max-memory`` are refused up front, and holding allocations more
compactly changed no output."""

from __future__ import annotations

import pytest
from conftest import INSTANCE_FILES, INSTANCES
from hypothesis import given, settings
from strategies import instances

from oasis_opt import algorithms, api
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.io import (
    dumps,
    instance_bytes,
    instance_from_dict,
    load_instance,
    schedule_bytes,
    schedule_counts,
    schedule_text,
    schedule_to_dict,
)
from oasis_opt.ratio import compare

BUILT_INS = ["fifo", "drf", "rrh", "tetris", "oasis", "oasis-adaptive"]


def _instances() -> list:
    return [load_instance(p) for p in INSTANCE_FILES] + [
        generate(preset, seed=1, jobs=30) for preset in ("mixed", "ps-heavy", "uniform-1r")]


@pytest.mark.parametrize("name", BUILT_INS)
def test_the_counts_bound_every_built_in_schedule(name: str) -> None:
    """The allocations (job-slots) and server entries of every built-in algorithm's schedule,
    on the shipped instances and three generator families, are at most what
    ``schedule_counts`` says before the run."""
    for inst in _instances():
        allocations, entries = schedule_counts(inst)
        made, held = _made(algorithms.run(name, inst))
        assert made <= allocations and held <= entries, (inst.name, made, held)


def _made(s) -> tuple[int, int]:
    """A schedule's allocations (job-slots) and server entries."""
    return (sum(len(j.allocations) for j in s.jobs),
            sum(len(a.workers) + len(a.ps) for j in s.jobs for a in j.allocations))


@settings(max_examples=40, deadline=None)
@given(instances().map(instance_from_dict))
def test_the_counts_bound_schedules_of_random_instances(inst) -> None:
    """The same on random instances with zero capacities and demands, fractional PS ratios
    and one-slot horizons (tests/strategies.py)."""
    allocations, entries = schedule_counts(inst)
    for name in BUILT_INS:
        try:
            s = algorithms.run(name, inst)
        except InputError:  # OASiS refuses prices out of a double's range (subnormal f)
            continue
        made, held = _made(s)
        assert made <= allocations and held <= entries, name


def _busy() -> object:
    """An instance whose schedules are large beside the instance itself."""
    return load_instance(INSTANCES / "paper-s1.json")


def _limit_between(inst, schedules: float) -> int:
    """A limit that the instance passes and ``schedules`` schedules beside it do not."""
    return int(instance_bytes(inst) + schedules * schedule_bytes(inst))


def test_run_is_refused_before_the_algorithm_runs(tmp_path, capsys, monkeypatch) -> None:
    """``run`` at a limit between the instance's size and the instance with its schedule's
    estimate exits 2 with one line naming both sizes and the limit, before the algorithm
    runs and with nothing written; at a limit above both it runs."""
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")  # restored after --max-memory sets it
    inst = _busy()
    ran: list[str] = []
    real = algorithms.run
    monkeypatch.setattr(algorithms, "run", lambda name, *a, **k: ran.append(name)
                        or real(name, *a, **k))
    out = tmp_path / "s.json"
    path = str(INSTANCES / "paper-s1.json")
    limit = _limit_between(inst, 0.5)
    assert main(["run", path, "-a", "drf", "--max-memory", str(limit), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "jobs: a schedule of about" in err and "beside the instance" in err
    assert "too large" in err and "--max-memory" in err
    assert ran == [] and not out.exists()
    assert main(["run", path, "-a", "drf", "--max-memory", str(_limit_between(inst, 1.01)),
                 "-o", str(out)]) == 0
    assert ran == ["drf"] and out.exists()


def test_the_python_run_is_refused_too(monkeypatch) -> None:
    inst = _busy()
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(_limit_between(inst, 0.5)))
    with pytest.raises(InputError, match="a schedule of about") as err:
        api.run(inst, "fifo")
    assert err.value.place == "jobs"


def test_compare_counts_every_schedule_it_keeps(monkeypatch, tmp_path) -> None:
    """``compare`` keeps every algorithm's schedule to the end: two algorithms at a limit
    that holds one schedule beside the instance but not two are refused before either
    runs (after the solve's own refusals, which a cache folder skips here)."""
    inst = _busy()
    ran: list[str] = []
    real = algorithms.run
    monkeypatch.setattr(algorithms, "run", lambda name, *a, **k: ran.append(name)
                        or real(name, *a, **k))
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(_limit_between(inst, 1.5)))
    with pytest.raises(InputError, match="2 schedules of about") as err:
        compare(inst, ["fifo", "drf"], time_limit=5, opt_cache=tmp_path)
    assert err.value.place == "jobs" and ran == []


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.stem)
def test_a_schedule_file_is_written_as_before(path) -> None:
    """``save_schedule`` writes the file one job at a time (``schedule_text``): the same
    bytes as the whole text at once, for every built-in algorithm's schedule (empty ones and
    extras included)."""
    inst = load_instance(path)
    for name in BUILT_INS:
        s = algorithms.run(name, inst)
        assert "".join(schedule_text(s)) == dumps(schedule_to_dict(s)) + "\n", name


@pytest.mark.parametrize("name", ["oasis", "oasis-adaptive"])
def test_the_largest_tables_bound_every_table_oasis_builds(name: str, monkeypatch) -> None:
    """Every dynamic programme OASiS's subroutine sizes (``_check_size``) during a run, its
    certificate's included, is at most ``largest_tables`` of the instance."""
    from oasis_opt.online import subroutine
    from oasis_opt.online.subroutine import largest_tables
    sized: list[float] = []
    real = subroutine._check_size

    def record(job, S, W, Z, V, H, K):
        sized.append(8.0 * subroutine.dp_cells(S, W, Z, V, H, K))
        return real(job, S, W, Z, V, H, K)
    monkeypatch.setattr(subroutine, "_check_size", record)
    for inst in _instances():
        sized.clear()
        algorithms.run(name, inst)
        assert max(sized, default=0.0) <= largest_tables(inst)[0], inst.name


def test_oasis_is_refused_with_its_dp_counted(tmp_path, capsys, monkeypatch) -> None:
    """At a limit that the instance and a schedule pass but not OASiS's largest dynamic
    programme beside them, ``run -a oasis`` is refused up front naming the job, and
    ``run -a fifo`` (no such table) runs."""
    from oasis_opt.online.subroutine import largest_tables
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")  # restored after --max-memory sets it
    path = INSTANCES / "paper-s1.json"
    inst = load_instance(path)
    dp, i, _, _ = largest_tables(inst)
    assert dp > 0
    limit = str(_limit_between(inst, 1) + int(dp / 2))
    out = tmp_path / "s.json"
    assert main(["run", str(path), "-a", "oasis", "--max-memory", limit, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"OASiS's dynamic programme for jobs[{i}]" in err and not out.exists()
    assert main(["run", str(path), "-a", "fifo", "--max-memory", limit, "-o", str(out)]) == 0
