"""The compact time-indexed MILP of SPEC §2 in Pyomo (the primary modeller).

Read side by side with ``compact_pulp.py``: the same functions, in the same order, add the same
rows. Index sets, bounds and the windows of useful slots come from ``common.prepare``.

Variables (only where they may be nonzero, ``common``):
``y_iht ∈ {0 … ub_y[i,h]}`` workers, ``z_ikt ∈ {0 … ub_z[i,k]}`` PSs, ``c_it ∈ {0,1}`` job i
completes in slot t, ``s_it ∈ [0,1]`` job i is still running in slot t (``s_it = Σ_{t'≥t} c_it'``),
``x_i = s_{i,e_i} = Σ_t c_it``. Objective ``max Σ_i Σ_t f_i(t − a_i + 1)·c_it``.
"""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo
from pyomo.core.expr import LinearExpression

from oasis_opt.model import Instance

from .common import Options, Prep, prepare


def _lin(coefs: list[float], variables: list[Any], constant: float = 0.0) -> LinearExpression:
    """``constant + Σ coefs·variables`` built in one step (no operator overloading)."""
    return LinearExpression(constant=constant, linear_coefs=coefs, linear_vars=variables)


def add_allocation_variables(m: pyo.ConcreteModel, prep: Prep) -> None:
    """``y_iht``, ``z_ikt`` (integer unless ``Prep.flow_workers``) with per-server upper
    bounds; ``c_it`` and ``s_it`` on the completion window ``e_i ≤ t ≤ l_i``. One of
    c, s is binary (``Options.binary_running``); the other is then integral through
    ``s_it = c_it + s_{i,t+1}``. With ``chained`` the work done ``P_it ≥ 0`` and the windows
    ``U_it ∈ [0, V_i]``."""
    ub_y, ub_z = prep.ub_y, prep.ub_z
    m.y = pyo.Var(prep.y_index, dense=False,
                  domain=pyo.NonNegativeReals if prep.flow_workers else pyo.NonNegativeIntegers,
                  bounds=lambda _m, i, h, t: (0, int(ub_y[i, h])))
    m.z = pyo.Var(prep.z_index, dense=False,
                  domain=pyo.NonNegativeReals if prep.flow_workers else pyo.NonNegativeIntegers,
                  bounds=lambda _m, i, k, t: (0, int(ub_z[i, k])))
    binary_s = prep.options.binary_running
    m.c = pyo.Var(prep.c_index, domain=pyo.NonNegativeReals if binary_s else pyo.Binary,
                  bounds=(0, 1), dense=False)
    m.s = pyo.Var(prep.c_index, domain=pyo.Binary if binary_s else pyo.NonNegativeReals,
                  bounds=(0, 1), dense=False)
    m.lw = pyo.Var(prep.worker_pattern_index, domain=pyo.NonNegativeIntegers, dense=False,
                   bounds=lambda _m, g, t, q: (0, len(prep.worker_units[g])))
    m.lz = pyo.Var(prep.ps_pattern_index, domain=pyo.NonNegativeIntegers, dense=False,
                   bounds=lambda _m, g, t, q: (0, len(prep.ps_units[g])))
    m.p = pyo.Var(prep.chain_index, domain=pyo.NonNegativeReals, dense=False)
    m.u = pyo.Var(prep.window_index, domain=pyo.NonNegativeReals, dense=False,
                  bounds=lambda _m, i, t: (0, float(prep.instance.workload[i])))


def _work(m: pyo.ConcreteModel, prep: Prep, i: int, slots: range) -> tuple[list, list]:
    """Terms of ``Σ_{t ∈ slots} W_it = Σ_t Σ_h y_iht`` as (coefficients, variables)."""
    vs = [m.y[i, h, t] for t in slots for h in prep.worker_servers(i)]
    return [1.0] * len(vs), vs


