"""The schedule-packing master with identical servers packed by patterns (SPEC §2).

Column generation's plain master (``colgen._Master``) has capacity rows per server, or, with
identical servers aggregated, per group of them. The per-server master is large and its MILP
slow; the aggregated one is small but only a relaxation for integer schedules (its rows let a
group take loads that no split over its servers fits: 60 workers of bandwidth 20 and 80 of 5
fit in 40 servers of (4 GPU, 40 Gbps) in total, but at most 60 + 60 of them server by server).

Here every group g of identical servers (``|g| ≥ 2``) is packed exactly, as in the compact
model's ``pattern`` packing (``formulations/common.py``): jobs whose demand vectors agree on
the resources that can bind on g form a *demand class* c, and the maximal single-server count
vectors ``n_p`` over the classes are g's *patterns*. With integer ``λ_gtp`` (servers of g
filled by pattern p in slot t):

    Σ_il W_il[t,g]·[c(i) = c]·x_il − Σ_p n_cp·λ_gtp ≤ 0     per group g, slot t, class c
    Σ_p λ_gtp ≤ |g|                                          per group g, slot t

A column now holds a job's per-slot *counts per group* (``W[t, g]`` workers, ``Z[t, g]``
PSs), not per server; schedules that differ only in which server of a group they use are one
column. Single servers, and groups with too many patterns (split into single servers), keep
capacity rows ``Σ α_i[r]·W·x ≤ C[r]``, which are exact for one server. So:

- x and λ integer: exactly the scheduling problem restricted to the columns (every solution
  maps to servers: each server of g takes one pattern's class counts, filled job by job);
- the LP relaxation is a valid bound on OPT, and no weaker than the schedule LP: a class-count
  vector in ``|g|·conv(single-server packings)`` lies within the group's total capacity, whose
  LP optimum is the per-server one (``colgen._Master``).

Pricing stays OASiS's subroutine: a worker of job i on a server of g costs the dual of row
(g, t, c(i)) (or ``Σ_r α_i[r]·p`` on capacity rows), handed to ``best_schedule`` as a price
on one resource the job demands. The Lagrangian bound for prices ``π ≥ 0`` is

    LB(π) = Σ_cap π·C + Σ_{g,t} |g|·max(0, max_p Σ_c n_cp·π_gtc) + Σ_i max(0, payoff_i(π)),

(the λ columns priced out at their best), valid for any ``π ≥ 0``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np

from oasis_opt import limits
from oasis_opt.limits import check_allocation
from oasis_opt.model import Instance, Schedule

from .common import binding_resources, maximal_patterns, most_units, row_capacity
from .deadline import Deadline, run_limit
from .highs import new_highs
from .result import SolveResult
from .status import SolveStatus

#: A column enters when its reduced cost exceeds this, relative to max(1, |μ_i|).
ENTER_TOL = 1e-7
#: The restricted LP is proven optimal only where its duals price no job above it: the
#: Lagrangian bound at them at most ``PROOF_TOL``·max(1, LP) above its value. Round 26's
#: search found HiGHS's LP of a master returning duals at which a column already in it had
#: a reduced cost of 12.3 (PSs of 1e6 beside 3.3e14): nothing could enter, the LP's 52.56 was
#: taken as proven and the route called 52.86 optimal where 64.87 is. Such a round proves
#: nothing; the bound stays the least Lagrangian one (64.87 there, valid at any prices).
PROOF_TOL = 1e-6


def lp_proven(lp: float, lagrangian: float) -> bool:
    """Whether a round in which no column entered proves the restricted LP's value ``lp``
    (``PROOF_TOL``): its Lagrangian bound at the LP's duals equals it."""
    return math.isfinite(lagrangian) and lagrangian <= lp + PROOF_TOL * max(1.0, abs(lp))


#: Most patterns one group may have before it is split into single servers.
PATTERN_LIMIT = 2000

#: Bytes this master's column generation and LP dive hold per nonzero of its model beyond
#: the build's own estimate (``PatternMaster.nbytes``), and HiGHS's MILP over it per nonzero
#: (``mip_bytes``: price-and-branch, each LNS window; also ``colgen._Master.mip``'s). RSS
#: growth over the phase, round 42 (docs/performance.md "Memory of column generation"): the
#: LP rounds 57 MiB over 266 598 nonzeros on 400 paper jobs (224 B), 20 MiB over 231 261 on
#: 200 (91 B); the MILP 428 MiB over 274 498 (1 635 B) in 8 s, 503 MiB over 276 465
#: (1 910 B) in 37 s, and 123 MiB over 234 112 (552 B). Its tree grows with its time: an
#: estimate with a margin, not a bound.
LP_BYTES_PER_NNZ = 300
MIP_BYTES_PER_NNZ = 2560

_EPS = 1e-9


