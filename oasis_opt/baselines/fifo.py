"""FIFO: static gangs in arrival order with head-of-line blocking (SPEC §4).

Rule, per slot t (``FifoPolicy.allocate``):
1. Every job that ran in slot t−1 keeps its placement (same servers, same counts). In its last
   slot, when ``r`` < gang worker-slots remain, it keeps only its first ``r`` workers and first
   ``ceil(r/γ)`` PSs by server index, so nothing runs past completion.
2. Waiting jobs are taken in arrival order (ties: file order). Each asks for a gang of
   ``w = min(requested_workers, V_i)`` workers and ``ceil(w/γ)`` PSs, placed first-fit by
   server index, all or nothing. The first job whose gang does not fit stops the queue for this
   slot (head-of-line blocking): no job behind it starts, even one that would fit.

No admission control: every job is queued however late it will finish. One exception, because
it is not a scheduling choice: a job whose gang does not fit even in the empty cluster can
never start, and would block the queue for the rest of the horizon; it is refused at arrival
(listed in ``extras["unplaceable"]``). ``block_unplaceable=True`` keeps it in the queue
instead, the literal reading.
"""

from __future__ import annotations

from typing import Any

from ..model import Instance, Schedule, ps_needed
from .sim import ClusterState, Placement, Policy, simulate


class FifoPolicy(Policy):
    name = "fifo"

    def __init__(self, instance: Instance, *, block_unplaceable: bool = False) -> None:
        self.instance = instance
        self.block_unplaceable = block_unplaceable
        self.unplaceable: list[str] = []

    def gang(self, i: int) -> int:
        """Workers of job i's static gang: its request, or its whole workload if smaller."""
        return int(min(self.instance.requested_workers[i], self.instance.workload[i]))

    def admit(self, state: ClusterState, i: int) -> bool:
        if self.block_unplaceable or state.fits_empty(i, self.gang(i)):
            return True
        self.unplaceable.append(self.instance.jobs[i].id)
        return False

    def allocate(self, state: ClusterState) -> dict[int, Placement]:
        inst = self.instance
        packer = state.packer()
        out: dict[int, Placement] = {}
        # Running gangs first: they own their servers until done.
        for i, pl in state.held.items():
            w = min(pl.workers, int(state.remaining[i]))
            kept = pl.truncated(w, ps_needed(w, inst.ps_ratio[i]))
            packer.take(inst.worker_demand[i], inst.ps_demand[i], kept)
            out[i] = kept
        for i in state.active():
            i = int(i)
            if i in out:
                continue
            w = min(self.gang(i), int(state.remaining[i]))
            pl = packer.place_gang(inst.worker_demand[i], inst.ps_demand[i], w,
                                   ps_needed(w, inst.ps_ratio[i]))
            if pl is None:
                break  # head-of-line blocking
            out[i] = pl
        return out

    def extras(self, state: ClusterState) -> dict[str, Any]:
        return {"unplaceable": list(self.unplaceable)}


def run(instance: Instance, *, block_unplaceable: bool = False) -> Schedule:
    """FIFO schedule of ``instance`` (SPEC §4)."""
    return simulate(instance, FifoPolicy(instance, block_unplaceable=block_unplaceable))
