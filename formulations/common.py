"""Preprocessing shared by the compact MILP in Pyomo and in PuLP (SPEC §2).

Both modellers read one ``Prep``: the sparse index sets, the jobs that can earn at all, the
window of useful slots of each job, upper bounds of every integer variable from one server's
capacity, the rows that can bind, and the groups of identical servers. Nothing here touches a
solver.

Notation (SPEC §1–2): job i, worker server h, PS server k, resource r, slot t;
``y_iht`` workers, ``z_ikt`` PSs, ``c_it`` = 1 if job i completes (its last slot is) t,
``s_it = Σ_{t' ≥ t} c_it'`` = 1 if job i is still running in slot t (completes at t or later),
``x_i = Σ_t c_it``. ``W_it = Σ_h y_iht`` is job i's work in slot t.

Bounds derived here (each valid for every feasible schedule of the model):

- ``ub_y[i, h] = min(N_i, min_{r: α_ir > 0} ⌊C_hr / α_ir⌋)``: workers of i that fit on h;
- ``ub_z[i, k] = min(⌈N_i/γ_i⌉, min_{r: β_ir > 0} ⌊C_kr / β_ir⌋)``: more PSs than
  ``⌈N_i/γ_i⌉`` never help;
- ``w_max[i] = min(N_i, Σ_h ub_y[i,h], ⌊γ_i · Σ_k ub_z[i,k]⌋)``: most work of i in one slot of
  the empty cluster;
- earliest completion ``e_i = a_i + ⌈V_i / w_max_i⌉ − 1``; latest useful completion
  ``l_i = max{t ≤ T−1 : f_i(t − a_i + 1) > 0}``. A job with ``w_max_i = 0`` or ``e_i > l_i`` can
  never earn and gets no variables (it is "fixed" to not running);
- y, z exist only for slots ``a_i ≤ t ≤ l_i`` (work after ``l_i`` earns nothing), c and s only
  for ``e_i ≤ t ≤ l_i``; for ``t < e_i`` the running indicator is ``s_{i,e_i} = x_i``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from oasis_opt.model import CAP_TOL, Instance, Schedule, ps_needed

_EPS = 1e-9

#: The exact solver's capacity rows are ``Σ α·y ≤ C·(1 + ROW_SLACK)`` (``row_capacity``):
#: what the package's placements may take (``model.FIT_EPS``·α ≤ ``FIT_EPS``·C, float noise
#: in a free capacity) and less than the validator allows (``model.CAP_TOL`` = 1e-9·C),
#: with room left for HiGHS's absolute tolerance. With rows of exactly C, a job whose demand
#: exceeds a server's by 1e-12 of it was placed by RRH and OASiS and validated, but not by the
#: MILP, whose optimum (23.3) then lay below RRH's schedule (36.9) and ``solve`` failed.
ROW_SLACK = 5e-10
#: HiGHS's feasibility tolerance in a careful solve (``highs.CAREFUL``), absolute: a row's
#: right-hand side plus it stays within the validator's ``CAP_TOL``·C (``row_capacity``).
#: On a capacity of 1.64 (a unit brings capacities below 1 into [1, 2)), C·(1 + ROW_SLACK)
#: + 1e-9 passed a load 1.0005e-9·C past C, and the careful solve's schedule failed the
#: validator as the first one had.
CAREFUL_TOL = 1e-9
#: A resource whose capacities and demands are all multiples of ``GRAIN`` and whose capacities
#: lie below ``COARSE_BELOW`` keeps rows of exactly C: its loads differ from C by a grain or
#: more, far above the slack, so the slack admits nothing (and the benchmark's models stay
#: as they were).
GRAIN = 2.0**-10
COARSE_BELOW = 2.0**19


def most_units(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(J,) each job's most workers a slot (``max_workers``) and (J,) the PSs they need
    (``ps_needed``), as floats: the most of each pool a job holds at once."""
    if not instance.num_jobs:
        return np.zeros(0), np.zeros(0)
    return (instance.max_workers.astype(float),
            np.asarray(ps_needed(instance.max_workers, instance.ps_ratio), dtype=float))


def may_bind(capacity: np.ndarray, demand: np.ndarray, most: np.ndarray) -> np.ndarray:
    """(S, R): the capacities of one pool below what every job at its ``most`` (J,) units
    of ``demand`` (J, R) holds together; the others no schedule can fill, and no exact
    model builds their rows."""
    held = demand.T @ most if len(demand) else np.zeros(capacity.shape[1])
    return capacity < held[None, :]


