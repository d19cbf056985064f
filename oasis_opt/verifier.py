"""Verification over a finite instance space: the exact maximum of OPT/ALG (issue 20).

A space file (``oasis-space/1``, SPEC §6) fixes the horizon, the resources and the servers, and
lists for each job field the values a job may take. Every job takes every combination of the
listed values independently, so a space of ``J`` jobs with ``m`` options per job holds ``m^J``
instances. Instance ``n`` is numbered like ``itertools.product``: job 0 is the most significant
digit (base m), and within a job the fields count in the file's order ``arrival, workload,
max_workers, ps_ratio, worker_demand, ps_demand, utility`` (the first field most significant).
Job order is part of an online instance and is never reduced away.

**Score.** For each instance, ``OPT`` is proven optimal and ``ALG`` is the utility of the
algorithm's validated schedule; ``adversary.score_ratio`` classifies the pair: ``ok`` (a finite
ratio OPT/ALG), ``alg_zero`` (ALG = 0 < OPT, counted, not scored), ``opt_zero`` (nothing can
earn). The maximum is over ``ok`` instances; ties go to the smallest index, so the answer does
not depend on the executor or on the order in which chunks finish.

**Exact OPT** (``exact_opt``), per instance, the cheaper of:
- ``dp``: a dynamic programme over slots whose state is each job's work so far (capped at V_i).
  In one slot the feasible worker vectors ``w`` (``w_i`` workers of job i) form a downward-closed
  set F: the workers fit the worker servers and the ``ceil(w_i/γ_i)`` PSs fit the PS servers
  (both checked by an exact Minkowski sum of per-server fits). Since more work never hurts a
  later slot (capacities are per slot) and finishing earlier never lowers a non-increasing
  utility, the value is monotone in the state, so the transitions need only the maximal
  elements of F, each capped by the work left: ``s' = s + min(m, V − s)``. It is exact, and
  tests compare it with ``tests/bruteforce.py`` and with the MILP.
- ``milp``: ``offline.solve`` (the compact MILP with HiGHS) where the DP's table would be large;
  only a proven optimum counts — anything else is ``unsolved`` and reported.

**Reductions that keep the maximum** (reported in the result, each exact):
- OPT does not depend on the order of the jobs, so it is computed once per multiset of job
  options (a per-process cache) while ALG runs on every ordered instance;
- a job that cannot earn in the horizon (``f_i(d) = 0`` for every ``d ≤ T − a_i``) is left out
  of the OPT programme, and a job whose utility has fallen to 0 leaves the state: neither can
  change OPT.
No instance is skipped: the algorithm runs on every instance of the space.

**Chunks and resume.** Instances run in chunks of ``CHUNK`` consecutive indices, one sweep task
each (``sweep.run_tasks``, its process pool or Dask executor). Each instance is one row of
``DIR/instances.csv`` (``sweep.ResultStore``), keyed by the chunk and a digest of the space and
the algorithm's parameters; a rerun skips every finished chunk.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .errors import InputError
from .io import Amount, Count, Name, Pos, PosInt, Text
from .limits import check_count
from .model import CAP_TOL, REL_TOL, Instance

SPACE_FORMAT = "oasis-space/1"
#: The per-job fields a space lists values for, in the order that numbers a job's options.
JOB_FIELDS = ("arrival", "workload", "max_workers", "ps_ratio", "worker_demand", "ps_demand",
              "utility")
VECTOR_FIELDS = ("worker_demand", "ps_demand")
#: Instances per sweep task: large enough that a task's overhead (pickling, one CSV append
#: with fsync) is small next to its ~CHUNK ms of work, small enough for a live progress bar.
CHUNK = 500
#: ``--max-instances`` by default: about an hour of two cores at ~2 ms an instance.
DEFAULT_MAX_INSTANCES = 10**6
#: Jobs per instance of a space at most: every instance is solved exactly, and the first one
#: is built in full as a probe of the size checks (``jobs: 1000000000`` hung building it).
MAX_SPACE_JOBS = 10_000
#: The DP is used while states × maximal moves × slots stays below this; else the MILP.
DP_WORK_LIMIT = 2_000_000
#: Largest grid of worker (or PS) vectors the DP's feasible set may take.
DP_GRID_LIMIT = 200_000
#: Seconds of the MILP per instance when the DP does not apply.
MILP_TIME_LIMIT = 60.0

COLUMNS = ("experiment", "seed", "params", "algorithm", "index", "status", "opt", "alg",
           "ratio", "opt_method", "job_share", "two_alpha")


# --- the space file ----------------------------------------------------------------------


class _SpaceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Text
    name: Text | None = None
    description: Text | None = None
    horizon: PosInt
    resources: Annotated[list[Name], Field(min_length=1)]
    worker_servers: Annotated[list[list[Amount]], Field(min_length=1)]
    ps_servers: Annotated[list[list[Amount]], Field(min_length=1)]
    jobs: PosInt
    arrival: Annotated[list[Count], Field(min_length=1)]
    workload: Annotated[list[PosInt], Field(min_length=1)]
    max_workers: Annotated[list[PosInt], Field(min_length=1)]
    ps_ratio: Annotated[list[Pos], Field(min_length=1)]
    worker_demand: Annotated[list[list[Amount]], Field(min_length=1)]
    ps_demand: Annotated[list[list[Amount]], Field(min_length=1)]
    utility: Annotated[list[dict[str, Any]], Field(min_length=1)]


@dataclass(frozen=True)
class Space:
    """A parsed, checked space. ``values[f]`` lists the values of job field ``f``."""

    name: str
    horizon: int
    resources: tuple[str, ...]
    worker_servers: tuple[tuple[float, ...], ...]
    ps_servers: tuple[tuple[float, ...], ...]
    jobs: int
    values: Mapping[str, tuple[Any, ...]]
    digest: str = ""

    @cached_property
    def radices(self) -> tuple[int, ...]:
        return tuple(len(self.values[f]) for f in JOB_FIELDS)

    @property
    def options(self) -> int:
        """Options per job: the product of the lists' lengths."""
        return math.prod(self.radices)

    @property
    def size(self) -> int:
        """Instances in the space: ``options ** jobs`` (a Python int: never overflows)."""
        return self.options ** self.jobs

    def job_digits(self, index: int) -> tuple[int, ...]:
        """The option of each job in instance ``index`` (job 0 most significant)."""
        m, out = self.options, []
        for _ in range(self.jobs):
            index, d = divmod(index, m)
            out.append(d)
        return tuple(reversed(out))

    def field_digits(self, option: int) -> tuple[int, ...]:
        """The value index of each field in job option ``option`` (first field most
        significant)."""
        out = []
        for r in reversed(self.radices):
            option, d = divmod(option, r)
            out.append(d)
        return tuple(reversed(out))

    def job_dict(self, option: int, job_id: str) -> dict[str, Any]:
        d: dict[str, Any] = {"id": job_id}
        for f, k in zip(JOB_FIELDS, self.field_digits(option), strict=True):
            v = self.values[f][k]
            d[f] = list(v) if f in VECTOR_FIELDS else v
        d["requested_workers"] = d["max_workers"]  # SPEC §6: requested = max_workers
        return d

    def instance_dict(self, index: int, name: str | None = None,
                      options: Sequence[int] | None = None) -> dict[str, Any]:
        """Instance ``index`` as an ``oasis-instance/1`` dict (jobs ``j0 … j{J-1}``, worker
        servers ``w0 …``, PS servers ``p0 …``)."""
        opts = self.job_digits(index) if options is None else options
        return {
            "format": "oasis-instance/1", "name": name or f"{self.name}-{index}",
            "horizon": self.horizon, "resources": list(self.resources),
            "worker_servers": [{"name": f"w{h}", "capacity": list(c)}
                               for h, c in enumerate(self.worker_servers)],
            "ps_servers": [{"name": f"p{k}", "capacity": list(c)}
                           for k, c in enumerate(self.ps_servers)],
            "jobs": [self.job_dict(o, f"j{i}") for i, o in enumerate(opts)],
        }

    def distinct_multisets(self) -> int:
        """Multisets of J job options: the OPT computations the order reduction needs,
        ``C(m + J − 1, J)``."""
        return math.comb(self.options + self.jobs - 1, self.jobs)


