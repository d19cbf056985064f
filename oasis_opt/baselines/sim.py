"""The one slot-by-slot simulator every baseline runs on (SPEC §4).

One loop, five named stages per slot ``t`` (after Blox's scheduler loop and AdaptDL's
``Cluster.step``):

1. **arrive**   jobs with ``a_i = t`` enter the system;
2. **admit**    the policy accepts or rejects each arrival (``Policy.admit``), once, irrevocably;
3. **allocate** the policy maps the cluster state to this slot's allocations
   (``Policy.allocate(state) -> {job: Placement}``); it places into a scratch copy of the free
   capacity (``Packer``) with the shared placement helpers below;
4. **place**    the simulator checks the allocations against the real free capacity, the
   job's ``max_workers``, its remaining work and its PS ratio, and records them;
5. **advance**  each job's remaining work drops by its worker count; jobs that reach their
   workload are done and never allocate again; the slot ends.

A policy is a function of the ``ClusterState``: free capacity of the current slot ((H, R) and
(K, R) arrays), remaining work per job, each job's status, and what each job held in the
previous slot (``held``, for schedulers that keep their placement, like FIFO).

Placement helpers, written once:
- ``fit_counts``: how many more units of a demand vector fit on each server;
- ``first_fit``: n units placed by server index, each on the first server with room
  (equivalently: fill server 0, then server 1, …);
- ``Packer.place_gang``: ``w`` workers and ``ceil(w/γ)`` PSs, atomically or not at all;
- ``Packer.grow``: one more worker, plus one PS when the ratio needs one, atomically.

The schedule is built with ``Schedule.from_counts`` from sparse per-job entries; since a job
never holds more workers than its remaining work, its last slot may use fewer workers than its
gang and nothing runs after completion.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..limits import OutOfTime, on_time
from ..model import CAP_TOL, FIT_EPS, Instance, Schedule, SlotCounts, ps_needed

#: "Unbounded" count for a demand vector that is zero on every resource.
UNBOUNDED = 1 << 40

# Job status codes (``ClusterState.status``).
FUTURE = 0  # not arrived yet
ACTIVE = 1  # arrived, admitted, work remaining
REJECTED = 2  # refused by admission control
DONE = 3  # workload reached


class SchedulingError(RuntimeError):
    """A policy returned an allocation that breaks the model (a bug in the policy)."""


#: Most units (workers and PSs) a policy that places one unit at a time (``Packer.grow``:
#: DRF, Tetris) may have to place over a run. A placed worker does one unit of work, so the
#: workers placed are at most Σ_i V_i and the PSs at most Σ_i ⌈V_i/γ_i⌉ (``unit_placements``):
#: 1.1 M on the whole Philly trace in hour slots (about 12 M in 5-minute slots), where DRF
#: takes about 90 s in all; about 9 µs a unit on one job of 10^6 tiny workers. A 400-byte file
#: of one job of 10^8 worker-slots at 10^-9 GPU a worker kept ``run -a drf`` (and the plain
#: ``solve``'s floor) going past two minutes (an outside audit).
UNIT_PLACEMENTS = 20_000_000


def unit_placements(instance: Instance) -> np.ndarray:
    """Per job ``V_i + ⌈V_i/γ_i⌉`` (``ps_needed``): about the most units a one-at-a-time
    policy places for it (a slot's PSs round up once more per slot the job runs)."""
    return instance.workload + ps_needed(instance.workload, instance.ps_ratio)


def check_unit_placements(instance: Instance, algorithm: str) -> None:
    """Refuse (``InputError`` at the job that asks for the most, SPEC §5) an instance on
    which ``algorithm``, placing one unit at a time, would place more than
    ``UNIT_PLACEMENTS`` in all."""
    per_job = unit_placements(instance)
    units = int(per_job.sum())
    if units <= UNIT_PLACEMENTS:
        return
    raise InputError(f"jobs[{int(np.argmax(per_job))}].workload",
                     f"{algorithm} places one worker (or PS) at a time, and these workloads "
                     f"ask for up to {units:.3g} placements (limit {UNIT_PLACEMENTS:.3g})")


# --- placement helpers ----------------------------------------------------------------------


def fit_counts(free: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """(S,) units of ``demand`` (R,) that still fit on each server of ``free`` (S, R):
    ``min over r with demand[r] > 0 of floor(free[s, r] / demand[r])``."""
    pos = demand > 0
    if not pos.any():
        return np.full(free.shape[0], UNBOUNDED, dtype=np.int64)
    q = np.floor(free[:, pos] / demand[pos] + FIT_EPS).min(axis=1)
    return np.clip(q, 0, UNBOUNDED).astype(np.int64)  # clip first: a huge float has no int64


def room_threshold(demand: np.ndarray) -> np.ndarray:
    """Free capacity at or above this holds one more unit of ``demand`` (``FIT_EPS``, the
    relative slack of ``fit_counts``): on a resource the unit does not use, 1e-12 of float
    dust (−1e-15) below 0 still counts as room; on one it uses, the slack is relative, as the
    validator's tolerance is."""
    return demand * (1.0 - FIT_EPS) - 1e-12 * (demand == 0)


def units_fit(free: np.ndarray, threshold: np.ndarray, demand: np.ndarray,
              count: int) -> bool:
    """Whether ``count`` units of ``demand`` fit on the servers of ``free`` (S, R), each
    placed where ``room_threshold``'s test says one more fits; ``free`` is not changed."""
    placed = 0
    for f in free:
        while placed < count and (f >= threshold).all():
            on_time()  # one unit a pass (a PS ratio below 1 asks for many)
            f = f - demand
            placed += 1
    return placed >= count


def first_fit(free: np.ndarray, demand: np.ndarray, n: int) -> np.ndarray | None:
    """(S,) counts placing ``n`` units first-fit by server index, or None if fewer fit.

    Putting each unit on the lowest-indexed server with room is the same as filling servers in
    index order, so it is one cumulative sum. ``free`` is not modified."""
    s = free.shape[0]
    if n <= 0:
        return np.zeros(s, dtype=np.int64)
    fit = fit_counts(free, demand)
    before = np.cumsum(fit) - fit
    take = np.clip(n - before, 0, fit)
    if int(take.sum()) < n:
        return None
    return take


def first_index(counts: np.ndarray) -> int | None:
    """Lowest index with a count ≥ 1, or None."""
    idx = np.flatnonzero(counts >= 1)
    return int(idx[0]) if idx.size else None


class Placement:
    """What one job holds in one slot: ``y`` (H,) workers and ``z`` (K,) PSs per server.

    ``workers`` and ``ps`` are the totals, counted once and kept up to date by
    ``Packer.grow`` (summing the arrays on every step was most of DRF's time); build a new
    placement rather than writing into ``y``/``z`` by hand."""

    __slots__ = ("y", "z", "workers", "ps")

    def __init__(self, y: np.ndarray, z: np.ndarray) -> None:
        self.y = y
        self.z = z
        self.workers = int(y.sum())
        self.ps = int(z.sum())

    @classmethod
    def empty(cls, h: int, k: int) -> Placement:
        return cls(np.zeros(h, dtype=np.int64), np.zeros(k, dtype=np.int64))

    def truncated(self, workers: int, ps: int) -> Placement:
        """The first ``workers`` workers and ``ps`` PSs of this placement, by server index
        (a gang's last slot, when less work remains than the gang does per slot)."""
        return Placement(_keep_first(self.y, workers), _keep_first(self.z, ps))


def _keep_first(counts: np.ndarray, n: int) -> np.ndarray:
    before = np.cumsum(counts) - counts
    return np.clip(n - before, 0, counts)


@dataclass
class Packer:
    """A scratch copy of the free capacity that a policy places into during ``allocate``.

    Free capacity only falls while a policy packs, so the first server with room for a given
    demand vector only moves right: ``grow`` resumes its scan where the last scan for the same
    vector stopped, and answers at once for a vector that already fits nowhere (jobs of one
    model share vectors, so this saves most scans in a full cluster)."""

    free_w: np.ndarray  # (H, R)
    free_ps: np.ndarray  # (K, R)
    _start_w: dict[bytes, int] = field(default_factory=dict)
    _start_ps: dict[bytes, int] = field(default_factory=dict)

    def take(self, alpha: np.ndarray, beta: np.ndarray, pl: Placement) -> None:
        """Deduct a placement of a job with worker demand ``alpha`` and PS demand ``beta``."""
        self.free_w -= pl.y[:, None] * alpha[None, :]
        self.free_ps -= pl.z[:, None] * beta[None, :]

    def place_gang(self, alpha: np.ndarray, beta: np.ndarray, workers: int,
                   ps: int) -> Placement | None:
        """``workers`` workers and ``ps`` PSs first-fit by server index, all or nothing;
        deducted from the free capacity on success."""
        y = first_fit(self.free_w, alpha, workers)
        if y is None:
            return None
        z = first_fit(self.free_ps, beta, ps)
        if z is None:
            return None
        pl = Placement(y, z)
        self.take(alpha, beta, pl)
        return pl

    def grow(self, pl: Placement, alpha: np.ndarray, beta: np.ndarray, ratio: float) -> bool:
        """Add one worker to ``pl`` on the first server with room, and the PSs (first-fit)
        by which ``ceil((w+1)/γ)`` exceeds the PSs held (one, or several where γ < 1); all or
        none. True on success."""
        h = self._first_room(self.free_w, alpha, self._start_w)
        if h is None:
            return False
        extra = int(ps_needed(pl.workers + 1, ratio)) - pl.ps
        if extra > 1 and not units_fit(self.free_ps[self._start_ps.get(beta.tobytes(), 0):],
                                       room_threshold(beta), beta, extra):
            return False
        for _ in range(max(0, extra)):
            on_time()
            k = self._first_room(self.free_ps, beta, self._start_ps)
            if k is None:
                return False
            pl.z[k] += 1
            pl.ps += 1
            self.free_ps[k] -= beta
        pl.y[h] += 1
        pl.workers += 1
        self.free_w[h] -= alpha
        return True

    def fits_nowhere(self, alpha: np.ndarray) -> bool:
        """Whether a scan for a worker of demand ``alpha`` has found no server with room
        (it stays so until the packer is made again: free capacity only falls)."""
        return self._start_w.get(alpha.tobytes(), 0) >= self.free_w.shape[0]

    @staticmethod
    def _first_room(free: np.ndarray, demand: np.ndarray, start: dict[bytes, int]) -> int | None:
        """Lowest server index with room for one unit of ``demand`` (same test as
        ``fit_counts(...) >= 1``), scanning from where the last scan for it stopped."""
        key = demand.tobytes()
        s0 = start.get(key, 0)
        if s0 >= free.shape[0]:
            return None
        room = (free[s0:] >= room_threshold(demand)).all(axis=1)
        s = s0 + int(room.argmax())
        if not room[s - s0]:
            s = free.shape[0]
        start[key] = s
        return s if s < free.shape[0] else None


# --- state ---------------------------------------------------------------------------------


@dataclass
class ClusterState:
    """Everything a policy may look at in slot ``t`` (no future arrivals, no future slots).

    ``free_w`` (H, R) / ``free_ps`` (K, R): capacity not yet allocated in slot ``t`` (full at
    the start of ``allocate``: capacities are the same in every slot and nothing is reserved
    ahead). ``remaining`` (J,): worker-slots still to do. ``status`` (J,): FUTURE, ACTIVE,
    REJECTED or DONE. ``held``: each job's placement in slot ``t − 1``. ``arrivals``: the jobs
    that arrive in slot ``t``, in file order.
    """

    instance: Instance
    t: int
    free_w: np.ndarray
    free_ps: np.ndarray
    remaining: np.ndarray
    status: np.ndarray
    held: dict[int, Placement] = field(default_factory=dict)
    arrivals: list[int] = field(default_factory=list)

    @classmethod
    def initial(cls, instance: Instance) -> ClusterState:
        return cls(instance, 0, instance.worker_capacity.copy(), instance.ps_capacity.copy(),
                   instance.workload.copy(), np.full(instance.num_jobs, FUTURE, dtype=np.int8))

    @property
    def horizon(self) -> int:
        return self.instance.horizon

    def active(self) -> np.ndarray:
        """Indices of admitted jobs with work left, in arrival order (ties: file order)."""
        idx = np.flatnonzero(self.status == ACTIVE)
        return idx[np.argsort(self.instance.arrival[idx], kind="stable")]

    def packer(self) -> Packer:
        return Packer(self.free_w.copy(), self.free_ps.copy())

    def fits_empty(self, i: int, workers: int) -> bool:
        """Whether ``workers`` workers of job i and their PSs fit in the empty cluster."""
        inst = self.instance
        ps = ps_needed(workers, inst.ps_ratio[i])
        return (first_fit(inst.worker_capacity, inst.worker_demand[i], workers) is not None
                and first_fit(inst.ps_capacity, inst.ps_demand[i], ps) is not None)


class Policy:
    """A scheduling rule: an admission test and a map from cluster state to allocations."""

    name = "policy"

    def admit(self, state: ClusterState, i: int) -> bool:
        """Accept job i, which arrives in slot ``state.t``? Default: no admission control."""
        return True

    def allocate(self, state: ClusterState) -> dict[int, Placement]:
        """This slot's placements of ACTIVE jobs; jobs left out hold nothing."""
        raise NotImplementedError

    def extras(self, state: ClusterState) -> dict[str, Any]:
        """Algorithm-specific figures for ``Schedule.extras``."""
        return {}


# --- the loop ------------------------------------------------------------------------------


@dataclass
class _Recorder:
    """Every job's placements as sparse entries (job, slot, server, count), kept per slot
    and per pool as three flat arrays for all the jobs placed in it: memory grows with the
    units placed, not with slots × servers. One small array per job and slot (and a tuple
    to hold them) was about 90 MiB of DRF's 156 MiB traced peak on 5 000 Philly jobs, and
    left the heap fragmented after it was freed (round 42)."""

    instance: Instance
    workers: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    ps: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    placed: set[int] = field(default_factory=set)  # every job that held a unit

    def record(self, t: int, ids: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
        """Slot ``t``'s placements: job ``ids[n]`` holds ``y[n]`` (H,) workers and ``z[n]``
        (K,) PSs. ``nonzero`` walks each row's servers in order, so a job's entries stay in
        (slot, server) order."""
        self.placed.update(ids.tolist())
        for store, counts in ((self.workers, y), (self.ps, z)):
            row, server = np.nonzero(counts)
            store.append((t, ids[row], server, counts[row, server]))

    def counts(self, store: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
               jobs: set[int] | None = None) -> dict[int, SlotCounts]:
        """Each placed job's ``SlotCounts`` on one pool (only ``jobs``, where given; empty
        for a job with no unit of the pool): views of one copy of the entries sorted stably
        by job, so that each job keeps its (slot, server) order."""
        keys = sorted(self.placed if jobs is None else self.placed & jobs)
        if not store:
            return {i: SlotCounts.empty() for i in keys}
        job = np.concatenate([j for _, j, _, _ in store]).astype(np.int64)
        slot = np.repeat(np.array([t for t, _, _, _ in store], dtype=np.int64),
                         [len(j) for _, j, _, _ in store])
        server = np.concatenate([s for _, _, s, _ in store]).astype(np.int64)
        count = np.concatenate([c for _, _, _, c in store]).astype(np.int64)
        order = np.argsort(job, kind="stable")
        job, slot, server, count = job[order], slot[order], server[order], count[order]
        cuts = np.searchsorted(job, keys).tolist(), np.searchsorted(job, keys, side="right")
        return {i: SlotCounts(slot[a:b], server[a:b], count[a:b])
                for i, a, b in zip(keys, cuts[0], cuts[1].tolist(), strict=True)}


def simulate(instance: Instance, policy: Policy) -> Schedule:
    """Run ``policy`` slot by slot over the horizon and return its schedule."""
    state = ClusterState.initial(instance)
    rec = _Recorder(instance)
    by_arrival: dict[int, list[int]] = {}
    for i, a in enumerate(instance.arrival.tolist()):
        by_arrival.setdefault(a, []).append(i)
    starts = sorted(by_arrival)  # the slots in which jobs arrive
    t = 0
    while t < instance.horizon:
        try:
            on_time()  # a time-limited solve's floor (limits.deadline)
            state.t = t
            arrive(state, by_arrival.get(t, []))
            admit(state, policy)
            allocations = allocate(state, policy)  # (its placement loops look too)
        except OutOfTime as err:
            err.partial = lambda t=t: _finished(state, policy, rec, t)
            raise
        place(state, allocations, rec)
        advance(state, allocations)
        t += 1
        if not (state.status == ACTIVE).any():
            # nothing can run before the next arrival: 2 jobs done in their first slots over
            # 2 000 000 slots took FIFO 9.8 s (an outside audit); the same schedule
            k = bisect.bisect_left(starts, t)
            t = starts[k] if k < len(starts) else instance.horizon
    return Schedule.from_counts(instance, policy.name, rec.counts(rec.workers),
                                rec.counts(rec.ps), policy.extras(state))


def _finished(state: ClusterState, policy: Policy, rec: _Recorder, t: int) -> Schedule:
    """The schedule of the jobs that finished before slot ``t`` (``OutOfTime.partial``):
    what they ran, as recorded; the jobs still running are left out."""
    done = {i for i in rec.placed if state.status[i] == DONE}
    return Schedule.from_counts(
        state.instance, policy.name, rec.counts(rec.workers, done), rec.counts(rec.ps, done),
        {"partial": f"stopped by the time limit in slot {t} of {state.instance.horizon}"})


def arrive(state: ClusterState, jobs: list[int]) -> None:
    """Stage 1: the jobs arriving in slot t become visible."""
    state.arrivals = list(jobs)


def admit(state: ClusterState, policy: Policy) -> None:
    """Stage 2: each arrival, in file order, is admitted (ACTIVE) or rejected for good."""
    for i in state.arrivals:
        state.status[i] = ACTIVE if policy.admit(state, i) else REJECTED


def allocate(state: ClusterState, policy: Policy) -> dict[int, Placement]:
    """Stage 3: the policy's decision for slot t, a function of the state."""
    state.free_w = state.instance.worker_capacity.copy()
    state.free_ps = state.instance.ps_capacity.copy()
    return policy.allocate(state)


def place(state: ClusterState, allocations: Mapping[int, Placement], rec: _Recorder) -> None:
    """Stage 4: check the allocations against the model and record them.

    Raises ``SchedulingError`` for a policy bug (inactive job, too many workers, too few PSs,
    over capacity): the simulator, not each policy, is where the model's rules are enforced."""
    inst = state.instance
    live = {i: pl for i, pl in allocations.items() if pl.y.any() or pl.z.any()}
    if not live:
        return
    ids = np.fromiter(live, dtype=np.int64, count=len(live))
    y = np.stack([live[i].y for i in ids])  # (n, H)
    z = np.stack([live[i].z for i in ids])  # (n, K)
    if (y < 0).any() or (z < 0).any():
        raise SchedulingError(f"slot {state.t}: negative counts")
    bad = ids[state.status[ids] != ACTIVE]
    if bad.size:
        raise SchedulingError(f"slot {state.t}: job {inst.jobs[bad[0]].id} is not active")
    w, p = y.sum(axis=1), z.sum(axis=1)
    over = ((w > np.minimum(inst.max_workers[ids], state.remaining[ids]))
            | (p < ps_needed(w, inst.ps_ratio[ids])))
    if over.any():
        n = int(np.flatnonzero(over)[0])
        i = int(ids[n])
        raise SchedulingError(f"slot {state.t}: job {inst.jobs[i].id} gets {int(w[n])} workers "
                              f"and {int(p[n])} PSs (max {inst.max_workers[i]}, remaining "
                              f"{state.remaining[i]}, ratio {inst.ps_ratio[i]:g})")
    used_w = y.T.astype(float) @ inst.worker_demand[ids]  # (H, R)
    used_ps = z.T.astype(float) @ inst.ps_demand[ids]  # (K, R)
    for used, cap, pool in ((used_w, inst.worker_capacity, "worker"),
                            (used_ps, inst.ps_capacity, "PS")):
        if (used > cap * (1.0 + CAP_TOL)).any():
            raise SchedulingError(f"slot {state.t}: {pool} capacity exceeded")
    state.free_w = inst.worker_capacity - used_w
    state.free_ps = inst.ps_capacity - used_ps
    rec.record(state.t, ids, y, z)


def advance(state: ClusterState, allocations: Mapping[int, Placement]) -> None:
    """Stage 5: work is done, finished jobs leave, the slot ends."""
    held = {}
    for i, pl in allocations.items():
        w = int(pl.y.sum())  # the arrays, not the cached totals: they are what was placed
        if w == 0 and not pl.z.any():
            continue
        state.remaining[i] -= w
        if state.remaining[i] <= 0:
            state.status[i] = DONE
        else:
            held[i] = pl
    state.held = held
