"""Your own constraints (``solve(..., customize=fn)``): the compact MILP with the user's rows
on Pyomo or PuLP and HiGHS, and the schedule exactly as solved (docs/offline.md, "Your own
constraints"; ``formulations/custom.py`` for what changes in the model)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..errors import InputError, SolverError
from ..formulations.highs import SECOND, presolve_off
from ..formulations.result import SolveResult
from ..model import Instance, Schedule
from .backends import ROUTES
from .clock import Clock, Tracker
from .plan import solve_bytes
from .report import SolveReport, SolveStatus, below, finish, second_opinion, solved_again

# --- your own constraints (customize) -----------------------------------------------------


def customize_route(customize: Any, modeler: str, method: str, solver: str) -> str:
    """The modeller a customized solve builds with: PuLP if asked, else Pyomo. The routes
    that cannot carry a user's rows are refused, naming the parameter."""
    if not callable(customize):
        raise InputError("customize", f"must be a function taking the model, got "
                                      f"{type(customize).__name__}")
    if modeler == "highspy":
        raise InputError("modeler", "customize adds rows to a Pyomo or PuLP model: use "
                                    "pyomo (the default with customize) or pulp")
    if method == "colgen":
        raise InputError("method", "column generation builds its own model and cannot take "
                                   "the rows of customize: use compact or auto")
    if solver != "highs":
        raise InputError("solver", "customize runs HiGHS only")
    return "pulp" if modeler == "pulp" else "pyomo"


def solve_custom(instance: Instance, modeler: str, clock: Clock, tracker: Tracker,
                 mip_gap: float, options: Any, floor: Schedule | None,
                 customize: Callable[[Any], Any]) -> tuple[Schedule, SolveReport]:
    """The compact MILP with the user's rows, on Pyomo or PuLP and HiGHS, never raced nor
    handed to highspy (``formulations/custom.py`` for what changes). The solution is
    returned exactly as solved; the floor (its jobs that earn nothing left out) and the
    empty schedule are candidates only if they keep every row of the customized model."""
    from ..formulations.common import prepare
    from ..formulations.custom import custom_options
    from ..limits import check_allocation
    from ..validate import overfilled

    t0 = time.perf_counter()
    prep = prepare(instance, custom_options(options))
    size = prep.model_size()
    check_allocation("instance", solve_bytes(size["nonzeros"], modeler),
                     f"the compact MILP ({size['columns']} columns, {size['rows']} rows, "
                     f"{size['nonzeros']} nonzeros)")
    tracker.update(bound=prep.upper_bound())
    empty = Schedule.from_arrays(instance, "none", {}, {})
    candidates = ([_earning(instance, floor)] if floor is not None else []) + [empty]
    kept: list[Schedule] = []
    hook = _user_rows(customize, modeler, candidates, tracker, kept)
    try:
        if prep.active:
            raw = ROUTES[modeler](prep, clock, tracker, mip_gap, customize=hook)
        else:  # no job can earn: the model has no variables, the empty schedule is all
            from ..formulations import compact_pulp, compact_pyomo
            hook((compact_pulp if modeler == "pulp" else compact_pyomo).build(
                instance, prep=prep))
            if not kept:
                raise SolverError("Infeasible")
            raw = SolveResult(SolveStatus.OPTIMAL, 0.0, 0.0, solver=modeler)
    except SolverError as exc:
        if "nfeasible" in str(exc):  # the user's rows leave no schedule
            raise InputError("customize", f"with the rows of {_name_of(customize)} the model "
                                          f"of {instance.name} has no solution ({exc})") from None
        raise
    prep_seconds = time.perf_counter() - t0 - raw.build_seconds - raw.handover_seconds \
        - raw.solve_seconds
    schedule = _as_solved(prep, raw)
    best = kept[0] if kept else None
    if raw.values and (overfilled(instance, schedule) or (
            raw.status is SolveStatus.OPTIMAL and mip_gap == 0 and below(best, schedule))):
        # over capacity, or a proven optimum below a schedule that keeps the rows: HiGHS's
        # defaults failed the model (report.solved_again)
        raw, schedule = solved_again(
            instance, raw, tracker, None if best is None else best.total_utility,
            lambda: ROUTES[modeler](prep, clock, tracker, mip_gap, customize=hook,
                                    careful=True),
            lambda r: _as_solved(prep, r))
    elif raw.values and raw.status is SolveStatus.OPTIMAL and presolve_off(instance):
        # an optimum proven without presolve, checked by a solve with it (report.py)
        raw, schedule = second_opinion(
            instance, raw, schedule, tracker, clock,
            lambda c: ROUTES[modeler](prep, c, tracker, mip_gap, customize=hook,
                                      careful=SECOND),
            lambda r: _as_solved(prep, r))
    if not raw.values and not kept:
        raise SolverError(f"no schedule that keeps the rows of {_name_of(customize)} was "
                          f"found for {instance.name} within the time limit")
    tracker.update(incumbent=schedule.total_utility if raw.values else None, bound=raw.bound)
    chosen = None
    best = kept[0] if kept else None  # the second solve's build may have found one
    if below(best, schedule):
        earned, schedule, chosen = schedule.total_utility, best, str(best.algorithm)
        if raw.status is SolveStatus.OPTIMAL and mip_gap == 0:  # a wrong model: say so
            raise SolverError(f"the proven optimum of the customized {instance.name} (the "
                              f"solver's objective {raw.objective}, its schedule {earned}) "
                              f"is below {chosen}'s schedule ({schedule.total_utility})")
    raw = replace(raw, build_seconds=prep_seconds + raw.build_seconds,
                  extras={"solver": "highs", "customized": _name_of(customize)})
    return finish(instance, raw, schedule, tracker, clock, prep.upper_bound(), modeler,
                  "compact", f"compact/{modeler}/custom", chosen)


