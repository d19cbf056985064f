"""The route of an offline solve, chosen from the instance before anything large is built:
compact MILP or column generation (``choose_method``), the formulation (``route_options``,
from ``instance_features``), the rows and the modeller that fit the budget (``plan_route``),
and whether two variants race (``portfolio_wanted``). The size and cost constants are
measured (docs/offline-journal.md; the rules in brief: docs/offline.md, "How the route is
chosen")."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from ..limits import max_memory
from ..model import Instance
from . import race
from .clock import Clock

MODELERS = ("auto", "highspy", "pyomo", "pulp")
METHODS = ("auto", "compact", "colgen")


# --- the route by predicted cost ----------------------------------------------------------

#: Without a time limit ``auto`` takes the compact MILP while jobs × slots × servers stays
#: below this; beyond it, column generation. Measured on the paper preset (80 servers,
#: docs/offline-journal.md, round 3): 40 jobs × 20 slots (64 000) and 60 × 30 (144 000)
#: prove optimal in 1 and 5 s; 80 × 40 (256 000) is still open after 60 s (gap 0.04 %),
#: where column generation stops by itself in 16 s.
COMPACT_SIZE_LIMIT = 150_000
#: With a time limit of S seconds, the compact MILP is taken up to ``CELLS_PER_SECOND · S``
#: cells as well (at most ``COMPACT_SIZE_LIMIT``): HiGHS's root LP alone grows about linearly.
CELLS_PER_SECOND = 5_000
#: Seconds per (predicted) nonzero of preprocessing and model build, measured on models of
#: 3 k–3 M nonzeros (docs/offline.md): highspy arrays 2–5 µs, Pyomo 25–40 µs plus its
#: hand-over, PuLP 9–24 µs; rounded up, since a late answer breaks the contract.
BUILD_SECONDS_PER_NNZ = {"highspy": 6.0e-6, "pyomo": 5.0e-5, "pulp": 3.0e-5}
#: Seconds and bytes per allocation cell (``allocation_cells``) of ``prepare`` with
#: ``model_size``, before anything is built: measured 2.0–2.1 µs and 140–144 B (peak RSS) on
#: 7.7–13.7 M cells (1 800 jobs × 2 000 slots × 6 servers, cut down); the seconds doubled,
#: since ``plan_route`` may prepare again without the cut rows. The compact route skips to the
#: floor where this alone would take half the time left (``--method compact --time-limit 5``
#: on 16 M cells spent over 100 s in ``prepare``), and refuses past ``--max-memory`` up front.
PREPARE_SECONDS_PER_CELL = 4.0e-6
PREPARE_BYTES_PER_CELL = 140
#: Bytes per nonzero while the model is built (Python lists or modelling objects).
BUILD_BYTES_PER_NNZ = {"highspy": 120, "pyomo": 2_000, "pulp": 1_500}


def prepare_bytes(cells: int) -> int:
    """What ``prepare`` with ``model_size`` holds for ``cells`` allocation cells
    (``PREPARE_BYTES_PER_CELL``): the compact route's first memory check and the route
    rule's (``compact.sized_route``)."""
    return cells * PREPARE_BYTES_PER_CELL


def build_bytes(nonzeros: int, medium: str) -> int:
    """What building a model of ``nonzeros`` on ``medium`` holds (``BUILD_BYTES_PER_NNZ``;
    an unknown medium counts as Pyomo, the dearest)."""
    return nonzeros * BUILD_BYTES_PER_NNZ.get(medium, BUILD_BYTES_PER_NNZ["pyomo"])


#: Bytes per nonzero the solver holds while it solves the compact MILP, beyond the build: its
#: copy of the model, presolve's, the LP's factor and the branch-and-bound's pools. Measured
#: with HiGHS 1.16, one thread (peak RSS of one process less the package, the prepared model
#: and the build; round 41, docs/performance.md "Memory of the compact solve"): on the
#: `paper` preset (8.3 M nonzeros) 432 after 30 s and 562 after 145 s (the search's tree and
#: cut pool grow), 475 on 1 000 Philly jobs (1.9 M, 20 s). An outside audit had `solve
#: --method compact --max-memory 1G` on `paper`, its build estimated at 953 MiB, grow past
#: 6 GiB in two racing processes.
SOLVE_BYTES_PER_NNZ = 600


def solve_bytes(nonzeros: int, medium: str) -> int:
    """What one solve of a compact MILP of ``nonzeros`` on ``medium`` holds: its build
    (``build_bytes``) and the solver's run (``SOLVE_BYTES_PER_NNZ``). A race holds this once
    per racer (``portfolio_wanted``)."""
    return build_bytes(nonzeros, medium) + nonzeros * SOLVE_BYTES_PER_NNZ


#: Share of the budget the model build may take; beyond it the cheaper medium is used.
BUILD_SHARE = 0.25
#: Share of the budget the quadratic cut rows may take to build (else ``LEAN``).
CUT_SHARE = 0.10
#: Without a time limit the cut rows are dropped beyond this many nonzeros.
CUT_NNZ_LIMIT = 3_000_000


