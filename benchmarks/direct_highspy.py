"""The comparator of issue 11: a plain direct-highspy model of SPEC §2 with the obvious
tightenings, written from SPEC alone (it shares no code with ``formulations/``).

It is what a competent user would write in an afternoon, and so the peer the default route
must beat (benchmarks/bench_solver.py runs both side by side):

- ``y_iht`` integer on every worker server h, ``0 ≤ y_iht ≤ ub_y[i,h] = min(N_i, ⌊C_h/α_i⌋)``;
  ``z_ikt`` integer on every PS server, ``ub_z[i,k] = min(max(1, ⌈N_i/γ_i⌉), ⌊C_k/β_i⌋)``;
- completion only where f > 0 and reachable: ``c_it`` binary for ``e_i ≤ t ≤ l_i`` with
  ``e_i = a_i + ⌈V_i / w_max_i⌉ − 1`` and ``l_i`` the last slot with ``f_i > 0``;
  ``s_it = c_it + s_{i,t+1}`` (still running), ``x_i = s_{i,e_i}``;
- the per-job rate bound from the empty cluster, ``w_max_i = min(N_i, Σ_h ub_y,
  ⌊γ_i Σ_k ub_z⌋)``: ``Σ_h y_iht ≤ w_max_i · s_{i,max(t,e_i)}`` (no work after the last slot);
- no PS after the last slot: ``z_ikt ≤ ub_z[i,k] · s_{i,max(t,e_i)}``;
- work ``Σ_t Σ_h y_iht ≥ V_i x_i``, cumulative work ``Σ_{t' ≤ t} Σ_h y_iht' ≥ V_i (x_i −
  s_{i,t+1})``, PS ratio ``Σ_h y_iht ≤ γ_i Σ_k z_ikt``, capacity per (server, resource, slot);
- ``max Σ_i Σ_t f_i(t − a_i + 1) c_it``. HiGHS, one thread, default options.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import highspy
import numpy as np

from oasis_opt.model import Instance

_EPS = 1e-9


@dataclass(frozen=True)
class DirectResult:
    status: str  # HiGHS model status, e.g. "Optimal", "Time limit reached"
    objective: float | None
    bound: float | None
    build_seconds: float
    solve_seconds: float
    seconds: float


def _fit(demand: np.ndarray, capacity: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """(J, S) ``min(cap_i, min_{r: d_ir > 0} ⌊C_sr / d_ir⌋)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(demand[:, None, :] > 0,
                         np.floor(capacity[None, :, :] / demand[:, None, :] + _EPS), np.inf)
    return np.minimum(ratio.min(axis=2), cap[:, None]).astype(np.int64)


