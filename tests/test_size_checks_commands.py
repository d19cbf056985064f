"""The commands that run many instances size their schedules up front (issue 21, SPEC §5):
``sweep`` (and ``Grid.run``), ``verify`` and ``bench`` refuse, before any algorithm or solve
runs and before any file or folder is made, a limit below what their instances' schedules
would hold (``io.check_schedule_size``): exit 2, one line naming ``jobs`` and the sizes, no
traceback; at a limit above it, and at the default one, they run. ``adversary`` searches a
bounded space of small instances and makes no such check (``SearchSpace.check``)."""

from __future__ import annotations

import json
import random
import shutil

import pytest
from conftest import INSTANCES

from oasis_opt import algorithms, api, bench
from oasis_opt import verifier as verify
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.io import (
    instance_bytes,
    instance_from_dict,
    load_instance,
    schedule_bytes,
    schedule_counts,
)
from oasis_opt.limits import human
from oasis_opt.offline.floor import floor_names
from oasis_opt.online.subroutine import largest_tables

#: What the floor of an exact solve holds at once: one schedule per built-in algorithm.
FLOOR = len(floor_names(None))


def _limit(inst, schedules: float, dp: bool = False) -> int:
    """A limit that holds ``inst`` and ``schedules`` of its schedules (and OASiS's largest
    table, with ``dp``)."""
    table = largest_tables(inst)[0] if dp else 0.0
    return int(instance_bytes(inst) + schedules * schedule_bytes(inst) + table)


def _refused(err: str, what: str) -> None:
    """One line naming ``jobs`` and the sizes, without a traceback."""
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert f"jobs: {what}" in err and "is too large: about" in err, err
    assert "raise it with --max-memory" in err, err


@pytest.fixture
def runs(monkeypatch) -> list[str]:
    """The instances ``algorithms.run`` is called on, by name, from now on."""
    seen: list[str] = []
    real = algorithms.run
    monkeypatch.setattr(algorithms, "run", lambda name, inst, *a, **k: seen.append(inst.name)
                        or real(name, inst, *a, **k))
    return seen


# --- sweep -------------------------------------------------------------------------------


def _grid_file(tmp_path, reference) -> str:
    shutil.copy(INSTANCES / "paper-s1.json", tmp_path / "paper-s1.json")
    grid = {"format": "oasis-sweep/1", "instances": ["paper-s1.json"],
            "algorithms": {"fifo": {}}, "reference": reference, "out": "res"}
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(grid))
    return str(path)


def test_sweep_is_refused_before_its_first_task(tmp_path, capfd, monkeypatch, runs):
    """An instance file whose schedule does not fit beside it: exit 2 naming the instance,
    ``jobs`` and the schedule's size, nothing run (the grid's one-job probe aside) and no
    results folder; at a limit that holds one schedule the grid runs."""
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")  # restored after --max-memory sets it
    inst = load_instance(INSTANCES / "paper-s1.json")
    grid = _grid_file(tmp_path, None)
    argv = ["sweep", grid, "--workers", "0", "--json", "--max-memory"]
    assert main([*argv, str(_limit(inst, 0.5))]) == 2
    err = capfd.readouterr().err
    _refused(err, f"a schedule of about {human(schedule_bytes(inst))} (200 jobs")
    assert "error: paper-s1.json: jobs:" in err
    assert inst.name not in runs and not (tmp_path / "res").exists()
    assert main([*argv, str(_limit(inst, 1.01))]) == 0
    assert runs.count(inst.name) == 1
    assert len((tmp_path / "res" / "results.csv").read_text().splitlines()) == 2


