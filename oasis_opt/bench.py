"""Speed on this machine, with the targets beside the figures (``oasis-opt bench``).

``run_bench`` measures OASiS (per arrival decision and a whole run on the ``paper`` preset),
each baseline's whole run on the same instance, the exact solver on testbed instances, the
column-generation bound on 50 jobs of the ``paper`` preset, and the growth exponents of the dual
subroutine. The pytest-benchmark suites in ``benchmarks/`` measure the same things for CI;
``benchmarks/bench_scaling.py`` uses ``growth`` from here, so the CLI and the CI guard agree.

Growth exponents: the dual subroutine costs O(S·(H+K)·N) for its slot tables and O(S·N·V) for
its DP (``oasis_opt/online/subroutine.py``), so doubling the horizon T (S = T slots for a job
arriving in slot 0), the servers H = K, or the workload V should at most double a call's time:
exponent ``log2(t(2x) / t(x)) ≈ 1``. Each axis uses sizes where the term that grows dominates
the fixed per-call overhead, and the two sizes are timed interleaved (x, 2x, 2x, x, …) so that
the load of a shared machine hits both; the exponent comes from the median of the paired
ratios. No absolute time is asserted anywhere.

With ``opt_cache`` (``oasis-opt bench --opt-cache DIR``) the report adds OPT/ALG rows: every
built-in algorithm and each extra one on testbed-s0…s4, OPT through the cache folder
(``optcache``, the solver rows' settings). The solver rows still solve their instance on every
run (they measure it) and store the result, so a cold run solves each instance once and a warm
run only the timed ones.

Library code: nothing here prints; the progress bar (optional) goes to stderr.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .errors import InputError
from .model import Instance
from .online.subroutine import JobSpec, best_schedule
from .progress import progress_bar

#: Largest growth exponent accepted where the cost is linear in the doubled size. Linear
#: measures 0.7–1.2 here (fixed per-call and per-slot overhead pull it below 1; the DP's reachable
#: band and caches push it above); a pass made quadratic measures ≈ 2.
GROWTH_LIMIT = 1.6

#: Sizes (T horizon, H = K servers, V workload, N max workers) of the small case per axis; the
#: large case doubles the axis. Each is chosen so that the doubled term dominates a call and
#: the work stays proportional to it: V ≤ S·N/16 keeps the DP band (states reachable and still
#: able to finish) about V wide in every slot, and the arrays stay within the L2 cache.
GROWTH_BASE: dict[str, dict[str, int]] = {
    "horizon": {"T": 100, "H": 40, "V": 50, "N": 8},
    "servers": {"T": 20, "H": 200, "V": 50, "N": 8},
    "workload": {"T": 200, "H": 40, "V": 400, "N": 64},
}
_AXIS_KEY = {"horizon": "T", "servers": "H", "workload": "V"}

#: Capacities and demands of the paper preset's servers and of a typical job
#: (gpu, cpu, mem_gb, bw_gbps).
_WORKER_CAP = np.array([4.0, 16.0, 64.0, 40.0])
_PS_CAP = np.array([0.0, 16.0, 64.0, 40.0])
_WORKER_DEMAND = np.array([1.0, 4.0, 12.0, 5.0])
_PS_DEMAND = np.array([0.0, 2.0, 6.0, 5.0])

Args = tuple[JobSpec, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def subroutine_case(T: int, H: int, V: int, N: int, seed: int = 0) -> Args:
    """Arguments of ``best_schedule`` for one job arriving in slot 0 of a T-slot horizon on
    H worker and H PS servers, workload V, at most N workers, γ = 2; random prices in [0, 1)
    (no ties) and free capacity 50–100 % of the paper preset's servers, shapes (T, H, R).
    The utility ``f(d) = 1e6·(1 − d/(T+1))`` keeps every feasible schedule profitable."""
    rng = np.random.default_rng(seed)
    R = len(_WORKER_CAP)
    job = JobSpec(arrival=0, workload=V, max_workers=N, ps_ratio=2.0,
                  worker_demand=_WORKER_DEMAND, ps_demand=_PS_DEMAND,
                  utility=1e6 * (1.0 - np.arange(1, T + 1) / (T + 1)))
    worker_price = rng.uniform(0.0, 1.0, (T, H, R))
    ps_price = rng.uniform(0.0, 1.0, (T, H, R))
    worker_free = _WORKER_CAP * rng.uniform(0.5, 1.0, (T, H, R))
    ps_free = _PS_CAP * rng.uniform(0.5, 1.0, (T, H, R))
    return job, worker_price, ps_price, worker_free, ps_free


def growth_case(axis: str, factor: int = 1) -> Args:
    """``subroutine_case`` at ``GROWTH_BASE[axis]`` with the axis multiplied by ``factor``."""
    size = dict(GROWTH_BASE[axis])
    size[_AXIS_KEY[axis]] *= factor
    return subroutine_case(**size)


def _per_call(fn: Callable[[], Any], calls: int) -> float:
    """CPU seconds of this thread per call of ``fn`` (``time.thread_time``): on a shared
    machine, time spent descheduled while others run is not the algorithm's cost, and with
    wall time it made growth exponents swing by ±0.5 under load 4 on 2 cores (±0.05 here)."""
    start = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - start) / calls


@dataclass(frozen=True)
class Growth:
    """How one call's time grows when one size doubles.

    ``small_ms`` / ``large_ms``: median ms per call at x and 2x; ``ratio``: median of the
    ``rounds`` ratios measured side by side; ``exponent = log2(ratio)`` (1 = linear).
    """

    axis: str
    small: dict[str, int]
    large: dict[str, int]
    small_ms: float
    large_ms: float
    ratio: float
    exponent: float
    rounds: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_growth(small: Callable[[], Any], large: Callable[[], Any], rounds: int = 9,
                  sample_seconds: float = 0.03) -> tuple[float, float, float]:
    """Median CPU seconds per call of ``small`` and ``large`` and the median of their paired
    ratios.

    Each round times both, in alternating order, each sample repeating the call enough times
    to last about ``sample_seconds``; a burst of load on the machine then inflates both sides
    of a ratio instead of one side of the comparison."""
    small(), large()  # warm caches and lazy imports
    n_small = max(1, math.ceil(sample_seconds / max(_per_call(small, 1), 1e-6)))
    n_large = max(1, math.ceil(sample_seconds / max(_per_call(large, 1), 1e-6)))
    ts, tl = [], []
    for r in range(rounds):
        if r % 2 == 0:
            a = _per_call(small, n_small)
            b = _per_call(large, n_large)
        else:
            b = _per_call(large, n_large)
            a = _per_call(small, n_small)
        ts.append(a)
        tl.append(b)
    ratio = statistics.median(b / a for a, b in zip(ts, tl, strict=True))
    return statistics.median(ts), statistics.median(tl), ratio


def growth(axis: str, rounds: int = 9, sample_seconds: float = 0.03) -> Growth:
    """Growth exponent of the dual subroutine along ``axis`` (``horizon``, ``servers``,
    ``workload``): ``GROWTH_BASE[axis]`` against the same with that size doubled."""
    if axis not in GROWTH_BASE:
        raise ValueError(f"unknown axis {axis!r}; choose from {', '.join(GROWTH_BASE)}")
    a, b = growth_case(axis, 1), growth_case(axis, 2)
    s, big, ratio = paired_growth(lambda: best_schedule(*a), lambda: best_schedule(*b),
                                  rounds, sample_seconds)
    large = dict(GROWTH_BASE[axis])
    large[_AXIS_KEY[axis]] *= 2
    return Growth(axis, dict(GROWTH_BASE[axis]), large, 1e3 * s, 1e3 * big, ratio,
                  math.log2(ratio), rounds)


# --- the whole report ----------------------------------------------------------------------


def machine() -> str:
    """A short description of this machine: CPU, cores, Python, load average."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load {os.getloadavg()[0]:.1f}"
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}{load}"


