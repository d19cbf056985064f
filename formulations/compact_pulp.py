"""The compact time-indexed MILP of SPEC §2 in PuLP (the cross-check of ``compact_pyomo.py``).

The same functions, in the same order, add the same rows as the Pyomo file; index sets, bounds
and windows come from ``common.prepare``.

Variables: ``y_iht ∈ {0 … ub_y[i,h]}`` workers, ``z_ikt ∈ {0 … ub_z[i,k]}`` PSs, ``c_it ∈ {0,1}``
job i completes in slot t, ``s_it ∈ [0,1]`` still running in slot t (``s_it = Σ_{t'≥t} c_it'``),
``x_i = s_{i,e_i}``. Objective ``max Σ_i Σ_t f_i(t − a_i + 1)·c_it``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulp

from oasis_opt.model import Instance

from .common import Options, Prep, prepare

Key3 = tuple[int, int, int]
Key2 = tuple[int, int]


@dataclass(eq=False)
class PulpModel:
    """The problem and its variables by index (PuLP keeps no indexed components)."""

    problem: pulp.LpProblem
    prep: Prep
    y: dict[Key3, pulp.LpVariable] = field(default_factory=dict)
    z: dict[Key3, pulp.LpVariable] = field(default_factory=dict)
    c: dict[Key2, pulp.LpVariable] = field(default_factory=dict)
    s: dict[Key2, pulp.LpVariable] = field(default_factory=dict)
    lw: dict[Key3, pulp.LpVariable] = field(default_factory=dict)
    lz: dict[Key3, pulp.LpVariable] = field(default_factory=dict)
    p: dict[Key2, pulp.LpVariable] = field(default_factory=dict)
    u: dict[Key2, pulp.LpVariable] = field(default_factory=dict)


def _lin(coefs: list[float], variables: list[pulp.LpVariable]) -> pulp.LpAffineExpression:
    return pulp.LpAffineExpression(list(zip(variables, coefs, strict=True)))


def _add(m: PulpModel, family: str, key: tuple[int, ...] | int,
         row: pulp.LpConstraint) -> None:
    """Add ``row`` named ``family__key`` (the family as the Pyomo component's name; see
    ``row_counts``)."""
    tail = "_".join(map(str, key)) if isinstance(key, tuple) else str(key)
    m.problem.addConstraint(row, f"{family}__{tail}")


def row_names(problem: Any) -> list[str]:
    """The names of a PuLP problem's rows."""
    rows = problem.constraints  # PuLP ≥ 3.3: call it for the list (the mapping is deprecated)
    return [c.name for c in rows()] if callable(rows) else list(rows)


def row_counts(m: PulpModel) -> dict[str, int]:
    """Rows per family (``Prep.row_counts`` predicts them)."""
    out: dict[str, int] = {}
    for name in row_names(m.problem):
        family = name.split("__")[0]
        out[family] = out.get(family, 0) + 1
    return out