def test_a_sweep_with_a_reference_counts_the_floor_of_its_solve(tmp_path, capfd, monkeypatch,
                                                                runs):
    """The reference solve holds one schedule of each built-in algorithm (its floor, OASiS
    among them): a limit that holds the grid's own schedule but not the floor's is refused
    before the solve, and the Python grid is refused the same way."""
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")
    inst = load_instance(INSTANCES / "paper-s1.json")
    grid = _grid_file(tmp_path, {"solve": {"time_limit": 1}})
    limit = _limit(inst, FLOOR - 1, dp=True)
    assert main(["sweep", grid, "--workers", "0", "--max-memory", str(limit)]) == 2
    err = capfd.readouterr().err
    _refused(err, f"{FLOOR} schedules of about {human(schedule_bytes(inst))} each")
    assert "OASiS's dynamic programme" in err
    assert runs == ["probe"] and not (tmp_path / "res").exists()
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(limit))
    with pytest.raises(InputError, match=f"jobs: {FLOOR} schedules of about") as caught:
        api.sweep(grid, out=tmp_path / "api")
    assert caught.value.place == "paper-s1.json" and not (tmp_path / "api").exists()


# --- verify ------------------------------------------------------------------------------

#: Two long jobs: four instances whose schedules are large beside the instance; nothing can
#: earn (OPT = 0 at once), so the default-limit run is quick.
LONG = {"format": "oasis-space/1", "name": "long", "horizon": 400, "resources": ["gpu"],
        "worker_servers": [[8], [8]], "ps_servers": [[8]], "jobs": 2, "arrival": [0, 50],
        "workload": [400], "max_workers": [8], "ps_ratio": [1], "worker_demand": [[1]],
        "ps_demand": [[1]], "utility": [{"kind": "table", "values": [0]}]}


def test_verify_is_refused_before_anything_runs(tmp_path, capfd, monkeypatch, runs):
    """A space whose instances' schedules (the floor of the exact MILP's solve among them)
    would pass the limit: exit 2 at ``jobs`` before the probe run, with no output folder;
    the Python ``verify`` is refused too; at the default limit the space is verified."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps(LONG))
    big = verify.largest_instance(verify.space_from_dict(LONG))
    limit = _limit(big, FLOOR - 1, dp=True)
    out = tmp_path / "out"
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")
    assert main(["verify", str(path), "-a", "fifo", "-o", str(out), "--max-memory",
                 str(limit)]) == 2
    err = capfd.readouterr().err
    _refused(err, f"the largest instance of this space: {FLOOR} schedules of about "
                  f"{human(schedule_bytes(big))} each (2 jobs")
    assert runs == [] and not out.exists()
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(limit))
    with pytest.raises(InputError, match="largest instance of this space") as caught:
        api.verify(LONG, "fifo", out=out)
    assert caught.value.place == "jobs" and runs == [] and not out.exists()
    monkeypatch.delenv("OASIS_MAX_MEMORY")
    assert main(["verify", str(path), "-a", "fifo", "-o", str(out), "--json"]) == 0
    summary = json.loads(capfd.readouterr().out)
    assert summary["size"] == 4 and summary["counts"] == {"opt_zero": 4}
    assert len(runs) == 5 and (out / "instances.csv").exists()  # the probe and the four


def _spaces() -> list[dict]:
    """The named spaces, and one whose largest workload no job can do by the horizon."""
    named = [json.loads(p.read_text()) for p in sorted((INSTANCES / "spaces").glob("*.json"))]
    late = {**LONG, "name": "late", "horizon": 6, "jobs": 2, "arrival": [0, 3],
            "workload": [4, 30, 90], "max_workers": [1, 3], "worker_demand": [[1], [3]],
            "utility": [{"kind": "table", "values": [5, 1]}]}
    return [*named, late]


@pytest.mark.parametrize("space", _spaces(), ids=lambda s: s["name"])
def test_the_largest_instance_bounds_every_instance_of_its_space(space):
    """What ``check_schedule_size`` counts — a schedule's job-slots and server entries, the
    jobs, OASiS's largest table — is at least as much on ``largest_instance`` as on any
    instance of the space (every one of a small space, 400 drawn from a large one), and the
    table is one that some instance builds."""
    s = verify.space_from_dict(space)
    big = verify.largest_instance(s)
    assert big.num_jobs == s.jobs + (s.name == "late")  # one job more for OASiS's table
    slots, entries = schedule_counts(big)
    table = largest_tables(big)[0]
    indices = range(s.size) if s.size <= 1000 else random.Random(0).sample(range(s.size), 400)
    largest = 0.0
    for n in indices:
        inst = instance_from_dict(s.instance_dict(n))
        a, e = schedule_counts(inst)
        assert a <= slots and e <= entries and inst.num_jobs <= big.num_jobs, n
        assert instance_bytes(inst) <= instance_bytes(big)
        largest = max(largest, largest_tables(inst)[0])
    assert largest <= table
    if s.size <= 1000:
        assert largest == table  # not a bound that refuses spaces for no reason


# --- bench -------------------------------------------------------------------------------


@pytest.fixture
def measured(monkeypatch) -> list[str]:
    """``bench``'s measurements replaced by rows of their names (a quick run takes 15 s)."""
    seen: list[str] = []

    def row(name: str) -> dict:
        seen.append(name)
        return bench._row(name, "stub", 1.0, "s", 1)
    monkeypatch.setattr(bench, "bench_oasis", lambda *a, **k: [row("oasis")])
    for name in ("bench_baseline", "bench_solver", "bench_colgen", "bench_growth"):
        monkeypatch.setattr(bench, name, lambda *a, _n=name, **k: row(_n))
    monkeypatch.setattr(bench, "bench_ratios", lambda *a, **k: [row("bench_ratios")])
    return seen


