"""Sweeps: rows stream to the CSV, a rerun skips what is there, an interrupted run resumes
without duplicates, and a process pool gives the same rows as running in-process."""

from __future__ import annotations

import csv
from concurrent.futures import ProcessPoolExecutor

import pytest

from oasis_opt.errors import InputError
from oasis_opt.tasks import COLUMNS, ResultStore, Task, run_tasks


def fake_execute(task: Task) -> list[dict]:
    return [{"experiment": task.experiment, "seed": task.seed, "params": task.params_key,
             "algorithm": a, "utility": float(task.seed * 10 + len(a))}
            for a in task.algorithms]


class Crash(RuntimeError):
    pass


def crashing_execute(task: Task) -> list[dict]:
    if task.seed == 3:
        raise Crash("worker died")
    return fake_execute(task)


TASKS = [Task("demo", s, {"jobs": 5}, ("oasis", "fifo")) for s in range(6)]


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_rerun_skips_done_and_interrupted_run_resumes(tmp_path):
    path = tmp_path / "r.csv"
    with pytest.raises(Crash):
        run_tasks(TASKS, crashing_execute, ResultStore(path))
    partial = _rows(path)
    assert 0 < len(partial) < 12  # what finished before the crash is on disk
    ran = run_tasks(TASKS, fake_execute, ResultStore(path))
    assert ran == 6 - len(partial) // 2
    rows = _rows(path)
    keys = [(r["seed"], r["algorithm"]) for r in rows]
    assert len(keys) == len(set(keys)) == 12
    assert run_tasks(TASKS, fake_execute, ResultStore(path)) == 0
    assert len(_rows(path)) == 12


def test_partial_last_line_is_dropped(tmp_path):
    path = tmp_path / "r.csv"
    run_tasks(TASKS[:2], fake_execute, ResultStore(path))
    with open(path, "a") as f:
        f.write("demo,7,{\"jobs\":5},oas")  # a crash in the middle of a write
    store = ResultStore(path)
    assert len(store.rows) == 4
    run_tasks(TASKS, fake_execute, store)
    assert len(_rows(path)) == 12


def test_process_pool_matches_serial(tmp_path):
    run_tasks(TASKS, fake_execute, ResultStore(tmp_path / "a.csv"))
    with ProcessPoolExecutor(max_workers=2) as ex:
        run_tasks(TASKS, fake_execute, ResultStore(tmp_path / "b.csv"), executor=ex)

    def norm(p):
        return sorted(tuple(r[c] for c in COLUMNS) for r in _rows(p))
    assert norm(tmp_path / "a.csv") == norm(tmp_path / "b.csv")


def test_foreign_csv_is_refused(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="columns differ"):
        ResultStore(path)


@pytest.mark.parametrize("row,message", [
    ("demo,0,{},oasis,,,,,,abc,,,,,,,,,,", "r.csv:2: column utility: expected a number, got "
                                          "'abc'"),
    # float() took these: an edited row read as 10, 5 and 7
    ("demo,0,{},oasis,,,,,,1_0,,,,,,,,,,", "r.csv:2: column utility: expected a number, got "
                                          "'1_0'"),
    ("demo,0,{},oasis,,,,,, 5,,,,,,,,,,", "r.csv:2: column utility: expected a number, got "
                                          "' 5'"),
    ("demo,0,{},oasis,,,,,,٧,,,,,,,,,,", "r.csv:2: column utility: expected a number, got "
                                        "'٧'"),
    ("demo,0,{},oasis,,,,", "r.csv:2: expected 20 columns, got 8"),
    ("demo,0,{},oasis,,,,,,1,,,,,,,,,,,,", "r.csv:2: expected 20 columns, got 22"),
])
def test_a_damaged_row_of_numbers_is_refused_naming_its_line(tmp_path, row, message):
    """The experiments' figures read every stored row: a word where a number goes ended in
    'internal error: could not convert string to float' (exit 1)."""
    from oasis_opt.tasks import NUMBERS
    path = tmp_path / "r.csv"
    path.write_text(",".join(COLUMNS) + "\n" + row + "\n")
    with pytest.raises(InputError, match=message):
        ResultStore(path, numbers=NUMBERS)


