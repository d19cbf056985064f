"""Large-neighbourhood search at trace scale (issue 21): a placed schedule improved by small
MILPs over the master's columns, the rest of the schedule held fixed.

Column generation's pooled master (``colgen._Master`` with ``pool_all``) ends with an LP of
thousands of jobs whose rounding (``colgen_scale.round_lp``) lands about 1 % under it on
5 000 Philly jobs, while its price-and-branch over all jobs at once finds nothing better in
the minute left. Here a move frees a seed job and jobs that run, or could run, while it
could (a window of slots freed too many: some 150 jobs run in every slot of e5k), and
chooses again among their columns — each job's columns in the master and its place in
the schedule — with what the other jobs hold fixed:

    max Σ_k f_k·x_k   s.t.  Σ_{k of job i} x_k ≤ 1,   Σ_k u_k,t,r·x_k ≤ free_t,r,   x binary

per slot t and resource r of each pool, ``free`` being the pool's capacity the fixed jobs
leave, summed over its servers (the master's pooled rows). The schedule's own columns are a
feasible start, so a move is never worse; a better choice is placed first-fit on the servers
(``colgen_scale.place_counts``), most valuable job first; a job that does not fit (the
pooled rows are a relaxation where servers differ; with alike unit-demand servers, as in
the Philly imports, every job fits) keeps its old place if that is still free or is left
out, and the move is kept only if the placed jobs are worth more than before. At the end
the moved jobs still left out are planned on what is free and every moved job is moved as
early as it can (``fill_jobs``, ``compact_jobs``: as ``round_lp`` does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import highspy
import numpy as np

from oasis_opt.model import Instance, Schedule, SlotCounts

from .colgen_scale import (
    Column,
    FreeCapacity,
    compact_jobs,
    fill_jobs,
    most_workers,
    place_counts,
    take_units,
)
from .deadline import Deadline
from .highs import new_highs

#: Jobs a move frees at first: one seed job and others that run, or could run, while it
#: could; fewer after a move HiGHS did not prove within its time, more after one it did, up
#: to ``MAX_JOBS``.
FREE_JOBS = 40
MAX_JOBS = 400
#: Seconds one move's MILP may take at most (and less when the deadline is nearer).
MOVE_SECONDS = 5.0
#: HiGHS's presolve on a move's MILP: off. On e5k (5 000 Philly jobs in 5-minute slots,
#: one move of 145 jobs and 2 293 columns) HiGHS 1.16's MIP presolve did not return for
#: minutes (``HPresolve::strengthenInequalities``, whose cover loop checks no time limit),
#: and the whole solve ran past its time limit, which nothing in this process can stop.
MOVE_PRESOLVE = "off"
#: Seconds kept at the end for the fill and the compaction of the moved jobs.
RESERVE = 3.0
#: The search ends (before the deadline, or without one) after as many moves in a row
#: without a gain as it takes moves of the current size to free every job this many times.
STALL_SWEEPS = 3
#: Ejections (``eject``): the neighbourhood sizes, taking turns (``EJECT_STALL``), as
#: (placed jobs a left-out job may push out at most, those with the least utility per unit
#: of work first; jobs left out that have arrived by the window's end, planned after the
#: pushed-out ones, most utility per unit of work first). The large size makes the trades of
#: one large job for many small ones, the small ones are kept where those fail: on a saved
#: e5k rounding (570 911), 60 s each, 60/30 alone reached 572 649 (its last gain at 19 s),
#: these three in turn 573 080 at 30 s and 573 085 at 60 s, 20/10 alone 571 677
#: (docs/performance.md, round 32).
EJECT_SIZES = ((60, 30), (20, 10), (10, 5))
#: ... the window: from the job's arrival to this many times its shortest run after it (round 31, on
#: the saved e5k rounding, 60 s each: 1.5, 3, 6 and 10 reached 572 626, 572 450, 572 641 and
#: 572 677 from 570 911, 6 in 20 s, 3 in 16 s; trying 3, 6 and 1.5 in turn, 572 456).
EJECT_SPAN = 6.0
#: ... and a size gives way to the next after this many attempts in a row without a gain,
#: the next going on with the jobs it has not tried yet (on the saved e5k rounding, 60 s:
#: 50, 200 and 500 reached 573 101, 573 085 and 572 653, at 30 s 572 862, 573 080 and
#: 572 649; the end phase leaves the ejections about 40 s on e5k).
EJECT_STALL = 200
#: With a ``patience``, the ejections also end once they have gone that many times as long
#: without a gain as it took to reach their last one, and at least this share of the time
#: they were given (on round 34's g5k run the best rounding's last gain came at 7.2 s of its
#: 45, the second rounding's ejections gained until their end). A tenth was too little:
#: e5k's best start gains at 0.5 s and then 2.2 s, and in a pair it gave way before its
#: second gain.
EJECT_PATIENCE_FLOOR = 0.25
#: Randomized ejections (``eject``'s ``rng``): each draws a job that may gain, with a chance
#: in proportion to what it could gain, a size of ``EJECT_SIZES`` and a window of
#: ``EJECT_SPAN`` times exp(``EJECT_SPAN_NOISE``·N(0, 1)), and orders the jobs it pushes out
#: and takes in by their utility per unit of work times exp(``EJECT_NOISE``·N(0, 1)). On
#: round 35's saved hand-over LPs, 40 s of ejections then 40 s of these (three seeds) took
#: g5k's 264 868 to 265 962-266 158 where 80 s of ejections reached 265 669, and e5k's
#: 567 560 to 572 854-573 300 against 572 614 (noise 0: g5k 265 956, e5k 572 520; noise 1.0:
#: 265 753, 573 059; docs/performance.md, round 36).
EJECT_NOISE = 0.3
EJECT_SPAN_NOISE = 0.5
#: ... and they end after this many draws in a row without a gain per job that may gain (on
#: a small instance whose jobs left out fit nowhere, at once rather than at the deadline).
EJECT_DRAWN_STALL = 50


class _Placed:
    """The schedule being improved: each placed job's counts per server, its utility, and
    the capacity still free per (slot, server, resource) of both pools."""

    def __init__(self, inst: Instance, columns: Sequence[Column]) -> None:
        T, R = inst.horizon, len(inst.resources)
        self.inst = inst
        self.w = np.broadcast_to(inst.worker_capacity, (T, len(inst.worker_names), R)).copy()
        self.p = np.broadcast_to(inst.ps_capacity, (T, len(inst.ps_names), R)).copy()
        self.workers: dict[int, SlotCounts] = {}
        self.ps: dict[int, SlotCounts] = {}
        self.value: dict[int, float] = {}
        # per job: the placed schedule's first and last slot (T, -1: not placed), its utility
        self.first = np.full(inst.num_jobs, T, dtype=np.int64)
        self.last = np.full(inst.num_jobs, -1, dtype=np.int64)
        self.worth = np.zeros(inst.num_jobs)
        # set by ``eject``: every change then goes through it, so its slot labels stay true
        self.free: FreeCapacity | None = None
        for col in columns:  # a feasible schedule's: they fit as placed
            self.put(col.job, col.workers, col.ps, col.value)

    def _take(self, i: int, y: SlotCounts, z: SlotCounts, sign: int = 1) -> None:
        if self.free is not None:
            self.free.take(i, y, z, sign)
        else:
            take_units(self.inst, self.w, self.p, i, y, z, sign)

    def put(self, i: int, y: SlotCounts, z: SlotCounts, value: float) -> None:
        self._take(i, y, z)
        self.note(i, y, z, value)

    def note(self, i: int, y: SlotCounts, z: SlotCounts, value: float) -> None:
        self.workers[i], self.ps[i], self.value[i] = y, z, value
        self.first[i], self.last[i] = _span(y)
        self.worth[i] = value

    def put_if_free(self, i: int, y: SlotCounts, z: SlotCounts, value: float) -> bool:
        """``put`` where the servers still have room for it (True), else nothing."""
        inst = self.inst
        for free, counts, demand in ((self.w, y, inst.worker_demand[i]),
                                     (self.p, z, inst.ps_demand[i])):
            need = counts.count[:, None] * demand
            if (free[counts.slot, counts.server] < need - 1e-9).any():
                return False
        self.put(i, y, z, value)
        return True

    def remove(self, i: int) -> tuple[SlotCounts, SlotCounts, float]:
        y, z, v = self.workers.pop(i), self.ps.pop(i), self.value.pop(i)
        self.first[i], self.last[i], self.worth[i] = self.inst.horizon, -1, 0.0
        self._take(i, y, z, sign=-1)
        return y, z, v

    def put_best(self, i: int) -> bool:
        """Job i at its earliest completion within what is free (``FreeCapacity.best``), kept
        when it fits with positive utility (True)."""
        assert self.free is not None
        best = self.free.best(i)
        if not best.fits or best.utility <= 0:
            return False
        self.put(i, best.worker_counts, best.ps_counts, float(best.utility))
        return True

    def place(self, col: Column) -> bool:
        """Place ``col``'s units first-fit on the free servers (True), or change nothing."""
        assert self.free is None  # it changes the arrays itself
        inst, i = self.inst, col.job
        y = place_counts(self.w, col.workers, inst.worker_demand[i])
        if y is None:
            return False
        z = place_counts(self.p, col.ps, inst.ps_demand[i])
        if z is None:  # give the workers back
            take_units(inst, self.w, self.p, i, y, SlotCounts.empty(), sign=-1)
            return False
        self.note(i, y, z, col.value)
        return True

    def total(self) -> float:
        return float(sum(self.value.values()))


