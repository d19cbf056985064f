"""Large-neighbourhood search on the pattern master (``formulations/pattern_master.py``).

A neighbourhood is a window of slots ``[t0, t1]`` and the jobs that may be rescheduled inside
it: every job whose incumbent schedule lies within the window, and every job left out of the
incumbent that arrives before ``t1``. Everything else is fixed to the incumbent — the other
jobs' columns (x) and the pattern counts (λ) of the slots outside the window — so the sub-MILP
holds only the window's λ and the free jobs' columns within the window, and HiGHS's presolve
drops the rest. Before the sub-MILP, a few rounds of column generation price the free jobs
against the window's residual capacity (the LP with the fixings gives the duals, OASiS's
subroutine the columns, with no capacity outside the window), so the sub-MILP can use
schedules that no global LP dual ever priced. The incumbent is the sub-MILP's start: the
result is never worse. A window's outcome is the one result record of every solve
(``result.SolveResult``): ``values`` are the pattern master's ``(x, λ)``, ``objective`` their
utility.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from oasis_opt.online.subroutine import JobSpec, best_schedule

from .pattern_master import ENTER_TOL, PatternMaster, column_slots, trim
from .result import SolveResult


def window_jobs(master: PatternMaster, x: np.ndarray, t0: int, t1: int) -> list[int]:
    """Jobs free to move in ``[t0, t1]``: scheduled entirely inside it, or unscheduled and
    arriving by ``t1``."""
    inst = master.inst
    placed: dict[int, tuple[int, int]] = {}
    for n in np.flatnonzero(x > 0.5):
        col = master.columns[n]
        placed[col.job] = column_slots(col)
    out = []
    for i in range(inst.num_jobs):
        if i in placed:
            a, b = placed[i]
            if a >= t0 and b <= t1:
                out.append(i)
        elif inst.arrival[i] <= t1:
            out.append(i)
    return out


def _price_window(master: PatternMaster, specs: list[JobSpec], jobs: list[int], pi: np.ndarray,
                  t0: int, t1: int) -> list:
    """Columns of the free jobs at row prices ``pi``, with capacity only in ``[t0, t1]``."""
    inst = master.inst
    T, R = inst.horizon, len(inst.resources)
    H, K = len(inst.worker_names), len(inst.ps_names)
    free_w = np.zeros((T, H, R))
    free_w[t0:t1 + 1] = inst.worker_capacity
    free_p = np.zeros((T, K, R))
    free_p[t0:t1 + 1] = inst.ps_capacity
    out = []
    for i in jobs:
        cw, cp = master.unit_costs(pi, i)
        b = best_schedule(specs[i], *master.prices(i, cw, cp), free_w, free_p)
        if not math.isfinite(b.payoff):
            continue
        cut = trim(inst, i, b.workers, b.ps)
        if cut is None:
            continue
        y, z, value = cut
        col = master.group_counts(i, y, z, value)
        reduced = col.value - float((y * cw).sum() + (z * cp).sum()) - pi[i]
        if reduced > ENTER_TOL * max(1.0, abs(pi[i])):
            out.append(col)
    return out


def search(master: PatternMaster, specs: list[JobSpec], x: np.ndarray, lam: np.ndarray,
           t0: int, t1: int, time_limit: float, pricing_rounds: int = 3,
           gap: float = 1e-6) -> SolveResult:
    """Re-optimise the window ``[t0, t1]`` around the incumbent (x, λ) (module docstring):
    ``values`` the new ``(x, λ)``, never worse; ``status`` the window MIP's; ``bound`` its dual
    bound (of the window, not of the instance); ``extras`` ``free_jobs``, ``new_columns`` and
    ``priced_out`` (a round of the window's pricing found no column to enter)."""
    started = time.perf_counter()
    jobs = window_jobs(master, x, t0, t1)
    free = set(jobs)
    lam_slot = master.lam_slot()
    inside = (lam_slot >= t0) & (lam_slot <= t1)

    def bounds() -> None:
        n = len(master.columns)
        xl = np.zeros(n)
        xu = np.zeros(n)
        xx = np.zeros(n)
        xx[:len(x)] = x
        for k, col in enumerate(master.columns):
            if col.job in free:
                a, b = column_slots(col)
                xu[k] = np.inf if a >= t0 and b <= t1 else 0.0
            else:
                xl[k] = xu[k] = xx[k]
        master.set_bounds(xl, xu, np.where(inside, 0.0, lam), np.where(inside, np.inf, lam))

    added = 0
    priced_out = not jobs  # a round of pricing found no column to enter
    bounds()
    for _ in range(pricing_rounds if jobs else 0):
        if time.perf_counter() - started > 0.4 * time_limit or master.deadline.passed():
            break
        _, pi, _ = master.solve_lp()
        if master.deadline.passed():  # the LP may have been interrupted
            break
        cols = _price_window(master, specs, jobs, pi, t0, t1)
        n0 = len(master.columns)
        for col in cols:
            master.add(col)
        if len(master.columns) == n0:
            priced_out = True
            break
        added += len(master.columns) - n0
        bounds()
    x_full = np.zeros(len(master.columns))
    x_full[:len(x)] = x
    start = [int(n) for n in np.flatnonzero(x_full > 0.5)]
    # no minimum slice: past the window's time (or the master's deadline) solve_mip returns
    # the start untouched
    left = time_limit - (time.perf_counter() - started)
    mip = master.solve_mip(left, gap, start, lam)
    master.free_bounds()
    return replace(mip, solve_seconds=time.perf_counter() - started, solver="lns",
                   extras={"free_jobs": len(jobs), "new_columns": added,
                           "priced_out": priced_out})
