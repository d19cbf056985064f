"""The PS counts relaxed, then made whole (``Options.ps_relaxed``, issue 22 round 10).

With ``ps_relaxed`` the compact MILP on highspy declares the PS counts ``z_ikt`` continuous:
a relaxation of the model (its optimum U ≥ OPT), which HiGHS solves with a smaller tree where
the PS pool is loose (ps-light-s1: 212 nodes with z whole, 23 with z continuous, the same
optimum). The objective ``Σ f_i · c_it`` does not read z, so a solution of the relaxation
whose completions admit whole PS counts is worth the same with them: ``repair`` looks for
such counts, and where it finds them the relaxation's optimum is a feasible schedule's value,
hence OPT (or, stopped at a gap, within that gap of OPT, since U ≥ OPT). Where it finds none
the relaxed optimum is only a bound and the caller solves the whole model
(``offline/backends.solve_highspy``).

``repair`` tries two things, each a small MILP on HiGHS with every completion fixed:
1. the relaxation's workers and running indicators fixed too, whole PS counts only (one
   tiny independent packing per slot; milliseconds);
2. the completions and running indicators fixed, workers and PS counts free: any whole
   allocation that finishes the same jobs at the same slots.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compact_highspy import Model

#: Share of the time left that each repair may take.
REPAIR_SHARE = 0.25


def repair(m: Model, x: np.ndarray, time_limit: float | None = None) -> np.ndarray | None:
    """Column values of the whole model worth what ``x`` (a solution of the relaxed model
    ``m``) is worth, or None where no whole PS counts (stage 1) nor whole workers and PS
    counts (stage 2) complete the same jobs at the same slots within ``time_limit``."""
    import highspy

    from .highs import new_highs

    lp = whole_lp(m)
    zs = set(m.z.values())
    stages = ([j for j, k in enumerate(m.integer) if k and j not in zs],  # all but z
              sorted(set(m.c.values()) | set(m.s.values())))  # the completions only
    lower, upper = np.asarray(m.lower, dtype=float), np.asarray(m.upper, dtype=float)
    for fix in stages:
        lo, up = lower.copy(), upper.copy()
        idx = np.asarray(fix, dtype=int)
        v = np.clip(np.round(x[idx]), lo[idx], up[idx])
        lo[idx], up[idx] = v, v
        lp.col_lower_, lp.col_upper_ = lo.tolist(), up.tolist()
        h = new_highs(threads=1)
        if time_limit is not None:
            h.setOptionValue("time_limit", max(0.05, REPAIR_SHARE * time_limit))
        h.passModel(lp)
        h.run()
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            return np.asarray(h.getSolution().col_value)
    return None


def whole_lp(m: Model) -> Any:
    """``m`` as a ``HighsLp`` with the PS counts whole again (what ``ps_relaxed`` relaxed)."""
    import highspy
    lp = m.lp()
    integer = highspy.HighsVarType.kInteger
    whole = [integer if k else highspy.HighsVarType.kContinuous for k in m.integer]
    for j in m.z.values():
        whole[j] = integer
    lp.integrality_ = whole
    return lp
