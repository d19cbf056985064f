"""Column generation at trace scale: the parts of ``colgen.py``'s bound phase that grow with
the trace rather than with the model (issue 21 item 3).

- ``Column``: one job's schedule held sparsely (``SlotCounts``), ``column_of`` cuts one from
  the subroutine's counts at the slot its work completes, ``usage_cost`` prices it.
- ``Pricer`` / ``price_chunk``: a pricing round — ``best_schedule`` for every job at given
  prices — in-process or in chunks on an executor (a process pool or Dask), with the same
  answers in job order; ``slot_classes`` labels the slots of equal prices so each job builds
  one cost table per label.
- ``fixed_rate_columns``: the opening columns of the trace-scale master.
- ``round_lp`` and ``repair``: feasible schedules from a master LP solution — the columns by
  decreasing ``x_il`` placed first-fit on the remaining capacity, then the jobs left out (or
  placed later than their column said) re-planned one by one by the subroutine against what
  is still free.

``colgen.py`` imports from here (never the other way round).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace

import numpy as np

from oasis_opt.model import REL_TOL, Instance, Schedule, SlotCounts, ps_needed
from oasis_opt.online.subroutine import (
    BestSchedule,
    JobSpec,
    UnitPricer,
    best_schedule,
    best_units,
)

from .deadline import Deadline


@dataclass


class Column:
    """Job ``job``'s schedule held sparsely (per entry: slot, server, count), so that the
    master's columns take memory with the work they do, never (T, H) each."""

    job: int
    value: float  # f_i at the column's actual completion slot
    workers: SlotCounts
    ps: SlotCounts

    def key(self) -> tuple[int, bytes]:
        """Equal for equal schedules of one job (the master adds a column once)."""
        y, z = self.workers, self.ps
        return self.job, b"".join(a.tobytes() for a in (y.slot, y.server, y.count, z.slot,
                                                        z.server, z.count))


def column_of(inst: Instance, i: int, y: SlotCounts, z: SlotCounts) -> Column | None:
    """A column from job i's sparse counts, cut after the first slot c where its work
    reaches V_i and valued ``f_i(c − a_i + 1)``; None when it never does."""
    slots, work = y.per_slot()
    hit = np.flatnonzero(np.cumsum(work) >= inst.jobs[i].workload)
    if not hit.size:
        return None
    c = int(slots[hit[0]])
    return Column(i, inst.utility_at(i, c), y.through(c), z.through(c))


def usage_cost(inst: Instance, col: Column, p: np.ndarray, q: np.ndarray) -> float:
    """Σ_t Σ_h y[t,h]·(α·p[t,h]) + Σ_t Σ_k z[t,k]·(β·q[t,k]): the column's priced usage."""
    i, y, z = col.job, col.workers, col.ps
    return float((y.count * (p[y.slot, y.server] @ inst.worker_demand[i])).sum()
                 + (z.count * (q[z.slot, z.server] @ inst.ps_demand[i])).sum())


class Specs(Sequence[JobSpec]):
    """``JobSpec.from_instance(instance, i)`` built when asked: a list of them holds J
    utility rows of T values (1.8 GB on the whole Philly trace), this holds none."""

    def __init__(self, instance: Instance) -> None:
        self.inst = instance

    def __len__(self) -> int:
        return self.inst.num_jobs

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return JobSpec.from_instance(self.inst, i)


def price_chunk(instance: Instance, worker_price: np.ndarray, ps_price: np.ndarray,
                classes: np.ndarray | None) -> list[BestSchedule]:
    """``best_schedule`` of every job of ``instance`` at the given prices against the full
    capacities: one pricing task (``instance`` holds one chunk of the jobs, ``Pricer``).
    A module-level function, so that process pools and Dask workers can run it."""
    out = price_jobs(instance, Specs(instance), worker_price, ps_price, classes, Deadline())
    assert out is not None  # no deadline
    return out


#: Jobs priced together: the unit jobs among them share their per-arrival work
#: (``subroutine.best_units``); progress and the deadline are looked at between blocks.
PRICE_BLOCK = 500


