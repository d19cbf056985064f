"""Tetris: multi-resource packing with a shortest-remaining-work bias.

After Grandl, Ananthanarayanan, Kandula, Rao, Akella, "Multi-Resource Packing for Cluster
Schedulers", SIGCOMM 2014. Tetris places tasks where the *alignment* — the dot product of the
task's demand vector and the machine's free-resource vector, both normalised by the machine's
capacity — is largest, and adds a remaining-work term so that jobs close to the end go first;
the score is ``a + ε·p`` with ε scaled from the average alignment and remaining-work terms.

Here a task is one worker for one slot (plus its PS when the ratio needs one), so every slot is
packed afresh (preemptive between slots) and a job is elastic up to ``max_workers``.
Rule, per slot t (``TetrisPolicy.allocate``):

- Candidates: admitted jobs with work left; with ``drop_hopeless`` (default) a job that can no
  longer finish by the horizon even at ``max_workers`` (``rem_i > N_i·(T − t)``) is not run. A job
  can take another worker while ``w_i < min(N_i, rem_i)``.
- Alignment of job i's next worker on worker server h:
  ``a_ih = Σ_r (α_i[r]/C_h[r]) · (free_h[r]/C_h[r])`` over r with ``C_h[r] > 0``; when the
  next worker needs a PS (``ceil((w_i+1)/γ_i) > p_i``) the PS goes to the PS server with the
  largest ``b_ik = Σ_r (β_i[r]/C_k[r]) · (free_k[r]/C_k[r])`` among those with room (ties: lower
  index), and ``b_ik`` is added: the task's demand spans both servers. With ``γ_i < 1`` a
  worker brings ``ceil((w_i+1)/γ_i) − p_i`` PSs, each placed so (the first one's ``b_ik`` is
  added), and a job whose next worker's PSs do not all fit takes no more workers that slot.
- Remaining work ``W_i = rem_i · v_i`` at the start of the slot, with
  ``v_i = Σ_r α_i[r]/C̄_w[r] + (1/γ_i)·Σ_r β_i[r]/C̄_ps[r]`` the normalised size of one
  worker-slot and its PS share (C̄ = mean server capacity of the pool; resources with C̄ = 0
  left out).
- Score ``a_ih (+ b_ik) − ε·W_i`` with ``ε = m · ā / W̄`` (ā = mean alignment over the fitting
  (job, server) pairs at the start of the slot, W̄ = mean W_i over the candidates, ``m`` =
  ``remaining_weight``, 1 by default).
- Repeatedly place the (job, server) pair with the highest score among those that fit (ties:
  arrival order, then server index), update the free capacity, and repeat until nothing fits.

Tetris knows nothing about utilities: it optimises packing and completion time, not value.
The fairness knob of the paper (restricting the choice to the jobs furthest below their fair
share) is left out.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..limits import on_time
from ..model import Instance, Schedule, ps_needed
from .sim import (
    ClusterState,
    Placement,
    Policy,
    check_unit_placements,
    room_threshold,
    simulate,
    units_fit,
)


def _inv_sq(cap: np.ndarray) -> np.ndarray:
    """``1 / C²`` where C > 0, else 0: resources a server lacks do not count in alignment."""
    out = np.zeros_like(cap, dtype=float)
    pos = cap > 0
    out[pos] = 1.0 / cap[pos] ** 2
    return out



def _rooms(free: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """(n, S) whether one unit of each demand row (n, R) fits on each server of ``free``
    (S, R)."""
    return (free[None, :, :] >= room_threshold(demand)[:, None, :]).all(axis=2)


class TetrisPolicy(Policy):
    name = "tetris"

    def __init__(self, instance: Instance, *, remaining_weight: float = 1.0,
                 drop_hopeless: bool = True) -> None:
        self.instance = instance
        self.m = remaining_weight
        self.drop_hopeless = drop_hopeless
        self.inv_w = _inv_sq(instance.worker_capacity)  # (H, R)
        self.inv_ps = _inv_sq(instance.ps_capacity)  # (K, R)
        size = np.zeros(instance.num_jobs)
        for cap, demand, per in ((instance.worker_capacity, instance.worker_demand, 1.0),
                                 (instance.ps_capacity, instance.ps_demand,
                                  1.0 / instance.ps_ratio)):
            mean = cap.mean(axis=0) if cap.shape[0] else np.zeros(cap.shape[1])
            pos = mean > 0
            size += per * (demand[:, pos] / mean[pos]).sum(axis=1)
        self.size = size  # (J,) v_i

    def allocate(self, state: ClusterState) -> dict[int, Placement]:
        inst = self.instance
        act = state.active()
        rem = state.remaining[act]
        limit = np.minimum(inst.max_workers[act], rem)
        keep = limit > 0
        if self.drop_hopeless:
            keep &= rem <= inst.max_workers[act] * (inst.horizon - state.t)
        jobs, limit, rem = act[keep], limit[keep], rem[keep]
        n = jobs.size
        if n == 0:
            return {}
        alpha, beta = inst.worker_demand[jobs], inst.ps_demand[jobs]  # (n, R)
        ratio = inst.ps_ratio[jobs]
        free_w, free_ps = state.free_w.copy(), state.free_ps.copy()
        a = alpha @ (free_w * self.inv_w).T  # (n, H) alignments a_ih
        b = beta @ (free_ps * self.inv_ps).T  # (n, K) b_ik
        room_w, room_ps = _rooms(free_w, alpha), _rooms(free_ps, beta)
        alpha_thr, beta_thr = room_threshold(alpha), room_threshold(beta)  # sim.Packer's test
        work = rem * self.size[jobs]
        fit_a = a[room_w]
        eps = (self.m * fit_a.mean() / work.mean()
               if fit_a.size and work.mean() > 0 else 0.0)
        bias = -eps * work  # (n,)
        H, K = free_w.shape[0], free_ps.shape[0]
        y = np.zeros((n, H), dtype=np.int64)
        z = np.zeros((n, K), dtype=np.int64)
        w = np.zeros(n, dtype=np.int64)
        p = np.zeros(n, dtype=np.int64)
        # Best server per job, kept up to date incrementally: placing on server h only lowers
        # column h (free capacity falls, every alignment term is ≥ 0), so only the jobs whose
        # best server was h need their row searched again.
        a_m = np.where(room_w, a, -np.inf)
        b_m = np.where(room_ps, b, -np.inf) if K else np.full((n, 1), -np.inf)
        best_h, best_k = a_m.argmax(axis=1), b_m.argmax(axis=1)
        rows = np.arange(n)
        a_best, b_best = a_m[rows, best_h], b_m[rows, best_k]
        need = ps_needed(w + 1, ratio) > p  # (n,) does the next worker bring a PS?
        while True:
            on_time()  # one worker a pass: a time-limited solve's floor stops it
            total = a_best + np.where(need, b_best, 0.0) + bias  # -inf: nothing fits
            total[w >= limit] = -np.inf
            i = int(total.argmax())
            if not np.isfinite(total[i]):
                break
            extra = int(ps_needed(w[i] + 1, ratio[i])) - int(p[i])
            if extra > 1 and not units_fit(free_ps, beta_thr[i], beta[i], extra):
                # γ_i < 1: this worker brings several PSs and they do not all fit
                limit[i] = w[i]
                continue
            h = int(best_h[i])
            y[i, h] += 1
            w[i] += 1
            free_w[h] -= alpha[i]
            a_m[:, h] = np.where((free_w[h] >= alpha_thr).all(axis=1),
                                 alpha @ (free_w[h] * self.inv_w[h]), -np.inf)
            stale = np.flatnonzero(best_h == h)
            best_h[stale] = a_m[stale].argmax(axis=1)
            a_best[stale] = a_m[stale, best_h[stale]]
            for _ in range(max(0, extra)):  # one PS each, to the best server with room
                on_time()
                k = int(best_k[i])
                z[i, k] += 1
                p[i] += 1
                free_ps[k] -= beta[i]
                b_m[:, k] = np.where((free_ps[k] >= beta_thr).all(axis=1),
                                     beta @ (free_ps[k] * self.inv_ps[k]), -np.inf)
                stale = np.flatnonzero(best_k == k)
                best_k[stale] = b_m[stale].argmax(axis=1)
                b_best[stale] = b_m[stale, best_k[stale]]
            need[i] = ps_needed(w[i] + 1, ratio[i]) > p[i]
        return {int(jobs[i]): Placement(y[i], z[i]) for i in np.flatnonzero(w)}


def run(instance: Instance, *, remaining_weight: float = 1.0,
        drop_hopeless: bool = True) -> Schedule:
    """Tetris schedule of ``instance``; refused (``InputError``) where it would place more
    than ``sim.UNIT_PLACEMENTS`` units one at a time."""
    if not remaining_weight >= 0:
        raise InputError("remaining_weight", f"must be non-negative, got {remaining_weight}")
    check_unit_placements(instance, "tetris")
    return simulate(instance, TetrisPolicy(instance, remaining_weight=remaining_weight,
                                           drop_hopeless=drop_hopeless))
