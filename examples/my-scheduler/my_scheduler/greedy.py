"""Greedy by value density: a small scheduler to show how a package plugs into oasis-opt.

Jobs are taken in decreasing order of ``f_i(1) / V_i`` (the most utility per unit of work
first; ties by arrival). Each job is packed as early as it can run: from its arrival, slot after
slot, it takes as many workers as still help (at most ``max_workers`` and its remaining
workload), first fit over the worker servers, with ``ceil(w / γ)`` parameter servers first fit
over the PS servers. A job that cannot finish within the horizon gives its capacity back and
does not run. Whatever order, every slot respects the capacities, so the schedule is feasible;
``oasis_opt.algorithms.run`` checks it with the validator anyway. It reads every job before
it starts (an offline heuristic); an online scheduler would take jobs as they arrive.
"""

from __future__ import annotations

import numpy as np

from oasis_opt.model import Instance, Schedule, ps_needed

#: Float slack on capacities (demands and capacities are decimals in the files).
_EPS = 1e-9


def _first_fit(free: np.ndarray, demand: np.ndarray) -> int | None:
    """The first server (row of ``free``, shape (servers, R)) with room for ``demand``."""
    fits = np.flatnonzero(np.all(free + _EPS >= demand, axis=1))
    return int(fits[0]) if fits.size else None


def _pack_job(inst: Instance, i: int, worker_free: np.ndarray, ps_free: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """Job i's workers (T, H) and PSs (T, K) packed slot by slot from its arrival, taking the
    capacity out of ``worker_free`` (T, H, R) and ``ps_free`` (T, K, R); None (and nothing
    taken) when it cannot finish by the horizon."""
    T = inst.horizon
    y = np.zeros((T, worker_free.shape[1]), dtype=np.int64)
    z = np.zeros((T, ps_free.shape[1]), dtype=np.int64)
    w_dem, p_dem, gamma = inst.worker_demand[i], inst.ps_demand[i], inst.ps_ratio[i]
    left = int(inst.workload[i])
    saved = worker_free.copy(), ps_free.copy()
    for t in range(int(inst.arrival[i]), T):
        want = min(int(inst.max_workers[i]), left)
        placed = 0
        while placed < want:
            # one more worker may need one more PS: place the PS first, the worker second
            if ps_needed(placed + 1, gamma) > z[t].sum():
                k = _first_fit(ps_free[t], p_dem)
                if k is None:
                    break
                ps_free[t, k] -= p_dem
                z[t, k] += 1
            h = _first_fit(worker_free[t], w_dem)
            if h is None:
                break
            worker_free[t, h] -= w_dem
            y[t, h] += 1
            placed += 1
        # a PS placed for a worker that found no server is given back
        while z[t].sum() > ps_needed(placed, gamma):
            k = int(np.flatnonzero(z[t])[-1])
            z[t, k] -= 1
            ps_free[t, k] += p_dem
        left -= placed
        if left <= 0:
            return y, z
    worker_free[...], ps_free[...] = saved
    return None


def run(instance: Instance) -> Schedule:
    """The greedy schedule of ``instance`` (module docstring)."""
    T = instance.horizon
    worker_free = np.repeat(instance.worker_capacity[None].astype(float), T, axis=0)
    ps_free = np.repeat(instance.ps_capacity[None].astype(float), T, axis=0)
    density = instance.utility_table[:, 0] / np.maximum(instance.workload, 1)
    order = sorted(range(instance.num_jobs), key=lambda i: (-density[i], instance.arrival[i]))
    workers, ps = {}, {}
    for i in order:
        packed = _pack_job(instance, i, worker_free, ps_free)
        if packed is not None:
            workers[i], ps[i] = packed
    return Schedule.from_arrays(instance, "greedy-example", workers, ps,
                                {"order": "value density"})
