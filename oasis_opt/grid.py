"""``oasis-opt sweep GRID``: the user's own experiment grid (SPEC §6), and the built-in
experiments' configs.

A grid file (JSON, or TOML with the same fields) names

- ``instances``: files and globs (relative to the grid file), generator presets
  ``{"preset": P, "seeds": [0, 1] | K, "jobs": N | [N, …], "horizon": …, "servers": …}`` (lists
  make a grid over sizes), and trace imports ``{"trace": FORMAT, "file": F, …}`` with the
  options of ``oasis-opt import`` (``jobs``, ``start``, ``horizon``, ``slot_seconds``, …, and
  the format's own: ``cluster``, ``throughputs``, ``nodes`` …);
- ``algorithms``: ``{NAME: {PARAM: VALUE | [VALUE, …]}}``, every combination of the lists;
- ``reference``: ``{"solve": {"time_limit": S, "solver": …, "method": …, "mip_gap": …}}`` or
  ``null`` (``"none"`` in TOML, which has no null): the offline optimum or bound of each
  instance, solved once per instance;
- ``out``: the output folder (``--out`` overrides it).

It writes ``OUT/results.csv``: one row per (instance, algorithm, parameter combination) with
``COLUMNS``. ``opt`` is the proven optimum (empty when the solve stopped early or there is no
reference), ``bound`` an upper bound on OPT, ``opt_over_alg = OPT/ALG`` with the proven optimum,
else ``bound/ALG`` (an upper bound on the ratio), empty without a reference. Rows are keyed by
(instance, algorithm, params): a rerun computes only what is missing. Tasks run on the sweep
executors (``tasks.make_executor``: process pool, Dask), one task per instance.

Every field is checked before anything runs (pydantic, unknown fields refused, numbers strict as
in SPEC §5; instance files read, traces imported, each algorithm's parameters tried on a one-job
instance): a bad grid is refused with the field named and nothing is written. Before the first
task, each instance's schedules are sized against the memory limit (``check_schedule_sizes``).

The built-in experiments' configs ``{"experiment", "seeds", "quick", "out"}`` still run
(``run_experiment``); this module, not ``sweep``, imports ``experiments``, so that
``experiments → sweep`` stays the only direction.
"""

from __future__ import annotations

import glob
import itertools
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from .errors import AlgorithmError, InputError, expect_path
from .io import (
    JSON_MEMORY_FACTOR,
    Count,
    Flag,
    Name,
    Pos,
    PosInt,
    ensure_folder,
    nesting,
    read_input,
    read_json,
    schema_message,
)
from .tasks import ResultStore, check_workers, make_executor, run_tasks

GRID_FORMAT = "oasis-sweep/1"
COLUMNS = ("instance", "algorithm", "params", "utility", "completed", "seconds", "opt",
           "bound", "opt_over_alg")
#: the columns a stored row must hold a number in (or nothing): a resumed sweep keeps its rows
NUMBERS = COLUMNS[3:]
RESULTS = "results.csv"


def grid_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (str(row["instance"]), str(row["algorithm"]), str(row["params"]))


