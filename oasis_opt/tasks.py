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
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError, expect_integer
from .progress import progress_bar

#: Every row has these columns; metrics a task does not produce stay empty.
COLUMNS = (
    "experiment", "seed", "params", "algorithm",
    "instance", "jobs", "horizon", "worker_servers", "ps_servers",
    "utility", "completed", "opt", "opt_kind", "ratio", "alpha", "bound_2alpha",
    "d_cert", "seconds", "decision_ms", "status",
)
#: The columns of ``COLUMNS`` that hold a number (or nothing): the figures read them.
NUMBERS = ("seed", "jobs", "horizon", "worker_servers", "ps_servers", "utility", "completed",
           "opt", "ratio", "alpha", "bound_2alpha", "d_cert", "seconds", "decision_ms")


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
    """Append-only CSV of rows; knows which keys are already done. ``columns`` and ``key``
    (row → key tuple) default to the experiments'; a user's grid (``oasis_opt.grid``) keeps
    its own. A stored row of another length, or with a word in one of the columns
    ``numbers``, is refused naming its line."""

    def __init__(self, path: str | Path, columns: Sequence[str] = COLUMNS,
                 key: Callable[[dict[str, Any]], tuple[str, ...]] = row_key,
                 numbers: Sequence[str] = ()) -> None:
        self.path = Path(path)
        self.columns = tuple(columns)
        self.key = key
        self.numbers = tuple(numbers)
        self.rows: list[dict[str, str]] = []
        from .io import check_output
        # a results path that cannot be written (a folder there, a file for its folder) is
        # refused before any task runs; the folder itself is made by the first append
        check_output(self.path)
        if self.path.exists():
            self.rows = self._read()
        self.done = {self.key(r) for r in self.rows}

    def _read(self) -> list[dict[str, str]]:
        from .io import check_rows_fit, read_input
        from .limits import human, max_memory
        data = read_input(self.path, "results file", int(max_memory() // 2),
                          f"the most the memory limit {human(max_memory())} lets read (raise "
                          "it with --max-memory)")
        check_rows_fit(str(self.path), data, "results file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(str(self.path), f"not a results file: not UTF-8 text (byte "
                                             f"{exc.start}); use another output folder") \
                from None
        if text and not text.endswith("\n"):
            # A crash mid-append left a partial last line: drop it, keep the rest.
            text = text[: text.rfind("\n") + 1]
            self._rewrite(text)
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header is not None and tuple(header) != self.columns:
            raise InputError(str(self.path), "not a results file of this version of oasis-opt "
                                             "(columns differ); use another output folder")
        from .io import float_text
        rows = []
        for cells in reader:
            if not cells:
                continue  # a blank line, as csv.DictReader skips it
            place = f"{self.path}:{reader.line_num}"
            if len(cells) != len(self.columns):
                raise InputError(place, f"expected {len(self.columns)} columns, got "
                                        f"{len(cells)}; use another output folder")
            row = dict(zip(self.columns, cells, strict=True))
            for col in self.numbers:
                if row[col] != "" and not float_text(row[col]):
                    raise InputError(place, f"column {col}: expected a number, got "
                                            f"{row[col][:40]!r}; use another output folder")
            rows.append(row)
        return rows

    def _rewrite(self, text: str) -> None:
        from .io import write_text_atomic
        write_text_atomic(self.path, text)

    def append(self, rows: Sequence[dict[str, Any]]) -> None:
        new = [r for r in rows if self.key(r) not in self.done]
        if not new:
            return
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, extrasaction="ignore",
                           lineterminator="\n")
        if fresh:
            w.writeheader()
        for r in new:
            w.writerow({k: _fmt(r.get(k)) for k in self.columns})
        from .io import append_text
        append_text(self.path, buf.getvalue())  # one write per task: its rows land together
        for r in new:
            s = {k: _fmt(r.get(k)) for k in self.columns}
            self.rows.append(s)
            self.done.add(self.key(s))


def _fmt(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return repr(x)
    return str(x)


# --- executors ---------------------------------------------------------------------------


def check_workers(workers: int | None) -> None:
    """``workers``: None (every core) or 0 … max(64, 8 × cores), refused by name before any
    work (the pool's own "max_workers must be greater than 0" named none)."""
    if workers is None:
        return
    expect_integer("workers", workers)
    most = max(64, 8 * (os.cpu_count() or 1))
    if workers < 0:
        raise InputError("workers", f"must be at least 0, got {workers}")
    if workers > most:
        raise InputError("workers", f"{workers} worker processes is too many for this machine "
                                      f"(at most {most})")


def _start_worker(table: Any) -> None:
    """A pool worker's first step: it ends with the process that started it
    (``limits.die_with_parent``) and knows the caller's algorithms (``algorithms.install``)."""
    from . import algorithms
    from .limits import die_with_parent
    die_with_parent()
    algorithms.install(table)


@contextmanager
def make_executor(workers: int | None = None,
                  dask: str | None = None) -> Iterator[Executor | None]:
    """A local process pool (default; ``workers=0`` gives None: ``run_tasks`` then runs
    in-process), or a Dask executor:
    ``dask="local"`` starts a local cluster at the first task (of ``workers`` processes, 2
    by default); ``dask="tcp://HOST:PORT"`` connects to a running scheduler, whose workers
    are its own (``workers`` with it is refused: it was taken and ignored)."""
    check_workers(workers)
    if dask not in (None, "local") and workers:
        raise InputError("workers", "sizes a local pool or a --dask local cluster; a Dask "
                                    "scheduler's workers are its own")
    if dask is None and workers == 0:
        yield None
        return
    from . import algorithms
    table = algorithms.registered()  # the caller's register(): workers must know them too
    if dask is None:
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1,
                                 initializer=_start_worker, initargs=(table,)) as ex:
            yield ex
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("dask", "needs the optional extra: pip install 'oasis-opt[dask]'") \
            from None
    if dask == "local":
        # Started by the first task, not here: the checks a command makes between this and
        # its first task refuse bad input at once, not after the cluster's seconds of start.
        opened: list[Any] = []  # the cluster, then its client: closed in reverse

        def start() -> Executor:
            opened.append(LocalCluster(n_workers=workers or 2, threads_per_worker=1,
                                       processes=True, dashboard_address=None))
            opened.append(Client(opened[0]))
            return _client_executor(opened[1], table)
        try:
            yield LazyExecutor(start)
        finally:
            for thing in reversed(opened):
                thing.close()
        return
    _probe_scheduler(dask)
    try:
        client = Client(dask, timeout=DASK_CONNECT_SECONDS)
    except Exception as exc:  # the scheduler went away between the probe and here
        raise InputError("dask", f"cannot reach the Dask scheduler at {dask}: "
                                 f"{_first_line(exc)}") from None
    try:
        yield _client_executor(client, table)
    finally:
        client.close()


def _client_executor(client: Any, table: dict[str, Any]) -> Executor:
    """``client``'s executor, its workers given the algorithms registered here (``table``)."""
    if table:
        client.register_plugin(_algorithms_plugin(table))
    # pure=False: Dask would tokenize every argument (0.5 s of a 5 000-job pricing pass)
    return client.get_executor(pure=False)


class LazyExecutor(Executor):
    """The executor ``start()`` returns, started by the first ``submit``."""

    def __init__(self, start: Callable[[], Executor]) -> None:
        self._start = start
        self._executor: Executor | None = None

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if self._executor is None:
            self._executor = self._start()
        return self._executor.submit(fn, *args, **kwargs)


#: Seconds to connect to a Dask scheduler; the whole handshake gets twice as long.
DASK_CONNECT_SECONDS = 5.0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _probe_scheduler(address: str) -> None:
    """Connect to ``address`` and complete Dask's handshake within a deadline before the
    client does: ``Client`` itself waits forever on a server that accepts and never answers
    (an HTTP server), and allocates whatever length a stranger's first bytes claim (a
    ``MemoryError``). Anything but a handshake is ``InputError("dask", …)``."""
    import asyncio

    from distributed.comm import connect

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=DASK_CONNECT_SECONDS),
                                      2 * DASK_CONNECT_SECONDS)
        await comm.close()

    try:
        asyncio.run(handshake())
    except (asyncio.TimeoutError, TimeoutError):
        raise InputError("dask", f"no Dask scheduler answered at {address} within "
                                 f"{2 * DASK_CONNECT_SECONDS:g} s") from None
    except MemoryError:  # a length read from a stranger's bytes
        raise InputError("dask", f"the server at {address} does not speak Dask's "
                                 "protocol") from None
    except Exception as exc:  # unreachable, not an address, not Dask
        raise InputError("dask", f"cannot reach the Dask scheduler at {address}: "
                                 f"{_first_line(exc)}") from None