def add_completion_linking(m: pyo.ConcreteModel, prep: Prep) -> None:
    """``s_it = c_it + s_{i,t+1}`` (running until the last slot); no work after it:
    ``W_it ≤ w_max_i · s_{i,max(t,e_i)}`` and, with ``server_linking``,
    ``y_iht ≤ ub_y[i,h] · s_{i,max(t,e_i)}``; with ``ps_linking`` ``z_ikt ≤ ub_z[i,k]·s``."""
    def running(_m, i, t):
        if t == prep.latest[i]:
            return m.s[i, t] == m.c[i, t]
        return _lin([1.0, -1.0, -1.0], [m.s[i, t], m.c[i, t], m.s[i, t + 1]]) == 0
    m.running = pyo.Constraint(prep.c_index, rule=running)

    def work_link(_m, i, t):
        hs = prep.worker_servers(i)
        return _lin([1.0] * len(hs) + [-float(prep.w_max[i])],
                    [m.y[i, h, t] for h in hs] + [m.s[i, prep.running_slot(i, t)]]) <= 0
    m.work_link = pyo.Constraint(prep.work_index, rule=work_link)
    if prep.options.server_linking:
        m.server_link = pyo.Constraint(prep.y_index, rule=lambda _m, i, h, t: _lin(
            [1.0, -float(prep.ub_y[i, h])], [m.y[i, h, t], m.s[i, prep.running_slot(i, t)]]) <= 0)
    if prep.options.ps_linking:
        m.ps_link = pyo.Constraint(prep.z_index, rule=lambda _m, i, k, t: _lin(
            [1.0, -float(prep.ub_z[i, k])], [m.z[i, k, t], m.s[i, prep.running_slot(i, t)]]) <= 0)


def _done(m: pyo.ConcreteModel, prep: Prep, i: int, t: int) -> tuple[list, list]:
    """Terms of the work done by slot t, ``Σ_{t' ≤ t} W_it'``: ``P_it`` when ``chained``."""
    if (i, t) in m.p.index_set():  # not ``in m.p``: a sparse Var holds only what was used
        return [1.0], [m.p[i, t]]
    return _work(m, prep, i, range(int(prep.instance.arrival[i]), t + 1))


def add_workload_constraints(m: pyo.ConcreteModel, prep: Prep) -> None:
    """``Σ_t W_it ≥ V_i · x_i`` (``=`` with ``exact_work``); with ``chained`` the work done
    ``P_it = P_{i,t−1} + W_it``; with ``cumulative`` the work done by slot t reaches V_i if
    the job completes by t: ``Σ_{t' ≤ t} W_it' ≥ V_i · (x_i − s_{i,t+1})`` for
    ``e_i ≤ t < l_i``."""
    V = prep.instance.workload

    def total(_m, i):
        coefs, vs = _work(m, prep, i, prep.work_slots(i))
        e = _lin(coefs + [-float(V[i])], vs + [m.s[i, int(prep.earliest[i])]])
        return e == 0 if prep.options.exact_work else e >= 0
    m.workload = pyo.Constraint(list(prep.active), rule=total)

    def chain(_m, i, t):
        coefs, vs = _work(m, prep, i, range(t, t + 1))
        before = [m.p[i, t - 1]] if (i, t - 1) in m.p.index_set() else []
        return _lin([1.0] + [-1.0] * len(before) + [-c for c in coefs],
                    [m.p[i, t]] + before + vs) == 0
    m.chain = pyo.Constraint(prep.chain_index, rule=chain)
    if prep.options.cumulative:
        def by_slot(_m, i, t):
            coefs, vs = _done(m, prep, i, t)
            v = float(V[i])
            return _lin(coefs + [-v, v], vs + [m.s[i, int(prep.earliest[i])],
                                               m.s[i, t + 1]]) >= 0
        m.cumulative = pyo.Constraint(prep.cumulative_index, rule=by_slot)