def params_key(params: dict[str, Any]) -> str:
    """The ``params`` column: the combination as compact JSON with sorted keys."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


# --- the schema --------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Scalar = Annotated[float, Field(allow_inf_nan=False, strict=True)] | \
    Annotated[int, Field(strict=True)] | Flag | Annotated[str, Field(strict=True)]
Sizes = PosInt | Annotated[list[PosInt], Field(min_length=1)]


class _PresetIn(_Strict):
    preset: Name
    seeds: Annotated[list[Count], Field(min_length=1)] | PosInt = 1
    jobs: Count | Annotated[list[Count], Field(min_length=1)] | None = None
    horizon: Sizes | None = None
    servers: Sizes | None = None


class _TraceIn(_Strict):
    trace: Name
    file: Name
    # the mapping policy (oasis-opt import's options)
    jobs: PosInt | None = None
    start: Count | None = None
    slot_seconds: Pos | None = None
    horizon: PosInt | None = None
    elastic: Pos | None = None
    efficiency: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)] | \
        Annotated[int, Field(ge=0, le=1, strict=True)] | None = None
    utility: Name | None = None
    slack: Pos | None = None
    urgency: Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)] | \
        Annotated[int, Field(ge=0, strict=True)] | None = None
    value: Name | None = None
    load: Pos | None = None
    servers: PosInt | None = None
    skip_bad: Flag | None = None
    name: Name | None = None
    # format options (paths relative to the grid file)
    cluster: Name | None = None
    gpus_per_server: PosInt | None = None
    throughputs: Name | None = None
    gpu_type: Name | None = None
    cluster_spec: Name | None = None
    apps: Name | None = None
    nodes: Name | None = None
    phases: Annotated[list[Name], Field(min_length=1)] | None = None


_POLICY_FIELDS = ("jobs", "start", "slot_seconds", "horizon", "elastic", "efficiency", "utility",
                  "slack", "urgency", "value", "load", "servers", "skip_bad", "name")
_PATH_OPTIONS = ("throughputs", "cluster_spec", "apps", "nodes")


class _SolveIn(_Strict):
    time_limit: Annotated[Pos, Field(le=1e7)] | None = None  # offline.MAX_TIME_LIMIT
    solver: Name = "highs"
    method: Name = "auto"
    mip_gap: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False, strict=True)] | \
        Annotated[int, Field(ge=0, lt=1, strict=True)] = 0.0


class _ReferenceIn(_Strict):
    solve: _SolveIn


def _entry_kind(value: Any) -> str:
    """An ``instances`` entry's kind, by its keys: its errors are then told of its own fields
    (a plain union tried every kind and named another's: "instances[2].preset: missing
    field" for a trace's bad ``efficiency``)."""
    if isinstance(value, dict):
        return "trace-entry" if "trace" in value else "preset-entry"
    return "file-entry"


_Entry = Annotated[Annotated[Name, Tag("file-entry")] | Annotated[_PresetIn, Tag("preset-entry")]
                   | Annotated[_TraceIn, Tag("trace-entry")], Discriminator(_entry_kind)]


class _GridIn(_Strict):
    format: Literal["oasis-sweep/1"]
    instances: Annotated[list[_Entry], Field(min_length=1)]
    algorithms: Annotated[dict[str, dict[str, Scalar | Annotated[list[Scalar],
                                                                  Field(min_length=1)]]],
                          Field(min_length=1)]
    reference: _ReferenceIn | Literal["none", False] | None
    out: Name | None = None


_BRANCH_TAGS = {"str", "int", "float", "bool", "list", "dict", "constrained-str", "none",
                "file-entry", "preset-entry", "trace-entry"}


def _place(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and (any(c in part for c in "[(,") or part.startswith(
                ("_", "function-", "constrained-")) or part in _BRANCH_TAGS):
            continue  # pydantic's name for a branch of a union, not a place in the file
        else:
            out += f".{part}" if out else str(part)
    return out


def _first_error(err: ValidationError) -> InputError:
    """The most telling error of a union's branches: our own checks' messages first (the
    value's rule), then pydantic's, and among them the deepest place in the file."""
    errors = err.errors(include_url=False)

    def rank(x: Any) -> tuple[int, int]:
        generic = x["type"] in ("list_type", "dict_type", "string_type", "model_type",
                                "model_attributes_type", "is_instance_of")
        return (0 if generic else 1 if x["type"] != "value_error" else 2,
                len(_place(tuple(x["loc"]))))
    e = max(errors, key=rank)
    place = _place(tuple(e["loc"]))
    if e["type"] == "literal_error" and place == "format":
        return InputError(place, f"expected {GRID_FORMAT!r}, got {e.get('input')!r}")
    return InputError(place, schema_message(e))


# --- what a grid resolves to ---------------------------------------------------------------


@dataclass(frozen=True)
class Combo:
    algorithm: str
    params: dict[str, Any]

    @property
    def key(self) -> str:
        return params_key(self.params)


@dataclass(frozen=True)
class GridTask:
    """One instance and the (algorithm, params) combinations still to run on it. Duck-types
    ``tasks.Task`` for ``run_tasks`` (``keys``); pickled to workers whole, instance included."""

    label: str
    instance: Any  # model.Instance
    combos: tuple[Combo, ...]
    reference: dict[str, Any] | None = None
    experiment: str = "grid"
    params: dict[str, Any] = field(default_factory=dict)
    #: folder of cached optima for the reference solve (``optcache``), an absolute path so
    #: that worker processes find it whatever their current directory; None: solve always
    opt_cache: str | None = None

    def keys(self) -> set[tuple[str, str, str]]:
        return {(self.label, c.algorithm, c.key) for c in self.combos}


@dataclass(frozen=True)
class Grid:
    """A checked grid: labelled instances, algorithm combinations, reference, output folder."""

    instances: tuple[tuple[str, Any], ...]
    combos: tuple[Combo, ...]
    reference: dict[str, Any] | None
    out: Path | None

    @classmethod
    def from_dict(cls, data: dict[str, Any], base: str | Path = ".") -> Grid:
        """A grid from the fields of a grid file (SPEC §6), checked as a file is; relative
        instance paths and ``out`` are taken from ``base`` (default the current folder)."""
        expect_path("base", base)
        return _grid_from_dict(data, Path(base).resolve())

    def run(self, *, out: str | Path | None = None, workers: int | None = None,
            dask: str | None = None, progress: bool = False,
            opt_cache: str | Path | None = None) -> SweepResult:
        """Run (or resume) the grid; returns the result, rows included. ``opt_cache``: a
        folder of cached optima for the reference solves (``oasis_opt.optcache``)."""
        return SweepResult(run_grid(self, out=out, workers=workers, dask=dask,
                                    progress=progress, opt_cache=opt_cache))

    def tasks(self, done: set[tuple[str, ...]], opt_cache: str | Path | None = None
              ) -> list[GridTask]:
        """The tasks still to run; their reference solves go through ``opt_cache``."""
        cache = None if opt_cache is None else str(Path(opt_cache).resolve())
        out = []
        for label, inst in self.instances:
            todo = tuple(c for c in self.combos if (label, c.algorithm, c.key) not in done)
            if todo:
                out.append(GridTask(label, inst, todo, self.reference, opt_cache=cache))
        return out


def _read_grid(path: Path) -> Any:
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise InputError(str(path), "TOML grids need Python 3.11 or later; write it as "
                                        "JSON") from None
        from .limits import human, max_memory
        raw = read_input(path, "sweep grid", int(max_memory() // JSON_MEMORY_FACTOR),
                         f"the most the memory limit {human(max_memory())} lets parse "
                         "(raise it with --max-memory)")
        deep = InputError(str(path), "not valid TOML: nested too deeply")
        try:
            text = raw.decode("utf-8-sig")  # a byte-order mark, as read_json takes one
            if _key_depth(text) > MAX_TOML_DEPTH:  # tomllib takes quadratic time on them
                raise deep
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(str(path), f"not valid TOML: {exc}") from None
        except RecursionError:
            raise deep from None
        if nesting(data) > MAX_TOML_DEPTH:
            raise deep
        return data
    return read_json(path, "sweep grid")


#: The deepest a TOML grid may nest (tables, arrays, dotted keys): a grid needs a handful of
#: levels; 50000 dotted keys took tomllib 25 s and made messages recurse past Python's limit.
MAX_TOML_DEPTH = 100


def _key_depth(text: str) -> int:
    """The most dots in one line's key (before its ``=``, or a ``[table]`` header): an upper
    bound on the nesting dotted keys make, found without parsing."""
    most = 0
    for line in text.splitlines():
        key = line.split("=", 1)[0] if "=" in line else \
            line if line.lstrip().startswith("[") else ""
        most = max(most, key.count("."))
    return most


def load(path: str | Path) -> Grid | dict[str, Any]:
    """A grid (``Grid``), or a built-in experiment's config (a dict: ``experiment``, ``seeds``,
    ``quick``, ``out``: the folder, relative to the config file). Raises ``InputError``
    naming the field for anything wrong."""
    path = Path(path)
    data = _read_grid(path)
    if not isinstance(data, dict):
        raise InputError(str(path), "a sweep config must be an object")
    if "experiment" in data and "format" not in data:
        config = load_experiment_config(data)
        # relative to the config file, as a grid's paths are (it was the working folder)
        return {**config, "out": str(path.resolve().parent / config["out"])}
    return Grid.from_dict(data, base=path.resolve().parent)


def _grid_from_dict(data: dict[str, Any], base: Path) -> Grid:
    if not isinstance(data, dict):
        raise InputError("grid", f"a grid must be a dict, got {type(data).__name__}")
    if "format" not in data:
        raise InputError("format", f"missing field (a grid needs \"format\": {GRID_FORMAT!r}; "
                                   "a built-in experiment needs \"experiment\")")
    entries = data.get("instances")
    for k, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, str | dict) or isinstance(entry, dict) and \
                not {"preset", "trace"} & set(entry):
            raise InputError(f"instances[{k}]", 'expected a file name or glob, {"preset": …} '
                                                'or {"trace": FORMAT, "file": …}')
    try:
        raw = _GridIn.model_validate(data)
    except ValidationError as err:
        raise _first_error(err) from None
    instances = _instances(raw.instances, base)
    combos = _combos(raw.algorithms)
    reference = _reference(raw.reference)
    out = None if raw.out is None else base / raw.out
    return Grid(instances, combos, reference, out)


def _instances(entries: list[Any], base: Path) -> tuple[tuple[str, Any], ...]:
    from .io import load_instance
    out: list[tuple[str, Any]] = []
    for k, entry in enumerate(entries):
        place = f"instances[{k}]"
        if isinstance(entry, str):
            pattern = str(base / Path(entry).expanduser())  # an absolute entry stays as it is
            files = sorted(glob.glob(pattern)) if glob.has_magic(entry) else [pattern]
            if not files:
                raise InputError(place, f"no file matches {entry!r} (relative to the grid "
                                        "file)")
            for f in files:
                label = _label(Path(f), base)
                try:
                    inst = load_instance(f)
                except InputError as err:
                    why = err.message if err.place == f else str(err)
                    raise InputError(place, f"{label}: {why}") from None
                out.append((label, inst))
        elif isinstance(entry, _PresetIn):
            out.extend(_presets(entry, place))
        else:
            out.append(_trace(entry, base, place))
    labels = [label for label, _ in out]
    for n, label in enumerate(labels):
        if label in labels[:n]:
            raise InputError(f"instances[{_entry_of(entries, n)}]",
                             f"instance {label!r} is listed twice")
    return tuple(out)


def _label(path: Path, base: Path) -> str:
    """An instance file's label: relative to the grid's folder where it lies below it, else
    the absolute path (a grid may name files anywhere)."""
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path.resolve())


def _entry_of(entries: list[Any], n: int) -> int:
    return min(n, len(entries) - 1)


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list) else [x]


