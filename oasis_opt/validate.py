"""The validator: one place that checks every schedule any code produces (SPEC §1, §5).

Unknown jobs or servers make the schedule malformed (``InputError``, exit 2); every broken rule
of the model is listed as a ``Violation`` (exit 1); otherwise the schedule is feasible and its
utility is recomputed from the instance (exit 0).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError, keywords_checked
from .model import (
    CAP_TOL,
    REL_TOL,
    Allocation,
    Instance,
    JobResult,
    Schedule,
    check_instance,
    check_schedule,
    ps_needed,
)


@dataclass(frozen=True)
class Violation:
    #: capacity, arrival, horizon, max_workers, ps_ratio, completion, after_completion, utility
    rule: str
    place: str
    message: str

    def __str__(self) -> str:
        return f"{self.place}: {self.message}"


@dataclass(frozen=True)
class ValidationReport:
    feasible: bool
    total_utility: float  # recomputed from the instance
    completed: int
    job_utility: dict[str, float]
    violations: list[Violation] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "feasible": self.feasible, "total_utility": self.total_utility,
            "completed": self.completed, "job_utility": self.job_utility,
            "violations": [{"rule": v.rule, "place": v.place, "message": v.message}
                           for v in self.violations],
            "warnings": self.warnings,
        }


def _close(a: float, b: float) -> bool:
    """``a`` equals ``b`` up to REL_TOL, relative only: an absolute floor of REL_TOL (it was
    ``max(1, |a|, |b|)``) let a schedule report twice the utility of its instance when
    utilities are near 1e-9, which the same instance scaled by 1e9 refuses (as ``ratio``).
    An infinity is close to nothing: ``inf − x ≤ REL_TOL·inf`` held, and a scheduler that
    reported ``inf`` passed the validator with ``ratio``'s OPT/ALG 0 (an outside audit)."""
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def _is_count(x: object) -> bool:
    """A non-negative integer (an integral float counts, as in a file; a bool does not)."""
    if isinstance(x, bool | np.bool_):
        return False
    if isinstance(x, numbers.Integral):
        return x >= 0
    return isinstance(x, float | np.floating) and math.isfinite(x) and x >= 0 \
        and float(x).is_integer()