def add_completion_cuts(m: pyo.ConcreteModel, prep: Prep) -> None:
    """With ``completion_cuts``: ``Σ_{t' ≤ t} W_it' ≥ Σ_τ R_iτt · c_iτ`` (``chained``:
    ``U_it = U_{i,t+1} + Σ_u coef·s_iu`` and ``P_it + U_it ≥ V_i · x_i``); with ``ps_cuts``:
    ``Σ_{t' ≤ t} Σ_k z_ikt' ≥ Σ_τ ⌈R_iτt/γ_i⌉ · c_iτ`` and ``Σ_t Σ_k z_ikt ≥ ⌈V_i/γ_i⌉ · x_i``
    (``common.Options``; ``R_iτt`` from ``Prep.remaining_work``)."""
    def by_slot(var, servers, need):
        def rule(_m, i, t):
            vs = [var[i, h, u] for u in range(int(prep.instance.arrival[i]), t + 1)
                  for h in servers(i)]
            cs = [(tau, need(i, r)) for tau, r in prep.remaining_work(i, t)]
            cs = [(tau, c) for tau, c in cs if c > 0]
            if not cs:
                return pyo.Constraint.Skip
            return _lin([1.0] * len(vs) + [-float(c) for _, c in cs],
                        vs + [m.c[i, tau] for tau, _ in cs]) >= 0
        return rule
    if prep.options.completion_cuts and prep.window_index:  # chained
        def window(_m, i, t):
            later = [m.u[i, t + 1]] if (i, t + 1) in m.u.index_set() else []
            step = prep.window_step(i, t)
            return _lin([1.0] + [-1.0] * len(later) + [-c for _, c in step],
                        [m.u[i, t]] + later + [m.s[i, u] for u, _ in step]) == 0
        m.window = pyo.Constraint(prep.window_index, rule=window)
        m.completion_cuts = pyo.Constraint(prep.window_index, rule=lambda _m, i, t: _lin(
            [1.0, 1.0, -float(prep.instance.workload[i])],
            [m.p[i, t], m.u[i, t], m.s[i, int(prep.earliest[i])]]) >= 0)
    elif prep.options.completion_cuts:
        m.completion_cuts = pyo.Constraint(prep.cut_index, rule=by_slot(
            m.y, prep.worker_servers, lambda i, r: r))
    if prep.options.ps_cuts:
        m.ps_cuts = pyo.Constraint(prep.cut_index, rule=by_slot(
            m.z, prep.ps_servers, prep.ps_needed))

        def total(_m, i):
            vs = [m.z[i, k, u] for u in prep.work_slots(i) for k in prep.ps_servers(i)]
            need = prep.ps_needed(i, float(prep.instance.workload[i]))
            return _lin([1.0] * len(vs) + [-float(need)],
                        vs + [m.s[i, int(prep.earliest[i])]]) >= 0
        m.ps_total = pyo.Constraint(list(prep.active), rule=total)


def _ps_surplus(m: pyo.ConcreteModel, prep: Prep, i: int, t: int, g: float) -> LinearExpression:
    """``W_it − g · Σ_k z_ikt``."""
    hs, ks = prep.worker_servers(i), prep.ps_servers(i)
    return _lin([1.0] * len(hs) + [-g] * len(ks),
                [m.y[i, h, t] for h in hs] + [m.z[i, k, t] for k in ks])


def add_ps_ratio_constraints(m: pyo.ConcreteModel, prep: Prep) -> None:
    """One PS serves at most ρ_i workers: ``W_it ≤ ρ_i · Σ_k z_ikt`` (``ρ_i = Prep.ps_rate``:
    γ_i, or w_max_i where less); with ``ps_dominance``
    no idle PS: ``W_it − γ_i · Σ_k z_ikt ≥ δ_i − γ_i`` (``common.Options``)."""
    m.ps_ratio = pyo.Constraint(prep.work_index,
                                rule=lambda _m, i, t: _ps_surplus(m, prep, i, t,
                                                                  prep.ps_rate(i)) <= 0)
    if prep.options.ps_dominance:
        def dominance(_m: Any, i: int, t: int) -> Any:
            g = float(prep.instance.ps_ratio[i])
            return _ps_surplus(m, prep, i, t, g) >= prep.ps_slack[i] - g
        m.ps_dominance = pyo.Constraint(prep.work_index, rule=dominance)


