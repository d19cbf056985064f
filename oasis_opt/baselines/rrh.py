"""RRH: the risk/reward heuristic ("FirstReward") of Irwin, Grit and Chase, "Balancing Risk and
Reward in a Market-based Task Service", HPDC 2004, adapted to gangs on a multi-resource
cluster (SPEC §4; docs/baselines.md says what is kept and what is changed).

FirstReward ranks tasks by the value they are expected to earn net of the value their running
costs the tasks they delay, per unit of resource they use, and admits a task only if that
trade looks profitable. Here, at slot t, for a job i with ``rem_i`` worker-slots left and
gang ``g_i = requested_workers_i`` (and ``ceil(g_i/γ_i)`` PSs):

- ``RPT_i = ceil(rem_i / g_i)``: slots it still needs at its gang;
- ``c_i = t + RPT_i − 1``: its last slot if it runs from now on;
- ``G_i = f_i(c_i − a_i + 1)`` if ``c_i ≤ T−1``, else 0: the utility it then earns;
- ``δ_i = G_i − G_i⁺`` with ``G_i⁺`` the same one slot later (0 past the horizon): the utility
  one slot of delay costs it (its decay rate; the whole value where a delay misses the horizon);
- ``s_i = max_r (g_i·α_i[r] + ceil(g_i/γ_i)·β_i[r]) / C[r]``: its gang's dominant share of the
  pooled cluster capacity ``C[r] = Σ_h C_h[r] + Σ_k C_k[r]``;
- ``ρ_i = s_i · RPT_i``: the resource-time it still takes, in cluster-slots;
- ``cost_i = ρ_i · Σ_{j≠i} δ_j``: taking ρ_i cluster-slots delays, in a fluid view of the
  cluster, every other job by ρ_i slots;
- ``score_i = (G_i − w·cost_i) / ρ_i`` (``w = delay_weight``, 1 by default): expected net gain
  per unit of resource-time.

Each slot (``RrhPolicy.allocate``, preemptive: nothing carries over), admitted jobs with
``G_i > 1e-9`` are taken by decreasing score (ties: arrival, then file order), and each gets its
gang of ``min(g_i, rem_i)`` workers and their PSs first-fit by server index, all or nothing;
a job whose gang does not fit is skipped and the next is tried. Jobs with ``G_i ≤ 1e-9`` can no
longer earn anything and are not run.

Admission (``RrhPolicy.admit``) when job i arrives at ``t = a_i``, in file order; it is rejected
- ``unplaceable``: its gang ``min(g_i, V_i)`` does not fit even in the empty cluster;
- ``hopeless``: ``G_i ≤ 1e-9`` with ``rem_i = V_i``: even alone it cannot finish by the horizon,
  or earns nothing at its earliest completion;
- ``unprofitable``: its expected net gain ``G_exp − w·ρ_i·Σ_{j behind} δ_j ≤ 1e-9``, where the
  admitted unfinished jobs with ``score_j ≥ score_i`` are *ahead* of it and the rest *behind*;
  it expects to start at once if ``Σ_{ahead} s_j + s_i ≤ 1`` and otherwise after
  ``W = floor(Σ_{ahead} ρ_j)`` slots (the work ahead drained at the cluster's full rate), so
  ``G_exp = f_i(W + RPT_i)`` if ``t + W + RPT_i − 1 ≤ T−1``, else 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ..model import Instance, Schedule, ps_needed
from .sim import ClusterState, Placement, Policy, simulate

#: Utilities and gains at or below this count as zero (SPEC §3 uses the same threshold).
EPS = 1e-9


class RrhPolicy(Policy):
    name = "rrh"

    def __init__(self, instance: Instance, *, delay_weight: float = 1.0) -> None:
        self.instance = instance
        self.delay_weight = delay_weight
        self.gang = instance.requested_workers.astype(np.int64)  # (J,)
        cap = instance.worker_capacity.sum(axis=0) + instance.ps_capacity.sum(axis=0)
        pos = cap > 0
        use = (self.gang[:, None] * instance.worker_demand
               + ps_needed(self.gang, instance.ps_ratio)[:, None] * instance.ps_demand)
        share = (use[:, pos] / cap[pos]).max(axis=1) if pos.any() else np.zeros(len(self.gang))
        # A job that uses nothing would have an infinite score; any positive floor ranks it
        # first, which is right: it delays nobody.
        self.share = np.maximum(share, 1e-12)  # (J,) s_i
        self.T = instance.horizon
        # Utility rows f_i(1) … f_i(T), 0 (a zero column past the horizon, so f at "one slot
        # too late" is 0), kept for the jobs in the system only: memory O(active jobs · T), not
        # O(J · T). ``_pos[i]`` is job i's row in ``_table`` (−1: none).
        self._pos = np.full(instance.num_jobs, -1, dtype=np.int64)
        self._table = np.zeros((64, self.T + 1))
        self._used = 0
        self.rejected: dict[str, str] = {}

    # --- the estimates ------------------------------------------------------------------
    def estimates(self, t: int, jobs: np.ndarray, remaining: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(RPT, G, δ, ρ) for ``jobs`` at slot t with ``remaining`` work, each (n,)."""
        inst = self.instance
        rpt = -(-remaining // self.gang[jobs])  # ceil
        last = t + rpt - 1
        d = last - inst.arrival[jobs]  # = duration − 1, the table column
        # Past the horizon a job earns nothing: point at the zero column.
        col = np.where(last <= self.T - 1, d, self.T)
        col_next = np.where(last + 1 <= self.T - 1, d + 1, self.T)
        g = self._lookup(jobs, col)
        delta = g - self._lookup(jobs, col_next)
        rho = self.share[jobs] * rpt
        return rpt, g, delta, rho

    def _rows(self, jobs: np.ndarray) -> np.ndarray:
        """Rows of ``jobs`` in ``_table``, adding the missing ones."""
        pos = self._pos[jobs]
        missing = jobs[pos < 0]
        if missing.size:
            if self._used + missing.size > self._table.shape[0]:
                grown = np.zeros((2 * (self._used + missing.size), self.T + 1))
                grown[:self._used] = self._table[:self._used]
                self._table = grown
            for i in missing.tolist():
                self._table[self._used, :self.T] = self.instance.utility_row(i)
                self._pos[i] = self._used
                self._used += 1
            pos = self._pos[jobs]
        return pos

    def _lookup(self, jobs: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``f`` table entries of (job, column) pairs."""
        rows = self._rows(jobs)  # first: it may grow (replace) the table
        return self._table[rows, cols]

    def _forget_all_but(self, act: np.ndarray) -> None:
        """Keep the rows of the jobs in ``act`` only (the others have left the system)."""
        keep = act[self._pos[act] >= 0]
        rows = self._table[self._pos[keep]].copy()
        self._pos[self._pos >= 0] = -1
        self._table[:keep.size] = rows
        self._pos[keep] = np.arange(keep.size)
        self._used = keep.size

    def scores(self, g: np.ndarray, delta: np.ndarray, rho: np.ndarray) -> np.ndarray:
        """``(G_i − w·ρ_i·Σ_{j≠i} δ_j) / ρ_i``."""
        others = delta.sum() - delta
        return (g - self.delay_weight * rho * others) / rho

    # --- the stages ---------------------------------------------------------------------
    def admit(self, state: ClusterState, i: int) -> bool:
        inst = self.instance
        job_id = inst.jobs[i].id
        if not state.fits_empty(i, int(min(self.gang[i], inst.workload[i]))):
            self.rejected[job_id] = "unplaceable"
            return False
        act = state.active()
        jobs = np.append(act, i)
        rem = np.append(state.remaining[act], inst.workload[i])
        rpt, g, delta, rho = self.estimates(state.t, jobs, rem)
        if g[-1] <= EPS:
            self.rejected[job_id] = "hopeless"
            return False
        score = self.scores(g, delta, rho)
        ahead = score[:-1] >= score[-1]
        wait = 0
        if self.share[act[ahead]].sum() + self.share[i] > 1.0:
            wait = int(np.floor(rho[:-1][ahead].sum() + EPS))
        last = state.t + wait + int(rpt[-1]) - 1
        g_exp = (float(self._lookup(np.array([i]), np.array([last - inst.arrival[i]]))[0])
                 if last <= self.T - 1 else 0.0)
        net = g_exp - self.delay_weight * rho[-1] * delta[:-1][~ahead].sum()
        if net <= EPS:
            self.rejected[job_id] = "unprofitable"
            return False
        return True

    def allocate(self, state: ClusterState) -> dict[int, Placement]:
        inst = self.instance
        act = state.active()
        if self._used > 2 * act.size + 64:  # forget the rows of jobs that left
            self._forget_all_but(act)
        if act.size == 0:
            return {}
        rem = state.remaining[act]
        _, g, delta, rho = self.estimates(state.t, act, rem)
        score = self.scores(g, delta, rho)
        order = np.argsort(-score, kind="stable")  # act is in arrival order: ties keep it
        packer = state.packer()
        out: dict[int, Placement] = {}
        for n in order.tolist():
            if g[n] <= EPS:
                continue  # can no longer earn anything
            i = int(act[n])
            w = int(min(self.gang[i], rem[n]))
            pl = packer.place_gang(inst.worker_demand[i], inst.ps_demand[i], w,
                                   ps_needed(w, inst.ps_ratio[i]))
            if pl is not None:
                out[i] = pl
        return out

    def extras(self, state: ClusterState) -> dict[str, Any]:
        return {"rejected": dict(self.rejected)}


def run(instance: Instance, *, delay_weight: float = 1.0) -> Schedule:
    """RRH schedule of ``instance`` (SPEC §4)."""
    if not delay_weight >= 0:
        raise InputError("delay_weight", f"must be non-negative, got {delay_weight}")
    return simulate(instance, RrhPolicy(instance, delay_weight=delay_weight))
