"""The in-memory model: an ``Instance`` (SPEC §1) and a ``Schedule`` (SPEC §5).

Instances keep the file's structure (server groups, job records) for lossless round trips and
expose numpy arrays that algorithms index (shapes in the property docstrings):
``H`` worker servers, ``K`` PS servers, ``R`` resources, ``J`` jobs, ``T`` slots.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from .errors import expect_type
from .utility import Utility


def _read_only(a: np.ndarray) -> np.ndarray:
    """``a``'s values in a read-only array that cannot be made writable again. Algorithms are
    handed the instance itself: one that wrote into what it read (``free =
    inst.worker_capacity; free -= demand``) changed the capacities, demands or utilities that
    the validator then judged its schedule by, and every later run and solve in the process;
    now the write raises where it is made. A read-only flag alone is undone by
    ``a.setflags(write=True)`` (the usual answer to "assignment destination is read-only"),
    so the array handed out is a view of a read-only buffer, which numpy refuses to make
    writable: a ``bytes`` copy of a small array (a job's demand vector: 177 bytes an array
    against 144 unlocked; a view through a ``memoryview`` holds 752), a read-only
    ``memoryview`` of a large one, not copied (the utility table may be most of the memory
    limit)."""
    if _locked(a):
        return a
    shape = a.shape
    if a.dtype.hasobject:  # (no such array in an instance; a buffer cannot hold one)
        a.setflags(write=False)
        return a
    if a.nbytes <= COPY_BYTES:
        out = np.frombuffer(a.tobytes(), dtype=a.dtype)
    else:
        a = np.ascontiguousarray(a)  # (copies only an array that is not contiguous)
        a.setflags(write=False)
        out = np.frombuffer(memoryview(a).toreadonly(), dtype=a.dtype)
    return out if out.shape == shape else out.reshape(shape)


#: ``_read_only`` copies arrays of at most this many bytes into ``bytes``.
COPY_BYTES = 1 << 16


def _locked(a: np.ndarray) -> bool:
    """Whether ``a`` is a view through a read-only buffer (``_read_only``; a pickled copy's
    arrays are not, until ``_freeze``)."""
    base: Any = a
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, bytes) or isinstance(base, memoryview) and base.readonly


class _array_property(cached_property):  # type: ignore[type-arg]
    """``cached_property`` for the instance's arrays: computed once, read-only
    (``_read_only``)."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        value = super().__get__(instance, owner)
        if isinstance(value, np.ndarray) and instance is not None and not _locked(value):
            value = instance.__dict__[self.attrname] = _read_only(value)
        return value


def _freeze(state: dict[str, Any]) -> dict[str, Any]:
    """A pickled instance's or job's state with its arrays read-only again (pickling copies
    arrays writable: the process pool's and Dask's workers)."""
    return {k: _read_only(v) if isinstance(v, np.ndarray) else v for k, v in state.items()}


#: Two floats are equal when they differ by at most this, relative (SPEC §2, §3).
REL_TOL = 1e-6
#: Capacity rows allow this much float noise in the validator, relative to the capacity (and
#: none on a capacity of 0). It was ``1e-9·max(1, C)``: an absolute 1e-9 below a capacity of
#: 1, which let three workers of 1e-9 GPUs onto a server of 2e-9 where every fit count of
#: the package (``floor(C/α + 1e-9)``) and the solver's optimum allow two.
CAP_TOL = 1e-9
#: The slack of every count of units that fit where the package places them (the online
#: algorithms, OASiS's subroutine and column generation's pricing and placements):
#: ``floor(free / α + FIT_EPS)``. It absorbs float noise in free capacity (2.9999999999999996
#: units) and lets a unit overfill a server by at most ``FIT_EPS·α``; the exact solver's
#: capacity rows allow ``formulations.common.ROW_SLACK``·C, more than any placement takes,
#: and the validator ``CAP_TOL``·C, more than both (tests/test_tolerance.py).
FIT_EPS = 1e-10


@dataclass(frozen=True)
class ServerGroup:
    """One server entry of a pool; ``count`` servers named ``<name>0 … <name>{count-1}``."""

    name: str
    capacity: tuple[float, ...]
    count: int | None = None

    @property
    def names(self) -> list[str]:
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]