def add_capacity_constraints(m: pyo.ConcreteModel, prep: Prep) -> None:
    """Server mode: ``Σ_i α_ir · y_iht ≤ C_hr`` per (h, r, t) and ``Σ_i β_ir · z_ikt ≤ C_kr``
    per (k, r, t), only rows that can bind (``common.Prep.worker_capacity_rows``).
    Pattern mode: per unit g and slot t, ``Σ_p λ_gpt ≤ |g|`` and, per demand class c,
    ``Σ_{i∈c} y_igt ≤ Σ_p n_cp · λ_gpt``."""
    inst = prep.instance
    for tag, var, lam, patterns, units in (
            ("worker", m.y, m.lw, prep.worker_patterns, prep.worker_units),
            ("ps", m.z, m.lz, prep.ps_patterns, prep.ps_units)):
        def count(_m, g, t, lam=lam, patterns=patterns, units=units):
            n = len(patterns[g, t][1])
            return _lin([1.0] * n, [lam[g, t, q] for q in range(n)]) <= len(units[g])

        def hold(_m, g, t, j, var=var, lam=lam, patterns=patterns):
            classes, pats = patterns[g, t]
            qs = [q for q in range(len(pats)) if pats[q][j]]
            return _lin([1.0] * len(classes[j]) + [-float(pats[q][j]) for q in qs],
                        [var[i, g, t] for i in classes[j]] + [lam[g, t, q] for q in qs]) <= 0
        setattr(m, f"{tag}_pattern_count", pyo.Constraint(list(patterns), rule=count))
        setattr(m, f"{tag}_pattern_hold", pyo.Constraint(
            [(g, t, j) for (g, t), (classes, _) in patterns.items()
             for j in range(len(classes))], rule=hold))

    def worker_row(_m, h, r, t):
        jobs = [i for i in prep.jobs_on_worker[h, t] if inst.worker_demand[i, r] > 0]
        return _lin([float(inst.worker_demand[i, r]) for i in jobs],
                    [m.y[i, h, t] for i in jobs]) <= float(prep.worker_rhs[h, r])
    m.worker_capacity = pyo.Constraint(prep.worker_capacity_rows, rule=worker_row)

    def ps_row(_m, k, r, t):
        jobs = [i for i in prep.jobs_on_ps[k, t] if inst.ps_demand[i, r] > 0]
        return _lin([float(inst.ps_demand[i, r]) for i in jobs],
                    [m.z[i, k, t] for i in jobs]) <= float(prep.ps_rhs[k, r])
    m.ps_capacity = pyo.Constraint(prep.ps_capacity_rows, rule=ps_row)


