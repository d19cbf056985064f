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
from .sim import ClusterState, Placement, Policy, check_unit_placements, simulate


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
        # each job's worker demand vector, as a class: jobs of one model share one
        self.worker_class = np.unique(instance.worker_demand, axis=0,
                                      return_inverse=True)[1].reshape(-1)

    def share(self, i: int, pl: Placement) -> float:
        if self.alpha_share.shape[1] == 0:
            return 0.0
        return float((pl.workers * self.alpha_share[i] + pl.ps * self.beta_share[i]).max())

    def allocate(self, state: ClusterState) -> dict[int, Placement]:
        """Progressive filling (module docstring). A job's placement is made at its first
        turn, and the filling ends once every worker class among the jobs still waiting
        fits nowhere (free capacity only falls within the slot, so each of those jobs'
        next increment would fail): on the whole Philly trace about 3 500 jobs wait in a
        full cluster, and making each an empty placement and failing it, slot after slot,
        was most of DRF's 354 s. The same placements as filling to the end."""
        inst = self.instance
        packer = state.packer()
        h, k = len(inst.worker_names), len(inst.ps_names)
        active = state.active()
        most = np.minimum(inst.requested_workers[active], state.remaining[active])
        rank = np.flatnonzero(most > 0)  # (its place among the active jobs: the tie order)
        ids = active[rank].tolist()
        limit = dict(zip(ids, most[rank].tolist(), strict=True))
        heap = list(zip([0.0] * len(ids), rank.tolist(), ids, strict=True))  # a sorted heap
        cls = self.worker_class
        open_classes = len(np.unique(cls[active[rank]]))
        full: set[int] = set()
        out: dict[int, Placement] = {}
        while heap and open_classes:
            on_time()  # one worker a pass: a time-limited solve's floor stops it
            _, r, i = heapq.heappop(heap)
            if cls[i] in full:
                continue  # its worker fits on no server any more
            pl = out.get(i)
            if pl is None:
                pl = out[i] = Placement.empty(h, k)
            alpha = inst.worker_demand[i]
            if not packer.grow(pl, alpha, inst.ps_demand[i], inst.ps_ratio[i]):
                if packer.fits_nowhere(alpha):
                    full.add(int(cls[i]))
                    open_classes -= 1
                continue  # frozen for this slot: its next increment fits nowhere
            if pl.workers < limit[i]:
                heapq.heappush(heap, (self.share(i, pl), r, i))
        return {i: pl for i, pl in out.items() if pl.workers}


def run(instance: Instance) -> Schedule:
    """DRF schedule of ``instance`` (SPEC §4); refused (``InputError``) where it would place
    more than ``sim.UNIT_PLACEMENTS`` units one at a time."""
    check_unit_placements(instance, "drf")
    return simulate(instance, DrfPolicy(instance))