def add_allocation_variables(m: PulpModel, prep: Prep) -> None:
    """``y_iht``, ``z_ikt`` (integer unless ``Prep.flow_workers``) with per-server upper
    bounds; ``c_it`` and ``s_it`` on the completion window ``e_i ≤ t ≤ l_i``. One of
    c, s is binary (``Options.binary_running``); the other is then integral through
    ``s_it = c_it + s_{i,t+1}``. With ``chained`` the work done ``P_it ≥ 0`` and the windows
    ``U_it ∈ [0, V_i]``."""
    new = m.problem.add_variable
    kind = pulp.LpContinuous if prep.flow_workers else pulp.LpInteger
    m.y = {(i, h, t): new(f"y_{i}_{h}_{t}", 0, int(prep.ub_y[i, h]), kind)
           for i, h, t in prep.y_index}
    m.z = {(i, k, t): new(f"z_{i}_{k}_{t}", 0, int(prep.ub_z[i, k]), kind)
           for i, k, t in prep.z_index}
    binary_s = prep.options.binary_running
    m.c = {(i, t): m.problem.add_variable(f"c_{i}_{t}", 0, 1,
                                   pulp.LpContinuous if binary_s else pulp.LpInteger)
           for i, t in prep.c_index}
    m.s = {(i, t): m.problem.add_variable(f"s_{i}_{t}", 0, 1,
                                   pulp.LpInteger if binary_s else pulp.LpContinuous)
           for i, t in prep.c_index}
    m.lw = {(g, t, q): m.problem.add_variable(f"lw_{g}_{t}_{q}", 0, len(prep.worker_units[g]),
                                       pulp.LpInteger)
            for g, t, q in prep.worker_pattern_index}
    m.lz = {(g, t, q): m.problem.add_variable(f"lz_{g}_{t}_{q}", 0, len(prep.ps_units[g]),
                                       pulp.LpInteger)
            for g, t, q in prep.ps_pattern_index}
    m.p = {(i, t): new(f"p_{i}_{t}", 0, None, pulp.LpContinuous) for i, t in prep.chain_index}
    m.u = {(i, t): new(f"u_{i}_{t}", 0, float(prep.instance.workload[i]), pulp.LpContinuous)
           for i, t in prep.window_index}


def _work(m: PulpModel, prep: Prep, i: int, slots: range) -> tuple[list, list]:
    """Terms of ``Σ_{t ∈ slots} W_it = Σ_t Σ_h y_iht`` as (coefficients, variables)."""
    vs = [m.y[i, h, t] for t in slots for h in prep.worker_servers(i)]
    return [1.0] * len(vs), vs


def add_completion_linking(m: PulpModel, prep: Prep) -> None:
    """``s_it = c_it + s_{i,t+1}`` (running until the last slot); no work after it:
    ``W_it ≤ w_max_i · s_{i,max(t,e_i)}`` and, with ``server_linking``,
    ``y_iht ≤ ub_y[i,h] · s_{i,max(t,e_i)}``; with ``ps_linking`` ``z_ikt ≤ ub_z[i,k]·s``."""
    for i, t in prep.c_index:
        if t == prep.latest[i]:
            _add(m, "running", (i, t), _lin([1.0, -1.0], [m.s[i, t], m.c[i, t]]) == 0)
        else:
            _add(m, "running", (i, t), _lin([1.0, -1.0, -1.0],
                                            [m.s[i, t], m.c[i, t], m.s[i, t + 1]]) == 0)
    for i, t in prep.work_index:
        hs = prep.worker_servers(i)
        _add(m, "work_link", (i, t), _lin(
            [1.0] * len(hs) + [-float(prep.w_max[i])],
            [m.y[i, h, t] for h in hs] + [m.s[i, prep.running_slot(i, t)]]) <= 0)
    if prep.options.server_linking:
        for i, h, t in prep.y_index:
            _add(m, "server_link", (i, h, t), _lin(
                [1.0, -float(prep.ub_y[i, h])],
                [m.y[i, h, t], m.s[i, prep.running_slot(i, t)]]) <= 0)
    if prep.options.ps_linking:
        for i, k, t in prep.z_index:
            _add(m, "ps_link", (i, k, t), _lin(
                [1.0, -float(prep.ub_z[i, k])],
                [m.z[i, k, t], m.s[i, prep.running_slot(i, t)]]) <= 0)


def _done(m: PulpModel, prep: Prep, i: int, t: int) -> tuple[list, list]:
    """Terms of the work done by slot t, ``Σ_{t' ≤ t} W_it'``: ``P_it`` when ``chained``."""
    if (i, t) in m.p:
        return [1.0], [m.p[i, t]]
    return _work(m, prep, i, range(int(prep.instance.arrival[i]), t + 1))