@dataclass(frozen=True)
class Training:
    """Where a workload comes from (SPEC §1):
    ``V = ceil(E · chunks · M · (τ + 2g/b) / slot_seconds)`` worker-slots."""

    epochs: float
    chunks: int
    minibatches_per_chunk: float
    minibatch_seconds: float  # τ: compute seconds per minibatch
    gradient_gbit: float  # g: gradient (= parameter) size pushed and pulled per minibatch
    bandwidth_gbps: float  # b: a worker's bandwidth
    slot_seconds: float
    model: str | None = None

    def workload(self) -> int:
        seconds = (self.epochs * self.chunks * self.minibatches_per_chunk
                   * (self.minibatch_seconds + 2.0 * self.gradient_gbit / self.bandwidth_gbps))
        return max(1, math.ceil(seconds / self.slot_seconds - 1e-9))


@dataclass(frozen=True)
class Job:
    """One training job; demand vectors have shape (R,)."""

    id: str
    arrival: int
    workload: int
    max_workers: int
    ps_ratio: float
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    utility: Utility
    requested_workers: int
    training: Training | None = None

    def __post_init__(self) -> None:
        for name in ("worker_demand", "ps_demand"):  # read-only: ``_read_only``
            object.__setattr__(self, name,
                               _read_only(np.asarray(getattr(self, name), dtype=float)))

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(_freeze(state))

    def ps_needed(self, workers: int) -> int:
        """PSs that ``workers`` workers need: ``ceil(workers / γ)``."""
        return ps_needed(workers, self.ps_ratio)


def ps_needed(workers: Any, ratio: float) -> Any:
    """``ceil(workers / ratio)`` (scalar or array), robust to float noise in the ratio
    (``w/γ`` within 1e-9 above an integer counts as that integer), and never 0 for a positive
    worker count however large γ is (``ceil`` of a tiny positive quotient is 1)."""
    if isinstance(workers, (int, np.integer)) and isinstance(ratio, (int, float, np.floating)):
        # The scalar case without numpy's array machinery (the simulator asks once per worker
        # it places): the same double arithmetic, so the same answer.
        w = float(workers)
        return max(1, math.ceil(w / float(ratio) - 1e-9)) if w > 0 else 0
    w = np.asarray(workers, dtype=float)
    out = np.ceil(w / ratio - 1e-9).astype(np.int64)
    out = np.where(w > 0, np.maximum(out, 1), 0)
    return int(out) if out.ndim == 0 else out


