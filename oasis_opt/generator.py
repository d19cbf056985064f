"""Instance generator: presets ``small``, ``testbed`` and ``paper`` (SPEC §1, issue 2).

Jobs are drawn from a table of real models, not from arbitrary ranges: each model has its
parameter count (which fixes the gradient size g pushed and pulled per minibatch), its compute
seconds per minibatch τ on one GPU worker, and its minibatches per epoch on the training set
used here. A job picks a model, a number of epochs E and of data chunks (= max workers), and its
workload follows from SPEC §1: ``V = ceil(E · chunks · M · (τ + 2g/b) / slot_seconds)`` with
``M = minibatches_per_epoch / chunks``.

Model figures (parameters from the original papers; τ is the order of magnitude reported for
one GPU of the K80/P100 generation at batch size 32 in public benchmarks, e.g. the TensorFlow
``tf_cnn_benchmarks`` and DAWNBench reports; the table is meant to give realistic *relative*
sizes, not a benchmark):

| model | params (M) | τ (s) | minibatches / epoch | worker GPU, CPU, GB | PS CPU, GB |
|---|---|---|---|---|---|
| ResNet-50     | 25.6  | 0.25 | 5000 | 1, 4, 12 | 2, 6  |
| VGG-16        | 138.4 | 0.45 | 5000 | 1, 4, 16 | 4, 16 |
| Inception-v3  | 23.9  | 0.30 | 5000 | 1, 4, 12 | 2, 6  |
| AlexNet       | 61.1  | 0.10 | 5000 | 1, 2, 8  | 2, 8  |
| Seq2seq (NMT) | 160.0 | 0.35 | 4000 | 1, 4, 16 | 4, 16 |
| DeepSpeech2   | 38.0  | 0.50 | 3000 | 1, 4, 16 | 2, 8  |
| Transformer   | 65.0  | 0.20 | 4000 | 1, 4, 12 | 2, 8  |

Gradient size g = 32 bits × parameters. A worker's bandwidth b is drawn from {5, 10, 20} Gbps
and is also its bandwidth demand; a PS serving γ workers holds γ·b/2 Gbps (it receives pushes
from γ workers and serves their pulls; half-duplex accounting is the paper's simplification).

Utilities are sigmoids (SPEC §1): γ1 ~ U[10, 100] (priority); a third of the jobs are
time-critical with γ2 ~ U[1, 4], the rest time-insensitive with γ2 ~ U[0.05, 0.5]; γ3 (the
target duration) = the fastest possible duration ``ceil(V/N)`` times U[1, 2.5].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .errors import InputError, expect_integer, expect_type
from .model import Instance, Job, ServerGroup, Training
from .utility import Sigmoid, Table

RESOURCES = ("gpu", "cpu", "mem_gb", "bw_gbps")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params_m: float
    minibatch_seconds: float
    minibatches_per_epoch: int
    worker: tuple[float, float, float]  # gpu, cpu, mem_gb
    ps: tuple[float, float]  # cpu, mem_gb

    @property
    def gradient_gbit(self) -> float:
        return self.params_m * 1e6 * 32 / 1e9


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("ResNet-50", 25.6, 0.25, 5000, (1, 4, 12), (2, 6)),
    ModelSpec("VGG-16", 138.4, 0.45, 5000, (1, 4, 16), (4, 16)),
    ModelSpec("Inception-v3", 23.9, 0.30, 5000, (1, 4, 12), (2, 6)),
    ModelSpec("AlexNet", 61.1, 0.10, 5000, (1, 2, 8), (2, 8)),
    ModelSpec("Seq2seq", 160.0, 0.35, 4000, (1, 4, 16), (4, 16)),
    ModelSpec("DeepSpeech2", 38.0, 0.50, 3000, (1, 4, 16), (2, 8)),
    ModelSpec("Transformer", 65.0, 0.20, 4000, (1, 4, 12), (2, 8)),
)


@dataclass(frozen=True)
class Preset:
    """Sizes and ranges of one preset; ``(lo, hi)`` pairs are inclusive integer ranges."""

    jobs: tuple[int, int]
    horizon: tuple[int, int]
    worker_servers: tuple[int, int]
    ps_servers: tuple[int, int]
    worker_capacity: tuple[float, ...]  # gpu, cpu, mem_gb, bw_gbps
    ps_capacity: tuple[float, ...]
    max_workers: tuple[int, int]
    ps_ratio: tuple[int, int]
    epochs: tuple[float, float]
    slot_seconds: float
    arrival_span: float  # arrivals fall in the first fraction of the horizon
    #: Heterogeneous pools (issue 22): each server draws one of these capacity vectors
    #: (gpu, cpu, mem_gb, bw_gbps); empty: every server has ``worker_capacity`` /
    #: ``ps_capacity``. The draws are sorted, so equal servers form one group entry.
    worker_shapes: tuple[tuple[float, ...], ...] = ()
    ps_shapes: tuple[tuple[float, ...], ...] = ()
    #: The first ``resources`` of RESOURCES are kept (1: GPUs only … 4: all four).
    resources: int = 4
    #: Share of jobs whose workers take half a GPU (fractional demands).
    fractional: float = 0.0
    #: Share of jobs whose utility is a table (a step down after a deadline, then a
    #: linear decline), the rest sigmoids.
    table_share: float = 0.0


PRESETS: dict[str, Preset] = {
    # Exact-solvable in seconds: few jobs, few slots, tight servers.
    "small": Preset(jobs=(4, 8), horizon=(6, 10), worker_servers=(2, 4), ps_servers=(1, 2),
                    worker_capacity=(2, 8, 32, 40), ps_capacity=(0, 8, 32, 40),
                    max_workers=(1, 4), ps_ratio=(1, 4), epochs=(3, 12), slot_seconds=3600,
                    arrival_span=0.6),
    # The paper's testbed scale: 12 jobs, 10 slots.
    "testbed": Preset(jobs=(12, 12), horizon=(10, 10), worker_servers=(4, 4), ps_servers=(2, 2),
                      worker_capacity=(4, 16, 64, 40), ps_capacity=(0, 16, 64, 40),
                      max_workers=(2, 8), ps_ratio=(2, 4), epochs=(6, 24), slot_seconds=3600,
                      arrival_span=0.6),
    # The paper's simulation scale: 100 slots, 40 + 40 servers, demand ≥ 1.5 × capacity.
    "paper": Preset(jobs=(200, 200), horizon=(100, 100), worker_servers=(40, 40),
                    ps_servers=(40, 40), worker_capacity=(4, 16, 64, 40),
                    ps_capacity=(0, 16, 64, 40), max_workers=(2, 12), ps_ratio=(2, 4),
                    epochs=(40, 200), slot_seconds=3600, arrival_span=0.8),
    # Hard for an exact solver yet provable (issue 11): 12–16 jobs and slots on a tight
    # cluster (3 worker servers, 2 PS servers), so that admission and PS integrality bind.
    "hard": Preset(jobs=(12, 16), horizon=(12, 16), worker_servers=(3, 3), ps_servers=(2, 2),
                   worker_capacity=(4, 16, 64, 40), ps_capacity=(0, 16, 64, 40),
                   max_workers=(2, 8), ps_ratio=(2, 4), epochs=(6, 24), slot_seconds=3600,
                   arrival_span=0.6),
}


# Issue 22's families: what the `hard` preset lacks. Heterogeneous worker and PS pools (two or
# three capacity vectors each), fractional GPUs, table utilities; each a variation of `mixed`.
_MIXED = Preset(jobs=(12, 14), horizon=(12, 14), worker_servers=(3, 4), ps_servers=(2, 3),
                worker_capacity=(4, 16, 64, 40), ps_capacity=(0, 16, 64, 40),
                max_workers=(2, 8), ps_ratio=(1, 4), epochs=(6, 24), slot_seconds=3600,
                arrival_span=0.6,
                worker_shapes=((4, 16, 64, 40), (6, 24, 48, 40), (4, 24, 32, 20)),
                ps_shapes=((0, 16, 64, 40), (0, 8, 32, 20)), fractional=0.3, table_share=0.5)
PRESETS.update({
    "mixed": _MIXED,
    # two resources (gpu, cpu), heterogeneous pools
    "mixed-2r": replace(_MIXED, worker_capacity=(4, 16), ps_capacity=(0, 16),
                        worker_shapes=((4, 16), (6, 24), (2, 12)), ps_shapes=((0, 16), (0, 8)),
                        resources=2),
    # one resource (GPUs), identical servers, fractional demands and table utilities
    "uniform-1r": replace(_MIXED, worker_servers=(3, 3), ps_servers=(2, 2), worker_capacity=(4,),
                          ps_capacity=(0,), ps_ratio=(2, 4), worker_shapes=(), ps_shapes=(),
                          resources=1),
    # heterogeneous and loose: twice the servers of `mixed` for the same jobs
    "loose": replace(_MIXED, worker_servers=(6, 8), ps_servers=(4, 5)),
    # small ps_ratio: one PS per worker, the PS pool binds
    "ps-heavy": replace(_MIXED, ps_servers=(2, 2), max_workers=(2, 6), ps_ratio=(1, 1),
                        worker_shapes=((4, 16, 64, 40), (6, 24, 48, 40)),
                        ps_shapes=((0, 16, 64, 40), (0, 12, 48, 60)), fractional=0.0),
    # large ps_ratio: one PS serves up to 8 workers, the worker pool binds
    "ps-light": replace(_MIXED, ps_servers=(1, 2), ps_capacity=(0, 16, 64, 80), ps_ratio=(4, 8),
                        worker_shapes=((4, 16, 64, 40), (8, 32, 96, 80), (2, 8, 32, 20)),
                        ps_shapes=((0, 16, 64, 80), (0, 32, 64, 160))),
})

BANDWIDTHS = (5.0, 10.0, 20.0)


def _check_size(jobs: int | None, horizon: int | None, servers: int | None) -> None:
    """Refuse sizes whose instance would not fit in the memory limit before drawing it."""
    from .limits import check_allocation
    j, t, s = jobs or 1, horizon or 1, 2 * (servers or 1)

    def blamed(*sizes: tuple[str, int | None, int]) -> str:
        """The largest of the sizes given; none given: the memory limit itself is too low
        (``--max-memory 1`` named ``--jobs`` where no --jobs was given)."""
        given = [(value, name) for name, arg, value in sizes if arg is not None]
        return max(given)[1] if given else "max_memory"

    def count(value: int, arg: int | None) -> str:  # a size not given: at least 1
        return str(value) if arg is not None else f"at least {value}"
    check_allocation(blamed(("jobs", jobs, j), ("horizon", horizon, t)),
                     8.0 * j * t + 2000.0 * j,
                     f"an instance of {count(j, jobs)} jobs × {count(t, horizon)} slots")
    check_allocation(blamed(("servers", servers, s), ("horizon", horizon, t)),
                     48.0 * s * t * len(RESOURCES),
                     f"{count(s, servers)} servers × {count(t, horizon)} slots × "
                     f"{len(RESOURCES)} resources")


def instance_name(preset: str, seed: int, jobs: int | None = None, horizon: int | None = None,
                  servers: int | None = None, max_share: float | None = None) -> str:
    """``generate``'s name for an instance: ``PRESET-sSEED``, and ``-jJOBS``, ``-THORIZON``,
    ``-HSERVERS``, ``-shareS`` for each of those given (``small-s0-j40-T60``): the arguments
    that draw it, so that instances drawn differently are not named alike."""
    given = (("j", jobs), ("T", horizon), ("H", servers), ("share", max_share))
    return f"{preset}-s{seed}" + "".join(f"-{tag}{v}" for tag, v in given if v is not None)


def generate(preset: str, *, seed: int = 0, jobs: int | None = None,
             horizon: int | None = None, servers: int | None = None,
             name: str | None = None, max_share: float | None = None) -> Instance:
    """A random instance of ``preset``; the same arguments give the same instance.

    ``jobs``, ``horizon`` and ``servers`` (the count of each pool) override the preset.
    ``max_share`` (0.001 … 1) bounds the share of a server that one worker or PS takes (the
    regime of OASiS's 2α guarantee, ``scale_to_share``); the jobs drawn are the same.
    ``name``: by default ``instance_name``'s; the ``generator`` record of ``extra`` keeps
    the preset, the seed and each of ``jobs``, ``horizon``, ``servers``, ``max_share`` given."""
    if not isinstance(preset, str) or preset not in PRESETS:  # a list: unhashable
        raise InputError("preset", f"unknown preset {preset!r}; choose from "
                                     f"{', '.join(PRESETS)}")
    for place, value in (("seed", seed), ("jobs", jobs), ("horizon", horizon),
                         ("servers", servers)):
        if value is not None:
            expect_integer(place, value)
    if name is not None:  # the file written would not load
        expect_type("name", name, str, "a string")
    if jobs is not None and jobs < 0:
        raise InputError("jobs", f"must be at least 0, got {jobs}")
    if horizon is not None and horizon < 1:
        raise InputError("horizon", f"must be at least 1, got {horizon}")
    if servers is not None and servers < 1:
        raise InputError("servers", f"must be at least 1, got {servers}")
    if not 0 <= seed < 2**63:
        raise InputError("seed", f"must be in [0, 2^63), got {seed}")
    _check_size(jobs, horizon, servers)
    if max_share is not None and not (isinstance(max_share, (int, float))
                                      and 0.001 <= max_share <= 1):
        raise InputError("max_share", f"must be in [0.001, 1], got {max_share!r}")
    p = PRESETS[preset]
    rng = np.random.default_rng([seed, _stable_hash(preset)])
    T = horizon if horizon is not None else int(rng.integers(p.horizon[0], p.horizon[1] + 1))
    n_jobs = jobs if jobs is not None else int(rng.integers(p.jobs[0], p.jobs[1] + 1))
    n_w = int(rng.integers(p.worker_servers[0], p.worker_servers[1] + 1))
    n_ps = int(rng.integers(p.ps_servers[0], p.ps_servers[1] + 1))
    if servers is not None:
        n_w = n_ps = servers
    workers = _pool(rng, "w", p.worker_capacity, p.worker_shapes, n_w)
    pss = _pool(rng, "ps", p.ps_capacity, p.ps_shapes, n_ps)
    last_arrival = max(0, min(T - 1, int(p.arrival_span * T) - 1))
    arrivals = np.sort(rng.integers(0, last_arrival + 1, size=n_jobs))
    out = [_job(rng, p, f"j{i}", int(arrivals[i])) for i in range(n_jobs)]
    resources = RESOURCES[:p.resources]
    provenance: dict = {"preset": preset, "seed": seed}
    provenance.update((k, v) for k, v in (("jobs", jobs), ("horizon", horizon),
                                          ("servers", servers)) if v is not None)
    if max_share is not None:
        workers, m_w = scale_to_share(workers, [j.worker_demand for j in out], max_share)
        pss, m_ps = scale_to_share(pss, [j.ps_demand for j in out], max_share)
        provenance.update(max_share=max_share, capacity_scale={"worker": m_w, "ps": m_ps})
    return Instance(name or instance_name(preset, seed, jobs, horizon, servers, max_share), T,
                    resources, workers, pss, tuple(out),
                    {"generator": provenance})


def _pool(rng: np.random.Generator, name: str, capacity: tuple[float, ...],
          shapes: tuple[tuple[float, ...], ...], count: int) -> tuple[ServerGroup, ...]:
    """``count`` servers: all of ``capacity``, or one of each shape (as far as the count
    goes: the pool is heterogeneous) and the rest drawn from ``shapes``; one group entry per
    distinct shape, in the order of ``shapes``."""
    if not shapes:
        return (ServerGroup(name, tuple(float(c) for c in capacity), count),)
    first = min(count, len(shapes))
    kinds = np.concatenate([np.arange(first), rng.integers(len(shapes), size=count - first)])
    drawn = np.bincount(kinds, minlength=len(shapes))
    return tuple(ServerGroup(f"{name}{k}_", tuple(float(c) for c in shapes[k]), int(drawn[k]))
                 for k in range(len(shapes)) if drawn[k])


def scale_to_share(groups: tuple[ServerGroup, ...], demands: list[np.ndarray],
                   share: float) -> tuple[tuple[ServerGroup, ...], float]:
    """Multiply every capacity of a pool by one factor ``m = max(1, u/share)``, ``u`` the
    largest ``demand[r]/C[r]`` of one unit (worker or PS) on any server of the pool, rounded up
    to 3 decimals: afterwards no unit takes more than ``share`` of any server resource. One
    factor per pool keeps the resources' proportions; the caller decides whether the load
    should grow with it (more jobs)."""
    u = 0.0
    for g in groups:
        cap = np.asarray(g.capacity, dtype=float)
        for d in demands:
            on = cap > 0
            if on.any():
                u = max(u, float((np.asarray(d, dtype=float)[on] / cap[on]).max()))
    m = max(1.0, math.ceil(u / share * 1000 - 1e-9) / 1000)
    if m == 1.0:
        return groups, 1.0
    return tuple(ServerGroup(g.name, tuple(float(c) * m for c in g.capacity), g.count)
                 for g in groups), m


def _job(rng: np.random.Generator, p: Preset, job_id: str, arrival: int) -> Job:
    m = MODELS[int(rng.integers(len(MODELS)))]
    n = int(rng.integers(p.max_workers[0], p.max_workers[1] + 1))
    gamma = int(rng.integers(p.ps_ratio[0], p.ps_ratio[1] + 1))
    b = float(rng.choice(BANDWIDTHS))
    epochs = float(round(rng.uniform(*p.epochs), 1))
    training = Training(
        epochs=epochs, chunks=n, minibatches_per_chunk=m.minibatches_per_epoch / n,
        minibatch_seconds=m.minibatch_seconds, gradient_gbit=round(m.gradient_gbit, 4),
        bandwidth_gbps=b, slot_seconds=p.slot_seconds, model=m.name)
    v = training.workload()
    fastest = math.ceil(v / n)
    critical = rng.random() < 1 / 3
    utility = Sigmoid(
        gamma1=round(float(rng.uniform(10, 100)), 2),
        gamma2=round(float(rng.uniform(1, 4) if critical else rng.uniform(0.05, 0.5)), 3),
        gamma3=round(fastest * float(rng.uniform(1.0, 2.5)), 2),
    )
    worker_demand = np.array([*m.worker, b])
    ps_demand = np.array([0.0, *m.ps, gamma * b / 2])
    requested = int(rng.integers(max(1, n // 2), n + 1))
    # issue 22's knobs draw after the legacy ones: the older presets' instances are unchanged
    if p.fractional and rng.random() < p.fractional:
        worker_demand[0] = 0.5
    if p.table_share and rng.random() < p.table_share:
        utility = _table(rng, utility.gamma1, fastest)
    return Job(job_id, arrival, v, n, float(gamma), worker_demand[:p.resources],
               ps_demand[:p.resources], utility, requested, training)


def _table(rng: np.random.Generator, top: float, fastest: int) -> Table:
    """A table utility: ``top`` up to a deadline (the fastest duration times U[1, 2]), then a
    drop to a share U[0.3, 0.7] of it that declines linearly to 0 over as many slots again."""
    deadline = max(1, math.ceil(fastest * float(rng.uniform(1.0, 2.0))))
    after = float(rng.uniform(0.3, 0.7)) * top
    tail = [round(after * (1 - k / deadline), 2) for k in range(deadline)]
    return Table(tuple([round(top, 2)] * deadline + tail))


def _stable_hash(text: str) -> int:
    return sum((k + 1) * ord(c) for k, c in enumerate(text))


def demand_ratio(instance: Instance) -> dict[str, float]:
    """Total demand over total capacity per worker resource, if every job ran at its workload:
    ``Σ_i V_i·α_i[r] / (T·Σ_h C_h[r])``. Above 1, not every job can finish: admission matters."""
    cap = instance.worker_capacity.sum(axis=0) * instance.horizon
    need = (instance.workload[:, None] * instance.worker_demand).sum(axis=0)
    return {r: float(need[k] / cap[k]) for k, r in enumerate(instance.resources) if cap[k] > 0}
