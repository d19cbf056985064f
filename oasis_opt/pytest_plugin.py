"""The pytest plugin (entry point ``pytest11``): check *your* scheduler against OPT in *your* CI.

Installed with the package; pytest loads it in every test session (``-p no:oasis_opt`` turns it
off). It imports nothing heavier than the model at start-up: the solver is imported the first
time a test asks for an optimum.

Options (command line, or the ini key in ``pytest.ini`` / ``[tool.pytest.ini_options]``):

- ``--oasis-opt-cache DIR`` (ini ``oasis_opt_cache``): the folder of cached optima
  (``oasis_opt.optcache``: keyed by the instance's content, the solve settings and the package
  version). Default ``.pytest_cache/d/oasis-opt`` (``config.cache``), so a CI job that keeps
  ``.pytest_cache`` between runs solves each instance once; a relative ini path is relative to
  the ini file's folder.
- ``--oasis-opt-no-cache``: solve every optimum again (nothing read or written).
- ``--oasis-opt-time-limit S`` (ini ``oasis_opt_time_limit``): time limit of each offline solve
  (default none: every optimum proven).

Fixtures:

- ``oasis_instances``: instance sets for use inside a test, ``.shipped(pattern)``,
  ``.generated(preset, seeds, jobs=, horizon=)``, ``.matching(glob)`` (relative to the test
  file), each a list of ``Instance``; for ``@pytest.mark.parametrize`` the module functions
  ``shipped``, ``generated`` and ``matching`` give the same sets as ``pytest.param`` lists
  with the instance's name as the test id.
- ``oasis_opt_value(instance) -> float``: the proven optimum (fails the test when the solve
  does not prove one); ``oasis_opt_solve(instance) -> (schedule, report)``: the whole solve.
  Both go through the cache.
- ``oasis_assert_ratio(algorithm, instance, limit, params=None, timed=True) -> RatioCheck``:
  runs the algorithm (a name as everywhere in oasis-opt: built-in, registered, entry point or
  ``module:function``; or a function) through the validator and asserts
  ``OPT/ALG ≤ limit``, naming instance, OPT, ALG, ratio and limit when it does not hold. When
  pytest-benchmark is installed and active it also times the algorithm's run with the
  ``benchmark`` fixture (the first call in a test; extra_info carries OPT, ALG and the ratio);
  without pytest-benchmark, or with ``--benchmark-skip``, the check runs untimed.
- ``oasis_opt_cache_dir``: the cache folder (a ``Path``, or None with ``--oasis-opt-no-cache``).

At the end of the session the terminal summary says how many optima came from the cache and
how many were solved.
"""

from __future__ import annotations

import fnmatch
import glob
import inspect
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .io import shipped_folder

_STATS_KEY = pytest.StashKey["SolveStats"]()


# --- instance sets -----------------------------------------------------------------------


def _load(files: Iterable[Path]) -> list[Any]:
    from .io import load_instance
    return [load_instance(f) for f in files]


def shipped_instances(pattern: str = "*") -> list[Any]:
    """The shipped instances whose name matches ``pattern`` (``fnmatch``: ``"small-*"``), in
    name order. ``"*"`` includes paper-s1 (100 slots, 40+40 servers), whose proven optimum
    takes minutes; ``small-*`` and ``edge-*`` solve in well under a second each."""
    _check_pattern(pattern)
    files = sorted(f for f in shipped_folder().glob("*.json")
                   if f.name != "manifest.json" and fnmatch.fnmatch(f.stem, pattern))
    if not files:
        raise ValueError(f"no shipped instance matches {pattern!r}")
    return _load(files)


def generated_instances(preset: str, seeds: int | Iterable[int] = 1, *,
                        jobs: int | None = None, horizon: int | None = None) -> list[Any]:
    """``generator.generate(preset, seed=s, jobs=, horizon=)`` for each seed (``seeds``: a
    count K for seeds 0…K-1, or the seeds); named ``PRESET-sSEED`` (plus ``-jN``/``-TN``)."""
    from .generator import generate
    # a count below 1 or no seeds parametrized a test over nothing: pytest skipped it
    if isinstance(seeds, bool) or isinstance(seeds, int) and seeds < 1:
        raise ValueError(f"seeds: a count of at least 1, got {seeds!r}")
    if not isinstance(seeds, int | Iterable) or isinstance(seeds, str):
        raise ValueError(f"seeds: a count or a list of seeds, got {seeds!r}")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    if not seed_list:
        raise ValueError("seeds: no seed given")
    return [generate(preset, seed=s, jobs=jobs, horizon=horizon) for s in seed_list]