@dataclass(frozen=True, eq=False)
class Instance:
    """A scheduling instance (SPEC §1, §5)."""

    name: str
    horizon: int
    resources: tuple[str, ...]
    worker_groups: tuple[ServerGroup, ...]
    ps_groups: tuple[ServerGroup, ...]
    jobs: tuple[Job, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __getstate__(self) -> dict[str, Any]:
        # the cached indexes are mapping proxies, which do not pickle: made again on use
        return {k: v for k, v in self.__dict__.items() if not isinstance(v, MappingProxyType)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(_freeze(state))

    # --- servers -------------------------------------------------------------------------
    # The names and indexes are read-only like the arrays (a tuple, a mapping proxy), so that
    # no scheduler changes the instance it is judged by: ``worker_names.reverse()`` in one
    # passed a schedule over capacity and failed every algorithm run after it (an audit)
    @cached_property
    def worker_names(self) -> tuple[str, ...]:
        return tuple(n for g in self.worker_groups for n in g.names)

    @cached_property
    def ps_names(self) -> tuple[str, ...]:
        return tuple(n for g in self.ps_groups for n in g.names)

    @_array_property
    def worker_capacity(self) -> np.ndarray:
        """(H, R) capacity of each worker server."""
        return _expand(self.worker_groups, len(self.resources))

    @_array_property
    def ps_capacity(self) -> np.ndarray:
        """(K, R) capacity of each PS server."""
        return _expand(self.ps_groups, len(self.resources))

    @cached_property
    def worker_index(self) -> Mapping[str, int]:
        return MappingProxyType({n: i for i, n in enumerate(self.worker_names)})

    @cached_property
    def ps_index(self) -> Mapping[str, int]:
        return MappingProxyType({n: i for i, n in enumerate(self.ps_names)})

    # --- jobs ----------------------------------------------------------------------------
    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    @cached_property
    def job_index(self) -> Mapping[str, int]:
        return MappingProxyType({j.id: i for i, j in enumerate(self.jobs)})

    @_array_property
    def arrival(self) -> np.ndarray:
        """(J,) first slot each job may run in."""
        return np.array([j.arrival for j in self.jobs], dtype=np.int64)

    @_array_property
    def workload(self) -> np.ndarray:
        """(J,) worker-slots each job needs."""
        return np.array([j.workload for j in self.jobs], dtype=np.int64)

    @_array_property
    def max_workers(self) -> np.ndarray:
        """(J,) most concurrent workers per slot."""
        return np.array([j.max_workers for j in self.jobs], dtype=np.int64)

    @_array_property
    def requested_workers(self) -> np.ndarray:
        """(J,) worker count of static schedulers."""
        return np.array([j.requested_workers for j in self.jobs], dtype=np.int64)

    @_array_property
    def ps_ratio(self) -> np.ndarray:
        """(J,) workers one PS serves."""
        return np.array([j.ps_ratio for j in self.jobs], dtype=float)

    @_array_property
    def worker_demand(self) -> np.ndarray:
        """(J, R) resources one worker holds for one slot."""
        return _stack([j.worker_demand for j in self.jobs], len(self.resources))

    @_array_property
    def ps_demand(self) -> np.ndarray:
        """(J, R) resources one PS holds for one slot."""
        return _stack([j.ps_demand for j in self.jobs], len(self.resources))

    @_array_property
    def utility_table(self) -> np.ndarray:
        """(J, T): ``utility_table[i, d-1] = f_i(d)`` for durations d = 1 … T. Dense: refused
        (``InputError``) above the memory limit; per-job readers use ``utility_row``."""
        from .limits import check_allocation
        check_allocation("horizon" if self.horizon >= self.num_jobs else "jobs",
                         8.0 * self.num_jobs * self.horizon,
                         f"the utility table of {self.num_jobs} jobs × {self.horizon} slots")
        if not self.jobs:
            return np.zeros((0, self.horizon))
        return np.vstack([j.utility.values(self.horizon) for j in self.jobs])

    def utility_row(self, i: int) -> np.ndarray:
        """(T,) ``f_i(1) … f_i(T)``: row i of ``utility_table``, built alone (the same numbers)
        when the table has not been built, so that per-job readers stay O(T) in memory rather
        than O(J·T)."""
        table = self.__dict__.get("utility_table")
        if table is not None:
            return table[i]
        return self.jobs[i].utility.values(self.horizon)

    def utility_at(self, i: int, last_slot: int) -> float:
        """f_i(last_slot − a_i + 1): job i's utility when its last slot is ``last_slot``; 0
        for a slot before its arrival (only an invalid schedule ends there, and the validator
        says so). Read from the table when it is built, else computed at that one duration
        (the same number: ``utility.values`` and ``utility.at`` evaluate one formula, checked
        bit for bit in tests/test_sparse.py), so a reader of one value never builds a row of
        T."""
        d = last_slot - self.jobs[i].arrival + 1
        if d < 1:
            return 0.0
        table = self.__dict__.get("utility_table")
        if table is not None:
            return float(table[i, d - 1])
        return float(self.jobs[i].utility.at(d))

    def describe(self) -> str:
        return (f"{self.name}: {self.num_jobs} jobs, {self.horizon} slots, "
                f"{len(self.worker_names)} worker + {len(self.ps_names)} PS servers, "
                f"resources {', '.join(self.resources)}")


def _expand(groups: Sequence[ServerGroup], r: int) -> np.ndarray:
    rows = [g.capacity for g in groups for _ in g.names]
    return np.array(rows, dtype=float).reshape(len(rows), r)


def _stack(vectors: Sequence[np.ndarray], r: int) -> np.ndarray:
    return np.array(vectors, dtype=float).reshape(len(vectors), r)


# --- schedules ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SlotCounts:
    """One job's units on one pool, sparsely: entry e puts ``count[e]`` units on server
    ``server[e]`` in slot ``slot[e]``. Entries are sorted by (slot, server) and counts are
    positive, so memory grows with the work done, not with slots × servers."""

    slot: np.ndarray  # (n,) int64
    server: np.ndarray  # (n,) int64
    count: np.ndarray  # (n,) int64

    @classmethod
    def empty(cls) -> SlotCounts:
        e = np.zeros(0, dtype=np.int64)
        return cls(e, e, e)

    @classmethod
    def from_dense(cls, counts: np.ndarray, first_slot: int = 0, *,
                   checked: bool = True) -> SlotCounts:
        """From a (slots, servers) array whose row 0 is slot ``first_slot``; ``ValueError``
        for a count that is no non-negative integer (``_checked_counts``). ``checked=False``:
        counts the caller made or checked itself (the OASiS subroutine, column generation's
        columns), not checked again."""
        if checked:
            counts = _dense_counts(counts, "counts")
        t, s = np.nonzero(counts)
        return cls(t.astype(np.int64) + first_slot, s.astype(np.int64),
                   counts[t, s].astype(np.int64))

    @classmethod
    def from_rows(cls, slots: np.ndarray, rows: np.ndarray, *,
                  checked: bool = True) -> SlotCounts:
        """From increasing ``slots`` (n,) and their per-server counts ``rows`` (n, servers);
        ``ValueError`` for a count that is no non-negative integer (``_checked_counts``).
        ``checked=False`` as in ``from_dense``."""
        if checked:
            rows = _dense_counts(rows, "rows")
        t, s = np.nonzero(rows)
        return cls(np.asarray(slots, dtype=np.int64)[t], s.astype(np.int64),
                   rows[t, s].astype(np.int64))

    @classmethod
    def concat(cls, parts: Sequence[SlotCounts]) -> SlotCounts:
        """Parts in slot order (each part's slots after the previous part's)."""
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, f) for p in parts])
                     for f in ("slot", "server", "count")))

    @property
    def total(self) -> int:
        return int(self.count.sum())

    def per_slot(self) -> tuple[np.ndarray, np.ndarray]:
        """The slots with units, increasing, and the units in each (summed over servers)."""
        if self.slot.size == 0:
            return self.slot, self.count
        start = np.flatnonzero(np.r_[True, self.slot[1:] != self.slot[:-1]])
        return self.slot[start], np.add.reduceat(self.count, start)

    def through(self, last_slot: int) -> SlotCounts:
        """The entries up to and including ``last_slot``."""
        n = int(np.searchsorted(self.slot, last_slot, side="right"))
        return SlotCounts(self.slot[:n], self.server[:n], self.count[:n])

    def to_dense(self, horizon: int, servers: int) -> np.ndarray:
        """(horizon, servers) counts."""
        out = np.zeros((horizon, servers), dtype=np.int64)
        out[self.slot, self.server] = self.count
        return out