def _is_number(x: object) -> bool:
    """A real number (a bool is not one; NaN is, and the utility rules refuse it)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool | np.bool_)


def check_names(instance: Instance | None, schedule: Schedule) -> None:
    """Raise ``InputError`` for a job or server the instance does not have, a job listed
    twice, a slot or count that is not a non-negative integer, a ``completed`` that is not a
    bool or a utility that is not a number: what ``load_schedule`` refuses in a file (SPEC §5),
    refused here too for a schedule built in memory (a negative count would free capacity for
    another job, a job listed twice would earn twice, ``completed: 1`` is written to a file
    the loader refuses). With ``instance`` None (``save_schedule``) the names are only held
    to be strings."""
    for place in ("instance", "algorithm"):
        if not isinstance(getattr(schedule, place), str):
            raise InputError(place, f"expected a string, got {getattr(schedule, place)!r:.40}")
    if not _is_number(schedule.total_utility):
        raise InputError("total_utility", f"expected a number, got "
                                          f"{schedule.total_utility!r:.40}")
    if not isinstance(schedule.jobs, list | tuple):
        raise InputError("jobs", f"expected a list of JobResult, got "
                                 f"{type(schedule.jobs).__name__}")
    seen: dict[str, int] = {}
    for n, jr in enumerate(schedule.jobs):
        # the shape of a schedule built in memory: it failed inside as "'NoneType' object is
        # not iterable" or "'list' object has no attribute 'items'"
        if not isinstance(jr, JobResult):
            raise InputError(f"jobs[{n}]", f"expected a JobResult, got {type(jr).__name__}")
        if not isinstance(jr.allocations, list | tuple):
            raise InputError(f"jobs[{n}].allocations", f"expected a list of Allocation, got "
                                                      f"{type(jr.allocations).__name__}")
        if not isinstance(jr.id, str):
            raise InputError(f"jobs[{n}].id", f"expected a string, got {jr.id!r:.40}")
        if instance is not None and jr.id not in instance.job_index:
            raise InputError(f"jobs[{n}].id", f"unknown job {jr.id!r}")
        if jr.id in seen:
            raise InputError(f"jobs[{n}].id",
                             f"duplicate job id {jr.id!r} (also jobs[{seen[jr.id]}])")
        seen[jr.id] = n
        # the file's types (SPEC §5): ``completed: 1`` passed here, and the schedule written
        # to a file was then refused by ``load_schedule``
        if not isinstance(jr.completed, bool | np.bool_):
            raise InputError(f"jobs[{n}].completed",
                             f"expected true or false, got {jr.completed!r:.40}")
        if jr.completion_slot is not None and not _is_count(jr.completion_slot):
            raise InputError(f"jobs[{n}].completion_slot",
                             f"expected a non-negative integer or null, got "
                             f"{jr.completion_slot!r:.40}")
        if not _is_number(jr.utility):
            raise InputError(f"jobs[{n}].utility", f"expected a number, got {jr.utility!r:.40}")
        for m, a in enumerate(jr.allocations):
            if type(a) is not Allocation and not isinstance(a, Allocation):
                raise InputError(f"jobs[{n}].allocations[{m}]", f"expected an Allocation, got "
                                                                f"{type(a).__name__}")
            for pool, counts in (("workers", a.workers), ("ps", a.ps)):
                if type(counts) is not dict and not isinstance(counts, Mapping):
                    raise InputError(f"jobs[{n}].allocations[{m}].{pool}",
                                     f"expected a dict {{server: count}}, got "
                                     f"{type(counts).__name__}")
            if not _is_count(a.slot):
                raise InputError(f"jobs[{n}].allocations[{m}].slot",
                                 f"expected a non-negative integer, got {a.slot!r:.40}")
            for pool, counts, known in (
                    ("workers", a.workers, None if instance is None else instance.worker_index),
                    ("ps", a.ps, None if instance is None else instance.ps_index)):
                for name, count in counts.items():
                    # a plain int of a known server passes at once (millions of entries on a
                    # whole trace); anything else is looked at closely
                    if type(count) is int and count >= 0 and \
                            (type(name) is str if known is None else name in known):
                        continue
                    if known is None and not isinstance(name, str):
                        raise InputError(f"jobs[{n}].allocations[{m}].{pool}",
                                         f"expected a server name, got {name!r:.40}")
                    if known is not None and name not in known:
                        kind = "worker" if pool == "workers" else "PS"
                        raise InputError(f"jobs[{n}].allocations[{m}].{pool}",
                                         f"unknown {kind} server {name!r}")
                    if not _is_count(count):
                        raise InputError(f"jobs[{n}].allocations[{m}].{pool}.{name}",
                                         f"expected a non-negative integer count, got "
                                         f"{count!r:.40}")


@dataclass(frozen=True)
class _Entries:
    """The schedule's positive counts as flat arrays (one row per job, slot and server), for
    allocations inside the horizon. Counts are float64: exact up to 2^53, and sums of huge
    counts (a hostile file) stay finite instead of wrapping around like int64."""

    job: np.ndarray  # position of the job in the schedule
    slot: np.ndarray
    server: np.ndarray
    count: np.ndarray

    @classmethod
    def collect(cls, instance: Instance, schedule: Schedule, pool: str) -> _Entries:
        index = instance.worker_index if pool == "workers" else instance.ps_index
        job, slot, server, count = [], [], [], []
        for n, jr in enumerate(schedule.jobs):
            for a in jr.allocations:
                if a.slot >= instance.horizon:
                    continue
                for name, c in (a.workers if pool == "workers" else a.ps).items():
                    if c:
                        job.append(n)
                        slot.append(a.slot)
                        server.append(index[name])
                        count.append(c)
        return cls(np.array(job, dtype=np.int64), np.array(slot, dtype=np.int64),
                   np.array(server, dtype=np.int64), np.array(count, dtype=float))

    def per_job(self, jobs: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each listed job: its slots with entries (increasing) and the count in each,
        summed over servers in entry order. Sparse, O(entries), not (jobs, T)."""
        order = np.argsort(self.job, kind="stable")
        job, slot, count = self.job[order], self.slot[order], self.count[order]
        cuts = np.searchsorted(job, np.arange(jobs + 1))
        out = []
        for n in range(jobs):
            s, c = slot[cuts[n]:cuts[n + 1]], count[cuts[n]:cuts[n + 1]]
            slots, where = np.unique(s, return_inverse=True)
            sums = np.zeros(slots.size)
            np.add.at(sums, where, c)
            out.append((slots, sums))
        return out