COLUMNS = ["name", "instance", "median", "unit", "runs", "target", "met", "paper", "note"]


def _size(inst: Instance) -> str:
    return (f"{inst.name}: {inst.num_jobs} jobs, T={inst.horizon}, "
            f"{len(inst.worker_names)}+{len(inst.ps_names)} servers")


def _row(name: str, inst: str, median: float, unit: str, runs: int, target: str | None = None,
         met: bool | None = None, paper: str | None = None, note: str | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"name": name, "instance": inst, "median": median, "unit": unit, "runs": runs,
            "target": target, "met": met, "paper": paper, "note": note, **extra}


def _timed(fn: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times, out


def bench_oasis(inst: Instance, runs: int) -> list[dict[str, Any]]:
    """OASiS on ``inst``: median ms per arrival decision, whole run with and without the
    certificate (median seconds of ``runs`` runs each)."""
    from .online import oasis
    times, decision_ms = [], []
    for _ in range(runs):
        start = time.perf_counter()
        s = oasis.run(inst)
        times.append(time.perf_counter() - start)
        decision_ms.append(s.extras["decision_ms_median"])
    bare, _ = _timed(lambda: oasis.run(inst, certificate=False), runs)
    ms = statistics.median(decision_ms)
    run_s = statistics.median(times)
    size = _size(inst)
    return [
        _row("OASiS decision", size, ms, "ms", runs, "< 5 ms", ms < 5.0,
             "< 1 s (T=100, 80 servers)", "median over arrivals, inside a run",
             utility=s.total_utility, completed=s.completed),
        _row("OASiS run", size, run_s, "s", runs, "< 1 s", run_s < 1.0, None,
             "with the dual certificate"),
        _row("OASiS run, no certificate", size, statistics.median(bare), "s", runs, "< 1 s",
             statistics.median(bare) < 1.0),
    ]


def bench_baseline(name: str, inst: Instance, runs: int,
                   params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One algorithm's whole run on ``inst`` (median seconds); any name the registry resolves
    (a user's ``module:function`` too) with its keyword ``params``, its schedule checked by
    the validator once."""
    from . import algorithms
    params = dict(params or {})
    algorithms.run(name, inst, **params)
    fn = algorithms.get(name)
    times, s = _timed(lambda: fn(inst, **params), runs)
    given = f", params {json.dumps(params, sort_keys=True)}" if params else ""
    return _row(f"{name} run", _size(inst), statistics.median(times), "s", runs,
                note=f"{s.completed} completed{given}", utility=s.total_utility)


def bench_solver(inst: Instance, time_limit: float,
                 opt_cache: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The exact solver (compact MILP, default modeller) on ``inst``: wall seconds, status;
    the result is stored in ``opt_cache`` (when given and not there yet)."""
    from .offline import solve
    start = time.perf_counter()
    schedule, report = solve(inst, time_limit=time_limit)
    seconds = time.perf_counter() - start
    if opt_cache is not None:
        from . import optcache
        optcache.solve(inst, opt_cache, solver_fn=lambda *_a, **_k: (schedule, report),
                       time_limit=time_limit)
    status = report.status.value
    return _row("exact solver", _size(inst), seconds, "s", 1, "< 10 s, optimal",
                seconds < 10.0 and status == "optimal", None,
                f"{status}, utility {report.objective:.4g}, bound {report.bound:.4g}",
                status=status, utility=report.objective, bound=report.bound)


def bench_colgen(inst: Instance, time_limit: float) -> dict[str, Any]:
    """Column-generation bound and price-and-branch schedule on ``inst``."""
    from .formulations import colgen
    from .offline import colgen_inputs
    start = time.perf_counter()
    r = colgen.solve(inst, **colgen_inputs(inst), time_limit=time_limit)
    seconds = time.perf_counter() - start
    inc, bound, x = r.objective, r.bound, r.extras
    gap = (bound - inc) / max(abs(bound), 1e-9)
    return _row("colgen bound", _size(inst), seconds, "s", 1, None, None, None,
                f"{'proven' if x['lp_proven'] else 'unproven'} bound {bound:.5g}, schedule "
                f"{inc:.5g} (gap {100 * gap:.2g} %), {x['iterations']} it., "
                f"{x['columns']} cols",
                bound=bound, incumbent=inc, proven=x["lp_proven"], iterations=x["iterations"],
                columns=x["columns"], lp_seconds=x["lp_seconds"],
                pricing_seconds=x["pricing_seconds"], mip_seconds=x["mip_seconds"])


def bench_ratios(inst: Instance, names: Sequence[str] | Mapping[str, Mapping[str, Any]],
                 time_limit: float, opt_cache: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """OPT/ALG of each algorithm on ``inst`` (``ratio.compare``; ``names`` or ``{name:
    params}``), OPT through ``opt_cache`` with the solver rows' settings; the note says
    whether it was there already."""
    from . import optcache
    from .ratio import compare
    file = os.path.join(opt_cache, optcache.key(inst, optcache.settings_of(time_limit)) + ".json")
    source = "cached" if os.path.exists(file) else "solved"
    rep = compare(inst, dict(names) if isinstance(names, Mapping) else list(names),
                  time_limit=time_limit, modeler="auto", opt_cache=opt_cache)
    ref = "unavailable" if rep.reference is None else f"{rep.reference:.6g}"
    return [_row(f"OPT/ALG {row['algorithm']}", _size(inst), row["opt_over_alg"], "OPT/ALG", 1,
                 note=f"{rep.opt_label} {ref} ({source}), ALG {row['utility']:.6g}",
                 utility=row["utility"], opt=rep.opt, bound=rep.bound, status=rep.status)
            for row in rep.rows]


def bench_growth(axis: str, rounds: int) -> dict[str, Any]:
    """One growth exponent as a row."""
    g = growth(axis, rounds)
    s, b = g.small, g.large
    k = _AXIS_KEY[axis]
    return _row(f"growth in {axis}", f"subroutine T={s['T']} H=K={s['H']} V={s['V']} "
                f"N={s['N']}, {k}→{b[k]}", g.exponent, "log2 ratio", rounds,
                f"≤ {GROWTH_LIMIT}", g.exponent <= GROWTH_LIMIT, None,
                f"{g.small_ms:.3g} → {g.large_ms:.3g} CPU ms per call (≈ 1 = linear)",
                **{f"growth_{k2}": v for k2, v in g.as_dict().items()})


def run_bench(quick: bool = False, progress: bool = False,
              algorithms: Sequence[str] = (),
              opt_cache: str | os.PathLike[str] | None = None,
              params: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Measure every algorithm on this machine; ``algorithms`` adds more (any name the
    registry resolves: a user's own scheduler beside the built-ins), timed on paper-s1, with
    ``params[name]`` as keyword parameters (of those added only: the built-ins' rows measure
    their defaults against fixed targets).
    ``opt_cache``: also OPT/ALG rows on testbed-s0…s4, OPT through that folder (module
    docstring).

    ``quick``: fewer repetitions, one testbed instance for the exact solver (the fastest, seed
    4) instead of five, shorter time limits; about 15 s on 2 cores against a few minutes.

    Returns ``{"rows": [...], "columns": COLUMNS, "machine": str, "quick": bool,
    "growth_limit": GROWTH_LIMIT}``; each row has the columns plus raw figures.
    """
    from . import algorithms as registry
    from .generator import generate

    params = {name: dict(p) for name, p in (params or {}).items()}
    for name in params:
        if name not in algorithms:
            raise InputError(f"params.{name}", "not one of the algorithms added "
                                               f"({', '.join(algorithms) or 'none'})")
    for name in algorithms:
        registry.check(name)
        registry.check_params(name, params.get(name, {}), place=f"params.{name}")
    baselines = ("fifo", "drf", "rrh", "tetris")
    paper = generate("paper", seed=1)
    # No input sizes the instances measured here, but --max-memory may be below them:
    # paper-s1's schedules are the largest (about 16 MiB each), and ``bench_oasis`` holds
    # three at once (its last run's, ``_timed``'s last and the one being made). The other
    # rows' instances are smaller; ``bench_ratios``' comparison sizes its own.
    from .io import check_schedule_size
    check_schedule_size(paper, 3, ["oasis", *baselines, *algorithms])
    if opt_cache is not None:  # refused before minutes of measuring, not after
        from .io import ensure_folder
        ensure_folder(opt_cache, "opt_cache")
    runs = 3 if quick else 7
    growth_rounds = 7 if quick else 15
    seeds = (4,) if quick else (0, 1, 2, 3, 4)
    solver_limit = 30.0 if quick else 120.0
    steps: list[tuple[str, Callable[[], list[dict[str, Any]]]]] = []
    steps.append(("OASiS on paper-s1", lambda: bench_oasis(paper, runs)))
    for b in (*baselines, *(a for a in algorithms if a not in baselines)):
        steps.append((f"{b} on paper-s1",
                      lambda b=b: [bench_baseline(b, paper, runs, params.get(b))]))
    for seed in seeds:
        steps.append((f"exact solver on testbed-s{seed}",
                      lambda seed=seed: [bench_solver(generate("testbed", seed=seed),
                                                      solver_limit, opt_cache)]))
    if opt_cache is not None:
        names = {n: params.get(n, {}) for n in registry.builtin_names() + [
            a for a in algorithms if a not in registry.builtin_names()]}
        for seed in range(5):
            steps.append((f"OPT/ALG on testbed-s{seed}",
                          lambda seed=seed: bench_ratios(generate("testbed", seed=seed), names,
                                                         solver_limit, opt_cache)))
    steps.append(("colgen on paper-s1, 50 jobs",
                  lambda: [bench_colgen(generate("paper", seed=1, jobs=50), 60.0)]))
    for axis in GROWTH_BASE:
        steps.append((f"growth in {axis}", lambda axis=axis: [bench_growth(axis, growth_rounds)]))

    rows: list[dict[str, Any]] = []
    with progress_bar(progress, len(steps), "bench", transient=True) as bar:
        for desc, fn in steps:
            bar.describe(desc)
            rows.extend(fn())
            bar.advance()
    return {"machine": machine(), "quick": quick, "columns": COLUMNS, "rows": rows,
            "growth_limit": GROWTH_LIMIT}


# --- CI summary of a pytest-benchmark JSON file --------------------------------------------

SUMMARY_COLUMNS = ["name", "median", "min", "max", "rounds", "size", "figures"]

#: extra_info keys shown in the summary's "figures" column, in this order, when present.
_FIGURES = ("exponent", "limit", "median_ms_per_decision", "status", "gap", "proven", "bound",
            "incumbent", "modelling_share", "completed")
_SIZE = (("jobs", "jobs"), ("horizon", "T"), ("worker_servers", "H"), ("ps_servers", "K"))


def _short(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def summarize_pytest_json(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per benchmark of a ``--benchmark-json`` file: name, median/min/max seconds,
    rounds, the instance size and the figures from ``extra_info`` that matter (exponents,
    statuses, gaps, ms per decision), sorted by name."""
    rows = []
    for b in sorted(data.get("benchmarks", []), key=lambda b: b["fullname"]):
        info, st = b.get("extra_info", {}), b["stats"]
        size = " ".join(f"{label}={info[k]}" for k, label in _SIZE if k in info)
        if not size and "large_size" in info:
            size = " ".join(f"{k}={v}" for k, v in info["large_size"].items())
        figures = ", ".join(f"{k}={_short(info[k])}" for k in _FIGURES if k in info)
        rows.append({"name": b["fullname"].removeprefix("benchmarks/"), "median": st["median"],
                     "min": st["min"], "max": st["max"], "rounds": st["rounds"], "size": size,
                     "figures": figures})
    return rows
