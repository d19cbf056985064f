"""Whole workers and PSs from a solved model whose counts were continuous (``Prep.flow_workers``).

With the completion slots and the pattern counts fixed, the workers of such a model are a
flow: job i supplies V_i, slot t of job i passes at most ``w_max_i`` where the job holds some
PS (``γ_i ≥ w_max_i``: one PS serves a slot's work) and nothing elsewhere, unit g takes at most
``ub_y[i, g]`` of job i and ``Σ_p n_p·λ_gtp`` in all (its one demand class). Every capacity is
an integer, so an integral flow exists whenever the solver's fractional one does. This module
finds one with HiGHS: a transportation MILP whose LP relaxation is already integral (the rows
are two laminar families), so it is solved at the root. Each working slot then gets one PS
on the PS unit where the solver had put most of the job's PS that slot: no PS capacity can
bind, and that unit's pattern count is at least one there.

Which jobs complete, and when, is read off the solved y as in ``common.schedule_from_values``:
the first slot at which a job's work reaches V_i (within 1e-6); only work up to that slot is
kept, so the jobs complete no later than the solver's schedule and earn at least as much.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import highspy
import numpy as np

from .compact_highspy import Model
from .highs import new_highs

if TYPE_CHECKING:
    from .common import Prep

_TOL = 1e-6


def integral_workers(prep: Prep, y: dict, z: dict, lam_w: dict) -> tuple[dict, dict]:
    """``({(i, g, t): workers}, {(i, k, t): PSs})``, whole, replacing the solved (possibly
    fractional) ``y`` and ``z`` of a ``flow_workers`` model: the same jobs complete, each by
    the slot its solved work reached V_i, within the same pattern counts. Raises
    ``ArithmeticError`` if HiGHS finds no integral flow (it cannot, when the solved values
    satisfied the model)."""
    inst = prep.instance
    work: dict[int, dict[int, float]] = {}
    for (i, _g, t), v in y.items():
        if v and v > _TOL:
            work.setdefault(i, {}).setdefault(t, 0.0)
            work[i][t] += float(v)
    due: dict[int, int] = {}
    for i, by_slot in work.items():
        done = 0.0
        for t in sorted(by_slot):
            done += by_slot[t]
            if done >= float(inst.workload[i]) - _TOL:
                due[i] = t
                break
    if not due:
        return {}, {}
    ps_unit: dict[tuple[int, int], tuple[float, int]] = {}  # (i, t) -> (most PS, its unit)
    for (i, k, t), v in z.items():
        if v and v > _TOL and v > ps_unit.get((i, t), (0.0, -1))[0]:
            ps_unit[i, t] = (float(v), k)
    m = Model(prep)  # the compact model's arrays, holding only this flow
    cols = {(i, g, t): m.var(0, float(min(prep.ub_y[i, g], prep.w_max[i])), True)
            for (i, g, t) in y if i in due and t <= due[i] and (i, t) in ps_unit}
    by_job: dict[int, list[int]] = {}
    by_job_slot: dict[tuple[int, int], list[int]] = {}
    by_unit_slot: dict[tuple[int, int], list[int]] = {}
    for (i, g, t), n in cols.items():
        by_job.setdefault(i, []).append(n)
        by_job_slot.setdefault((i, t), []).append(n)
        by_unit_slot.setdefault((g, t), []).append(n)
    for i in due:
        ns, v = by_job.get(i, []), float(inst.workload[i])
        m.row("flow_supply", ns, [1.0] * len(ns), v, v)
    for (i, _t), ns in by_job_slot.items():
        if len(ns) > 1:  # with one unit the column's bound says it
            m.row("flow_rate", ns, [1.0] * len(ns), 0.0, float(prep.w_max[i]))
    for (g, t), ns in by_unit_slot.items():
        _, pats = prep.worker_patterns[g, t]
        room = sum(pats[q][0] * round(lam_w.get((g, t, q)) or 0.0) for q in range(len(pats)))
        m.row("flow_room", ns, [1.0] * len(ns), 0.0, float(room))
    h = new_highs()
    h.setOptionValue("threads", 1)
    h.passModel(m.lp())
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise ArithmeticError(f"no integral worker flow for the solved completions of "
                              f"{inst.name} ({h.modelStatusToString(h.getModelStatus())})")
    x = np.asarray(h.getSolution().col_value)
    workers = {key: float(round(x[n])) for key, n in cols.items() if round(x[n]) > 0}
    ps = {(i, ps_unit[i, t][1], t): 1.0 for i, _g, t in workers}
    return workers, ps