def instance_features(instance: Instance) -> dict[str, Any]:
    """What the route is chosen from (issue 22), a pure function of the instance:

    - ``worker_shapes``, ``ps_shapes``: distinct capacity vectors of each pool;
    - ``shared_workers``, ``shared_ps``: share of the pool's servers that have an identical
      twin (a group of ≥ 2: where pattern packing removes symmetry);
    - ``worker_classes``: distinct worker demand vectors among the jobs (demand classes);
    - ``jobs``, ``horizon``, ``resources``;
    - ``fill``: the largest ``Σ_i V_i·α_ir / (T·Σ_h C_hr)`` over the worker resources (above
      1 not every job can finish);
    - ``ps_binds``: some job's PSs demand a resource (else the PS pool never binds, as in the
      trace imports);
    - ``integral_servers``: the jobs' workers demand one resource only, and every demand
      divides every worker server's capacity (½ and 1 GPU on 4-GPU servers). Then a server's
      capacity row ``Σ_i d_i·y_iht ≤ C_h`` is already its knapsack's integer hull (the
      vertices ``(C_h/d_i)·e_i`` are integral), so demand-class patterns cannot tighten it.
    """
    def shapes(capacity: Any) -> tuple[int, float]:
        if not len(capacity):
            return 0, 0.0
        _, counts = np.unique(capacity, axis=0, return_counts=True)
        return int(len(counts)), float(counts[counts >= 2].sum() / len(capacity))

    import numpy as np
    w_shapes, w_shared = shapes(instance.worker_capacity)
    p_shapes, p_shared = shapes(instance.ps_capacity)
    J = instance.num_jobs
    classes = int(len(np.unique(instance.worker_demand, axis=0))) if J else 0
    cap = instance.worker_capacity.sum(axis=0) * instance.horizon
    need = (instance.workload[:, None] * instance.worker_demand).sum(axis=0) if J else cap * 0
    fill = float(max((need[r] / cap[r] for r in range(len(cap)) if cap[r] > 0), default=0.0))
    return {"jobs": J, "horizon": int(instance.horizon),
            "resources": len(instance.resources), "worker_shapes": w_shapes,
            "ps_shapes": p_shapes, "shared_workers": w_shared, "shared_ps": p_shared,
            "worker_classes": classes, "fill": fill,
            "ps_binds": bool(J and instance.ps_demand.any()),
            "integral_servers": _integral_servers(instance)}


def _integral_servers(instance: Instance) -> bool:
    """``instance_features``' ``integral_servers``: one demanded worker resource r, and
    ``C_hr / d_ir`` an integer for every worker server h and job i with ``d_ir > 0``."""
    import numpy as np
    demand = instance.worker_demand
    used = np.flatnonzero((demand > 0).any(axis=0)) if instance.num_jobs else []
    if len(used) != 1:
        return False
    d = np.unique(demand[:, used[0]])
    d = d[d > 0]
    q = instance.worker_capacity[:, used[0]][:, None] / d[None, :]
    return bool(np.all(np.abs(q - np.round(q)) <= 1e-9 * np.maximum(1.0, q)))


#: From this share of the trivial bound ``Σ_i f_i(1)`` reached by the floor (the best online
#: schedule) on, an instance is *loose*: nearly every job can finish in its first slots, the
#: root LP bound is at or near the optimum, and the time goes into finding the incumbent,
#: which extra rows only slow down (``floor_share``). Fitted on `loose` s0, s1, s4, s5 and
#: `mixed-2r`-s0 (0.92–0.99); the benchmark's other instances are at most 0.88
#: (hard-mix-open-01, a hard one with identical PS servers, kept on patterns). Checked on
#: held-out seeds (docs/offline-journal.md, issue 22 round 2): faster on 5 of 6.
LOOSE_FLOOR_SHARE = 0.9


def floor_share(instance: Instance, floor_utility: float | None) -> float | None:
    """``floor / Σ_{i active} f_i(1)``: how close the best online schedule comes to the
    trivial bound ``Prep.upper_bound`` (``f_i`` is non-increasing, so ``f_i(1)`` is the most
    job i can earn; jobs that cannot finish on the empty cluster count 0); None without a
    floor."""
    from ..formulations.common import PLAIN, prepare
    if floor_utility is None or not instance.num_jobs:
        return None
    bound = prepare(instance, PLAIN).upper_bound()  # server packing: no patterns built
    return float(floor_utility) / bound if bound > 0 else None