def price_jobs(instance: Instance, specs: Sequence[JobSpec], worker_price: np.ndarray,
               ps_price: np.ndarray, classes: np.ndarray | None, deadline: Deadline,
               progress: Callable[[int], None] | None = None) -> list[BestSchedule] | None:
    """Every job's pricing at the given prices against the full capacities, in job order
    (None when ``deadline`` passed first): jobs of workload 1 by ``best_units`` (the
    answers of ``UnitPricer``, whose per-slot tables the jobs of a demand class share, with
    the running minimum and backtracking shared by the jobs of one arrival slot), the others
    by ``best_schedule(convex=True)`` (long jobs whose slot costs are convex by merging cost
    increments: the same payoff, hence the same bound, up to float rounding)."""
    cw, cp = instance.worker_capacity, instance.ps_capacity
    unit = UnitPricer(worker_price, ps_price, cw, cp)
    J = len(specs)
    out: list[BestSchedule | None] = [None] * J
    for lo in range(0, J, PRICE_BLOCK):
        block = [specs[i] for i in range(lo, min(J, lo + PRICE_BLOCK))]
        ones = [k for k, spec in enumerate(block) if int(spec.workload) == 1]
        for k, b in zip(ones, best_units(unit, [block[k] for k in ones]), strict=True):
            out[lo + k] = b
        for k, spec in enumerate(block):
            if out[lo + k] is None:
                if deadline.passed():
                    return None
                out[lo + k] = best_schedule(spec, worker_price, ps_price, cw, cp, classes,
                                            convex=True)
        if progress is not None:
            progress(lo + len(block))
    return out  # type: ignore[return-value]


def slot_classes(worker_price: np.ndarray, ps_price: np.ndarray) -> np.ndarray:
    """(T,) labels, equal for slots whose prices are equal on every server and resource of
    both pools (with the full capacities in every slot, ``best_schedule``'s ``classes``): the
    slots an LP leaves unpriced share one label, so pricing builds their tables once."""
    T = worker_price.shape[0]
    rows = np.concatenate([worker_price.reshape(T, -1), ps_price.reshape(T, -1)], axis=1)
    if rows.shape[1] == 0:
        return np.zeros(T, dtype=np.int64)
    return np.unique(rows, axis=0, return_inverse=True)[1].ravel().astype(np.int64)


#: Jobs per pricing task handed to an executor (at least; at most 32 tasks a round).
CHUNK_JOBS = 500


