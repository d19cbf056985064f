"""DRF: Dominant Resource Fairness by progressive filling, every slot (SPEC §4).

After Ghodsi et al., "Dominant Resource Fairness: Fair Allocation of Multiple Resource Types"
(NSDI 2011): repeatedly give the next task to the user with the lowest dominant share.

Rule, per slot t (``DrfPolicy.allocate``), starting from an empty cluster (preemptive: nothing
carries over from slot t−1):
- The cluster's capacity is pooled per resource over both pools:
  ``C[r] = Σ_h C_h[r] + Σ_k C_k[r]``; resources with ``C[r] = 0`` are left out.
- Job i holding ``w`` workers and ``p`` PSs has dominant share
  ``s_i = max_r (w·α_i[r] + p·β_i[r]) / C[r]`` (PSs count).
- A job can grow while ``w < min(requested_workers_i, remaining_i)``.
- Progressive filling: take the growable job with the lowest ``s_i`` (ties: arrival order, then
  file order), add one worker first-fit by server index and, if ``ceil((w+1)/γ_i)`` exceeds its
  PSs, one PS first-fit, both or neither. If the increment does not fit, the job stops growing
  for this slot. Repeat until no job can grow.

No admission control; jobs that can never place a worker simply never grow.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..limits import on_time
from ..model import Instance, Schedule
from .sim import ClusterState, Placement, Policy, simulate


def cluster_capacity(instance: Instance) -> np.ndarray:
    """(R,) capacity of the whole cluster per resource, both pools pooled."""
    return instance.worker_capacity.sum(axis=0) + instance.ps_capacity.sum(axis=0)


def dominant_share(instance: Instance, i: int, workers: int, ps: int) -> float:
    """``max_r (w·α_i[r] + p·β_i[r]) / C[r]`` over resources of positive total capacity."""
    cap = cluster_capacity(instance)
    pos = cap > 0
    use = workers * instance.worker_demand[i] + ps * instance.ps_demand[i]
    return float((use[pos] / cap[pos]).max()) if pos.any() else 0.0


class DrfPolicy(Policy):
    name = "drf"

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        cap = cluster_capacity(instance)
        pos = cap > 0
        # Per-unit shares: a worker's and a PS's use of each resource, as fractions of C[r].
        self.alpha_share = instance.worker_demand[:, pos] / cap[pos]  # (J, R')
        self.beta_share = instance.ps_demand[:, pos] / cap[pos]  # (J, R')

    def share(self, i: int, pl: Placement) -> float:
        if self.alpha_share.shape[1] == 0:
            return 0.0
        return float((pl.workers * self.alpha_share[i] + pl.ps * self.beta_share[i]).max())

    def allocate(self, state: ClusterState) -> dict[int, Placement]:
        inst = self.instance
        packer = state.packer()
        h, k = len(inst.worker_names), len(inst.ps_names)
        out: dict[int, Placement] = {}
        limit: dict[int, int] = {}
        heap: list[tuple[float, int, int]] = []
        for rank, i in enumerate(state.active().tolist()):
            limit[i] = int(min(inst.requested_workers[i], state.remaining[i]))
            if limit[i] > 0:
                out[i] = Placement.empty(h, k)
                heap.append((0.0, rank, i))
        heapq.heapify(heap)
        while heap:
            on_time()  # one worker a pass: a time-limited solve's floor stops it
            _, rank, i = heapq.heappop(heap)
            pl = out[i]
            if not packer.grow(pl, inst.worker_demand[i], inst.ps_demand[i], inst.ps_ratio[i]):
                continue  # frozen for this slot: its next increment fits nowhere
            if pl.workers < limit[i]:
                heapq.heappush(heap, (self.share(i, pl), rank, i))
        return {i: pl for i, pl in out.items() if pl.workers}


def run(instance: Instance) -> Schedule:
    """DRF schedule of ``instance`` (SPEC §4)."""
    return simulate(instance, DrfPolicy(instance))