#: The most instances one preset entry draws (seeds × sizes): all are held in memory, and
#: the built-in experiments take at most as many seeds.
MAX_PRESET_INSTANCES = 100_000


def _presets(entry: Any, place: str) -> list[tuple[str, Any]]:
    from .generator import generate, instance_name
    count = len(entry.seeds) if isinstance(entry.seeds, list) else entry.seeds
    sizes = math.prod(len(_as_list(x)) for x in (entry.jobs, entry.horizon, entry.servers))
    if count * sizes > MAX_PRESET_INSTANCES:  # before drawing any of them
        raise InputError(f"{place}.seeds", f"{count} seeds × {sizes} sizes are "
                                           f"{count * sizes} instances, more than "
                                           f"{MAX_PRESET_INSTANCES}")
    seeds = entry.seeds if isinstance(entry.seeds, list) else list(range(entry.seeds))
    out = []
    for jobs, horizon, servers in itertools.product(
            _as_list(entry.jobs), _as_list(entry.horizon), _as_list(entry.servers)):
        for seed in seeds:
            label = instance_name(entry.preset, seed, jobs, horizon, servers)
            try:
                inst = generate(entry.preset, seed=seed, jobs=jobs, horizon=horizon,
                                servers=servers, name=label)
            except InputError as err:
                field_ = err.place.lstrip("-") if err.place else "preset"
                raise InputError(f"{place}.{field_}", err.message) from None
            out.append((label, inst))
    return out