def add_workload_constraints(m: PulpModel, prep: Prep) -> None:
    """``Σ_t W_it ≥ V_i · x_i`` (``=`` with ``exact_work``); with ``chained`` the work done
    ``P_it = P_{i,t−1} + W_it``; with ``cumulative`` the work done by slot t reaches V_i if
    the job completes by t: ``Σ_{t' ≤ t} W_it' ≥ V_i · (x_i − s_{i,t+1})`` for
    ``e_i ≤ t < l_i``."""
    V = prep.instance.workload
    for i in prep.active:
        coefs, vs = _work(m, prep, i, prep.work_slots(i))
        e = _lin(coefs + [-float(V[i])], vs + [m.s[i, int(prep.earliest[i])]])
        _add(m, "workload", i, (e == 0) if prep.options.exact_work else (e >= 0))
    for i, t in prep.chain_index:
        coefs, vs = _work(m, prep, i, range(t, t + 1))
        before = [m.p[i, t - 1]] if (i, t - 1) in m.p else []
        _add(m, "chain", (i, t), _lin([1.0] + [-1.0] * len(before) + [-c for c in coefs],
                                      [m.p[i, t]] + before + vs) == 0)
    if prep.options.cumulative:
        for i, t in prep.cumulative_index:
            coefs, vs = _done(m, prep, i, t)
            v = float(V[i])
            _add(m, "cumulative", (i, t), _lin(
                coefs + [-v, v], vs + [m.s[i, int(prep.earliest[i])], m.s[i, t + 1]]) >= 0)


def add_completion_cuts(m: PulpModel, prep: Prep) -> None:
    """With ``completion_cuts``: ``Σ_{t' ≤ t} W_it' ≥ Σ_τ R_iτt · c_iτ`` (``chained``:
    ``U_it = U_{i,t+1} + Σ_u coef·s_iu`` and ``P_it + U_it ≥ V_i · x_i``); with ``ps_cuts``:
    ``Σ_{t' ≤ t} Σ_k z_ikt' ≥ Σ_τ ⌈R_iτt/γ_i⌉ · c_iτ`` and ``Σ_t Σ_k z_ikt ≥ ⌈V_i/γ_i⌉ · x_i``
    (``common.Options``; ``R_iτt`` from ``Prep.remaining_work``)."""
    def by_slot(family: str, var, servers, need) -> None:
        for i, t in prep.cut_index:
            vs = [var[i, h, u] for u in range(int(prep.instance.arrival[i]), t + 1)
                  for h in servers(i)]
            cs = [(tau, need(i, r)) for tau, r in prep.remaining_work(i, t)]
            cs = [(tau, c) for tau, c in cs if c > 0]
            if cs:
                _add(m, family, (i, t), _lin([1.0] * len(vs) + [-float(c) for _, c in cs],
                                             vs + [m.c[i, tau] for tau, _ in cs]) >= 0)
    if prep.options.completion_cuts and prep.window_index:  # chained
        for i, t in prep.window_index:
            later = [m.u[i, t + 1]] if (i, t + 1) in m.u else []
            step = prep.window_step(i, t)
            _add(m, "window", (i, t), _lin(
                [1.0] + [-1.0] * len(later) + [-c for _, c in step],
                [m.u[i, t]] + later + [m.s[i, u] for u, _ in step]) == 0)
        for i, t in prep.window_index:
            _add(m, "completion_cuts", (i, t), _lin(
                [1.0, 1.0, -float(prep.instance.workload[i])],
                [m.p[i, t], m.u[i, t], m.s[i, int(prep.earliest[i])]]) >= 0)
    elif prep.options.completion_cuts:
        by_slot("completion_cuts", m.y, prep.worker_servers, lambda i, r: r)
    if prep.options.ps_cuts:
        by_slot("ps_cuts", m.z, prep.ps_servers, prep.ps_needed)
        for i in prep.active:
            vs = [m.z[i, k, u] for u in prep.work_slots(i) for k in prep.ps_servers(i)]
            need = prep.ps_needed(i, float(prep.instance.workload[i]))
            _add(m, "ps_total", i, _lin([1.0] * len(vs) + [-float(need)],
                                        vs + [m.s[i, int(prep.earliest[i])]]) >= 0)