def _name_of(fn: Any) -> str:
    """How a message names the user's function: ``customize function 'mymod.cap'``."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    return f"customize function {(f'{module}.' if module else '') + name!r}"


def _user_rows(customize: Callable[[Any], Any], modeler: str, candidates: list[Schedule],
               tracker: Tracker, kept: list[Schedule]) -> Callable[[Any], None]:
    """What the route calls on its built model: ``customize`` on the user's view of it (the
    Pyomo model, or PuLP's problem), errors named; then the objective must be untouched, and
    the first candidate (best first) whose variable values keep every bound and row of the
    customized model goes into ``kept`` and to the tracker."""
    from ..formulations import compact_pulp, compact_pyomo
    from ..formulations.custom import point

    def hook(model: Any) -> None:
        target = model.problem if modeler == "pulp" else model
        objective = _objective_of(target, modeler)
        before = _components_of(target, modeler)
        rows = _rows_of(target, modeler)
        try:
            customize(target)
        except Exception as exc:  # the user's code: any failure is named, not a traceback
            raise InputError("customize", f"{_name_of(customize)} raised "
                                          f"{type(exc).__name__}: {exc}") from exc
        if _objective_of(target, modeler) != objective:
            raise InputError("customize", f"{_name_of(customize)} changed the objective; the "
                                          f"solve maximises the total utility: add rows or "
                                          f"bounds only")
        after = _components_of(target, modeler)
        replaced = sorted(name for name, ident in before.items() if after.get(name) != ident)
        if replaced:  # e.g. ``m.c = Constraint(…)`` over the model's completion variables c
            raise InputError("customize", f"{_name_of(customize)} replaced or removed the "
                                          f"model's {', '.join(map(repr, replaced))}; give "
                                          f"your own rows names the model does not use")
        dropped = rows - _rows_of(target, modeler)
        if dropped:  # the capacity rows deactivated: the solution would break the model
            raise InputError("customize", f"{_name_of(customize)} deactivated or removed "
                                          f"{len(dropped)} of the model's own rows (e.g. "
                                          f"{min(dropped)!r}); add rows or bounds only")
        satisfies = compact_pulp.satisfies if modeler == "pulp" else compact_pyomo.satisfies
        for schedule in sorted(candidates, key=lambda s: -s.total_utility):
            values = point(model.prep, schedule)
            if values is not None and satisfies(model, values):
                kept.append(schedule)
                tracker.update(incumbent=schedule.total_utility)
                break
    return hook


def _components_of(target: Any, modeler: str) -> dict[str, int]:
    """The model's own named parts, by identity: Pyomo's components; the attributes our
    build put on the PuLP problem (the job-level components), not PuLP's own."""
    if modeler == "pulp":
        import pulp
        own = set(vars(pulp.LpProblem()))
        return {k: id(v) for k, v in vars(target).items() if k not in own}
    return {c.local_name: id(c) for c in target.component_objects(descend_into=False)}