def _algorithms_plugin(table: dict[str, Any]) -> Any:
    """A Dask worker plugin that installs the algorithms registered in the client's process
    on every worker, those that join later included (Dask pickles it with cloudpickle, so
    functions defined in a notebook or ``__main__`` travel by value)."""
    from distributed import WorkerPlugin

    class RegisteredAlgorithms(WorkerPlugin):
        name = "oasis-opt-algorithms"

        def setup(self, worker: Any) -> None:
            from oasis_opt import algorithms
            algorithms.install(table)

    return RegisteredAlgorithms()


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Hold ``path`` (the results file; made empty if missing, removed again if it stays
    so) for this run alone: a second run into the same file is refused, naming it. Two
    sweeps into one folder at once each wrote every row (56 rows for 28 keys), and the
    duplicates stayed. Where there is no ``fcntl`` (not POSIX), nothing is held."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    from .io import os_reason
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a")  # noqa: SIM115 (held open for the run)
    except OSError as exc:
        raise InputError(str(path), f"cannot write: {os_reason(exc)}") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InputError(str(path), "another run is writing these results now; wait "
                                        "for it to end or use another output folder") from None
        yield
    finally:
        handle.close()  # (the lock goes with it)
        if not existed and path.exists() and path.stat().st_size == 0:
            path.unlink()


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
    with _writing(store.path), progress_bar(progress, len(todo), description) as bar:
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