@dataclass(frozen=True)
class Allocation:
    """What one job holds in one slot: worker and PS counts by server name."""

    slot: int
    workers: Mapping[str, int]
    ps: Mapping[str, int]


@dataclass(frozen=True)
class JobResult:
    id: str
    completed: bool
    completion_slot: int | None
    utility: float
    allocations: tuple[Allocation, ...] = ()


@dataclass(frozen=True)
class Schedule:
    """An algorithm's output (SPEC §5). ``extras`` holds algorithm-specific figures."""

    instance: str
    algorithm: str
    total_utility: float
    jobs: tuple[JobResult, ...]
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def completed(self) -> int:
        return sum(1 for j in self.jobs if j.completed)

    def job(self, job_id: str) -> JobResult:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    def with_extras(self, **extras: Any) -> Schedule:
        return Schedule(self.instance, self.algorithm, self.total_utility, self.jobs,
                        {**self.extras, **extras})

    def to_records(self) -> list[dict[str, Any]]:
        """One row per listed job: ``instance, algorithm, job, completed, completion_slot,
        utility, first_slot, slots`` (slots with an allocation), ``worker_slots`` (Σ workers
        over slots: the work done)."""
        rows = []
        for j in self.jobs:
            slots = [a.slot for a in j.allocations]
            rows.append({"instance": self.instance, "algorithm": self.algorithm, "job": j.id,
                         "completed": j.completed, "completion_slot": j.completion_slot,
                         "utility": j.utility, "first_slot": min(slots) if slots else None,
                         "slots": len(slots),
                         "worker_slots": sum(sum(a.workers.values()) for a in j.allocations)})
        return rows

    def to_dataframe(self) -> Any:
        """``to_records()`` as a pandas DataFrame (needs pandas)."""
        from .records import dataframe
        return dataframe(self.to_records())

    @classmethod
    def from_arrays(
        cls,
        instance: Instance,
        algorithm: str,
        workers: Mapping[int, np.ndarray],
        ps: Mapping[int, np.ndarray],
        extras: Mapping[str, Any] | None = None,
        *,
        trim: bool = False,
    ) -> Schedule:
        """Build a schedule from per-job count arrays.

        ``workers[i]`` is a (T, H) integer array of job i's workers per slot and server,
        ``ps[i]`` a (T, K) array; i is the job's position in ``instance.jobs`` (not its id).
        Each is a dict by position, a list of arrays in job order, or one (J, T, H) array.
        Jobs absent from ``workers`` (or past the list's end) did not run; a job absent from
        ``ps`` holds no PS.
        Completion slot and utility are derived from the work done. With ``trim``, everything
        after the completion slot is dropped (the MILP lets work continue past completion,
        SPEC §2).

        Raises ``ValueError`` naming the entry for a key that is not a job's position, an
        array of another shape, or a count that is not a non-negative integer: a job keyed by
        its id, a transposed array or half a worker would otherwise be dropped or rounded
        without a word.
        """
        check_instance(instance)
        shape = {"workers": (instance.horizon, len(instance.worker_names)),
                 "ps": (instance.horizon, len(instance.ps_names))}
        dense: dict[str, dict[int, np.ndarray]] = {}
        for pool, table in (("workers", workers), ("ps", ps)):
            dense[pool] = {}
            for i, counts in _by_position(table, pool):
                _check_position(instance, pool, i)
                dense[pool][int(i)] = _counts_array(counts, shape[pool], f"{pool}[{i}]")
        extra = sorted(set(dense["ps"]) - set(dense["workers"]))
        if extra:
            raise ValueError(f"ps[{extra[0]}]: job {extra[0]} has PSs but no entry in workers")
        # The same schedule as from the arrays' sparse entries (memory O(T·servers) per job
        # while converting, not kept).
        return cls.from_counts(instance, algorithm,
                               {i: SlotCounts.from_dense(y, checked=False)  # (_counts_array)
                                for i, y in dense["workers"].items()},
                               {i: SlotCounts.from_dense(z, checked=False)
                                for i, z in dense["ps"].items()},
                               extras, trim=trim)

    @classmethod
    def from_counts(
        cls,
        instance: Instance,
        algorithm: str,
        workers: Mapping[int, SlotCounts],
        ps: Mapping[int, SlotCounts],
        extras: Mapping[str, Any] | None = None,
        *,
        trim: bool = False,
    ) -> Schedule:
        """``from_arrays`` for sparse counts: the same schedule, byte for byte, from job i's
        ``SlotCounts`` of workers and PSs (jobs absent from ``workers`` did not run). Memory
        and time grow with the entries, not with jobs × slots × servers."""
        if extras is not None and not isinstance(extras, Mapping):
            raise ValueError(f"extras: expected a dict {{name: value}}, got "
                             f"{type(extras).__name__}")
        check_instance(instance)
        for pool, table, servers in (("workers", workers, len(instance.worker_names)),
                                     ("ps", ps, len(instance.ps_names))):
            _check_sparse(instance, pool, table, servers)
        extra = sorted(set(ps) - set(workers))
        if extra:
            raise ValueError(f"ps[{extra[0]}]: job {extra[0]} has PSs but no entry in workers")
        results = []
        total = 0.0
        for i, job in enumerate(instance.jobs):
            y = workers.get(i)
            if y is None:
                results.append(JobResult(job.id, False, None, 0.0, ()))
                continue
            z = ps.get(i, SlotCounts.empty())
            slots, work = y.per_slot()
            hit = np.flatnonzero(np.cumsum(work) >= job.workload)
            slot = int(slots[hit[0]]) if hit.size else None
            if trim and slot is not None:
                y, z = y.through(slot), z.through(slot)
            u = instance.utility_at(i, slot) if slot is not None else 0.0
            total += u
            results.append(JobResult(job.id, slot is not None, slot, u,
                                     _sparse_allocations(instance, y, z)))
        return cls(instance.name, algorithm, total, tuple(results), dict(extras or {}))

    def to_arrays(self, instance: Instance) -> tuple[np.ndarray, np.ndarray]:
        """(J, T, H) workers and (J, T, K) PSs, summed over repeated slots.

        Names must be known (``validate.check_names``); slots past the horizon are left out
        (the validator reports them)."""
        t, h, k = instance.horizon, len(instance.worker_names), len(instance.ps_names)
        y = np.zeros((instance.num_jobs, t, h), dtype=np.int64)
        z = np.zeros((instance.num_jobs, t, k), dtype=np.int64)
        for jr in self.jobs:
            i = instance.job_index[jr.id]
            for a in jr.allocations:
                if a.slot >= t:
                    continue
                for name, n in a.workers.items():
                    y[i, a.slot, instance.worker_index[name]] += n
                for name, n in a.ps.items():
                    z[i, a.slot, instance.ps_index[name]] += n
        return y, z


