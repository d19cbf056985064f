"""Column generation on the schedule-packing LP (SPEC §2), on highspy's direct API.

Master (one column per job i and schedule l; ``x_il ∈ [0, 1]``):

    max  Σ_il f_il · x_il
    s.t. Σ_il α_i[r]·y_l[t,h] · x_il ≤ C_h[r]     for every worker server h, resource r, slot t
         Σ_il β_i[r]·z_l[t,k] · x_il ≤ C_k[r]     for every PS server k, resource r, slot t
         Σ_l x_il ≤ 1                              for every job i

HiGHS minimises ``−f·x``; the duals of the capacity rows, negated, are the prices
``p_h[t][r], q_k[t][r] ≥ 0``, and of the job rows the ``μ_i ≥ 0``. Pricing is OASiS's dual
subroutine (``oasis_opt.online.subroutine.best_schedule``) at those prices against the full
capacities: its payoff is ``max_l (f_il − Σ prices·usage_l)``, and a column enters when the
payoff exceeds ``μ_i``.

Bound valid at any time (Lagrangian, capacity rows relaxed with prices ``p, q ≥ 0``):

    LB(p, q) = Σ p·C + Σ q·C + Σ_i max(0, payoff_i(p, q))  ≥  LP  ≥  OPT,

the same form as OASiS's certificate ``D_cert``. It is computed at every pricing round from
the current duals, and the least one is kept; when pricing finds no column, LB equals the LP
value and the bound is proven.

Schedules come from the *pattern master* (``pattern_master.py``): the same columns as counts
per group of identical servers, each group packed exactly by single-server patterns, so that
its MILP over the columns (price-and-branch) is the scheduling problem restricted to them and
its LP a bound no weaker than the one above. The MILP starts from the best heuristic schedule
(OASiS and the baselines), so the result is never worse than any of them; large-neighbourhood
search over windows of slots (``lns.py``) then keeps improving it until the gap target or the
time limit.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field

import highspy
import numpy as np

from oasis_opt import limits
from oasis_opt.limits import NoRoom, check_allocation, human, max_memory
from oasis_opt.model import Instance, Schedule, SlotCounts, ps_needed
from oasis_opt.online.subroutine import BestSchedule, JobSpec, largest_tables
from oasis_opt.utility import trivial_bound

from . import lns, trace_lns
from .colgen_scale import (
    ROUND_EVERY,
    SCHEDULE_CELLS,
    Column,
    Pricer,
    Round,
    Specs,
    column_of,
    fixed_rate_columns,
    round_lp,
    schedule_bytes,
    schedule_cells,
    server_fits,
    slot_classes,
    usage_cost,
    with_count_rows,
)
from .common import most_units, row_capacity
from .deadline import Deadline, run_limit
from .highs import new_highs, option
from .pattern_master import (
    ENTER_TOL,
    LP_BYTES_PER_NNZ,
    MIP_BYTES_PER_NNZ,
    PatternMaster,
    dive,
    generate,
    lp_proven,
)
from .result import SolveResult
from .status import SolveStatus


@dataclass
class ColgenStats:
    """Column generation's running tally, updated by its stages; ``bound ≥ OPT`` always.
    ``solve`` returns it as a ``SolveResult`` (``result``): its extras are these fields."""

    bound: float  # least Lagrangian bound seen (within ``PROOF_TOL`` of the LP when ``proven``)
    lp_value: float  # last restricted-master LP value
    proven: bool  # pricing found no improving column: the LP is optimal (bound within PROOF_TOL)
    mip_status: SolveStatus  # of the MIP stage: optimal, time_limit or no_solution
    iterations: int
    columns: int
    lp_seconds: float = 0.0
    pricing_seconds: float = 0.0
    mip_seconds: float = 0.0
    bound_seconds: float = 0.0  # from the start to the end of the bound phase
    pattern_seconds: float = 0.0  # pattern master: build and column generation
    lns_moves: int = 0  # moves kept (the pattern master's windows, ``trace_lns.search``'s)
    lns_ejections: int = 0  # ejections kept (``trace_lns.eject``)
    integer_slots: int = 0  # (group, slot) whose λ had to be made integer (packing failed)
    dive_value: float = 0.0  # utility of the LP dive's schedule (0: none)
    #: (seconds since the start, incumbent utility, bound) whenever either improves
    history: list[tuple[float, float, float]] = field(default_factory=list)
    #: (round, LP value, best bound so far, seconds since the start) of the bound phase
    rounds: list[tuple[int, float, float, float]] = field(default_factory=list)
    #: the phases left out for want of memory (``limits.no_room``), each a sentence
    notes: list[str] = field(default_factory=list)


def implied_rows(capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """(S, R) mask of the capacity rows worth keeping for one pool.

    Row (s, r) goes when no job demands r, or when a kept row (s, r') implies it for every
    job's per-unit demand: ``d_i[r]·C_s[r'] ≤ d_i[r']·C_s[r]`` for all i gives
    ``Σ_i d_i[r]·n_i ≤ (C_s[r]/C_s[r'])·Σ_i d_i[r']·n_i ≤ C_s[r]``. Exact: every solution of
    the kept rows satisfies the dropped ones (on the generated presets this halves the rows).
    """
    S, R = capacity.shape
    used = (demand > 0).any(axis=0) if demand.size else np.zeros(R, dtype=bool)
    keep = np.broadcast_to(used, (S, R)).copy()
    for r in range(R):
        for r2 in range(R):
            if r2 == r:
                continue
            ok = keep[:, r] & keep[:, r2] & (capacity[:, r2] > 0)
            if not ok.any():
                continue
            lhs = demand[:, r][None, :] * capacity[:, r2][:, None]  # (S, J)
            rhs = demand[:, r2][None, :] * capacity[:, r][:, None]
            implied = ok & (lhs <= rhs * (1 + 1e-12)).all(axis=1)
            keep[implied, r] = False
    return keep


def binding_rows(capacity: np.ndarray, gid: np.ndarray, demand: np.ndarray,
                 most: np.ndarray) -> np.ndarray:
    """(G, R) mask of the capacity rows of one pool's server groups (``gid``, (S,)) that can
    bind: ``C_gr < Σ_i d_ir·min(most_i, Σ_{s∈g} fits_is)``, job i's most units a slot
    (``most``, (J,)) capped by what the group's servers hold of it. Where every job at its
    most fits, no sum of columns (each within capacity alone, and within ``most``) exceeds
    the row: it is not built, as the compact MILP builds no such row. ``solve``'s units
    (``unit_scales``) bring only capacities that may bind below HiGHS's largest matrix entry;
    a row of 2.4e19 that could not bind (a PS resource measured in units of its 1e-9 demand)
    made HiGHS refuse the column of 1.2e19 that entered it, silently, and the master proved
    0.0094 where OPT is 0.0136."""
    S, R = capacity.shape
    G = int(gid.max()) + 1 if S else 0
    group_cap = np.zeros((G, R))
    np.add.at(group_cap, gid, capacity)
    held = np.zeros((G, R))
    if not len(demand) or not S:
        return group_cap < held
    classes, inverse = np.unique(demand, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    for c, d in enumerate(classes):
        if not (d > 0).any():
            continue
        fits = np.bincount(gid, weights=server_fits(capacity, d).astype(float), minlength=G)
        units = np.minimum(most[inverse == c][:, None], fits[None, :]).sum(axis=0)  # (G,)
        held += units[:, None] * d[None, :]
    return group_cap < held


def server_groups(capacity: np.ndarray, pool_all: bool = False) -> np.ndarray:
    """(S,) group id of each server: servers with equal capacity vectors share one (with
    ``pool_all``, every server of the pool shares group 0)."""
    if not len(capacity) or pool_all:
        return np.zeros(len(capacity), dtype=np.int64)
    _, gid = np.unique(capacity, axis=0, return_inverse=True)
    return gid.ravel().astype(np.int64)


#: Above this many columns the aggregated master's first LP runs by interior point (with
#: crossover). The opening masters of four 5 000-job slices (docs/performance.md, round 12):
#: primal 3.5, 5.7, 7.9, 51.7 s, dual 6.6, 2.7, 13.0, 47.3 s, interior point 3.8, 8.3, 9.9,
#: 10.7 s — never far behind, and 5 times ahead on 300 s slots.
IPM_FIRST_COLUMNS = 10_000
#: Interior point (crossover: ``IPM_CROSSOVER``), as one of the ``LP_STRATEGIES`` beside
#: HiGHS's simplex strategies (its ``simplex_strategy``: 4 primal, 1 dual).
IPM = -1
#: The strategies an adaptive master (``_Master.adaptive``, trace scale) may re-solve with:
#: each once, in this order, then whichever took the least CPU time on its last re-solve,
#: another again every ``LP_RETRY``-th re-solve; every strategy but the fastest runs for at
#: most ``LP_TRIAL`` times the fastest's last time (``_Master.solve_lp``). Round 12 put
#: interior point (with crossover) first and tried dual and primal simplex after it: in 300 s
#: slots (e5k) the second master took primal more than 150 s, dual 67 s, interior point 13 s.
#: Round 15 (docs/performance.md) logged every master LP of a 600 s e5k run: the simplex
#: trials and ``values``' capped exact re-solves were stopped at their caps seven times, 183 s
#: of 566, and interior point won every re-solve it ran. Interior point alone, without
#: crossover (``IPM_CROSSOVER``) and with rounding reading the penalised x
#: (``EXACT_ROUNDING``), side by side with the rotation on one core each: e5k 2.80 % → 1.83 %,
#: p5k 1.72 % → 1.44 %, both sides better on both. The rotation stays for other tuples.
LP_STRATEGIES = (IPM,)
#: Whether interior point always ends with a crossover (a basis); else only where a simplex
#: re-solve may follow (``_Master.crossover``). Without it the duals are interior ones (well
#: centred, as in Gondzio's primal-dual column generation).
IPM_CROSSOVER = False
#: Whether rounding re-solves a penalised master exactly first (``_Master.values``):
#: price-and-branch always does.
EXACT_ROUNDING = False
#: Whether the trace-scale bound phase solves the exact restricted LP once at the hand-over
#: time (``MIP_SHARE`` before its end) for ``mip_worth``.
EXACT_HAND_OVER = True
LP_RETRY = 5
LP_TRIAL = 1.5
LP_TRIAL_MIN = 1.0  # seconds: below that a trial's cap is not worth its noise
#: ... from this many columns on (a smaller master re-solves the same way every time, so that
#: its duals, hence its bound, do not depend on timings).
LP_ADAPT_COLUMNS = 10_000
#: An adaptive master (trace scale) sets aside every column whose reduced cost was below
#: ``−SET_ASIDE·max(1, f_il)`` at the last ``SET_ASIDE_SOLVES`` solves in a row (none of them is
#: basic: basic columns price at 0), by fixing it at 0 (``_Master.set_aside``); pricing brings
#: one back when it prices out again.
#: The restricted LP is then over fewer columns: on 5 000 Philly jobs in 900 s slots (30 000
#: columns, 22 000 of them set aside) a re-solve took 1 CPU s against 6–10 s — the master is
#: degenerate, and an exact re-solve over all columns took 10 000–18 000 pivots, also when the
#: set-aside columns were checked and brought back until none priced out (17 000–20 000).
#: **Off by default** (``inf``): side by side with main at 600 s (``--workers 2``, load 5–8),
#: 10⁻³ left d5k's bound level (189 400 against 189 281, ahead by up to 1.8 % until 400 s)
#: and p5k's 1.6 % worse (148 947 against 146 638, behind from the start): the thinner
#: master's duals cost more rounds than its cheaper re-solves buy. Set it to use it.
SET_ASIDE = math.inf
#: (Two solves in a row instead of one left d5k's bound 0.9 % behind main's at 600 s.)
SET_ASIDE_SOLVES = 1
#: Stabilised master (du Merle, Villeneuve, Desrosiers and Hansen 1999) at trace scale: per
#: capacity row two bounded columns, one that buys up to ε_i capacity at π̂_i + δ_i and one
#: that sells up to ε_i at π̂_i − δ_i (``_Master.stabilise``), with π̂ the centre (the prices
#: of the least Lagrangian bound so far), δ_i = ``STAB_DELTA``·(mean centre price) and
#: ε_i = κ·C_i, κ = ``STAB_EPS`` at the first centre, × ``STAB_DECAY`` each round. The LP's
#: duals then pay ε_i per unit outside [π̂ − δ, π̂ + δ]. Bounds stay exact (every one is a
#: Lagrangian of an exact pricing pass); the incumbent side reads the unpenalised LP
#: (``_Master.values``).
STAB_MASTER = True
STAB_DELTA = 0.1
STAB_EPS = 0.1
STAB_DECAY = 0.8
#: ... switched off (exact master) once κ falls below this; and on only from this many columns
#: on (a small master proves its LP in a few exact rounds; penalised rounds delay the proof).
STAB_MIN = 1e-3
STAB_COLUMNS = 10_000
#: Columns per job the master's size estimate allows for: the seeds' and some pricing rounds'.
COLUMNS_PER_JOB = 32


def master_bytes(instance: Instance, aggregate: bool, pool_all: bool = False
                 ) -> tuple[float, int]:
    """(bytes, rows) the restricted master ``_Master(instance, aggregate)`` takes: its capacity
    rows ``T·G·R`` (G server groups, or servers when not aggregated) and ``J`` job rows
    (HiGHS's row data, 96 B each), the per-(slot, server, resource) maps and price arrays
    (``T·(H+K)·R``, 8 copies of 8 B), and ``COLUMNS_PER_JOB`` columns a job, each holding
    at most ``min(V_i, T − a_i)`` slots: 24 B per sparse entry, 12 B per HiGHS nonzero and
    400 B of objects. Nothing grows with J·T·H."""
    T, R, J = instance.horizon, len(instance.resources), instance.num_jobs
    servers = len(instance.worker_names) + len(instance.ps_names)
    groups = servers
    if aggregate:
        groups = sum(len(np.unique(server_groups(c, pool_all))) if len(c) else 0
                     for c in (instance.worker_capacity, instance.ps_capacity))
    rows = T * groups * R + J
    slots = np.minimum(instance.workload, np.maximum(T - instance.arrival, 0)).astype(float)
    per_column = 400.0 + slots * (2 * 24.0 + 12.0 * R)
    nbytes = 96.0 * rows + 64.0 * T * servers * R + COLUMNS_PER_JOB * float(per_column.sum())
    return nbytes, rows


def pricing_bytes(instance: Instance) -> tuple[float, int]:
    """(bytes, job) of the largest pricing tables any job may ask for: OASiS's subroutine's
    at the full capacities (``online.subroutine.largest_tables``, the cells its
    ``_check_size`` counts before it refuses a job past ``--max-memory``). Job −1: none."""
    nbytes, job, _, _ = largest_tables(instance)
    return nbytes, job


def _check_master_bytes(instance: Instance, nbytes: float, rows: int, aggregate: bool,
                        pricing: tuple[float, int] = (0.0, -1)) -> None:
    what = (f"column-generation master of {instance.num_jobs} jobs × {instance.horizon} "
            f"slots ({rows} rows{' with identical servers pooled' if aggregate else ''})")
    if pricing[0] > 0:
        i = pricing[1]
        job = instance.jobs[i]
        what += (f", about {human(nbytes)}, with its pricing tables, about "
                 f"{human(pricing[0])} (jobs[{i}]: OASiS's dynamic programme for a workload "
                 f"of {job.workload} over {instance.horizon - job.arrival} slots),")
    check_allocation("jobs", nbytes + pricing[0], what)


def check_least_master(instance: Instance) -> None:
    """Refuse (``InputError``) an instance whose smallest master (the pooled one of the
    bound-only route, ``solve(bound_only=True)``) with the largest pricing tables its
    subroutine may build (``pricing_bytes``) would pass ``--max-memory``: before any other
    work, where the master itself is built after the online floor (20 000 Philly jobs at
    ``--max-memory 300M`` were refused after 15.8 s of it, an outside audit) and the pricing
    refused its job only as it priced it (5 000 Philly jobs at 300M: 28 s in)."""
    rows_inst = with_count_rows(instance)
    nbytes, rows = master_bytes(rows_inst, True, pool_all=True)
    _check_master_bytes(rows_inst, nbytes, rows, True, pricing_bytes(rows_inst))


class _Master:
    """The restricted master on one persistent ``Highs`` object (warm re-solves).

    With ``aggregate``, identical servers (equal capacity vectors) share one capacity row per
    (group, resource, slot) with the group's total capacity. That is a relaxation, but not a
    weaker one at the LP optimum: the set of all schedules is closed under permuting identical
    servers, so averaging an optimal aggregated solution over those permutations gives a
    per-server solution of the same value. Its LP has |groups|/|servers| of the rows — the
    bound converges far faster — while schedules for price-and-branch need the per-server
    master (the aggregated one may stack columns on one server).

    With ``pool_all`` as well, every server of a pool shares the rows, alike or not: a
    relaxation whose LP may be weaker than the per-server one where servers differ (it does
    not see that a job's units cannot be split across two half-full servers of different
    shapes), but still a valid bound, with one price per (slot, resource) and pool that every
    server of the pool gets. At trace scale on a few unlike servers (the Alibaba slice: 4
    worker servers, 3 resources, 2 640 slots) the per-server master's duals put the whole
    price on the one server the opening columns use, and its bound never left Σ f_i(1).
    """

    def __init__(self, instance: Instance, aggregate: bool = False,
                 deadline: Deadline | None = None, pool_all: bool = False,
                 stabilised: bool = False) -> None:
        self.inst = instance
        self.deadline = deadline or Deadline()  # its LP runs stop there
        T, R = instance.horizon, len(instance.resources)
        self.H, self.K = len(instance.worker_names), len(instance.ps_names)
        nbytes, rows = master_bytes(instance, aggregate, pool_all)
        self.nbytes = nbytes  # what ``mip`` copies
        _check_master_bytes(instance, nbytes, rows, aggregate)
        self.n_w = T * self.H * R
        self.n_p = T * self.K * R
        row_of, row_cap, n = [], [], 0
        most = most_units(instance)
        # the compact MILP's right-hand sides (``row_capacity``): the bound is for its optimum
        rhs = (row_capacity(instance.worker_capacity, instance.worker_demand),
               row_capacity(instance.ps_capacity, instance.ps_demand))
        for cap, demand, units in ((rhs[0], instance.worker_demand, most[0]),
                                   (rhs[1], instance.ps_demand, most[1])):
            S = len(cap)
            gid = server_groups(cap, pool_all) if aggregate else np.arange(S)
            G = int(gid.max()) + 1 if S else 0
            group_cap = np.zeros((G, R))
            np.add.at(group_cap, gid, cap)
            # rows that can bind, less those implied on the group's total (for alike servers:
            # on any one of them)
            keep_g = implied_rows(group_cap, demand) & binding_rows(cap, gid, demand, units) \
                if G else np.zeros((0, R), dtype=bool)
            code = np.full((T, G, R), -1, dtype=np.int64)
            kept = np.broadcast_to(keep_g, (T, G, R))
            code[kept] = n + np.arange(int(kept.sum()))
            n += int(kept.sum())
            row_cap.append(np.broadcast_to(group_cap, (T, G, R))[kept])
            row_of.append(code[:, gid, :].ravel())  # (t, s, r) -> row of (t, gid[s], r)
        # Full row numbering (t, s, r) over both pools maps to the rows HiGHS holds (-1: none).
        self.row_of = np.concatenate(row_of)
        self.n_kept = n
        self.row_capacity = np.concatenate(row_cap)
        self.capacity = np.concatenate([  # over all (t, s, r), kept or not
            np.broadcast_to(rhs[0], (T, self.H, R)).ravel(),
            np.broadcast_to(rhs[1], (T, self.K, R)).ravel(),
        ])
        n_rows = self.n_kept + instance.num_jobs
        ub = np.concatenate([self.row_capacity, np.ones(instance.num_jobs)])
        h = new_highs()
        h.setOptionValue("threads", 1)
        h.setOptionValue("presolve", "off")
        h.addRows(n_rows, np.full(n_rows, -highspy.kHighsInf), ub, 0,
                  np.zeros(n_rows, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        self.deadline.watch(h)
        self.h = h
        #: HiGHS columns before the schedule columns: the stabilisation's 2 per capacity row
        #: (``stabilise``), schedule column k is HiGHS column ``base + k``
        self.base = 2 * self.n_kept if stabilised else 0
        if stabilised:
            m = self.n_kept
            idx = np.arange(m, dtype=np.int32)
            # buys capacity (coefficient −1) / sells it (+1); bounds 0 until a centre is set
            h.addCols(2 * m, np.zeros(2 * m), np.zeros(2 * m), np.zeros(2 * m), 2 * m,
                      np.arange(2 * m, dtype=np.int32), np.concatenate([idx, idx]),
                      np.concatenate([-np.ones(m), np.ones(m)]))
        #: the penalty columns' bound ε per row (0: the master is exact)
        self.eps = np.zeros(self.n_kept if stabilised else 0)
        #: whether the last solve used penalty columns (its x and value are not the LP's)
        self.penalised = False
        #: the value of the last solve of the exact (unpenalised) restricted master, and of
        #: the last solve (penalised or not)
        self.lp_exact = -math.inf
        self.value = -math.inf
        self.columns: list[Column] = []
        self.x = np.zeros(0)
        self.solved = False
        self.seen: dict[tuple[int, bytes], int] = {}
        #: per-server masters re-solve by interior point (solve_lp); aggregated ones are small
        self.interior = not aggregate
        #: warm re-solves pick their simplex by its last CPU time (``LP_STRATEGIES``)
        self.adaptive = False
        self.lp_cpu: dict[int, float] = {}
        self.resolves = 0
        #: whether the last solve did not end at a vertex
        self.interior_x = False
        #: set aside (fixed at 0) after a re-solve: see ``set_aside``; adaptive masters only
        self.off = bytearray()  # 1 per column set aside
        self.strikes = bytearray()  # solves in a row each column was below the threshold
        #: columns added or brought back: ``_generate`` counts a round's progress by it
        self.entered = 0
        #: whether the last price-and-branch (``mip``) was stopped by its deadline
        self.mip_stopped = False
        #: (columns at the last exact solve,) whether an optimal solve of the exact master
        #: ever gave the column x > 0: price-and-branch may use them (``MIP_SUPPORTS``)
        self.supported = np.zeros(0, dtype=bool)

    def usage(self, job: int, workers: SlotCounts, ps: SlotCounts
              ) -> tuple[np.ndarray, np.ndarray]:
        """Job ``job``'s use of capacity under these counts, sparse over the full cell
        numbering (t, s, r) of both pools (``row_of``'s): the cells and the amounts."""
        inst, R = self.inst, len(self.inst.resources)
        idx, val = [], []
        for counts, demand, base, S in ((workers, inst.worker_demand[job], 0, self.H),
                                        (ps, inst.ps_demand[job], self.n_w, self.K)):
            r = np.flatnonzero(demand > 0)
            rows = base + ((counts.slot[:, None] * S + counts.server[:, None]) * R + r[None, :])
            idx.append(rows.ravel())
            val.append((counts.count[:, None] * demand[None, r]).ravel())
        return np.concatenate(idx), np.concatenate(val)

    def add(self, col: Column) -> int:
        """Add a column (once); returns its index."""
        key = col.key()
        if key in self.seen:
            k = self.seen[key]
            if self.off[k]:  # set aside, priced out again: back in the LP
                self.off[k] = self.strikes[k] = 0
                self.h.changeColBounds(self.base + k, 0.0, highspy.kHighsInf)
                self.entered += 1
            return k
        self.seen[key] = len(self.columns)
        self.off.append(0)
        self.strikes.append(0)
        cells, val = self.usage(col.job, col.workers, col.ps)
        full = self.row_of[cells]
        keep = full >= 0
        # Servers of one group share a row when aggregated: sum their coefficients.
        rows, inv = np.unique(full[keep], return_inverse=True)
        v = np.bincount(inv.ravel(), weights=val[keep], minlength=len(rows))
        i = np.append(rows, self.n_kept + col.job).astype(np.int32)
        v = np.append(v, 1.0)
        # No upper bound of 1 on x: Σ_l x_il ≤ 1 holds it, so that μ_i carries the dual.
        self.h.addCol(-col.value, 0.0, highspy.kHighsInf, len(i), i, v)
        self.columns.append(col)
        self.entered += 1
        return len(self.columns) - 1

    def values(self, exact: bool = False) -> np.ndarray:
        """The LP values x_il of the columns there were at the last solve (columns added
        since come after them). After a penalised solve (``stabilise``) x may use capacity
        the instance does not have, and its value is not the restricted LP's: with ``exact``
        the master is re-solved once with the penalty columns at 0 (by its fastest method,
        until the deadline) and x is the exact master's; without, x is the penalised one —
        still x ≥ 0, Σ_l x ≤ 1, which ``round_lp`` places within capacity all the same.
        Rounding reads the penalised x (``EXACT_ROUNDING``): on e5k the exact re-solve took 91 s
        by dual simplex where interior point re-solved the penalised master in 13–19 s, and
        capped at ``LP_TRIAL`` times that it never finished (docs/performance.md, round 15).
        ``exact`` also re-solves after interior point without crossover (``interior_x``):
        its x is interior, not a vertex, and price-and-branch takes the columns at x > 0."""
        if self.penalised and (exact or EXACT_ROUNDING) or exact and self.interior_x:
            eps, x = self.eps, self.x
            self.stabilise(None, None, None)
            # a vertex (crossover), for price-and-branch's x > 0
            self.solve_lp(strategy=self.best_strategy() if self.adaptive else None, vertex=True)
            if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                self.x = x  # stopped by the deadline: the penalised x
            self.stabilise_bounds(eps)  # the penalised master as it was: reading x moves no bound
        return self.x

    def stabilise(self, centre: np.ndarray | None, delta: np.ndarray | None,
                  eps: np.ndarray | None) -> None:
        """Penalty columns per capacity row (du Merle's stabilisation): s⁺_i ∈ [0, ε_i] adds
        capacity at cost π̂_i + δ_i, s⁻_i ∈ [0, ε_i] removes it at profit π̂_i − δ_i, so the
        LP ``max f·x − (π̂ + δ)·s⁺ + (π̂ − δ)·s⁻`` has as dual
        ``min π·C + Σ μ + Σ_i ε_i·dist(π_i, [π̂_i − δ_i, π̂_i + δ_i])``: its duals pay ε per
        unit outside the box around the centre. ``centre`` None: ε = 0 (the exact master)."""
        if not self.base:
            return
        m = self.n_kept
        if centre is None or delta is None or eps is None:
            self.stabilise_bounds(np.zeros(m))
            return
        self.h.changeColsCost(2 * m, np.arange(2 * m, dtype=np.int32),
                              np.concatenate([centre + delta, -(centre - delta)]))
        # selling capacity at a price ≤ 0 never pays (π ≥ 0): that column stays at 0
        self.stabilise_bounds(np.concatenate([eps, np.where(centre - delta > 0, eps, 0.0)]))

    def stabilise_bounds(self, eps: np.ndarray) -> None:
        """Set the penalty columns' upper bounds: ``eps`` per row (both columns) or per
        column (2 per row)."""
        m = self.n_kept
        ub = np.tile(eps, 2) if len(eps) == m else eps
        self.eps = ub
        self.h.changeColsBounds(2 * m, np.arange(2 * m, dtype=np.int32), np.zeros(2 * m), ub)

    def solve_lp(self, strategy: int | None = None, vertex: bool = False
                 ) -> tuple[float, np.ndarray]:
        """LP value, then prices over all (t, s, r) — the dual of the row each maps to, 0 where
        none — followed by the μ_i. ``prices · capacity`` equals the rows' dual term.
        ``strategy``: this re-solve's simplex strategy (default: ``strategy()``'s choice;
        a given one is not timed for it); ``vertex``: end at a vertex (``crossover``)."""
        cold = not self.interior and not self.solved and len(self.columns) > IPM_FIRST_COLUMNS
        if cold:
            # A large first solve from no basis: dual simplex took ≈ 450 CPU s on the whole
            # Philly trace's opening master (448 k columns, 85 k rows), interior point with
            # crossover 94 s (18 against 25 s at 20 000 jobs); crossover (``IPM_CROSSOVER``)
            # would leave a basis for simplex re-solves to start from.
            self.h.setOptionValue("solver", "ipm")
            self.h.setOptionValue("run_crossover", "on" if self.crossover(vertex) else "off")
        timed = strategy is None
        before = None
        if timed:
            strategy = self.strategy() if self.solved else None
        else:  # a one-off: put back what the next re-solves would use
            before = int(option(self.h, "simplex_strategy"))
        # a method other than the fastest (a trial, or a one-off such as ``values``' dual
        # simplex) runs for at most LP_TRIAL × the fastest's last time; the fastest finishes
        # a trial, and a one-off stopped there is left to its caller: ``values``' exact
        # re-solve took 91 s by dual simplex on e5k, 26 + 95 s capped and finished by
        # interior point (which re-solved the penalised master in 13–19 s)
        best = self.best_strategy() if self.adaptive and strategy is not None else None
        cap = None
        if best is not None and best != strategy and math.isfinite(self.lp_cpu[best]):
            cap = max(LP_TRIAL * self.lp_cpu[best], LP_TRIAL_MIN)
        t0 = time.process_time()
        self.run_with(strategy, cap, vertex)
        stopped = cap is not None and not self.deadline.passed() and \
            self.h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit
        if timed and strategy is not None:
            # a trial stopped at its cap is ranked last until its next turn
            self.lp_cpu[strategy] = math.inf if stopped else time.process_time() - t0
            self.resolves += 1
        if stopped and timed:
            self.run_with(best, None, vertex)
        if before is not None:  # a one-off: the next re-solves as before
            self.h.setOptionValue("simplex_strategy", before)
        self.solved = True
        if cold:
            self.h.setOptionValue("solver", "simplex")
        # The per-server master is highly degenerate: warm simplex re-solves took 2 000–20 000
        # iterations and grew to 10–25 s at 200 jobs on the paper preset, while the
        # interior-point method without crossover took 1.4–7 s (measured side by side, 6 rounds
        # each). The aggregated master is small and simplex wins there (bound in 27 s against
        # 49 s, 200 jobs). Any non-negative prices give a valid bound.
        if self.interior:
            self.h.setOptionValue("solver", "ipm")
            self.h.setOptionValue("run_crossover", "off")
        sol = self.h.getSolution()
        value = -self.h.getInfo().objective_function_value  # before ``set_aside`` resets it
        col_value = np.asarray(sol.col_value, dtype=float)
        b = self.base
        self.x = col_value[b:b + len(self.columns)]
        optimal = self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        # the penalty columns at 0: x is the exact master's optimum (feasible there and
        # optimal for the larger penalised LP), its value the restricted LP
        self.penalised = bool(b) and bool(np.any(col_value[:b] > 1e-9))
        if optimal and not self.penalised:
            self.lp_exact = value
            if MIP_SUPPORTS:
                self.note_support()
        self.value = value
        if self.adaptive and math.isfinite(SET_ASIDE) and \
                len(self.columns) >= LP_ADAPT_COLUMNS and optimal:
            self.set_aside(-np.asarray(sol.col_dual, dtype=float)[b:b + len(self.columns)])
        row_dual = np.maximum(-np.asarray(sol.row_dual), 0.0)
        prices = np.where(self.row_of >= 0, row_dual[np.maximum(self.row_of, 0)], 0.0)
        return value, np.concatenate([prices, row_dual[self.n_kept:]])

    def note_support(self) -> None:
        """Mark the columns the exact LP just used (x > 0) in ``supported``."""
        n = len(self.x)
        if len(self.supported) < n:
            self.supported = np.concatenate([self.supported,
                                             np.zeros(n - len(self.supported), dtype=bool)])
        self.supported[:n] |= self.x > 1e-9

    def set_aside(self, reduced: np.ndarray) -> None:
        """Fix at 0 every column in the LP whose reduced cost ``f_il − Σ prices·usage − μ_i``
        (``reduced``, at the duals just found) is below ``−SET_ASIDE·max(1, f_il)`` at this
        solve and the ``SET_ASIDE_SOLVES − 1`` before: such a column is nonbasic at 0, so the
        solution and the duals stay optimal. The next
        re-solves then run over the others only — a smaller, less degenerate LP whose value is
        at most the full restricted master's (a lower estimate of the LP optimum, as the
        restricted LP always is). Pricing is not affected: it searches all schedules, and a
        set-aside column it finds again comes back (``add``), so a round in which nothing
        enters still proves the LP optimal. The Lagrangian bound is valid at any prices."""
        values = np.fromiter((c.value for c in self.columns), dtype=float,
                             count=len(self.columns))
        off = np.frombuffer(self.off, dtype=np.uint8).astype(bool)
        below = ~off & (reduced < -SET_ASIDE * np.maximum(1.0, np.abs(values)))
        strikes = np.where(below, np.minimum(np.frombuffer(self.strikes, dtype=np.uint8), 254)
                           + 1, 0).astype(np.uint8)
        self.strikes[:] = strikes.tobytes()
        drop = np.flatnonzero(strikes >= SET_ASIDE_SOLVES)
        if not len(drop):
            return
        drop = drop.astype(np.int32)
        self.h.changeColsBounds(len(drop), drop + self.base, np.zeros(len(drop)),
                                np.zeros(len(drop)))
        for k in drop.tolist():
            self.off[k] = 1

    def strategy(self) -> int | None:
        """The strategy of the next warm re-solve (None: leave it as it is; ``IPM`` or a
        simplex strategy): with ``adaptive`` and ``LP_ADAPT_COLUMNS`` columns, each of
        ``LP_STRATEGIES`` once, then the one of least CPU time at its last re-solve, another
        every ``LP_RETRY``-th time (the master changes as columns enter, and which one wins
        differs between instances)."""
        if not self.adaptive or len(self.columns) < LP_ADAPT_COLUMNS:
            return None
        untried = [s for s in LP_STRATEGIES if s not in self.lp_cpu]
        if untried:
            return untried[0]
        ranked = sorted(LP_STRATEGIES, key=lambda s: self.lp_cpu[s])
        if self.resolves % LP_RETRY or len(ranked) == 1:
            return ranked[0]
        return ranked[1 + (self.resolves // LP_RETRY) % (len(ranked) - 1)]

    def crossover(self, vertex: bool = False) -> bool:
        """Whether interior point ends with a crossover here: where a later re-solve may be
        by simplex and start from its basis (a master that is not ``adaptive`` re-solves by
        simplex; an adaptive one by ``LP_STRATEGIES``), where the caller wants a ``vertex``
        (``values(exact=True)``), or with ``IPM_CROSSOVER``."""
        return IPM_CROSSOVER or vertex or not self.adaptive or \
            any(s != IPM for s in LP_STRATEGIES)

    def best_strategy(self) -> int | None:
        """The strategy of least CPU time at its last re-solve (None before any)."""
        return min(self.lp_cpu, key=self.lp_cpu.__getitem__) if self.lp_cpu else None

    def run_with(self, strategy: int | None, cap: float | None, vertex: bool = False) -> None:
        """Run HiGHS on the master with ``strategy`` (None: as set), for at most ``cap``
        seconds (None: until optimal or the deadline), ending at a ``vertex`` if asked."""
        h = self.h
        if strategy == IPM:
            h.setOptionValue("solver", "ipm")
            h.setOptionValue("run_crossover", "on" if self.crossover(vertex) else "off")
        elif strategy is not None:
            h.setOptionValue("solver", "simplex")
            h.setOptionValue("simplex_strategy", strategy)
        if cap is not None:
            h.setOptionValue("time_limit", run_limit(h, cap))
        h.run()
        # interior point without crossover: x is interior, no vertex (``values(exact=True)``)
        self.interior_x = option(h, "solver") == "ipm" and option(h, "run_crossover") == "off"
        if cap is not None:
            h.setOptionValue("time_limit", highspy.kHighsInf)

    def mip_bytes(self) -> float:
        """What price-and-branch (``mip``) adds: the master's copy (``nbytes``) and HiGHS's
        MILP over it (``MIP_BYTES_PER_NNZ`` a nonzero)."""
        return self.nbytes + MIP_BYTES_PER_NNZ * float(self.h.getNumNz())

    def mip(self, deadline: Deadline, start: Sequence[Column] = (),
            solutions: list[tuple[float, np.ndarray]] | None = None) -> np.ndarray | None:
        """Price-and-branch on this master: x integer over the columns the last LP used
        (``x_il > 0``), every other column at 0, in a copy of the model (the LP stays as it
        was), until ``deadline``; the best integer x found over all columns, or None.
        With identical servers pooled the answer may stack more on one server than fits,
        so it is a choice of columns for ``round_lp`` to place, not a schedule.

        ``start``: the columns of a feasible schedule (at most one per job), added to the
        master and handed to HiGHS as its first incumbent (x = 1 on them): a schedule that
        fits per server fits the pooled rows, so the MILP starts at its value and can only
        improve on it.

        ``solutions``: a list that gets (objective, x) of every improving solution HiGHS
        reports, in order (the last is the answer): the pooled objective is not what the
        choice is worth once placed, filled and compacted (``MIP_PLACE``)."""
        # the copy would pass ``--max-memory``: skip it, and leave the master as it was
        if not len(self.x) or deadline.left() <= 0 or 2 * self.nbytes > max_memory():
            return None
        x = self.values(exact=True)  # the exact master's (no penalty columns)
        picked = [self.add(col) for col in start]
        n, b = len(self.columns), self.base
        used = np.zeros(b + n, dtype=bool)  # the penalty columns stay at 0
        used[b:b + len(x)] = x > 1e-9
        if MIP_SUPPORTS:  # and the columns earlier exact LPs used
            used[b:b + len(self.supported)] |= self.supported
        used[[b + k for k in picked]] = True
        h = new_highs()
        h.setOptionValue("threads", 1)
        h.passModel(self.h.getLp())
        off = np.flatnonzero(~used).astype(np.int32)
        h.changeColsBounds(len(off), off, np.zeros(len(off)), np.zeros(len(off)))
        h.changeColsIntegrality(n, np.arange(b, b + n, dtype=np.int32),
                                np.full(n, highspy.HighsVarType.kInteger))
        h.setOptionValue("mip_rel_gap", 1e-4)
        if MIP_FIX_ONES:
            # the LP's integral columns stay in (with the rest at 0 the LP's x rounded down
            # is feasible): the MILP decides its fractional part only
            ones = (np.flatnonzero(x >= 1 - 1e-6) + b).astype(np.int32)
            h.changeColsBounds(len(ones), ones, np.ones(len(ones)), np.ones(len(ones)))
        if picked and not MIP_FIX_ONES:  # (the start need not agree with the fixed ones)
            x0 = np.zeros(b + n)
            x0[[b + k for k in picked]] = 1.0
            sol0 = highspy.HighsSolution()
            sol0.col_value = list(x0)
            sol0.value_valid = True
            h.setSolution(sol0)
        if not deadline.highs_limit(h, None, mip=True):
            return None
        deadline.watch(h)

        def keep(e: object) -> None:
            data = e.data_out  # type: ignore[attr-defined]
            sol = np.asarray(data.mip_solution, dtype=float)
            if solutions is not None and sol.size == b + n:
                solutions.append((-float(data.objective_function_value), np.round(sol[b:])))

        h.cbMipImprovingSolution.subscribe(keep)
        h.run()
        h.cbMipImprovingSolution.unsubscribe(keep)
        self.mip_stopped = h.getModelStatus() in (highspy.HighsModelStatus.kTimeLimit,
                                                  highspy.HighsModelStatus.kInterrupt)
        sol = h.getSolution()
        if not sol.value_valid:
            return None
        return np.round(np.asarray(sol.col_value, dtype=float)[b:b + n])


#: Price-and-branch (``_Master.mip``) over the columns any optimal exact LP of the bound phase
#: used (x > 0), not only the last one's (``_Master.supported``).
MIP_SUPPORTS = False
#: Price-and-branch with the columns the exact LP holds at x = 1 fixed at 1 (no start: the
#: incumbent's columns need not agree with them; the incumbent is kept anyway).
MIP_FIX_ONES = False  # s1: 143 986 against 144 132 without it (docs/performance.md)
#: After price-and-branch, up to this many of its earlier improving solutions (best pooled
#: objective first, within ``MIP_PLACE_WITHIN`` of the best) are placed, filled and compacted
#: too (``round_lp``) and the best schedule kept: on a saved p5k master the MILP's solutions,
#: placed, were worth 142 987, **143 422**, 143 046, 143 052 and 143 214 (the last, its answer);
#: with more CPU 143 820 as answered and 144 132 at best (docs/performance.md, round 9).
MIP_PLACE = 4
MIP_PLACE_WITHIN = 0.01
#: At trace scale, after the bound phase: the LP rounded and then improved by moves
#: (``trace_lns.search``: small MILPs over a few freed jobs' columns, the rest fixed) instead
#: of price-and-branch over every job at once (e5k, 600 s, one core each side by side:
#: 568 495 → 569 242; a5k 37 335 → 37 355; docs/performance.md round 17).
TRACE_LNS = True
#: ... after ejections first (``trace_lns.eject``: a job left out takes the place of less
#: dense ones, all planned anew against what is free) for this share of the time left: on
#: e5k at 600 s, one core each side by side, 572 664 → 573 716 ≤ 580 108 (gap 1.30 → 1.11 %),
#: the moves having gained 0.001 % in 96 s (docs/performance.md, round 31; 0.8 in rounds
#: 33-35, 0.5 again with ``EJECT_DRAWN``, which takes the rest) ...
EJECT_SHARE = 0.5
#: ... from each of the best this many distinct roundings within ``EJECT_WITHIN`` of the best
#: in turn (an equal part of that time each; one that stops early leaves its part to the
#: next), the best kept: the best rounding is not the best start. On round 33's saved g5k
#: LPs, 30 s of ejections took the best rounding (263 083) to 264 558 and the second
#: (262 569) to 265 323 (docs/performance.md, round 33).
EJECT_STARTS = 2
EJECT_WITHIN = 0.01
#: ... and before them (the ejections get ``EJECT_SHARE`` of the time they leave), for this
#: share of the time left and ``PERTURB_DRAWS`` draws at most, the hand-over LP rounded
#: again with each x_il times exp(``PERTURB_SIGMA``·N(0, 1)) (both orders each time), these
#: among the starts too: one LP's roundings differ by about 1 % from order to order and from
#: LP to LP, and a few draws reach the upper tail. On round 35's saved g5k hand-over LP
#: (plain: 261 778 and 262 234) five draws gave 264 868, and 40 s of ejections from it
#: 265 562, against 264 212 from the plain one by job (docs/performance.md, round 35).
PERTURB_SHARE = 0.2
PERTURB_SIGMA = 0.3
PERTURB_DRAWS = 8
#: ... a start giving way once it has gone this many times as long without a gain as it
#: took to reach its last one (``trace_lns.eject``'s ``patience``): on
#: round 34's g5k run the best rounding's last gain came at 7.2 s of its 45 s, while the
#: second's ejections gained until the end of theirs (262 569 → 265 329).
EJECT_PATIENCE = 1.0
#: ... and then, from the best end, the ejections of the placed jobs that end later than
#: they could (``trace_lns.eject``'s ``late``), for an equal part too: after 30 s of the
#: ejections of jobs left out, 15 s of these took g5k's 265 323 to 265 384 and e5k's
#: 574 107 to 574 236 where those had gained 6 and nothing in the same time (both kinds
#: taken together from the start ended lower); at 600 s g5k gained 62 on round 33's path
#: (docs/performance.md, round 34). Every phase has the patience: what one leaves goes on
#: to the next, and the last one's to the moves.
EJECT_LATE = True
#: ... and then, from the best end, randomized ejections (``trace_lns.eject``'s ``rng``) to
#: the end of the budget but ``EJECT_DRAWN_RESERVE`` seconds, or until they stall (the
#: patience), the moves after them: the deterministic ejections end at a local optimum
#: (and the moves after them gained 5 in 37 s on g5k); the draws go on past it. On round
#: 35's saved hand-over LPs, 40 s of ejections then 40 s of these (three seeds) took g5k to
#: 265 962-266 158 where 80 s of ejections reached 265 669, and e5k to 572 854-573 300
#: against 572 614 (docs/performance.md, round 36). With them the ejection phases before
#: get ``EJECT_SHARE`` = 0.5 of the time the draws leave.
EJECT_DRAWN = True
EJECT_DRAWN_RESERVE = 1.0
#: ... and where the moves stop before the deadline with the gap above the target, the rest of
#: the budget goes to more rounds of the bound (``solve``), then one more rounding.
RESUME_ROUNDS = True
#: Share of the budget for the compact-scale route's first MILP over the pattern columns
#: (``PatternMaster.solve_mip``, after LP diving); LNS over windows of slots gets the rest.
FIRST_MIP_SHARE = 0.35
#: Share of the budget the trace-scale bound phase leaves to price-and-branch on its pooled
#: master (``_Master.mip``) before its own end at 90 % (the MILP then runs to the end of the
#: budget but a reserve for placing its answer): on 5 000 Philly jobs after 10 rounds (LP 143 136)
#: the LP rounded gave 139 835 and the MILP's columns, placed and filled, 142 552 (60 s).
MIP_SHARE = 0.15
#: ... and does so only while the incumbent is more than this share under the restricted LP:
#: on the default Philly mapping (d5k) the rounding stayed 0.4 % under it and the bound's last
#: rounds were worth more (the bound 189 442 against 188 111 with them, 320 CPU s each).
MIP_WORTH = 0.005
#: ... and hands over before 75 % once the bound is within this share of the gap target above
#: the restricted LP (``solve``'s ``converged``): the bound's last rounds can take it no lower
#: than that, and price-and-branch gets the time they would have taken.
MIP_EARLY = 0.1
#: Share of the time the trace-scale bound phase may spend rounding its LP (``round_lp``)
#: for incumbents ...
ROUND_SHARE = 0.2
#: ... and while the bound is more than ``BOUND_SIDE`` times as far above the restricted LP as
#: the incumbent is under it: the bound side holds the gap, so its rounds get the time (5 000
#: Philly jobs in 900 s slots, 8 rounds: the bound 190 047, the LP 180 834, the rounding
#: 179 931, and rounding took 28 of the 150 CPU s). The LP is rounded once more at the end.
ROUND_SHARE_BOUND = 0.05
BOUND_SIDE = 4.0
#: Whether the trace-scale roundings round each LP in both orders, by job first
#: (``round_lp``'s ``by_weight``: jobs by their LP weight Σ_l x_il, the fill's by their LP
#: value) and by column (x_il); without, by column alone. Replayed on the saved x of 600 s
#: e5k and 300 s p5k and d5k runs (round 16, docs/performance.md), the best rounding of a run
#: rose 0.70 % on e5k (567 960 → 571 933) and 0.84 % on p5k and fell 0.30 % on d5k: each
#: order wins on some instances. Until round 33 they took turns, one order an LP; since a
#: rounding takes seconds (the subroutine's closed form at zero prices, round 32) each LP
#: gets both: on round 33's e5k run the LP of 441 s gave 572 660 by job and 561 302 by
#: column, and the turn was the column's.
ROUND_BY_WEIGHT = True
#: Subgradient steps a round of the trace-scale bound phase takes from the best-bound prices
#: (``_generate``'s ``subgradient_steps``) and the first step's Polyak factor θ. 5 000 Philly
#: jobs, 12 rounds from the fixed-rate columns alone: bound 183 270 and restricted LP 132 267
#: in 37 s without them; with 2 steps a round 156 614 at 42 s and 148 873 / 143 664 at 121 s
#: (1 step: 149 618 at 127 s; 5 steps: 151 373 at 124 s).
SUBGRADIENT_STEPS = 2
SUBGRADIENT_STEP = 1.0
#: Whether the Polyak steps aim at the larger of the last exact restricted LP and the
#: incumbent (``_generate``'s ``floor``), both at most the Lagrangian's minimum (the LP
#: optimum): on e5k no exact LP after the first one finished, and aimed at its 553 877 with
#: the incumbent at 569 000 every step was about twice as long as meant (round 15, one draw
#: each: gap 1.83 % with, 2.14 % without).
POLYAK_FLOOR = True
#: Step of the automatic smoothing factor (``separation_point``): α moves by this much (towards
#: 0) or this fraction of 1 − α (towards 1) after each round.
SMOOTHING_STEP = 0.1


def separation_point(centre: np.ndarray, out: np.ndarray, g_centre: np.ndarray | None,
                     alpha: float) -> np.ndarray:
    """The prices a round prices at, between the centre ``π_in`` (least Lagrangian bound so
    far) and the LP duals ``π_out``, per master row: Wentges smoothing
    ``π̃ = α·π_in + (1 − α)·π_out``, turned towards the steepest descent of the Lagrangian at
    the centre when its subgradient ``g_in`` is given (directional smoothing, Pessoa,
    Sadykov, Uchoa and Vanderbeck 2018):

        π_g = π_in − (‖π_out − π_in‖/‖g_in‖)·g_in,     β = cos∠(π_out − π_in, π_g − π_in)⁺,
        ρ = β·π_g + (1 − β)·π_out,     π_sep = max(0, π_in + ‖π̃ − π_in‖/‖ρ − π_in‖·(ρ − π_in)).

    The step from the centre is as long as Wentges' (1 − α)·‖π_out − π_in‖, in a direction
    between the LP's and −g_in. Any non-negative prices give a valid bound once priced; the
    choice only decides how fast it falls."""
    d_out = out - centre
    n_out = float(np.linalg.norm(d_out))
    plain = np.maximum(alpha * centre + (1 - alpha) * out, 0.0)
    if g_centre is None or n_out <= 0:
        return plain
    n_g = float(np.linalg.norm(g_centre))
    if n_g <= 0:
        return plain
    d_g = -(n_out / n_g) * g_centre  # π_g − π_in, as long as π_out − π_in
    beta = max(0.0, float(d_out @ d_g)) / (n_out * n_out)
    rho = beta * d_g + (1 - beta) * d_out  # ρ − π_in
    n_rho = float(np.linalg.norm(rho))
    if n_rho <= 0:
        return plain
    return np.maximum(centre + (1 - alpha) * n_out / n_rho * rho, 0.0)


def adapt_smoothing(alpha: float, g_sep: np.ndarray, centre: np.ndarray,
                    out: np.ndarray) -> float:
    """The next round's α (automatic smoothing, Pessoa et al. 2018): the Lagrangian's
    subgradient at the separation point, ``g_sep``, tells on which side of it the least bound
    lies along the in-out segment. ``g_sep·(π_out − π_in) > 0``: the bound rises towards the
    LP duals, the point went too far, α grows by ``SMOOTHING_STEP·(1 − α)``; otherwise the
    bound still falls towards them and α shrinks by ``SMOOTHING_STEP``, down to
    ``SMOOTHING_STEP`` (at 0 the round would price at the LP duals alone and α never adapt
    again; the LP duals are still priced when the smoothed point finds no column)."""
    if float(g_sep @ (out - centre)) > 0:
        return alpha + SMOOTHING_STEP * (1 - alpha)
    return max(SMOOTHING_STEP, alpha - SMOOTHING_STEP)


@dataclass
class _Phase:
    """The state ``_generate`` carries from round to round: the centre (the prices of the
    least Lagrangian bound of the phase, their pricing answers and subgradient), the
    subgradient step θ, the smoothing α and the stabilised master's ε. Handed to a second
    call, the rounds go on where the first call stopped."""

    alpha: float
    best_pi: np.ndarray | None = None
    best_found: list[BestSchedule] = field(default_factory=list)
    phase_best: float = math.inf
    centre_g: list = field(default_factory=lambda: [None, None])
    theta: float = 0.0
    kappa: float = 0.0

    @classmethod
    def opening(cls, smoothing: float) -> _Phase:
        return cls(alpha=smoothing, theta=SUBGRADIENT_STEP, kappa=STAB_EPS)


def _generate(master: _Master, specs: Sequence[JobSpec], res: ColgenStats, *, start: float,
              deadline: float | None, max_iterations: int, smoothing: float,
              report: Callable[[float], None] | None = None,
              pricer: Pricer | None = None,
              progress: Callable[[int, int], None] | None = None,
              after_round: Callable[[], bool] | None = None,
              subgradient_steps: int = 0, auto_smoothing: bool = False,
              floor: Callable[[], float] | None = None, phase: _Phase | None = None) -> bool:
    """Column generation rounds on ``master`` until pricing finds no column (returns True:
    the LP is optimal), the deadline or the round limit. Every round's Lagrangian bound
    updates ``res.bound``.

    Pricing uses Wentges smoothing: prices ``π = s·π_best + (1 − s)·π_LP`` where ``π_best``
    gave the least Lagrangian bound in this phase; a column found there enters when its reduced
    cost at the LP duals is positive; when none does (mispricing), the round prices at ``π_LP``
    itself, and no column there proves the LP optimal. With ``auto_smoothing`` (trace scale)
    the point is ``separation_point`` — turned towards the steepest descent at the centre —
    and α adapts each round (``adapt_smoothing``, starting at ``smoothing``).

    Then, in a round that added columns, ``subgradient_steps`` projected subgradient steps on
    the Lagrangian dual from the centre: ``π ← max(0, π_best − θ·(LB(π_best) − LP)/‖g‖²·g)``
    per master row, ``g = C − Σ_i usage_i`` over the jobs with a positive payoff at π_best
    (``LB`` is convex in π and g a subgradient; the restricted LP value is below its minimum,
    so the Polyak step aims short of nothing; with ``floor`` — the incumbent's value, also
    below it — and ``POLYAK_FLOOR`` the step aims at the larger of the two), θ ×1.5 after a
    step that lowered the bound,
    ÷2 after one that did not. Each step is an exact pricing at its prices: its bound is
    valid, its columns enter as above. At trace scale the LP duals alone leave whole stretches
    of slots unpriced, the Lagrangian bound far above the LP, and smoothing moves it little;
    the steps price the slots the jobs crowd into.

    ``pricer`` prices the jobs (default: in-process, ``specs``); ``progress(round, jobs
    priced)`` is called while a round prices; ``after_round()`` after each round, True to stop
    (e.g. the gap target is reached). ``phase``: the state of earlier rounds to go on from
    (updated in place), else a new phase."""
    inst = master.inst
    T, R = inst.horizon, len(inst.resources)
    H, K = master.H, master.K
    n_w, n_cap = master.n_w, master.n_w + master.n_p
    cap = master.capacity
    pricer = pricer or Pricer(inst, specs)

    def split(pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return pi[:n_w].reshape(T, H, R), pi[n_w:n_cap].reshape(T, K, R)

    st = phase if phase is not None else _Phase.opening(smoothing)
    kept = master.row_of >= 0
    rows_of = master.row_of[kept]

    last_bound = [math.inf]  # the Lagrangian bound of the last pricing (``lp_proven``)

    def price_at(pi: np.ndarray) -> list[BestSchedule] | None:
        """Every job priced at ``pi`` (None: cut short by the deadline); its Lagrangian bound
        updates ``res.bound`` and, when the least of the phase, the centre ``best_pi``."""
        p, q = split(pi)
        tick = None if progress is None else \
            (lambda n, it=res.iterations + 1: progress(it, n))
        found = pricer.price(p, q, slot_classes(p, q), master.deadline, tick)
        if found is None:  # a round cut short proves nothing
            return None
        # Σ in job order: the same float sum in-process or in parallel
        bound = float(pi @ cap) + math.fsum(max(0.0, b.payoff) for b in found
                                            if math.isfinite(b.payoff))
        if report is not None:
            report(bound)
        res.bound = min(res.bound, bound)
        last_bound[0] = bound
        if bound < st.phase_best or st.best_pi is None:
            st.phase_best, st.best_pi, st.best_found = bound, pi, found
        return found

    def enter(found: list[BestSchedule], p_lp: np.ndarray, q_lp: np.ndarray,
              mu: np.ndarray) -> int:
        """Add the columns of ``found`` whose reduced cost at the LP duals is positive."""
        entered = 0
        for i, best in enumerate(found):
            col = column_of(inst, i, best.worker_counts, best.ps_counts) \
                if math.isfinite(best.payoff) else None
            if col is None:
                continue
            reduced = col.value - usage_cost(inst, col, p_lp, q_lp) - mu[i]
            if reduced > ENTER_TOL * max(1.0, abs(mu[i])):
                # a column already in the LP is no progress; a new or set-aside one is
                before = master.entered
                master.add(col)
                entered += master.entered - before
        return entered

    def subgradient(found: list[BestSchedule]) -> np.ndarray:
        """``C − Σ_i usage_i`` per master row, over the jobs with a positive payoff (those
        the Lagrangian solution runs): a subgradient of LB at the prices they were priced
        at, rows pooled as the master pools them."""
        used = np.zeros(n_cap)
        for i, b in enumerate(found):
            if not (math.isfinite(b.payoff) and b.payoff > 0):
                continue
            np.add.at(used, *master.usage(i, b.worker_counts, b.ps_counts))
        return master.row_capacity - np.bincount(rows_of, weights=used[kept],
                                                 minlength=master.n_kept)

    def rows(pi: np.ndarray) -> np.ndarray:
        """Prices over all (t, s, r) → per master row (servers of a group share one)."""
        out = np.zeros(master.n_kept)
        out[rows_of] = pi[kept]
        return out

    def cells(row_pi: np.ndarray) -> np.ndarray:
        """Per master row → over all (t, s, r) (0 where no row)."""
        return np.where(kept, row_pi[np.maximum(master.row_of, 0)], 0.0)

    centre_g = st.centre_g  # (the centre's answers, their subgradient)

    def g_centre() -> np.ndarray:
        """The subgradient at the centre, computed once per centre."""
        if centre_g[0] is not st.best_found:
            centre_g[:] = [st.best_found, subgradient(st.best_found)]
        return centre_g[1]

    # st.kappa: the stabilised master's ε per unit of capacity (``STAB_MASTER``)
    for _ in range(max_iterations):
        t0 = time.perf_counter()
        if master.base and st.best_pi is not None and st.kappa >= STAB_MIN and \
                len(master.columns) >= STAB_COLUMNS:
            # the box around the centre, ε shrinking each round towards the exact master
            centre = rows(st.best_pi)
            positive = centre[centre > 0]
            delta = STAB_DELTA * (float(positive.mean()) if len(positive) else 0.0)
            master.stabilise(centre, np.full(master.n_kept, delta),
                             st.kappa * master.row_capacity)
            st.kappa *= STAB_DECAY
        elif master.base and master.eps.any():
            master.stabilise(None, None, None)
        if master.columns:
            lp, duals = master.solve_lp()
        else:
            lp, duals = 0.0, np.zeros(n_cap + inst.num_jobs)
        if master.deadline.passed():  # the LP may have been interrupted: no proof from it
            return False
        # the restricted LP's value (a lower estimate of the least bound): a penalised
        # solve's is not, the last exact solve's is (the restricted LP only grows)
        lp_exact = master.lp_exact if master.penalised else lp
        t1 = time.perf_counter()
        res.lp_seconds += t1 - t0
        pi_lp, mu = duals[:n_cap], duals[n_cap:]
        p_lp, q_lp = split(pi_lp)
        entered = 0
        s_round = st.alpha if auto_smoothing else smoothing
        for s in ((s_round, 0.0) if st.best_pi is not None and s_round > 0 and smoothing > 0
                  else (0.0,)):
            if s == 0.0:
                pi = pi_lp
            elif auto_smoothing:
                assert st.best_pi is not None
                centre, out = rows(st.best_pi), rows(pi_lp)
                pi = cells(separation_point(centre, out, g_centre(), s))
            else:
                pi = s * st.best_pi + (1 - s) * pi_lp
            found = price_at(pi)
            if found is None:
                return False
            if auto_smoothing and s > 0:
                g_sep = subgradient(found)
                if st.best_found is found:  # the point became the centre: its subgradient too
                    centre_g[:] = [found, g_sep]
                st.alpha = adapt_smoothing(st.alpha, g_sep, centre, out)
            entered += enter(found, p_lp, q_lp, mu)
            if entered:
                break
        for _step in range(subgradient_steps if entered else 0):
            # Polyak steps from the centre towards the LP value or the incumbent (lower
            # estimates of the least bound): new prices, exactly priced, so any bound they
            # give is valid
            g = g_centre()
            norm = float(g @ g)
            target = lp_exact if floor is None or not POLYAK_FLOOR else max(lp_exact, floor())
            if st.best_pi is None or norm <= 0 or st.phase_best <= target:
                break
            step = st.theta * (st.phase_best - target) / norm
            row_pi = np.maximum(rows(st.best_pi) - step * g, 0.0)
            before = st.phase_best
            found = price_at(cells(row_pi))
            if found is None:
                return False
            entered += enter(found, p_lp, q_lp, mu)
            st.theta = min(2.0, st.theta * 1.5) if st.phase_best < before else st.theta / 2
        res.pricing_seconds += time.perf_counter() - t1
        res.lp_value = lp_exact
        res.iterations += 1
        res.rounds.append((res.iterations, lp_exact, res.bound, time.perf_counter() - start))
        if entered == 0 and master.penalised:
            # optimal for the penalised LP only (it used capacity the LP has not): drop the
            # penalties, the next rounds are the exact master's
            st.kappa = 0.0
        elif entered == 0:
            # the last pricing was at the LP's duals (a smoothed one that entered nothing is
            # followed by it): they prove the LP only if they price no job above it
            # the bound stays the least Lagrangian one (``price_at``): the LP's own value is
            # optimal only within HiGHS's tolerances, and on 3 000 unit jobs fell 2.4e-4 below
            # a valid schedule's utility (the Lagrangian at its duals was above it)
            return not master.columns or lp_proven(lp, last_bound[0])
        if after_round is not None and after_round():
            return False
        if deadline is not None and time.perf_counter() > deadline:
            return False
    return False


class _Tracker:
    """Best incumbent value and bound so far; ``history`` and ``on_progress`` get a point
    (seconds since the start, incumbent, bound) whenever either improves."""

    def __init__(self, start: float, res: ColgenStats,
                 on_progress: Callable[[float, float, float], None] | None) -> None:
        self.start, self.res, self.on_progress = start, res, on_progress
        self.incumbent = 0.0

    def update(self, incumbent: float | None = None, bound: float | None = None) -> None:
        if incumbent is not None and incumbent > self.incumbent:
            self.incumbent = incumbent
        if bound is not None and bound < self.res.bound:
            self.res.bound = bound
        self.point()

    def point(self, force: bool = False) -> None:
        """A point when either side moved by more than 1e-5 (relative) since the last one
        (the bound's last rounds creep by less), or when ``force``d and anything moved."""
        shown = max(self.res.bound, self.incumbent)
        last = self.res.history[-1] if self.res.history else (0.0, -math.inf, math.inf)
        tol = 1e-9 if force else 1e-5
        if self.incumbent > last[1] + tol * max(1.0, abs(self.incumbent)) or \
                shown < last[2] - tol * max(1.0, abs(shown)):
            point = (time.perf_counter() - self.start, self.incumbent, shown)
            self.res.history.append(point)
            if self.on_progress is not None:
                self.on_progress(*point)

    def gap(self) -> float:
        """``(bound − incumbent) / |incumbent|``, the gap the solve's report gives
        (``oasis_opt.offline.relative_gap``), so that a ``mip_gap`` target and the progress
        lines mean what the report says (the rounds' lines divided by the bound: 28.57 %
        beside the report's 40.00 %)."""
        b, inc = self.res.bound, self.incumbent
        if not math.isfinite(b):
            return math.inf
        if abs(inc) <= 1e-6:
            return 0.0 if abs(b) <= 1e-6 else math.inf
        return max(0.0, (b - inc) / abs(inc))


def _counts(names: dict[str, int], allocs: Sequence, pool: str) -> SlotCounts:
    """One pool's counts of a job's allocations, sparse and in (slot, server) order."""
    entries = [(a.slot, names[n], c) for a in allocs for n, c in getattr(a, pool).items()
               if c > 0]
    if not entries:
        return SlotCounts.empty()
    e = np.array(sorted(entries), dtype=np.int64)
    key = e[:, 0] * len(names) + e[:, 1]
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])  # repeated slots add up
    return SlotCounts(e[start, 0], e[start, 1], np.add.reduceat(e[:, 2], start))


def _needed_ps(ps: SlotCounts, workers: SlotCounts, ratio: float) -> SlotCounts:
    """``ps`` cut to the PSs each slot's workers need (``ps_needed``), the last servers' first:
    a schedule may hold more, and the masters build no capacity row that cannot bind when
    every job holds at most ``ps_needed(N_i)`` (``binding_rows``)."""
    if not ps.count.size:
        return ps
    slots, work = workers.per_slot()
    need = np.zeros(ps.count.size, dtype=np.int64)
    at = np.searchsorted(slots, ps.slot)
    has = (at < slots.size) & (slots[np.minimum(at, max(slots.size - 1, 0))] == ps.slot) \
        if slots.size else np.zeros(ps.count.size, dtype=bool)
    need[has] = np.asarray(ps_needed(work[at[has]], ratio), dtype=np.int64).reshape(-1)
    new_slot = np.r_[True, ps.slot[1:] != ps.slot[:-1]]
    ahead = np.cumsum(ps.count) - ps.count  # PSs before each entry, all slots
    ahead -= ahead[np.flatnonzero(new_slot)][np.cumsum(new_slot) - 1]  # ... in its slot
    count = np.clip(need - ahead, 0, ps.count)
    if np.array_equal(count, ps.count):
        return ps
    keep = count > 0
    return SlotCounts(ps.slot[keep], ps.server[keep], count[keep])


def schedule_columns(inst: Instance, sched: Schedule) -> list[Column]:
    """The columns of a schedule's jobs, read sparsely (no (J, T, H) array), each holding
    the PSs its workers need and no more (``_needed_ps``)."""
    cols = []
    for jr in sched.jobs:
        allocs = [a for a in jr.allocations if a.slot < inst.horizon]
        if not allocs:
            continue
        i = inst.job_index[jr.id]
        workers = _counts(inst.worker_index, allocs, "workers")
        col = column_of(inst, i, workers,
                        _needed_ps(_counts(inst.ps_index, allocs, "ps"), workers,
                                   inst.jobs[i].ps_ratio))
        if col is not None:
            cols.append(col)
    return cols


def _checked(pm: PatternMaster, x: np.ndarray, lam: np.ndarray,
             check: Callable[[Schedule], bool] | None) -> Schedule | None:
    """The schedule of a MILP solution, or None if it does not map to servers or fails
    ``check`` (the caller's validator: solver tolerances; never seen, but an incumbent must be
    feasible)."""
    try:
        sched = pm.schedule(x, lam)
    except ValueError:
        return None
    return sched if check is None or check(sched) else None


def solve(instance: Instance, *, time_limit: float | None = None, max_iterations: int = 10_000,
          seeds: Sequence[Schedule] = (), smoothing: float = 0.7,
          mip_time_limit: float = 30.0, mip_gap: float = 1e-4,
          on_progress: Callable[[float, float, float], None] | None = None,
          lns_window: int = 20, rng_seed: int = 0, diving: bool = True,
          check: Callable[[Schedule], bool] | None = None,
          deadline: Deadline | None = None,
          on_schedule: Callable[[Schedule], None] | None = None,
          bound_only: bool | None = None, executor: Executor | None = None,
          on_round: Callable[[Round], None] | None = None) -> SolveResult:
    """LP bound by column generation, then a schedule from the pattern master, improved until
    the gap target or the time limit.

    1. Bound: column generation on the master with identical servers aggregated (the same LP
       value as per server, far fewer rows; ``_Master``), seeded with the heuristics'
       schedules, until pricing proves the LP optimal.
    2. Pattern master (``pattern_master.PatternMaster``): the columns as counts per group of
       identical servers, packed exactly by single-server patterns; column generation there
       too — its LP is a bound no weaker than the schedule LP's.
    3. Price-and-branch: the pattern master as a MILP over the columns, from the better of the
       best heuristic schedule and an LP dive (``pattern_master.dive``, up to 25 % of the
       budget).
    4. Large-neighbourhood search (``lns.search``) over windows of slots until
       ``(bound − incumbent)/bound ≤ mip_gap`` or the time limit, re-pricing the window's jobs
       against the residual capacity.

    ``time_limit`` is the whole budget: the bound phase stops at 35 % of it, the pattern
    master's column generation at 45 %, the first MILP gets up to 35 % of the budget and LNS the
    rest; the result is returned within the limit (HiGHS may overshoot a MILP limit by a little
    inside presolve). Without a limit the MILP gets ``mip_time_limit`` and so does the LNS.
    ``on_progress(seconds, incumbent, bound)`` is called whenever either side improves; the
    same points are ``extras["history"]`` of the result (``result``). ``extras["mip_status"]``
    is ``time_limit`` when the limit ended the search with the gap open.

    Given by the caller (``formulations/`` knows neither the algorithm registry nor the
    validator): ``seeds``, feasible schedules of the instance (the heuristics': the first
    columns and the MILP's start; the result is never worse than the best of them); ``check``,
    whether a schedule read from the MILP is feasible (None: trusted); ``deadline``, a hard
    end shared with the caller (every loop and HiGHS run stops there, whatever the fractions
    above say); ``on_schedule``, called with every improving schedule (a caller that may have
    to stop this process keeps the last one).

    At trace scale (``bound_only``; None: when ``J·T·(H+K)`` exceeds ``SCHEDULE_CELLS``, whose
    per-server phases 2–4 hold dense per-job arrays) step 1 runs on a master whose pools are
    one group of rows each (``_Master``'s ``pool_all``) until 75 % of the budget, its LPs
    rounded as they come (``round_lp`` with fill and compaction, in both orders), the last
    one again with its x perturbed (``PERTURB_SHARE``), then the ejections from the best two
    roundings and those of the late jobs from the best end, each
    giving way when it stalls, the randomized ones from there (``EJECT_DRAWN``), and the
    moves from the best schedule (``trace_lns``,
    ``TRACE_LNS``), and more rounds of the bound if they stop early. With
    ``TRACE_LNS`` off, price-and-branch on that master from the incumbent's columns
    (``_Master.mip``, to the end of the budget but a reserve) instead, from 75 % — 90 %
    while the incumbent is within ``MIP_WORTH`` of the restricted LP, earlier once the bound
    is within ``MIP_EARLY`` of the gap target above that LP. It stops once the gap target is
    met; the schedule is the best of the seeds and those found. ``executor`` (a process
    pool or Dask, ``oasis_opt.tasks.make_executor``) prices the jobs of step 1 in parallel,
    with the same answers; ``on_round(Round)`` reports each round and, while one prices, every
    ``ROUND_EVERY`` seconds."""
    start = time.perf_counter()
    inst = instance
    if bound_only is None:
        bound_only = schedule_cells(inst) > SCHEDULE_CELLS
    specs: Sequence[JobSpec] = Specs(inst) if bound_only else \
        [JobSpec.from_instance(inst, i) for i in range(inst.num_jobs)]
    # at trace scale every pool is one group of rows (``_Master``'s ``pool_all``)
    aggregate = bound_only or any(len(set(server_groups(c).tolist())) < len(c)
                                  for c in (inst.worker_capacity, inst.ps_capacity))
    budget = time_limit
    # Leave room to build and hand back the schedule (and for oasis_opt/offline to validate it).
    end = None if budget is None else start + 0.97 * budget - min(1.0, 0.02 * budget)
    hard = (deadline or Deadline()).earlier(end)
    end = hard.at
    if budget is None and end is not None:  # a deadline alone: the fractions are of it
        budget = max(0.0, end - start)

    def at(fraction: float) -> float | None:
        return None if budget is None else start + fraction * budget

    def left() -> float:
        return math.inf if end is None else end - time.perf_counter()

    # The trivial bound Σ_i f_i(1) (utilities are non-increasing) until the LP gives one.
    # (f_i(1) per job: the dense (J, T) table is 1.8 GB on the whole Philly trace)
    trivial = trivial_bound(j.utility for j in inst.jobs)
    res = ColgenStats(trivial, 0.0, False, SolveStatus.NO_SOLUTION, 0, 0)
    track = _Tracker(start, res, on_progress)
    pool: list[Column] = []
    best_sched = Schedule.from_arrays(inst, "colgen", {}, {})

    def improve(sched: Schedule) -> bool:
        """Keep ``sched`` if it beats the best so far (and tell the caller)."""
        nonlocal best_sched
        if sched.total_utility <= best_sched.total_utility:
            return False
        best_sched = sched
        track.update(incumbent=sched.total_utility)
        if on_schedule is not None:
            on_schedule(sched)
        return True

    for sched in seeds if inst.num_jobs else ():
        pool += schedule_columns(inst, sched)
        improve(sched)
    track.update(incumbent=best_sched.total_utility)

    # 1. the bound on the aggregated master; at trace scale with the count rows as extra
    # resources (``with_count_rows``, none while ``COUNT_ROWS`` is 0: the same schedules, a
    # tighter pooled LP), which the master and pricing see and the schedules do not
    rows_inst = with_count_rows(inst) if bound_only else inst
    if bound_only:
        specs = Specs(rows_inst)
    master = _Master(rows_inst, aggregate=aggregate, deadline=hard, pool_all=bound_only,
                     stabilised=bound_only and STAB_MASTER)
    if bound_only:
        # Re-solves after columns were added start from a primal feasible basis: primal
        # simplex took 21.8 CPU s over 8 rounds on 5 000 Philly jobs where HiGHS's default
        # (dual) took 33.5, its later rounds 2.5–4.2 s against 6.1–6.4 (run side by side).
        master.h.setOptionValue("simplex_strategy", 4)
        # ... on 5 000 Philly jobs in 900 s slots dual simplex took 6 s a re-solve where
        # primal took 10: the master picks by time (``_Master.strategy``)
        master.adaptive = True
    for col in pool:
        master.add(col)
    del pool
    if bound_only:  # trace scale: open with fixed-rate columns (``fixed_rate_columns``)
        for i in range(inst.num_jobs):
            for col in fixed_rate_columns(inst, i):
                master.add(col)
    shown = [time.perf_counter()]
    rounded = [0.0]  # seconds spent rounding
    roundings = [0]  # how many LPs were rounded
    last_x: list[np.ndarray | None] = [None]  # a copy of the LP rounded last
    starts: list[Schedule] = []  # the best distinct roundings, best first (``EJECT_STARTS``)
    checked = [False]  # whether the exact LP was solved for the hand-over check

    told: list[tuple[int, int | None, float, float]] = []

    def rounding(x: np.ndarray) -> None:
        """``x`` rounded, filled and compacted (``round_lp``) in both orders, by job first
        (``ROUND_BY_WEIGHT``); each schedule kept if it improves, and among the ejections'
        ``starts`` if it is one of the best. The LP rounded last is not rounded again."""
        if last_x[0] is not None and np.array_equal(x, last_x[0]):
            return
        last_x[0] = x.copy()
        roundings[0] += 1
        round_both(x)

    def round_both(x: np.ndarray) -> None:
        if not fits(schedule_bytes(inst, len(master.columns)), "rounding the LP"):
            return
        for by_weight in (True, False) if ROUND_BY_WEIGHT else (False,):
            sched = round_lp(inst, master.columns, x, fill=True, compact=True, deadline=hard,
                             by_weight=by_weight)
            improve(sched)
            if all(s.total_utility != sched.total_utility for s in starts):
                starts.append(sched)
                starts.sort(key=lambda s: -s.total_utility)
                del starts[EJECT_STARTS:]

    def ejections(start: Schedule, until: Deadline, *, late: bool = False,
                  rng: np.random.Generator | None = None) -> tuple[int, bool]:
        """``trace_lns.eject`` from ``start`` until ``until`` (a deadline no one else holds,
        ended once the gap target is met) with the patience: (ejections kept, whether the
        schedule improved)."""
        def seen(v: float) -> None:
            track.update(incumbent=v)
            if track.gap() <= mip_gap:  # the target met: the phase ends here
                until.end_now()
        if not fits(schedule_bytes(inst, len(master.columns)), "the ejections"):
            return 0, False
        sched, kept = trace_lns.eject(inst, schedule_columns(inst, start), until,
                                      on_value=seen, patience=EJECT_PATIENCE, late=late,
                                      rng=rng)
        return kept, improve(sched)

    def tell(priced: int | None = None, note: str = "") -> None:
        shown[0] = time.perf_counter()
        now = (res.iterations, priced, res.bound, track.incumbent)
        if told and told[-1] == now and priced is None and not note:
            return  # the round's line is out already
        told[:] = [now]
        if on_round is not None:
            on_round(Round(res.iterations, shown[0] - start, res.lp_value, res.bound,
                           track.incumbent, track.gap(), len(master.columns), priced,
                           inst.num_jobs, note))

    def fits(nbytes: float, what: str) -> bool:
        """Whether a phase after the bound that would build about ``nbytes`` fits beside what
        the process holds (``limits.no_room``); where not, it is left out, once said in
        the result's notes and as a progress line (the incumbent and the bound stand)."""
        note = limits.no_room(nbytes, what)
        if note is not None:
            noted(note)
        return note is None

    def noted(note: str) -> None:
        if note.split(":")[0] not in (n.split(":")[0] for n in res.notes):  # once a phase
            res.notes.append(note)
            tell(note=note)

    def pricing(_it: int, priced: int) -> None:
        if time.perf_counter() - shown[0] >= ROUND_EVERY:
            tell(priced)

    def after_round() -> bool:
        """A round's line; at trace scale, the LP rounded whenever rounding has taken under
        ``ROUND_SHARE`` of the time so far (``ROUND_SHARE_BOUND`` while the bound side holds
        the gap); True (stop) once the gap target is met."""
        share = ROUND_SHARE_BOUND if res.bound - lp_now() > \
            BOUND_SIDE * (lp_now() - track.incumbent) else ROUND_SHARE
        if bound_only and rounded[0] < share * (time.perf_counter() - start):
            t0 = time.perf_counter()
            rounding(master.values())
            rounded[0] += time.perf_counter() - t0
        tell()
        if bound_only and mip_from is not None and TRACE_LNS:
            # the moves need no exact LP: the rest of the budget to them at the hand-over
            return track.gap() <= mip_gap or time.perf_counter() >= mip_from
        if bound_only and mip_from is not None and master.penalised and not checked[0] and \
                EXACT_HAND_OVER and time.perf_counter() >= mip_from:
            # rounding reads the penalised x (``EXACT_ROUNDING``): the exact restricted LP
            # once, at the hand-over time, for ``mip_worth``
            checked[0] = True
            master.values(exact=True)
            res.lp_value = max(res.lp_value, master.lp_exact)
        if bound_only and mip_from is not None and mip_worth() and \
                (time.perf_counter() >= mip_from or converged()):
            return True  # the rest of the budget to price-and-branch
        return track.gap() <= mip_gap

    def converged() -> bool:
        """Whether the bound is within ``MIP_EARLY`` of the target gap above the restricted
        LP: it can fall no further than the master's LP optimum, which is at least the
        restricted LP, so the gap is the incumbent's to close from here."""
        return res.bound - res.lp_value <= MIP_EARLY * mip_gap * abs(res.bound)

    def mip_worth() -> bool:
        """Whether the incumbent is more than ``MIP_WORTH`` under the restricted LP: then
        price-and-branch gains more than the bound's last rounds would."""
        # the exact LP's value (``res.lp_value``, with ``STAB_MASTER`` as of the last exact
        # solve: the hand-over check's): the penalised one, higher, handed over on d5k at
        # 75 % and the exact value then said the MIP was not worth it — 58 s of the budget
        # left idle
        return res.lp_value - track.incumbent > MIP_WORTH * abs(res.lp_value)

    def lp_now() -> float:
        """The restricted LP's value for rounding's share: while the master is penalised
        (``STAB_MASTER``) the penalised LP's value — at least the restricted LP's, and close
        to it as ε shrinks —, for the exact one (``res.lp_value``) is computed only at the
        hand-over check (without this, p5k's LP stayed at round 1's and it was never rounded
        again). Bounds never read it."""
        return master.value if master.penalised else res.lp_value

    mip_from = at(0.9 - MIP_SHARE)
    phase = _Phase.opening(smoothing)
    pricer = Pricer(rows_inst, specs, executor) if executor else None
    # the bound's rounds, the first time and when they resume (from ``phase``)
    bound_rounds = functools.partial(
        _generate, master, specs, res, start=start, smoothing=smoothing,
        report=lambda b: track.update(bound=b), pricer=pricer, progress=pricing,
        floor=lambda: track.incumbent, phase=phase)
    res.proven = bound_rounds(deadline=at(0.9 if bound_only else 0.35),
                              max_iterations=max_iterations, after_round=after_round,
                              subgradient_steps=SUBGRADIENT_STEPS if bound_only else 0,
                              auto_smoothing=bound_only)
    res.bound_seconds = time.perf_counter() - start
    pm = None
    lean = False  # the pattern master left out: the trace-scale schedule phases instead
    if master.columns and track.gap() > mip_gap and left() > 0.5 and not bound_only:
        # 2. the pattern master and its own column generation, where they fit beside what is
        # held with the master's columns in it; else the bound's LP is rounded, and its
        # schedule improved, as at trace scale (``schedule_bytes``, far less)
        t_pm = time.perf_counter()
        try:
            pm = PatternMaster(inst, deadline=hard,
                               room=LP_BYTES_PER_NNZ * float(master.h.getNumNz()))
        except NoRoom as e:
            noted(e.note)
            lean = True
    if (bound_only or lean) and master.columns and track.gap() > mip_gap and left() > 0.5:
        # price-and-branch on the pooled master, its choice of columns placed and filled
        x = None
        found: list[tuple[float, np.ndarray]] = []  # the MILP's improving solutions
        if master.penalised and not TRACE_LNS:  # the exact LP for both (for ``mip_worth``)
            master.values(exact=True)
            res.lp_value = max(res.lp_value, master.lp_exact)
        if TRACE_LNS:
            x = master.values()  # the LP rounded, then the moves from the best schedule
        elif mip_worth():
            t0 = time.perf_counter()
            want = MIP_SHARE * budget if budget is not None else mip_time_limit
            # for placing its answer and up to MIP_PLACE earlier ones (≈ 8 CPU s each on p5k)
            reserve = 0.1 * min(want, left()) * (1 + MIP_PLACE / 2)
            # With a budget the MIP runs to its end but the reserve (it starts MIP_SHARE
            # before the bound phase's 90 %, and stopping there left the last 7 % of the
            # budget idle: p5k, 533 of 600 s); without one, ``mip_time_limit``.
            if fits(master.mip_bytes(), "price-and-branch on the pooled master"):
                x = master.mip(hard.before(reserve) if end is not None
                               else hard.earlier(t0 + want), schedule_columns(inst, best_sched),
                               found)
            res.mip_seconds = time.perf_counter() - t0
        if x is None:
            x = master.values()
        rounding(x)  # (nothing where the last round rounded this LP)
        if found and MIP_PLACE > 0:
            # the MILP's earlier answers too (each improved on the one before: newest first),
            # while time is left: placed, filled and compacted, one may be worth more than
            # the last
            best = found[-1][0]
            for v, xs in found[-2::-1][:MIP_PLACE]:
                if v < best - MIP_PLACE_WITHIN * abs(best) or hard.passed():
                    break
                rounding(xs)  # (nothing where it is the LP just rounded)
        if TRACE_LNS and track.gap() > mip_gap and not hard.passed():
            t0 = time.perf_counter()
            if PERTURB_SHARE > 0 and EJECT_SHARE > 0:
                # each draw takes about as long as a rounding of an LP so far
                draw = rounded[0] / max(1, roundings[0])
                stop = t0 + PERTURB_SHARE * hard.left() - draw
                rng = np.random.default_rng(rng_seed)
                for _ in range(PERTURB_DRAWS):
                    if time.perf_counter() >= stop or track.gap() <= mip_gap:
                        break
                    round_both(x * np.exp(PERTURB_SIGMA * rng.standard_normal(len(x))))
            if EJECT_SHARE > 0:  # (of the time the draws left)
                ejections_end = time.perf_counter() + EJECT_SHARE * hard.left()
                top = best_sched.total_utility
                tries = [best_sched] + [s for s in starts if s.total_utility != top and
                                        s.total_utility >= top - EJECT_WITHIN * abs(top)]
                tries = tries[:EJECT_STARTS]
                phases = len(tries) + EJECT_LATE  # the starts, then the late jobs' phase
                for k in range(phases):
                    if track.gap() <= mip_gap:  # (a draw or the phase before met it)
                        break
                    late = k == len(tries)  # from the best end of the starts
                    part = (ejections_end - time.perf_counter()) / (phases - k)
                    kept, better = ejections(best_sched if late else tries[k],
                                             hard.earlier(time.perf_counter() + part),
                                             late=late)
                    if late:
                        res.lns_ejections += kept if better else 0
                    elif better or k == 0:
                        res.lns_ejections = kept
            if EJECT_DRAWN and hard.at is not None and track.gap() > mip_gap:
                # the randomized ejections from the best end, to the end but a reserve
                kept, better = ejections(best_sched, hard.before(EJECT_DRAWN_RESERVE),
                                         rng=np.random.default_rng(rng_seed))
                res.lns_ejections += kept if better else 0
            if track.gap() > mip_gap and fits(schedule_bytes(inst, len(master.columns)),
                                              "the moves"):  # (else: the target met)
                sched, res.lns_moves = trace_lns.search(
                    inst, master.columns, schedule_columns(inst, best_sched), hard,
                    rng_seed=rng_seed, on_value=lambda v: track.update(incumbent=v))
                improve(sched)
            res.mip_seconds = time.perf_counter() - t0
        if bound_only and TRACE_LNS and RESUME_ROUNDS and end is not None and \
                not res.proven and \
                track.gap() > mip_gap:
            # the moves stopped before the deadline (``trace_lns.STALL_SWEEPS`` moves in a
            # row gained nothing): the rest of the budget to more rounds of the bound, from
            # where the phase stopped, while a round like the last one still fits before the
            # time one more rounding of their LP takes
            rounds = res.rounds
            last_round = rounds[-1][3] - rounds[-2][3] if len(rounds) >= 2 else 0.0
            room = end - 1.5 * rounded[0] / max(1, roundings[0]) - 1.0
            if room - last_round > time.perf_counter():
                def reached() -> bool:
                    tell()
                    return track.gap() <= mip_gap
                before = res.iterations
                res.proven = bound_rounds(
                    deadline=room - last_round,
                    max_iterations=max(0, max_iterations - res.iterations),
                    after_round=reached, subgradient_steps=SUBGRADIENT_STEPS,
                    auto_smoothing=True)
                if res.iterations > before and track.gap() > mip_gap and \
                        time.perf_counter() < room:
                    rounding(master.values())
    tell()

    def finish(sched: Schedule) -> SolveResult:
        incumbent = Schedule(sched.instance, "colgen", sched.total_utility, sched.jobs, {})
        res.bound = max(res.bound, incumbent.total_utility)  # float noise
        track.update(incumbent=incumbent.total_utility)
        track.point(force=True)  # the last point is the result
        return result(res, incumbent, time.perf_counter() - start, track.gap() <= mip_gap)

    if pm is None:
        # the MIP stage's own status: stopped by the limit (or no time left for it), else
        # finished or not needed (at trace scale), else not run
        res.mip_status = SolveStatus.OPTIMAL if track.gap() <= mip_gap \
            else SolveStatus.TIME_LIMIT if end is not None and (master.mip_stopped
                                                                or left() <= 0.5) \
            else SolveStatus.OPTIMAL if bound_only else SolveStatus.NO_SOLUTION
        res.columns = len(master.columns)
        if (bound_only or lean) and check is not None and best_sched.jobs and \
                not check(best_sched):
            raise RuntimeError("the rounded LP schedule failed validation")  # a bug: say so
        return finish(best_sched)

    H, K = master.H, master.K

    def grouped(c: Column) -> int:  # small instances only: dense (T, servers) per column
        return pm.add(pm.group_counts(c.job, c.workers.to_dense(T, H), c.ps.to_dense(T, K),
                                      c.value))

    T = inst.horizon
    for col in master.columns:
        grouped(col)
    seed_cols = [grouped(c) for c in schedule_columns(inst, best_sched)]
    y_all, z_all = best_sched.to_arrays(inst)
    lam0 = pm.lambda_of(y_all, z_all)
    # Its rounds re-solve the λ columns too (2-5 s each at 200 jobs) for bounds within 0.05 %
    # of the schedule LP's on the paper preset: at most as long as the bound phase took.
    pm_deadline = at(0.45)
    if pm_deadline is not None:
        pm_deadline = min(pm_deadline, time.perf_counter() + max(10.0, res.bound_seconds))
    pm_proven, lp = generate(pm, specs, deadline=pm_deadline, max_iterations=max_iterations,
                             report=lambda b: track.update(bound=b), stats=res)
    if pm.columns:
        res.lp_value = lp
    res.proven = res.proven or pm_proven
    res.pattern_seconds = time.perf_counter() - t_pm

    # 3. a start from LP diving, then the MILP over the columns
    t2 = time.perf_counter()
    if diving and track.gap() > mip_gap:
        dive_end = t2 + (mip_time_limit if end is None else min(0.25 * budget, 0.5 * left()))
        dived = dive(pm, specs, dive_end)
        cand = None if dived is None else _checked(pm, *dived, check)
        res.dive_value = 0.0 if cand is None else cand.total_utility
        if cand is not None and dived is not None and improve(cand):
            seed_cols = [int(k) for k in np.flatnonzero(dived[0] > 0.5)]
            lam0 = dived[1]
    mip_left = mip_time_limit if end is None else min(FIRST_MIP_SHARE * budget, left())

    def on_inc(value: float, _bound: float) -> None:
        track.update(incumbent=value)

    cand = None
    if fits(pm.mip_bytes(), "the MILP over the pattern master"):
        mip = pm.solve_mip(mip_left, mip_gap, seed_cols, lam0, on_inc)
        (x, lam), res.mip_status = mip.values, mip.status
        cand = _checked(pm, x, lam, check)
    if cand is None or not improve(cand):  # keep the start as the LNS incumbent
        x = np.zeros(len(pm.columns))
        x[seed_cols] = 1.0
        lam = lam0
    track.update(incumbent=best_sched.total_utility)

    # 4. LNS over windows of slots until the gap target or the limit
    rng = np.random.default_rng(rng_seed)
    lns_end = (time.perf_counter() + mip_time_limit) if end is None else end
    width = max(1, min(T, lns_window))
    stall = 0
    exhausted = False  # the search, not the limit, ended it
    while track.gap() > mip_gap and time.perf_counter() < lns_end - 0.5:
        if not fits(pm.mip_bytes(), "the LNS windows"):
            exhausted = True  # memory, not the limit, ended it
            break
        x = np.concatenate([x, np.zeros(len(pm.columns) - len(x))])
        t0 = int(rng.integers(0, max(1, T - width + 1)))
        t1 = min(T - 1, t0 + width - 1)
        slice_s = min(max(2.0, 0.05 * (budget or 60.0)), lns_end - time.perf_counter() - 0.2)
        if slice_s < 0.5:
            break
        move = lns.search(pm, specs, x, lam, t0, t1, slice_s, gap=1e-6)
        if move.objective > best_sched.total_utility + 1e-9 * max(1.0, move.objective):
            cand = _checked(pm, *move.values, check)
            if cand is not None and improve(cand):
                x, lam = move.values
                stall = 0
                res.lns_moves += 1
        else:
            stall += 1
        # adapt the window: solved quickly → wider; stopped by the limit → narrower
        if move.status == SolveStatus.OPTIMAL and move.solve_seconds < 0.5 * slice_s:
            width = min(T, width + max(1, width // 4))
        elif move.status != SolveStatus.OPTIMAL:
            width = max(2, int(width * 0.75))
        if end is None and stall >= max(2, T // max(1, width)):
            break  # no time limit: stop once a sweep of windows finds nothing
        if t0 == 0 and t1 == T - 1 and stall and move.status == SolveStatus.OPTIMAL \
                and move.extras["priced_out"] and not move.extras["new_columns"]:
            # the window is the whole horizon, its MILP over every column proven, and its
            # pricing found no column to enter: every further window is this one again (an
            # outside audit: 2 jobs, 3 slots, --method colgen --time-limit 60 searched 56 s)
            exhausted = True
            break
    if end is not None and track.gap() > mip_gap and not exhausted:
        res.mip_status = SolveStatus.TIME_LIMIT  # the limit, not the search, ended it
    res.columns = len(pm.columns)
    res.integer_slots = len(pm.integer_slots)
    res.mip_seconds = time.perf_counter() - t2
    return finish(best_sched)


def result(stats: ColgenStats, schedule: Schedule, seconds: float,
           closed: bool = False) -> SolveResult:
    """Column generation's outcome as the one result record: ``schedule`` and ``stats.bound``;
    status ``optimal`` when the gap is ``closed`` (≤ ``mip_gap``: the rounds stop there, with
    the LP not proven, and no limit stopped anything), else ``time_limit`` when a limit
    stopped a stage (the LP bound not proven — time or rounds —, or the MIP stage stopped on
    its limit), else ``feasible``; the extras are the stats' fields (``proven`` as
    ``lp_proven``, ``mip_status`` as its value)."""
    if closed:
        status = SolveStatus.OPTIMAL
    elif not stats.proven or stats.mip_status == SolveStatus.TIME_LIMIT:
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.FEASIBLE
    extras = asdict(stats)
    del extras["bound"]
    if not extras["notes"]:  # nothing was left out: the extras as they always were
        del extras["notes"]
    extras = {"lp_proven": extras.pop("proven"), **extras,
              "mip_status": SolveStatus(stats.mip_status).value}
    return SolveResult(status, schedule.total_utility, stats.bound, schedule=schedule,
                       solve_seconds=seconds, solver="colgen", extras=extras)