@keywords_checked
def validate(instance: Instance, schedule: Schedule) -> ValidationReport:
    """Check every rule; list every violation (not just the first).

    Memory is O(T·(H+K)·R + J + entries) whatever the schedule holds: counts are gathered as
    flat entries, never as a dense (J, T, H) or (J, T) array."""
    check_instance(instance)
    check_schedule(schedule)
    check_names(instance, schedule)
    v: list[Violation] = []
    warnings: list[str] = []
    if schedule.instance != instance.name:
        warnings.append(f"schedule is for instance {schedule.instance!r:.80}, "
                        f"validated against {instance.name!r:.80}")
    T = instance.horizon

    # Allocations outside [arrival, horizon) are rule violations; keep them out of the arrays.
    for n, jr in enumerate(schedule.jobs):
        job = instance.jobs[instance.job_index[jr.id]]
        for m, a in enumerate(jr.allocations):
            if not (any(a.workers.values()) or any(a.ps.values())):
                continue
            at = f"jobs[{n}].allocations[{m}]"
            if a.slot >= T:
                v.append(Violation("horizon", at, f"job {jr.id!r} runs in slot {a.slot}, "
                                                  f"past the horizon (last slot {T - 1})"))
            elif a.slot < job.arrival:
                v.append(Violation("arrival", at, f"job {jr.id!r} runs in slot {a.slot}, "
                                                  f"before its arrival {job.arrival}"))
    jobs = [instance.job_index[jr.id] for jr in schedule.jobs]
    ew = _Entries.collect(instance, schedule, "workers")
    ep = _Entries.collect(instance, schedule, "ps")
    _check_capacity(instance, schedule, jobs, ew, ep, v)
    wt = ew.per_job(len(jobs))  # per listed job: (slots, workers in each)
    pt = ep.per_job(len(jobs))

    job_utility: dict[str, float] = {}
    total = 0.0
    completed = 0
    for n, jr in enumerate(schedule.jobs):
        i = jobs[n]
        job = instance.jobs[i]
        at = f"jobs[{n}]"
        # The slots where job n holds anything; every other slot has w = p = 0 and breaks no
        # rule, so the checks below run over these only.
        slots = np.union1d(wt[n][0], pt[n][0])
        w = np.zeros(slots.size)
        w[np.searchsorted(slots, wt[n][0])] = wt[n][1]
        p = np.zeros(slots.size)
        p[np.searchsorted(slots, pt[n][0])] = pt[n][1]
        for k in np.flatnonzero(w > job.max_workers):
            v.append(Violation("max_workers", at, f"job {jr.id!r} has {w[k]:.0f} workers in slot "
                                                  f"{slots[k]}, more than max_workers "
                                                  f"{job.max_workers}"))
        # Capped where int64 ends; counts that large already break max_workers.
        need = ps_needed(np.minimum(w, 2.0**53), job.ps_ratio)
        for k in np.flatnonzero(p < need):
            v.append(Violation("ps_ratio", at, f"job {jr.id!r} has {w[k]:.0f} workers and "
                                               f"{p[k]:.0f} PSs in slot {slots[k]}; ps_ratio "
                                               f"{job.ps_ratio:g} needs {need[k]}"))
        done = np.cumsum(w)
        hit = np.flatnonzero(done >= job.workload)
        slot = int(slots[hit[0]]) if hit.size else None
        work = done[-1] if done.size else 0.0
        if jr.completion_slot != slot:
            v.append(Violation("completion", f"{at}.completion_slot",
                               f"job {jr.id!r} reports completion slot "
                               f"{'null' if jr.completion_slot is None else jr.completion_slot}, "
                               f"but its work ({work:.0f} of {job.workload}) "
                               + (f"first reaches the workload in slot {slot}" if slot is not None
                                  else "never reaches the workload")))
        if jr.completed != (slot is not None):
            v.append(Violation("completion", f"{at}.completed",
                               f"job {jr.id!r} reports completed={str(jr.completed).lower()}, "
                               f"but it {'does' if slot is not None else 'does not'} complete"))
        late = slots[((w > 0) | (p > 0)) & (slots > (slot if slot is not None else T))]
        if slot is not None and late.size:
            v.append(Violation("after_completion", at,
                               f"job {jr.id!r} holds servers in slot {int(late[0])}, after its "
                               f"completion slot {slot}"))
        u = instance.utility_at(i, slot) if slot is not None else 0.0
        if not _close(jr.utility, u):
            v.append(Violation("utility", f"{at}.utility",
                               f"job {jr.id!r} reports utility {jr.utility:.10g}, "
                               f"recomputed {u:.10g}"))
        job_utility[jr.id] = u
        total += u
        completed += slot is not None
    if not _close(schedule.total_utility, total):
        v.append(Violation("utility", "total_utility",
                           f"reported {schedule.total_utility:.10g}, recomputed {total:.10g}"))
    return ValidationReport(not v, total, completed, job_utility, v, warnings)