#: The server model (cuts, PS rate rounding in the cuts, dominance, chained rows) is kept
#: over ``PLAIN`` only where it lowers the LP relaxation's bound by at least this share of
#: it (``cut_gain``; issue 22 round 4). Fitted on `mixed` s0–s5 and `ps-light` s0–s5 (HiGHS
#: alone, random seeds 0 and 1, docs/offline-journal.md): on the eight with a gain of
#: 0.0002–0.009 PLAIN took 115.5 CPU s against the server model's 157.5 (less on 6, within
#: 10 % on 2); on the four from 0.011 on it took 88.9 against 68.5 (ps-light-s0, -s3: gains
#: 0.11, 0.21, the server model 1.3–1.8x faster; mixed-s3, 0.011, 1.25x; mixed-s2, 0.017,
#: 0.78x: the one the threshold gets wrong). Checked on held-out seeds and families:
#: docs/offline-journal.md, round 4.
CUT_GAIN = 0.01
#: ... and only where the jobs' work fills at least this share of the worker pool over the
#: horizon (``instance_features`` ``fill``). Fitted on the held-out check that failed:
#: hard-mix-02, -05, -10, -12 (fill 0.38–0.55, gains 0.003–0.007) took PLAIN and were
#: 1.3–4.4x slower than with the server model in two side-by-side runs each; the fit set's
#: fills are 0.81–1.85. Instances just above it, not fitted on: mixed-2r-s3 (0.65),
#: -s6, -s11 (0.85, 0.87) and ps-heavy-s7 (0.80) were faster with PLAIN, loose-s8 (0.63)
#: slower (docs/offline-journal.md, round 4).
PLAIN_MIN_FILL = 0.6
#: ``cut_gain`` builds both models and solves their LPs only below this many predicted
#: nonzeros of the server model (about 0.1 s at the `mixed` family's 10 k); beyond it the
#: server model is kept, as before round 4.
CUT_GAIN_NONZEROS = 60_000


def cut_gain(instance: Instance) -> float | None:
    """``(LP(PLAIN) − LP(server)) / LP(server)``: how much the server model's extra rows
    (completion and PS cuts, the no-idle-PS dominance row, the per-server linking) lower the
    bound of the LP relaxation below the plain model's, a pure function of the instance;
    None where the server model is too large to build twice (``CUT_GAIN_NONZEROS``) or an
    LP has no optimum."""
    from ..formulations.common import PLAIN, Options, prepare
    from ..formulations.compact_highspy import relaxation_bound
    server = prepare(instance, Options(packing="server"))
    if not server.active or server.model_size()["nonzeros"] > CUT_GAIN_NONZEROS:
        return None
    tight, plain = relaxation_bound(server), relaxation_bound(prepare(instance, PLAIN))
    if tight is None or plain is None or tight <= 0:
        return None
    return (plain - tight) / tight


def route_options(instance: Instance, floor_utility: float | None = None) -> Any:
    """The formulation of the default route, from the instance's features (issue 22):
    ``None`` (the defaults: demand-class pattern packing), server packing, or the plain
    server model ``common.PLAIN``.

    Patterns pay where identical servers make them exact symmetry breaking: measured side by
    side on the `hard`, `mixed`, `ps-heavy` families and hard-mix-01…06
    (docs/offline-journal.md, issue 22), pattern packing was faster wherever every PS server
    has an identical twin (`hard`: 2.1–3.1x; hard-mix-03, -04, -06: 1.6–17x) and slower
    where the PS pool holds a server of its own shape (1.3–2.6x on 8 of 9 instances),
    whatever the worker pool; checked on `mixed-2r`, `loose`, `ps-light` and hard-mix-07…12,
    the rule's route took less CPU on 11 of 15, about as much on 3, more on 1. PS
    integrality is what is hard in this model (docs/offline-journal.md, round 3), and a
    single PS server's patterns only enlarge it. "Whatever the worker pool" did not hold
    beyond those families: where fewer than ``PATTERN_MIN_SHARED_WORKERS`` of the worker
    servers have a twin, the server branch decides (issue 22, round 44; below). Where no
    job demands a PS resource the PS pool cannot bind and patterns stay (they carry the
    continuous workers of the trace imports, ``Prep.flow_workers``) unless they have nothing
    to add (below).

    Where the PS pool cannot bind, a server's knapsack already integral
    (``integral_servers``) and two or more demand classes (so the workers cannot be
    continuous), the patterns have nothing to add and ``PLAIN`` is taken: `uniform-1r`
    s0–s5, 1.85 CPU s against 2.40 (faster on 4, even on 1, slower on 1).
    Where the PS pool binds, loose instances (the floor, when there is one, reaches
    ``LOOSE_FLOOR_SHARE`` of the trivial bound) take ``PLAIN`` whatever the pools: on them
    the cuts, the dominance rows and the patterns cost root time and find nothing (fitted on
    `loose` s0, s1, s4, s5 and `mixed-2r`-s0, checked on `loose`-s2 and fresh seeds;
    docs/offline-journal.md, issue 22 round 2).
    Where the server branch would be taken and the work fills ``PLAIN_MIN_FILL`` of the
    worker pool or more, ``PLAIN`` is taken instead unless the server model's rows lower
    the LP bound by ``CUT_GAIN`` of it or more (``cut_gain``, issue 22 round 4; on emptier
    pools the server model was faster on all four hard-mix instances where this would
    have changed the route). Where they do not, the trees are alike and the server
    model's nodes dearer (twice the rows): given the optimum as a start, the comparator
    (PLAIN's rows) closed ps-light-s1 in 5 nodes, the server model in 230–360. Where they
    do (`ps-light` s0, s3: the PS rate rounding of the PS cuts takes 11–21 % off the LP),
    the server model stays.

    Server packing runs HiGHS without root restarts (``Options.restart`` auto; PLAIN too
    since round 17, ``common.PLAIN``): on
    `mixed` s0–s2, `mixed-2r` s1–s2, `ps-heavy` s0–s2, `ps-light` s1–s2 10.8 % less CPU
    with restarts off (better on 6 of 10, even on 3, worse on 1: mixed-s1 1.09x), checked
    on the six server-packed hard-mix instances: 17.3 against 26.1 CPU s (-01 5.1 against
    9.4, -10 2.2 against 4.5; none worse by more than 5 %). A restart drops the root's cuts,
    and these models have many: the root is most of their work. One rule for every
    server-packed model: where too many patterns make the default fall back to servers it
    was neutral (hard-mix-07 6.9 against 7.8 and -11 3.6 against 4.3 CPU s with HiGHS
    alone; 8.3 against 6.5 and 2.8 against 3.2 with the floor as MIP start). Whether the
    default's patterns fall back is known only once they are counted: ``settle_fallback``
    then applies the server branch's choice (``server_or_plain``) to the fallback."""
    from ..formulations.common import PLAIN
    f = instance_features(instance)
    if not f["ps_binds"]:
        # one demand class keeps the workers continuous (Prep.flow_workers: the trace imports)
        return PLAIN if f["integral_servers"] and f["worker_classes"] >= 2 else None
    if loose_rule(instance, floor_utility):
        return PLAIN
    if f["shared_ps"] < 1.0 or f["shared_workers"] < PATTERN_MIN_SHARED_WORKERS:
        return server_or_plain(instance, f["fill"])
    return None