def _trace(entry: Any, base: Path, place: str) -> tuple[str, Any]:
    try:
        from .traces import FORMATS, OPTIONS, Policy, import_trace
    except ImportError as err:  # the importers are an optional part of this tree
        raise InputError(f"{place}.trace", f"trace imports are not available ({err})") \
            from None
    if entry.trace not in FORMATS:
        raise InputError(f"{place}.trace", f"unknown trace format {entry.trace!r}; choose "
                                           f"from {', '.join(FORMATS)}")
    given = {f: getattr(entry, f) for f in _POLICY_FIELDS if getattr(entry, f) is not None}
    policy = Policy(**given)
    options: dict[str, Any] = {}
    for opt in ("cluster", "gpus_per_server", "throughputs", "gpu_type", "cluster_spec",
                "apps", "nodes", "phases"):
        v = getattr(entry, opt)
        if v is None:
            continue
        if opt not in OPTIONS[entry.trace]:
            raise InputError(f"{place}.{opt}", f"not an option of the {entry.trace} format "
                                               f"(it takes {', '.join(OPTIONS[entry.trace])})")
        options[opt] = str(base / v) if opt in _PATH_OPTIONS else \
            (tuple(v) if opt == "phases" else v)
    file = base / entry.file
    try:
        imported = import_trace(entry.trace, file, policy, **options)
    except InputError as err:
        where = err.place.lstrip("-").replace("-", "_") if err.place else "file"
        if where not in _TraceIn.model_fields:
            where = "file"
        raise InputError(f"{place}.{where}", err.message if where != "file" else str(err)) \
            from None
    # the mapping's options name the instance too: with the slice alone, a grid whose load
    # changed kept the rows of the old instance ("new": 0) and could not list both
    shown = {k: v for k, v in given.items() if k not in ("start", "jobs")}
    shown.update({opt: getattr(entry, opt) for opt in options})
    tags = "&".join(f"{k}={','.join(map(_tag, v)) if isinstance(v, list | tuple) else _tag(v)}"
                    for k, v in sorted(shown.items()))
    label = f"{entry.trace}:{entry.file}#{policy.start}+{policy.jobs}" + \
        (f"?{tags}" if tags else "")
    return label, imported.instance