def _by_position(table: Any, pool: str) -> Iterator[tuple[Any, Any]]:
    """(job position, counts) of ``Schedule.from_arrays``'s ``workers`` or ``ps``: a dict's
    items, or a list's or a stacked array's entries in job order."""
    if isinstance(table, Mapping):
        return iter(table.items())
    if isinstance(table, Sequence | np.ndarray) and not isinstance(table, str | bytes):
        return enumerate(table)
    raise ValueError(f"{pool}: expected a dict {{job position: array}}, a list of arrays or "
                     f"one (jobs, slots, servers) array, got {type(table).__name__}")


def _expect_loaded(value: Any, place: str, kind: type, what: str, reader: str) -> None:
    """``expect_type``, with where a path given in its place is read (``reader``)."""
    hint = f" (oasis_opt.{reader}(path) reads a file)" \
        if isinstance(value, str) or hasattr(value, "__fspath__") else ""
    expect_type(place, value, kind, what, hint)


def check_instance(value: Any, place: str = "instance") -> None:
    """Refuse (``InputError`` naming ``place``) what is not an ``Instance``: a path, None, a
    schedule given in its place."""
    _expect_loaded(value, place, Instance, "an Instance", "load_instance")


def check_schedule(value: Any, place: str = "schedule") -> None:
    """Refuse what is not a ``Schedule``, as ``check_instance``."""
    _expect_loaded(value, place, Schedule, "a Schedule", "load_schedule")