def matching_instances(pattern: str, root: str | Path | None = None) -> list[Any]:
    """Instance files matching the glob ``pattern`` (``**`` allowed), relative to ``root``
    (default the current directory), in path order."""
    _check_pattern(pattern)
    if root is not None and not isinstance(root, str | os.PathLike):
        raise ValueError(f"root: a folder's path, got {type(root).__name__}")
    base = Path(root) if root is not None else Path.cwd()
    full = pattern if Path(pattern).is_absolute() else str(base / pattern)
    files = sorted(Path(f) for f in glob.glob(full, recursive=True) if Path(f).is_file())
    if not files:
        raise ValueError(f"no instance file matches {pattern!r} in {base}")
    return _load(files)


def _check_pattern(pattern: Any) -> None:
    """A glob that is no string (``shipped_instances(5)``) failed inside ``fnmatch`` or
    pathlib, naming no argument."""
    if not isinstance(pattern, str):
        raise ValueError(f"pattern: a glob string such as 'small-*', got "
                         f"{type(pattern).__name__}")


def _params(instances: list[Any]) -> list[Any]:
    return [pytest.param(inst, id=inst.name) for inst in instances]


def _caller_folder() -> Path | None:
    """The folder of the module that called a parametrize helper (for relative globs)."""
    frame = inspect.currentframe()
    caller = frame.f_back.f_back if frame and frame.f_back else None
    file = caller.f_globals.get("__file__") if caller else None
    return Path(file).resolve().parent if file else None


def shipped(pattern: str = "*") -> list[Any]:
    """``shipped_instances(pattern)`` as ``pytest.param``s with the instance name as id."""
    return _params(shipped_instances(pattern))


def generated(preset: str, seeds: int | Iterable[int] = 1, *, jobs: int | None = None,
              horizon: int | None = None) -> list[Any]:
    """``generated_instances(...)`` as ``pytest.param``s with the instance name as id."""
    return _params(generated_instances(preset, seeds, jobs=jobs, horizon=horizon))


def matching(pattern: str, root: str | Path | None = None) -> list[Any]:
    """``matching_instances(pattern, root)`` as ``pytest.param``s; ``root`` defaults to the
    folder of the test module that calls it (not the current directory), so that the suite
    runs from anywhere."""
    return _params(matching_instances(pattern, root if root is not None else _caller_folder()))


@dataclass(frozen=True)
class InstanceSets:
    """The ``oasis_instances`` fixture: the three sources, relative globs from ``root``."""

    root: Path

    def shipped(self, pattern: str = "*") -> list[Any]:
        return shipped_instances(pattern)

    def generated(self, preset: str, seeds: int | Iterable[int] = 1, *,
                  jobs: int | None = None, horizon: int | None = None) -> list[Any]:
        return generated_instances(preset, seeds, jobs=jobs, horizon=horizon)

    def matching(self, pattern: str) -> list[Any]:
        return matching_instances(pattern, self.root)


# --- cached optima -----------------------------------------------------------------------


@dataclass
class SolveStats:
    """What the session's optima cost: read from the cache, or solved."""

    folder: Path | None
    time_limit: float | None
    hits: int = 0
    solved: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Optima:
    """``oasis_opt_solve``: ``optcache.solve`` with the session's folder and time limit."""

    stats: SolveStats

    def __call__(self, instance: Any) -> tuple[Any, Any]:
        from . import optcache
        schedule, report = optcache.solve(instance, self.stats.folder,
                                          time_limit=self.stats.time_limit)
        if "opt_cache" in schedule.extras:
            self.stats.hits += 1
        else:
            self.stats.solved += 1
            self.stats.seconds += float(report.seconds)
        return schedule, report

    def value(self, instance: Any) -> float:
        """The proven optimum; fails the test when the solve proves none."""
        __tracebackhide__ = True  # a failure points at the user's line
        _, report = self(instance)
        status = str(getattr(report.status, "value", report.status))
        if status != "optimal":
            pytest.fail(f"{instance.name}: the offline solve ended with status {status} "
                        f"(utility {report.objective:.10g}, bound {report.bound:.10g}); no "
                        "proven OPT: raise --oasis-opt-time-limit or drop the limit",
                        pytrace=False)
        return float(report.objective)