def _tag(v: Any) -> str:
    """A trace option's value in an instance's label: ``60`` for 60.0."""
    from .io import plain_number
    return str(plain_number(v)) if isinstance(v, float) else str(v)


#: The most (algorithm, parameters) combinations a grid may list: each is tried on a probe
#: instance before the sweep and runs on every instance (a few lists of thousands of values
#: make billions).
MAX_COMBINATIONS = 10_000


def _check_combinations(table: dict[str, dict[str, Any]]) -> None:
    """Refuse a grid of more than ``MAX_COMBINATIONS`` combinations, counted before any is
    made: ``algorithms.NAME`` where one algorithm's lists are too many, else ``algorithms``."""
    total = 0
    for name, grid in table.items():
        lengths = [len(_as_list(grid[k])) for k in sorted(grid)]
        count = math.prod(lengths)
        if count > MAX_COMBINATIONS:
            raise InputError(f"algorithms.{name}",
                             f"{' × '.join(map(str, lengths))} values are {count} "
                             f"combinations, more than {MAX_COMBINATIONS}")
        total += count
    if total > MAX_COMBINATIONS:
        raise InputError("algorithms", f"{total} combinations in all, more than "
                                       f"{MAX_COMBINATIONS}")


def _combos(table: dict[str, dict[str, Any]]) -> tuple[Combo, ...]:
    from . import algorithms
    from .generator import generate
    _check_combinations(table)
    probe = generate("small", seed=0, jobs=1, horizon=3, name="probe")
    out = []
    seen: set[tuple[str, str]] = set()
    for name, grid in table.items():
        try:
            algorithms.check(name)
        except InputError as err:
            raise InputError(f"algorithms.{name}", err.message) from None
        algorithms.check_params(name, grid, place=f"algorithms.{name}", values=False)
        keys = sorted(grid)
        for values in itertools.product(*(_as_list(grid[k]) for k in keys)):
            # the command line's rule (an integral float is the integer: u_scale 1.0 and 1
            # are one row); a fraction for an int parameter names algorithms.NAME.KEY
            params = algorithms.param_values(name, dict(zip(keys, values, strict=True)),
                                             place=f"algorithms.{name}")
            if (name, params_key(params)) in seen:  # [1, 1.0]: one row, not two of one key
                continue
            seen.add((name, params_key(params)))
            try:  # each combination on a one-job instance: bad values fail here, not mid-run
                algorithms.run(name, probe, **params)
            except InputError as err:
                raise InputError(f"algorithms.{name}", f"{params_key(params)}: {err}") \
                    from None
            except AlgorithmError as err:
                # a value the algorithm refuses (its ValueError or TypeError) is bad input;
                # a schedule that breaks a rule, a failure with no value given or any other
                # failure is the algorithm's own: exit 1 naming it (SPEC §6), as in every
                # other command, not exit 2
                if isinstance(err, algorithms.InvalidScheduleError) or not params \
                        or not isinstance(err.__cause__, TypeError | ValueError):
                    raise type(err)(f"algorithms.{name}: {params_key(params)}: {err} (the "
                                    "grid's check of each combination on a one-job "
                                    "instance)") from err
                raise InputError(f"algorithms.{name}", f"{params_key(params)}: {err}") \
                    from None
            except (TypeError, ValueError) as err:
                raise InputError(f"algorithms.{name}", f"{params_key(params)}: {err}") \
                    from None
            out.append(Combo(name, params))
    return tuple(out)