def _span(counts: SlotCounts) -> tuple[int, int]:
    return (int(counts.slot.min()), int(counts.slot.max())) if counts.slot.size else (0, -1)


def _choose(inst: Instance, cands: dict[int, list[Column]], placed: _Placed,
            start: dict[int, int], seconds: float
            ) -> tuple[float, dict[int, int], bool] | None:
    """The move's MILP over the free jobs' candidate columns against the pooled free
    capacity, from ``start`` (job → its candidate index now placed); (objective, job → chosen
    index, whether it was proven optimal) of HiGHS's best, or None when it has none."""
    T, R = inst.horizon, len(inst.resources)
    free = (placed.w.sum(axis=1), placed.p.sum(axis=1))  # (T, R) per pool
    jobs = sorted(cands)
    owner = [(i, n) for i in jobs for n in range(len(cands[i]))]
    job_row = {i: m for m, i in enumerate(jobs)}
    keys, vals, cols = [], [], []
    for k, (i, n) in enumerate(owner):
        col = cands[i][n]
        for pool, (demand, counts) in enumerate(((inst.worker_demand[i], col.workers),
                                                 (inst.ps_demand[i], col.ps))):
            rs = np.flatnonzero(demand > 0)
            slots, units = counts.per_slot()
            if not rs.size or not slots.size:
                continue
            keys.append(((pool * T + slots[:, None]) * R + rs[None, :]).ravel())
            vals.append((units[:, None] * demand[rs][None, :]).ravel())
            cols.append(np.full(slots.size * rs.size, k))
    key = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    rows, inv = np.unique(key, return_inverse=True)
    pool_of, t_of, r_of = rows // (T * R), (rows // R) % T, rows % R
    cap = np.where(pool_of == 0, free[0][t_of, r_of], free[1][t_of, r_of])
    n_jobs, n_cols = len(jobs), len(owner)
    # the job rows (Σ x ≤ 1 per job) first, then the capacity rows; by column for HiGHS
    row = np.concatenate([[job_row[i] for i, _ in owner], n_jobs + inv.ravel()]).astype(np.int32)
    col = np.concatenate([np.arange(n_cols)] + cols) if cols else np.arange(n_cols)
    val = np.concatenate([np.ones(n_cols)] + vals) if vals else np.ones(n_cols)
    order = np.argsort(col, kind="stable")
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_cols, n_jobs + len(rows)
    lp.col_cost_ = np.array([cands[i][n].value for i, n in owner], dtype=float)
    lp.col_lower_ = np.zeros(n_cols)
    lp.col_upper_ = np.ones(n_cols)
    lp.row_lower_ = np.full(lp.num_row_, -highspy.kHighsInf)
    # 1e-9 of slack per row: the start's usage, summed in another order, may exceed free by
    # a last bit where it fills a row exactly
    lp.row_upper_ = np.concatenate([np.ones(n_jobs), cap + 1e-9])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.searchsorted(col[order], np.arange(n_cols + 1)).astype(np.int32)
    lp.a_matrix_.index_ = row[order]
    lp.a_matrix_.value_ = val[order].astype(float)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_cols
    lp.sense_ = highspy.ObjSense.kMaximize
    h = new_highs(threads=1)
    h.passModel(lp)
    h.setOptionValue("mip_rel_gap", 1e-6)
    h.setOptionValue("time_limit", float(seconds))
    h.setOptionValue("presolve", MOVE_PRESOLVE)
    base = {i: k for k, (i, n) in enumerate(owner) if n == 0}  # each job's first column
    x0 = np.zeros(n_cols)
    for i, n in start.items():
        x0[base[i] + n] = 1.0
    sol = highspy.HighsSolution()
    sol.col_value = list(x0)
    sol.value_valid = True
    h.setSolution(sol)
    h.run()
    got = h.getSolution()
    if not got.value_valid:
        return None
    x = np.asarray(got.col_value, dtype=float)
    chosen = {owner[k][0]: owner[k][1] for k in np.flatnonzero(x > 0.5).tolist()}
    optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value), chosen, optimal