def _ps_surplus(m: PulpModel, prep: Prep, i: int, t: int, g: float) -> pulp.LpAffineExpression:
    """``W_it − g · Σ_k z_ikt``."""
    hs, ks = prep.worker_servers(i), prep.ps_servers(i)
    return _lin([1.0] * len(hs) + [-g] * len(ks),
                [m.y[i, h, t] for h in hs] + [m.z[i, k, t] for k in ks])


def add_ps_ratio_constraints(m: PulpModel, prep: Prep) -> None:
    """One PS serves at most ρ_i workers: ``W_it ≤ ρ_i · Σ_k z_ikt`` (``ρ_i = Prep.ps_rate``:
    γ_i, or w_max_i where less); with ``ps_dominance``
    no idle PS: ``W_it − γ_i · Σ_k z_ikt ≥ δ_i − γ_i`` (``common.Options``)."""
    for i, t in prep.work_index:
        _add(m, "ps_ratio", (i, t), _ps_surplus(m, prep, i, t, prep.ps_rate(i)) <= 0)
    if prep.options.ps_dominance:
        for i, t in prep.work_index:
            g = float(prep.instance.ps_ratio[i])
            _add(m, "ps_dominance", (i, t), _ps_surplus(m, prep, i, t, g)
                 >= prep.ps_slack[i] - g)


def add_capacity_constraints(m: PulpModel, prep: Prep) -> None:
    """Server mode: ``Σ_i α_ir · y_iht ≤ C_hr`` per (h, r, t) and ``Σ_i β_ir · z_ikt ≤ C_kr``
    per (k, r, t), only rows that can bind (``common.Prep.worker_capacity_rows``).
    Pattern mode: per unit g and slot t, ``Σ_p λ_gpt ≤ |g|`` and, per demand class c,
    ``Σ_{i∈c} y_igt ≤ Σ_p n_cp · λ_gpt``."""
    inst = prep.instance
    for tag, var, lam, patterns, units in (
            ("worker", m.y, m.lw, prep.worker_patterns, prep.worker_units),
            ("ps", m.z, m.lz, prep.ps_patterns, prep.ps_units)):
        for (g, t), (_, pats) in patterns.items():
            _add(m, f"{tag}_pattern_count", (g, t), _lin(
                [1.0] * len(pats), [lam[g, t, q] for q in range(len(pats))]) <= len(units[g]))
        for (g, t), (classes, pats) in patterns.items():
            for j, jobs in enumerate(classes):
                qs = [q for q in range(len(pats)) if pats[q][j]]
                _add(m, f"{tag}_pattern_hold", (g, t, j), _lin(
                    [1.0] * len(jobs) + [-float(pats[q][j]) for q in qs],
                    [var[i, g, t] for i in jobs] + [lam[g, t, q] for q in qs]) <= 0)
    for h, r, t in prep.worker_capacity_rows:
        jobs = [i for i in prep.jobs_on_worker[h, t] if inst.worker_demand[i, r] > 0]
        _add(m, "worker_capacity", (h, r, t), _lin(
            [float(inst.worker_demand[i, r]) for i in jobs],
            [m.y[i, h, t] for i in jobs]) <= float(prep.worker_rhs[h, r]))
    for k, r, t in prep.ps_capacity_rows:
        jobs = [i for i in prep.jobs_on_ps[k, t] if inst.ps_demand[i, r] > 0]
        _add(m, "ps_capacity", (k, r, t), _lin(
            [float(inst.ps_demand[i, r]) for i in jobs],
            [m.z[i, k, t] for i in jobs]) <= float(prep.ps_rhs[k, r]))