def _reference(raw: Any) -> dict[str, Any] | None:
    if raw is None or raw in ("none", False):
        return None
    s = raw.solve
    from .offline import METHODS
    if s.method not in METHODS:
        raise InputError("reference.solve.method", f"unknown method {s.method!r}; choose "
                                                   f"from {', '.join(METHODS)}")
    if s.solver != "highs":
        from . import solvers
        try:
            solvers.check(s.solver)
        except InputError as err:
            raise InputError("reference.solve.solver", err.message) from None
    return {"time_limit": s.time_limit, "solver": s.solver, "method": s.method,
            "mip_gap": float(s.mip_gap)}


# --- running -----------------------------------------------------------------------------


def execute_grid(task: GridTask) -> list[dict[str, Any]]:
    """The reference solve (once, or read from the task's cache folder: ``optcache``), then
    each combination: one row each (module docstring)."""
    from . import algorithms, optcache
    from .ratio import ratio

    inst = task.instance
    opt = bound = None
    if task.reference is not None:
        ref = task.reference
        _, rep = optcache.solve(inst, task.opt_cache, time_limit=ref["time_limit"],
                                solver=ref["solver"], method=ref["method"],
                                mip_gap=ref["mip_gap"])
        status = str(getattr(rep.status, "value", rep.status))
        if status != "error":
            bound = float(rep.bound)
            if status == "optimal":
                opt = float(rep.objective)
    rows = []
    for c in task.combos:
        sched = algorithms.run(c.algorithm, inst, **c.params)
        alg = float(sched.total_utility)
        reference = opt if opt is not None else bound
        q = ratio(reference, alg) if reference is not None else None
        rows.append({"instance": task.label, "algorithm": c.algorithm, "params": c.key,
                     "utility": alg, "completed": sched.completed,
                     "seconds": sched.extras.get("seconds"), "opt": opt, "bound": bound,
                     "opt_over_alg": q})
    return rows


