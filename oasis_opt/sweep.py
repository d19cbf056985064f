"""Sweeps: many (instance, algorithm, parameters) runs on any ``concurrent.futures`` executor.

A ``Task`` names one unit of work by ``(experiment, seed, params)``; it produces one row per
algorithm, keyed by ``(experiment, seed, params, algorithm)``. Rows stream to a CSV as tasks
finish (one append and flush per task, so an interrupted sweep loses at most the tasks in
flight), and a rerun skips every task whose rows are already there. The executor is a local
process pool by default, or a Dask cluster through ``distributed.Client.get_executor()``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .progress import progress_bar

#: Every row has these columns; metrics a task does not produce stay empty.
COLUMNS = (
    "experiment", "seed", "params", "algorithm",
    "instance", "jobs", "horizon", "worker_servers", "ps_servers",
    "utility", "completed", "opt", "opt_kind", "ratio", "alpha", "bound_2alpha",
    "d_cert", "seconds", "decision_ms", "status",
)


@dataclass(frozen=True)
class Task:
    """One unit of work. ``params`` is a JSON-able dict (instance and algorithm settings)."""

    experiment: str
    seed: int
    params: dict[str, Any] = field(default_factory=dict)
    algorithms: tuple[str, ...] = ()

    @property
    def params_key(self) -> str:
        return json.dumps(self.params, sort_keys=True, separators=(",", ":"))

    def keys(self) -> set[tuple[str, str, str, str]]:
        return {(self.experiment, str(self.seed), self.params_key, a) for a in self.algorithms}


def row_key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (str(row["experiment"]), str(row["seed"]), str(row["params"]), str(row["algorithm"]))


# --- the CSV store -----------------------------------------------------------------------


class ResultStore:
    """Append-only CSV of rows; knows which keys are already done."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.rows: list[dict[str, str]] = []
        if self.path.exists():
            self.rows = self._read()
        self.done = {row_key(r) for r in self.rows}

    def _read(self) -> list[dict[str, str]]:
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            # A crash mid-append left a partial last line: drop it, keep the rest.
            text = text[: text.rfind("\n") + 1]
            self._rewrite(text)
        reader = csv.DictReader(io.StringIO(text))
        if reader.fieldnames is not None and tuple(reader.fieldnames) != COLUMNS:
            raise InputError(str(self.path), "not a results file of this version of oasis-opt "
                                             "(columns differ); use another --out")
        return list(reader)

    def _rewrite(self, text: str) -> None:
        from .io import write_text_atomic
        write_text_atomic(self.path, text)

    def append(self, rows: Sequence[dict[str, Any]]) -> None:
        new = [r for r in rows if row_key(r) not in self.done]
        if not new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
        if fresh:
            w.writeheader()
        for r in new:
            w.writerow({k: _fmt(r.get(k)) for k in COLUMNS})
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(buf.getvalue())  # one write per task: rows of a task land together
            f.flush()
            os.fsync(f.fileno())
        for r in new:
            s = {k: _fmt(r.get(k)) for k in COLUMNS}
            self.rows.append(s)
            self.done.add(row_key(s))


def _fmt(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return repr(x)
    return str(x)


# --- executors ---------------------------------------------------------------------------


@contextmanager
def make_executor(workers: int | None = None,
                  dask: str | None = None) -> Iterator[Executor | None]:
    """A local process pool (default; ``workers=0`` gives None: ``run_tasks`` then runs
    in-process), or a Dask executor:
    ``dask="local"`` starts a local cluster; ``dask="tcp://HOST:PORT"`` connects to a running
    scheduler."""
    if dask is None and workers == 0:
        yield None
        return
    if dask is None:
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as ex:
            yield ex
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("--dask", "needs the optional extra: pip install 'oasis-opt[dask]'") \
            from None
    if dask == "local":
        cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        cluster = None
        try:
            client = Client(dask, timeout=5)
        except OSError as exc:
            raise InputError("--dask", f"cannot reach the Dask scheduler at {dask}: {exc}") \
                from None
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_tasks(
    tasks: Iterable[Task],
    execute: Callable[[Task], list[dict[str, Any]]],
    store: ResultStore,
    executor: Executor | None = None,
    progress: bool = False,
    description: str = "tasks",
) -> int:
    """Run the tasks not yet in ``store``; append each task's rows as it finishes.

    Returns the number of tasks run. ``execute`` must be a module-level function (it is
    pickled to worker processes)."""
    todo = [t for t in tasks if not t.keys() <= store.done]
    if not todo:
        return 0
    with progress_bar(progress, len(todo), description) as bar:
        if executor is None:
            # in-process, in order: each task's rows are stored before the next task starts
            # (an exception then leaves exactly the finished tasks on disk)
            for t in todo:
                store.append(execute(t))
                bar.advance()
            return len(todo)
        futures = {executor.submit(execute, t): t for t in todo}
        for fut in as_completed(futures):
            store.append(fut.result())
            bar.advance()
    return len(todo)


# --- sweep configs -----------------------------------------------------------------------


def load_config(path: str | Path) -> dict[str, Any]:
    """A sweep config (JSON): ``{"experiment": NAME, "seeds": K, "quick": false,
    "out": DIR}`` runs one of the named experiments (``oasis-opt experiment``) on the chosen
    executor."""
    from .io import read_json
    data = read_json(path, "sweep config")
    if not isinstance(data, dict):
        raise InputError(str(path), "a sweep config must be a JSON object")
    from .experiments import EXPERIMENTS
    name = data.get("experiment")
    if name not in EXPERIMENTS:
        raise InputError("experiment", f"unknown experiment {name!r}; choose from "
                                       f"{', '.join(EXPERIMENTS)}")
    seeds = data.get("seeds")
    if seeds is not None and (not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1):
        raise InputError("seeds", f"must be a positive integer, got {seeds!r}")
    unknown = set(data) - {"experiment", "seeds", "quick", "out"}
    if unknown:
        raise InputError(sorted(unknown)[0], "unknown field")
    return {"experiment": name, "seeds": seeds, "quick": bool(data.get("quick", False)),
            "out": data.get("out", "results")}


def run_sweep_cli(config: str, *, workers: int | None, dask: str | None, out: str | None,
                  progress: bool) -> dict[str, Any]:
    from .experiments import run_experiment
    cfg = load_config(config)
    start = time.perf_counter()
    with make_executor(workers, dask) as ex:
        result = run_experiment(cfg["experiment"], seeds=cfg["seeds"], out=out or cfg["out"],
                                quick=cfg["quick"], progress=progress, executor=ex)
    return {"done": result["rows"], "new": result["new_rows"], "csv": result["csv"],
            "figure": result["figure"], "seconds": time.perf_counter() - start,
            "executor": "dask" if dask else "processes"}