def space_from_dict(data: Any, name: str = "space") -> Space:
    """Parse and check a space (module docstring); one ``InputError`` naming the field."""
    from .io import INSTANCE_FORMAT, instance_from_dict, parse_model
    raw = parse_model(_SpaceIn, data, SPACE_FORMAT, "a space")
    check_count("jobs", raw.jobs, MAX_SPACE_JOBS, "jobs per instance")
    R = len(raw.resources)
    for pool in ("worker_servers", "ps_servers", *VECTOR_FIELDS):
        for k, vec in enumerate(getattr(raw, pool)):
            if len(vec) != R:
                raise InputError(f"{pool}[{k}]", f"expected {R} values (one per resource), "
                                                 f"got {len(vec)}")
    values = {f: tuple(tuple(v) if f in VECTOR_FIELDS else v for v in getattr(raw, f))
              for f in JOB_FIELDS}
    for f in JOB_FIELDS:
        seen: dict[str, int] = {}
        for k, v in enumerate(values[f]):
            key = json.dumps(v, sort_keys=True)
            if key in seen:  # a repeated value would count its instances twice
                raise InputError(f"{f}[{k}]", f"repeats {f}[{seen[key]}]")
            seen[key] = k
    space = Space(name=raw.name or name, horizon=raw.horizon, resources=tuple(raw.resources),
                  worker_servers=tuple(tuple(c) for c in raw.worker_servers),
                  ps_servers=tuple(tuple(c) for c in raw.ps_servers), jobs=raw.jobs,
                  values=values)
    # Every listed value, in a one-job instance with the first value of the other fields,
    # goes through the instance checks (arrival < horizon, non-increasing utilities, ranges),
    # so that every instance of the space is a valid instance file; errors name the value.
    first = {f: values[f][0] for f in JOB_FIELDS}
    # ... and the one pair of fields that meet in a job's checks: the most workers over the
    # smallest PS ratio makes the most PSs in a slot, which each of them alone may not.
    most = max(range(len(values["max_workers"])), key=lambda k: values["max_workers"][k])
    least = min(range(len(values["ps_ratio"])), key=lambda k: values["ps_ratio"][k])
    probes = [({f: k}, {f: values[f][k]}) for f in JOB_FIELDS for k in range(len(values[f]))]
    probes.append(({"max_workers": most, "ps_ratio": least},
                   {"max_workers": values["max_workers"][most],
                    "ps_ratio": values["ps_ratio"][least]}))
    cluster = {"format": INSTANCE_FORMAT, "name": "probe", "horizon": space.horizon,
               "resources": list(space.resources),
               "worker_servers": [{"name": f"w{h}", "capacity": list(c)}
                                  for h, c in enumerate(space.worker_servers)],
               "ps_servers": [{"name": f"p{q}", "capacity": list(c)}
                              for q, c in enumerate(space.ps_servers)]}
    for index, chosen in probes:
        job = {"id": "j0", **{g: list(x) if g in VECTOR_FIELDS else x
                              for g, x in {**first, **chosen}.items()}}
        try:
            instance_from_dict({**cluster, "jobs": [job]})
        except InputError as err:
            place = err.place
            for g in JOB_FIELDS:  # jobs[0].workload → workload[k] (k of the probe)
                prefix = f"jobs[0].{g}"
                if place == prefix or place.startswith((prefix + ".", prefix + "[")):
                    place = f"{g}[{index.get(g, 0)}]" + place[len(prefix):]
                    break
            raise InputError(place, err.message) from None
    # the whole first instance too (J jobs: the size checks of a full instance)
    instance_from_dict(space.instance_dict(0))
    digest = hashlib.sha256(json.dumps(raw.model_dump(exclude={"name", "description"}),
                                       sort_keys=True).encode()).hexdigest()[:16]
    return replace(space, digest=digest)