#: Patterns only where at least this share of the worker servers has an identical twin
#: (``instance_features``' ``shared_workers``), as well as every PS server; elsewhere the
#: server branch (``server_or_plain``) decides (issue 22, round 44). HiGHS alone, the
#: planned model from the floor's start against PLAIN without one, on the 21 instances of
#: the benchmark the old rule gave patterns: patterns were faster on all seven with a share
#: of 0.75 or more (`hard` s0, s1; hard-mix-03, -04, -06, -08, -open-01: 1.3–16x), PLAIN on
#: all ten below it (fresh-a, fresh-b: 0.00–0.67; 1.1–10x) and on three of 1.0 (hard-s2,
#: fresh-111, fresh-201). Fitted on fresh seeds 100–123 and 200–223; checked, with the
#: whole route side by side, on held-out fresh seeds 124–147 and 224–247 and `loose` seeds
#: 3–11, the seven and one it re-routes: 4.6 s against 13.2 s (docs/offline-journal.md).
PATTERN_MIN_SHARED_WORKERS = 0.7


def server_or_plain(instance: Instance, fill: float) -> Any:
    """The server model or ``PLAIN`` on a binding PS pool (round 4): ``PLAIN`` where the
    work fills ``PLAIN_MIN_FILL`` of the worker pool or more and the server model's rows lower
    the LP bound by less than ``CUT_GAIN`` (``cut_gain``), else ``Options(packing="server")``."""
    from ..formulations.common import PLAIN, Options
    gain = cut_gain(instance) if fill >= PLAIN_MIN_FILL else None
    return PLAIN if gain is not None and gain < CUT_GAIN else Options(packing="server")


def settle_fallback(prep: Any) -> Any:
    """The route's prep once its packing is known: where the default options' patterns fell
    back to server packing (more than ``Options.pattern_limit`` patterns) on a binding PS
    pool, the server model there is the one ``route_options``' server branch weighs against
    ``PLAIN``, and the same rule (``server_or_plain``) decides (issue 22 round 5). Of the
    benchmark's instances only hard-mix-07 (fill 0.72, gain 0.002: PLAIN) and hard-mix-11
    (fill 0.42: the server model stays) fall back; neither was fitted on
    (docs/offline-journal.md). Any other prep is returned as it is."""
    from ..formulations.common import Options, prepare
    defaults = replace(prep.options, pattern_limit=Options().pattern_limit) == Options()
    if not defaults or prep.packing != "server" or prep.ps_free:
        return prep
    chosen = server_or_plain(prep.instance, instance_features(prep.instance)["fill"])
    return prep if chosen == Options(packing="server") else prepare(prep.instance, chosen)