def add_class_rows(m: PulpModel, prep: Prep) -> None:
    """With ``class_rows``: ``Σ_{i∈c} y_iht ≤ ⌊min_r C_hr/α_cr⌋`` per server, slot and demand
    class (PS servers alike); with ``energy_rows``: ``Σ_i d_ir·R_iAB·Σ_{A≤τ≤B} c_iτ ≤
    Σ_{t=A}^{B} Σ_h u_hr`` per pool, resource and window (``common.Options``)."""
    for family, var, rows in (("worker_class", m.y, prep.worker_class_rows),
                              ("ps_class", m.z, prep.ps_class_rows)):
        for h, t, jobs, bound in rows:
            _add(m, family, (h, t, jobs[0]),  # a class is named by its first job
                 _lin([1.0] * len(jobs), [var[i, h, t] for i in jobs]) <= bound)
    for p, r, a, b, terms, rhs in prep.energy_rows:
        pairs = [(coef, m.c[i, tau]) for i, coef in terms
                 for tau in range(max(int(prep.earliest[i]), a),
                                  min(b, int(prep.latest[i])) + 1)]
        _add(m, "energy", (p, r, a, b),
             _lin([c for c, _ in pairs], [v for _, v in pairs]) <= rhs)


def add_symmetry_constraints(m: PulpModel, prep: Prep) -> None:
    """Identical servers h < h' (consecutive in a group) are interchangeable in each slot on
    its own, so order them by load: ``Σ_i ω_i·y_iht ≥ Σ_i ω_i·y_ih't`` (PS servers alike)."""
    for family, var, rows, jobs_on, weight in (
            ("worker_symmetry", m.y, prep.worker_symmetry_rows, prep.jobs_on_worker,
             prep.worker_weight),
            ("ps_symmetry", m.z, prep.ps_symmetry_rows, prep.jobs_on_ps, prep.ps_weight)):
        for a, b, t in rows:
            ja, jb = jobs_on[a, t], jobs_on[b, t]
            _add(m, family, (a, b, t), _lin(
                [weight(i, a) for i in ja] + [-weight(i, b) for i in jb],
                [var[i, a, t] for i in ja] + [var[i, b, t] for i in jb]) >= 0)


def add_exact_completion(m: PulpModel, prep: Prep) -> None:
    """With ``exact_completion``: a job still running in slot t has done at most V_i − 1
    before it, ``Σ_{t' < t} W_it' + M_it · s_it ≤ w_max_i · (t − a_i)`` with ``M_it =
    w_max_i·(t − a_i) − V_i + 1``, for ``e_i < t ≤ l_i`` (``common.Options``)."""
    if not prep.options.exact_completion:
        return
    for i, t in prep.c_index:
        if t > prep.earliest[i]:
            coefs, vs = _done(m, prep, i, t - 1)
            most = float(prep.w_max[i] * (t - int(prep.instance.arrival[i])))
            big = most - float(prep.instance.workload[i]) + 1.0
            # named as the Pyomo component, ``family__index`` (the engine branch's rule)
            m.problem.addConstraint(_lin(coefs + [big], vs + [m.s[i, t]]) <= most,
                                    f"exact_completion__{i}_{t}")


