"""The Python API: what the command line does, as functions (docs/python.md).

Every function here checks its arguments before work starts and raises ``InputError`` naming
the parameter (``time_limit: must be a positive number``), never a command-line flag. Heavy
modules (solvers, plotting, traces) are imported when a function first needs them, so
``import oasis_opt`` stays light.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import (
    InputError,
    expect_executor,
    expect_integer,
    expect_number,
    expect_path,
    keywords_checked,
    refuse_unknown_keywords,
)
from .model import Instance, Schedule, check_instance


def _check_kinds(integers: Mapping[str, Any] | None = None,
                 numbers: Mapping[str, Any] | None = None,
                 dicts: Mapping[str, Any] | None = None,
                 paths: Mapping[str, Any] | None = None) -> None:
    """Refuse, naming the parameter, a value of the wrong kind among those given (None is
    each one's default, "not given"): a string where a number goes fails here, not in a
    comparison deep inside."""
    for place, value in (integers or {}).items():
        if value is not None:
            expect_integer(place, value)
    for place, value in (numbers or {}).items():
        if value is not None:
            expect_number(place, value)
    for place, value in (paths or {}).items():
        if value is not None:
            expect_path(place, value)
    for place, value in (dicts or {}).items():
        if value is not None and not isinstance(value, Mapping):
            raise InputError(place, f"expected a dict {{KEY: VALUE}}, got "
                                    f"{type(value).__name__}")


@dataclass(frozen=True)
class Solution:
    """An offline solve: the validated ``schedule`` and its ``report`` (status, objective,
    bound, gap, seconds, history, route). Unpacks as ``schedule, report = solve(...)``."""

    schedule: Schedule
    report: Any  # offline.SolveReport

    def __iter__(self) -> Iterator[Any]:
        return iter((self.schedule, self.report))

    @property
    def status(self) -> str:
        return str(getattr(self.report.status, "value", self.report.status))

    @property
    def objective(self) -> float:
        return float(self.report.objective)

    @property
    def bound(self) -> float:
        return float(self.report.bound)

    def to_records(self) -> list[dict[str, Any]]:
        """One row per job: the schedule's (``Schedule.to_records``) with the solve's status,
        objective and bound."""
        head = {"status": self.status, "objective": self.objective, "bound": self.bound}
        return [{**head, **row} for row in self.schedule.to_records()]

    def to_dataframe(self) -> Any:
        """``to_records()`` as a pandas DataFrame (needs pandas)."""
        from .records import dataframe
        return dataframe(self.to_records())


@keywords_checked
def generate(preset: str, *, seed: int = 0, jobs: int | None = None,
             horizon: int | None = None, servers: int | None = None, name: str | None = None,
             max_share: float | None = None) -> Instance:
    """A random instance of ``preset`` (``small``, ``testbed``, ``paper``, ``hard``, …); the
    same arguments give the same instance. ``jobs``, ``horizon``, ``servers`` override the
    preset's sizes; ``max_share`` scales the servers so that one worker or PS takes at most
    that share of any server resource (OASiS's regime). Named ``PRESET-sSEED`` plus each
    size given (``small-s3-j5``) unless ``name`` is given."""
    from .generator import generate as _generate
    return _generate(preset, seed=seed, jobs=jobs, horizon=horizon, servers=servers,
                     name=name, max_share=max_share)


def solve(instance: Instance, *, time_limit: float | None = None, mip_gap: float = 0.0,
          modeler: str = "auto", method: str = "auto", solver: str = "highs",
          customize: Callable[[Any], None] | None = None, opt_cache: str | Path | None = None,
          on_progress: Callable[[float, float | None, float], None] | None = None,
          **options: Any) -> Solution:
    """The offline optimum of ``instance`` (or, with ``time_limit`` seconds, the best schedule
    found and a valid bound), validated.

    ``customize(model)`` is called on the built model before the solve (the Pyomo model, or
    the PuLP problem with ``modeler="pulp"``) to add your own rows over its job-level
    components (docs/offline.md "Your own constraints"); ``opt_cache`` (a folder) reuses a
    result solved before with the same instance and settings. ``on_progress(seconds,
    incumbent, bound)`` is called as either side improves. Other keywords go to
    ``offline.solve`` unchanged; one it does not take either is an ``InputError`` naming it."""
    from . import optcache
    from .offline import solve as offline_solve
    own = [k for k, p in inspect.signature(solve).parameters.items() if p.kind != p.VAR_KEYWORD]
    passed = [k for k in inspect.signature(offline_solve).parameters if k not in own]
    refuse_unknown_keywords("solve", options, own + passed)
    check_instance(instance)
    _check_kinds(paths={"opt_cache": opt_cache})
    if customize is not None:
        if not callable(customize):
            raise InputError("customize", f"must be a function of the model, got "
                                          f"{type(customize).__name__}")
        if opt_cache is not None:
            raise InputError("opt_cache", "cannot cache a customized model (the cache key "
                                          "cannot see your rows); leave one of them out")
        options["customize"] = customize
    if on_progress is not None:
        options["on_progress"] = on_progress
    schedule, report = optcache.solve(instance, opt_cache,
                                      time_limit=time_limit, mip_gap=mip_gap, modeler=modeler,
                                      method=method, solver=solver, **options)
    return Solution(schedule, report)


#: An algorithm as ``run`` and ``compare`` take it: a name, or the function itself.
_Algorithm = str | Callable[..., Schedule]


def run(instance: Instance, algorithm: _Algorithm, **params: Any
        ) -> Schedule:
    """Run one algorithm (a built-in name, a registered one, an installed entry point,
    ``"module:function"``, or the function itself) with keyword ``params``; the schedule is
    validated and carries ``extras["seconds"]``."""
    from . import algorithms
    from .io import check_schedule_size
    if isinstance(instance, Instance):  # (anything else is algorithms.run's to refuse)
        check_schedule_size(instance, algorithms=[algorithm])
    return algorithms.run(algorithm, instance, **params)


@keywords_checked
def compare(instance: Instance,
            algorithms: _Algorithm | Sequence[_Algorithm]
            | Mapping[_Algorithm, Mapping[str, Any] | None] | None = None, *,
            time_limit: float | None = None, modeler: str = "auto",
            solver: str = "highs", opt_cache: str | Path | None = None,
            method: str = "auto",
            on_progress: Callable[[float, float | None, float], None] | None = None,
            on_schedule: Callable[[Schedule], None] | None = None,
            on_solve: Callable[[Callable[[Any], Any]], None] | None = None) -> Any:
    """OPT (or its bound) against each algorithm: ``algorithms`` is one name, a list of names
    or ``{name: params}``, a function standing for a name anywhere (default every named
    algorithm). ``time_limit`` bounds the whole
    call, the algorithms included (``ratio.compare``). ``method`` goes to the offline solve;
    ``on_progress`` and ``on_schedule`` hear it as in ``solve`` (every algorithm's schedule is
    told as it is made), and ``on_solve(report_of)`` is told, before the algorithms run, how
    to make the report from a solve report of your own (and the algorithms that have run by
    then). Returns a ``RatioReport`` (``rows``, ``to_records()``,
    ``to_dataframe()``)."""
    from .ratio import compare as _compare
    check_instance(instance)
    _check_kinds(paths={"opt_cache": opt_cache})
    return _compare(instance, algorithms, time_limit=time_limit, modeler=modeler,
                    solver=solver, opt_cache=opt_cache, method=method,
                    on_progress=on_progress, on_schedule=on_schedule, on_solve=on_solve)


def import_trace(format: str, path: str | Path, *, jobs: int | str | None = 40, start: int = 0,
                 horizon: int | None = None, slot_seconds: float | None = None,
                 load: float = 1.5, servers: int | None = None, **options: Any) -> Instance:
    """An instance from a public job trace (``philly``, ``gavel``, ``pollux``, ``tiresias``,
    ``alibaba``; docs/traces.md). ``jobs="all"`` (or None) takes every usable job from
    ``start`` on. ``horizon`` and ``slot_seconds`` left as None take the importer's defaults
    (100 slots; above 100 jobs a slot length and horizon from the trace's span and
    durations). The mapping's other fields (``elastic``, ``efficiency``, ``utility``,
    ``slack``, ``urgency``, ``value``, ``skip_bad``, ``name``) and the format's own options
    (``cluster``, ``throughputs``, ``gpu_type``, ``nodes``, …) are keywords."""
    from .traces import Policy
    from .traces import import_trace as _import
    fields = set(Policy.__dataclass_fields__)
    if isinstance(jobs, str):
        if jobs != "all":
            raise InputError("jobs", f"expected a number of jobs or 'all', got {jobs!r}")
        jobs = None
    expect_path("path", path)
    _check_kinds(integers={"jobs": jobs, "start": start, "horizon": horizon,
                           "servers": servers},
                 numbers={"slot_seconds": slot_seconds, "load": load})
    policy = Policy(jobs=jobs, start=start, horizon=horizon, slot_seconds=slot_seconds,
                    load=load, servers=servers,
                    **{k: v for k, v in options.items() if k in fields})
    rest = {k: v for k, v in options.items() if k not in fields}
    return _import(format, path, policy, **rest).instance


@keywords_checked
def adversary(algorithm: str, *, jobs: int = 4, horizon: int = 6, worker_servers: int = 2,
              ps_servers: int = 1, max_share: float | None = None,
              evaluations: int | None = None, budget: float | None = None, seed: int = 0,
              time_limit: float = 10.0, params: Mapping[str, Any] | None = None,
              executor: Any = None, progress: bool = False) -> Any:
    """Search small instances for a high OPT/ALG of ``algorithm`` (exact OPT per candidate);
    returns an ``AdversaryResult`` (``ratio``, ``opt``, ``alg``, ``instance`` as a dict,
    ``random_ratio``, the trajectory)."""
    from .adversary_search import SearchSpace, search
    _check_kinds(integers={"jobs": jobs, "horizon": horizon, "worker_servers": worker_servers,
                           "ps_servers": ps_servers, "evaluations": evaluations, "seed": seed},
                 numbers={"max_share": max_share, "budget": budget, "time_limit": time_limit},
                 dicts={"params": params})
    expect_executor("executor", executor)
    space = SearchSpace(jobs=jobs, horizon=horizon, worker_servers=worker_servers,
                        ps_servers=ps_servers, max_share=max_share)
    return search(algorithm, space=space, evaluations=evaluations, budget=budget, seed=seed,
                  executor=executor, progress=progress, time_limit=time_limit, params=params)


@keywords_checked
def sweep(grid: Mapping[str, Any] | str | Path | Any, *, out: str | Path | None = None,
          workers: int | None = 0, dask: str | None = None, progress: bool = False,
          base: str | Path = ".", opt_cache: str | Path | None = None) -> Any:
    """Run (or resume) a sweep grid — a dict with the fields of a grid file (SPEC §6), a grid
    file's path, or a ``Grid`` — and return a ``SweepResult`` (``summary``, ``csv``,
    ``to_records()``, ``to_dataframe()``). ``workers=0`` (default) runs in this process;
    ``None`` uses every core; ``dask`` a Dask scheduler's address or ``"local"``. Relative
    paths in a dict are taken from ``base``; ``opt_cache`` (a folder) reuses the reference
    optima solved before with the same instance and settings."""
    from .grid import Grid, SweepResult, load
    _check_kinds(integers={"workers": workers},
                 paths={"out": out, "base": base, "opt_cache": opt_cache})
    if isinstance(grid, Mapping):
        g = Grid.from_dict(dict(grid), base=base)
    elif isinstance(grid, str | Path):
        loaded = load(grid)
        if not isinstance(loaded, Grid):
            raise InputError("grid", f"{str(grid)!r} is an experiment config, not a grid; use "
                                     "oasis_opt.experiments.run_experiment")
        g = loaded
    elif isinstance(grid, Grid):
        g = grid
    else:
        raise InputError("grid", f"expected a dict, a grid file or a Grid, got "
                                 f"{type(grid).__name__}")
    result: SweepResult = g.run(out=out, workers=workers, dask=dask, progress=progress,
                                opt_cache=opt_cache)
    return result


@keywords_checked
def verify(space: Mapping[str, Any] | str | Path, algorithm: str, *, out: str | Path,
           params: Mapping[str, Any] | None = None, max_instances: int | None = None,
           max_share: float | None = None, time_limit: float | None = None,
           executor: Any = None, progress: bool = False) -> Any:
    """The exact maximum of OPT/ALG over every instance of a finite space (a dict with the
    fields of an ``oasis-space/1`` file, or its path), each OPT proven; resumable in ``out``.
    Returns a ``VerifyResult`` (``max_ratio``, ``counts``, ``argmax``, ``summary()``);
    ``max_instances`` refuses a larger space before anything runs (docs/toolbox.md)."""
    from . import algorithms, verifier
    if not isinstance(space, Mapping | str | Path):
        raise InputError("space", f"expected a dict or a path to an oasis-space/1 file, got "
                                  f"{type(space).__name__}")
    _check_kinds(integers={"max_instances": max_instances},
                 numbers={"max_share": max_share, "time_limit": time_limit},
                 dicts={"params": params})
    expect_path("out", out)  # required: None is no folder
    expect_executor("executor", executor)
    s = verifier.space_from_dict(dict(space)) if isinstance(space, Mapping) \
        else verifier.load_space(space)
    limit = verifier.DEFAULT_MAX_INSTANCES if max_instances is None else max_instances
    algorithms.check(algorithm)
    verifier.check_size(s, limit)
    extra = {} if time_limit is None else {"time_limit": time_limit}
    return verifier.verify(s, algorithm, out=out, params=params, max_instances=limit,
                           max_share=max_share, executor=executor, progress=progress, **extra)


__all__ = ["Solution", "adversary", "compare", "generate", "import_trace", "run", "solve",
           "sweep", "verify"]