#: Column generation pools each server pool into one group of rows (``colgen.solve``'s
#: ``bound_only``: the trace-scale master, its rounding and moves) at trace scale, and on
#: instances of at least ``POOLED_MIN_JOBS`` jobs whose worker pool has ``POOLED_MIN_SHAPES``
#: capacity vectors or more, or whose model has one resource. At 60 s on 23 instances (70–2 000
#: jobs: generator families, Philly, Alibaba and Gavel slices; 7 held out from the fit) the
#: pooled route's incumbent was up to 23 % higher where servers differ in three shapes or more
#: (13 of 13 at least even), −1 % to +36 % on one resource, and 4–11 % lower on alike servers
#: of four resources (paper, hard) and on two shapes (ps-heavy): its rounding places pooled
#: counts first-fit, which multi-resource servers refuse more often than a per-server
#: pattern master does (docs/performance.md, "Round 27").
POOLED_MIN_JOBS = 70
POOLED_MIN_SHAPES = 3
#: ... and on any of them where the route has less than this many seconds: at a 30 s limit
#: (27–28 s left to the route) the pooled route's incumbent was never the lower on 24
#: instances (one tie), by +0.1 % to +25 % on the five alike and two-shape ones where the
#: per-server phases win at 45 s and 60 s (paper 200 jobs 6 952 against 5 669 at 30 s, 6 960
#: against 7 304 at 45 s; docs/performance.md, "Round 28"), and at 40 s on four of those
#: five (+3.2 % to +11 %; ps-heavy 70 jobs −0.5 %; "Round 29").
POOLED_BELOW_SECONDS = 35.0


def pooled_colgen(instance: Instance, seconds: float | None = None) -> bool:
    """Whether column generation runs on the pooled master (``POOLED_MIN_JOBS``,
    ``POOLED_BELOW_SECONDS``): a pure function of the instance and the ``seconds`` the route
    has (None: no limit)."""
    from ..formulations.colgen_scale import SCHEDULE_CELLS, schedule_cells
    if schedule_cells(instance) > SCHEDULE_CELLS:
        return True
    if instance.num_jobs < POOLED_MIN_JOBS:
        return False
    if seconds is not None and seconds < POOLED_BELOW_SECONDS:
        return True
    return instance_features(instance)["worker_shapes"] >= POOLED_MIN_SHAPES or \
        len(instance.resources) == 1


def allocation_cells(instance: Instance) -> int:
    """Jobs × slots from arrival × servers: an upper bound on the allocation cells."""
    slots = int((instance.horizon - instance.arrival).sum()) if instance.num_jobs else 0
    return slots * (len(instance.worker_names) + len(instance.ps_names))


#: With a time limit of S seconds and at least ``SIZED_MIN_JOBS`` jobs, the default route keeps
#: the compact MILP only while its model (as ``compact.route_prep`` makes it before the floor)
#: has at most this many rows per second of S; beyond, column generation. Cells (above)
#: undercount the model on small pools of unlike servers: 80 `mixed` jobs × 50 slots on 6
#: servers are 17 700 cells and 26 700 rows, whose root LP alone took HiGHS 49 s (the 60 s
#: solve answered the floor under the bound Σ f_i(1)). Measured side by side on 36 generated
#: instances of 8 families (30–120 jobs, 20–60 slots, S = 30–60): column generation's
#: incumbent was 10.7 % higher on average (−21 % to +43 %), the median gap 12.8 % against
#: 40.6 %; this rule keeps 10.8 % and 12.8 % (docs/performance.md, round 13).
ROWS_PER_SECOND = 300
#: ... and whatever the limit up to this many rows (a root LP of well under a second).
COMPACT_MIN_ROWS = 2_000
#: ... and on fewer jobs the compact MILP stays: with 12–16 jobs it proves what column
#: generation leaves open (the `trace` family's 12-job Philly slice at 15 s: optimal in
#: 1.6 s against an open gap; hard-mix-04 at 5 s: 560.7 against 528.0).
SIZED_MIN_JOBS = 24


def compact_in_time(rows: float, budget: float | None, jobs: int = SIZED_MIN_JOBS) -> bool:
    """Whether a compact model of ``rows`` rows for ``jobs`` jobs suits a time limit of
    ``budget`` seconds (``ROWS_PER_SECOND``, ``COMPACT_MIN_ROWS``, ``SIZED_MIN_JOBS``; always
    without a limit)."""
    return budget is None or jobs < SIZED_MIN_JOBS \
        or rows <= max(COMPACT_MIN_ROWS, ROWS_PER_SECOND * budget)


