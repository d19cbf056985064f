"""The compact MILP for a user's own constraints (``offline.solve(..., customize=fn)``).

A user's rows change the feasible set, so every tightening that is valid only because some
optimal schedule of the *unmodified* model satisfies it must go (``custom_options``):

- ``ps_dominance`` (no idle PS) and ``exact_work`` (no work beyond V_i): a user's row may
  need the extra PS or work;
- ``flow_workers`` (continuous workers, made whole afterwards by a transportation MILP that
  knows nothing of the user's rows) and pattern packing (identical servers merged into one
  unit, spread back over the servers in index order): a row on one server, or on a worker
  count, would be lost on the way back; ``packing = server`` keeps a variable per server;
- ``symmetry`` (identical servers ordered by load): a maintenance window on one of them
  breaks the symmetry;
- and, in ``offline``, the racers (their variants drop rows) and column generation (it
  builds its own model).

What stays is valid for every schedule the model holds (the linking, cumulative and cut
rows, the bounds from capacities). Two things are added: ``exact_completion`` (``c_it`` is
the slot the work first reaches V_i) and ``ps_linking`` (no PS after the last slot), so that
a solution *is* a schedule, as solved: extraction neither trims nor drops anything, and
every row the user added holds for the schedule returned.

The model's domain stays that of the package's MILP: allocations only in a job's useful
window ``a_i … l_i``, at most ``⌈N_i/γ_i⌉`` PSs per job and slot, a job that does not complete
holds nothing, a job that can never earn has no variables. Rows that would force anything
outside it are infeasible.
"""

from __future__ import annotations

from dataclasses import replace

from oasis_opt.model import Schedule

from .common import Options, Prep

#: The options ``custom_options`` sets whatever the caller's say (module docstring).
CUSTOM = {"ps_dominance": False, "exact_work": False, "flow_workers": False,
          "packing": "server", "symmetry": "none", "ps_linking": True,
          "exact_completion": True}

#: One value per variable of the model: {variable name: {index: value}}, others 0.
Point = dict[str, dict[tuple[int, ...], float]]


def custom_options(options: Options | None) -> Options:
    """``options`` (default: the package's) with the settings of ``CUSTOM``."""
    return replace(options or Options(), **CUSTOM)


def point(prep: Prep, schedule: Schedule) -> Point | None:
    """The model's variables for ``schedule`` (built with ``custom_options``): ``y``, ``z``
    from its allocations, ``c_iτ = 1`` at each completion slot τ and ``s_it = 1`` for
    ``e_i ≤ t ≤ τ``, the work done ``P_it = Σ_{t' ≤ t} W_it'`` and the windows ``U_it``
    (``Prep.window_step``, from ``U_{i,l_i} = 0`` down). None when the model cannot hold the
    schedule: a job holding servers without completing within its window, or an allocation
    the model has no variable for."""
    if prep.packing != "server":
        raise ValueError("point() needs a model built per server (custom_options)")
    inst = prep.instance
    y: dict[tuple[int, ...], float] = {}
    z: dict[tuple[int, ...], float] = {}
    c: dict[tuple[int, ...], float] = {}
    s: dict[tuple[int, ...], float] = {}
    p: dict[tuple[int, ...], float] = {}
    u: dict[tuple[int, ...], float] = {}
    completion: dict[int, int] = {}
    for jr in schedule.jobs:
        i = inst.job_index[jr.id]
        held = [a for a in jr.allocations if any(a.workers.values()) or any(a.ps.values())]
        if not held:
            continue
        tau = jr.completion_slot
        if not jr.completed or tau is None or i not in prep.active \
                or not int(prep.earliest[i]) <= tau <= int(prep.latest[i]):
            return None
        completion[i] = tau
        for a in held:
            for name, n in a.workers.items():
                key = (i, inst.worker_index[name], a.slot)
                y[key] = y.get(key, 0.0) + n
            for name, n in a.ps.items():
                key = (i, inst.ps_index[name], a.slot)
                z[key] = z.get(key, 0.0) + n
        c[i, tau] = 1.0
        for t in range(int(prep.earliest[i]), tau + 1):
            s[i, t] = 1.0
    work: dict[tuple[int, int], float] = {}
    for (i, _h, t), n in y.items():
        work[i, t] = work.get((i, t), 0.0) + n
    for i, t in prep.chain_index:
        if i in completion:
            p[i, t] = sum(work.get((i, q), 0.0) for q in range(int(inst.arrival[i]), t + 1))
    windows = set(prep.window_index)  # a_i ≤ t < l_i of every job, or none
    for i in completion:
        later = 0.0  # U_{i,t+1}, 0 at t + 1 = l_i
        for t in range(int(prep.latest[i]) - 1, int(inst.arrival[i]) - 1, -1):
            if (i, t) not in windows:
                break
            later += sum(coef * s.get((i, q), 0.0) for q, coef in prep.window_step(i, t))
            u[i, t] = later
    return {"y": y, "z": z, "c": c, "s": s, "p": p, "u": u}