# --- the ratio check ---------------------------------------------------------------------


@dataclass(frozen=True)
class RatioCheck:
    """The outcome of one ``oasis_assert_ratio`` call. ``opt`` is the proven optimum, or the
    solver's upper bound when a time limit stopped it (``proven`` False); ``ratio`` is
    ``opt/alg`` (inf when only ALG is 0, None when both are 0)."""

    instance: str
    algorithm: str
    opt: float
    alg: float
    ratio: float | None
    limit: float
    proven: bool
    seconds: float | None
    schedule: Any = field(repr=False, default=None)


@dataclass
class RatioAsserter:
    """``oasis_assert_ratio`` (module docstring)."""

    optima: Optima
    request: Any
    timed: bool = False

    def _benchmark(self) -> Any:
        """The test's ``benchmark`` fixture, or None: pytest-benchmark absent or disabled by
        ``-p no:benchmark``, skipped by ``--benchmark-skip``, or already used in this test."""
        if self.timed:
            return None
        self.timed = True
        config = self.request.config
        if not config.pluginmanager.hasplugin("pytest-benchmark"):
            return None
        try:
            return self.request.getfixturevalue("benchmark")
        except pytest.skip.Exception:  # --benchmark-skip: check without timing
            return None
        except pytest.FixtureLookupError:
            return None

    def __call__(self, algorithm: str | Callable[..., Any], instance: Any, limit: float,
                 params: Mapping[str, Any] | None = None, *, timed: bool = True
                 ) -> RatioCheck:
        """Assert ``OPT/ALG ≤ limit`` on ``instance`` (``AssertionError`` naming instance,
        OPT, ALG, ratio and limit); returns the figures. ``timed=False``: no pytest-benchmark
        timing (for a test that uses ``benchmark`` itself)."""
        __tracebackhide__ = True  # a failure points at the user's line
        if isinstance(limit, bool) or not (isinstance(limit, (int, float)) and limit >= 1
                                           and not math.isnan(limit)):
            raise ValueError(f"limit must be a number ≥ 1 (OPT/ALG is never below 1), "
                             f"got {limit!r}")
        from . import algorithms
        from .ratio import ratio
        params = dict(params or {})
        label = algorithms.label(algorithm)
        schedule = algorithms.run(algorithm, instance, **params)
        _, report = self.optima(instance)
        status = str(getattr(report.status, "value", report.status))
        if status not in ("optimal", "time_limit", "feasible"):
            pytest.fail(f"{instance.name}: the offline solve ended with status {status}; no "
                        "OPT to compare with", pytrace=False)
        proven = status == "optimal"
        opt = float(report.objective if proven else report.bound)
        alg = float(schedule.total_utility)
        q = ratio(opt, alg)
        bench = self._benchmark() if timed else None
        if bench is not None:
            fn = algorithms.get(algorithm)
            bench.extra_info.update(instance=instance.name, algorithm=label, opt=opt, alg=alg,
                                    ratio=q, limit=limit, proven=proven)
            bench(fn, instance, **params)
        check = RatioCheck(instance.name, label, opt, alg, q, float(limit), proven,
                           schedule.extras.get("seconds"), schedule)
        if q is not None and not q <= limit:
            what = "OPT" if proven else "OPT ≤ bound"
            hint = "" if proven else " (the solve stopped at its time limit: the ratio uses " \
                                     "the bound, an upper bound on the true ratio)"
            raise AssertionError(
                f"OPT/ALG of {label} on {instance.name} is {q:.6g} > limit {limit:g}: "
                f"{what} = {opt:.10g}, ALG = {alg:.10g}{hint}")
        return check


# --- hooks and fixtures --------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("oasis-opt", "oasis-opt: your scheduler against the offline optimum")
    group.addoption("--oasis-opt-cache", dest="oasis_opt_cache", metavar="DIR", default=None,
                    help="folder of cached optima (default: .pytest_cache/d/oasis-opt; ini "
                         "oasis_opt_cache)")
    group.addoption("--oasis-opt-no-cache", dest="oasis_opt_no_cache", action="store_true",
                    help="solve every optimum again; read and write no cache")
    group.addoption("--oasis-opt-time-limit", dest="oasis_opt_time_limit", metavar="S",
                    default=None,
                    help="time limit of each offline solve (default: none, optima proven; "
                         "ini oasis_opt_time_limit)")
    parser.addini("oasis_opt_cache", "oasis-opt: folder of cached optima (relative to the "
                                     "ini file)", default=None)
    parser.addini("oasis_opt_time_limit", "oasis-opt: time limit of each offline solve, "
                                          "seconds", default=None)