#: Between the compact rows (``compact_in_time``) and this many rows per second of the limit,
#: column generation and the compact MILP run side by side, one core each (``routes_race``,
#: ``offline/route_race.py``): the better schedule and the least bound are kept. In the
#: round-13 measurement (36 instances, 8 families, 30–120 jobs, S = 30–60 s, the two routes
#: run at the same time on the two cores) the compact MILP still had the better answer on
#: 10 instances with 279–629 rows per second (mixed-2r 60×40: gap 1.2 % against column
#: generation's 11.3 %; ps-heavy 70×45: 2.9 % against 16.0 %), never from 700 on (its root
#: LP unfinished: mixed 80×50 at 30 s, 1 011 rows a second, 154 % against 38 %). Kept
#: side by side, the better of the two had a median gap of 10.4 % against the rows rule's
#: 12.8 % and every instance's best incumbent (docs/performance.md, round 14).
RACE_ROWS_PER_SECOND = 700
#: ... and at most this many rows whatever the limit: both models live at once, and nothing
#: past twice the largest measured model (30 000 rows) was tried.
RACE_MAX_ROWS = 60_000


def routes_race(rows: float, budget: float | None, jobs: int) -> bool:
    """Whether a model of ``rows`` rows that is too large for the compact route alone
    (``compact_in_time`` false) is small enough to race against column generation
    (``RACE_ROWS_PER_SECOND``, ``RACE_MAX_ROWS``): a pure function of the sizes; whether two
    cores are free is ``cores_free``."""
    return budget is not None and not compact_in_time(rows, budget, jobs) \
        and rows <= min(RACE_MAX_ROWS, RACE_ROWS_PER_SECOND * budget)


def cores_free(budget: float | None) -> bool:
    """Two processes may take a core each: this process is a top-level one that can fork on
    a machine of two cores or more, and the other core is mostly idle (the load average below
    cores − 0.5, this process counting about 1; or, where the average lags, the other
    processes busy on fewer than cores − 1.5 over ``IDLE_WINDOW``) or the time limit is long
    (``PORTFOLIO_LONG_BUDGET``): there the answer is what is at stake. On a busy machine two
    solves halve each other's speed (measured: hard-s3 took 1.8x the comparator's wall time
    racing at load 4 on 2 cores, 0.57x alone at load 7). ``OASIS_PORTFOLIO=1`` takes the
    cores regardless, ``0`` never."""
    wanted, cores = os.environ.get("OASIS_PORTFOLIO", ""), os.cpu_count() or 1
    if not _may_fork():
        return False
    if wanted == "1" or (budget is not None and budget >= PORTFOLIO_LONG_BUDGET):
        return cores >= 2
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available here: assume busy
        return False
    if load < cores - 0.5:
        return True
    # the one-minute average still counts a run that has ended (a script's solve before
    # this one raced on both cores): what the other processes take now decides
    busy = busy_cores(IDLE_WINDOW)
    return busy is not None and busy < cores - 1.5


def _may_fork() -> bool:
    """This process may put a solve on another core: ``OASIS_PORTFOLIO`` is not ``0``, it is
    a top-level process (a sweep's or Dask's workers already share the cores) and it can
    fork (daemonic workers may not have children)."""
    import multiprocessing as mp
    return os.environ.get("OASIS_PORTFOLIO", "") != "0" and mp.parent_process() is None \
        and race.can_fork()


def core_idle() -> bool:
    """A core other than this process's is idle now, asked without waiting (unlike
    ``cores_free``, which watches the machine for ``IDLE_WINDOW`` where the load average
    says it is busy): the load average below cores − 0.5, or at most cores − 1 tasks
    runnable this instant, this process counted (``/proc/loadavg``). For work of a fraction
    of a second on the other core (``compact.early_prober``), which the 50 ms look would
    cost more than it saves. ``OASIS_PORTFOLIO`` as in ``cores_free``."""
    cores = os.cpu_count() or 1
    if not _may_fork() or cores < 2:
        return False
    if os.environ.get("OASIS_PORTFOLIO", "") == "1":
        return True
    try:
        if os.getloadavg()[0] < cores - 0.5:
            return True
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):  # not to be read here: assume busy
        return False
    return running <= cores - 1


#: Seconds ``cores_free`` watches the machine when the load average says it is busy.
IDLE_WINDOW = 0.05


def busy_cores(window: float) -> float | None:
    """Cores busy over the next ``window`` seconds (from ``/proc/stat``; this process sleeps
    meanwhile, so they are the other processes'), or None where it cannot be read."""
    import time

    def sample() -> tuple[int, int, int]:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
        ticks = [int(v) for v in lines[0].split()[1:9]]
        cpus = sum(1 for line in lines[1:] if line.startswith("cpu"))
        return sum(ticks), ticks[3] + ticks[4], cpus  # all, idle + iowait, cores
    try:
        total0, idle0, cpus = sample()
        time.sleep(window)
        total1, idle1, _ = sample()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    return cpus * (1.0 - (idle1 - idle0) / (total1 - total0))


def loose_rule(instance: Instance, floor_utility: float | None) -> bool:
    """``route_options``' loose rule: the PS pool binds and the floor reaches
    ``LOOSE_FLOOR_SHARE`` of the trivial bound (the one way the floor changes the route)."""
    share = floor_share(instance, floor_utility)
    return share is not None and share >= LOOSE_FLOOR_SHARE \
        and bool(instance_features(instance)["ps_binds"])