def search(inst: Instance, columns: Sequence[Column], incumbent: Sequence[Column],
           deadline: Deadline, *, rng_seed: int = 0,
           on_value: Callable[[float], None] | None = None) -> tuple[Schedule, int]:
    """``incumbent`` (a feasible schedule's columns, at most one per job) improved by moves
    until ``deadline`` but ``RESERVE`` seconds (or ``STALL_SWEEPS`` times as many moves in
    a row without a gain as it takes to free every job), then the jobs the kept moves freed
    are filled and compacted: (the schedule, the number of moves kept). ``columns``: the
    master's (candidates for the freed jobs). ``on_value(utility)`` after each kept move.
    Never worse than the incumbent."""
    rng = np.random.default_rng(rng_seed)
    placed = _Placed(inst, incumbent)
    by_job: dict[int, list[Column]] = {}
    for col in columns:
        by_job.setdefault(col.job, []).append(col)
    # per job over its columns: the first and last slot (T, -1: none) and the best value
    first = np.full(inst.num_jobs, inst.horizon, dtype=np.int64)
    last = np.full(inst.num_jobs, -1, dtype=np.int64)
    best = np.zeros(inst.num_jobs)
    for col in columns:
        a, b = _span(col.workers)
        i = col.job
        first[i], last[i], best[i] = min(first[i], a), max(last[i], b), max(best[i], col.value)
    movable = np.flatnonzero(last >= 0)
    size = FREE_JOBS
    kept = stall = 0
    changed: set[int] = set()
    while deadline.left() > RESERVE and len(movable) and \
            stall < STALL_SWEEPS * max(1, -(-len(movable) // size)):
        # a seed job, likelier where its best column is worth more than its place now, and
        # jobs that run or could run while it could, drawn at random
        room = np.maximum(best[movable] - placed.worth[movable], 0.0)
        weight = room + max(float(room.mean()), 1e-12)
        seed = int(rng.choice(movable, p=weight / weight.sum()))
        t0 = min(first[seed], placed.first[seed])
        t1 = max(last[seed], placed.last[seed])
        near = ((first <= t1) & (last >= t0)) | ((placed.first <= t1) & (placed.last >= t0))
        near[seed] = False
        pick = rng.permutation(np.flatnonzero(near))[:max(0, size - 1)].tolist()
        free_jobs = {seed, *pick}
        old = {i: placed.remove(i) for i in sorted(free_jobs) if i in placed.workers}
        cands: dict[int, list[Column]] = {}
        start: dict[int, int] = {}
        for i in sorted(free_jobs):
            mine = list(by_job.get(i, ()))
            if i in old:
                y, z, v = old[i]
                start[i] = len(mine)
                mine.append(Column(i, v, y, z))
            if mine:
                cands[i] = mine
        before = sum(v for _, _, v in old.values())
        seconds = min(MOVE_SECONDS, deadline.left() - 0.5)
        got = _choose(inst, cands, placed, start, seconds) if seconds > 0.2 else None
        took_long = got is None or not got[2]
        accepted = False
        if got is not None and got[0] > before + 1e-9 * max(1.0, abs(before)):
            # the choice placed, most valuable job first; one that does not fit the servers
            # (the pooled rows are a relaxation where they differ) keeps its old place if
            # that is still free, or is left out
            done: list[int] = []
            for i, n in sorted(got[1].items(), key=lambda kv: (-cands[kv[0]][kv[1]].value,
                                                                 kv[0])):
                if placed.place(cands[i][n]) or i in old and placed.put_if_free(i, *old[i]):
                    done.append(i)
            after = sum(placed.value[i] for i in done)
            accepted = after > before + 1e-9 * max(1.0, abs(before))
            if not accepted:
                for i in done:
                    placed.remove(i)
        if not accepted:
            stall += 1
            for i, (y, z, v) in old.items():
                placed.put(i, y, z, v)
        else:
            kept, stall = kept + 1, 0
            changed |= free_jobs
            if on_value is not None:
                on_value(placed.total())
        # a move HiGHS did not finish in its time: fewer jobs; one it proved: more
        size = max(2, int(size * 0.75)) if took_long else min(MAX_JOBS, size + 1 + size // 8)
    if changed:
        # the freed jobs the moves left out, on what is free (best utility per unit of work
        # first), then every freed job as early as it can finish
        free = FreeCapacity(inst, placed.w, placed.p)
        left = sorted((i for i in changed if i not in placed.workers),
                      key=lambda i: (-float(inst.jobs[i].utility.at(1))
                                     / max(1, int(inst.jobs[i].workload)), i))
        fill_jobs(inst, left, free, placed.workers, placed.ps, deadline)
        moved_w = {i: placed.workers[i] for i in sorted(changed) if i in placed.workers}
        moved_p = {i: placed.ps[i] for i in moved_w}
        compact_jobs(inst, free, moved_w, moved_p, deadline)
        placed.workers.update(moved_w)
        placed.ps.update(moved_p)
    return Schedule.from_counts(inst, "colgen", placed.workers, placed.ps, trim=True), kept


def eject(inst: Instance, incumbent: Sequence[Column], deadline: Deadline, *,
          on_value: Callable[[float], None] | None = None,
          patience: float | None = None, late: bool = False,
          rng: np.random.Generator | None = None) -> tuple[Schedule, int]:
    """``incumbent`` (a feasible schedule's columns) improved by ejections until ``deadline``
    or until no job (left out, or with ``late`` placed late) gains: (the schedule, the number
    of ejections kept). With a
    ``patience``, also once the time since the last gain is ``patience`` times the time it
    took to reach it, and ``EJECT_PATIENCE_FLOOR`` of the time to ``deadline`` at least: a
    caller with other starts to try gives them the time a stalled one would waste. With
    ``late``, the placed jobs that end later than their shortest run allows take the place
    the jobs left out have in what follows: one is taken out first, pushes out less dense
    jobs, and takes its earliest completion; they are taken by what they could gain, their
    shortest run's utility less their own.

    The jobs left out are taken by decreasing best utility ``f_j(1)``. One pushes out the
    placed jobs of less utility per unit of work than its own best that run while it could
    (from its arrival to ``EJECT_SPAN`` times its shortest run after it; as many as the
    neighbourhood's size, ``EJECT_SIZES``) and takes its earliest completion on what is then
    free. The pushed-out jobs go back where they were if that is still free, else to their
    earliest completion, densest first; then jobs left out nearby (the size's second
    number). The ejection is kept when the jobs involved are worth more than before, else
    everything goes back; after a kept one every job left out may try again. The sizes take
    turns: one gives way to the next after ``EJECT_STALL`` attempts in a row without a gain,
    or once it has tried every job left out. When every size has tried them all without a
    gain, every placed job is moved to finish as early as what is free allows
    (``compact_jobs``), and if one moved, they all try again; else it ends.

    With ``rng``, the ejections are randomized (``EJECT_NOISE``) and go on until
    ``deadline`` (or the patience), with no sweep and no end of their own: each draws the
    job that tries, its neighbourhood's size and its window, and orders the jobs it pushes
    out and takes in by their density times a random factor. The deterministic sweep ends
    at a local optimum; the draws go on past it, and end after ``EJECT_DRAWN_STALL`` draws
    per job that may gain in a row without a gain. ``deadline`` must then have an end.

    Where ``search``'s moves choose among the master's columns, this plans anew against
    the capacity left, and so reaches the trades of one large job for some small ones that
    the columns do not hold (docs/performance.md, rounds 31 and 32). Never worse than
    ``incumbent``."""
    if rng is not None and deadline.at is None:
        raise ValueError("randomized ejections need a deadline: they have no end of their own")
    placed = _Placed(inst, incumbent)
    placed.free = FreeCapacity(inst, placed.w, placed.p)
    J, T = inst.num_jobs, inst.horizon
    top = np.array([float(job.utility.at(1)) for job in inst.jobs])
    work = np.maximum(1, inst.workload).astype(float)
    arrival = inst.arrival
    open_ = (top > 0) & (arrival < T)
    most_w = np.array([most_workers(inst, i) for i in range(J)], dtype=np.int64)
    shortest = -(-np.asarray(inst.workload, dtype=np.int64) // np.maximum(1, most_w))
    if late:  # the utility of each job's shortest run: a placed job worth less may gain
        reach = np.array([float(job.utility.at(max(1, int(d))))
                          for job, d in zip(inst.jobs, shortest, strict=True)])
        below = reach - 1e-9 * np.maximum(1.0, np.abs(reach))

    def noisy(density: np.ndarray) -> np.ndarray:
        """``density`` as it is, or with ``rng`` times a random factor each."""
        if rng is None:
            return density
        return density * np.exp(EJECT_NOISE * rng.standard_normal(len(density)))

    def attempt(j: int, hi: int, most: int, fill: int) -> bool:
        """Job j (left out, or placed and taken out first) pushes out up to ``most`` less
        dense jobs that run from its arrival to slot ``hi``, and up to ``fill`` jobs left
        out follow; kept when that gains (True), else everything as it was."""
        mine = placed.remove(j) if placed.last[j] >= 0 else None
        on = np.flatnonzero((placed.first <= hi) & (placed.last >= inst.jobs[j].arrival))
        density = placed.worth[on] / work[on]
        keep = density < top[j] / work[j]
        on, density = on[keep], noisy(density[keep])
        old = {i: placed.remove(i) for i in on[np.lexsort((on, density))][:most].tolist()}
        involved = [j] if placed.put_best(j) else []
        if involved:
            back = noisy(np.array([old[i][2] / work[i] for i in old]))
            for _, i in sorted(zip(-back, old, strict=True)):
                if placed.put_if_free(i, *old[i]) or placed.put_best(i):
                    involved.append(i)
            near = np.flatnonzero(open_ & (placed.last < 0) & (arrival <= hi))
            for i in near[np.lexsort((near, -noisy(top[near] / work[near])))][:fill].tolist():
                if placed.put_best(i):
                    involved.append(i)
        before = sum(v for _, _, v in old.values()) + (mine[2] if mine is not None else 0.0)
        if sum(placed.value[i] for i in involved) > before + 1e-9 * max(1.0, abs(before)):
            return True
        for i in involved:
            placed.remove(i)
        for i, (y, z, v) in old.items():
            placed.put(i, y, z, v)
        if mine is not None:
            placed.put(j, *mine)
        return False

    def compact() -> bool:
        """Every placed job as early as what is free allows (``compact_jobs``); True when
        one of them finishes earlier."""
        moved = compact_jobs(inst, placed.free, placed.workers, placed.ps, deadline)
        for i in moved:
            y = placed.workers[i]
            placed.note(i, y, placed.ps[i], inst.utility_at(i, int(y.slot.max())))
        return bool(moved)

    n = len(EJECT_SIZES)
    tried = np.zeros((n, J), dtype=bool)  # per size: the jobs left out it has tried
    kept = 0
    size = 0  # the neighbourhood: ``EJECT_SIZES[size]``
    failed = 0  # its attempts in a row that gained nothing
    began = gained = time.perf_counter()
    floor = EJECT_PATIENCE_FLOOR * deadline.left()
    while not deadline.passed():
        if patience is not None and \
                time.perf_counter() - gained > max(floor, patience * (gained - began)):
            break
        # the jobs that may gain: left out, or with ``late`` placed later than they could end
        out = open_ & ((placed.last >= 0) & (placed.worth < below) if late
                       else placed.last < 0)
        if rng is not None:  # a job, a size and a window drawn
            may = np.flatnonzero(out & (most_w > 0))
            if not may.size or failed > EJECT_DRAWN_STALL * may.size:
                break
            could = reach[may] - placed.worth[may] if late else top[may]
            j = int(rng.choice(may, p=could / could.sum()))
            span = EJECT_SPAN * float(np.exp(EJECT_SPAN_NOISE * rng.standard_normal()))
            failed += 1
            if attempt(j, min(T - 1, int(arrival[j]) + int(span * shortest[j])),
                       *EJECT_SIZES[rng.integers(n)]):
                kept += 1
                failed = 0
                gained = time.perf_counter()
                if on_value is not None:
                    on_value(placed.total())
            continue
        left = np.flatnonzero(out & ~tried[size])
        if not left.size and not (out & ~tried).any():
            # every size has tried every job left out (since the last gain: then all of
            # them try again), and none gained
            if not compact():
                break
            tried[:] = False
            gained = time.perf_counter()
            if on_value is not None:
                on_value(placed.total())
        if not left.size or failed >= EJECT_STALL:  # the next size takes over
            size, failed = (size + 1) % n, 0
            continue
        # what each could gain at most: a job left out its best utility, a placed one its
        # shortest run's less its own
        j = int(left[np.argmax(reach[left] - placed.worth[left] if late else top[left])])
        tried[size, j] = True
        if most_w[j] <= 0:
            continue
        failed += 1
        if attempt(j, min(T - 1, int(arrival[j]) + int(EJECT_SPAN * shortest[j])),
                   *EJECT_SIZES[size]):
            kept += 1
            failed = 0
            tried[:] = False
            gained = time.perf_counter()
            if on_value is not None:
                on_value(placed.total())
    return Schedule.from_counts(inst, "colgen", placed.workers, placed.ps, trim=True), kept