def _rows_of(target: Any, modeler: str) -> set[str]:
    """The names of the model's active rows (PuLP's constraints; Pyomo's active
    constraints)."""
    if modeler == "pulp":
        from ..formulations.compact_pulp import row_names
        return set(row_names(target))
    import pyomo.environ as pyo
    return {c.name for c in target.component_data_objects(pyo.Constraint, active=True)}


def _objective_of(target: Any, modeler: str) -> tuple[Any, ...]:
    """What identifies the objective: PuLP's objective and sense; Pyomo's active objectives
    and their expressions and senses."""
    if modeler == "pulp":
        return (id(target.objective), target.sense)
    import pyomo.environ as pyo
    return tuple((id(o), id(o.expr), int(o.sense))
                 for o in target.component_data_objects(pyo.Objective, active=True))


def _earning(instance: Instance, schedule: Schedule) -> Schedule:
    """``schedule`` without the jobs that earn nothing (the customized model holds no
    allocation of a job that does not complete in its useful window)."""
    y, z = schedule.to_arrays(instance)
    keep = [instance.job_index[jr.id] for jr in schedule.jobs
            if jr.completed and jr.utility > 0]
    return Schedule.from_arrays(instance, schedule.algorithm, {i: y[i] for i in keep},
                                {i: z[i] for i in keep}, schedule.extras)


def _as_solved(prep: Any, raw: SolveResult) -> Schedule:
    """The schedule exactly as solved by a customized model (one variable per server,
    ``exact_completion``): counts rounded, nothing trimmed or dropped, so every row the user
    added holds for it. Its completion slots are the model's ``c``; a difference would mean
    a wrong model, and is raised."""
    import numpy as np

    inst = prep.instance
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    workers: dict[int, np.ndarray] = {}
    ps: dict[int, np.ndarray] = {}
    finish: dict[int, int] = {}
    if raw.values:
        y, z, _, _, c = raw.values
        for values, out, width in ((y, workers, H), (z, ps, K)):
            for (i, h, t), v in values.items():
                n = round(v or 0.0)
                if n > 0:
                    out.setdefault(i, np.zeros((T, width), dtype=np.int64))[t, h] += n
        finish = {i: t for (i, t), v in c.items() if v is not None and v > 0.5}
    for i in set(workers) | set(ps):
        workers.setdefault(i, np.zeros((T, H), dtype=np.int64))
        ps.setdefault(i, np.zeros((T, K), dtype=np.int64))
    schedule = Schedule.from_arrays(inst, "optimal", workers, ps)
    for i, jr in enumerate(schedule.jobs):
        if jr.completion_slot != finish.get(i):
            raise SolverError(f"the customized model of {inst.name} completes job {jr.id!r} "
                              f"in slot {finish.get(i)}, its solved allocation in slot "
                              f"{jr.completion_slot}")
    return schedule