def choose_method(instance: Instance, method: str, clock: Clock) -> str:
    """``auto``: compact while the allocation cells stay below ``COMPACT_SIZE_LIMIT`` (and
    ``CELLS_PER_SECOND`` times the budget), else column generation."""
    if method != "auto":
        return method
    limit = COMPACT_SIZE_LIMIT
    if clock.limit is not None:
        limit = min(limit, max(20_000, CELLS_PER_SECOND * clock.limit))
    return "compact" if allocation_cells(instance) <= limit else "colgen"


def plan_route(prep: Any, modeler: str, clock: Clock, solver: str) -> tuple[Any, str]:
    """(prep, modeler) of the route: the cut rows dropped (``common.LEAN``) when their
    predicted build does not fit, the build handed to highspy when the requested modeller's
    would not."""
    from ..formulations.common import LEAN, prepare
    budget = clock.remaining()
    medium = "highspy" if modeler == "auto" else modeler
    nnz = prep.model_size()["nonzeros"]
    cuts = prep.cut_nonzeros()
    if cuts and (nnz > CUT_NNZ_LIMIT if budget is None
                 else cuts * BUILD_SECONDS_PER_NNZ["highspy"] > CUT_SHARE * budget):
        # chained, only the PS cuts grow with the square of the horizon
        dropped = ("ps_cuts",) if prep.options.chained else ("cumulative", "completion_cuts",
                                                             "ps_cuts")
        lean = replace(prep.options, **{k: getattr(LEAN, k) for k in dropped})
        prep = prepare(prep.instance, lean)
        nnz = prep.model_size()["nonzeros"]
    if solver == "highs" and medium != "highspy" and budget is not None \
            and nnz * BUILD_SECONDS_PER_NNZ[medium] > BUILD_SHARE * budget:
        medium = "highspy"
    return prep, medium


# --- the portfolio: two variants race on two cores ---------------------------------------

#: The variants that race (options, HiGHS random seed); the first is the planned model
#: itself. Measured on the hard preset (docs/offline-journal.md, issue 11): the no-cut
#: variant's proof times are least correlated with the default's, so the first proof comes
#: earlier.
PORTFOLIO: tuple[tuple[dict[str, Any], int], ...] = (
    ({}, 0), ({"completion_cuts": False, "ps_cuts": False, "ps_dominance": False}, 1))


def _server_pair(prep: Any) -> bool:
    """A server-packed model on a pool whose PS servers bind: where the server model and
    PLAIN race each other (``racers``)."""
    return prep.packing == "server" and not prep.ps_free


#: The HiGHS random seed of the seed partner (``racers``): the planned model raced against
#: itself at another seed where the rule has nothing better to race (issue 22, round 6).
SEED_PARTNER = 1
#: PLAIN's partner solves PLAIN with the PS counts relaxed and then made whole
#: (``Options.ps_relaxed``, issue 22 round 10), at ``SEED_PARTNER``, where some job shares
#: a PS (γ_i > 1) and a PS row can bind: there the relaxation's tree is smaller where the
#: PS pool has room, and where it has none the partner falls back to the whole model
#: (docs/offline-journal.md, "The PS counts relaxed, then made whole").
RELAXED_PARTNER = True
#: Racers share incumbents (``race.solve_portfolio(share=True)``, issue 22 round 10): each
#: improving schedule of one racer is handed to the others' running HiGHS. Off until it
#: measures better (docs/offline-journal.md, "The incumbent side of PLAIN").
SHARE_INCUMBENTS = False


def racers(prep: Any) -> list[tuple[Any, int]]:
    """The variants that race, as (options, HiGHS random seed); the first is the planned
    model itself. Where the rule is unsure (issue 22, item 2) the second is
    ``common.PLAIN``: a server-packed model on a pool whose PS servers bind
    (``route_options``' server branch, or patterns that fell back to servers), where the
    server model and PLAIN were each faster on some instances and slower on others, by
    0.24–2.8x either way (docs/offline-journal.md). Where the route took PLAIN its partner
    is PLAIN itself at HiGHS random seed ``SEED_PARTNER`` (the seed race, issue 22 round 6):
    PLAIN is the comparator's model, the time it takes is mostly the luck of HiGHS's search
    (mixed-s1: 6.4–14.7 CPU s over seeds 0–4), and the first of two independent draws beat
    the server model as partner (docs/offline-journal.md, round 6); ``portfolio_wanted``
    races PLAIN only where a PS row can bind. Elsewhere ``PORTFOLIO``'s cut-free variant, as
    measured on the `hard` preset."""
    from ..formulations.common import PLAIN
    if prep.options == PLAIN:
        # a PS shared in the relaxation (γ_i > 1) on a pool whose PS rows can bind
        shared = bool((prep.instance.ps_ratio > 1).any()) and not prep.ps_free
        partner = replace(PLAIN, ps_relaxed=True) if RELAXED_PARTNER and shared else PLAIN
        return [(PLAIN, 0), (partner, SEED_PARTNER)]
    if _server_pair(prep):
        return [(prep.options, 0), (PLAIN, 0)]
    return [(prep.options, PORTFOLIO[0][1])] + [(replace(prep.options, **o), seed)
                                                for o, seed in PORTFOLIO[1:]]