class Pricer:
    """One pricing round: ``best_schedule`` for every job at given prices, in job order.

    Jobs price independently, so with an ``executor`` (``oasis_opt.tasks.make_executor``: a
    process pool or Dask) the jobs go out in chunks — sub-instances of interleaved jobs, so
    that the chunks' work is alike — and come back in order: the answers, hence the bound,
    are the same as in-process. ``specs`` (in-process only) replaces the jobs' specs."""

    def __init__(self, instance: Instance, specs: Sequence[JobSpec] | None = None,
                 executor: Executor | None = None) -> None:
        self.inst, self.specs, self.executor = instance, specs, executor
        J = instance.num_jobs
        n = max(1, min(32, J // CHUNK_JOBS)) if executor is not None else 1
        self.parts = [np.arange(k, J, n) for k in range(n)]
        self.subs = [replace(instance, jobs=tuple(instance.jobs[j] for j in part))
                     for part in self.parts] if executor is not None else []

    def price(self, p: np.ndarray, q: np.ndarray, classes: np.ndarray | None,
              deadline: Deadline, progress: Callable[[int], None] | None = None
              ) -> list[BestSchedule] | None:
        """The answers of all jobs, or None when the deadline passed first (a round cut
        short proves nothing). ``progress(jobs priced so far)`` after each chunk or 100 jobs."""
        inst = self.inst
        out: list[BestSchedule | None] = [None] * inst.num_jobs
        if self.executor is None:
            specs = self.specs if self.specs is not None else Specs(inst)
            return price_jobs(inst, specs, p, q, classes, deadline, progress)
        from concurrent.futures import FIRST_COMPLETED, wait
        futures = {self.executor.submit(price_chunk, sub, p, q, classes): part
                   for sub, part in zip(self.subs, self.parts, strict=True)}
        done = 0
        try:
            pending = set(futures)
            while pending:
                left = deadline.left()
                if left <= 0:
                    return None
                finished, pending = wait(pending, timeout=min(left, 5.0),
                                         return_when=FIRST_COMPLETED)
                for fut in finished:
                    part = futures[fut]
                    for j, b in zip(part.tolist(), fut.result(), strict=True):
                        out[j] = b
                    done += len(part)
                if progress is not None:
                    progress(done)
        finally:
            for fut in futures:
                fut.cancel()
        return out  # type: ignore[return-value]


#: Seconds between progress reports while a round prices (``on_round``).
ROUND_EVERY = 10.0


#: Above this many job-slot-server cells J·T·(H+K) column generation computes the bound only:
#: its schedule phases hold dense (T, servers) arrays per job and column (12 GB at 5 000
#: Philly jobs over 2 700 slots on 65 servers).
SCHEDULE_CELLS = 20_000_000


def schedule_bytes(inst: Instance, columns: int) -> float:
    """What one schedule phase at trace scale holds beside the master while it runs: rounding
    an LP (``round_lp`` with its fill and compaction), the ejections and the moves
    (``trace_lns``): the free capacity and its copies, 64 B per (slot, server, resource), the
    schedules' counts, 2 KiB a job, and the order of ``columns`` columns, 40 B each. On
    5 000 Philly jobs (2 411 slots, 41 servers) the RSS grew 16 MiB over a rounding and
    17 MiB over the ejections, against 19.6 MiB here with 100 000 columns (round 42)."""
    cells = inst.horizon * (len(inst.worker_names) + len(inst.ps_names)) * len(inst.resources)
    return 64.0 * cells + 2048.0 * inst.num_jobs + 40.0 * columns


def schedule_cells(instance: Instance) -> int:
    """J·T·(H+K): what the per-server schedule phases' dense arrays grow with."""
    return instance.num_jobs * instance.horizon * (len(instance.worker_names)
                                                   + len(instance.ps_names))


@dataclass(frozen=True)


class Round:
    """Where column generation's bound phase is: after round ``iteration`` (``priced`` None),
    or while it prices (``priced`` of ``jobs`` done); ``note``: a phase left out for want of
    memory (``limits.no_room``), said as it happens."""

    iteration: int
    seconds: float
    lp: float  # last restricted-master LP value (a lower bound on the LP's)
    bound: float  # least Lagrangian bound so far
    incumbent: float
    gap: float  # (bound − incumbent) / |incumbent|, as the report
    columns: int
    priced: int | None
    jobs: int
    note: str = ""


#: Start delays (slots after arrival) of the fixed-rate columns that open the trace-scale


#: master: every one of the first eight, then spreading out.
START_DELAYS = (0, 1, 2, 3, 4, 5, 6, 7, 10, 14, 20, 28, 40, 56, 80, 112)


def fixed_rate_columns(inst: Instance, i: int) -> list[Column]:
    """Job i run at its most workers that fit the whole cluster, ``w = min(N_i, Σ_h fits_h)``,
    from ``a_i + d`` for each d in ``START_DELAYS`` while it still finishes in the horizon and
    is worth at least 1 % of ``f_i(1)``; workers and PSs placed first-fit by server index on
    the full capacities (a column only has to fit each server alone). These give the master
    duals near the LP's from the first round — the rounds of column generation then only
    refine them (on the Philly slices the bound left the trivial Σ f_i(1) only after ~18
    rounds without them)."""
    job, T = inst.jobs[i], inst.horizon
    fits = server_fits(inst.worker_capacity, inst.worker_demand[i])
    w = most_workers(inst, i)
    if w <= 0:
        return []
    n = -(-int(job.workload) // w)  # slots at rate w
    units = np.full(n, w, dtype=np.int64)
    units[-1] = int(job.workload) - w * (n - 1)
    ps_units = np.asarray(ps_needed(units, float(job.ps_ratio)), dtype=np.int64)
    wrow = _first_fit(fits, units)
    prow = _first_fit(server_fits(inst.ps_capacity, inst.ps_demand[i]), ps_units)
    if wrow is None or prow is None:
        return []
    top = float(job.utility.at(1))
    cols = []
    for d in START_DELAYS:
        first = job.arrival + d
        if first + n > T:
            break
        value = float(job.utility.at(d + n))
        if value < 0.01 * top:
            break
        slots = np.arange(first, first + n)
        cols.append(Column(i, value, SlotCounts.from_rows(slots, wrow, checked=False),
                           SlotCounts.from_rows(slots, prow, checked=False)))
    return cols


#: Count rows per pool at most that ``with_count_rows`` adds to the trace-scale master; 0
#: (none) by default: on the 5 000-job Alibaba slice 8 of them made each LP re-solve 45 %
#: slower (3: 20 %) and moved the restricted LP by 0.01 % after two rounds, and on its first
#: 1 000 jobs the LP optimum by 0.002 %, while on a 150-job slice of the same trace (two
#: 2-GPU nodes) they took the LP optimum from 349.55 to 344.90 (docs/performance.md, pool7).
COUNT_ROWS = 0


def count_thresholds(capacity: np.ndarray, demand: np.ndarray, weight: np.ndarray,
                     most: int | None = None) -> np.ndarray:
    """(k, R) threshold vectors u for one pool's count rows (``with_count_rows``), chosen
    among the jobs' demand vectors.

    The row of u in slot t is ``Σ_{i: d_i ≥ u} n_i(t) ≤ F(u) = Σ_s fits_s(u)`` with
    ``fits_s(u) = ⌊min_{r: u_r > 0} C_s[r]/u_r⌋``; the pooled capacity rows imply only
    ``Σ n_i(t) ≤ P(u) = min_r Σ_s C_s[r]/u_r`` for those units. Kept: the u with
    ``F(u) < P(u)`` that no other kept u' ≤ u with ``F(u') ≤ F(u)`` implies, the ``most``
    that charge the counted units most beyond the pooled rows:
    ``Σ_{i: d_i ≥ u} weight_i · max(0, 1/F(u) − max_r d_i[r]/Σ_s C_s[r])`` (``weight``: the
    jobs' work)."""
    R = capacity.shape[1] if capacity.ndim == 2 else demand.shape[1]
    if not len(capacity) or not len(demand):
        return np.zeros((0, R))
    cand = np.unique(demand[(demand > 0).any(axis=1)], axis=0)
    total = capacity.sum(axis=0)
    rows = []
    for u in cand:
        need = u > 0
        f = float(_count_fits(capacity, u).sum())
        pooled = float(np.min(total[need] / u[need]))
        if f < pooled * (1 - 1e-9):
            counted = (demand >= u).all(axis=1)
            # per unit counted, what the row charges beyond its largest pooled share
            # (a resource this pool has none of gives no pooled share: 0, not 0/0)
            share = np.divide(demand[counted], total, out=np.zeros_like(demand[counted]),
                              where=total > 0)
            extra = np.maximum(0.0, 1.0 / f - np.max(share, axis=1)) \
                if f > 0 else np.ones(int(counted.sum()))
            rows.append((float(weight[counted] @ extra), f, u))
    kept: list[tuple[float, float, np.ndarray]] = []
    for score, f, u in sorted(rows, key=lambda row: (row[1], -row[0])):
        # u' ≤ u counts every unit u counts, within no more room: u's row is implied
        if not any((u2 <= u).all() and f2 <= f for _, f2, u2 in kept):
            kept.append((score, f, u))
    kept.sort(key=lambda row: -row[0])
    return np.array([u for _, _, u in kept[:COUNT_ROWS if most is None else most]]
                    ).reshape(-1, R)


def _count_fits(capacity: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(S,) ``fits_s(u)`` of a count row: the units of demand ≥ u each server holds at most,
    with the model's float tolerance (``REL_TOL``) on the side of holding more, so that the
    row holds for every schedule the validator accepts."""
    need = u > 0
    return np.floor(np.min(capacity[:, need] / u[need], axis=1) * (1 + REL_TOL)
                    + 1e-9).clip(min=0)


def with_count_rows(inst: Instance, most: int | None = None) -> Instance:
    """The same scheduling problem with ``count_thresholds``' rows as extra resources: for
    each threshold u of a pool, a resource ``count:w<k>`` (``count:p<k>``) of capacity
    ``fits_s(u)`` on each server s of that pool (0 on the other pool) that a unit of job i
    demands 1 of when ``d_i ≥ u`` (else 0).

    Exact, not a relaxation: on one server the units with ``d_i ≥ u`` take at least u_r of
    each resource r each, so an integer number n of them fits only if ``n·u_r ≤ C_s[r]`` for
    every r, i.e. ``n ≤ fits_s(u)`` — every schedule of ``inst`` is one of the result, and a
    job's own units fit each server alone in both (``fits_s(d_i) ≤ fits_s(u)``). So
    the trace-scale master built on the result (``_Master`` with ``pool_all``) is still a
    relaxation of ``inst``, and its pooled rows now hold ``Σ_{i: d_i ≥ u} n_i(t) ≤ Σ_s
    fits_s(u)``: what the servers hold of those units one by one, where the pooled capacity
    rows let the units fill the sum of the capacities (fragmentation, and a resource that runs
    out on one server first). Prices for the new resources enter pricing like any other, so the
    Lagrangian bound stays ``Σ π·C + Σ_i max(0, payoff_i) ≥ LP ≥ OPT``. The schedules are the
    same: they read ``inst``'s resources only."""
    W = count_thresholds(inst.worker_capacity, inst.worker_demand, inst.workload, most)
    P = count_thresholds(inst.ps_capacity, inst.ps_demand, inst.workload, most)
    if not len(W) and not len(P):
        return inst
    kw, kp = len(W), len(P)

    def counted(d: np.ndarray, U: np.ndarray) -> list[float]:
        return [1.0 if (d >= u).all() else 0.0 for u in U]

    def groups(groups_: tuple, U: np.ndarray, before: int, after: int) -> tuple:
        return tuple(replace(g, capacity=tuple(g.capacity) + (0.0,) * before
                             + tuple(float(_count_fits(np.asarray([g.capacity], dtype=float),
                                                       u)[0]) for u in U)
                             + (0.0,) * after) for g in groups_)

    jobs = tuple(replace(j, worker_demand=np.concatenate(
        [j.worker_demand, counted(np.asarray(j.worker_demand, dtype=float), W), np.zeros(kp)]),
        ps_demand=np.concatenate([j.ps_demand, np.zeros(kw),
                                  counted(np.asarray(j.ps_demand, dtype=float), P)]))
                 for j in inst.jobs)
    names = tuple(f"count:w{k}" for k in range(kw)) + tuple(f"count:p{k}" for k in range(kp))
    return replace(inst, resources=tuple(inst.resources) + names,
                   worker_groups=groups(inst.worker_groups, W, 0, kp),
                   ps_groups=groups(inst.ps_groups, P, kw, 0), jobs=jobs)


#: Units of a demand a server holds "without limit": more than any job's workers or PSs
#: (``io.MAX_COUNT``, 10¹²), and a capacity of 1e15 over a demand of 1e-9 (1e24 units) must
#: not overflow int64 (it wrapped to −2⁶³).
MANY_UNITS = 1 << 40


def server_fits(capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """(S,) units of a demand each server holds alone (``MANY_UNITS`` at most, and when it
    needs none)."""
    need = demand > 0
    if not need.any():
        return np.full(len(capacity), MANY_UNITS, dtype=np.int64)
    return np.clip(np.floor(np.min(capacity[:, need] / demand[need], axis=1) + 1e-9),
                   0, MANY_UNITS).astype(np.int64)


def most_workers(inst: Instance, i: int) -> int:
    """Job i's most workers a slot that the worker servers hold for it, each alone counted:
    ``min(N_i, Σ_h fits_h)`` (0: no server holds one); its shortest run is ``⌈V_i / that⌉``
    slots."""
    return int(min(inst.jobs[i].max_workers,
                   server_fits(inst.worker_capacity, inst.worker_demand[i]).sum()))


def _first_fit(fits: np.ndarray, units: np.ndarray) -> np.ndarray | None:
    """(n, S) units per slot spread first-fit by server index, or None if some do not fit."""
    cum = fits.cumsum()
    if len(units) and (not len(fits) or cum[-1] < units.max()):
        return None if units.max() > 0 else np.zeros((len(units), len(fits)), dtype=np.int64)
    return np.minimum(np.maximum(units[:, None] - (cum - fits)[None, :], 0), fits[None, :])


def place_counts(free: np.ndarray, counts: SlotCounts, demand: np.ndarray) -> SlotCounts | None:
    """The units of ``counts`` placed per slot on the servers first-fit by index within
    ``free`` (T, S, R), which is reduced by what they take; None (``free`` unchanged) when
    some slot's units do not fit."""
    slots, units = counts.per_slot()
    if not slots.size:
        return counts
    f = free[slots]
    need = demand > 0
    if need.any():
        n = np.clip(np.floor(np.min(f[:, :, need] / demand[need], axis=2) + 1e-9), 0,
                    MANY_UNITS).astype(np.int64)
    else:
        n = np.broadcast_to(units[:, None], f.shape[:2])
    cum = n.cumsum(axis=1)
    if (cum[:, -1] < units).any():
        return None
    take = np.minimum(np.maximum(units[:, None] - (cum - n), 0), n)
    free[slots] -= take[:, :, None] * demand
    return SlotCounts.from_rows(slots, take, checked=False)


def take_units(inst: Instance, free_w: np.ndarray, free_p: np.ndarray, i: int,
               y: SlotCounts, z: SlotCounts, sign: int = 1) -> None:
    """Job i's units (workers ``y``, PSs ``z``, per server) leave the free capacity of both
    pools (``sign`` −1: come back)."""
    free_w[y.slot, y.server] -= sign * y.count[:, None] * inst.worker_demand[i]
    free_p[z.slot, z.server] -= sign * z.count[:, None] * inst.ps_demand[i]


def round_lp(inst: Instance, columns: Sequence[Column], x: np.ndarray, fill: bool = False,
             deadline: Deadline | None = None, compact: bool = False,
             by_weight: bool = False) -> Schedule:
    """A feasible schedule from a master LP solution: columns by decreasing ``x_il`` (ties:
    higher value, then first added), each job's first whose per-slot units still fit on the
    servers (first fit by server index, ``place_counts``), the rest of the job's columns skipped.
    With ``fill`` the jobs left out are then planned on what is still free (``fill_jobs``), and
    with ``compact`` every placed job is then moved to finish as early as what is free allows
    (``compact_jobs``), until ``deadline``.
    ``by_weight``: jobs by decreasing LP weight ``Σ_l x_il`` first (each job's columns still
    by x), and the fill's jobs by decreasing LP value ``Σ_l x_il·f_il`` first (ties: by
    density): an interior x spreads a job over many small x_il, and the order by column
    alone places jobs the LP holds at 0.1 before jobs it holds at 0.9 in ten pieces
    (``colgen.ROUND_BY_WEIGHT``).
    Memory: the cluster's free capacity per (slot, server, resource) and the chosen columns."""
    T, R = inst.horizon, len(inst.resources)
    free_w = np.broadcast_to(inst.worker_capacity, (T, len(inst.worker_names), R)).copy()
    free_p = np.broadcast_to(inst.ps_capacity, (T, len(inst.ps_names), R)).copy()
    columns = columns[:len(x)]
    x = np.asarray(x, dtype=float)
    value = np.array([c.value for c in columns])
    keys = (np.arange(len(columns)), -value, -x)
    if by_weight:
        job = np.fromiter((c.job for c in columns), dtype=np.int64, count=len(columns))
        keys += (-np.bincount(job, weights=x, minlength=inst.num_jobs)[job],)
    order = np.lexsort(keys)
    workers: dict[int, SlotCounts] = {}
    ps: dict[int, SlotCounts] = {}
    for k in order[x[order] > 1e-6].tolist():
        col = columns[k]
        i = col.job
        if i in workers:
            continue
        y = place_counts(free_w, col.workers, inst.worker_demand[i])
        if y is None:
            continue
        z = place_counts(free_p, col.ps, inst.ps_demand[i])
        if z is None:  # give the workers back
            take_units(inst, free_w, free_p, i, y, SlotCounts.empty(), sign=-1)
            continue
        workers[i], ps[i] = y, z
    if fill:
        # densest first: best utility f_i(1) per unit of work V_i; ``by_weight``: the LP's
        # value Σ_l x_il·f_il first (0.2 % less on 5 000 Philly jobs alone, round 5; better
        # with the placement by weight on e5k and p5k, round 16)
        top = np.array([float(j.utility.at(1)) for j in inst.jobs])
        density = top / np.maximum(1, inst.workload)
        fill_keys = (np.arange(inst.num_jobs), -density)
        if by_weight:
            fill_keys += (-np.bincount(job, weights=x * value, minlength=inst.num_jobs),)
        left = [i for i in np.lexsort(fill_keys).tolist() if i not in workers]
        free = FreeCapacity(inst, free_w, free_p)
        fill_jobs(inst, left, free, workers, ps, deadline or Deadline())
        if compact:
            compact_jobs(inst, free, workers, ps, deadline or Deadline())
    return Schedule.from_counts(inst, "colgen", workers, ps, trim=True)


class FreeCapacity:
    """The capacity still free per (slot, server, resource) of both pools, and slot labels
    for ``best_schedule``'s ``classes``: equal for slots whose free capacity is equal in both
    pools (the prices are zero). The slots a change touches get labels of their own, so the
    labels stay valid between recomputations (``RELABEL_EVERY`` changes)."""

    def __init__(self, inst: Instance, free_w: np.ndarray, free_p: np.ndarray) -> None:
        self.inst, self.w, self.p = inst, free_w, free_p
        self.zw, self.zp = np.zeros(free_w.shape), np.zeros(free_p.shape)
        self.changes = 0
        self.relabel()

    def relabel(self) -> None:
        T = self.inst.horizon
        # + 0.0: −0.0 as 0.0
        rows = np.ascontiguousarray(np.concatenate([self.w.reshape(T, -1),
                                                    self.p.reshape(T, -1)], axis=1) + 0.0)
        # each slot's row as one opaque value: equal bytes, equal floats (NaN never occurs),
        # and 18 times faster than ``np.unique(axis=0)`` on e5k's 2 101 × 77 (0.5 against
        # 9 ms; it took a quarter of the ejections' time, round 31)
        one = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))) \
            if rows.shape[1] else np.zeros(T, dtype=np.int64)
        self.labels = np.unique(one.ravel(), return_inverse=True)[1].ravel().astype(np.int64)
        self.fresh = int(self.labels.max(initial=-1)) + 1

    def take(self, i: int, y: SlotCounts, z: SlotCounts, sign: int = 1) -> None:
        """Job i's units leave the free capacity (``sign`` −1: come back)."""
        take_units(self.inst, self.w, self.p, i, y, z, sign)
        self.changes += 1
        if self.changes % RELABEL_EVERY == 0:
            self.relabel()
            return
        touched = np.unique(np.concatenate([y.slot, z.slot]))
        self.labels[touched] = self.fresh + np.arange(touched.size)
        self.fresh += touched.size

    def best(self, i: int) -> BestSchedule:
        """Job i's earliest-completing schedule within the free capacity (the subroutine at
        zero prices: its payoff is then the utility)."""
        return best_schedule(JobSpec.from_instance(self.inst, i), self.zw, self.zp, self.w,
                             self.p, self.labels)


#: Changes of the free capacity between two recomputations of its slot labels.
RELABEL_EVERY = 200


def fill_jobs(inst: Instance, jobs: Sequence[int], free: FreeCapacity,
              workers: dict[int, SlotCounts], ps: dict[int, SlotCounts],
              deadline: Deadline) -> None:
    """Each of ``jobs`` in turn gets its earliest-completing schedule within the capacity
    still free, kept when its utility is positive: the capacity the rounding left unused goes
    to the jobs it left out. (At the LP's duals instead of zero prices the jobs avoid the
    slots the LP found busy, and the schedule came out 1.5 % worse on 5 000 Philly jobs.)"""
    for i in jobs:
        if deadline.passed():
            return
        job = inst.jobs[i]
        if job.arrival >= inst.horizon or float(job.utility.at(1)) <= 0:
            continue
        best = free.best(i)
        if not best.fits or best.utility <= 0:
            continue
        free.take(i, best.worker_counts, best.ps_counts)
        workers[i], ps[i] = best.worker_counts, best.ps_counts


def compact_jobs(inst: Instance, free: FreeCapacity, workers: dict[int, SlotCounts],
                 ps: dict[int, SlotCounts], deadline: Deadline) -> list[int]:
    """One pass over the placed jobs by completion slot: each is taken out and re-planned at
    its earliest completion within what is free with its own units back
    (``FreeCapacity.best``; its old schedule is one of the candidates), and the new plan is
    kept when it finishes with more utility. The rounding places columns where the LP ran
    them next to fractions it dropped, so capacity is left free before them; this moves the
    work into it. Never worse; jobs already at their earliest possible completion
    ``a + ⌈V/w⌉ − 1`` (w the most workers the servers hold for it) are skipped. Returns
    the jobs it moved."""
    last = {i: int(y.slot.max()) for i, y in workers.items() if y.slot.size}
    moved: list[int] = []
    for i in sorted(last, key=lambda k: (last[k], k)):
        if deadline.passed():
            return moved
        job = inst.jobs[i]
        most = most_workers(inst, i)
        if most <= 0 or last[i] <= job.arrival + -(-int(job.workload) // most) - 1:
            continue
        y, z = workers[i], ps[i]
        before = float(job.utility.at(last[i] - job.arrival + 1))
        free.take(i, y, z, sign=-1)
        best = free.best(i)
        if best.fits and best.utility > before + 1e-12 * max(1.0, abs(before)):
            free.take(i, best.worker_counts, best.ps_counts)
            workers[i], ps[i] = best.worker_counts, best.ps_counts
            moved.append(i)
        else:
            free.take(i, y, z)
    return moved