def test_bench_is_refused_before_it_measures(tmp_path, capfd, monkeypatch, measured):
    """paper-s1, the instance ``bench`` times every algorithm on, holds three schedules at
    once in OASiS's rows: a limit below them is refused before any measurement and before
    the cache folder is made; above them, and at the default limit, ``bench`` runs."""
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")
    paper = generate("paper", seed=1)
    cache = tmp_path / "cache"
    argv = ["bench", "--quick", "--json", "--opt-cache", str(cache)]
    assert main([*argv, "--max-memory", str(_limit(paper, 2.5, dp=True))]) == 2
    err = capfd.readouterr().err
    _refused(err, f"3 schedules of about {human(schedule_bytes(paper))} each (200 jobs")
    assert measured == [] and not cache.exists()
    assert main([*argv, "--max-memory", str(_limit(paper, 3.01, dp=True))]) == 0
    assert "oasis" in measured and "bench_ratios" in measured and cache.is_dir()
    capfd.readouterr()
    monkeypatch.delenv("OASIS_MAX_MEMORY")
    measured.clear()
    assert main(["bench", "--quick", "--json"]) == 0
    assert json.loads(capfd.readouterr().out)["rows"] and "oasis" in measured


# --- solve -------------------------------------------------------------------------------


def test_solve_counts_the_schedules_its_floor_keeps(tmp_path, capfd, monkeypatch, runs):
    """A time-limited solve keeps every floor schedule to the end beside the one it is
    making (not OASiS's tables, which OASiS checks as it decides each job, leaving the floor
    without it where one does not fit): below that, exit 2 at ``jobs`` naming the finished
    schedules, before any
    algorithm runs and with no output file; just above it the check lets the solve on (the
    compact model's own size check, at ``instance``, is the next to speak); the library's
    ``offline.solve`` refuses the same way."""
    from oasis_opt.io import held_schedule_bytes
    from oasis_opt.offline import solve
    monkeypatch.setenv("OASIS_MAX_MEMORY", "8G")
    inst = load_instance(INSTANCES / "small-s0.json")
    need = _limit(inst, 1) + FLOOR * held_schedule_bytes(inst)
    out = tmp_path / "s.json"
    argv = ["solve", str(INSTANCES / "small-s0.json"), "--time-limit", "5", "-o", str(out),
            "--max-memory"]
    assert main([*argv, str(int(need * 0.9))]) == 2
    _refused(capfd.readouterr().err, f"a schedule of about {human(schedule_bytes(inst))} (7 "
                                     f"jobs")
    assert runs == [] and not out.exists()
    assert main([*argv, str(int(need * 1.01))]) == 2
    err = capfd.readouterr().err
    assert "error: instance: the compact MILP" in err and "error: jobs" not in err, err
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(int(need * 0.9)))
    with pytest.raises(InputError, match=f"^jobs: .*, {FLOOR} finished schedules"):
        solve(inst, time_limit=5)
    monkeypatch.setenv("OASIS_MAX_MEMORY", str(int(need * 10)))
    assert solve(inst, time_limit=5)[1].status.value == "optimal" and runs
