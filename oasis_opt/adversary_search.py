"""Worst cases by search: small instances that maximise OPT/ALG for one algorithm (issue 13).

The competitive ratio of an online algorithm is a worst case over instances, and small instances
are where worst cases are cheap to verify: the exact optimum of a 4-job, 6-slot instance takes
milliseconds. ``search`` runs a local search over such instances, with the proven optimum
(``offline.solve``) for every candidate, and a random-sampling control with the same number of
evaluations that the search must beat.

**Score.** For a candidate, ``ratio = OPT / ALG`` with OPT proven optimal and ALG the utility of
the algorithm's validated schedule. Two cases have no finite ratio and never become the
incumbent: OPT = 0 (``opt_zero``: nothing can earn, the ratio is undefined) and ALG = 0 < OPT
(``alg_zero``: the ratio is +∞; it is counted and reported separately, because an algorithm
without admission guarantees reaches it trivially — a FIFO head that blocks the queue — and it
says nothing about how bad a finite answer can be). A solve that is not proven optimal within
the per-candidate time limit is ``unsolved`` and skipped. "ALG = 0" means
``ALG ≤ 1e-6·OPT`` (``model.REL_TOL``; relative, so utilities of any size score as their
scaled copies do).

**Search** (restarted hill climbing, a (1, λ) strategy with plateau moves): a restart draws
``batch`` random instances from the search space and keeps the best; each following round
evaluates ``batch`` neighbours of the current instance, each made by 1–3 random local moves
(arrival, workload, max/requested workers, PS ratio, one worker- or PS-demand entry, one server
capacity, a job's utility scale or deadline, a job's position in the file, or one job redrawn),
and moves to the best neighbour when it is at least as good; after ``patience`` rounds without
a strict improvement the search restarts. The random control draws ``batch`` random instances
per round from its own stream.

**Determinism.** All randomness comes from ``numpy.random.default_rng([seed, stream])``; a
round's candidates are drawn before any of them is evaluated, and results are read back in
candidate order, so the outcome depends only on the seed and the number of evaluations — not on
the executor, its worker count or the time budget. A time budget (``budget`` seconds) stops the
search between rounds; rerunning with ``evaluations`` equal to the number it reports reproduces
the result exactly.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError
from .model import REL_TOL

#: Streams of ``default_rng([seed, stream])``: the search and the random control; the
#: instance on which ``search`` tries the algorithm once before it starts (``PROBE_STREAM``).
SEARCH_STREAM, RANDOM_STREAM, PROBE_STREAM = 1, 2, 3
RESOURCES = ("gpu", "cpu")
DEFAULT_EVALUATIONS = 200
#: At least one exact solve each: more would run for weeks (bound a long search by ``budget``).
MAX_EVALUATIONS = 10**6
#: Utilities are 0 or in [MIN_VALUE, max_value]; finite ratios are at most J·max_value/MIN_VALUE.
MIN_VALUE = 1.0
#: Most jobs per candidate when candidates are scored by a certified lower bound on OPT.
MAX_CERTIFIED_JOBS = 80
#: Structured seeds for the search's first restart (``family_seed``).
SEED_FAMILIES = ("threshold",)


@dataclass(frozen=True)
class SearchSpace:
    """The instances the search visits: fixed sizes, integer demands and capacities in small
    ranges, utility tables (non-increasing, every value 0 or in ``[MIN_VALUE, max_value]``).

    Bounding the utilities bounds the ratio an adversary can reach by making the algorithm's
    jobs nearly worthless (at most ``jobs·max_value/MIN_VALUE``): every ratio found is relative
    to this range.
    """

    jobs: int = 4
    horizon: int = 6
    worker_servers: int = 2
    ps_servers: int = 1
    max_capacity: int = 8
    max_demand: int = 4
    max_workload: int = 12
    max_workers: int = 4
    max_ps_ratio: int = 4
    max_value: float = 100.0
    #: The theorem's regime: no job's workers (PSs) may hold more than this share of a server
    #: resource in a slot, ``N_i·α_i[r] ≤ s·C_h[r]`` and ``ceil(N_i/γ_i)·β_i[r] ≤ s·C_k[r]`` on
    #: every server (None: no limit). Capacities are then drawn in ``capacity_range``.
    max_share: float | None = None

    @property
    def capacity_range(self) -> tuple[int, int]:
        if self.max_share is None:
            return 1, self.max_capacity
        lo = math.ceil(1 / self.max_share - 1e-9)  # a unit of demand 1 fits within the share
        return lo, max(lo, self.max_capacity,
                       math.ceil(self.max_demand * 2 / self.max_share - 1e-9))

    def check(self, certified: bool = False) -> None:
        """Sizes the search can score: up to 8 jobs when every OPT is proven, up to
        ``MAX_CERTIFIED_JOBS`` when candidates are scored by a certified lower bound.

        These bounds keep every candidate small, so the search makes no schedule-size check
        (``io.check_schedule_size``, SPEC §5): at the largest sizes allowed here, with the
        other ranges at their defaults (which neither the command line nor ``api.adversary``
        changes), a schedule is about 0.5 MiB beside an instance of 0.6 MiB, whose own size
        is checked when each candidate is built (``io.check_instance_size``)."""
        if self.max_share is not None and not 0.01 <= self.max_share <= 1:
            raise InputError("max_share", f"must be in [0.01, 1], got {self.max_share}")
        why = ("a certified lower bound is found for every candidate" if certified else
               "the exact optimum is solved for every candidate; --certified allows more")
        for name, lo, hi in (("jobs", 1, MAX_CERTIFIED_JOBS if certified else 8),
                             ("horizon", 1, 12), ("worker_servers", 1, 4),
                             ("ps_servers", 1, 3)):
            x = getattr(self, name)
            if not lo <= x <= hi:
                raise InputError(name,
                                 f"must be in {lo}…{hi} ({why}), got {x}")


# --- random instances and local moves ----------------------------------------------------


def _table(rng: np.random.Generator, space: SearchSpace, peak: float | None = None) -> list:
    """A non-increasing utility table of length T: a deadline step, a linear decay or a
    sigmoid, peak drawn in [1, max_value]."""
    T = space.horizon
    v = float(rng.uniform(1.0, space.max_value)) if peak is None else peak
    d = np.arange(1, T + 1, dtype=float)
    kind = int(rng.integers(3))
    if kind == 0:
        vals = np.where(d <= int(rng.integers(1, T + 1)), v, 0.0)
    elif kind == 1:
        vals = np.maximum(0.0, v - float(rng.uniform(0, v / 2)) * (d - 1))
    else:
        g2, g3 = float(rng.uniform(0.2, 4.0)), float(rng.uniform(1.0, T))
        vals = v / (1.0 + np.exp(np.minimum(50.0, g2 * (d - g3))))
    return _monotone(vals)


def _monotone(vals: np.ndarray) -> list[float]:
    """Non-increasing, rounded to 3 decimals (rounding keeps the order), and every value below
    ``MIN_VALUE`` set to 0: a job is worth 0 or at least 1, so a ratio cannot grow without
    bound by letting an algorithm finish a job worth 0.001."""
    vals = np.minimum.accumulate(np.maximum(np.asarray(vals, dtype=float), 0.0))
    vals = np.where(vals < MIN_VALUE, 0.0, np.round(vals, 3))
    return [float(x) for x in np.minimum.accumulate(vals)]


def _demand(rng: np.random.Generator, space: SearchSpace) -> list[int]:
    d = [int(x) for x in rng.integers(0, space.max_demand + 1, size=len(RESOURCES))]
    if not any(d):
        d[int(rng.integers(len(d)))] = 1
    return d


def _job(rng: np.random.Generator, space: SearchSpace, job_id: str) -> dict[str, Any]:
    n = int(rng.integers(1, space.max_workers + 1))
    return {
        "id": job_id,
        "arrival": int(rng.integers(space.horizon)),
        "workload": int(rng.integers(1, space.max_workload + 1)),
        "max_workers": n,
        "ps_ratio": int(rng.integers(1, space.max_ps_ratio + 1)),
        "worker_demand": _demand(rng, space),
        "ps_demand": _demand(rng, space),
        "requested_workers": int(rng.integers(1, n + 1)),
        "utility": {"kind": "table", "values": _table(rng, space)},
    }


def random_instance(rng: np.random.Generator, space: SearchSpace,
                    name: str = "adversary") -> dict[str, Any]:
    """One instance of the space, as an ``oasis-instance/1`` dict."""
    lo, hi = space.capacity_range

    def servers(prefix: str, count: int) -> list[dict[str, Any]]:
        return [{"name": f"{prefix}{s}",
                 "capacity": [int(x) for x in rng.integers(lo, hi + 1, size=len(RESOURCES))]}
                for s in range(count)]
    return _repair({
        "format": "oasis-instance/1", "name": name, "horizon": space.horizon,
        "resources": list(RESOURCES),
        "worker_servers": servers("w", space.worker_servers),
        "ps_servers": servers("p", space.ps_servers),
        "jobs": [_job(rng, space, f"j{i}") for i in range(space.jobs)],
    }, space)


def _repair(inst: dict[str, Any], space: SearchSpace) -> dict[str, Any]:
    """With ``space.max_share`` s, shrink each job until its workers and PSs fit the share on
    every server (``SearchSpace.max_share``): demands first (to ``floor(s·C_min)`` ≥ 1), then
    ``max_workers``, then the PS count through a larger PS ratio. In place; returns ``inst``."""
    s = space.max_share
    if s is None:
        return inst
    cw = np.min([c["capacity"] for c in inst["worker_servers"]], axis=0)
    cp = np.min([c["capacity"] for c in inst["ps_servers"]], axis=0)
    for j in inst["jobs"]:
        a, b = j["worker_demand"], j["ps_demand"]
        n = j["max_workers"]
        for r in range(len(RESOURCES)):
            if a[r] > 0:
                a[r] = min(a[r], max(1, math.floor(s * cw[r] + 1e-9)))
                n = min(n, max(1, math.floor(s * cw[r] / a[r] + 1e-9)))
        j["max_workers"] = n
        j["requested_workers"] = min(j["requested_workers"], n)
        zmax = math.ceil(n / j["ps_ratio"] - 1e-9)
        for r in range(len(RESOURCES)):
            if b[r] > 0:
                b[r] = min(b[r], max(1, math.floor(s * cp[r] + 1e-9)))
                zmax = min(zmax, max(1, math.floor(s * cp[r] / b[r] + 1e-9)))
        j["ps_ratio"] = max(int(j["ps_ratio"]), math.ceil(n / zmax - 1e-9))
    return inst


def family_seed(rng: np.random.Generator, space: SearchSpace, family: str = "threshold",
                name: str = "adversary") -> dict[str, Any]:
    """A member of a structured family (``tightness``) fitted to the space, as a start for the
    search. ``threshold``: every worker server gets ``C`` GPUs (the least capacity the share
    allows), all jobs arrive at slot 0 needing one worker for one slot (a 1-slot deadline),
    in ``K`` blocks of ``B = H·C`` jobs (one block fills the cluster; the last block takes the
    remainder) of equal value, rising geometrically by a factor ``(4·B)^(1/K)`` per block up to
    ``max_value``. ``K`` is drawn from 2 … ``J // B``, so a batch of seeds holds different
    prefixes of the family; with fewer than 2 blocks' worth of jobs, two halves."""
    if family not in SEED_FAMILIES:
        raise InputError("seed_family", f"unknown family {family!r}; choose from "
                                          f"{', '.join(SEED_FAMILIES)}")
    C = space.capacity_range[0]
    H, J, T = space.worker_servers, space.jobs, space.horizon
    B = H * C
    if J >= 2 * B:
        K = int(rng.integers(2, J // B + 1))
    else:
        K, B = min(2, J), max(1, J // 2)
    span = 4.0 * H * C
    vals = [space.max_value * span ** ((k - K) / K) for k in range(1, K + 1)]
    jobs = []
    for i in range(J):
        k = min(K - 1, i // B)  # blocks in rising order
        v = float(np.clip(vals[k], MIN_VALUE, space.max_value))
        jobs.append({"id": f"j{i}", "arrival": 0, "workload": 1, "max_workers": 1,
                     "ps_ratio": 1, "worker_demand": [1] + [0] * (len(RESOURCES) - 1),
                     "ps_demand": [0] * len(RESOURCES), "requested_workers": 1,
                     "utility": {"kind": "table", "values": _monotone(
                         np.array([v] + [0.0] * (T - 1)))}})
    return _repair({
        "format": "oasis-instance/1", "name": name, "horizon": T,
        "resources": list(RESOURCES),
        "worker_servers": [{"name": f"w{h}", "capacity": [C] * len(RESOURCES)}
                           for h in range(H)],
        "ps_servers": [{"name": f"p{k}", "capacity": [C] * len(RESOURCES)}
                       for k in range(space.ps_servers)],
        "jobs": jobs}, space)


def _clip(x: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, x))


def _step(rng: np.random.Generator) -> int:
    return int(rng.choice((-2, -1, 1, 2)))


MOVES = ("arrival", "workload", "max_workers", "requested", "ps_ratio", "worker_demand",
         "ps_demand", "capacity", "utility_scale", "utility_deadline", "utility_shape",
         "reorder", "redraw")


def _move(rng: np.random.Generator, inst: dict[str, Any], space: SearchSpace) -> None:
    """One local move, in place (``MOVES``)."""
    jobs = inst["jobs"]
    j = jobs[int(rng.integers(len(jobs)))]
    r = int(rng.integers(len(RESOURCES)))
    move = MOVES[int(rng.integers(len(MOVES)))]
    T = space.horizon
    if move == "arrival":
        j["arrival"] = _clip(j["arrival"] + _step(rng), 0, T - 1)
    elif move == "workload":
        w = j["workload"]
        w = w * 2 if rng.random() < 0.15 else w + _step(rng)
        j["workload"] = _clip(w, 1, space.max_workload)
    elif move == "max_workers":
        j["max_workers"] = _clip(j["max_workers"] + _step(rng), 1, space.max_workers)
        j["requested_workers"] = min(j["requested_workers"], j["max_workers"])
    elif move == "requested":
        j["requested_workers"] = _clip(j["requested_workers"] + _step(rng), 1, j["max_workers"])
    elif move == "ps_ratio":
        j["ps_ratio"] = _clip(int(j["ps_ratio"]) + _step(rng), 1, space.max_ps_ratio)
    elif move in ("worker_demand", "ps_demand"):
        d = j[move]
        d[r] = _clip(d[r] + _step(rng), 0, space.max_demand)
        if not any(d):
            d[r] = 1
    elif move == "capacity":
        pool = inst["worker_servers"] if rng.random() < 0.7 else inst["ps_servers"]
        c = pool[int(rng.integers(len(pool)))]["capacity"]
        c[r] = _clip(c[r] + _step(rng), *space.capacity_range)
    elif move == "utility_scale":
        vals = np.array(j["utility"]["values"], dtype=float)
        factor = float(rng.choice((0.25, 0.5, 0.8, 1.25, 2.0, 4.0)))
        peak = max(vals[0], 1e-9)
        factor = min(factor, space.max_value / peak)
        factor = max(factor, 1.0 / peak)
        j["utility"]["values"] = _monotone(vals * factor)
    elif move == "utility_deadline":
        vals = np.array(j["utility"]["values"], dtype=float)
        cut = int(rng.integers(1, T + 1))
        if rng.random() < 0.5:
            vals[cut:] = 0.0  # a harder deadline
        else:
            vals[:cut] = vals[0]  # a later one: full value up to duration cut
        j["utility"]["values"] = _monotone(vals)
    elif move == "utility_shape":
        j["utility"]["values"] = _table(rng, space, peak=float(j["utility"]["values"][0]) or 1.0)
    elif move == "reorder":
        a, b = (int(x) for x in rng.choice(len(jobs), size=2, replace=len(jobs) < 2))
        jobs[a], jobs[b] = jobs[b], jobs[a]
    else:  # redraw
        k = int(rng.integers(len(jobs)))
        jobs[k] = _job(rng, space, jobs[k]["id"])


def _targeted(rng: np.random.Generator, inst: dict[str, Any], space: SearchSpace,
              hint: Outcome) -> bool:
    """A directed utility move: make a job the optimum completes but the algorithm does not
    worth more, or a job the algorithm completes but the optimum does not worth less (both
    raise OPT/ALG if the decisions stay). False when no job qualifies."""
    opt_only = [j for j in inst["jobs"] if j["id"] in hint.opt_done and j["id"] not in
                hint.alg_done]
    alg_only = [j for j in inst["jobs"] if j["id"] in hint.alg_done and j["id"] not in
                hint.opt_done]
    pools = [(p, up) for p, up in ((opt_only, True), (alg_only, False)) if p]
    if not pools:
        return False
    pool, up = pools[int(rng.integers(len(pools)))]
    j = pool[int(rng.integers(len(pool)))]
    vals = np.array(j["utility"]["values"], dtype=float)
    peak = max(vals[0], 1e-9)
    factor = float(rng.choice((1.5, 2.0, 4.0))) if up else float(rng.choice((0.25, 0.5, 0.7)))
    factor = min(max(factor, MIN_VALUE / peak), space.max_value / peak)
    j["utility"]["values"] = _monotone(vals * factor)
    return True


def mutate(rng: np.random.Generator, inst: Mapping[str, Any], space: SearchSpace,
           hint: Outcome | None = None) -> dict[str, Any]:
    """A neighbour of ``inst``: a copy with 1–3 local moves; given the outcome on ``inst``
    (``hint``), a third of the neighbours start with a directed utility move."""
    import copy
    out = copy.deepcopy(dict(inst))
    moves = int(rng.integers(1, 4))
    if hint is not None and rng.random() < 1 / 3 and _targeted(rng, out, space, hint):
        moves -= 1
    for _ in range(moves):
        _move(rng, out, space)
    return _repair(out, space)


def _kick(rng: np.random.Generator, inst: Mapping[str, Any],
          space: SearchSpace) -> dict[str, Any]:
    """4–6 local moves at once: a restart near a good instance."""
    import copy
    out = copy.deepcopy(dict(inst))
    for _ in range(int(rng.integers(4, 7))):
        _move(rng, out, space)
    return _repair(out, space)


# --- evaluation (module level: pickled to worker processes) ------------------------------


@dataclass(frozen=True)
class Candidate:
    """One instance to evaluate for one algorithm."""

    index: int
    phase: str  # "search" or "random"
    instance: dict[str, Any]
    algorithm: str
    params: tuple[tuple[str, Any], ...] = ()
    time_limit: float = 10.0
    certified: bool = False  # score by a certified lower bound on OPT (module docstring)


@dataclass(frozen=True)
class Outcome:
    """``status``: ok (finite ratio), alg_zero (ratio +∞), opt_zero (undefined), unsolved."""

    index: int
    phase: str
    status: str
    ratio: float | None
    opt: float | None
    alg: float | None
    opt_done: tuple[str, ...] = ()  # ids of the jobs the optimum completes
    alg_done: tuple[str, ...] = ()  # ids of the jobs the algorithm completes
    upper: float | None = None  # the solver's bound on OPT (= opt when proven)

    @property
    def score(self) -> float:
        return self.ratio if self.status == "ok" and self.ratio is not None else -math.inf


def score_ratio(opt: float, alg: float) -> tuple[str, float | None]:
    """(status, ratio) of OPT and ALG (module docstring)."""
    if opt <= 0.0:
        return "opt_zero", None
    if alg <= REL_TOL * opt:
        return "alg_zero", math.inf
    return "ok", opt / alg


def evaluate(c: Candidate, on_stage: Callable[[str], None] | None = None) -> Outcome:
    """Proven OPT by the exact solver, then the algorithm (validated) on the same instance;
    ``on_stage`` hears ``"solve"`` and ``"algorithm"`` as each starts (``SearchWatch``)."""
    from . import algorithms
    from .formulations.common import Options
    from .io import instance_from_dict
    from .offline import SolveStatus, solve
    from .validate import validate
    inst = instance_from_dict(c.instance)
    if on_stage is not None:
        on_stage("solve")
    # One variable per server: as fast as the pattern packing on these sizes, and immune to
    # its enumeration of single-server patterns, which explodes on large capacities.
    opt_sched, rep = solve(inst, time_limit=c.time_limit, options=Options(packing="server"))
    if c.certified:
        # the best schedule found (never worse than the best online algorithm's, SPEC §6),
        # re-validated: its utility is a certified lower bound on OPT, whatever the status
        check = validate(inst, opt_sched)
        if not check.feasible:
            return Outcome(c.index, c.phase, "unsolved", None, None, None)
        opt = float(check.total_utility)
    elif rep.status is not SolveStatus.OPTIMAL:
        return Outcome(c.index, c.phase, "unsolved", None, None, None)
    else:
        opt = float(rep.objective)
    if on_stage is not None:
        on_stage("algorithm")
    sched = algorithms.run(c.algorithm, inst, **dict(c.params))
    alg = float(sched.total_utility)
    status, ratio = score_ratio(opt, alg)
    return Outcome(c.index, c.phase, status, ratio, opt, alg,
                   tuple(j.id for j in opt_sched.jobs if j.completed),
                   tuple(j.id for j in sched.jobs if j.completed),
                   upper=max(opt, float(rep.bound)))


def _evaluate_all(cands: Sequence[Candidate], executor: Executor | None,
                  bar: Any, watch: SearchWatch | None = None) -> list[Outcome]:
    """Every candidate's outcome, in candidate order whatever the executor. ``cands`` is a
    round's search candidates, then as many random ones; in this process they run in pairs
    (search k, random k), so that the pairs done are a shorter search's round
    (``SearchWatch``)."""
    results: list[Outcome | None] = [None] * len(cands)
    if executor is None:
        n = len(cands) // 2
        for k in (q for pair in zip(range(n), range(n, 2 * n), strict=True) for q in pair):
            c = cands[k]
            if watch is not None:
                watch.now(f"{c.phase} candidate {c.index}", c.instance)  # as in the trajectory
            results[k] = evaluate(c, None if watch is None else watch.stage)
            if watch is not None:
                watch.told(k, results[k])
            bar.advance()
        return [r for r in results if r is not None]
    from concurrent.futures import as_completed
    futures = {executor.submit(evaluate, c): k for k, c in enumerate(cands)}
    if watch is not None:
        watch.now("the candidates of a round (in the executor's workers)", None, "")
    for fut in as_completed(futures):
        results[futures[fut]] = fut.result()
        if watch is not None:
            watch.told(futures[fut], results[futures[fut]])
        bar.advance()
    return [r for r in results if r is not None]


# --- the search --------------------------------------------------------------------------


@dataclass(frozen=True)
class TrajectoryRow:
    index: int  # evaluation number within its phase, from 0
    phase: str
    restart: int  # the search's restart count (0 for random)
    round: int
    status: str
    ratio: float | None
    opt: float | None
    alg: float | None
    best: float  # best finite ratio of this phase so far (-inf: none yet)


@dataclass(frozen=True)
class AdversaryResult:
    """The worst instance found and how the search got there.

    ``ratio``/``opt``/``alg`` belong to ``instance`` (None when no candidate had a finite
    ratio); ``random_ratio`` is the best finite ratio of the random control;
    ``counts[phase][status]`` counts outcomes."""

    algorithm: str
    seed: int
    space: SearchSpace
    evaluations: int
    ratio: float | None
    opt: float | None
    alg: float | None
    random_ratio: float | None
    instance: dict[str, Any] | None
    restarts: int
    rounds: int
    seconds: float
    counts: dict[str, dict[str, int]]
    trajectory: tuple[TrajectoryRow, ...] = field(repr=False, default=())
    certified: bool = False  # ratios are certified lower bounds (OPT not always proven)
    seed_family: str | None = None
    upper_ratio: float | None = None  # the solver's bound on OPT / ALG, for ``instance``
    random_upper_ratio: float | None = None
    #: the algorithm's keyword parameters (``--param``), as ``run`` and ``verify`` report them
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_records(self) -> list[dict[str, Any]]:
        """The trajectory, one row per evaluated candidate (``TRAJECTORY_COLUMNS``)."""
        from dataclasses import asdict
        return [asdict(r) for r in self.trajectory]

    def to_dataframe(self) -> Any:
        """``to_records()`` as a pandas DataFrame (needs pandas)."""
        from .records import dataframe
        return dataframe(self.to_records())

    def summary(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "params": dict(self.params), "seed": self.seed,
                "ratio": self.ratio,
                "opt": self.opt, "alg": self.alg, "evaluations": self.evaluations,
                "random_ratio": self.random_ratio,
                "beats_random": (self.ratio is not None and
                                 (self.random_ratio is None or self.ratio > self.random_ratio)),
                "scoring": "certified lower bound on OPT" if self.certified else "proven OPT",
                "upper_ratio": self.upper_ratio, "random_upper_ratio": self.random_upper_ratio,
                "seed_family": self.seed_family,
                "restarts": self.restarts, "rounds": self.rounds, "seconds": self.seconds,
                "counts": self.counts, "space": vars(self.space)}


def search(algorithm: str, *, space: SearchSpace | None = None, evaluations: int | None = None,
           budget: float | None = None, seed: int = 0, executor: Executor | None = None,
           progress: bool = False, batch: int = 8, patience: int = 4,
           time_limit: float = 10.0, params: Mapping[str, Any] | None = None,
           certified: bool = False, seed_family: str | None = None,
           watch: SearchWatch | None = None) -> AdversaryResult:
    """Search ``space`` for an instance of large OPT/ALG (module docstring).

    Args:
        evaluations: candidates the search evaluates (the random control evaluates as many);
            default ``DEFAULT_EVALUATIONS`` when no ``budget`` is given.
        budget: wall seconds; the search stops after the round in which it runs out.
        executor: where candidates run (``tasks.make_executor``); None runs them in-process.
        batch: candidates per round and per phase; part of what makes a result reproducible.
        patience: rounds without a strict improvement before a restart.
        time_limit: seconds of the exact solve per candidate (an unproven one is skipped).
        params: keyword parameters of the algorithm.
        certified: score a candidate by a certified lower bound on OPT (the best schedule
            ``offline.solve`` finds within ``time_limit``, re-validated) instead of the proven
            optimum, so that instances of dozens of jobs can be searched; every ratio is then
            still a lower bound on the worst case, and ``upper_ratio`` (bound/ALG) its upper
            end.
        seed_family: the first restart starts from members of this family (``family_seed``)
            instead of random instances.
        watch: told what the search does, for another thread (``SearchWatch``).
    """
    from . import algorithms
    from .progress import progress_bar
    space = space or SearchSpace()
    space.check(certified)
    if seed_family is not None and seed_family not in SEED_FAMILIES:
        raise InputError("seed_family", f"unknown family {seed_family!r}; choose from "
                                        f"{', '.join(SEED_FAMILIES)}")
    algorithms.check(algorithm)
    algorithms.check_params(algorithm, params or {})
    if not 0 <= seed < 2**63:
        raise InputError("seed", f"must be in [0, 2^63), got {seed}")
    if evaluations is not None and not 1 <= evaluations <= MAX_EVALUATIONS:
        raise InputError("evaluations", f"must be in 1 … {MAX_EVALUATIONS}, got {evaluations} "
                                        "(a longer search: --budget SECONDS)")
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise InputError("budget", f"must be a positive number of seconds, got {budget}")
    if batch < 1 or patience < 1:
        raise InputError("batch", "batch and patience must be at least 1")
    if evaluations is None and budget is None:
        evaluations = DEFAULT_EVALUATIONS
    # the algorithm and its parameters tried once here, in-process, on an instance of the
    # space, as the verifier and sweep grids do: a value it refuses (``u_scale=-1``) is bad
    # input before the progress bar, a worker's log or a file; the first candidate found it
    # after them (on Dask with a worker's traceback). Its own stream: the search is unchanged.
    from .io import instance_from_dict
    probe = random_instance(np.random.default_rng([seed, PROBE_STREAM]), space)
    if watch is not None:
        watch.now("the instance the search tries it on first", probe, "algorithm")
    algorithms.run(algorithm, instance_from_dict(probe), **(params or {}))
    pitems = tuple(sorted((params or {}).items()))
    rng_s = np.random.default_rng([seed, SEARCH_STREAM])
    rng_r = np.random.default_rng([seed, RANDOM_STREAM])
    start = time.perf_counter()

    current: dict[str, Any] | None = None
    current_out: Outcome | None = None
    current_score = -math.inf
    stale = restarts = 0
    tally = _Tally()
    total = 2 * evaluations if evaluations is not None else 0

    def result_of(t: _Tally) -> AdversaryResult:
        return t.result(algorithm, seed, space, time.perf_counter() - start, certified,
                        seed_family, params)
    if watch is not None:
        watch.begin(tally, result_of)

    with progress_bar(progress, total, f"adversary {algorithm}") as bar:
        while True:
            if evaluations is not None and tally.done >= evaluations:
                break
            if budget is not None and time.perf_counter() - start >= budget:
                break
            done = tally.done
            n = batch if evaluations is None else min(batch, evaluations - done)
            fresh = current is None or stale >= patience
            if fresh:
                restarts += 1
                stale = 0
                best = tally.best
                if restarts % 2 == 0 and best is not None and math.isfinite(best[0].score):
                    # every second restart kicks the best instance so far (iterated local
                    # search): 4–6 moves away, far enough to leave its basin
                    cand = [_kick(rng_s, best[1], space) for _ in range(n)]
                elif restarts == 1 and seed_family is not None:
                    cand = [family_seed(rng_s, space, seed_family) for _ in range(n)]
                else:
                    cand = [random_instance(rng_s, space) for _ in range(n)]
            else:
                assert current is not None
                cand = [mutate(rng_s, current, space, current_out) for _ in range(n)]
            control = [random_instance(rng_r, space) for _ in range(n)]
            tasks = [Candidate(done + k, "search", d, algorithm, pitems, time_limit, certified)
                     for k, d in enumerate(cand)]
            tasks += [Candidate(done + k, "random", d, algorithm, pitems, time_limit,
                                certified) for k, d in enumerate(control)]
            if watch is not None:
                watch.round(cand, restarts)
            outs = _evaluate_all(tasks, executor, bar, watch)
            with watch.lock if watch is not None else contextlib.nullcontext():
                k = tally.add_round(cand, outs[:n], outs[n:], restarts)
                if watch is not None:
                    watch.round(None, restarts)
            top = outs[k]
            if fresh or top.score > current_score:
                current, current_out, current_score = cand[k], top, top.score
            else:
                stale += 1
                if top.score == current_score and math.isfinite(top.score):
                    current, current_out = cand[k], top  # a plateau move: same ratio

    return result_of(tally)


@dataclass
class _Tally:
    """What decides ``search``'s result: the evaluations and rounds done, the restarts, the
    best search candidate (outcome, instance) and random ratio, the counts and the
    trajectory."""

    done: int = 0
    rounds: int = 0
    restarts: int = 0
    best: tuple[Outcome, dict[str, Any]] | None = None
    best_random: float = -math.inf
    random_upper: float | None = None
    best_search: float = -math.inf
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {"search": {}, "random": {}})
    rows: list[TrajectoryRow] = field(default_factory=list)

    def add_round(self, cand: Sequence[dict[str, Any]], s_out: Sequence[Outcome],
                  r_out: Sequence[Outcome], restarts: int) -> int:
        """Count a round of ``len(s_out)`` search candidates ``cand`` and as many random
        ones, in the search's restart ``restarts``; the position of its best search
        candidate (ties: the first)."""
        self.restarts = restarts
        for o in (*s_out, *r_out):
            c = self.counts[o.phase]
            c[o.status] = c.get(o.status, 0) + 1
        for o in r_out:
            if o.score > self.best_random:
                self.random_upper = o.upper / o.alg if o.upper and o.alg else None
            self.best_random = max(self.best_random, o.score)
            self.rows.append(TrajectoryRow(o.index, "random", 0, self.rounds, o.status,
                                           o.ratio, o.opt, o.alg, self.best_random))
        for o in s_out:
            self.best_search = max(self.best_search, o.score)
            self.rows.append(TrajectoryRow(o.index, "search", self.restarts, self.rounds,
                                           o.status, o.ratio, o.opt, o.alg, self.best_search))
        k = max(range(len(s_out)), key=lambda q: (s_out[q].score, -q))
        if self.best is None or s_out[k].score > self.best[0].score:
            self.best = (s_out[k], dict(cand[k]))
        self.done += len(s_out)
        self.rounds += 1
        return k

    def copy(self) -> _Tally:
        return _Tally(self.done, self.rounds, self.restarts, self.best, self.best_random,
                      self.random_upper, self.best_search,
                      {p: dict(c) for p, c in self.counts.items()}, list(self.rows))

    def result(self, algorithm: str, seed: int, space: SearchSpace, seconds: float,
               certified: bool, seed_family: str | None,
               params: Mapping[str, Any] | None) -> AdversaryResult:
        best = self.best
        finite = best is not None and math.isfinite(best[0].score)
        worst = best[1] if finite and best is not None else None
        if worst is not None:
            worst = dict(worst, name=f"adversary-{algorithm}-s{seed}")
        o = best[0] if finite and best is not None else None
        random_ok = math.isfinite(self.best_random)
        return AdversaryResult(
            algorithm=algorithm, seed=seed, space=space, evaluations=self.done,
            ratio=o.ratio if o else None, opt=o.opt if o else None, alg=o.alg if o else None,
            random_ratio=self.best_random if random_ok else None,
            instance=worst, restarts=self.restarts, rounds=self.rounds, seconds=seconds,
            counts={p: dict(c) for p, c in self.counts.items()},
            trajectory=tuple(self.rows), certified=certified, seed_family=seed_family,
            upper_ratio=(o.upper / o.alg if o and o.upper is not None and o.alg else None),
            random_upper_ratio=self.random_upper if random_ok else None,
            params=dict(params or {}))


class SearchWatch:
    """A running ``search`` as another thread sees it (the command line's last resort,
    ``oasis-opt adversary --budget``): ``snapshot()`` is the result of every evaluation done
    so far — the rounds done, and the (search k, random k) pairs done of the round under way
    (in this process they run in pairs), which is the result of a search of that many
    evaluations — with what runs now (``running``: "algorithm 'x' still ran on search
    candidate 9") and the instance it runs on. The search tells it; ``lock`` is held while
    a round is counted."""

    def __init__(self, algorithm: str) -> None:
        self.algorithm = algorithm
        self.lock = threading.Lock()
        self.what = "the search's start"
        self.instance: dict[str, Any] | None = None
        self.doing = ""
        self._tally: _Tally | None = None
        self._result: Callable[[_Tally], AdversaryResult] | None = None
        self._cand: Sequence[dict[str, Any]] | None = None
        self._restarts = 0
        self._outs: dict[int, Outcome] = {}

    def begin(self, tally: _Tally, result: Callable[[_Tally], AdversaryResult]) -> None:
        with self.lock:
            self._tally, self._result = tally, result

    def now(self, what: str, instance: dict[str, Any] | None, doing: str = "solve") -> None:
        """``what`` runs now (on ``instance``), starting with ``doing``."""
        self.what, self.instance, self.doing = what, instance, doing

    def stage(self, doing: str) -> None:
        """``evaluate``'s ``on_stage``: the candidate's solve or algorithm starts."""
        self.doing = doing

    def round(self, cand: Sequence[dict[str, Any]] | None, restarts: int) -> None:
        """A round of search candidates ``cand`` starts in restart ``restarts`` (None: it
        was counted)."""
        self._outs = {}
        self._cand, self._restarts = cand, restarts

    def told(self, k: int, outcome: Outcome) -> None:
        """Task ``k`` of the round under way (search candidates first) is done."""
        self._outs[k] = outcome

    @property
    def running(self) -> str:
        """What runs now, in words: "algorithm 'x' still ran on search candidate 9 (an
        algorithm cannot be interrupted)"."""
        if self.doing == "algorithm":
            return f"algorithm {self.algorithm!r} still ran on {self.what} (an algorithm " \
                "cannot be interrupted)"
        if self.doing == "solve":
            return f"the exact solve of {self.what} still ran"
        return f"{self.what} still ran"

    def snapshot(self) -> AdversaryResult | None:
        """The result of the evaluations done so far (None before the search starts)."""
        with self.lock:
            if self._tally is None or self._result is None:
                return None
            tally = self._tally.copy()
            cand, outs, restarts = self._cand, dict(self._outs), self._restarts
        if cand:  # the pairs done of the round under way
            n = len(cand)
            m = next((k for k in range(n) if k not in outs or n + k not in outs), n)
            if m:
                tally.add_round(cand[:m], [outs[k] for k in range(m)],
                                [outs[n + k] for k in range(m)], restarts)
        return self._result(tally)


# --- outputs -----------------------------------------------------------------------------

TRAJECTORY_COLUMNS = ("index", "phase", "restart", "round", "status", "ratio", "opt", "alg",
                      "best")


def trajectory_csv(result: AdversaryResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TRAJECTORY_COLUMNS)
    for r in result.trajectory:
        w.writerow([r.index, r.phase, r.restart, r.round, r.status,
                    "" if r.ratio is None else repr(r.ratio),
                    "" if r.opt is None else repr(r.opt), "" if r.alg is None else repr(r.alg),
                    "" if not math.isfinite(r.best) else repr(r.best)])
    return buf.getvalue()


def trajectory_figure(result: AdversaryResult, path: str | Path) -> None:
    """Best ratio so far against evaluations, search and random control; each candidate's
    finite ratio as a dot. Written atomically (temporary file, then rename)."""
    from .plots import pyplot
    plt = pyplot()
    path = Path(path)
    fig, ax = plt.subplots(figsize=(7, 4))
    for phase, color in (("search", "tab:red"), ("random", "tab:blue")):
        pts = [r for r in result.trajectory if r.phase == phase]
        xs = [r.index + 1 for r in pts if r.status == "ok"]
        ys = [r.ratio for r in pts if r.status == "ok"]
        ax.scatter(xs, ys, s=6, color=color, alpha=0.3)
        bx = [r.index + 1 for r in pts if math.isfinite(r.best)]
        by = [r.best for r in pts if math.isfinite(r.best)]
        ax.step(bx, by, where="post", color=color,
                label=f"{phase}: best {by[-1]:.3g}" if by else phase)
    finite = [r.ratio for r in result.trajectory if r.status == "ok" and r.ratio]
    if finite and min(finite) > 0:  # a log axis needs a positive value to show
        ax.set_yscale("log")
    ax.set_xlabel("evaluations (each: exact OPT + one algorithm run)")
    ax.set_ylabel("OPT / ALG" + (" (log scale)" if ax.get_yscale() == "log" else ""))
    ax.set_title(f"adversary for {result.algorithm} (seed {result.seed}, "
                 f"{result.space.jobs} jobs, {result.space.horizon} slots)")
    ax.grid(alpha=0.3)
    ax.legend()
    from .plots import save_figure
    save_figure(fig, path, dpi=110)


def describe(instance: Mapping[str, Any]) -> dict[str, Any]:
    """Features of an instance that the worst cases share (docs/results.md): the largest share
    of one server a single worker or PS takes, the spread of the jobs' peak utilities, arrivals,
    and OASiS's α on it."""
    from . import algorithms
    from .io import instance_from_dict
    from .online.prices import default_bounds
    inst = instance_from_dict(dict(instance))
    sched = algorithms.run("oasis", inst)
    peaks = inst.utility_table[:, 0]
    b = default_bounds(inst)
    return {"two_alpha": sched.extras["two_alpha"],
            "max_unit_share": sched.extras["max_unit_share"],
            "oasis_max_job_share": sched.extras["max_job_share"],
            "oasis_relationship_failures": len(sched.extras["relationship_failures"]),
            "peak_utility_ratio": float(peaks.max() / max(peaks.min(), 1e-12)),
            "opt_lb": b.opt_lb,
            "arrivals": [int(a) for a in inst.arrival]}
