"""The compact time-indexed MILP of SPEC §2 built directly as arrays for highspy.

The same rows as ``compact_pyomo.py`` (the expression of the model) and ``compact_pulp.py``
(its cross-check), by the same functions in the same order; only the medium differs: columns
and rows go into flat lists and reach HiGHS in one ``passModel`` call. Modelling then costs
about a microsecond per nonzero instead of Pyomo's tens (SOLVERS.md), which matters where the
model is large next to the time limit, and the ``Highs`` object stays in our hands for
callbacks (progress, the wall-clock deadline) and a MIP start. Tests check that its optimum
equals both modellers' and the brute force's.

Symbols as in ``compact_pyomo.py``: ``y_iht``, ``z_ikt`` (on units), ``c_it``, ``s_it``,
``λ_gpt``, ``W_it = Σ_h y_iht``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import highspy
import numpy as np

from oasis_opt.model import Instance, Schedule

from .common import Options, Prep, prepare

_INF = math.inf


@dataclass(eq=False)
class Model:
    """Columns (bounds, cost, integrality) and rows (bounds, row-wise CSR) of the MILP, with the
    column index of every variable by its SPEC index."""

    prep: Prep
    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    row_lower: list[float] = field(default_factory=list)
    row_upper: list[float] = field(default_factory=list)
    #: the family of every row, named as the Pyomo components (``compact_pyomo.py``)
    family: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=lambda: [0])
    index: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    y: dict[tuple[int, int, int], int] = field(default_factory=dict)
    z: dict[tuple[int, int, int], int] = field(default_factory=dict)
    c: dict[tuple[int, int], int] = field(default_factory=dict)
    s: dict[tuple[int, int], int] = field(default_factory=dict)
    lw: dict[tuple[int, int, int], int] = field(default_factory=dict)
    lz: dict[tuple[int, int, int], int] = field(default_factory=dict)
    p: dict[tuple[int, int], int] = field(default_factory=dict)
    u: dict[tuple[int, int], int] = field(default_factory=dict)

    def var(self, lo: float, hi: float, integer: bool) -> int:
        self.lower.append(float(lo))
        self.upper.append(float(hi))
        self.cost.append(0.0)
        self.integer.append(integer)
        return len(self.lower) - 1

    def row(self, family: str, cols: list[int], coefs: list[float], lo: float,
            hi: float) -> None:
        """``lo ≤ Σ coefs·cols ≤ hi``, a row of ``family``."""
        self.family.append(family)
        self.index.extend(cols)
        self.value.extend(coefs)
        self.starts.append(len(self.index))
        self.row_lower.append(float(lo))
        self.row_upper.append(float(hi))

    @property
    def num_col(self) -> int:
        return len(self.lower)

    @property
    def num_row(self) -> int:
        return len(self.row_lower)

    def row_counts(self) -> dict[str, int]:
        """Rows per family (``Prep.row_counts`` predicts them)."""
        out: dict[str, int] = {}
        for f in self.family:
            out[f] = out.get(f, 0) + 1
        return out

    def lp(self) -> highspy.HighsLp:
        """The model as a ``HighsLp`` (maximisation)."""
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = self.num_col, self.num_row
        lp.col_cost_ = np.asarray(self.cost, dtype=float)
        lp.col_lower_ = np.asarray(self.lower, dtype=float)
        lp.col_upper_ = np.asarray(self.upper, dtype=float)
        lp.row_lower_ = np.asarray(self.row_lower, dtype=float)
        lp.row_upper_ = np.asarray(self.row_upper, dtype=float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.asarray(self.starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.asarray(self.index, dtype=np.int32)
        lp.a_matrix_.value_ = np.asarray(self.value, dtype=float)
        lp.integrality_ = [highspy.HighsVarType.kInteger if k
                           else highspy.HighsVarType.kContinuous for k in self.integer]
        lp.sense_ = highspy.ObjSense.kMaximize
        return lp


def add_allocation_variables(m: Model, prep: Prep) -> None:
    """``y_iht``, ``z_ikt`` (integer unless ``Prep.flow_workers``) with per-unit upper
    bounds; ``c_it`` and ``s_it`` on the completion window ``e_i ≤ t ≤ l_i`` (one of them
    binary, ``Options.binary_running``); pattern counts ``λ_gpt ∈ {0 … |g|}``; with
    ``chained`` the work done ``P_it ≥ 0`` and the windows ``U_it ∈ [0, V_i]``."""
    whole = not prep.flow_workers  # continuous where the allocation is a flow
    for i, h, t in prep.y_index:
        m.y[i, h, t] = m.var(0, int(prep.ub_y[i, h]), whole)
    whole_ps = whole and not prep.options.ps_relaxed  # a relaxation (formulations/ps_relax)
    for i, k, t in prep.z_index:
        m.z[i, k, t] = m.var(0, int(prep.ub_z[i, k]), whole_ps)
    binary_s = prep.options.binary_running
    for key in prep.c_index:
        m.c[key] = m.var(0, 1, not binary_s)
    for key in prep.c_index:
        m.s[key] = m.var(0, 1, binary_s)
    for g, t, q in prep.worker_pattern_index:
        m.lw[g, t, q] = m.var(0, len(prep.worker_units[g]), True)
    for g, t, q in prep.ps_pattern_index:
        m.lz[g, t, q] = m.var(0, len(prep.ps_units[g]), True)
    for key in prep.chain_index:
        m.p[key] = m.var(0, _INF, False)
    for i, t in prep.window_index:
        m.u[i, t] = m.var(0, float(prep.instance.workload[i]), False)


def _work(m: Model, prep: Prep, i: int, slots: range) -> list[int]:
    """Columns of ``Σ_{t ∈ slots} W_it``."""
    return [m.y[i, h, t] for t in slots for h in prep.worker_servers(i)]


def add_completion_linking(m: Model, prep: Prep) -> None:
    """``s_it = c_it + s_{i,t+1}``; ``W_it ≤ w_max_i · s_{i,max(t,e_i)}``; with
    ``server_linking`` ``y_iht ≤ ub_y[i,h] · s``; with ``ps_linking`` ``z_ikt ≤ ub_z[i,k] · s``."""
    for i, t in prep.c_index:
        if t == prep.latest[i]:
            m.row("running", [m.s[i, t], m.c[i, t]], [1.0, -1.0], 0.0, 0.0)
        else:
            m.row("running", [m.s[i, t], m.c[i, t], m.s[i, t + 1]], [1.0, -1.0, -1.0],
                  0.0, 0.0)
    for i, t in prep.work_index:
        hs = prep.worker_servers(i)
        m.row("work_link", [m.y[i, h, t] for h in hs] + [m.s[i, prep.running_slot(i, t)]],
              [1.0] * len(hs) + [-float(prep.w_max[i])], -_INF, 0.0)
    if prep.options.server_linking:
        for i, h, t in prep.y_index:
            m.row("server_link", [m.y[i, h, t], m.s[i, prep.running_slot(i, t)]],
                  [1.0, -float(prep.ub_y[i, h])], -_INF, 0.0)
    if prep.options.ps_linking:
        for i, k, t in prep.z_index:
            m.row("ps_link", [m.z[i, k, t], m.s[i, prep.running_slot(i, t)]],
                  [1.0, -float(prep.ub_z[i, k])], -_INF, 0.0)


def _done(m: Model, prep: Prep, i: int, t: int) -> tuple[list[int], list[float]]:
    """Terms of the work done by slot t, ``Σ_{t' ≤ t} W_it'``: ``P_it`` when ``chained``."""
    if (i, t) in m.p:
        return [m.p[i, t]], [1.0]
    vs = _work(m, prep, i, range(int(prep.instance.arrival[i]), t + 1))
    return vs, [1.0] * len(vs)


def add_workload_constraints(m: Model, prep: Prep) -> None:
    """``Σ_t W_it ≥ V_i · x_i`` (``=`` with ``exact_work``); with ``chained``
    ``P_it = P_{i,t−1} + W_it``; with ``cumulative``
    ``Σ_{t' ≤ t} W_it' ≥ V_i · (x_i − s_{i,t+1})`` for ``e_i ≤ t < l_i``."""
    V = prep.instance.workload
    for i in prep.active:
        vs = _work(m, prep, i, prep.work_slots(i))
        hi = 0.0 if prep.options.exact_work else _INF
        m.row("workload", vs + [m.s[i, int(prep.earliest[i])]],
              [1.0] * len(vs) + [-float(V[i])], 0.0, hi)
    for i, t in prep.chain_index:
        vs = _work(m, prep, i, range(t, t + 1))
        before = [m.p[i, t - 1]] if (i, t - 1) in m.p else []
        m.row("chain", [m.p[i, t]] + before + vs, [1.0] + [-1.0] * (len(before) + len(vs)),
              0.0, 0.0)
    if prep.options.cumulative:
        for i, t in prep.cumulative_index:
            vs, coefs = _done(m, prep, i, t)
            v = float(V[i])
            m.row("cumulative", vs + [m.s[i, int(prep.earliest[i])], m.s[i, t + 1]],
                  coefs + [-v, v],
                  0.0, _INF)


def add_completion_cuts(m: Model, prep: Prep) -> None:
    """With ``completion_cuts``: ``Σ_{t' ≤ t} W_it' ≥ Σ_τ R_iτt · c_iτ`` (``chained``:
    ``U_it = U_{i,t+1} + Σ_u coef·s_iu`` and ``P_it + U_it ≥ V_i · x_i``); with ``ps_cuts``:
    ``Σ_{t' ≤ t} Σ_k z_ikt' ≥ Σ_τ ⌈R_iτt/γ_i⌉ · c_iτ`` and ``Σ_t Σ_k z_ikt ≥ ⌈V_i/γ_i⌉ · x_i``."""
    def by_slot(family: str, var: dict, servers, need) -> None:
        for i, t in prep.cut_index:
            cs = [(tau, need(i, r)) for tau, r in prep.remaining_work(i, t)]
            cs = [(tau, c) for tau, c in cs if c > 0]
            if not cs:
                continue
            vs = [var[i, h, u] for u in range(int(prep.instance.arrival[i]), t + 1)
                  for h in servers(i)]
            m.row(family, vs + [m.c[i, tau] for tau, _ in cs],
                  [1.0] * len(vs) + [-float(c) for _, c in cs], 0.0, _INF)
    if prep.options.completion_cuts and prep.window_index:  # chained
        for i, t in prep.window_index:
            later = [m.u[i, t + 1]] if (i, t + 1) in m.u else []
            step = prep.window_step(i, t)
            m.row("window", [m.u[i, t]] + later + [m.s[i, u] for u, _ in step],
                  [1.0] + [-1.0] * len(later) + [-c for _, c in step], 0.0, 0.0)
        for i, t in prep.window_index:
            m.row("completion_cuts", [m.p[i, t], m.u[i, t], m.s[i, int(prep.earliest[i])]],
                  [1.0, 1.0, -float(prep.instance.workload[i])], 0.0, _INF)
    elif prep.options.completion_cuts:
        by_slot("completion_cuts", m.y, prep.worker_servers, lambda i, r: r)
    if prep.options.ps_cuts:
        by_slot("ps_cuts", m.z, prep.ps_servers, prep.ps_needed)
        for i in prep.active:
            vs = [m.z[i, k, u] for u in prep.work_slots(i) for k in prep.ps_servers(i)]
            need = prep.ps_needed(i, float(prep.instance.workload[i]))
            m.row("ps_total", vs + [m.s[i, int(prep.earliest[i])]],
                  [1.0] * len(vs) + [-float(need)], 0.0, _INF)


def add_ps_ratio_constraints(m: Model, prep: Prep) -> None:
    """``W_it ≤ ρ_i · Σ_k z_ikt`` (``ρ_i = Prep.ps_rate``: γ_i, or w_max_i where less); with
    ``ps_dominance`` ``W_it − γ_i Σ_k z_ikt ≥ δ_i − γ_i``."""
    def surplus(i: int, t: int, g: float) -> tuple[list[int], list[float]]:
        hs, ks = prep.worker_servers(i), prep.ps_servers(i)
        return ([m.y[i, h, t] for h in hs] + [m.z[i, k, t] for k in ks],
                [1.0] * len(hs) + [-g] * len(ks))
    for i, t in prep.work_index:
        m.row("ps_ratio", *surplus(i, t, prep.ps_rate(i)), -_INF, 0.0)
    if prep.options.ps_dominance:  # separate rows, as the modellers write them
        for i, t in prep.work_index:
            g = float(prep.instance.ps_ratio[i])
            m.row("ps_dominance", *surplus(i, t, g), prep.ps_slack[i] - g, _INF)


def add_capacity_constraints(m: Model, prep: Prep) -> None:
    """Server mode: ``Σ_i α_ir · y_iht ≤ C_hr`` (and PS alike) on the rows that can bind.
    Pattern mode: ``Σ_p λ_gpt ≤ |g|`` and ``Σ_{i∈c} y_igt ≤ Σ_p n_cp · λ_gpt``."""
    inst = prep.instance
    for tag, var, lam, patterns, units in (
            ("worker", m.y, m.lw, prep.worker_patterns, prep.worker_units),
            ("ps", m.z, m.lz, prep.ps_patterns, prep.ps_units)):
        for (g, t), (_, pats) in patterns.items():
            n = len(pats)
            m.row(f"{tag}_pattern_count", [lam[g, t, q] for q in range(n)], [1.0] * n, -_INF,
                  float(len(units[g])))
        for (g, t), (classes, pats) in patterns.items():
            for j in range(len(classes)):
                qs = [q for q in range(len(pats)) if pats[q][j]]
                m.row(f"{tag}_pattern_hold",
                      [var[i, g, t] for i in classes[j]] + [lam[g, t, q] for q in qs],
                      [1.0] * len(classes[j]) + [-float(pats[q][j]) for q in qs], -_INF, 0.0)
    for h, r, t in prep.worker_capacity_rows:
        jobs = [i for i in prep.jobs_on_worker[h, t] if inst.worker_demand[i, r] > 0]
        m.row("worker_capacity", [m.y[i, h, t] for i in jobs],
              [float(inst.worker_demand[i, r]) for i in jobs],
              -_INF, float(prep.worker_rhs[h, r]))
    for k, r, t in prep.ps_capacity_rows:
        jobs = [i for i in prep.jobs_on_ps[k, t] if inst.ps_demand[i, r] > 0]
        m.row("ps_capacity", [m.z[i, k, t] for i in jobs],
              [float(inst.ps_demand[i, r]) for i in jobs],
              -_INF, float(prep.ps_rhs[k, r]))


def add_class_rows(m: Model, prep: Prep) -> None:
    """With ``class_rows``: ``Σ_{i∈c} y_iht ≤ ⌊min_r C_hr/α_cr⌋`` per server, slot and demand
    class (PS servers alike); with ``energy_rows``: ``Σ_i d_ir·R_iAB·Σ_{A≤τ≤B} c_iτ ≤
    Σ_{t=A}^{B} Σ_h u_hr`` per pool, resource and window (``Options``)."""
    for family, var, rows in (("worker_class", m.y, prep.worker_class_rows),
                              ("ps_class", m.z, prep.ps_class_rows)):
        for h, t, jobs, bound in rows:
            m.row(family, [var[i, h, t] for i in jobs], [1.0] * len(jobs), -_INF, float(bound))
    for _pool, _r, a, b, terms, rhs in prep.energy_rows:
        cols, coefs = [], []
        for i, coef in terms:
            for tau in range(max(int(prep.earliest[i]), a), min(b, int(prep.latest[i])) + 1):
                cols.append(m.c[i, tau])
                coefs.append(coef)
        m.row("energy", cols, coefs, -_INF, rhs)


def add_symmetry_constraints(m: Model, prep: Prep) -> None:
    """Identical servers h < h' ordered by load in every slot (``Options.symmetry``)."""
    for family, var, rows, jobs_on, weight in (
            ("worker_symmetry", m.y, prep.worker_symmetry_rows, prep.jobs_on_worker,
             prep.worker_weight),
            ("ps_symmetry", m.z, prep.ps_symmetry_rows, prep.jobs_on_ps, prep.ps_weight)):
        for a, b, t in rows:
            ja, jb = jobs_on[a, t], jobs_on[b, t]
            m.row(family, [var[i, a, t] for i in ja] + [var[i, b, t] for i in jb],
                  [weight(i, a) for i in ja] + [-weight(i, b) for i in jb], 0.0, _INF)


def add_objective(m: Model, prep: Prep) -> None:
    """``max Σ_i Σ_t f_i(t − a_i + 1) · c_it``."""
    for (i, t), col in m.c.items():
        m.cost[col] = float(prep.gain[i, t])


def build(instance: Instance, options: Options | None = None,
          prep: Prep | None = None) -> Model:
    """The compact MILP of ``instance`` as flat arrays (``Model.lp()`` hands it to HiGHS)."""
    prep = prep or prepare(instance, options)
    m = Model(prep)
    add_allocation_variables(m, prep)
    add_completion_linking(m, prep)
    add_workload_constraints(m, prep)
    add_completion_cuts(m, prep)
    add_ps_ratio_constraints(m, prep)
    add_capacity_constraints(m, prep)
    add_class_rows(m, prep)
    add_symmetry_constraints(m, prep)
    add_objective(m, prep)
    return m


def relaxation_bound(prep: Prep) -> float | None:
    """The optimum of the compact MILP's LP relaxation (every integrality dropped, no
    presolve reductions or cuts of HiGHS): ``max Σ f_i·c_it`` over the rows of ``prep``'s
    options with ``c, s, y, z, λ`` continuous, an upper bound on OPT. None where HiGHS
    reports no optimum (it always should: the model is feasible at 0)."""
    from .highs import new_highs

    lp = build(prep.instance, prep=prep).lp()
    lp.integrality_ = []
    h = new_highs(threads=1)
    h.passModel(lp)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return float(h.getInfo().objective_function_value)


def values(m: Model, x: np.ndarray) -> tuple[dict, dict, dict, dict]:
    """Solved y, z, λ_w, λ_z as {index: value} dicts from the column values ``x``."""
    return tuple({k: float(x[j]) for k, j in var.items()}  # type: ignore[return-value]
                 for var in (m.y, m.z, m.lw, m.lz))


def start_vector(m: Model, schedule: Schedule) -> np.ndarray | None:
    """Column values of a feasible schedule (a MIP start), or None when it has no completed
    job the model can hold.

    Each completed job keeps its allocations up to its completion slot τ (``c_iτ = 1``,
    ``s_it = 1`` for ``e_i ≤ t ≤ τ``); workers of the last slot are cut to exactly ``V_i``
    (``exact_work``) and PSs to ``⌈W_it/γ_i⌉`` per slot (``ps_dominance``); both only free
    capacity, so the point stays feasible. In pattern mode every server of a unit takes the
    first maximal pattern that dominates its content by demand class (one exists: a content
    that fits is dominated by a maximal one)."""
    prep, inst = m.prep, m.prep.instance
    x = np.zeros(m.num_col)
    index = {job.id: i for i, job in enumerate(inst.jobs)}
    wpos = {n: h for h, n in enumerate(inst.worker_names)}
    ppos = {n: k for k, n in enumerate(inst.ps_names)}
    wunit = {h: g for g, hs in enumerate(prep.worker_units) for h in hs}
    punit = {k: g for g, ks in enumerate(prep.ps_units) for k in ks}
    # (pool, unit, slot) -> server -> job -> count, for the pattern counts λ
    content: dict[tuple[str, int, int], dict[int, dict[int, int]]] = {}
    placed = 0
    for job in schedule.jobs:
        i = index.get(job.id)
        if i is None or not job.completed or job.completion_slot is None:
            continue
        tau = int(job.completion_slot)
        if (i, tau) not in m.c:
            continue  # outside the model's window: leave the job out
        left = int(inst.workload[i])
        for a in sorted(job.allocations, key=lambda a: a.slot):
            if a.slot > tau:
                continue
            work: list[tuple[int, int]] = []
            for name, n in a.workers.items():
                take = min(int(n), left)
                if take > 0:
                    work.append((wpos[name], take))
                    left -= take
            need = prep.ps_needed(i, sum(n for _, n in work)) if work else 0
            pss: list[tuple[int, int]] = []
            for name, n in a.ps.items():
                take = min(int(n), need)
                if take > 0:
                    pss.append((ppos[name], take))
                    need -= take
            for pool, items, unit, var in (("w", work, wunit, m.y), ("p", pss, punit, m.z)):
                for server, n in items:
                    g = unit[server]
                    if (i, g, a.slot) not in var:
                        return None  # the model cannot hold this schedule: no start
                    x[var[i, g, a.slot]] += n
                    cell = content.setdefault((pool, g, a.slot), {}).setdefault(server, {})
                    cell[i] = cell.get(i, 0) + n
        if left > 0:
            return None
        x[m.c[i, tau]] = 1.0
        for t in range(int(prep.earliest[i]), tau + 1):
            x[m.s[i, t]] = 1.0
        placed += 1
    _chain_values(m, x)
    for (pool, g, t), servers in content.items():
        patterns = (prep.worker_patterns if pool == "w" else prep.ps_patterns).get((g, t))
        if patterns is None:
            continue  # server mode, or a single server: no λ
        classes, pats = patterns
        lam = m.lw if pool == "w" else m.lz
        for held in servers.values():
            counts = [sum(held.get(i, 0) for i in c) for c in classes]
            p = next((q for q, pat in enumerate(pats)
                      if all(n <= pat[j] for j, n in enumerate(counts))), None)
            if p is None:
                return None
            x[lam[g, t, p]] += 1.0
    return x if placed else None


def _chain_values(m: Model, x: np.ndarray) -> None:
    """Fill ``P_it`` and ``U_it`` (``chained``) from the y and s values in ``x``."""
    prep = m.prep
    for i, t in prep.chain_index:  # in slot order per job
        before = x[m.p[i, t - 1]] if (i, t - 1) in m.p else 0.0
        x[m.p[i, t]] = before + sum(x[m.y[i, h, t]] for h in prep.worker_servers(i))
    for i, t in reversed(prep.window_index):
        later = x[m.u[i, t + 1]] if (i, t + 1) in m.u else 0.0
        x[m.u[i, t]] = later + sum(c * x[m.s[i, u]] for u, c in prep.window_step(i, t))
