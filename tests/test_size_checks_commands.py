"""The commands that run many instances size their schedules up front (issue 21, SPEC §5):
``sweep`` (and ``Grid.run``) refuses, before any algorithm or solve runs and before any file
or folder is made, a limit below what its instances' schedules would hold
(``io.check_schedule_size``): exit 2, one line naming ``jobs`` and the sizes, no traceback;
at a limit above it, it runs."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import INSTANCES

from oasis_opt import algorithms, api
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import (
    instance_bytes,
    load_instance,
    schedule_bytes,
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