def load_space(path: str | Path) -> Space:
    from .io import read_json
    return space_from_dict(read_json(path, "space"), name=Path(path).stem)


# --- exact OPT -----------------------------------------------------------------------------


def _packable(limits: tuple[int, ...], demand: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """Boolean array over count vectors ``u`` (``0 ≤ u_i ≤ limits_i``): True when ``u_i``
    units of item i (demand row ``demand[i]``, shape (J, R)) can be split over the servers
    (capacities ``caps``, shape (S, R)) with ``Σ_i u_ih·demand[i][r] ≤ C_h[r]`` on each.

    Exact: the packable set is the Minkowski sum, capped at ``limits``, of each server's own
    fit set ``{u : Σ_i u_i·demand[i] ≤ C_h}``."""
    shape = tuple(n + 1 for n in limits)
    grid = np.indices(shape).reshape(len(limits), -1).T  # (G, J)
    load = grid @ demand  # (G, R)
    out = np.zeros(shape, dtype=bool)
    out[(0,) * len(limits)] = True
    fits_cache: dict[tuple[float, ...], np.ndarray] = {}
    for cap in caps:
        key = tuple(cap)
        if key not in fits_cache:
            ok = np.all(load <= cap[None, :] * (1.0 + CAP_TOL), axis=1)
            fits_cache[key] = grid[ok]
        new = np.zeros(shape, dtype=bool)
        for u in fits_cache[key]:
            dst = tuple(slice(int(x), None) for x in u)
            src = tuple(slice(0, n - int(x)) for n, x in zip(shape, u, strict=True))
            new[dst] |= out[src]
        out = new
    return out


#: Maximal feasible worker vectors per tuple of job shapes (per process; see ``_maximal``).
_MAXIMAL: dict[tuple[Any, ...], list[tuple[int, ...]] | None] = {}
#: OPT per (space digest, sorted job options): the order reduction (module docstring).
_OPT_CACHE: dict[tuple[Any, ...], tuple[float | None, str]] = {}


def clear_caches() -> None:
    """Forget this process's OPT per job multiset and feasible sets (benchmarks: cold cost)."""
    _OPT_CACHE.clear()
    _MAXIMAL.clear()


def _maximal(inst: Instance, live: Sequence[int]) -> list[tuple[int, ...]] | None:
    """The maximal elements of F (module docstring) for the jobs ``live``; None when the grid
    is too large for the DP."""
    jobs = [inst.jobs[i] for i in live]
    key = (tuple(map(tuple, inst.worker_capacity)), tuple(map(tuple, inst.ps_capacity)),
           tuple((j.max_workers, j.ps_ratio, tuple(j.worker_demand), tuple(j.ps_demand))
                 for j in jobs))
    if key in _MAXIMAL:
        return _MAXIMAL[key]
    from .model import ps_needed
    N = tuple(j.max_workers for j in jobs)
    Z = tuple(ps_needed(n, j.ps_ratio) for n, j in zip(N, jobs, strict=True))
    if math.prod(n + 1 for n in N) > DP_GRID_LIMIT or math.prod(z + 1 for z in Z) > \
            DP_GRID_LIMIT:
        _MAXIMAL[key] = None
        return None
    P = _packable(N, np.array([j.worker_demand for j in jobs], dtype=float),
                  inst.worker_capacity)
    Q = _packable(Z, np.array([j.ps_demand for j in jobs], dtype=float), inst.ps_capacity)
    zidx = [np.asarray(ps_needed(np.arange(n + 1), j.ps_ratio)) for n, j in
            zip(N, jobs, strict=True)]
    F = P & Q[np.ix_(*zidx)]
    M = F.copy()
    for ax in range(len(N)):
        up = np.zeros_like(F)
        src = [slice(None)] * len(N)
        dst = [slice(None)] * len(N)
        src[ax], dst[ax] = slice(1, None), slice(0, -1)
        up[tuple(dst)] = F[tuple(src)]
        M &= ~up  # w + e_ax feasible: w is not maximal
    out = [tuple(int(x) for x in w) for w in np.argwhere(M)]
    if len(_MAXIMAL) > 100_000:
        _MAXIMAL.clear()
    _MAXIMAL[key] = out
    return out


def dp_optimum(inst: Instance) -> float | None:
    """OPT by the slot DP (module docstring); None when its table would be too large.

    ``best_t(s)`` = the most utility earned by the end of slot t with cumulative work ``s``
    (``s_i ≤ V_i``); from s, slot t moves to ``min(s + m, V)`` for each maximal feasible
    ``m`` (jobs not yet arrived take 0), earning ``f_i(t − a_i + 1)`` for each job whose work
    reaches ``V_i`` in slot t. The table is dense over ``∏(V_i + 1)`` states and each move
    is one vectorised step over the reachable ones."""
    T = inst.horizon
    table = inst.utility_table
    arr = [int(a) for a in inst.arrival]
    # jobs that can earn at all: f_i(d) > 0 for some d ≤ T − a_i
    live = [i for i in range(inst.num_jobs) if table[i, : T - arr[i]].max(initial=0.0) > 0]
    if not live:
        return 0.0
    V = np.array([inst.jobs[i].workload for i in live], dtype=np.int64)
    maximal = _maximal(inst, live)
    # Python ints: a product of int64s would wrap around for workloads near MAX_COUNT
    states = math.prod(int(v) + 1 for v in V)
    if maximal is None or states * max(1, len(maximal)) * T > DP_WORK_LIMIT:
        return None
    a = np.array([arr[i] for i in live], dtype=np.int64)
    M = np.array(maximal, dtype=np.int64).reshape(-1, len(live))
    # gain[t, k] = f_k(t − a_k + 1) for t ≥ a_k (0 before arrival)
    gain = np.zeros((T, len(live)))
    for k, i in enumerate(live):
        gain[arr[i]:, k] = table[i, : T - arr[i]]
    shape = tuple(int(v) + 1 for v in V)
    S = np.indices(shape).reshape(len(live), -1).T  # (G, J): every state
    val = np.full(len(S), -np.inf)
    val[0] = 0.0
    for t in range(T):
        moves = np.unique(M * (a <= t)[None, :], axis=0)
        reach = np.flatnonzero(val > -np.inf)
        s, v = S[reach], val[reach]
        new = val.copy()  # m = 0: idle (dominated, but keeps every state's value)
        for m in moves:
            ns = np.minimum(s + m, V)
            done = (s < V) & (ns == V)  # jobs whose work first reaches V_i in slot t
            np.maximum.at(new, np.ravel_multi_index(ns.T, shape), v + done @ gain[t])
        val = new
    return float(val.max())


def milp_optimum(inst: Instance, time_limit: float = MILP_TIME_LIMIT) -> float | None:
    """OPT by ``offline.solve`` (compact MILP, HiGHS); None unless proven optimal."""
    from .formulations.common import Options
    from .offline import SolveStatus, solve
    _, rep = solve(inst, time_limit=time_limit, options=Options(packing="server"))
    return float(rep.objective) if rep.status is SolveStatus.OPTIMAL else None


def exact_opt(inst: Instance, time_limit: float = MILP_TIME_LIMIT) -> tuple[float | None, str]:
    """(OPT, method): the DP where it applies, else the MILP (None: not proven)."""
    v = dp_optimum(inst)
    if v is not None:
        return v, "dp"
    return milp_optimum(inst, time_limit), "milp"


# --- evaluation (module level: pickled to worker processes) ------------------------------


def job_share(inst: Instance) -> float:
    """How far an instance is from the theorem's regime: the largest share of one server
    resource one job can hold in a slot, ``max N_i·α_i[r]/C_h[r]`` and
    ``ceil(N_i/γ_i)·β_i[r]/C_k[r]`` over jobs, servers and resources (as ``adversary``'s
    ``max_share``); +inf when a job demands a resource a server lacks."""
    from .model import ps_needed
    out = 0.0
    for j in inst.jobs:
        for count, demand, caps in ((j.max_workers, j.worker_demand, inst.worker_capacity),
                                    (ps_needed(j.max_workers, j.ps_ratio), j.ps_demand,
                                     inst.ps_capacity)):
            need = count * np.asarray(demand, dtype=float)
            for cap in caps:
                for r, x in enumerate(need):
                    if x > 0:
                        out = max(out, float(x / cap[r]) if cap[r] > 0 else math.inf)
    return out


def evaluate_index(space: Space, index: int, algorithm: str, params: Mapping[str, Any],
                   time_limit: float = MILP_TIME_LIMIT) -> dict[str, Any]:
    """One instance: exact OPT (cached per job multiset), the algorithm, the ratio."""
    from . import algorithms
    from .adversary_search import score_ratio
    from .io import instance_from_dict
    opts = space.job_digits(index)
    inst = instance_from_dict(space.instance_dict(index, options=opts))
    ckey = (space.digest, tuple(sorted(opts)))
    if ckey not in _OPT_CACHE:
        if len(_OPT_CACHE) > 500_000:
            _OPT_CACHE.clear()
        _OPT_CACHE[ckey] = exact_opt(inst, time_limit)
    opt, method = _OPT_CACHE[ckey]
    sched = algorithms.run(algorithm, inst, **dict(params))
    alg = float(sched.total_utility)
    two_alpha = sched.extras.get("two_alpha")
    row = {"index": index, "opt": opt, "alg": alg, "opt_method": method,
           "job_share": float(job_share(inst)),
           "two_alpha": float(two_alpha) if isinstance(two_alpha, (int, float)) else None}
    if opt is None:
        return {**row, "status": "unsolved", "ratio": None}
    if alg > opt * (1.0 + REL_TOL):
        raise RuntimeError(f"{algorithm} earned {alg:.9g} > OPT {opt:.9g} ({method}) on "
                           f"instance {index} of {space.name}: the exact optimum is wrong")
    status, ratio = score_ratio(opt, alg)
    return {**row, "status": status, "ratio": ratio}


def evaluate_chunk(space: Space, algorithm: str, params: tuple[tuple[str, Any], ...],
                   time_limit: float, task: Any) -> list[dict[str, Any]]:
    """A sweep task's rows: one per instance of chunk ``task.seed`` (indices
    ``seed·CHUNK …``); bound with ``functools.partial`` (picklable) for ``run_tasks``."""
    start = task.seed * CHUNK
    rows = []
    for n in range(start, min(space.size, start + CHUNK)):
        r = evaluate_index(space, n, algorithm, dict(params), time_limit)
        rows.append({"experiment": task.experiment, "seed": task.seed,
                     "params": task.params_key, "algorithm": algorithm, **r})
    return rows


# --- the whole space -----------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyResult:
    """The reduction of every instance's row (module docstring)."""

    space: Space
    algorithm: str
    params: dict[str, Any]
    evaluated: int  # instances evaluated by this run (the rest came from the store)
    counts: dict[str, int]
    opt_methods: dict[str, int]
    max_ratio: float | None
    argmax: int | None
    argmax_opt: float | None
    argmax_alg: float | None
    ratios: np.ndarray = field(repr=False)  # finite ratios, index order
    bound_check: dict[str, Any] | None = None
    seconds: float = 0.0
    store: str | None = None  # the per-instance CSV (``to_records``)

    def to_records(self) -> list[dict[str, Any]]:
        """One row per instance of the space, in index order, from the store ``verify``
        wrote (``index, status, opt, alg, ratio, opt_method, job_share, two_alpha``; numbers
        as numbers, empty cells as None); ``summary()`` has the maximum."""
        if self.store is None:
            return []
        from .records import read_csv
        rows = read_csv(self.store, text=("status", "opt_method"), integers=("index",),
                        columns=COLUMNS[COLUMNS.index("index"):])
        return sorted(rows, key=lambda r: r["index"])

    def to_dataframe(self) -> Any:
        """``to_records()`` as a pandas DataFrame (needs pandas)."""
        from .records import dataframe
        return dataframe(self.to_records())

    def summary(self) -> dict[str, Any]:
        return {
            "space": self.space.name, "algorithm": self.algorithm, "params": self.params,
            "size": self.space.size, "jobs": self.space.jobs,
            "options_per_job": self.space.options, "evaluated": self.evaluated,
            "counts": self.counts, "alg_zero": self.counts.get("alg_zero", 0),
            "max_ratio": self.max_ratio, "argmax_index": self.argmax,
            "argmax_options": (list(self.space.job_digits(self.argmax))
                               if self.argmax is not None else None),
            "opt": self.argmax_opt, "alg": self.argmax_alg,
            "opt_methods": self.opt_methods, "exact": self.counts.get("unsolved", 0) == 0,
            "reductions": [
                f"OPT once per multiset of job options ({self.space.distinct_multisets()} "
                f"multisets for {self.space.size} ordered instances); ALG on every instance",
                "jobs that cannot earn within the horizon are left out of OPT's programme",
            ],
            "bound_check": self.bound_check, "seconds": self.seconds,
        }


def _count(n: int) -> str:
    """``n`` with thousands separators, or as ``1.234e+5678`` from 10^15 on (a space's size
    may pass what a float holds, and Python prints ints of at most 4 300 digits)."""
    if n < 10**15:
        return f"{n:,}"
    exponent = math.log10(n)
    return f"{10 ** (exponent % 1):.4g}e+{math.floor(exponent)}"


#: Bytes a verified instance holds in memory: its row of ``instances.csv`` as the store keeps
#: it (about 1 KB measured, 2 KB at the peak of reading it back) and its share of the tasks.
ROW_BYTES = 2048


def largest_instance(space: Space) -> Instance:
    """An instance of ``space``'s sizes that holds at least what any instance of the space
    holds by ``io.check_schedule_size``'s count (``io.schedule_counts``, OASiS's
    ``online.subroutine.largest_tables``), each of which grows with a job's workload and
    worker bound and the slots after its arrival, and shrinks with its PS ratio and demands:
    its ``jobs`` jobs all arrive first with the largest workload and worker bound, the
    smallest PS ratio and, per resource, the least demand listed (no listed demand fits on a
    server more often). It need not be an instance of the space. Where even so the largest
    workload cannot be done by the horizon, OASiS builds no table for it: one job more takes
    the largest listed workload that can be done, whose table is then the largest."""
    from .io import instance_from_dict
    from .online.subroutine import fit_table
    v = space.values
    one = instance_from_dict(space.instance_dict(0, options=[0]))  # job 0's utility, servers
    job = replace(one.jobs[0], arrival=min(v["arrival"]), workload=max(v["workload"]),
                  max_workers=max(v["max_workers"]), requested_workers=max(v["max_workers"]),
                  ps_ratio=min(v["ps_ratio"]), worker_demand=np.min(v["worker_demand"], axis=0),
                  ps_demand=np.min(v["ps_demand"], axis=0))
    jobs = [replace(job, id=f"j{i}") for i in range(space.jobs)]
    fits = fit_table(one.worker_capacity, job.worker_demand[None, :])
    workers = job.max_workers if fits is None else min(job.max_workers, fits[0].sum())
    doable = [w for w in v["workload"] if w <= workers * (space.horizon - job.arrival)]
    if doable and max(doable) < job.workload:
        jobs.append(replace(job, id=f"j{space.jobs}", workload=max(doable)))
    return replace(one, name=f"{space.name}-largest", jobs=tuple(jobs))


def check_size(space: Space, max_instances: int) -> None:
    """Refuse a space above ``max_instances``, one whose results would not fit in memory
    (``limits.max_memory``; a raised ``--max-instances`` let 10¹² instances grow the list of
    tasks to gigabytes before anything ran), or one whose instances' schedules would not
    (``io.check_schedule_size`` on ``largest_instance``, at ``jobs``, or at ``workload`` for
    OASiS's dynamic programme). An instance's exact OPT by the MILP (``milp_optimum``) holds
    the floor's schedules, one per built-in algorithm (``offline.floor``, OASiS among them);
    they are let go before the algorithm verified runs and holds its own."""
    from .io import check_schedule_size
    from .limits import check_allocation
    from .offline.floor import floor_names
    if max_instances < 1:
        raise InputError("max_instances", f"must be at least 1, got {max_instances}")
    if space.size > max_instances:
        raise InputError("max_instances",
                         f"the space has {_count(space.size)} instances ({space.options} options "
                         f"per job, {space.jobs} jobs), more than the limit of "
                         f"{max_instances}; raise the limit or shorten a list")
    check_allocation("max_instances", float(min(space.size, 10**30)) * ROW_BYTES,
                     f"a row of results in memory for each of {_count(space.size)} instances")
    floor = floor_names(None)
    try:
        check_schedule_size(largest_instance(space), len(floor), floor)
    except InputError as err:
        place = "workload" if err.place.endswith(".workload") else err.place
        raise InputError(place, f"the largest instance of this space: {err.message}") from None


def verify(space: Space, algorithm: str, *, out: str | Path,
           params: Mapping[str, Any] | None = None,
           max_instances: int = DEFAULT_MAX_INSTANCES, max_share: float | None = None,
           executor: Any = None, progress: bool = False,
           time_limit: float = MILP_TIME_LIMIT) -> VerifyResult:
    """Evaluate every instance of ``space`` (resuming from ``out/instances.csv``) and reduce.

    Refuses, before anything runs or is written: an unknown algorithm, a space larger than
    ``max_instances``, a ``max_share`` outside (0, 1], an output file of ``write_outputs``
    that cannot be written (a folder of that name), a parameter value the algorithm refuses."""
    import time

    from . import algorithms
    from .io import check_output
    from .offline import check_settings
    from .tasks import ResultStore, Task, run_tasks
    algorithms.check(algorithm)
    check_size(space, max_instances)
    check_settings(time_limit=time_limit)  # per instance, where the MILP decides
    if max_share is not None and not (0 < max_share <= 1):
        raise InputError("max_share", f"must be in (0, 1], got {max_share}")
    for name in OUTPUTS.values():  # written after the run: found then, after its progress
        check_output(Path(out) / name)
    params = dict(params or {})
    pitems = tuple(sorted(params.items()))
    # the parameters tried once here, in-process, on instance 0: a bad value is refused
    # (exit 2) before any worker starts or any file exists
    from .io import instance_from_dict
    algorithms.run(algorithm, instance_from_dict(space.instance_dict(0)), **params)
    key_params = {"space": space.digest, "params": params, "chunk": CHUNK}
    key = Task("verify", 0, key_params).params_key
    out = Path(out)
    store_path = out / "instances.csv"
    start = time.perf_counter()
    store = ResultStore(store_path, columns=COLUMNS)
    other = {r["params"] for r in store.rows} - {key}
    if other or any(r["algorithm"] != algorithm for r in store.rows):
        raise InputError(str(store_path), "holds results of another space, algorithm or "
                                          "parameters; use another -o")
    check_rows(space, store.rows, store_path)
    tasks = [Task("verify", c, key_params, (algorithm,))
             for c in range(-(-space.size // CHUNK))]
    before = len(store.rows)
    run_tasks(tasks, partial(evaluate_chunk, space, algorithm, pitems, time_limit), store,
              executor, progress, f"verify {algorithm}")
    evaluated = len(store.rows) - before
    result = reduce_rows(space, algorithm, params, store.rows, evaluated, max_share,
                         time.perf_counter() - start)
    return replace(result, store=str(store_path))


STATUSES = ("ok", "alg_zero", "opt_zero", "unsolved")


def check_rows(space: Space, rows: Sequence[Mapping[str, str]], path: str | Path) -> None:
    """Refuse a stored results file that this code did not write whole (an edited or damaged
    row, a row lost from a chunk whose others are there): ``InputError`` naming its line.
    A resumed run trusts the rows it finds; the reduction reads every one."""
    def bad(line: int, message: str) -> InputError:
        return InputError(f"{path}:{line}", f"{message}; use another -o")

    def number(r: Mapping[str, str], col: str, line: int, empty: bool, inf: bool) -> None:
        from .io import decimal_value
        text = r[col]
        if text == "" and empty or text == "inf" and inf:  # as written: repr(math.inf)
            return
        # as written: float() also took '1_0', ' 8' and '٨', numbers this code never wrote
        if math.isfinite(decimal_value(text)):
            return
        raise bad(line, f"column {col}: expected a number, got {text[:40]!r}")

    lines: dict[int, int] = {}
    chunks: set[int] = set()
    for k, r in enumerate(rows):
        line = k + 2  # the header is line 1; no stored field holds a line break
        text = r["index"]
        n = int(text) if text.isascii() and text.isdigit() and len(text) < 20 else -1
        if not 0 <= n < space.size or str(r["seed"]) != str(n // CHUNK):
            raise bad(line, f"column index: expected an instance number of chunk "
                            f"{r['seed'][:20]!r} below {space.size}, got {text[:40]!r}")
        if n in lines:
            raise bad(line, f"instance {n} is stored twice (also line {lines[n]})")
        lines[n] = line
        chunks.add(n // CHUNK)
        if r["status"] not in STATUSES:
            raise bad(line, f"column status: expected one of {', '.join(STATUSES)}, got "
                            f"{r['status'][:40]!r}")
        number(r, "opt", line, empty=r["status"] == "unsolved", inf=False)
        for col, empty, inf in (("alg", False, False), ("ratio", True, True),
                                ("job_share", False, False), ("two_alpha", True, False)):
            number(r, col, line, empty, inf)
    for c in sorted(chunks):
        for n in range(c * CHUNK, min(space.size, (c + 1) * CHUNK)):
            if n not in lines:
                raise InputError(str(path), f"instance {n} is missing (its chunk {c} is "
                                            "stored); use another -o")


def reduce_rows(space: Space, algorithm: str, params: dict[str, Any],
                rows: Sequence[Mapping[str, str]], evaluated: int, max_share: float | None,
                seconds: float) -> VerifyResult:
    """Counts, the maximum (ties: smallest index) and the 2α check, from the stored rows."""
    by_index: dict[int, Mapping[str, str]] = {int(r["index"]): r for r in rows}
    if len(by_index) != space.size:
        raise RuntimeError(f"{len(by_index)} instances stored for a space of {space.size}")
    counts: dict[str, int] = {}
    methods: dict[str, int] = {}
    best, best_ratio = None, -math.inf
    ratios = []
    check = {"instances": 0, "held": 0, "violations": 0, "worst_ratio_over_2alpha": None,
             "worst_index": None}
    worst = -math.inf
    has_alpha = False
    for n in range(space.size):
        r = by_index[n]
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        methods[r["opt_method"]] = methods.get(r["opt_method"], 0) + 1
        ratio = float(r["ratio"]) if r["ratio"] not in ("", None) else None
        if r["status"] == "ok" and ratio is not None:
            ratios.append(ratio)
            if ratio > best_ratio:
                best, best_ratio = n, ratio
        if r["two_alpha"] in ("", None):
            continue
        has_alpha = True
        if max_share is not None and float(r["job_share"]) > max_share + 1e-12:
            continue
        if r["status"] not in ("ok", "alg_zero"):
            continue  # OPT = 0 holds trivially; unsolved is counted above
        check["instances"] += 1
        q = math.inf if r["status"] == "alg_zero" else (ratio or 0.0) / float(r["two_alpha"])
        if q <= 1 + REL_TOL:
            check["held"] += 1
        else:
            check["violations"] += 1
        if q > worst:
            worst = q
            check["worst_ratio_over_2alpha"] = q
            check["worst_index"] = n
    bound = None
    if has_alpha:
        bound = {"max_share": max_share, **check,
                 "held_everywhere": check["violations"] == 0}
    arg = by_index[best] if best is not None else None
    return VerifyResult(
        space=space, algorithm=algorithm, params=params, evaluated=evaluated, counts=counts,
        opt_methods=methods, max_ratio=best_ratio if best is not None else None, argmax=best,
        argmax_opt=float(arg["opt"]) if arg else None,
        argmax_alg=float(arg["alg"]) if arg else None,
        ratios=np.array(ratios, dtype=float), bound_check=bound, seconds=seconds)


# --- outputs -------------------------------------------------------------------------------


def histogram(ratios: np.ndarray, bins: int = 40) -> list[tuple[float, float, int]]:
    """(low, high, count) of the finite ratios over ``bins`` equal bins from 1 to the
    maximum (one bin when every ratio is equal)."""
    if ratios.size == 0:
        return []
    hi = float(ratios.max())
    lo = min(1.0, float(ratios.min()))
    if hi <= lo:
        return [(lo, hi, int(ratios.size))]
    counts, edges = np.histogram(ratios, bins=bins, range=(lo, hi))
    return [(float(edges[k]), float(edges[k + 1]), int(counts[k])) for k in range(bins)]


def distribution_csv(result: VerifyResult) -> str:
    lines = ["ratio_low,ratio_high,instances"]
    lines += [f"{lo!r},{hi!r},{c}" for lo, hi, c in histogram(result.ratios)]
    lines += [f"{status},,{c}" for status, c in sorted(result.counts.items()) if status != "ok"]
    return "\n".join(lines) + "\n"


def histogram_figure(result: VerifyResult, path: str | Path) -> None:
    """The distribution of OPT/ALG over the space's finite ratios (log count axis), with the
    maximum marked; written atomically (``plots.save_figure``)."""
    from .plots import pyplot, save_figure
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    h = histogram(result.ratios)
    if h:
        ax.bar([lo for lo, _, _ in h], [c for _, _, c in h],
               width=[hi - lo if hi > lo else 0.02 for lo, hi, _ in h], align="edge",
               color="tab:blue", edgecolor="white")
        ax.set_yscale("log")
        ax.axvline(result.max_ratio, color="tab:red", ls="--",
                   label=f"max {result.max_ratio:.4g}")
        ax.legend()
    zeros = result.counts.get("alg_zero", 0)
    ax.set_xlabel("OPT / ALG" + (f"   (ALG = 0 < OPT on {zeros} instances, not shown)"
                                 if zeros else ""))
    ax.set_ylabel("instances")
    ax.set_title(f"{result.algorithm} over {result.space.name}: {result.space.size} instances")
    ax.grid(alpha=0.3)
    save_figure(fig, path, dpi=110)


#: What ``write_outputs`` writes in the output folder, by its key in the returned paths
#: (``verify`` checks each can be written before it starts).
OUTPUTS = {"argmax": "argmax.json", "distribution_csv": "distribution.csv",
           "histogram_png": "histogram.png", "summary": "summary.json"}


def write_outputs(result: VerifyResult, out: str | Path) -> dict[str, str | None]:
    """``argmax.json`` (an instance file), ``distribution.csv``, ``histogram.png``,
    ``summary.json`` (``OUTPUTS``); returns their paths."""
    from .io import instance_from_dict, save_instance, write_json_atomic, write_text_atomic
    out = Path(out)
    path = {key: out / name for key, name in OUTPUTS.items()}
    files: dict[str, str | None] = {"instances_csv": str(out / "instances.csv"),
                                    "argmax": None}
    if result.argmax is not None:
        d = result.space.instance_dict(
            result.argmax, name=f"{result.space.name}-{result.algorithm}-argmax")
        d["description"] = (f"argmax of OPT/{result.algorithm} over space "
                            f"{result.space.name}: instance {result.argmax}, ratio "
                            f"{result.max_ratio!r}")
        save_instance(instance_from_dict(d), path["argmax"])
        files["argmax"] = str(path["argmax"])
    write_text_atomic(path["distribution_csv"], distribution_csv(result))
    histogram_figure(result, path["histogram_png"])
    files.update({key: str(path[key]) for key in ("distribution_csv", "histogram_png",
                                                  "summary")})
    write_json_atomic(path["summary"], {**result.summary(), "files": files})
    return files


def direct_product(space: Space) -> itertools.product:
    """Every instance's job options in index order (what the tests loop over)."""
    return itertools.product(range(space.options), repeat=space.jobs)