def add_class_rows(m: pyo.ConcreteModel, prep: Prep) -> None:
    """With ``class_rows``: ``Σ_{i∈c} y_iht ≤ ⌊min_r C_hr/α_cr⌋`` per server, slot and demand
    class (PS servers alike); with ``energy_rows``: ``Σ_i d_ir·R_iAB·Σ_{A≤τ≤B} c_iτ ≤
    Σ_{t=A}^{B} Σ_h u_hr`` per pool, resource and window (``common.Options``)."""
    def count(var, rows):
        by_key = {(h, t, jobs[0]): (jobs, bound) for h, t, jobs, bound in rows}

        def rule(_m, h, t, first):  # a class is named by its first job
            jobs, bound = by_key[h, t, first]
            return _lin([1.0] * len(jobs), [var[i, h, t] for i in jobs]) <= bound
        return pyo.Constraint(list(by_key), rule=rule)
    m.worker_class = count(m.y, prep.worker_class_rows)
    m.ps_class = count(m.z, prep.ps_class_rows)
    energy = {(p, r, a, b): (terms, rhs) for p, r, a, b, terms, rhs in prep.energy_rows}

    def energy_row(_m, p, r, a, b):
        terms, rhs = energy[p, r, a, b]
        pairs = [(coef, m.c[i, tau]) for i, coef in terms
                 for tau in range(max(int(prep.earliest[i]), a),
                                  min(b, int(prep.latest[i])) + 1)]
        return _lin([c for c, _ in pairs], [v for _, v in pairs]) <= rhs
    m.energy = pyo.Constraint(list(energy), rule=energy_row)


def add_symmetry_constraints(m: pyo.ConcreteModel, prep: Prep) -> None:
    """Identical servers h < h' (consecutive in a group) are interchangeable in each slot on
    its own, so order them by load: ``Σ_i ω_i·y_iht ≥ Σ_i ω_i·y_ih't`` (PS servers alike)."""
    def row(var, jobs_on, weight):
        def rule(_m, a, b, t):
            ja, jb = jobs_on[a, t], jobs_on[b, t]
            return _lin([weight(i, a) for i in ja] + [-weight(i, b) for i in jb],
                        [var[i, a, t] for i in ja] + [var[i, b, t] for i in jb]) >= 0
        return rule
    m.worker_symmetry = pyo.Constraint(prep.worker_symmetry_rows,
                                       rule=row(m.y, prep.jobs_on_worker, prep.worker_weight))
    m.ps_symmetry = pyo.Constraint(prep.ps_symmetry_rows,
                                   rule=row(m.z, prep.jobs_on_ps, prep.ps_weight))


def add_exact_completion(m: pyo.ConcreteModel, prep: Prep) -> None:
    """With ``exact_completion``: a job still running in slot t has done at most V_i − 1
    before it, ``Σ_{t' < t} W_it' + M_it · s_it ≤ w_max_i · (t − a_i)`` with ``M_it =
    w_max_i·(t − a_i) − V_i + 1``, for ``e_i < t ≤ l_i`` (``common.Options``)."""
    if not prep.options.exact_completion:
        return

    def rule(_m, i, t):
        coefs, vs = _done(m, prep, i, t - 1)
        most = float(prep.w_max[i] * (t - int(prep.instance.arrival[i])))
        big = most - float(prep.instance.workload[i]) + 1.0
        return _lin(coefs + [big], vs + [m.s[i, t]]) <= most
    m.exact_completion = pyo.Constraint(
        [(i, t) for i, t in prep.c_index if t > prep.earliest[i]], rule=rule)