def row_capacity(capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """(S, R): the right-hand sides of one pool's capacity rows for jobs of ``demand``
    (J, R): ``capacity`` (S, R) times ``1 + ROW_SLACK`` on each resource but the coarse ones
    (``GRAIN``), held to ``C·(1 + CAP_TOL·(1 − 1e-3)) − CAREFUL_TOL`` (what HiGHS may pass
    in a careful solve stays valid) and never below C."""
    cap = np.array(capacity, dtype=float)
    out = cap.copy()
    for r in range(out.shape[1]):
        values = np.concatenate([cap[:, r], np.asarray(demand, dtype=float)[:, r]])
        coarse = bool((cap[:, r] < COARSE_BELOW).all()) and \
            not np.mod(values, GRAIN).any()
        if not coarse:
            c = cap[:, r]
            out[:, r] = np.maximum(c, np.minimum(c * (1.0 + ROW_SLACK),
                                                 c * (1.0 + CAP_TOL * (1 - 1e-3)) - CAREFUL_TOL))
    return out

#: The patterns of one (unit, slot): demand classes (jobs with equal demand vectors, as tuples
#: of job indices) and the maximal single-server count vectors over those classes.
Patterns = tuple[tuple[tuple[int, ...], ...], list[tuple[int, ...]]]


@dataclass(frozen=True)
class Options:
    """Which optional tightenings the formulation uses (defaults: what measured best,
    docs/offline-journal.md). ``False`` everywhere but the SPEC rows gives the plain SPEC §2
    model.

    - ``server_linking``: ``y_iht ≤ ub_y[i,h] · s_it`` per server, on top of the aggregate
      ``W_it ≤ w_max_i · s_it``;
    - ``ps_linking``: ``z_ikt ≤ ub_z[i,k] · s_it`` (no PS after the last slot);
    - ``exact_work``: ``Σ_t W_it = V_i·x_i`` instead of ``≥`` (an optimal schedule never needs
      more work than V_i, and a job that does not complete never needs any);
    - ``cumulative``: ``Σ_{t' > t} W_it' ≤ V_i · s_{i,t+1}`` (work after slot t only if the job
      is still running after t; with ``exact_work``: the work done by t reaches V_i when the job
      completes by t);
    - ``completion_cuts``: per job i and slot ``a_i ≤ t < l_i``, the work done by t must
      reach what the slots after t cannot do before the completion slot τ:
      ``Σ_{t' ≤ t} W_it' ≥ Σ_τ R_iτt · c_iτ`` with ``R_iτt = V_i`` for τ ≤ t and
      ``max(0, V_i − w_max_i·(τ − t))`` for τ > t (valid: exactly one τ is chosen when the job
      completes, none otherwise); dominates the ``cumulative`` rows;
    - ``ps_cuts``: the same for the integer PS counts, rounded (Chvátal–Gomory:
      ``Σ_{t' ≤ t} z_it' ≥ Σ_{t' ≤ t} W_it'/γ_i`` and the left side is integral):
      ``Σ_{t' ≤ t} Σ_k z_ikt' ≥ Σ_τ ⌈R_iτt/γ_i⌉ · c_iτ``, and ``Σ_t Σ_k z_ikt ≥ ⌈V_i/γ_i⌉·x_i``;
    - ``ps_dominance``: no idle PS, ``Z_it ≤ ⌈W_it/γ_i⌉`` (``Z_it = Σ_k z_ikt``), written
      ``W_it − γ_i·Z_it ≥ δ_i − γ_i`` with ``δ_i`` from ``Prep.ps_slack``. Not valid for every
      feasible schedule but for at least one optimal one: lowering a job's PS count to
      ``⌈W_it/γ_i⌉`` frees capacity and breaks no other row (the PS cuts only need
      ``Z_it ≥ W_it/γ_i``), so the optimum is unchanged while B&B stops exploring schedules
      that differ only in idle PSs;
    - ``symmetry``: order identical servers in every slot by load ``Σ_i ω_i·y_iht`` (none,
      ``count`` ω_i = 1, ``load`` ω_i = Σ_r α_ir / C_r);
    - ``binary_running``: declare ``s_it`` binary (and ``c_it = s_it − s_{i,t+1}`` implied
      integral) instead of ``c_it`` binary; changes what HiGHS branches on;
    - ``chained``: write the cumulative rows and the completion cuts in linear size. The
      work done by slot t becomes a variable, ``P_it = P_{i,t−1} + W_it``, and the completion
      cut's right-hand side a sliding window of running indicators, ``Σ_τ R_iτt·c_iτ =
      V_i·x_i − U_it`` with ``U_it = w·Σ_{d=1}^{k} s_{i,t+d} + g·s_{i,t+k+1}`` (``w = w_max_i``,
      ``k = ⌈V_i/w⌉ − 1``, ``g = V_i − w·k``), kept by ``U_it = U_{i,t+1} + (terms of
      Prep.window_step)``. The rows say the same as the sums over every earlier slot (same
      LP, same optimum) with a few nonzeros each instead of one per earlier slot: 0.07 M
      instead of 0.89 M nonzeros on 30 jobs × 317 slots. The PS cuts stay sums (their
      rounded coefficients do not telescope);
    - ``flow_workers``: declare the worker and PS counts y, z continuous where the workers
      are a network flow once the completion slots and pattern counts are fixed
      (``Prep.flow_workers``: pattern packing, one demand class in every unit and slot, no PS
      capacity that can bind, and one PS serving a slot's whole work, ``γ_i ≥ w_max_i``). Then
      every capacity of that flow is an integer, so an integral allocation exists whenever a
      fractional one does (and one PS per working slot fits): the optimum is unchanged,
      HiGHS branches only on completions and patterns, and extraction turns the solved
      values into whole ones with a small transportation MILP (``flow.integral_workers``);
    - ``packing``: ``server`` gives one variable per server (``y_iht``) and capacity rows per
      (h, r, t); ``pattern`` aggregates each group of identical servers g into ``y_igt`` (workers
      of i on the group) and packs them with integer counts ``λ_gpt`` of the group's maximal
      single-server patterns p over *demand classes* c (jobs with equal demand vectors are
      interchangeable on a server): ``Σ_p λ_gpt ≤ |g|``, ``Σ_{i∈c} y_igt ≤ Σ_p n_cp·λ_gpt``.
      Exact, no server symmetry, each server's knapsack replaced by its integer hull, and far
      fewer patterns than per job (same LP bound: a class count splits integrally among the
      class's jobs). ``auto`` takes patterns while there are at most ``pattern_limit``;
    - ``exact_completion``: ``c_it`` is the slot the work first reaches V_i, not any later
      one: a job still running in slot t has done at most ``V_i − 1`` before it,
      ``Σ_{t' < t} W_it' ≤ V_i − 1 + M_it·(1 − s_it)`` with ``M_it = w_max_i·(t − a_i) −
      V_i + 1`` (rows for ``e_i < t ≤ l_i``; before e_i the work cannot reach V_i). Then
      every solution is a schedule exactly as solved (nothing to trim), so rows a user adds
      on ``finish``/``done`` hold for the returned schedule (``formulations/custom.py``);
    - ``restart``: HiGHS may restart its root search (presolve again once enough columns are
      fixed; the cut pool and root work are dropped); ``None`` (auto): not with server
      packing, whose roots carry many cuts (measured, docs/offline-journal.md issue 22 round
      2), yes with patterns. Not a row but a solver setting that goes with the formulation,
      so that it travels with the ``Prep`` into the highspy back-end and every racer
      (``formulations.highs.mip_options``; the Pyomo and PuLP media keep HiGHS's default);
    - ``root_heuristic``: HiGHS's root reduced-cost heuristic
      (``mip_heuristic_run_root_reduced_cost``: a sub-MIP over the columns the root's
      reduced costs leave free). Like ``restart`` a solver setting that travels with the
      ``Prep`` into the highspy back-end and its racers; ``None`` (auto, PLAIN's): off where
      every job needs one PS per worker (``γ_i ≤ 1``), on elsewhere. Measured over HiGHS
      seeds 0–4 (issue 22 round 8, docs/offline-journal.md): off, PLAIN took less CPU on all
      six `ps-heavy` instances (γ = 1; fitted on seeds 0–2, held out 3–5) and was even or
      slower where γ_i > 1 on some (ps-light-s2, hard-mix-07);
    - ``class_rows``: per server h, slot t and demand class c (≥ 2 jobs with equal demand
      vectors that may share h in t), ``Σ_{i∈c} y_iht ≤ ⌊min_r C_hr/α_cr⌋`` where that is
      less than ``Σ_{i∈c} ub_y[i,h]`` (PS servers alike with β): the capacity row of h
      divided by the class's demand and rounded (Chvátal–Gomory), valid for every schedule;
      server packing only (patterns already hold each server's integer hull). Measured on
      PLAIN over HiGHS seeds (issue 22 round 9, docs/offline-journal.md): no faster than
      without;
    - ``energy_rows``: per pool, resource r and window ``[A, B]`` of slots, the resource-time
      a job must spend inside the window if it completes by B is at most what the pool
      offers there: ``Σ_i d_ir·R_iAB·Σ_{A≤τ≤B} c_iτ ≤ Σ_{t=A}^{B} Σ_h u_hr`` with
      ``R_iAB = V_i − w_max_i·(A − a_i)⁺`` worker-slots (PS-slots: ``⌈R/ρ_i⌉``) and
      ``u_hr`` the most of r an integer packing of the jobs can use on server h
      (``Prep.usable``, ≤ C_hr). Implied by the LP where ``u = C`` and the PS counts are not
      rounded, but written on the completion binaries, a knapsack row whose covers HiGHS
      can separate; kept only where the jobs' demand exceeds the window's supply. Measured
      as ``class_rows`` (round 9): slower on the fit set, dropped there;
    - ``ps_rate``: where one PS serves all the work job i can do in a slot (``γ_i ≥
      w_max_i``), the PS ratio row reads ``W_it ≤ w_max_i · Z_it`` instead of ``W_it ≤ γ_i ·
      Z_it``, and the PS cuts round ``⌈R/w_max_i⌉`` instead of ``⌈R/γ_i⌉``
      (``Prep.ps_rate``). Valid for every feasible schedule: ``Z_it`` is a whole number, so
      ``W_it > 0`` needs ``Z_it ≥ 1`` and then ``W_it ≤ w_max_i ≤ w_max_i · Z_it``. It cuts
      the LP points that run a job on a fraction ``W/γ`` of a PS (a job with γ = 8 and at
      most 2 workers held 1/4 of a PS in the LP, 1/2 now): where few PS servers bind, that
      fraction is the root gap (issue 22: ps-light-s0's LP bound with the PS counts
      relaxed is 387.6 against OPT 314.2; with the worker counts relaxed it is OPT).
    - ``ps_relaxed``: the highspy back-end declares the PS counts ``z_ikt`` continuous, a
      relaxation (the objective does not read z), and then makes them whole for the
      relaxation's solution (``formulations/ps_relax.py``: with the workers fixed, else with
      the completions fixed); where that fails the relaxed optimum is only a bound and the
      whole model is solved after it (``offline/backends.solve_highspy``). Not a row: the
      optimum is unchanged, and like ``restart`` it travels with the ``Prep`` into the
      highspy back-end and its racers; Pyomo and PuLP keep z whole. Measured (issue 22 round
      10, docs/offline-journal.md): where the PS pool has room, HiGHS's tree is smaller with
      z continuous (ps-light-s1: 23 nodes against 212, the same optimum);
    """

    server_linking: bool = True
    ps_linking: bool = True
    exact_work: bool = True
    cumulative: bool = True
    completion_cuts: bool = True
    ps_cuts: bool = True
    ps_dominance: bool = True
    symmetry: str = "none"
    binary_running: bool = False
    chained: bool = True
    flow_workers: bool = True
    packing: str = "auto"
    pattern_limit: int = 10000
    exact_completion: bool = False
    restart: bool | None = None
    ps_rate: bool = True
    root_heuristic: bool | None = True
    class_rows: bool = False
    energy_rows: bool = False
    ps_relaxed: bool = False

    def __post_init__(self) -> None:
        if self.symmetry not in ("none", "count", "load"):
            raise ValueError(f"symmetry must be none, count or load, got {self.symmetry!r}")
        if self.packing not in ("auto", "pattern", "server"):
            raise ValueError(f"packing must be auto, pattern or server, got {self.packing!r}")


SPEC_OPTIONS = Options(server_linking=False, ps_linking=False, exact_work=False,
                       cumulative=False, completion_cuts=False, ps_cuts=False,
                       ps_dominance=False, chained=False, flow_workers=False,
                       symmetry="none", packing="server", ps_rate=False)
#: The plain exact model (issue 22): one variable per server, the SPEC rows with the running
#: indicators, the aggregate rate bound, the PS linking, exact work and the cumulative rows
#: summed over earlier slots; none of the cuts, the no-idle-PS dominance row or the
#: per-server linking; with the PS rate row (``ps_rate``: on ps-light s0–s2 and hard-mix-07,
#: -09, -11, 40.1 CPU s with it against 53.9 without, HiGHS alone). Otherwise it is what
#: ``benchmarks/direct_highspy.py`` writes, proven to gap 0:
#: on loose instances, where the bound of the root LP is already (near) the optimum and the
#: time goes into finding the incumbent, the extra rows only slow the root down
#: (``offline.plan.route_options``). Without root restarts, as every server-packed model
#: (``restart`` auto; issue 22 round 17, HiGHS alone over seeds 0–4: the sum of the median
#: CPU seconds 36.6 → 31.7 on the 17 PLAIN-routed instances of the family benchmark, and
#: 55.1 → 48.7 on 30 held out, seeds 3–8 of six families).
PLAIN = Options(packing="server", server_linking=False, completion_cuts=False, ps_cuts=False,
                ps_dominance=False, chained=False, root_heuristic=None)
#: The default without the rows whose size grows with the square of a job's window (the
#: cumulative rows, the completion and PS cuts: ``Σ_{t' ≤ t}`` over every slot t): what long
#: horizons get when those rows would not fit the time limit (``Prep.cut_nonzeros``).
LEAN = Options(cumulative=False, completion_cuts=False, ps_cuts=False)


@dataclass(frozen=True, eq=False)
class Prep:
    """Everything both modellers need, computed once from the instance (shapes in brackets).

    Allocation variables live on *units*: single servers (``packing = server``), or groups of
    identical servers (``packing = pattern``). ``ub_y[i, g]`` bounds job i's workers on unit g
    in one slot (``|g|`` times the one-server bound); the formulations index ``y[i, g, t]``,
    ``z[i, g, t]`` and never see servers.
    """

    instance: Instance
    options: Options
    packing: str  # "server" or "pattern" (auto resolved)
    active: tuple[int, ...]  # jobs that can earn something
    worker_units: tuple[tuple[int, ...], ...]  # servers of each worker unit
    ps_units: tuple[tuple[int, ...], ...]
    ub_y: np.ndarray  # (J, Gw) int: workers of i on worker unit g in one slot
    ub_z: np.ndarray  # (J, Gk) int
    w_max: np.ndarray  # (J,) int
    earliest: np.ndarray  # (J,) e_i (meaningful for active jobs)
    latest: np.ndarray  # (J,) l_i, −1 when no slot has positive utility
    gain: np.ndarray  # (J, T) f_i(t − a_i + 1) at slot t, 0 outside [a_i, T)
    ps_free: bool = False  # no PS capacity row can bind
    identical_workers: tuple[tuple[int, ...], ...] = ()  # identical worker units (symmetry)
    identical_ps: tuple[tuple[int, ...], ...] = ()
    # (g, t) -> (demand classes as tuples of jobs, maximal patterns as count tuples aligned
    # with the classes); pattern mode only
    worker_patterns: dict[tuple[int, int], Patterns] = field(default_factory=dict)
    ps_patterns: dict[tuple[int, int], Patterns] = field(default_factory=dict)

    # --- index sets (sparse: only what may be nonzero) ---------------------------------
    def work_slots(self, i: int) -> range:
        """Slots in which job i may hold servers: ``a_i … l_i``."""
        return range(int(self.instance.arrival[i]), int(self.latest[i]) + 1)

    def completion_slots(self, i: int) -> range:
        """Slots in which job i may complete: ``e_i … l_i``."""
        return range(int(self.earliest[i]), int(self.latest[i]) + 1)

    def running_slot(self, i: int, t: int) -> int:
        """Index of the running indicator for slot t: ``s_{i,max(t, e_i)}``."""
        return max(t, int(self.earliest[i]))

    def worker_servers(self, i: int) -> list[int]:
        """Worker units job i can use (computed once per job: the builders ask per row)."""
        return self._units_of[0][i]

    def ps_servers(self, i: int) -> list[int]:
        return self._units_of[1][i]

    @cached_property
    def _units_of(self) -> tuple[list[list[int]], list[list[int]]]:
        return ([[int(h) for h in np.flatnonzero(row)] for row in self.ub_y],
                [[int(k) for k in np.flatnonzero(row)] for row in self.ub_z])

    @cached_property
    def worker_rhs(self) -> np.ndarray:
        """(H, R) right-hand sides of the worker capacity rows (``row_capacity``)."""
        return row_capacity(self.instance.worker_capacity, self.instance.worker_demand)

    @cached_property
    def ps_rhs(self) -> np.ndarray:
        """(K, R) right-hand sides of the PS capacity rows (``row_capacity``)."""
        return row_capacity(self.instance.ps_capacity, self.instance.ps_demand)

    @cached_property
    def y_index(self) -> list[tuple[int, int, int]]:
        return [(i, h, t) for i in self.active for h in self.worker_servers(i)
                for t in self.work_slots(i)]

    @cached_property
    def z_index(self) -> list[tuple[int, int, int]]:
        return [(i, k, t) for i in self.active for k in self.ps_servers(i)
                for t in self.work_slots(i)]

    @cached_property
    def c_index(self) -> list[tuple[int, int]]:
        return [(i, t) for i in self.active for t in self.completion_slots(i)]

    @cached_property
    def work_index(self) -> list[tuple[int, int]]:
        """(i, t) pairs where job i may work."""
        return [(i, t) for i in self.active for t in self.work_slots(i)]

    @cached_property
    def cumulative_index(self) -> list[tuple[int, int]]:
        """(i, t) of the cumulative rows, ``e_i ≤ t < l_i``."""
        return [(i, t) for i in self.active for t in self.completion_slots(i)[:-1]]

    @cached_property
    def cut_index(self) -> list[tuple[int, int]]:
        """(i, t) of the completion / PS cuts, ``a_i ≤ t < l_i``."""
        return [(i, t) for i in self.active for t in self.work_slots(i)[:-1]]

    @cached_property
    def flow_workers(self) -> bool:
        """y and z may be continuous (``Options.flow_workers``): with the completion slots
        and the pattern counts fixed, the workers form a flow from jobs (supply V_i) through
        (job, slot) nodes (capacity w_max_i where the job holds some PS, since
        ``γ_i ≥ w_max_i``) to (unit, slot) nodes (capacity Σ_p n_p·λ_gtp of the one demand
        class), all capacities integers; the other rows that hold y (cumulative rows,
        completion cuts) are implied by those once the completion slot is fixed, and one PS
        per working slot fits since no PS capacity can bind."""
        o = self.options
        if not (o.flow_workers and o.symmetry == "none" and self.packing == "pattern"
                and self.ps_free and self.active):
            return False
        if any(float(self.instance.ps_ratio[i]) < int(self.w_max[i]) for i in self.active):
            return False
        return all(len(classes) == 1 for classes, _ in self.worker_patterns.values())

    @cached_property
    def chain_index(self) -> list[tuple[int, int]]:
        """(i, t) of the work-done variables ``P_it`` (``chained``, with cumulative rows or
        completion cuts): ``a_i ≤ t < l_i``."""
        o = self.options
        return self.cut_index if o.chained and (o.cumulative or o.completion_cuts) else []

    @cached_property
    def window_index(self) -> list[tuple[int, int]]:
        """(i, t) of the window variables ``U_it`` (``chained`` completion cuts)."""
        o = self.options
        return self.cut_index if o.chained and o.completion_cuts else []

    def window_step(self, i: int, t: int) -> list[tuple[int, float]]:
        """``[(u, coef)]`` with ``U_it − U_{i,t+1} = Σ coef · s_iu`` (``U_{i,l_i} = 0``; a
        slot ``u < e_i`` stands for ``s_{i,e_i} = x_i``, one after ``l_i`` for 0):
        ``w·s_{t+1} − (w − g)·s_{t+k+1} − g·s_{t+k+2}`` (``Options.chained``)."""
        v, w = int(self.instance.workload[i]), int(self.w_max[i])
        e, last = int(self.earliest[i]), int(self.latest[i])
        k = -(-v // w) - 1
        g = v - w * k
        out: dict[int, float] = {}
        for u, coef in ((t + 1, w), (t + k + 1, g - w), (t + k + 2, -g)):
            if u <= last:
                out[max(u, e)] = out.get(max(u, e), 0.0) + float(coef)
        return [(u, c) for u, c in out.items() if c != 0.0]

    def remaining_work(self, i: int, t: int) -> list[tuple[int, int]]:
        """``[(τ, R_iτt)]`` with ``R_iτt > 0``: the work job i must have done by slot t if it
        completes in slot τ (``V_i`` for τ ≤ t, ``V_i − w_max_i·(τ − t)`` for τ > t)."""
        v, wm = int(self.instance.workload[i]), int(self.w_max[i])
        out = [(tau, v if tau <= t else v - wm * (tau - t)) for tau in self.completion_slots(i)]
        return [(tau, r) for tau, r in out if r > 0]

    @cached_property
    def ps_slack(self) -> dict[int, float]:
        """{active job i: ``δ_i = min_{k=1…K} (⌊γ_i(k−1)⌋ + 1 − γ_i(k−1))``} over the PS
        counts K of job i (1 for integer γ_i): with integer work, ``Z = ⌈W/γ⌉ = k ≥ 1`` means
        ``W ≥ ⌊γ(k−1)⌋ + 1 ≥ γ(k−1) + δ``, the ``ps_dominance`` row."""
        out = {}
        for i in self.active:
            g = float(self.instance.ps_ratio[i])
            most = max(1, int(self.ub_z[i].sum()))
            out[i] = min(math.floor(g * k + _EPS) + 1 - g * k for k in range(most))
        return out

    def ps_rate(self, i: int) -> float:
        """The most work one PS of job i serves in a slot, as the rows use it: ``γ_i``, or
        ``w_max_i`` where that is less and ``Options.ps_rate`` is on (one PS then serves all
        a slot can do, so whole PS counts make ``W_it ≤ w_max_i · Z_it`` valid)."""
        g = float(self.instance.ps_ratio[i])
        return min(g, float(self.w_max[i])) if self.options.ps_rate else g

    def ps_needed(self, i: int, work: float) -> int:
        """``⌈work/ρ_i⌉`` (``ρ_i = ps_rate(i)``): the fewest PS-slots that serve ``work``
        worker-slots of job i."""
        return math.ceil(work / self.ps_rate(i) - _EPS)

    @cached_property
    def jobs_on_worker(self) -> dict[tuple[int, int], list[int]]:
        """(unit, t) -> jobs that may hold workers on it in t."""
        out: dict[tuple[int, int], list[int]] = {}
        for i, h, t in self.y_index:
            out.setdefault((h, t), []).append(i)
        return out

    @cached_property
    def jobs_on_ps(self) -> dict[tuple[int, int], list[int]]:
        out: dict[tuple[int, int], list[int]] = {}
        for i, k, t in self.z_index:
            out.setdefault((k, t), []).append(i)
        return out

    @cached_property
    def worker_capacity_rows(self) -> list[tuple[int, int, int]]:
        """(h, r, t) capacity rows that can bind (``Σ_i α_ir·ub_y[i,h]`` above the row's
        right-hand side, ``worker_rhs``); server mode."""
        if self.packing != "server":
            return []
        return _binding_rows(self.jobs_on_worker, self.instance.worker_demand, self.ub_y,
                             self.worker_rhs)

    @cached_property
    def ps_capacity_rows(self) -> list[tuple[int, int, int]]:
        if self.packing != "server":
            return []
        return _binding_rows(self.jobs_on_ps, self.instance.ps_demand, self.ub_z,
                             self.ps_rhs)

    @cached_property
    def worker_class_rows(self) -> list[tuple[int, int, tuple[int, ...], int]]:
        """(h, t, jobs of a demand class, bound) of ``Options.class_rows``; server mode."""
        return self._class_rows(self.jobs_on_worker, self.instance.worker_demand, self.ub_y,
                                self.instance.worker_capacity)

    @cached_property
    def ps_class_rows(self) -> list[tuple[int, int, tuple[int, ...], int]]:
        return self._class_rows(self.jobs_on_ps, self.instance.ps_demand, self.ub_z,
                                self.instance.ps_capacity)

    def _class_rows(self, jobs_on: dict[tuple[int, int], list[int]], demand: np.ndarray,
                    ub: np.ndarray, capacity: np.ndarray
                    ) -> list[tuple[int, int, tuple[int, ...], int]]:
        if not self.options.class_rows or self.packing != "server":
            return []
        rows = []
        for (h, t), jobs in sorted(jobs_on.items()):
            for c in _demand_classes(jobs, demand):
                if len(c) < 2:
                    continue
                fit = _fit_one(demand[c[0]], capacity[h])
                if fit < int(ub[c, h].sum()):
                    rows.append((h, t, tuple(c), fit))
        return rows

    def usable(self, pool: str) -> np.ndarray:
        """(units, R): the most of each resource that an integer packing of the jobs (counts
        ≤ the one-server bound, demand classes of equal vectors, ``maximal_patterns``) uses
        on the servers of each unit; the capacity itself where the patterns would be too
        many."""
        inst = self.instance
        demand, ub, cap, units = (
            (inst.worker_demand, self.ub_y, inst.worker_capacity, self.worker_units)
            if pool == "w" else (inst.ps_demand, self.ub_z, inst.ps_capacity, self.ps_units))
        out = np.array([cap[g[0]] * len(g) for g in units], dtype=float).reshape(-1, cap.shape[1])
        for u, g in enumerate(units):
            h = g[0]
            classes = _demand_classes([i for i in self.active if ub[i, u] > 0], demand)
            if not classes:
                continue
            most = [min(_fit_one(demand[c[0]], cap[h]),
                        sum(int(ub[i, u]) // len(g) for i in c)) for c in classes]
            try:
                pats = maximal_patterns([demand[c[0]] for c in classes], most, cap[h], [2000])
            except _TooMany:
                continue
            vec = np.array([demand[c[0]] for c in classes])  # (classes, R)
            most_used = (np.array(pats, dtype=float) @ vec).max(axis=0)
            out[u] = len(g) * np.minimum(cap[h], most_used)
        return out

    @cached_property
    def energy_rows(self) -> list[tuple[int, int, int, int, list[tuple[int, float]], float]]:
        """(pool, r, A, B, [(i, coef of Σ_{A≤τ≤B} c_iτ)], rhs) of ``Options.energy_rows``
        (pool 0: workers, 1: PSs):
        windows ``[A, B]`` with A an arrival slot and B a completion slot, rows whose
        coefficients sum above the right-hand side (the others cannot bind)."""
        if not self.options.energy_rows or not self.active:
            return []
        inst = self.instance
        starts = sorted({int(inst.arrival[i]) for i in self.active})
        ends = sorted({t for i in self.active for t in self.completion_slots(i)})
        rows = []
        pools = [(0, inst.worker_demand, self.usable("w"))]
        if not self.ps_free:
            pools.append((1, inst.ps_demand, self.usable("p")))
        for pool, demand, usable in pools:
            supply = usable.sum(axis=0)  # (R,) per slot
            for r in range(demand.shape[1]):
                if supply[r] <= 0:
                    continue
                for A in starts:
                    for B in ends:
                        if B < A:
                            continue
                        terms = []
                        for i in self.active:
                            if max(int(self.earliest[i]), A) > min(B, int(self.latest[i])) \
                                    or demand[i, r] <= 0:
                                continue  # cannot complete in [A, B]
                            a = int(inst.arrival[i])
                            need = int(inst.workload[i]) - int(self.w_max[i]) * max(0, A - a)
                            if need <= 0:
                                continue
                            if pool == 1:
                                need = self.ps_needed(i, float(need))
                            terms.append((i, float(demand[i, r]) * need))
                        rhs = float(supply[r]) * (B - A + 1)
                        if sum(c for _, c in terms) > rhs * (1 + _EPS) + _EPS:
                            rows.append((pool, r, A, B, terms, rhs))
        return rows

    @cached_property
    def worker_pattern_index(self) -> list[tuple[int, int, int]]:
        """(g, t, p): pattern p of worker unit g in slot t (pattern mode)."""
        return [(g, t, p) for (g, t), (_, pats) in self.worker_patterns.items()
                for p in range(len(pats))]

    @cached_property
    def ps_pattern_index(self) -> list[tuple[int, int, int]]:
        return [(g, t, p) for (g, t), (_, pats) in self.ps_patterns.items()
                for p in range(len(pats))]

    @cached_property
    def worker_symmetry_rows(self) -> list[tuple[int, int, int]]:
        """(h, h', t): identical servers h < h' consecutive in a group, both usable in t."""
        return _symmetry_rows(self.identical_workers, self.jobs_on_worker,
                              self.instance.horizon, self.options.symmetry)

    @cached_property
    def ps_symmetry_rows(self) -> list[tuple[int, int, int]]:
        return _symmetry_rows(self.identical_ps, self.jobs_on_ps, self.instance.horizon,
                              self.options.symmetry)

    def worker_weight(self, i: int, h: int) -> float:
        """ω_i of the symmetry rows on worker server h."""
        return _weight(self.instance.worker_demand[i], self.instance.worker_capacity[h],
                       self.options.symmetry)

    def ps_weight(self, i: int, k: int) -> float:
        return _weight(self.instance.ps_demand[i], self.instance.ps_capacity[k],
                       self.options.symmetry)

    def upper_bound(self) -> float:
        """A trivial bound on OPT: ``Σ_i max_t f_i`` over the jobs that can earn."""
        return float(sum(self.gain[i].max() for i in self.active))

    def model_size(self) -> dict[str, int]:
        """Columns, rows and nonzeros of the compact MILP with these options, counted from the
        index sets without building it: the rows exactly (``row_counts``), the nonzeros as an
        upper estimate; ``cut_nonzeros`` of them in the quadratic cut rows."""
        o, inst = self.options, self.instance
        R = len(inst.resources)
        ny, nz, nc = len(self.y_index), len(self.z_index), len(self.c_index)
        npat = len(self.worker_pattern_index) + len(self.ps_pattern_index)
        nwork = len(self.work_index)
        cols = ny + nz + 2 * nc + npat + len(self.chain_index) + len(self.window_index)
        nnz = 3 * nc + ny + nwork + ny + nc  # running, work link, workload
        nnz += 2 * (ny + nz)  # PS ratio (and its dominance twin)
        if o.server_linking:
            nnz += 2 * ny
        if o.ps_linking:
            nnz += 2 * nz
        if self.packing == "server":
            nnz += R * (ny + nz)
        else:
            nnz += 2 * npat + ny + nz + sum(
                len(c) * len(p) for c, p in self.worker_patterns.values()) + sum(
                len(c) * len(p) for c, p in self.ps_patterns.values())
        _, cut_nnz, quadratic = self._cut_counts()
        for rows_, jobs_on in ((self.worker_symmetry_rows, self.jobs_on_worker),
                               (self.ps_symmetry_rows, self.jobs_on_ps)):
            nnz += sum(len(jobs_on[a, t]) + len(jobs_on[b, t]) for a, b, t in rows_)
        # the rows exactly, per family (the nonzeros above stay an upper estimate)
        return {"columns": cols, "rows": sum(self.row_counts().values()),
                "nonzeros": nnz + cut_nnz, "cut_nonzeros": quadratic}

    def row_counts(self) -> dict[str, int]:
        """Rows of the compact MILP per family, named as the Pyomo components
        (``compact_pyomo.py``; the PuLP and highspy back-ends tag their rows the same), counted
        from the index sets without building the model; families without rows are left out.

        A completion or PS cut at slot t exists where some completion slot τ leaves work to
        do by t: ``R_iτt > 0`` for τ = max(t, e_i), i.e. ``t ≥ e_i`` or
        ``V_i − w_max_i·(e_i − t) > 0`` (``Prep.remaining_work``)."""
        o = self.options
        cut_rows = 0
        if (o.completion_cuts and not self.window_index) or o.ps_cuts:
            for i in self.active:
                v, w, e = int(self.instance.workload[i]), int(self.w_max[i]), int(self.earliest[i])
                cut_rows += sum(1 for t in self.work_slots(i)[:-1]
                                if t >= e or v - w * (e - t) > 0)
        work = len(self.work_index)
        counts = {
            "running": len(self.c_index), "work_link": work,
            "server_link": len(self.y_index) if o.server_linking else 0,
            "ps_link": len(self.z_index) if o.ps_linking else 0,
            "workload": len(self.active), "chain": len(self.chain_index),
            "cumulative": len(self.cumulative_index) if o.cumulative else 0,
            "window": len(self.window_index) if o.completion_cuts else 0,
            "completion_cuts": (len(self.window_index) if self.window_index else cut_rows)
            if o.completion_cuts else 0,
            "ps_cuts": cut_rows if o.ps_cuts else 0,
            "ps_total": len(self.active) if o.ps_cuts else 0,
            "ps_ratio": work, "ps_dominance": work if o.ps_dominance else 0,
            "worker_pattern_count": len(self.worker_patterns),
            "worker_pattern_hold": sum(len(c) for c, _ in self.worker_patterns.values()),
            "ps_pattern_count": len(self.ps_patterns),
            "ps_pattern_hold": sum(len(c) for c, _ in self.ps_patterns.values()),
            "worker_capacity": len(self.worker_capacity_rows),
            "ps_capacity": len(self.ps_capacity_rows),
            "worker_class": len(self.worker_class_rows),
            "ps_class": len(self.ps_class_rows),
            "energy": len(self.energy_rows),
            "worker_symmetry": len(self.worker_symmetry_rows),
            "ps_symmetry": len(self.ps_symmetry_rows),
        }
        return {k: v for k, v in counts.items() if v}

    def cut_nonzeros(self) -> int:
        """Nonzeros of the rows that grow with the square of a job's window (``LEAN``): the
        cumulative rows and completion cuts unless ``chained``, and the PS cuts."""
        return self._cut_counts()[2]

    def _cut_counts(self) -> tuple[int, int, int]:
        """(rows, nonzeros, nonzeros of the quadratic rows) of the cumulative rows and the
        completion / PS cuts (with their chain and window rows), in closed form per job:
        with ``n`` slots ``a_i … l_i``, a summed row at slot t holds ``t − a_i + 1`` slots of
        every unit, plus the completion terms of its window; a chained row a handful."""
        o = self.options
        rows = nnz = quadratic = 0
        for i in self.active:
            a, e, last = int(self.instance.arrival[i]), int(self.earliest[i]), int(self.latest[i])
            nh, nk = len(self.worker_servers(i)), len(self.ps_servers(i))
            n, nc = last - a + 1, last - e + 1
            tri_all = (n - 1) * n // 2  # Σ_{t=a}^{l−1} (t − a + 1)
            tri_cum = tri_all - (e - a) * (e - a + 1) // 2  # Σ_{t=e}^{l−1} (t − a + 1)
            chained = o.chained and (o.cumulative or o.completion_cuts)
            if chained:  # P_it = P_{i,t−1} + W_it
                rows += n - 1
                nnz += (n - 1) * (2 + nh)
            if o.cumulative:
                rows += nc - 1
                if chained:
                    nnz += 3 * (nc - 1)
                else:
                    nnz += tri_cum * nh + 2 * (nc - 1)
                    quadratic += tri_cum * nh + 2 * (nc - 1)
            if o.completion_cuts and chained:  # U_it rows and P_it + U_it ≥ V_i x_i
                rows += 2 * (n - 1)
                nnz += 8 * (n - 1)
            for on, units in ((o.completion_cuts and not chained, nh), (o.ps_cuts, nk)):
                if on:
                    rows += n - 1
                    nnz += tri_all * units + (n - 1) * nc
                    quadratic += tri_all * units + (n - 1) * nc
            if o.ps_cuts:
                rows += 1
                nnz += n * nk + 1
        return rows, nnz, quadratic

    def size(self) -> dict[str, int | str]:
        """Counts that describe the MILP (for benchmarks and reports)."""
        return {"jobs": self.instance.num_jobs, "active_jobs": len(self.active),
                "horizon": self.instance.horizon,
                "worker_servers": len(self.instance.worker_names),
                "ps_servers": len(self.instance.ps_names), "packing": self.packing,
                "y_vars": len(self.y_index), "z_vars": len(self.z_index),
                "c_vars": len(self.c_index),
                "patterns": len(self.worker_pattern_index) + len(self.ps_pattern_index),
                "capacity_rows": len(self.worker_capacity_rows) + len(self.ps_capacity_rows)}


def prepare(instance: Instance, options: Options | None = None, *,
            stop: Callable[[], bool] | None = None) -> Prep:
    """Compute bounds, windows, units, patterns and index sets (module docstring).
    ``stop``: asked while the patterns are counted (the costly part: 0.07 s of a 0.2 s
    solve on a 15-job instance); once it is true, ``Stopped`` is raised (the caller has
    its answer from elsewhere: ``offline.compact``'s early prober proved the optimum)."""
    options = options or Options()
    J, T = instance.num_jobs, instance.horizon
    ub_y = _fit(instance.worker_demand, instance.worker_capacity, instance.max_workers)
    # ``ps_needed``: at least one PS for any workers, however large γ (⌈1/1e12 − 1e-9⌉ is 0)
    ps_cap = np.asarray(ps_needed(instance.max_workers, instance.ps_ratio), dtype=np.int64) \
        if J else np.zeros(0, dtype=np.int64)
    ub_z = _fit(instance.ps_demand, instance.ps_capacity, ps_cap)
    if J:
        by_ps = np.floor(instance.ps_ratio * ub_z.sum(axis=1) + _EPS).astype(np.int64)
        w_max = np.minimum(np.minimum(instance.max_workers, ub_y.sum(axis=1)), by_ps)
        # no server holds more of job i than one slot's work allows, nor PSs than it needs
        ub_y = np.minimum(ub_y, w_max[:, None])
        need = np.asarray(ps_needed(w_max, instance.ps_ratio), dtype=np.int64)
        ub_z = np.minimum(ub_z, need[:, None])
    else:
        w_max = np.zeros(0, dtype=np.int64)
    gain = np.zeros((J, T))
    latest = np.full(J, -1, dtype=np.int64)
    earliest = np.zeros(J, dtype=np.int64)
    active = []
    for i in range(J):
        a = int(instance.arrival[i])
        gain[i, a:] = instance.utility_table[i, : T - a]
        positive = np.flatnonzero(gain[i] > 0)
        if positive.size:
            latest[i] = positive[-1]
        if w_max[i] <= 0:
            continue
        earliest[i] = a + math.ceil(int(instance.workload[i]) / int(w_max[i])) - 1
        if earliest[i] <= latest[i]:
            active.append(i)
    same_w, same_ps = _identical(instance.worker_capacity), _identical(instance.ps_capacity)
    singles_w = tuple((h,) for h in range(len(instance.worker_names)))
    singles_ps = tuple((k,) for k in range(len(instance.ps_names)))
    server = Prep(instance, options, "server", tuple(active), singles_w, singles_ps, ub_y, ub_z,
                  w_max, earliest, latest, gain)
    ps_free = not server.ps_capacity_rows
    if options.ps_cuts and ps_free:
        # no PS capacity can bind: a job takes the PSs it needs for free, and the PS cuts
        # (quadratic in the horizon) would only make the model larger
        options = replace(options, ps_cuts=False)
    server = replace(server, options=options, ps_free=ps_free, identical_workers=same_w,
                     identical_ps=same_ps)
    if options.packing == "server":
        return server
    units_w, units_ps = _units(instance.worker_capacity), _units(instance.ps_capacity)
    uy = np.stack([ub_y[:, list(g)].sum(axis=1) for g in units_w], axis=1) if units_w and J \
        else np.zeros((J, len(units_w)), dtype=np.int64)
    uz = np.stack([ub_z[:, list(g)].sum(axis=1) for g in units_ps], axis=1) if units_ps and J \
        else np.zeros((J, len(units_ps)), dtype=np.int64)
    budget = [options.pattern_limit if options.packing == "auto" else None]
    try:
        wp = _unit_patterns(server.jobs_on_worker, units_w, ub_y, instance.worker_demand,
                            instance.worker_capacity, budget, stop)
        pp = _unit_patterns(server.jobs_on_ps, units_ps, ub_z, instance.ps_demand,
                            instance.ps_capacity, budget, stop)
    except _TooMany:
        return server
    return Prep(instance, options, "pattern", tuple(active), units_w, units_ps, uy, uz, w_max,
                earliest, latest, gain, ps_free, (), (), wp, pp)


class _TooMany(Exception):
    pass


class Stopped(Exception):
    """``prepare``'s ``stop()`` turned true: the model is no longer wanted."""


def _units(capacity: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """All servers grouped by equal capacity vectors (singletons included), in index order."""
    groups: dict[tuple[float, ...], list[int]] = {}
    for s, row in enumerate(capacity):
        groups.setdefault(tuple(float(x) for x in row), []).append(s)
    return tuple(tuple(g) for g in groups.values())


def _unit_patterns(jobs_on_server: dict[tuple[int, int], list[int]],
                   units: tuple[tuple[int, ...], ...], ub: np.ndarray, demand: np.ndarray,
                   capacity: np.ndarray, budget: list[int | None],
                   stop: Callable[[], bool] | None = None
                   ) -> dict[tuple[int, int], Patterns]:
    """Maximal single-server patterns of every (unit, slot) over demand classes: the jobs
    present are grouped by equal demand vectors, a class c may take up to
    ``min(fit_c, Σ_{i∈c} ub[i, h])`` workers (PSs) of one server. ``budget[0]`` counts down
    the patterns still allowed (None: no limit) and ``_TooMany`` is raised when it runs out;
    ``Stopped`` once ``stop()`` is true (``prepare``)."""
    out: dict[tuple[int, int], Patterns] = {}
    cache: dict[tuple[int, tuple[tuple[int, ...], ...]], list[tuple[int, ...]]] = {}
    by_server_slot = sorted(jobs_on_server.items())
    for g, servers in enumerate(units):
        h0 = servers[0]
        users = np.flatnonzero(ub[:, h0] > 0)
        binding = binding_resources(demand[users], capacity[h0])
        eff = demand * binding  # demand on the resources that can bind on this unit
        for (h, t), jobs in by_server_slot:
            if h != h0:
                continue
            by_demand: dict[tuple[float, ...], list[int]] = {}
            for i in jobs:
                by_demand.setdefault(tuple(float(x) for x in eff[i]), []).append(i)
            classes = tuple(tuple(c) for c in by_demand.values())
            key = (g, classes)
            if key not in cache:
                if stop is not None and stop():
                    raise Stopped
                most = [int(_fit(eff[[c[0]]], capacity[[h0]],
                                 np.array([ub[list(c), h0].sum()]))[0, 0]) for c in classes]
                cache[key] = maximal_patterns([eff[c[0]] for c in classes], most,
                                              capacity[h0], budget, stop)
            elif budget[0] is not None:  # every (unit, slot) gets its own λ variables
                budget[0] -= len(cache[key])
                if budget[0] < 0:
                    raise _TooMany
            out[g, t] = (classes, cache[key])
    return out


def binding_resources(demand: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """(R,) bool: the resources that may bind on a server of ``capacity`` for items of the
    ``demand`` rows. Resource r is dropped when a kept resource r' bounds it:
    ``max_{i: d_ir > 0} d_ir / d_ir' · C_r' ≤ C_r`` (every load that fits r' fits r, since
    ``Σ_i n_i d_ir ≤ max_i (d_ir/d_ir') · Σ_i n_i d_ir'``). Each drop leans on a resource kept
    at that moment, so the chain of bounds ends at a kept one: checking the kept resources is
    exact. Dropping them merges demand classes that differ only where nothing binds."""
    R = capacity.shape[0]
    keep = np.ones(R, dtype=bool)
    for r in range(R):
        users = demand[:, r] > 0
        if not users.any():
            continue  # nobody needs r: it never binds (and no class differs in it)
        for q in range(R):
            if q == r or not keep[q] or not (demand[users, q] > 0).all():
                continue
            if (demand[users, r] / demand[users, q]).max() * capacity[q] \
                    <= capacity[r] * (1 + _EPS) + _EPS:
                keep[r] = False
                break
    return keep


#: ``maximal_patterns`` sums a load exactly where the room left, taken item by item, is
#: within this share of the magnitudes summed (each subtraction rounds by 2⁻⁵³ of them).
EXACT_NEAR = 1e-12
#: Search nodes of ``maximal_patterns`` allowed per pattern of a limited budget.
SEARCH_NODES_PER_PATTERN = 50
#: ``maximal_patterns`` asks its ``stop`` once in this many search nodes (about 0.5 ms).
STOP_EVERY_NODES = 128


def maximal_patterns(demands: list[np.ndarray], most: list[int], capacity: np.ndarray,
                     budget: list[int | None] | None = None,
                     stop: Callable[[], bool] | None = None) -> list[tuple[int, ...]]:
    """All maximal ways to fill one server: count vectors n (n_j ≤ most[j],
    ``Σ_j n_j·d_j ≤ C·(1 + ROW_SLACK)``, the server model's rows) to which no further item
    fits. Every feasible content of a server is dominated by one of them, so
    ``y ≤ Σ_p n_p·λ_p`` with ``Σ_p λ_p ≤ |g|`` is exact. ``stop``: asked every
    ``STOP_EVERY_NODES`` nodes of the search, which raises ``Stopped`` once it is true.

    One test of fit for the counts tried and for maximality: the sign of ``C·(1 +
    ROW_SLACK) − Σ_j n_j·d_j``, summed exactly (``math.fsum``, whatever the order) where
    the room taken item by item is near 0 (``EXACT_NEAR``), so that it depends on the
    count vector alone. Two earlier tests failed on the way they were
    computed:
    - counts held to ``⌊rem/d + 1e-9⌋`` and maximality to ``d ≤ rem + 1e-9·rem``: two PSs of
      15.625 beside none were "not maximal" (one of 3.125e10 fit on top, within 1e-9 of
      the rest) while one of 3.125e10 left no room for them: neither pattern was kept and
      the optimum lost a job (45.18 proved where 68.07 is);
    - one limit, but the room left ``rem`` taken by subtraction, item by item: on a PS
      server of 2e12 (limit 2e12 + 1 000), one PS of 1e12 and one of 1 000.0000000000001
      left 1e12 in floats, so another 1e12 "fit" and (1, 1) was not maximal, while two of
      1e12 left 1 000, where the small one does not fit: only (2, 0) was kept, and every
      medium proved 50.83 where 62.54 is (r25834)."""
    budget = budget if budget is not None else [None]
    cap = [float(x) * (1.0 + ROW_SLACK) for x in capacity]
    dem = [[float(x) for x in d] for d in demands]
    n = len(dem)
    counts = [0] * n
    found: list[tuple[int, ...]] = []
    # The search visits every count vector, maximal or not: on big servers with many classes
    # that is exponential long before many maximal patterns are found, so a limited budget
    # also caps the nodes visited, over all the calls that share it (budget[1], set on the
    # first call to SEARCH_NODES_PER_PATTERN per allowed pattern).
    if len(budget) < 2:
        budget.append(None if budget[0] is None
                      else SEARCH_NODES_PER_PATTERN * max(1, budget[0]))
    nodes = budget[1:2]
    visited = [0]

    def room(r: int, j: int, c: int) -> float:
        """The limit on resource r less the load of ``counts`` with ``counts[j] = c``,
        rounded once from the exact sum of the limit and the (rounded) products: its sign
        is exact."""
        return math.fsum([cap[r], -c * dem[j][r]] +
                         [-m * d[r] for i, (m, d) in enumerate(zip(counts, dem, strict=True))
                          if m and i != j])

    def fits(j: int, c: int, rem: list[float]) -> bool:
        """``counts`` with ``counts[j] = c`` within the limit; ``rem``: the room ``counts``
        leave, taken item by item. Where that is further from 0 than its rounding could
        take it (``EXACT_NEAR``), its sign decides; else ``room``'s."""
        more = c - counts[j]
        for r, x in enumerate(dem[j]):
            if x > 0:
                left = rem[r] - more * x
                if abs(left) <= EXACT_NEAR * (cap[r] + more * x + abs(rem[r])):
                    left = room(r, j, c)
                if left < 0.0:
                    return False
        return True

    def dfs(k: int, rem: list[float]) -> None:
        if stop is not None:
            visited[0] += 1
            if visited[0] % STOP_EVERY_NODES == 0 and stop():
                raise Stopped
        if nodes[0] is not None:
            nodes[0] -= 1
            if nodes[0] < 0:
                budget[0] = budget[1] = -1  # exhausted, as callers test on budget[0]
                raise _TooMany
        if k == n:
            for j in range(n):
                if counts[j] < most[j] and fits(j, counts[j] + 1, rem):
                    return  # not maximal
            found.append(tuple(counts))
            if budget[0] is not None:
                budget[0] -= 1
                if budget[0] < 0:
                    raise _TooMany
            return
        d = dem[k]
        top = most[k]  # the quotient, then settled by the one test
        for x, r in zip(d, rem, strict=True):
            if x > 0:
                top = min(top, math.floor(r / x) if r > 0 else 0)
        while top > 0 and not fits(k, top, rem):
            top -= 1
        while top < most[k] and fits(k, top + 1, rem):
            top += 1
        for c in range(top, -1, -1):
            counts[k] = c
            dfs(k + 1, [r - c * x for x, r in zip(d, rem, strict=True)])
        counts[k] = 0

    dfs(0, cap)
    budget[1] = nodes[0]
    return found


def _fit(demand: np.ndarray, capacity: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """(J, S): ``min(cap_i, min_{r: d_ir > 0} ⌊C_sr / d_ir⌋)``; ``cap_i`` if i demands nothing."""
    J, S = demand.shape[0], capacity.shape[0]
    if J == 0 or S == 0:
        return np.zeros((J, S), dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(demand[:, None, :] > 0,
                         np.floor(capacity[None, :, :] / demand[:, None, :] + _EPS), np.inf)
    fit = ratio.min(axis=2)  # (J, S)
    return np.minimum(fit, cap[:, None]).astype(np.int64)


def _demand_classes(jobs: list[int] | tuple[int, ...], demand: np.ndarray) -> list[list[int]]:
    """``jobs`` grouped by equal demand vectors, in first-seen order."""
    by: dict[tuple[float, ...], list[int]] = {}
    for i in jobs:
        by.setdefault(tuple(float(x) for x in demand[i]), []).append(i)
    return list(by.values())


def _fit_one(demand: np.ndarray, capacity: np.ndarray) -> int:
    """How many of one demand vector fit one capacity vector (``_fit`` for one pair)."""
    return int(_fit(demand[None, :], capacity[None, :], np.array([10 ** 9]))[0, 0])


def _identical(capacity: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """Groups (of ≥ 2) of servers with equal capacity vectors: interchangeable in every slot."""
    groups: dict[tuple[float, ...], list[int]] = {}
    for s, row in enumerate(capacity):
        groups.setdefault(tuple(float(x) for x in row), []).append(s)
    return tuple(tuple(g) for g in groups.values() if len(g) > 1)


def _binding_rows(jobs_on: dict[tuple[int, int], list[int]], demand: np.ndarray,
                  ub: np.ndarray, rhs: np.ndarray) -> list[tuple[int, int, int]]:
    """The rows whose jobs at their most (``ub``) may load past ``rhs``: a row left out
    holds anyway. (It was ``C·(1 + 1e-9) + 1e-9``, the validator's limit: two workers of
    C/2·(1 + 1e-13) beside one of 1e-9·C passed the MILP, failed the validator by 1e-13·C,
    and the careful solve dropped the same row.)"""
    if not jobs_on:
        return []
    keys = np.array(list(jobs_on), dtype=np.int64).reshape(-1, 2)  # (s, t) of each key
    sizes = np.fromiter((len(jobs) for jobs in jobs_on.values()), np.int64, len(jobs_on))
    jobs = np.fromiter((i for js in jobs_on.values() for i in js), np.int64, int(sizes.sum()))
    key = np.repeat(np.arange(len(keys)), sizes)
    # each key's jobs added one by one in their order (np.add.at is unbuffered): the sums
    # of ``Σ_i demand[i, r]·ub[i, s]`` bit for bit as a loop over the jobs gives them
    most = np.zeros((len(keys), rhs.shape[1]))
    np.add.at(most, key, demand[jobs] * ub[jobs, keys[key, 0]][:, None])
    k, r = np.nonzero(most > rhs[keys[:, 0]])
    s, t = keys[k, 0], keys[k, 1]
    order = np.lexsort((t, r, s))
    return [(int(s[j]), int(r[j]), int(t[j])) for j in order]


def _symmetry_rows(groups: tuple[tuple[int, ...], ...], jobs_on: dict[tuple[int, int], list[int]],
                   horizon: int, mode: str) -> list[tuple[int, int, int]]:
    if mode == "none":
        return []
    rows = []
    for g in groups:
        for a, b in zip(g[:-1], g[1:], strict=True):
            rows.extend((a, b, t) for t in range(horizon)
                        if (a, t) in jobs_on and (b, t) in jobs_on)
    return rows


def _weight(demand: np.ndarray, capacity: np.ndarray, mode: str) -> float:
    if mode == "count":
        return 1.0
    used = capacity > 0
    return float((demand[used] / capacity[used]).sum()) or 1.0


def schedule_from_values(prep: Prep, y: dict, z: dict, lam_w: dict | None = None,
                         lam_z: dict | None = None, algorithm: str = "optimal") -> Schedule:
    """The schedule of solved values ``y[i, g, t]``, ``z[i, g, t]`` (and pattern counts
    ``λ[g, t, p]`` in pattern mode, which place each unit's total on its servers).

    Counts are rounded; only jobs whose work reaches V_i are kept (the others earn nothing);
    PSs in slots without workers are dropped; every allocation after the first slot at which
    the work reaches V_i is trimmed (``Schedule.from_arrays(..., trim=True)``)."""
    inst = prep.instance
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    yy = _per_server(prep.worker_units, prep.worker_patterns, y, lam_w or {})
    zz = _per_server(prep.ps_units, prep.ps_patterns, z, lam_z or {})
    workers: dict[int, np.ndarray] = {}
    ps: dict[int, np.ndarray] = {}
    for i in prep.active:
        workers[i] = np.zeros((T, H), dtype=np.int64)
        ps[i] = np.zeros((T, K), dtype=np.int64)
    for (i, h, t), v in yy.items():
        workers[i][t, h] += v
    for (i, k, t), v in zz.items():
        ps[i][t, k] += v
    for i in list(workers):
        if workers[i].sum() < inst.workload[i]:  # does not complete: its work earns nothing
            del workers[i], ps[i]
            continue
        ps[i][workers[i].sum(axis=1) == 0] = 0
    return Schedule.from_arrays(inst, algorithm, workers, ps, trim=True)


def _per_server(units: tuple[tuple[int, ...], ...],
                patterns: dict[tuple[int, int], Patterns],
                counts: dict, lam: dict) -> dict[tuple[int, int, int], int]:
    """{(i, server, t): count}: a unit's total spread over its servers, one chosen pattern per
    server (each server takes what its pattern allows a job's demand class, jobs and servers
    in index order)."""
    out: dict[tuple[int, int, int], int] = {}
    left: dict[tuple[int, int], dict[int, int]] = {}
    for (i, g, t), v in counts.items():
        n = round(v or 0.0)
        if n <= 0:
            continue
        if (g, t) not in patterns:  # a single server
            out[i, units[g][0], t] = n
        else:
            left.setdefault((g, t), {})[i] = n
    for (g, t), need in left.items():
        classes, pats = patterns[g, t]
        chosen = [p for p in range(len(pats)) for _ in range(round(lam.get((g, t, p)) or 0.0))]
        for server, p in zip(units[g], chosen, strict=False):
            for j, jobs in enumerate(classes):
                room = pats[p][j]
                for i in jobs:
                    take = min(need.get(i, 0), room)
                    if take > 0:
                        out[i, server, t] = take
                        need[i] -= take
                        room -= take
        if any(v > 0 for v in need.values()):
            raise ValueError(f"pattern counts of unit {g} in slot {t} do not hold its workers")
    return out