def trim(inst: Instance, i: int, workers: np.ndarray, ps: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Job i's schedule cut after the first slot c where its work reaches V_i, and
    ``f_i(c − a_i + 1)``; None when it never does."""
    done = np.cumsum(workers.sum(axis=1))
    hit = np.flatnonzero(done >= inst.jobs[i].workload)
    if not hit.size:
        return None
    c = int(hit[0])
    y, z = workers.copy(), ps.copy()
    y[c + 1:] = 0
    z[c + 1:] = 0
    return y, z, inst.utility_at(i, c)


@dataclass
class GroupColumn:
    """A job's schedule as counts per group: ``workers`` (T, Gw), ``ps`` (T, Gk)."""

    job: int
    value: float
    workers: np.ndarray
    ps: np.ndarray


@dataclass
class _Pool:
    """One server pool (workers or PSs) cut into units: pattern groups and single servers."""

    capacity: np.ndarray  # (S, R) per server
    demand: np.ndarray  # (J, R) per job
    units: list[np.ndarray]  # server indices of each unit
    unit_of: np.ndarray  # (S,) unit of each server
    pattern: list[bool]  # unit packed by patterns (else capacity rows)
    classes: list[np.ndarray]  # per unit: (J,) class of each job, −1 if it never fits
    patterns: list[np.ndarray]  # per pattern unit: (P, C) counts
    base: list[int]  # per unit: first row of its (t, c) or (t, r) block
    card: list[int]  # per pattern unit: first row of its (t) cardinality block
    width: list[int]  # per unit: C (pattern) or R (capacity)
    lam_base: list[int]  # per pattern unit: first λ column (t, p) of the block
    #: per unit: (R,) the capacity rows that can bind (``C_r < Σ_i d_ir·fit_i``); the others
    #: get no entries (``colgen.binding_rows``: HiGHS refuses the entries of a row of 1e19)
    binds: list[np.ndarray]

    @property
    def n_units(self) -> int:
        return len(self.units)


def _build_pool(capacity: np.ndarray, demand: np.ndarray, cap_count: np.ndarray,
                pattern_limit: int) -> _Pool:
    """Units of a pool: groups of ≥ 2 servers with equal capacity vectors take patterns over
    demand classes while they have at most ``pattern_limit``; the rest are single servers."""
    S, R = capacity.shape
    J = demand.shape[0]
    groups: dict[tuple[float, ...], list[int]] = {}
    for s in range(S):
        groups.setdefault(tuple(float(v) for v in capacity[s]), []).append(s)
    units: list[np.ndarray] = []
    pattern: list[bool] = []
    binds: list[np.ndarray] = []
    classes: list[np.ndarray] = []
    patterns: list[np.ndarray] = []
    for servers in groups.values():
        c0 = capacity[servers[0]]
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.where(demand > 0, np.floor(c0[None, :] / demand + _EPS), np.inf).min(axis=1)
        # One job's fit is capped by its own count, but a class of several jobs may fill the
        # server up to the server's fit: ``most`` below takes the uncapped one (capped by the
        # class's total count), else two jobs of a class that share a server hold no pattern.
        fit = np.minimum(raw, cap_count).astype(np.int64) if J else np.zeros(0, dtype=np.int64)
        raw = np.minimum(raw, np.iinfo(np.int64).max // 4)
        users = np.flatnonzero(fit > 0)
        can_bind = c0 < fit.astype(float) @ demand if J else np.zeros(R, dtype=bool)
        pats = None
        cls = np.full(J, -1, dtype=np.int64)
        if len(servers) > 1 and users.size:
            eff = demand * binding_resources(demand[users], c0)
            keys: dict[tuple[float, ...], int] = {}
            for i in users:
                cls[i] = keys.setdefault(tuple(float(v) for v in eff[i]), len(keys))
            most = [int(min(raw[cls == c].max(), cap_count[cls == c].sum())) for c in
                    range(len(keys))]
            dem = [np.array(k) for k in keys]
            budget: list[int | None] = [pattern_limit]
            try:
                pats = np.array(maximal_patterns(dem, most, c0, budget), dtype=np.int64)
            except Exception:
                if budget[0] is None or budget[0] >= 0:
                    raise
                pats = None  # too many patterns: single servers
        if pats is not None:
            units.append(np.array(servers))
            pattern.append(True)
            binds.append(can_bind)
            classes.append(cls)
            patterns.append(pats.reshape(len(pats), -1))
        else:
            for s in servers:
                units.append(np.array([s]))
                pattern.append(False)
                binds.append(can_bind)
                one = np.full(J, -1, dtype=np.int64)
                one[fit > 0] = 0
                classes.append(one)
                patterns.append(np.zeros((0, 0), dtype=np.int64))
    unit_of = np.zeros(S, dtype=np.int64)
    for u, servers in enumerate(units):
        unit_of[servers] = u
    width = [p.shape[1] if pt else R for p, pt in zip(patterns, pattern, strict=True)]
    return _Pool(capacity, demand, units, unit_of, pattern, classes, patterns, [], [], width,
                 [], binds)


class PatternMaster:
    """The master above on one persistent ``highspy.Highs`` (warm simplex re-solves).

    Rows: the jobs' ``Σ_l x_il ≤ 1`` first, then per pool and unit the (t, c) class rows or
    (t, r) capacity rows, then the (t) cardinality rows of pattern units. Columns: the λ of
    every pattern unit and slot first, then the schedules as they are added."""

    def __init__(self, instance: Instance, pattern_limit: int = PATTERN_LIMIT,
                 deadline: Deadline | None = None, room: float | None = None) -> None:
        self.inst = instance
        #: the solve's one deadline: every HiGHS run of this master stops at it
        self.deadline = deadline or Deadline()
        T, J = instance.horizon, instance.num_jobs
        workers, ps_count = most_units(instance)
        self.pools = (_build_pool(instance.worker_capacity, instance.worker_demand,
                                  workers, pattern_limit),
                      _build_pool(instance.ps_capacity, instance.ps_demand, ps_count,
                                  pattern_limit))
        n = J
        n_lam = 0
        for pool in self.pools:
            for u in range(pool.n_units):
                pool.base.append(n)
                n += T * pool.width[u]
            for u in range(pool.n_units):
                pool.card.append(n if pool.pattern[u] else -1)
                pool.lam_base.append(n_lam if pool.pattern[u] else -1)
                if pool.pattern[u]:
                    n += T
                    n_lam += T * len(pool.patterns[u])
        self.n_rows, self.n_lam = n, n_lam
        nnz_lam = sum(T * int((p > 0).sum()) + T * len(p) for pool in self.pools
                      for p, pt in zip(pool.patterns, pool.pattern, strict=True) if pt)
        check_allocation("instance", 16.0 * (n + n_lam + 4 * nnz_lam),
                         f"pattern master of {n} rows and {n_lam} pattern columns")
        #: its build and its LP rounds over the pattern columns
        self.nbytes = 16.0 * (n + n_lam + 4 * nnz_lam) + LP_BYTES_PER_NNZ * float(nnz_lam)
        if room is not None:  # ``room`` more for the caller's columns, beside what is held
            limits.need_room(self.nbytes + room, f"the pattern master of {n} rows and {n_lam} "
                                          f"pattern columns")
        ub = np.ones(n)
        for pool in self.pools:
            rhs = row_capacity(pool.capacity, pool.demand)  # as the compact MILP's rows
            for u in range(pool.n_units):
                b = pool.base[u]
                if pool.pattern[u]:
                    ub[b:b + T * pool.width[u]] = 0.0
                    ub[pool.card[u]:pool.card[u] + T] = len(pool.units[u])
                else:
                    ub[b:b + T * pool.width[u]] = np.tile(rhs[pool.units[u][0]], T)
        self.row_upper = ub
        h = self.h = new_highs()
        h.setOptionValue("threads", 1)
        h.setOptionValue("presolve", "off")
        self.deadline.watch(h)
        h.addRows(n, np.full(n, -highspy.kHighsInf), ub, 0, np.zeros(n, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        # λ columns: −n_cp on the class rows of (u, t), +1 on the cardinality row (u, t).
        starts, idx, val = [], [], []
        nz = 0
        for pool in self.pools:
            for u in range(pool.n_units):
                if not pool.pattern[u]:
                    continue
                P = pool.patterns[u]
                C = P.shape[1]
                for t in range(T):
                    for p in range(len(P)):
                        c = np.flatnonzero(P[p])
                        starts.append(nz)
                        idx.extend((pool.base[u] + t * C + c).tolist())
                        val.extend((-P[p, c]).astype(float).tolist())
                        idx.append(pool.card[u] + t)
                        val.append(1.0)
                        nz += len(c) + 1
        if n_lam:
            h.addCols(n_lam, np.zeros(n_lam), np.zeros(n_lam),
                      np.full(n_lam, highspy.kHighsInf), nz, np.array(starts, dtype=np.int32),
                      np.array(idx, dtype=np.int32), np.array(val))
        self.columns: list[GroupColumn] = []
        self.seen: dict[tuple[int, bytes, bytes], int] = {}
        #: (pool, unit, slot) whose λ the MILP keeps integer (where packing failed once)
        self.integer_slots: set[tuple[int, int, int]] = set()
        self._lam_key: list[tuple[int, int, int]] | None = None
        self._packer: highspy.Highs | None = None

    def mip_bytes(self) -> float:
        """What one MILP over this master takes as it stands (``MIP_BYTES_PER_NNZ``)."""
        return MIP_BYTES_PER_NNZ * float(self.h.getNumNz())

    # --- columns ------------------------------------------------------------------------
    def group_counts(self, i: int, workers: np.ndarray, ps: np.ndarray,
                     value: float) -> GroupColumn:
        """A per-server schedule (T, H), (T, K) of job i as counts per unit."""
        out = []
        for pool, counts in zip(self.pools, (workers, ps), strict=True):
            g = np.zeros((counts.shape[0], pool.n_units), dtype=np.int64)
            np.add.at(g.T, pool.unit_of, counts.T)
            out.append(g)
        return GroupColumn(i, value, out[0], out[1])

    def add(self, col: GroupColumn) -> int:
        """Add a column once; returns its index among the schedules."""
        key = (col.job, col.workers.tobytes(), col.ps.tobytes())
        if key in self.seen:
            return self.seen[key]
        self.seen[key] = len(self.columns)
        i = col.job
        idx: list[np.ndarray] = [np.array([i])]
        val: list[np.ndarray] = [np.ones(1)]
        for pool, counts in zip(self.pools, (col.workers, col.ps), strict=True):
            t, u = np.nonzero(counts)
            for tt, uu in zip(t.tolist(), u.tolist(), strict=True):
                n = float(counts[tt, uu])
                w = pool.width[uu]
                if pool.pattern[uu]:
                    idx.append(np.array([pool.base[uu] + tt * w + pool.classes[uu][i]]))
                    val.append(np.array([n]))
                else:
                    r = np.flatnonzero((pool.demand[i] > 0) & pool.binds[uu])
                    idx.append(pool.base[uu] + tt * w + r)
                    val.append(n * pool.demand[i, r])
        rows = np.concatenate(idx).astype(np.int32)
        v = np.concatenate(val)
        self.h.addCol(-col.value, 0.0, highspy.kHighsInf, len(rows), rows, v)
        self.columns.append(col)
        return len(self.columns) - 1

    # --- LP -------------------------------------------------------------------------------
    def solve_lp(self) -> tuple[float, np.ndarray, np.ndarray]:
        """LP value, the row prices ``π ≥ 0`` (negated duals, job rows included) and x."""
        self.h.run()
        sol = self.h.getSolution()
        pi = np.maximum(-np.asarray(sol.row_dual), 0.0)
        x = np.asarray(sol.col_value)[self.n_lam:]
        return -self.h.getInfo().objective_function_value, pi, x

    def prices(self, i: int, cw: np.ndarray, cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(T, H, R) and (T, K, R) prices for OASiS's subroutine that make one worker (PS) of
        job i cost ``cw`` (``cp``), its ``unit_costs``: one resource the job demands carries
        the whole unit cost (α·p = cost)."""
        T, R = self.inst.horizon, len(self.inst.resources)
        out = []
        for cost, d in zip((cw, cp), (self.inst.worker_demand[i], self.inst.ps_demand[i]),
                           strict=True):
            arr = np.zeros((T, cost.shape[1], R))
            need = np.flatnonzero(d > 0)
            if need.size:
                arr[:, :, need[0]] = cost / d[need[0]]
            out.append(arr)
        return out[0], out[1]

    def unit_costs(self, pi: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(T, H) and (T, K): what one worker (PS) of job i costs on each server and slot at
        row prices ``pi`` (class-row dual on pattern units, ``Σ_r d_i[r]·π`` on capacity)."""
        T = self.inst.horizon
        out = []
        for pool in self.pools:
            cost = np.zeros((T, len(pool.unit_of)))
            for u in range(pool.n_units):
                w, b = pool.width[u], pool.base[u]
                block = pi[b:b + T * w].reshape(T, w)
                if pool.pattern[u]:
                    c = pool.classes[u][i]
                    unit = block[:, c] if c >= 0 else np.zeros(T)
                else:
                    unit = block @ pool.demand[i]
                cost[:, pool.units[u]] = unit[:, None]
            out.append(cost)
        return out[0], out[1]

    def fixed_part(self, pi: np.ndarray) -> float:
        """The Lagrangian's terms that do not depend on the jobs: ``Σ π·C`` over capacity
        rows and ``|g|·max(0, max_p n_p·π_gt)`` per pattern unit and slot."""
        T = self.inst.horizon
        total = 0.0
        for pool in self.pools:
            for u in range(pool.n_units):
                w, b = pool.width[u], pool.base[u]
                block = pi[b:b + T * w].reshape(T, w)
                if pool.pattern[u]:
                    best = (block @ pool.patterns[u].T).max(axis=1) if len(pool.patterns[u]) \
                        else np.zeros(T)
                    total += len(pool.units[u]) * float(np.maximum(best, 0.0).sum())
                else:
                    total += float((block * self.row_upper[b:b + T * w].reshape(T, w)).sum())
        return total

    # --- bounds of the columns (neighbourhoods) ---------------------------------------
    def set_bounds(self, x_lower: np.ndarray, x_upper: np.ndarray, lam_lower: np.ndarray,
                   lam_upper: np.ndarray) -> None:
        """Bounds of every λ and schedule column (``kHighsInf`` for none)."""
        lo = np.concatenate([lam_lower, x_lower]).astype(float)
        hi = np.concatenate([lam_upper, x_upper]).astype(float)
        n = len(lo)
        self.h.changeColsBounds(n, np.arange(n, dtype=np.int32), lo, hi)

    def free_bounds(self) -> None:
        """All columns back to ``[0, ∞)``."""
        self.set_bounds(np.zeros(len(self.columns)), np.full(len(self.columns), np.inf),
                        np.zeros(self.n_lam), np.full(self.n_lam, np.inf))

    def lam_slot(self) -> np.ndarray:
        """(n_lam,) the slot of every λ column."""
        T = self.inst.horizon
        out = np.zeros(self.n_lam, dtype=np.int64)
        for pool in self.pools:
            for u in range(pool.n_units):
                if pool.pattern[u]:
                    P = len(pool.patterns[u])
                    out[pool.lam_base[u]:pool.lam_base[u] + T * P] = np.repeat(np.arange(T), P)
        return out

    # --- MILP -----------------------------------------------------------------------------
    def lambda_of(self, workers: np.ndarray, ps: np.ndarray) -> np.ndarray:
        """λ (n_lam,) of a feasible per-server schedule, ``workers`` (J, T, H) and ``ps``
        (J, T, K): each server's class counts in each slot are dominated by a maximal
        pattern (one exists: extend the content until nothing more fits)."""
        T = self.inst.horizon
        lam = np.zeros(self.n_lam)
        for pool, counts in zip(self.pools, (workers, ps), strict=True):
            for u in range(pool.n_units):
                if not pool.pattern[u]:
                    continue
                P = pool.patterns[u]
                cls = pool.classes[u]
                for s in pool.units[u]:
                    load = np.zeros((T, P.shape[1]), dtype=np.int64)
                    for i in np.flatnonzero(counts[:, :, s].any(axis=1)):
                        load[:, cls[i]] += counts[i, :, s]
                    busy = np.flatnonzero(load.any(axis=1))
                    for t in busy:
                        ok = np.flatnonzero((P >= load[t][None, :]).all(axis=1))
                        if not ok.size:
                            raise ValueError(f"server {s} in slot {t} holds no pattern")
                        lam[pool.lam_base[u] + t * len(P) + int(ok[0])] += 1
        return lam

    def solve_mip(self, time_limit: float, gap: float, start: list[int], lam0: np.ndarray,
                  on_incumbent: Callable[[float, float], None] | None = None
                  ) -> SolveResult:
        """x integer over the columns, from the MIP start ``start`` (columns of a feasible
        schedule) with its λ ``lam0`` (``lambda_of``). Returns the one result record:
        ``values`` (x, λ), ``objective`` their utility, ``status``, ``bound`` the dual bound
        of the MILP restricted to these columns — not a bound on OPT.

        λ is integer lazily: a (unit, slot) whose λ is continuous is a cutting-stock LP, and
        after the solve its class counts are packed into integer patterns (``pack``); where
        that fails its λ become integer and the MILP is solved again (within the time
        limit; the start is returned when nothing feasible is left). HiGHS then branches on
        the schedules only: at 200 jobs on the paper preset the MILP with every λ integer
        (37 500 of them) took 2 minutes for its first improvement over the start.

        ``time_limit`` is capped by the master's deadline; nothing runs past it (the start
        comes back as ``no_solution`` when no time is left)."""
        stop = self.deadline.earlier(time.perf_counter() + time_limit)
        n = len(self.columns)
        x0 = np.zeros(n)
        x0[start] = 1.0
        bound = np.inf

        def done(status: SolveStatus, x: np.ndarray, lam: np.ndarray) -> SolveResult:
            value = float(sum(self.columns[k].value for k in np.flatnonzero(x > 0.5)))
            return SolveResult(status, value, bound, (x, lam), solver="pattern-master")
        while True:
            left = stop.left()
            if left <= 0:
                return done(SolveStatus.NO_SOLUTION, x0, lam0)
            run, packed = self._mip_once(left, gap, x0, lam0, on_incumbent)
            bound = run.bound
            if run.values:
                x, lam_lp = run.values
                lam, failed = self._integral_lambda(x, lam_lp)
                if not failed:
                    return done(run.status, x, lam)
                self.integer_slots |= failed
            if packed is not None:  # the best solution seen that packs
                return done(SolveStatus.TIME_LIMIT, *packed)
            if not run.values or stop.left() < 0.5:
                return done(SolveStatus.NO_SOLUTION, x0, lam0)

    def _mip_once(self, time_limit: float, gap: float, x0: np.ndarray, lam0: np.ndarray,
                  on_incumbent: Callable[[float, float], None] | None
                  ) -> tuple[SolveResult, tuple[np.ndarray, np.ndarray] | None]:
        """One HiGHS run of the MILP: its result (``values`` the rounded x and the LP's λ,
        empty without a solution) and the best improving solution whose λ packed."""
        h = self.h
        n = len(self.columns)
        total = self.n_lam + n
        integer = np.zeros(total, dtype=bool)
        integer[self.n_lam:] = True
        lam_key = self.lam_key()
        if self.integer_slots:
            integer[:self.n_lam] = [k in self.integer_slots for k in lam_key]
        kinds = np.where(integer, highspy.HighsVarType.kInteger,
                         highspy.HighsVarType.kContinuous)
        h.changeColsIntegrality(total, np.arange(total, dtype=np.int32), kinds)
        sol0 = highspy.HighsSolution()
        sol0.col_value = list(np.concatenate([lam0, x0]))
        sol0.value_valid = True
        h.setSolution(sol0)
        h.setOptionValue("presolve", "on")
        # > 0: solve_mip checks
        h.setOptionValue("time_limit", run_limit(h, float(time_limit), mip=True))
        h.setOptionValue("mip_rel_gap", gap)
        packed: list[tuple[np.ndarray, np.ndarray]] = []

        def cb(e: object) -> None:
            # An improving solution counts (is kept and reported) once its class counts pack
            # into integer patterns: then it is a schedule.
            data = e.data_out  # type: ignore[attr-defined]
            sol = np.asarray(data.mip_solution)
            if sol.size != total:
                return
            xs = np.round(sol[self.n_lam:])
            lam, failed = self._integral_lambda(xs, sol[:self.n_lam])
            if failed:
                return
            packed[:] = [(xs, lam)]
            if on_incumbent is not None:
                on_incumbent(-float(data.objective_function_value), -float(data.mip_dual_bound))

        h.cbMipImprovingSolution.subscribe(cb)
        h.run()
        h.cbMipImprovingSolution.unsubscribe(cb)
        status = h.getModelStatus()
        sol = h.getSolution()
        x = np.asarray(sol.col_value)
        bound = -float(h.getInfo().mip_dual_bound)
        # back to an LP for further column generation
        h.changeColsIntegrality(total, np.arange(total, dtype=np.int32),
                                np.full(total, highspy.HighsVarType.kContinuous))
        h.setOptionValue("presolve", "off")
        h.setOptionValue("time_limit", highspy.kHighsInf)
        best = packed[0] if packed else None
        if not sol.value_valid or x.size != total:
            return SolveResult(SolveStatus.NO_SOLUTION, bound=bound), best
        solved = SolveStatus.OPTIMAL if status == highspy.HighsModelStatus.kOptimal \
            else SolveStatus.TIME_LIMIT
        return SolveResult(solved, bound=bound, values=(np.round(x[self.n_lam:]),
                                                         x[:self.n_lam])), best

    def lam_key(self) -> list[tuple[int, int, int]]:
        """(pool, unit, slot) of every λ column."""
        if self._lam_key is None:
            T = self.inst.horizon
            key: list[tuple[int, int, int]] = []
            for a, pool in enumerate(self.pools):
                for u in range(pool.n_units):
                    if pool.pattern[u]:
                        P = len(pool.patterns[u])
                        key += [(a, u, t) for t in range(T) for _ in range(P)]
            self._lam_key = key
        return self._lam_key

    def _integral_lambda(self, x: np.ndarray, lam: np.ndarray
                         ) -> tuple[np.ndarray, set[tuple[int, int, int]]]:
        """Integer λ holding the chosen columns' class counts, slot by slot: the solver's λ
        where integral already, else ``pack``; the (pool, unit, slot) where no packing into
        ``|g|`` servers exists."""
        T = self.inst.horizon
        out = np.zeros(self.n_lam)
        failed: set[tuple[int, int, int]] = set()
        chosen = [self.columns[n] for n in np.flatnonzero(x > 0.5)]
        for a, (pool, attr) in enumerate(zip(self.pools, ("workers", "ps"), strict=True)):
            for u in range(pool.n_units):
                if not pool.pattern[u]:
                    continue
                P = pool.patterns[u]
                need = np.zeros((T, P.shape[1]), dtype=np.int64)
                for col in chosen:
                    c = pool.classes[u][col.job]
                    if c >= 0:
                        need[:, c] += getattr(col, attr)[:, u]
                for t in range(T):
                    lo = pool.lam_base[u] + t * len(P)
                    block = lam[lo:lo + len(P)]
                    r = np.round(block)
                    if np.abs(block - r).max(initial=0.0) < 1e-6 and r.sum() <= len(
                            pool.units[u]) and (r @ P >= need[t]).all():
                        out[lo:lo + len(P)] = r
                        continue
                    got = self.pack(P, need[t], len(pool.units[u]))
                    if got is None:
                        failed.add((a, u, t))
                    else:
                        out[lo:lo + len(P)] = got
        return out, failed

    def pack(self, patterns: np.ndarray, need: np.ndarray, servers: int) -> np.ndarray | None:
        """Integer pattern counts ``λ ≥ 0`` with ``Σ_p λ_p·n_p ≥ need`` and ``Σ_p λ_p ≤
        servers`` (a small MILP: fewest servers covering the counts), or None."""
        if not need.any():
            return np.zeros(len(patterns))
        h = self._packer
        if h is None:
            h = self._packer = new_highs()
            h.setOptionValue("threads", 1)
            self.deadline.watch(h)
        if not self.deadline.highs_limit(h, 2.0, mip=True):
            return None  # past the deadline: no packing, the caller keeps what it had
        h.clearModel()
        use = np.flatnonzero((patterns[:, need > 0] > 0).any(axis=1))
        P = patterns[use]
        m, C = len(use), int((need > 0).sum())
        sub = P[:, need > 0].astype(float)  # (m, C)
        # rows: the C class covers, then Σ_p λ_p ≤ servers
        lower = np.append(need[need > 0].astype(float), -highspy.kHighsInf)
        upper = np.append(np.full(C, highspy.kHighsInf), float(servers))
        h.addRows(C + 1, lower, upper, 0, np.zeros(C + 1, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        idx = np.concatenate([np.arange(C + 1, dtype=np.int32)] * m)
        val = np.concatenate([sub, np.ones((m, 1))], axis=1).ravel()
        h.addCols(m, np.ones(m), np.zeros(m), np.full(m, float(servers)), m * (C + 1),
                  np.arange(m, dtype=np.int32) * (C + 1), idx, val)
        h.changeColsIntegrality(m, np.arange(m, dtype=np.int32),
                                np.full(m, highspy.HighsVarType.kInteger))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        v = np.round(np.asarray(h.getSolution().col_value))
        if v.sum() > servers or ((v @ P) < need).any():
            return None
        out = np.zeros(len(patterns))
        out[use] = v
        return out

    # --- schedules ------------------------------------------------------------------------
    def schedule(self, x: np.ndarray, lam: np.ndarray, algorithm: str = "colgen") -> Schedule:
        """The per-server schedule of integer x and λ: each server of a pattern unit takes
        one chosen pattern, and the jobs of each class fill its room in index order."""
        inst = self.inst
        T = inst.horizon
        chosen = [n for n in range(len(self.columns)) if x[n] > 0.5]
        y = {self.columns[n].job: np.zeros((T, len(inst.worker_names)), dtype=np.int64)
             for n in chosen}
        z = {self.columns[n].job: np.zeros((T, len(inst.ps_names)), dtype=np.int64)
             for n in chosen}
        for pool, attr, out in zip(self.pools, ("workers", "ps"), (y, z), strict=True):
            for u in range(pool.n_units):
                servers = pool.units[u]
                users = [(self.columns[n].job, getattr(self.columns[n], attr)[:, u])
                         for n in chosen if getattr(self.columns[n], attr)[:, u].any()]
                if not users:
                    continue
                if not pool.pattern[u]:
                    for i, counts in users:
                        out[i][:, servers[0]] += counts
                    continue
                P = pool.patterns[u]
                for t in range(T):
                    need = [(i, int(c[t])) for i, c in users if c[t] > 0]
                    if not need:
                        continue
                    block = lam[pool.lam_base[u] + t * len(P):pool.lam_base[u] + (t + 1) * len(P)]
                    pats = [p for p in range(len(P)) for _ in range(int(round(block[p])))]
                    room = [P[p].copy() for p in pats]
                    for i, k in need:
                        c = pool.classes[u][i]
                        for s, rm in enumerate(room):
                            if k == 0:
                                break
                            take = min(k, int(rm[c]))
                            if take > 0:
                                out[i][t, servers[s]] += take
                                rm[c] -= take
                                k -= take
                        if k > 0:
                            raise ValueError(f"patterns of unit {u} in slot {t} do not hold "
                                             f"job {i}'s counts")
        return Schedule.from_arrays(inst, algorithm, y, z, trim=True)


def price(master: PatternMaster, specs: list, pi: np.ndarray) -> tuple[list, float]:
    """Every job's best schedule at row prices ``pi`` (OASiS's subroutine against the full
    capacities) and the Lagrangian bound ``LB(π)`` of the module docstring (``inf`` when the
    deadline cut the round short: the jobs priced so far come back)."""
    from oasis_opt.online.subroutine import best_schedule
    inst = master.inst
    found = []
    bound = master.fixed_part(pi)
    for i, spec in enumerate(specs):
        if master.deadline.passed():  # cut short: no bound from this round
            return found, np.inf
        cw, cp = master.unit_costs(pi, i)
        b = best_schedule(spec, *master.prices(i, cw, cp), inst.worker_capacity,
                          inst.ps_capacity)
        found.append(b)
        if np.isfinite(b.payoff):
            bound += max(0.0, b.payoff)
    return found, bound


def column_slots(col: GroupColumn) -> tuple[int, int]:
    """First and last slot in which the column holds servers ((0, −1) when none)."""
    busy = np.flatnonzero(col.workers.any(axis=1) | col.ps.any(axis=1))
    return (int(busy[0]), int(busy[-1])) if busy.size else (0, -1)


def generate(master: PatternMaster, specs: list, *, deadline: float | None = None,
             max_iterations: int = 10_000, report: Callable[[float], None] | None = None,
             stats: object | None = None) -> tuple[bool, float]:
    """Column generation on the pattern master until pricing finds no column (returns
    ``(True, LP value)``: the LP is optimal), the deadline or the round limit. Every round's
    Lagrangian bound goes to ``report``: the bound on OPT is the least of them, never the LP's
    value itself, which is optimal only within HiGHS's tolerances; ``stats`` (a
    ``colgen.ColgenStats``) collects LP and pricing seconds and the rounds."""
    import time

    inst = master.inst
    lp = 0.0
    for _ in range(max_iterations):
        t0 = time.perf_counter()
        lp, pi, _ = master.solve_lp()
        if master.deadline.passed():  # the LP may have been interrupted: no proof from it
            break
        t1 = time.perf_counter()
        found, lb = price(master, specs, pi)
        t2 = time.perf_counter()
        if stats is not None:
            stats.lp_seconds += t1 - t0  # type: ignore[attr-defined]
            stats.pricing_seconds += t2 - t1  # type: ignore[attr-defined]
            stats.iterations += 1  # type: ignore[attr-defined]
        if report is not None:
            report(lb)
        n0 = len(master.columns)
        for i, b in enumerate(found):
            cut = trim(inst, i, b.workers, b.ps) if np.isfinite(b.payoff) else None
            if cut is None:
                continue
            y, z, value = cut
            cw, cp = master.unit_costs(pi, i)
            reduced = value - float((y * cw).sum() + (z * cp).sum()) - pi[i]
            if reduced > ENTER_TOL * max(1.0, abs(pi[i])):
                master.add(master.group_counts(i, y, z, value))
        if len(master.columns) == n0 and np.isfinite(lb):  # every job priced
            if not lp_proven(lp, lb):  # the LP's duals are not its optimum's: no proof
                break
            return True, lp  # the bound stays the Lagrangian ``lb`` reported (``PROOF_TOL``)
        if master.deadline.passed() or (deadline is not None and time.perf_counter() > deadline):
            break
    return False, lp


def dive(master: PatternMaster, specs: list, deadline: float, *, threshold: float = 0.6,
         share: float = 0.1, pricing: bool = False
         ) -> tuple[np.ndarray, np.ndarray] | None:
    """LP diving: solve the LP, fix every column at ``x ≥ threshold`` (each job's largest; at
    least the ``share`` of the open jobs with the largest x), optionally price the open jobs
    at the new duals (``pricing``, up to 2 rounds per fixing), repeat until no open job has
    x > 0. A batch that makes the LP infeasible is cut to its first fixing, a single one is
    banned. The fixed columns are then packed slot by slot (``pack``). Returns integer
    (x, λ) — at the deadline, of the jobs fixed by then (the last batch dropped: its LP was
    not solved) — or None when the packing fails.

    Measured on 200 jobs of the paper preset (seed 1, 2 shared cores): without pricing 4.5 %
    below the LP bound in 30 s, where HiGHS's branch and bound needed 100 s for 10 %; with
    pricing it did not finish in 200 s (each LP re-solve holds the 37 500 λ columns)."""
    h = master.h
    fixed: dict[int, int] = {}  # job -> column
    banned: set[int] = set()  # columns whose fixing made the LP infeasible
    batch: list[tuple[int, int]] = []  # the last fixings (job, column)
    priced = 0  # pricing rounds since the last fixing (at most 2: then fix anyway)
    stop = master.deadline.earlier(deadline)
    while not stop.passed():
        n = len(master.columns)
        lo, hi = np.zeros(n), np.full(n, np.inf)
        for k, col in enumerate(master.columns):
            if col.job in fixed or k in banned:
                hi[k] = 0.0
        for k in fixed.values():
            lo[k], hi[k] = 1.0, 1.0
        master.set_bounds(lo, hi, np.zeros(master.n_lam), np.full(master.n_lam, np.inf))
        _, pi, x = master.solve_lp()
        if stop.passed():  # the LP may have been interrupted: the last batch is not solved
            for j, _ in batch:
                del fixed[j]
            break
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            # the batch overfilled some slot: keep only its first fixing, or ban a single one
            if not batch:
                master.free_bounds()
                return None
            for j, _ in batch:
                del fixed[j]
            if len(batch) > 1:
                fixed[batch[0][0]] = batch[0][1]
                batch = batch[:1]
            else:
                banned.add(batch[0][1])
                batch = []
            continue
        if pricing and priced < 2:
            priced += 1
            found, _ = price(master, specs, pi)
            added = 0
            for i, b in enumerate(found):
                if i in fixed or not np.isfinite(b.payoff):
                    continue
                cut = trim(master.inst, i, b.workers, b.ps)
                if cut is None:
                    continue
                y, z, value = cut
                cw, cp = master.unit_costs(pi, i)
                if value - float((y * cw).sum() + (z * cp).sum()) - pi[i] > \
                        ENTER_TOL * max(1.0, abs(pi[i])):
                    k0 = len(master.columns)
                    added += master.add(master.group_counts(i, y, z, value)) == k0
            if added:
                continue  # re-solve with the new columns before fixing
        best: dict[int, tuple[float, int]] = {}
        for k in np.flatnonzero(x > 1e-6):
            j = master.columns[k].job
            if j not in fixed and (j not in best or x[k] > best[j][0]):
                best[j] = (float(x[k]), int(k))
        if not best:
            break
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
        take = [kv for kv in ranked if kv[1][0] >= threshold]
        if not take:
            take = ranked[:max(1, int(share * len(ranked)))]
        batch = [(j, k) for j, (_, k) in take]
        for j, k in batch:
            fixed[j] = k
        priced = 0
    else:
        # out of time: the jobs fixed so far, if the last batch kept the LP feasible
        for j, _ in batch:
            del fixed[j]
    master.free_bounds()
    xs = np.zeros(len(master.columns))
    xs[list(fixed.values())] = 1.0
    lam, failed = master._integral_lambda(xs, np.zeros(master.n_lam) - 1.0)
    return None if failed else (xs, lam)
