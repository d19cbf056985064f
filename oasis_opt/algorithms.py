"""The registry: one name, one ``run(instance, **params) -> Schedule`` function.

An algorithm is named, everywhere one is named (SPEC §6), by

1. a built-in name (``REGISTRY``: OASiS and the baselines);
2. a name registered in Python with ``register(name, fn)``;
3. a name an installed package declares in the entry-point group ``oasis_opt.algorithms``
   (``[project.entry-points."oasis_opt.algorithms"] greedy = "mypkg.greedy:run"``); one
   named like a built-in, or that no command line can name, or a second package's of the
   same name, is ignored, with a note on stderr once per process;
4. ``module:function``, imported from the current directory or ``PYTHONPATH``.

A name that resolves to nothing is bad input (``InputError``, exit 2). ``run`` treats every
algorithm alike: it passes the schedule through the validator, records ``extras["seconds"]``,
and runs the function with Python's and NumPy's global random generators seeded from the
instance (restored afterwards), so a scheduler that draws random numbers gives the same schedule
in-process, on the process pool and on Dask. A run that raises, returns something that is not a
``Schedule`` or breaks a rule of the model raises ``AlgorithmError`` naming the algorithm
(exit 1). Modules load lazily so that ``oasis-opt validate`` does not import every algorithm.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib
import inspect
import numbers
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from .errors import AlgorithmError, InputError, PluginWarning, elide, keywords_checked, one_line
from .limits import OutOfTime
from .model import Instance, Schedule, check_instance
from .validate import validate

#: The entry-point group through which installed packages add algorithms.
ENTRY_POINT_GROUP = "oasis_opt.algorithms"

#: The built-in algorithms, name -> "module:function"; online/heuristic schedulers, in the order
#: reports list them. The floor of a time-limited solve uses these only.
REGISTRY: dict[str, str] = {
    "oasis": "oasis_opt.online.oasis:run",
    "oasis-adaptive": "oasis_opt.online.adaptive:run",
    "fifo": "oasis_opt.baselines.fifo:run",
    "drf": "oasis_opt.baselines.drf:run",
    "rrh": "oasis_opt.baselines.rrh:run",
    "tetris": "oasis_opt.baselines.tetris:run",
}

#: Names registered in this process with ``register``: name -> function.
_REGISTERED: dict[str, Callable[..., Schedule]] = {}

#: Characters a registered or entry-point name may not hold: ``:`` marks ``module:function``,
#: ``,`` separates names in ``ratio --algorithms``, ``=`` separates a parameter's key.
_RESERVED = frozenset(":,= \t\n")


class InvalidScheduleError(AlgorithmError):
    """An algorithm produced a schedule the validator refuses (a bug in the algorithm)."""


# --- names -------------------------------------------------------------------------------


@keywords_checked
def register(name: str, fn: Callable[..., Schedule], *, replace: bool = False) -> None:
    """Make ``fn(instance, **params) -> Schedule`` available as ``name`` in this process (and
    in the worker processes and Dask workers that the sweep executors start afterwards).

    Built-in names cannot be replaced; a registered name can with ``replace=True``."""
    if not isinstance(name, str) or not name or _RESERVED & set(name):
        raise InputError("name", f"an algorithm name must be a non-empty string without "
                                 f"':', ',', '=' or spaces, got {name!r}")
    if not callable(fn):
        raise InputError("fn", f"must be a function run(instance, **params) -> Schedule, "
                               f"got {type(fn).__name__}")
    if name in REGISTRY:
        raise InputError("name", f"{name!r} is a built-in algorithm; choose another name")
    if name in _REGISTERED and not replace and _REGISTERED[name] is not fn:
        raise InputError("name", f"{name!r} is already registered; pass replace=True to "
                                 "replace it")
    _REGISTERED[name] = fn


@keywords_checked
def unregister(name: str) -> None:
    """Forget a name added with ``register`` (no error if it is not there); a built-in name
    is refused (``InputError``): it was a silent no-op, and the built-in stayed."""
    if name in REGISTRY:
        raise InputError("name", f"{name!r} is a built-in algorithm; only names added with "
                                 "register can be unregistered")
    _REGISTERED.pop(name, None)


def registered() -> dict[str, Callable[..., Schedule]]:
    """The names registered in this process (for executors that start new processes)."""
    return dict(_REGISTERED)


def install(table: Mapping[str, Callable[..., Schedule]]) -> None:
    """Register a table from ``registered()`` in another process (a pool's initializer)."""
    _REGISTERED.update(table)


#: Installed entry points already said to be ignored (``_note_ignored``): (name, value).
_NOTED_IGNORED: set[tuple[str, str]] = set()


def _source(ep: Any) -> str:
    """``'NAME' (module:function) from DISTRIBUTION``: an entry point as its author knows it."""
    dist = getattr(getattr(ep, "dist", None), "name", None)
    return (f"{ep.name!r} ({getattr(ep, 'value', '')}) "
            f"{f'from {dist}' if dist else 'from an unnamed distribution'}")


def _note_ignored(ep: Any, why: str) -> None:
    """Say, once per process, that an installed entry point is ignored and why.

    A built-in keeps its name (a package installed for another reason must not change what
    ``oasis`` or ``fifo`` computes); a name no command line can write, or one a second
    package declares too (the first found is kept), is not used either. Ignoring them
    silently left their authors wondering why their scheduler never ran. This is written
    a warning (``PluginWarning``), not returned: the entry points are read wherever a name is
    resolved or listed (``--help`` included), where there is no result to carry a note; the
    command line prints it as a ``note:`` line."""
    key = (ep.name, getattr(ep, "value", ""))
    if key in _NOTED_IGNORED:
        return
    _NOTED_IGNORED.add(key)
    warnings.warn(f"installed entry point {_source(ep)} is ignored because {why}",
                  PluginWarning, stacklevel=2)


def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points
    out: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in REGISTRY:
            _note_ignored(ep, "it is named like a built-in algorithm")
        elif not ep.name or _RESERVED & set(ep.name):
            _note_ignored(ep, "its name is empty or holds ':', ',', '=' or white space, "
                              "which a command line cannot name")
        elif ep.name in out:
            if getattr(ep, "value", None) != getattr(out[ep.name], "value", None):
                _note_ignored(ep, f"{_source(out[ep.name])} has the same name (the first "
                                  f"one found is kept)")
        else:
            out[ep.name] = ep
    return out


def builtin_names() -> list[str]:
    """The built-in algorithms, in report order."""
    return list(REGISTRY)


def names() -> list[str]:
    """Every algorithm known by name: built-in, then registered, then installed (entry points).
    ``module:function`` names are accepted too but not listed."""
    out = list(REGISTRY)
    out += [n for n in _REGISTERED if n not in out]
    out += sorted(n for n in _entry_points() if n not in out)
    return out


def loadable_names() -> tuple[list[str], list[str]]:
    """``names()`` without the installed or registered algorithms whose entry point does not
    load or that need a parameter without a default, and one line for each of those: the
    default set of ``ratio`` and ``compare``, which the user did not name one by one (a third
    party's broken plug-in made them exit 2, and one that needs a parameter exit 2 asking for
    ``--param``). Named explicitly, such an algorithm is still refused (``get``,
    ``check_params``)."""
    ok: list[str] = []
    left_out: list[str] = []
    for name in names():
        if name in REGISTRY:
            ok.append(name)
            continue
        try:
            get(name)
        except InputError as err:
            left_out.append(f"{name} left out: {err.message}")
            continue
        try:
            check_params(name, {}, place="")
        except InputError as err:
            left_out.append(f"{name} left out: parameter {err.place}: {err.message}")
            continue
        ok.append(name)
    return ok, left_out


def describe() -> str:
    """One line for ``--help``: the names, and how to name others."""
    return (", ".join(names()) + ", or MODULE:FUNCTION (importable from the current directory "
            "or PYTHONPATH)")


def _import_target(name: str, target: str) -> Callable[..., Schedule]:
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise InputError("algorithm", f"{name!r}: expected MODULE:FUNCTION")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # "importable from the current directory" (SPEC §6)
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as err:
        raise InputError("algorithm", f"{name!r}: cannot import module {module!r} "
                                      f"({type(err).__name__}: {err})") from None
    except (Exception, SystemExit) as err:  # the user's module raised (or exited) importing
        raise InputError("algorithm", f"{name!r}: importing module {module!r} failed "
                                      f"({_what(err)})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError("algorithm", f"{name!r}: module {module!r} has no {attr!r}") \
                from None
    if not callable(obj):
        raise InputError("algorithm", f"{name!r}: {attr!r} is not a function")
    return obj


def _what(err: BaseException) -> str:
    """An import's failure in a message: a module that calls ``sys.exit()`` while it is
    imported (a script with its own command line) would otherwise end the command with its
    code, 0 included, and no word."""
    if isinstance(err, SystemExit):
        return f"it called sys.exit({err.code!r}) while being imported"
    return f"{type(err).__name__}: {err}"


#: An algorithm as callers name it: a name (module docstring) or the function itself.
Algorithm = str | Callable[..., Schedule]


def label(algorithm: Algorithm) -> str:
    """How messages and reports name an algorithm: its name, or ``module.qualname`` for a
    function passed directly."""
    if isinstance(algorithm, str):
        return algorithm
    return (f"{getattr(algorithm, '__module__', '?')}."
            f"{getattr(algorithm, '__qualname__', type(algorithm).__name__)}")


def get(name: Algorithm) -> Callable[..., Schedule]:
    """The function behind a name (module docstring), or a function given directly;
    ``InputError`` if none."""
    if callable(name) and not isinstance(name, str):
        return name
    if isinstance(name, Instance):  # the whole instance's repr was the message
        raise InputError("algorithm", "expected an algorithm name or a function, got an "
                                      "Instance (oasis_opt.run takes the instance first: "
                                      "run(instance, algorithm))")
    if not isinstance(name, str) or not name:
        raise InputError("algorithm", f"expected an algorithm name, got {name!r:.60}")
    if name in REGISTRY:
        return _import_target(name, REGISTRY[name])
    if name in _REGISTERED:
        return _REGISTERED[name]
    if ":" not in name:
        ep = _entry_points().get(name)
        if ep is None:
            raise InputError("algorithm", f"unknown algorithm {name!r}; choose from "
                                          f"{describe()}")
        try:
            fn = ep.load()
        except (Exception, SystemExit) as err:
            raise InputError("algorithm", f"{name!r}: entry point {ep.value!r} of group "
                                          f"{ENTRY_POINT_GROUP} does not load "
                                          f"({_what(err)})") from None
        if not callable(fn):
            raise InputError("algorithm", f"{name!r}: entry point {ep.value!r} is not a "
                                          "function")
        return fn
    return _import_target(name, name)


def check(name: Algorithm) -> None:
    """Resolve ``name`` now (``InputError`` if it does not resolve): before work starts."""
    get(name)


# --- parameters --------------------------------------------------------------------------


def _read_signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


_cached_signature = functools.lru_cache(maxsize=256)(_read_signature)


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    """``fn``'s signature, read once (``run`` checks parameters on every call, and the
    verifier makes 100 000 calls); None where it cannot be read. A callable object that
    cannot be hashed is read every time."""
    try:
        return _cached_signature(fn)
    except TypeError:
        return _read_signature(fn)


def parameters(name: Algorithm) -> set[str] | None:
    """The keyword parameters an algorithm takes besides the instance; None if it takes any
    (``**params``) or its signature cannot be read."""
    sig = _signature(get(name))
    if sig is None:
        return None
    params = list(sig.parameters.values())[1:]
    # ``**params`` takes anything; ``**_`` (a leading underscore) only swallows what the
    # function ignores, so a key outside its named parameters is still refused
    if any(p.kind is p.VAR_KEYWORD and not p.name.startswith("_") for p in params):
        return None
    return {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


#: Plain annotations ``check_params`` enforces, by their written name: what a value must be.
#: ``bool`` is an ``int`` in Python, so it is refused where a number is wanted (a JSON
#: ``true`` for a weight is a mistake, not 1).
#: NumPy's scalars count as what they are (``np.int64`` an integer, ``np.bool_`` a flag).
_PLAIN_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "bool": ("true or false", lambda v: isinstance(v, (bool, np.bool_))),
    "int": ("an integer", lambda v: isinstance(v, numbers.Integral)
            and not isinstance(v, (bool, np.bool_))),
    "float": ("a number", lambda v: isinstance(v, numbers.Real)
              and not isinstance(v, (bool, np.bool_))),
    "str": ("a string", lambda v: isinstance(v, str)),
}


def _annotation_text(annotation: Any) -> str:
    """An annotation as written: a string under ``from __future__ import annotations``,
    else the type's name (``float``) or its repr (``typing.Callable[...]``)."""
    if isinstance(annotation, str):
        return annotation.strip()
    return getattr(annotation, "__name__", None) or repr(annotation)


def _param_place(place: str, key: str) -> str:
    """Where a parameter is named: ``--param x`` (``--param NAME x`` for ``ratio``) on the
    command line, as ``--param x`` is written; ``algorithms.NAME.x`` in a file."""
    if not place:
        return key
    return f"{place} {key}" if place.startswith("--") else f"{place}.{key}"


def check_params(name: Algorithm, params: Mapping[str, Any], place: str = "params", *,
                 values: bool = True) -> None:
    """Refuse a parameter the algorithm does not take, or (``values``: ``params`` is the
    whole set) a value its annotation rules out or a parameter without a default that is
    missing, naming it (before anything runs). A grid, whose values are lists of values,
    checks its keys here with ``values=False`` and each combination's values after.

    Only plain annotations are enforced (``bool``, ``int``, ``float``, ``str``, and a
    ``Callable``: a value from the command line or a file is never one); anything richer
    (``float | None``, a mapping) is the algorithm's own to check."""
    known = parameters(name)
    if known is None:
        return
    for key in params:
        if key not in known:
            raise InputError(_param_place(place, key),
                             f"not a parameter of {label(name)} (it takes "
                             f"{', '.join(sorted(known)) or 'none'})")
    if not values:
        return
    sig = _signature(get(name))
    assert sig is not None  # ``known`` came from it
    for key, p in list(sig.parameters.items())[1:]:
        if p.default is p.empty and key not in params and \
                p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise InputError(_param_place(place, key),
                             f"{label(name)} needs this parameter (it has no default)")
    for key, value in params.items():
        text = _annotation_text(sig.parameters[key].annotation)
        where = _param_place(place, key)
        if text in _PLAIN_TYPES:
            what, ok = _PLAIN_TYPES[text]
            if not ok(value):
                raise InputError(where, f"{label(name)} takes {what} here, got {value!r:.60}")
        elif "Callable" in text and value is not None and not callable(value):
            raise InputError(where, f"{label(name)} takes a function here (from Python only), "
                                    f"got {value!r:.60}")


def param_values(name: Algorithm, params: Mapping[str, Any],
                 place: str = "params") -> dict[str, Any]:
    """Parameter values read from the command line (``--param KEY=VALUE``) or a sweep grid, as
    the algorithm gets them: the one rule both follow.

    An integral float counts as the integer, as everywhere in the files (SPEC §5): ``x=3.0``
    for an ``int`` parameter is 3, and ``u_scale`` 1.0 and 1 are one grid row. Past 2⁵³,
    where a float no longer stands for one integer, it stays a float (``1e308`` was a
    309-digit integer in messages and in the algorithm's hands). Then
    ``check_params`` refuses, naming ``place`` and the key, a key the algorithm does not take
    or a value its annotation rules out (``--param x: NAME takes an integer here, got 3.5``).
    """
    out = {key: int(v) if isinstance(v, float) and v.is_integer() and abs(v) <= 2**53 else v
           for key, v in params.items()}
    check_params(name, out, place)
    return out


# --- running -----------------------------------------------------------------------------


def seed_of(instance: Instance) -> int:
    """A seed fixed by the instance's name and sizes: the same in every process."""
    text = f"{instance.name}|{instance.num_jobs}|{instance.horizon}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """Seed ``random`` and NumPy's global generator for one run; restore them afterwards."""
    py_state = random.getstate()
    np_state = np.random.get_state()  # noqa: NPY002 (the legacy global generator users seed)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002


def _check_written(schedule: Schedule, malformed: str) -> None:
    """Refuse what a schedule file cannot hold (SPEC §5) in a user's schedule: ``extras`` that
    are not a dict of JSON values (a set, an object) and jobs that are not a sequence. These
    were an internal error when ``run -o`` or ``--json`` wrote them, naming no algorithm."""
    if not isinstance(schedule.jobs, tuple | list):
        raise InvalidScheduleError(f"{malformed}: jobs: expected a tuple of JobResult, got "
                                   f"{type(schedule.jobs).__name__}")
    if not isinstance(schedule.extras, Mapping):
        raise InvalidScheduleError(f"{malformed}: extras: expected a dict, got "
                                   f"{type(schedule.extras).__name__}")
    from .io import dumps
    try:
        dumps(dict(schedule.extras))
    except (TypeError, ValueError, RecursionError) as err:
        raise InvalidScheduleError(f"{malformed}: extras: not JSON values ({err})") from None


def run(algorithm: Algorithm, instance: Instance, **params: Any) -> Schedule:
    """Run one algorithm (a name, or a function given directly), validate its schedule, and
    record the wall seconds in ``extras``.

    Raises ``InputError`` for a name that does not resolve or a parameter the algorithm does
    not take, ``AlgorithmError`` (``InvalidScheduleError`` for a broken rule) for a run that
    fails, with the ``instance`` it failed on."""
    try:
        return _run(algorithm, instance, params)
    except AlgorithmError as err:
        if err.instance is None:  # (an inner run's, on what it was given, stands)
            err.instance = instance
        raise


def _run(algorithm: Algorithm, instance: Instance, params: dict[str, Any]) -> Schedule:
    fn = get(algorithm)
    check_instance(instance)
    name = label(algorithm)
    builtin = isinstance(algorithm, str) and algorithm in REGISTRY
    check_params(algorithm, params)
    # a user's scheduler gets its own copy (the arrays, names and indexes are read-only and
    # shared; ``object.__setattr__`` on a frozen field reaches only the copy): its schedule
    # is judged against the instance as given, and no run changes the next one's (an audit:
    # a horizon lengthened in place gave OPT 270.9 where it is 231.49, and a schedule above it)
    given = instance if builtin else copy.copy(instance)
    start = time.perf_counter()
    try:
        with _seeded(seed_of(instance)):
            schedule = fn(given, **params)
    except InputError as err:
        if builtin:
            raise
        # still bad input (a value the scheduler refuses), but its place is inside the
        # user's code: named with the algorithm, not shown as an option of the command that
        # the user never gave ("--u-scale: must be a positive number" from a call in it)
        raise InputError(f"algorithm {name!r}", str(err)) from None
    except (AlgorithmError, OutOfTime):  # (a user's scheduler that runs ours, stopped with
        raise                            # them by a time-limited solve's floor)
    except (Exception, SystemExit) as err:  # sys.exit() in a scheduler is a failure, not exit 0
        if builtin:
            raise
        # sys.exit(instance) said the instance's whole repr: clipped, on one line
        raise AlgorithmError(f"algorithm {name!r} failed on {instance.name}: "
                             f"{type(err).__name__}: {one_line(elide(str(err), 400))}") \
            from err
    seconds = time.perf_counter() - start
    if not isinstance(schedule, Schedule):
        raise AlgorithmError(f"algorithm {name!r} returned {type(schedule).__name__}, not a "
                             f"Schedule (build one with Schedule.from_arrays)")
    malformed = f"algorithm {name!r} produced a malformed schedule on {instance.name}"
    if not builtin:
        _check_written(schedule, malformed)
    try:
        report = validate(instance, schedule)
    except InputError as err:  # unknown job or server, a negative count: the algorithm's bug
        raise InvalidScheduleError(f"{malformed}: {err}") from None
    except Exception as err:  # jobs that are not JobResults, counts not a mapping, …
        if builtin:
            raise
        raise InvalidScheduleError(f"{malformed}: {type(err).__name__}: {err}") from err
    if not report.feasible:
        raise InvalidScheduleError(
            f"algorithm {name!r} produced an infeasible schedule on {instance.name}: "
            + "; ".join(str(v) for v in report.violations[:5]))
    if schedule.instance != instance.name:  # written as it is, it names another instance
        raise InvalidScheduleError(f"{malformed}: it names instance {schedule.instance!r}")
    return schedule.with_extras(seconds=seconds)


__all__ = ["ENTRY_POINT_GROUP", "REGISTRY", "Algorithm", "InvalidScheduleError",
           "builtin_names", "check", "check_params", "describe", "get", "install", "label",
           "names", "param_values", "parameters", "register", "registered", "run", "seed_of",
           "unregister"]
