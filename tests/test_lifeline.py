"""The time limit's last resort (``oasis_opt/lifeline.py``): where the solver never returns,
``oasis-opt solve --time-limit S`` still answers within ``1.1·S + 10`` seconds with the best
schedule of every online algorithm of the floor (those the lazy floor leaves until after the
solve included) and a valid bound (SPEC §6). The solver is made to hang in a child process
(every HiGHS route replaced by a loop); the lifeline ends the process, so it cannot run in
pytest's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oasis_opt import algorithms
from oasis_opt.io import load_instance, load_schedule
from oasis_opt.offline import SolveStatus, solve
from oasis_opt.validate import validate

SMALL = Path(__file__).resolve().parents[1] / "instances" / "small-s1.json"
#: The commands' ``--time-limit``: long enough that the solve reaches the (hanging) solver
#: on a busy machine too. At 1 s, with three other processes on the two cores, the floor and
#: the process's start left less than the index sets' estimate and the route answered by
#: itself ("compact/skipped/unprepared"), which keeps the promise but is not the lifeline.
LIMIT = 3
#: ``oasis-opt`` with every route of the compact MILP hanging, as HiGHS 1.16's presolve did
HANGING = """
import sys, time
from oasis_opt.offline import backends
def hang(*args, **kwargs):
    while True:
        time.sleep(0.05)
for name in list(backends.ROUTES):
    backends.ROUTES[name] = hang
backends.solve_highspy = hang
from oasis_opt.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _opt(inst) -> float:
    schedule, report = solve(inst)
    assert report.status is SolveStatus.OPTIMAL
    return report.objective


def _hanging_solve(out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", HANGING, "solve", str(SMALL), "--time-limit", str(LIMIT), "--json",
         "-o", str(out), *extra],
        env={**os.environ, "OASIS_PORTFOLIO": "0"}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def _hanging_ratio(names: str, cwd: Path | None = None
                   ) -> tuple[subprocess.CompletedProcess, float]:
    """``ratio --algorithms NAMES --time-limit LIMIT --json`` with every solver hanging, and
    its wall seconds."""
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-c", HANGING, "ratio", str(SMALL), "--algorithms", names,
         "--time-limit", str(LIMIT), "--json"],
        env={**os.environ, "OASIS_PORTFOLIO": "0"}, capture_output=True, text=True,
        timeout=120, cwd=cwd)
    return run, time.perf_counter() - start


def test_a_solver_that_never_returns_still_answers_in_time(tmp_path):
    """small-s1's best online schedule is OASiS's (218.3; the lazy floor's FIFO, RRH and
    Tetris reach 173.8 before the solve): the lifeline runs the rest and writes it. With no
    floor (``--floor ''``) it writes the empty schedule. Both commands run at once."""
    inst = load_instance(SMALL)
    start = time.perf_counter()
    runs = [_hanging_solve(tmp_path / "floor.json"),
            _hanging_solve(tmp_path / "none.json", "--floor", "")]
    (out, err), (out_none, err_none) = (p.communicate(timeout=120) for p in runs)
    seconds = time.perf_counter() - start
    assert [p.returncode for p in runs] == [0, 0], (err, err_none)
    assert seconds <= 1.1 * LIMIT + 10
    opt = _opt(inst)

    data = json.loads(out)
    best = max(algorithms.run(n, inst).total_utility for n in algorithms.builtin_names())
    assert data["status"] == "time_limit" and data["route"] == "lifeline"
    assert data["floor"] == "oasis" and data["total_utility"] == pytest.approx(best, rel=1e-9)
    assert data["bound"] >= opt * (1 - 1e-9)  # a valid bound
    report = validate(inst, load_schedule(tmp_path / "floor.json"))
    assert report.feasible and report.total_utility == pytest.approx(best, rel=1e-9)

    data = json.loads(out_none)
    assert data["route"] == "lifeline" and data["total_utility"] == 0.0
    assert data["bound"] >= opt * (1 - 1e-9)
    assert validate(inst, load_schedule(tmp_path / "none.json")).feasible