def check_schedule_sizes(grid: Grid) -> None:
    """Refuse (SPEC §5, ``io.check_schedule_size``) a grid one of whose instances would hold
    more schedules than the memory limit allows, before any task runs: ``InputError`` at the
    instance's label, the message naming ``jobs`` and the sizes. A task (``execute_grid``)
    runs its combinations one after another and keeps only each one's figures, so it holds
    one schedule at a time; its reference solve holds the floor's schedules, one per
    built-in algorithm (``offline.floor``, OASiS's dynamic programme among them). Every
    instance is checked, those whose rows a rerun skips too: the check comes before the
    results file is read. The limit is per process: each worker holds the task it runs."""
    from .io import check_schedule_size
    names: list[str] = sorted({c.algorithm for c in grid.combos})
    schedules = 1
    if grid.reference is not None:
        from .offline.floor import floor_names
        floor = floor_names(None)
        names += floor
        schedules = len(floor)
    for label, inst in grid.instances:
        try:
            check_schedule_size(inst, schedules, names)
        except InputError as err:
            raise InputError(label, str(err)) from None


def run_grid(grid: Grid, *, out: str | Path | None = None, workers: int | None = None,
             dask: str | None = None, progress: bool = False,
             opt_cache: str | Path | None = None) -> dict[str, Any]:
    """Run (or resume) a grid; returns what the command line reports. ``opt_cache``: a folder
    of cached optima (``optcache``) for the reference solves, which every worker must reach
    (a shared file system for Dask workers on other machines)."""
    for place, path in (("out", out), ("opt_cache", opt_cache)):
        if path is not None:
            expect_path(place, path)
    check_workers(workers)  # before the store's folder is made
    folder = Path(out) if out is not None else grid.out
    if folder is None:
        raise InputError("out", "missing field (or give --out)")
    check_schedule_sizes(grid)  # before the cache folder or the results file is touched
    if opt_cache is not None:  # refused before any task starts, not in each worker
        ensure_folder(opt_cache, "opt_cache")
    store = ResultStore(folder / RESULTS, columns=COLUMNS, key=grid_key, numbers=NUMBERS)
    before = len(store.rows)
    tasks = grid.tasks(store.done, opt_cache=opt_cache)
    start = time.perf_counter()
    with make_executor(workers, dask) as ex:
        ran = run_tasks(tasks, execute_grid, store, executor=ex, progress=progress,
                        description="grid")
    expected = len(grid.instances) * len(grid.combos)
    return {"csv": str(folder / RESULTS), "done": len(store.rows), "new": len(store.rows) - before,
            "rows_expected": expected, "tasks_run": ran, "instances": len(grid.instances),
            "combinations": len(grid.combos), "seconds": time.perf_counter() - start,
            "executor": _executor_kind(workers, dask),
            "opt_cache": None if opt_cache is None else str(Path(opt_cache).resolve())}


@dataclass(frozen=True)
class SweepResult:
    """What ``run_grid`` reports (``summary``), with the rows of its CSV."""

    summary: dict[str, Any]

    @property
    def csv(self) -> Path:
        return Path(self.summary["csv"])

    def to_records(self) -> list[dict[str, Any]]:
        """The CSV's rows (every row of the output folder, earlier runs' included), with
        numbers as numbers and empty cells as None."""
        from .records import read_csv
        return read_csv(self.csv, text=("instance", "algorithm", "params"),
                        integers=("completed",))

    def to_dataframe(self) -> Any:
        """``to_records()`` as a pandas DataFrame (needs pandas)."""
        from .records import dataframe
        return dataframe(self.to_records())