def _check_position(instance: Instance, pool: str, i: Any) -> None:
    """``ValueError`` for a key that is not a job's position in ``instance.jobs``: a job
    keyed by its id would otherwise not run, without a word."""
    if isinstance(i, bool | np.bool_) or not isinstance(i, int | np.integer) \
            or not 0 <= i < instance.num_jobs:
        raise ValueError(f"{pool}: key {i!r:.40} is not a job's position in "
                         f"instance.jobs (0 … {instance.num_jobs - 1})")


def _check_sparse(instance: Instance, pool: str, table: Any, servers: int) -> None:
    """``from_counts``'s ``table`` {job position: SlotCounts}, checked as ``from_arrays``
    checks its arrays, with one pass of numpy over every job's entries: slots from 0, servers
    of the pool (-1 was its last one), counts 0 … ``MAX_COUNT``, entries in (slot, server)
    order (``per_slot`` sums runs of a slot). ``ValueError`` naming the job and entry."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{pool}: expected a dict {{job position: SlotCounts}}, got "
                         f"{type(table).__name__}")
    keys, parts = [], []
    for i, c in table.items():
        _check_position(instance, pool, i)
        if not isinstance(c, SlotCounts):
            raise ValueError(f"{pool}[{i}]: expected a SlotCounts (SlotCounts.from_dense), got "
                             f"{type(c).__name__}")
        arrays = (c.slot, c.server, c.count)
        if not all(isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind in "iu"
                   for a in arrays) or not len(c.slot) == len(c.server) == len(c.count):
            raise ValueError(f"{pool}[{i}]: expected a SlotCounts of three integer arrays of "
                             "one length (SlotCounts.from_dense, from_rows)")
        keys.append(i)
        parts.append(arrays)
    if not parts:
        return
    slot, server, count = (np.concatenate([p[f] for p in parts]).astype(np.int64)
                           for f in range(3))
    owner = np.repeat(np.arange(len(parts)), [len(p[0]) for p in parts])
    first = np.r_[True, owner[1:] != owner[:-1]]  # each job's first entry
    after = first | (slot > np.r_[-1, slot[:-1]]) | \
        ((slot == np.r_[-1, slot[:-1]]) & (server > np.r_[-1, server[:-1]]))
    for bad, why in ((slot < 0, "is in slot {t}"),
                     ((server < 0) | (server >= servers),
                      "is on server {h}; the pool has " + str(servers)),
                     ((count < 0) | (count > MAX_COUNT),
                      f"counts {{c}}; counts are non-negative integers of at most "
                      f"{MAX_COUNT:.0e}"),
                     (~after, "(slot {t}, server {h}) is not after the one before it")):
        if bad.any():
            e = int(np.argmax(bad))
            k = int(owner[e])
            entry = e - int(np.flatnonzero(owner == k)[0])
            raise ValueError(f"{pool}[{keys[k]}]: entry {entry} " + why.format(
                t=int(slot[e]), h=int(server[e]), c=int(count[e])))


#: The most a count (servers, workers, PSs, slots, workloads) may be: sums of them over
#: servers and slots stay exact in 64-bit integers and in doubles (``io`` holds files to it).
MAX_COUNT = 10**12


def _counts_array(counts: Any, shape: tuple[int, int], where: str) -> np.ndarray:
    """``counts`` as an int64 array of ``shape`` (slots, servers); ``ValueError`` naming
    ``where`` for another shape or a value that is not a non-negative integer of at most
    ``MAX_COUNT`` (a larger one wrapped round in the cast: 1e30 became -2^63)."""
    try:
        a = np.asarray(counts)
    except ValueError:  # numpy's "inhomogeneous shape", naming no entry
        raise ValueError(f"{where}: expected an array of shape {shape} (slots, servers), got "
                         "a ragged list") from None
    if a.shape != shape:
        raise ValueError(f"{where}: expected an array of shape {shape} (slots, servers), got "
                         f"{a.shape}")
    return _checked_counts(a, where, ("slot", "server"))


def _checked_counts(a: np.ndarray, where: str, axes: tuple[str, str] = ("row", "column")
                 ) -> np.ndarray:
    """The 2-d counts ``a`` as int64; ``ValueError`` naming ``where`` and the entry (its
    ``axes``) for a dtype that holds no counts — booleans (a mask: True was one worker),
    strings, objects — or a value that is not a non-negative integer of at most
    ``MAX_COUNT`` (0.5 was truncated to 0; a larger one wrapped round in the cast: 1e30
    became -2^63). Integral floats are counts."""
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{where}: expected integer counts, got an array of {a.dtype}")
    bad = ~np.isfinite(a) | (a < 0) | (a != np.round(a)) if a.dtype.kind == "f" else a < 0
    bad |= a > MAX_COUNT
    if bad.any():
        t, s = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"{where}: {axes[0]} {t}, {axes[1]} {s} holds {a[t, s].item()!r}; "
                         f"counts are non-negative integers of at most {MAX_COUNT:.0e}")
    return a.astype(np.int64)


def _dense_counts(counts: Any, where: str) -> np.ndarray:
    """``SlotCounts.from_dense``'s and ``from_rows``' 2-d array, checked (``_checked_counts``)."""
    a = np.asarray(counts)
    if a.ndim != 2:
        raise ValueError(f"{where}: expected a 2-d array (slots, servers), got shape {a.shape}")
    return _checked_counts(a, where)


def _sparse_allocations(instance: Instance, y: SlotCounts,
                        z: SlotCounts) -> tuple[Allocation, ...]:
    """One ``Allocation`` per slot with any unit, servers in index order."""
    wn, pn = instance.worker_names, instance.ps_names
    slots = np.union1d(y.slot, z.slot).tolist()
    if not slots:
        return ()
    wcut = np.searchsorted(y.slot, slots, side="right").tolist()
    pcut = np.searchsorted(z.slot, slots, side="right").tolist()
    ws, wc = y.server.tolist(), y.count.tolist()
    ps_, pc = z.server.tolist(), z.count.tolist()
    out = []
    w0 = p0 = 0
    for t, w1, p1 in zip(slots, wcut, pcut, strict=True):
        out.append(Allocation(int(t), {wn[h]: c for h, c in zip(ws[w0:w1], wc[w0:w1],
                                                                strict=True)},
                              {pn[k]: c for k, c in zip(ps_[p0:p1], pc[p0:p1], strict=True)}))
        w0, p0 = w1, p1
    return tuple(out)