def overfilled(instance: Instance, schedule: Schedule) -> list[Violation]:
    """The capacity violations alone, as ``validate`` finds them (the schedule's names are
    the instance's): what a solver's feasibility tolerance can let through
    (``offline/report.py``, ``solved_again``)."""
    v: list[Violation] = []
    _check_capacity(instance, schedule, [instance.job_index[jr.id] for jr in schedule.jobs],
                    _Entries.collect(instance, schedule, "workers"),
                    _Entries.collect(instance, schedule, "ps"), v)
    return v


def _check_capacity(instance: Instance, schedule: Schedule, jobs: list[int], ew: _Entries,
                    ep: _Entries, v: list[Violation]) -> None:
    """Per (server, resource, slot): Σ_i α_i[r]·y_iht ≤ C_h[r], and alike for PSs."""
    T = instance.horizon
    for pool, e, demand, cap, names in (
        ("worker", ew, instance.worker_demand, instance.worker_capacity, instance.worker_names),
        ("PS", ep, instance.ps_demand, instance.ps_capacity, instance.ps_names),
    ):
        if e.count.size == 0:
            continue
        job_rows = np.asarray(jobs, dtype=np.int64)[e.job]
        used = np.zeros((T, cap.shape[0], cap.shape[1]))  # (T, S, R)
        np.add.at(used, (e.slot, e.server), e.count[:, None] * demand[job_rows])
        over = used > cap[None] * (1.0 + CAP_TOL)
        if not over.any():
            continue
        # Entries sorted by (slot, server), so that each overfilled cell finds its holders by
        # bisection: a scan of all entries per cell took minutes on a hostile file of many.
        cell = e.slot * cap.shape[0] + e.server
        order = np.argsort(cell, kind="stable")
        cell = cell[order]
        for t, s, r in zip(*np.nonzero(over), strict=True):
            key = t * cap.shape[0] + s
            here = order[np.searchsorted(cell, key):np.searchsorted(cell, key, side="right")]
            holders = ", ".join(f"{schedule.jobs[n].id}:{c:.0f}"
                                for n, c in zip(e.job[here], e.count[here], strict=True))
            v.append(Violation(
                "capacity", f"slot {t}",
                f"{pool} server {names[s]!r}, resource {instance.resources[r]}: "
                f"used {_over(used[t, s, r], cap[s, r])} (jobs {holders})"))


def _over(used: float, capacity: float) -> str:
    """``used U > capacity C``, with the digits that tell them apart: an overshoot of 2e-8
    on a capacity of 1 read "used 1 > capacity 1"."""
    a, b = _fmt(used), _fmt(capacity)
    if a == b:
        a, b = f"{used:.17g}", f"{capacity:.17g}"
    return f"{a} > capacity {b}"


def _fmt(x: float) -> str:
    return str(int(x)) if math.isclose(x, round(x), abs_tol=1e-9) else f"{x:.6g}"