def add_job_components(m: pyo.ConcreteModel, prep: Prep) -> None:
    """The components for users' own rows (docs/offline.md, "Your own constraints"), by job
    id and slot whatever the packing: sets ``jobs`` (ids), ``slots`` (0 … T−1); expressions
    ``workers[j, t] = Σ_g y_jgt``, ``ps[j, t] = Σ_k z_jkt``, ``done[j] = x_j`` (1 if j
    completes), ``finish[j, t] = c_jt`` (1 if j's last slot is t), 0 where the model has no
    variable. With ``packing = server`` also ``worker_servers``, ``ps_servers`` (names) and
    ``server_workers[j, h, t] = y_jht``, ``server_ps[j, k, t] = z_jkt``."""
    inst = prep.instance
    job = {jb.id: i for i, jb in enumerate(inst.jobs)}
    m.jobs = pyo.Set(initialize=[jb.id for jb in inst.jobs], ordered=True)
    m.slots = pyo.RangeSet(0, inst.horizon - 1)

    def total(var, units):
        def rule(_m, j, t):
            i = job[j]
            keys = [(i, g, t) for g in units(i)] if i in active else []
            vs = [var[k] for k in keys if k in var.index_set()]
            return _lin([1.0] * len(vs), vs) if vs else 0
        return rule
    active = set(prep.active)
    m.workers = pyo.Expression(m.jobs, m.slots, rule=total(m.y, prep.worker_servers))
    m.ps = pyo.Expression(m.jobs, m.slots, rule=total(m.z, prep.ps_servers))
    m.done = pyo.Expression(m.jobs, rule=lambda _m, j: m.s[job[j], int(prep.earliest[job[j]])]
                            if job[j] in active else 0)
    m.finish = pyo.Expression(m.jobs, m.slots, rule=lambda _m, j, t: m.c[job[j], t]
                              if (job[j], t) in m.c.index_set() else 0)
    if prep.packing != "server":
        return
    m.worker_servers = pyo.Set(initialize=list(inst.worker_names), ordered=True)
    m.ps_servers = pyo.Set(initialize=list(inst.ps_names), ordered=True)
    for name, var, servers, index in (("server_workers", m.y, m.worker_servers,
                                       inst.worker_index),
                                      ("server_ps", m.z, m.ps_servers, inst.ps_index)):
        def one(_m, j, h, t, var=var, index=index):
            key = (job[j], index[h], t)
            return var[key] if key in var.index_set() else 0
        setattr(m, name, pyo.Expression(m.jobs, servers, m.slots, rule=one))


def satisfies(m: pyo.ConcreteModel, point: dict[str, dict], tol: float = 1e-6) -> bool:
    """Whether the variable values ``point`` ({variable name: {index: value}}, every other
    variable 0, ``custom.point``) keep every bound and every active row of ``m``, the user's
    included (within ``tol``, relative to the right-hand side). Leaves those values loaded."""
    for var in m.component_objects(pyo.Var, active=True):
        given = point.get(var.local_name, {})
        if any(k not in var.index_set() for k in given):
            return False  # the model has no variable for part of the point
        for k, v in var.items():
            v.set_value(float(given.get(k, 0.0)), skip_validation=True)

    def within(x: float, lo: Any, hi: Any) -> bool:
        return (lo is None or x >= lo - tol * max(1.0, abs(lo))) and (
            hi is None or x <= hi + tol * max(1.0, abs(hi)))
    for v in m.component_data_objects(pyo.Var, active=True):
        if not within(v.value, v.lb, v.ub) or (
                v.is_integer() and abs(v.value - round(v.value)) > tol):
            return False
    return all(within(pyo.value(c.body), pyo.value(c.lower), pyo.value(c.upper))
               for c in m.component_data_objects(pyo.Constraint, active=True))


def add_objective(m: pyo.ConcreteModel, prep: Prep) -> None:
    """``max Σ_i Σ_t f_i(t − a_i + 1) · c_it``."""
    idx = [(i, t) for i, t in prep.c_index if prep.gain[i, t] != 0]
    m.utility = pyo.Objective(expr=_lin([float(prep.gain[i, t]) for i, t in idx],
                                        [m.c[i, t] for i, t in idx]), sense=pyo.maximize)


def build(instance: Instance, options: Options | None = None,
          prep: Prep | None = None) -> pyo.ConcreteModel:
    """The compact MILP of ``instance`` as a Pyomo model; ``model.prep`` keeps the index sets."""
    prep = prep or prepare(instance, options)
    m = pyo.ConcreteModel(name=instance.name)
    m.prep = prep  # a plain attribute, not a component
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


def values(m: pyo.ConcreteModel) -> tuple[dict, dict, dict, dict]:
    """Solved y, z, λ_w, λ_z as {index: value} dicts (values loaded)."""
    return tuple({k: v.value for k, v in var.items()}  # type: ignore[return-value]
                 for var in (m.y, m.z, m.lw, m.lz))
