"""Brute force over every feasible schedule of a tiny instance (1–3 jobs, 1–2 servers per pool,
horizon ≤ 4, small workloads), written from SPEC §1 alone, sharing no code with the MILP.

Per slot, every allocation of every job on every server (``y_ih ∈ 0…N_i``, ``z_ik ∈
0…⌈N_i/γ_i⌉``) is enumerated and kept when the capacity, ``max_workers`` and PS-ratio rules
hold; a dynamic programme over slots whose state is each job's cumulative work (capped at V_i)
then covers every schedule: the future only depends on the work done, and a job earns
``f_i(t − a_i + 1)`` in the slot t where its work first reaches V_i.
"""

from __future__ import annotations

import itertools
import math

from oasis_opt.model import Instance


def slot_options(inst: Instance, t: int) -> set[tuple[int, ...]]:
    """Feasible per-job work vectors (W_1 … W_J) in slot t."""
    J, H, K = inst.num_jobs, len(inst.worker_names), len(inst.ps_names)
    R = len(inst.resources)
    per_job = []
    for job in inst.jobs:
        choices = [((0,) * H, (0,) * K)]
        if job.arrival <= t:
            # never 0 PSs for a positive worker count, however large γ (model.ps_needed)
            zmax = max(1, math.ceil(job.max_workers / job.ps_ratio - 1e-9))
            for y in itertools.product(range(job.max_workers + 1), repeat=H):
                w = sum(y)
                if w == 0 or w > job.max_workers:
                    continue
                for z in itertools.product(range(zmax + 1), repeat=K):
                    if job.ps_ratio * sum(z) >= w - 1e-9:
                        choices.append((y, z))
        per_job.append(choices)
    out = set()
    for combo in itertools.product(*per_job):
        ok = True
        for h in range(H):
            for r in range(R):
                used = sum(inst.jobs[i].worker_demand[r] * combo[i][0][h] for i in range(J))
                if used > inst.worker_capacity[h, r] * (1 + 1e-9):  # as the validator
                    ok = False
        for k in range(K):
            for r in range(R):
                used = sum(inst.jobs[i].ps_demand[r] * combo[i][1][k] for i in range(J))
                if used > inst.ps_capacity[k, r] * (1 + 1e-9):
                    ok = False
        if ok:
            out.add(tuple(sum(c[0]) for c in combo))
    return out


def best_utility(inst: Instance) -> float:
    """The offline optimum by exhaustive search (tiny instances only)."""
    V = [j.workload for j in inst.jobs]
    states: dict[tuple[int, ...], float] = {tuple(0 for _ in V): 0.0}
    for t in range(inst.horizon):
        options = slot_options(inst, t)
        nxt: dict[tuple[int, ...], float] = {}
        for state, value in states.items():
            for work in options:
                new = []
                gain = 0.0
                for i, (done, w) in enumerate(zip(state, work, strict=True)):
                    if done >= V[i] and w > 0:
                        break  # no work after completion (never useful anyway)
                    total = min(V[i], done + w)
                    if done < V[i] <= total:
                        gain += inst.utility_at(i, t)
                    new.append(total)
                else:
                    key = tuple(new)
                    if nxt.get(key, -1.0) < value + gain:
                        nxt[key] = value + gain
        states = nxt
    return max(states.values())