def test_ratio_with_a_solver_that_never_returns_still_answers_in_time():
    """``ratio --time-limit`` holds the same promise: its algorithms run first, and where the
    solve does not return, the lifeline writes the comparison with OPT in [the best
    validated schedule, the least bound], OASiS's (run by the lifeline, as the solve's floor
    would) the lower end."""
    inst = load_instance(SMALL)
    run, seconds = _hanging_ratio("fifo,rrh")
    assert run.returncode == 0, run.stderr
    assert seconds <= 1.1 * LIMIT + 10
    data = json.loads(run.stdout)
    opt = _opt(inst)
    best = max(algorithms.run(n, inst).total_utility for n in algorithms.builtin_names())
    assert data["status"] == "time_limit"
    assert data["opt"] == pytest.approx(best, rel=1e-9) and data["bound"] >= opt * (1 - 1e-9)
    rows = {r["algorithm"]: r for r in data["rows"]}
    assert set(rows) == {"fifo", "rrh"}
    for name, row in rows.items():
        alg = algorithms.run(name, inst).total_utility
        assert row["utility"] == pytest.approx(alg, rel=1e-9)
        assert row["opt_over_alg_low"] <= opt / alg * (1 + 1e-9) <= row["opt_over_alg"]


def test_the_lifeline_keeps_time_to_write_its_schedule():
    """Writing the answer's schedule file takes time with its size (14 MB, 2.2 s for a
    partial OASiS on the whole Philly trace): with a fixed 3 s for the write the command
    ended at 78 s of a 76 s promise. The lifeline now wakes earlier by what its best
    schedule takes to write, and keeps a better one only where it can still be written."""
    from oasis_opt.lifeline import WRITE, WRITE_PER_ALLOCATION, Lifeline
    inst = load_instance(SMALL)
    small = algorithms.run("fifo", inst)
    better = algorithms.run("oasis", inst)
    assert better.total_utility > small.total_utility
    entries = sum(len(job.allocations) for job in better.jobs)
    now = time.perf_counter()
    life = Lifeline.for_limit(100.0, now, inst, [], None, schedule_file=True)
    assert life.per_allocation == WRITE_PER_ALLOCATION
    life.on_schedule(small)
    life.on_schedule(better)
    assert life.schedule is better
    assert life.write_cost == pytest.approx(WRITE_PER_ALLOCATION * entries)
    # a schedule that would be written past the write is not taken
    late = Lifeline(now, now + 0.5 * WRITE_PER_ALLOCATION * entries, inst, [], None,
                    per_allocation=WRITE_PER_ALLOCATION)
    late.on_schedule(small)
    late.on_schedule(better)
    assert late.schedule is small or late.schedule is None
    assert late.schedule is not better
    # without a schedule file the size costs nothing
    plain = Lifeline.for_limit(100.0, now, inst, [], None)
    plain.on_schedule(better)
    assert plain.schedule is better and plain.write_cost == 0.0
    assert plain.write_at == pytest.approx(now + 1.1 * 100 + 10 - WRITE)


def test_ratio_whose_algorithm_hangs_still_answers_in_time(tmp_path):
    """``ratio``'s lifeline could answer only once its algorithms had run, and they cannot be
    stopped: a user's scheduler that hung kept ``ratio --time-limit 5`` going past 60 s (an
    outside audit), and one of 10 s ended the command after it. Now the lifeline can answer
    from the start (``compare(on_solve=)``): by the promise, with the rows of the algorithms
    that have run, none for the one still running (a note says so), OPT's lower end the best
    schedule seen (the lifeline runs the floor's built-ins) and a valid bound: Σ f_i(1)
    where the solve has told none."""
    (tmp_path / "slowalg.py").write_text(
        "import time\n"
        "def run(instance):\n"
        "    time.sleep(1000.0)\n")
    inst = load_instance(SMALL)
    run, seconds = _hanging_ratio("fifo,slowalg:run", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert seconds <= 1.1 * LIMIT + 10
    data = json.loads(run.stdout)
    rows = {r["algorithm"]: r for r in data["rows"]}
    assert rows["slowalg:run"]["utility"] is None
    assert rows["fifo"]["utility"] == pytest.approx(algorithms.run("fifo", inst).total_utility)
    assert any("slowalg:run still ran" in note for note in data["notes"])
    best = max(algorithms.run(n, inst).total_utility for n in algorithms.builtin_names())
    assert data["status"] == "time_limit" and data["opt"] == pytest.approx(best, rel=1e-9)
    trivial = sum(float(inst.utility_table[i].max()) for i in range(inst.num_jobs))
    assert _opt(inst) * (1 - 1e-9) <= data["bound"] <= trivial * (1 + 1e-9)