def _cache_folder(config: pytest.Config) -> Path | None:
    if config.getoption("oasis_opt_no_cache"):
        return None
    given = config.getoption("oasis_opt_cache")
    if given:
        return Path(given).expanduser().resolve()
    ini = config.getini("oasis_opt_cache")
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return (base / Path(str(ini)).expanduser()).resolve()
    cache = getattr(config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("oasis-opt"))
    return None


def _time_limit(config: pytest.Config) -> float | None:
    """The option's or else the ini's seconds, ASCII decimal as the command line's flags
    (``io.DECIMAL``: ``float()`` also takes '1_0', ' 5' and '١٠'), checked once; a bad value
    is a usage error that names where it came from."""
    text = config.getoption("oasis_opt_time_limit")
    where = "--oasis-opt-time-limit"
    if text is None:
        ini = config.getini("oasis_opt_time_limit")
        if not ini:
            return None
        # an ini value's own spaces are the file's layout
        text, where = str(ini).strip(), "ini oasis_opt_time_limit"
    from .io import decimal_value  # only now: the plugin loads with every pytest run
    given = decimal_value(str(text))
    if not (given > 0 and math.isfinite(given)):
        raise pytest.UsageError(f"{where}: expected a positive number of seconds, got "
                                f"{text!r}")
    if given > 1e7:  # offline.MAX_TIME_LIMIT, not imported: the plugin loads no solver
        raise pytest.UsageError(f"{where}: at most 1e7 seconds (about 115 days), got "
                                f"{text!r}")
    return given


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STATS_KEY] = SolveStats(None, _time_limit(config))


def _stats(config: pytest.Config) -> SolveStats:
    stats = config.stash[_STATS_KEY]
    if stats.folder is None and not config.getoption("oasis_opt_no_cache"):
        # resolved lazily: config.cache exists only after the cacheprovider's configure
        stats.folder = _cache_folder(config)
    return stats


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    stats = config.stash.get(_STATS_KEY, None)
    if stats is None or stats.hits + stats.solved == 0:
        return
    where = str(stats.folder) if stats.folder is not None else "no cache"
    terminalreporter.write_line(
        f"oasis-opt: {stats.hits} optima from the cache, {stats.solved} solved "
        f"({stats.seconds:.2f} s) [{where}]")


@pytest.fixture(scope="session")
def oasis_opt_cache_dir(pytestconfig: pytest.Config) -> Path | None:
    """The folder of cached optima (None with ``--oasis-opt-no-cache``)."""
    return _stats(pytestconfig).folder


@pytest.fixture(scope="session")
def oasis_opt_solve(pytestconfig: pytest.Config) -> Optima:
    """``oasis_opt_solve(instance) -> (schedule, report)``, through the cache."""
    return Optima(_stats(pytestconfig))


@pytest.fixture(scope="session")
def oasis_opt_value(oasis_opt_solve: Optima) -> Callable[[Any], float]:
    """``oasis_opt_value(instance) -> float``: the proven optimum, through the cache."""
    return oasis_opt_solve.value


@pytest.fixture
def oasis_instances(request: pytest.FixtureRequest) -> InstanceSets:
    """Instance sets: ``.shipped(pattern)``, ``.generated(preset, seeds, …)``,
    ``.matching(glob)`` (relative to the test file)."""
    return InstanceSets(Path(request.path).parent)


@pytest.fixture
def oasis_assert_ratio(oasis_opt_solve: Optima, request: pytest.FixtureRequest
                       ) -> RatioAsserter:
    """``oasis_assert_ratio(algorithm, instance, limit, params=None) -> RatioCheck``."""
    return RatioAsserter(oasis_opt_solve, request)


__all__ = ["InstanceSets", "Optima", "RatioAsserter", "RatioCheck", "SolveStats", "generated",
           "generated_instances", "matching", "matching_instances", "shipped",
           "shipped_folder", "shipped_instances"]