def add_job_components(m: PulpModel, prep: Prep) -> None:
    """The components for users' own rows (docs/offline.md, "Your own constraints"), as
    attributes of ``m.problem``, by job id and slot whatever the packing: ``jobs`` (ids),
    ``slots`` (``range(T)``); dicts of ``LpAffineExpression`` ``workers[j, t] = Σ_g y_jgt``,
    ``ps[j, t] = Σ_k z_jkt``, ``done[j] = x_j``, ``finish[j, t] = c_jt`` (empty where the
    model has no variable). With ``packing = server`` also ``worker_servers``,
    ``ps_servers`` (names), ``server_workers[j, h, t] = y_jht``, ``server_ps[j, k, t] =
    z_jkt``."""
    inst, p = prep.instance, m.problem
    ids = [jb.id for jb in inst.jobs]
    p.jobs, p.slots = ids, range(inst.horizon)

    def expr(vs: list) -> pulp.LpAffineExpression:
        return _lin([1.0] * len(vs), vs)
    p.workers = {(j, t): expr([m.y[k] for k in ((i, g, t) for g in prep.worker_servers(i))
                               if k in m.y]) for i, j in enumerate(ids) for t in p.slots}
    p.ps = {(j, t): expr([m.z[k] for k in ((i, g, t) for g in prep.ps_servers(i)) if k in m.z])
            for i, j in enumerate(ids) for t in p.slots}
    p.done = {j: expr([m.s[i, int(prep.earliest[i])]] if (i, int(prep.earliest[i])) in m.s
                      else []) for i, j in enumerate(ids)}
    p.finish = {(j, t): expr([m.c[i, t]] if (i, t) in m.c else [])
                for i, j in enumerate(ids) for t in p.slots}
    if prep.packing != "server":
        return
    p.worker_servers, p.ps_servers = list(inst.worker_names), list(inst.ps_names)
    p.server_workers = {(j, h, t): expr([m.y[i, g, t]] if (i, g, t) in m.y else [])
                        for i, j in enumerate(ids) for g, h in enumerate(p.worker_servers)
                        for t in p.slots}
    p.server_ps = {(j, k, t): expr([m.z[i, g, t]] if (i, g, t) in m.z else [])
                   for i, j in enumerate(ids) for g, k in enumerate(p.ps_servers)
                   for t in p.slots}


def satisfies(m: PulpModel, point: dict[str, dict], tol: float = 1e-6) -> bool:
    """Whether the variable values ``point`` ({variable name: {index: value}}, every other
    variable of the problem 0, ``custom.point``) keep every bound, integrality and row of the
    problem, the user's included (within ``tol``). Leaves those values set."""
    ours = {"y": m.y, "z": m.z, "c": m.c, "s": m.s, "lw": m.lw, "lz": m.lz, "p": m.p, "u": m.u}
    if any(k not in ours.get(name, {}) for name, given in point.items() for k in given):
        return False  # the model has no variable for part of the point
    for v in m.problem.variables():
        v.varValue = 0.0
    for name, given in point.items():
        for k, value in given.items():
            ours[name][k].varValue = float(value)
    rows = m.problem.constraints  # PuLP ≥ 3.3: call it for the list (the mapping is deprecated)
    return all(v.valid(tol) for v in m.problem.variables()) and all(
        c.valid(tol) for c in (rows() if callable(rows) else rows.values()))


def add_objective(m: PulpModel, prep: Prep) -> None:
    """``max Σ_i Σ_t f_i(t − a_i + 1) · c_it``."""
    idx = [(i, t) for i, t in prep.c_index if prep.gain[i, t] != 0]
    m.problem.setObjective(_lin([float(prep.gain[i, t]) for i, t in idx],
                                [m.c[i, t] for i, t in idx]))


def build(instance: Instance, options: Options | None = None,
          prep: Prep | None = None) -> PulpModel:
    """The compact MILP of ``instance`` as a PuLP problem with its variables by index."""
    prep = prep or prepare(instance, options)
    m = PulpModel(pulp.LpProblem(_safe(instance.name), pulp.LpMaximize), prep)
    add_allocation_variables(m, prep)
    add_completion_linking(m, prep)
    add_workload_constraints(m, prep)
    add_completion_cuts(m, prep)
    add_ps_ratio_constraints(m, prep)
    add_capacity_constraints(m, prep)
    add_class_rows(m, prep)
    add_symmetry_constraints(m, prep)
    add_exact_completion(m, prep)
    add_job_components(m, prep)
    add_objective(m, prep)
    return m


def values(m: PulpModel) -> tuple[dict, dict, dict, dict]:
    """Solved y, z, λ_w, λ_z as {index: value} dicts."""
    return tuple({k: v.varValue for k, v in d.items()}  # type: ignore[return-value]
                 for d in (m.y, m.z, m.lw, m.lz))


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name) or "oasis"