# --- the built-in experiments' configs ---------------------------------------------------


def load_experiment_config(data: dict[str, Any]) -> dict[str, Any]:
    """``{"experiment": NAME, "seeds": K, "quick": false, "out": DIR, "algorithms": [A, …]}``:
    one of the named experiments (``oasis-opt experiment``) on the chosen executor;
    ``algorithms`` adds the user's own (``run_experiment``)."""
    from .experiments import EXPERIMENTS
    name = data.get("experiment")
    if not isinstance(name, str) or name not in EXPERIMENTS:
        raise InputError("experiment", f"unknown experiment {name!r}; choose from "
                                       f"{', '.join(EXPERIMENTS)}")
    seeds = data.get("seeds")
    if isinstance(seeds, float) and seeds.is_integer():
        seeds = int(seeds)  # SPEC §5: an integral float counts as the integer
    if seeds is not None and (not isinstance(seeds, int) or isinstance(seeds, bool)
                              or not 1 <= seeds <= 100_000):
        raise InputError("seeds", f"must be an integer from 1 to 100000, got {seeds!r}")
    quick = data.get("quick", False)
    if not isinstance(quick, bool):
        raise InputError("quick", f"must be true or false, got {quick!r}")
    algos = data.get("algorithms", [])
    if not isinstance(algos, list) or not all(isinstance(a, str) and a for a in algos):
        raise InputError("algorithms", f"expected a list of algorithm names, got {algos!r}")
    from . import algorithms
    for k, a in enumerate(algos):
        try:
            algorithms.check(a)
        except InputError as err:
            raise InputError(f"algorithms[{k}]", err.message) from None
    unknown = set(data) - {"experiment", "seeds", "quick", "out", "algorithms"}
    if unknown:
        raise InputError(sorted(unknown)[0], "unknown field")
    if not isinstance(data.get("out", "results"), str) or not data.get("out", "results"):
        raise InputError("out", f"expected a folder name, got {data.get('out')!r}")
    return {"experiment": name, "seeds": seeds, "quick": quick,
            "out": data.get("out", "results"), "algorithms": tuple(algos)}


def run_sweep_cli(config: str, *, workers: int | None, dask: str | None, out: str | None,
                  progress: bool, opt_cache: str | None = None) -> dict[str, Any]:
    """``oasis-opt sweep CONFIG``: a grid (``opt_cache``: the reference solves' cache folder),
    or a built-in experiment's config."""
    from .io import in_file
    with in_file(config, fields=True):  # a field's error names the file it is in
        cfg = load(config)
    if isinstance(cfg, Grid):
        return {"kind": "grid", **run_grid(cfg, out=out, workers=workers, dask=dask,
                                           progress=progress, opt_cache=opt_cache)}
    if opt_cache is not None:
        raise InputError("opt_cache", "only a grid's reference solves are cached; the "
                                      "built-in experiments solve their own")
    from .experiments import run_experiment
    start = time.perf_counter()
    with make_executor(workers, dask) as ex:
        result = run_experiment(cfg["experiment"], seeds=cfg["seeds"], out=out or cfg["out"],
                                quick=cfg["quick"], progress=progress, executor=ex,
                                algorithms=cfg["algorithms"])
    return {"kind": "experiment", "done": result["rows"], "new": result["new_rows"],
            "csv": result["csv"], "figure": result["figure"],
            "seconds": time.perf_counter() - start,
            "executor": _executor_kind(workers, dask)}


def _executor_kind(workers: int | None, dask: str | None) -> str:
    """What ``make_executor(workers, dask)`` runs the tasks on, as a sweep reports it."""
    return "dask" if dask else ("in-process" if workers == 0 else "processes")


__all__ = ["COLUMNS", "GRID_FORMAT", "Grid", "GridTask", "SweepResult", "check_schedule_sizes",
           "execute_grid", "load", "run_grid", "run_sweep_cli"]