@pytest.mark.parametrize("cell", ["inf", "-inf", "nan", "1e-05", "-0.0", "12"])
def test_what_repr_writes_reads_back(tmp_path, cell):
    from oasis_opt.tasks import NUMBERS
    path = tmp_path / "r.csv"
    path.write_text(",".join(COLUMNS) + "\n" + f"demo,0,{{}},oasis,,,,,,{cell}" + "," * 10
                    + "\n")
    assert ResultStore(path, numbers=NUMBERS).rows[0]["utility"] == cell


def test_the_experiments_check_their_stored_numbers(tmp_path, capsys):
    from oasis_opt.cli import main
    argv = ["experiment", "ratio", "--quick", "--seeds", "1", "--workers", "0", "--out",
            str(tmp_path)]
    assert main(argv) == 0
    store = tmp_path / "ratio.csv"
    lines = store.read_text().splitlines(keepends=True)
    cells = next(csv.reader(lines[1:2]))
    cells[COLUMNS.index("ratio")] = "abc"
    with open(store, "w", newline="") as f:
        f.write(lines[0])
        csv.writer(f, lineterminator="\n").writerow(cells)
        f.writelines(lines[2:])
    capsys.readouterr()
    assert main(argv) == 2
    assert "ratio.csv:2: column ratio: expected a number, got 'abc'" in capsys.readouterr().err


def test_a_results_file_too_large_for_the_memory_limit_is_refused_before_it_is_parsed(
        tmp_path, monkeypatch):
    """A results CSV was read whole into dicts of strings whatever its size (about 1 kB a
    row): a folder's huge results.csv took the memory the limit was to keep."""
    from oasis_opt.limits import ENV
    path = tmp_path / "r.csv"
    row = "demo,0,{},oasis" + ",1" * (len(COLUMNS) - 4) + "\n"
    path.write_text(",".join(COLUMNS) + "\n" + row * 100_000)
    monkeypatch.setenv(ENV, "32M")
    with pytest.raises(InputError, match=r"r\.csv: reading this results file \(100001 lines, "
                                         r"2000020 fields\) is too large"):
        ResultStore(path)
    monkeypatch.setenv(ENV, "1G")
    assert len(ResultStore(path).rows) == 100_000


def test_an_input_error_crosses_a_process_boundary_whole():
    """A worker's InputError (a size refused in a pool process) did not unpickle in the
    parent (``__init__`` takes place and message): the pool broke, exit 1, not the message."""
    import pickle
    from concurrent.futures import ProcessPoolExecutor
    err = pickle.loads(pickle.dumps(InputError("jobs[3].worker_demand", "expected 3 values")))
    assert (err.place, err.message) == ("jobs[3].worker_demand", "expected 3 values")
    with ProcessPoolExecutor(1) as pool:
        future = pool.submit(_refuse, "horizon")
        with pytest.raises(InputError, match="^horizon: too large$"):
            future.result()


def _refuse(place: str) -> None:
    raise InputError(place, "too large")


def test_a_second_run_into_the_same_results_is_refused_while_the_first_writes(tmp_path):
    """Two sweeps into one folder at once each wrote every row (56 rows for 28 keys), and a
    rerun kept the duplicates. The second is refused while the first holds the file; after
    it, runs go on as before, and a run that wrote nothing leaves no empty file."""
    path = tmp_path / "out" / "results.csv"
    first = ResultStore(path)
    second = ResultStore(path)

    def execute_and_race(task: Task) -> list[dict]:
        if task.seed == 0:
            with pytest.raises(InputError, match="another run is writing these results now"):
                run_tasks(TASKS, fake_execute, second)
        return fake_execute(task)

    assert run_tasks(TASKS, execute_and_race, first) == 6
    assert len(_rows(path)) == 12 and len(second.rows) == 0
    assert run_tasks(TASKS, fake_execute, ResultStore(path)) == 0
    empty = tmp_path / "empty" / "results.csv"
    with pytest.raises(Crash):
        run_tasks(TASKS[3:4], crashing_execute, ResultStore(empty))  # fails before a row
    assert not empty.exists()