#: Below this many nonzeros a model proves in well under a second: no processes for it.
PORTFOLIO_MIN_NONZEROS = 3_000
#: Seconds after the first racer that the second one starts (``race.solve_portfolio``'s
#: ``delays``), if the first has not proven the optimum by then. The model's size does not
#: say how long HiGHS takes (loose-s0, 9.7 k nonzeros, proves in 0.05 s from the floor's
#: start; mixed-2r-s2, 9 k, in 2.8 s alone), the clock does: on an instance the first racer
#: proves within this, a second process only costs its start-up (loose-s0: 0.19 s racing
#: against the comparator's 0.05 s, issue 22 round 4), and where the partner is the faster
#: model the proof comes at most this much later (issue 22 round 5,
#: docs/offline-journal.md).
RACE_DELAY = 0.25
#: Below this many nonzeros a time-limited solve that does not race runs HiGHS in this
#: process, not in a forked guard (issue 22). The guard is there for root phases that call
#: no callback (4–16 s late on 30 jobs × 300 slots, 3 M nonzeros); on models this small the
#: whole root LP takes about 0.1 s (measured: the `loose`, `uniform-1r`, `mixed-2r` families,
#: 3 k–16 k nonzeros), so the in-process callbacks keep the deadline well inside the
#: contract's 10 s slack, and the fork, the pipe and the child's first HiGHS run are saved.
GUARD_MIN_NONZEROS = 20_000
#: From this many seconds of budget on, the race runs even on a busy machine.
PORTFOLIO_LONG_BUDGET = 100.0


def portfolio_wanted(prep: Any, modeler: str, options: Any, medium: str,
                     budget: float | None, idle: bool = False) -> bool:
    """Race only the default model on highspy, on a model worth a process, while two cores
    are free (``cores_free``: a top-level process, an idle core or a long time limit; with
    ``PORTFOLIO_LONG_BUDGET`` seconds or more the proof is what is at stake, and the two
    models' proof times differ by more than the factor two racers cost each other on a busy
    machine: the 30-job, 317-slot Philly instance: the cut-free model proves it in about
    200 s, the default alone leaves 2.9 % at 300 s). ``OASIS_PORTFOLIO=1`` races
    regardless, ``0`` never. Never where the racers' solves together (``solve_bytes`` each:
    each builds and solves its own model) would pass ``--max-memory``. ``idle``: a core was
    found idle at the solve's start (``core_idle``) and is this solve's own since (its
    prober, ``compact.early_prober``), which ``cores_free`` would count as busy."""
    from ..formulations.common import PLAIN
    # PLAIN races (itself at another seed, ``racers``) only where a PS capacity row can
    # bind: where none can (`uniform-1r`) it proves in well under a second, and the forked
    # racer cost more than a second seed saved (issue 22 round 6: uniform-1r s0–s2 0.46–0.59
    # → 0.69–0.86 of the comparator's time, side by side)
    plain = prep.options == PLAIN and _server_pair(prep)
    nonzeros = prep.model_size()["nonzeros"]
    if not (modeler == "auto" and options is None and medium == "highspy"
            and (prep.options.completion_cuts or plain)
            and nonzeros >= PORTFOLIO_MIN_NONZEROS):
        return False
    # each racer builds and solves its own model: all of them within ``--max-memory``
    if len(racers(prep)) * solve_bytes(nonzeros, medium) > max_memory():
        return False
    return idle or cores_free(budget)


def race_at_home(prep: Any) -> bool:
    """The portfolio's first racer runs in this process, its partner in a child forked
    before it and held until ``RACE_DELAY`` (``race.solve_portfolio(home=True)``, issue 22
    round 30): below ``GUARD_MIN_NONZEROS``, where HiGHS's callbacks keep the deadline, and
    without shared incumbents (``SHARE_INCUMBENTS``). On loose-s0 (9.7 k nonzeros, proven
    within the delay) the racer in a child cost 0.04 s of a 0.13 s solve: its model built
    again, its first HiGHS run, every incumbent sent back."""
    return not SHARE_INCUMBENTS and prep.model_size()["nonzeros"] < GUARD_MIN_NONZEROS


def guard_wanted(prep: Any, medium: str, budget: float | None) -> bool:
    """Run a time-limited highspy solve in a forked child killed at the deadline: only where
    a root phase without callbacks could overshoot it, i.e. from ``GUARD_MIN_NONZEROS``
    nonzeros on (and where the process can fork)."""
    return (medium == "highspy" and budget is not None
            and prep.model_size()["nonzeros"] >= GUARD_MIN_NONZEROS and race.can_fork())