def build(inst: Instance) -> highspy.Highs:
    """The model on a fresh ``Highs`` object (output off, one thread)."""
    J, T = inst.num_jobs, inst.horizon
    ub_y = _fit(inst.worker_demand, inst.worker_capacity, inst.max_workers)
    # never 0 PSs for a positive worker count, however large γ (SPEC §5, model.ps_needed)
    ub_z = _fit(inst.ps_demand, inst.ps_capacity,
                np.maximum(1, np.ceil(inst.max_workers / inst.ps_ratio - _EPS)).astype(np.int64))
    w_max = np.minimum(np.minimum(inst.max_workers, ub_y.sum(axis=1)),
                       np.floor(inst.ps_ratio * ub_z.sum(axis=1) + _EPS).astype(np.int64))
    lower, upper, cost, integ = [], [], [], []

    def col(lo: float, hi: float, c: float = 0.0, integer: bool = True) -> int:
        lower.append(lo)
        upper.append(hi)
        cost.append(c)
        integ.append(1 if integer else 0)
        return len(lower) - 1

    rows_lo, rows_hi, starts, index, value = [], [], [0], [], []

    def row(idx: list[int], val: list[float], lo: float, hi: float) -> None:
        rows_lo.append(lo)
        rows_hi.append(hi)
        index.extend(idx)
        value.extend(val)
        starts.append(len(index))

    y: dict[tuple[int, int, int], int] = {}
    z: dict[tuple[int, int, int], int] = {}
    for i in range(J):
        a, v = int(inst.arrival[i]), int(inst.workload[i])
        gains = [float(inst.utility_at(i, t)) for t in range(T)]
        useful = [t for t in range(a, T) if gains[t] > 0]
        if w_max[i] <= 0 or not useful:
            continue
        e, last = a + math.ceil(v / int(w_max[i])) - 1, useful[-1]
        if e > last:
            continue
        hs, ks = np.flatnonzero(ub_y[i]), np.flatnonzero(ub_z[i])
        c = {t: col(0, 1, gains[t]) for t in range(e, last + 1)}
        s = {t: col(0, 1, integer=False) for t in range(e, last + 1)}
        for t in range(e, last + 1):  # s_it = c_it + s_{i,t+1}
            nxt = [s[t + 1]] if t < last else []
            row([s[t], c[t], *nxt], [1.0, -1.0] + [-1.0] * len(nxt), 0.0, 0.0)
        for t in range(a, last + 1):
            run = s[max(t, e)]
            ys = [col(0, int(ub_y[i, h])) for h in hs]
            zs = [col(0, int(ub_z[i, k])) for k in ks]
            y.update({(i, int(h), t): j for h, j in zip(hs, ys, strict=True)})
            z.update({(i, int(k), t): j for k, j in zip(ks, zs, strict=True)})
            row(ys + [run], [1.0] * len(ys) + [-float(w_max[i])], -math.inf, 0.0)
            for k, j in zip(ks, zs, strict=True):
                row([j, run], [1.0, -float(ub_z[i, k])], -math.inf, 0.0)
            row(ys + zs, [1.0] * len(ys) + [-float(inst.ps_ratio[i])] * len(zs), -math.inf, 0.0)
        work = {t: [y[i, int(h), t] for h in hs] for t in range(a, last + 1)}
        done: list[int] = []
        for t in range(a, last + 1):
            done = done + work[t]
            if t == last:  # total work ≥ V_i x_i
                row(done + [s[e]], [1.0] * len(done) + [-float(v)], 0.0, math.inf)
            elif t >= e:  # cumulative: Σ_{t' ≤ t} W ≥ V (x − s_{t+1})
                row(done + [s[e], s[t + 1]], [1.0] * len(done) + [-float(v), float(v)],
                    0.0, math.inf)
    for var, demand, capacity in ((y, inst.worker_demand, inst.worker_capacity),
                                  (z, inst.ps_demand, inst.ps_capacity)):
        by: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for (i, g, t), j in var.items():
            by.setdefault((g, t), []).append((i, j))
        for (g, _t), members in sorted(by.items()):
            for r in range(capacity.shape[1]):
                terms = [(j, float(demand[i, r])) for i, j in members if demand[i, r] > 0]
                if terms:
                    row([j for j, _ in terms], [d for _, d in terms], -math.inf,
                        float(capacity[g, r]))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(lower), len(rows_lo)
    lp.col_cost_ = np.array(cost, dtype=float)
    lp.col_lower_ = np.array(lower, dtype=float)
    lp.col_upper_ = np.array(upper, dtype=float)
    lp.row_lower_ = np.array(rows_lo, dtype=float)
    lp.row_upper_ = np.array(rows_hi, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=float)
    lp.integrality_ = [highspy.HighsVarType.kInteger if k else highspy.HighsVarType.kContinuous
                       for k in integ]
    lp.sense_ = highspy.ObjSense.kMaximize
    h = _quiet_highs()
    h.setOptionValue("threads", 1)
    h.passModel(lp)
    return h


def _quiet_highs() -> highspy.Highs:
    """A ``Highs`` with output off; its creation banner (stdout) goes to /dev/null."""
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    return h


def solve(inst: Instance, time_limit: float | None = None,
          history: list[tuple[float, float | None, float]] | None = None) -> DirectResult:
    """Build and solve; ``objective`` and ``bound`` in utility units. ``history`` (if given)
    receives ``(seconds, incumbent, bound)`` at each new incumbent and twice a second (for
    the gap-against-time figure; it does not change the model)."""
    start = time.perf_counter()
    h = build(inst)
    built = time.perf_counter()
    if history is not None:
        last = [0.0]

        def record(e) -> None:
            now = time.perf_counter()
            kind = highspy.cb.HighsCallbackType
            improving = e.callback_type == kind.kCallbackMipImprovingSolution
            if improving or now - last[0] >= 0.5:
                last[0] = now
                out = e.data_out
                inc = out.mip_primal_bound if abs(out.mip_primal_bound) < 1e300 else None
                history.append((now - start, inc, out.mip_dual_bound))
        h.cbMipImprovingSolution.subscribe(record)
        h.cbMipInterrupt.subscribe(record)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if h.getNumCol() == 0:  # no job can earn anything
        return DirectResult("Optimal", 0.0, 0.0, built - start, 0.0, built - start)
    h.run()
    end = time.perf_counter()
    info = h.getInfo()
    has = info.primal_solution_status == 2
    return DirectResult(h.modelStatusToString(h.getModelStatus()),
                        float(info.objective_function_value) if has else None,
                        float(info.mip_dual_bound), built - start, end - built, end - start)
