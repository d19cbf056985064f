"""The exact engine on instances it has not seen (issue 22): the default route and the plain
comparator (``benchmarks/direct_highspy.py``) side by side over generator families and the
other generator's ``../shared/bench/hard-mix/`` instances, per family and overall: median
default seconds, median comparator seconds, median and worst wall ratio (default /
comparator), CPU seconds of each side.

Families (``oasis_opt/generator.py`` presets, seeds 0, 1, 2; ``trace``: slices of the Philly
trace):

| family | what it covers |
| --- | --- |
| ``hard`` | issue 11's preset: identical servers (3 worker, 2 PS), 4 resources |
| ``mixed`` | 2-3 worker and 2 PS shapes, 4 resources, ½-GPU jobs, table + sigmoid, γ 1-4 |
| ``mixed-2r`` | the same on 2 resources (gpu, cpu) |
| ``uniform-1r`` | identical servers, GPUs only, ½-GPU jobs, table + sigmoid |
| ``loose`` | ``mixed`` with twice the servers (loose capacity) |
| ``ps-heavy`` | ps_ratio 1: the PS pool binds |
| ``ps-light`` | ps_ratio 4-8: one PS per many workers |
| ``trace`` | 12 Philly jobs over 80 slots on one 4-GPU server (long horizon, trace import) |
| ``hard-mix`` | the 14 instances of ``../shared/bench/hard-mix/`` (two not proven by anyone) |
| ``fresh-a``, ``fresh-b`` | held out: a generator of their own (``fresh_families.py``, from the |
| | hard-mix README's description), never used to fit the route rule; ``--seeds 24`` for all |

Each solve is capped at ``--limit`` seconds (60): a capped side counts with the seconds it
took, so a ratio against a capped comparator is an underestimate (the row says how many were
capped). The two sides alternate in order from one instance to the next (A B, B A, …) so that
a change of load hurts neither side more. The machine is shared: read medians and ratios, and
the load recorded with them.

    python benchmarks/bench_families.py run --families mixed,hard-mix --out fam.jsonl
    python benchmarks/bench_families.py table fam.jsonl
    pytest benchmarks/bench_families.py --benchmark-only   # OASIS_BENCH_QUICK=1: 7 quick ones
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from oasis_opt.formulations.common import PLAIN, Options

from oasis_opt.generator import generate
from oasis_opt.io import load_instance
from oasis_opt.model import Instance
from oasis_opt.offline import solve

sys.path.insert(0, str(Path(__file__).parent))
import direct_highspy  # noqa: E402  (the comparator sits next to this file)
import fresh_families  # noqa: E402  (the held-out families, also next to it)

ROOT = Path(__file__).resolve().parent.parent
#: The other generator's instances (read in place, never copied into the project).
HARD_MIX = ROOT.parent / "shared" / "bench" / "hard-mix"
PHILLY = ROOT / "instances" / "traces" / "adaptdl" / "philly.csv"
QUICK = os.environ.get("OASIS_BENCH_QUICK", "") not in ("", "0")
GENERATED = ("hard", "mixed", "mixed-2r", "uniform-1r", "loose", "ps-heavy", "ps-light")
FAMILIES = (*GENERATED, "trace", "hard-mix", *fresh_families.FAMILIES)
LIMIT = 60.0
#: Variants of the default route, for fitting the route rule (``--variant``).
VARIANTS: dict[str, Options | None] = {
    "default": None,
    "server": Options(packing="server", restart=True),  # the route before issue 22 round 2
    "pattern": Options(packing="pattern"),
    "server-nocuts": Options(packing="server", completion_cuts=False, ps_cuts=False,
                             ps_dominance=False),
    "server-nodom": Options(packing="server", ps_dominance=False),
    "plain": PLAIN,
    "round3": None,  # the default route as before issue 22 round 4 (ROUTE_PATCHES)
    "round4": None,  # the default route as before issue 22 round 5 (ROUTE_PATCHES)
    "round5": None,  # the default route as before issue 22 round 6 (ROUTE_PATCHES)
    "round6": None,  # the default route as before issue 22 round 7 (ROUTE_PATCHES)
    "round7": None,  # the default route as before issue 22 round 8 (ROUTE_PATCHES)
    "round9": None,  # the default route as before issue 22 round 10 (ROUTE_PATCHES)
    "round10": None,  # the default route as before issue 22 round 11 (ROUTE_PATCHES)
    "round16": None,  # the default route as before issue 22 round 17 (ROUTE_PATCHES)
    "round29": None,  # the default route as before issue 22 round 30 (ROUTE_PATCHES)
    "delay0": None,  # the partner held for no time (ROUTE_PATCHES)
    "round42": None,  # the default route as before issue 22 round 43 (ROUTE_PATCHES)
    "round43": None,  # the default route as before issue 22 round 44 (ROUTE_PATCHES)
    "twins-ps": None,  # patterns wherever every PS server has a twin (ROUTE_PATCHES)
    "round44": None,  # the default route as before issue 22 round 45 (ROUTE_PATCHES)
}


def _round5_racers(prep: Any) -> list[tuple[Any, int]]:
    """``plan.racers`` before round 6: PLAIN on a binding PS pool raced the server model."""
    from oasis_opt.offline import plan
    if prep.options == PLAIN and not prep.ps_free:
        return [(PLAIN, 0), (Options(packing="server"), 0)]
    return plan.racers(prep)


def _round7_mip_options(prep: Any) -> dict[str, Any]:
    """``formulations.highs.mip_options`` before round 8: HiGHS's root reduced-cost
    heuristic on for every model (PLAIN on γ = 1 instances included)."""
    from oasis_opt.formulations.highs import mip_options
    return {k: v for k, v in mip_options(prep).items()
            if k != "mip_heuristic_run_root_reduced_cost"}


def _round16_mip_options(prep: Any) -> dict[str, Any]:
    """``formulations.highs.mip_options`` before round 17: PLAIN (and its relaxed race
    partner) with HiGHS's root restarts."""
    from dataclasses import replace

    from oasis_opt.formulations.highs import mip_options
    out = mip_options(prep)
    if replace(prep.options, ps_relaxed=False) == PLAIN:
        out.pop("mip_allow_restart", None)
    return out


#: Variants that run the default route with some of its rules switched off, as
#: ``(module, attribute, replacement)``, so that an earlier route and the current one can
#: alternate in one run beside one comparator: ``round3`` never weighs the LP bounds
#: (``plan.cut_gain`` None keeps the server model wherever the PS servers differ), the
#: route of main before round 4; ``round4`` keeps the server model where patterns fall back
#: to servers (``settle_fallback``) and starts both racers at once (``RACE_DELAY`` 0), the
#: route of main before round 5; ``round5`` races PLAIN against the server model, not
#: against itself at another seed (before round 6); ``round6`` runs the whole floor before
#: the solve (``FLOOR_FIRST`` None: no lazy floor, before round 7); ``round7`` runs HiGHS's
#: root reduced-cost heuristic on PLAIN where γ ≤ 1 too (before round 8); ``round9`` races
#: PLAIN against itself at another seed with whole PS counts (before round 10); ``round10``
#: runs no floor without a time limit (before round 11: ``--unlimited`` shows the difference);
#: ``round16`` lets HiGHS restart PLAIN's root (before round 17); ``round29`` runs every racer
#: in a child process (``plan.race_at_home`` false: before round 30); ``delay0`` starts the
#: partner with the first racer (``RACE_DELAY`` 0, round 30); ``round42`` ends the early
#: prober where the route races and gives it 0.3 s (before round 43); ``round43`` counts
#: the patterns to the end after the prober's proof, ends the prober before a plain probe
#: and at its window where no race follows, and takes patterns wherever every PS server has
#: a twin (before round 44); ``twins-ps`` only the last (``PATTERN_MIN_SHARED_WORKERS`` 0).
ROUTE_PATCHES: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "round3": (("oasis_opt.offline.plan", "cut_gain", lambda instance: None),
               ("oasis_opt.offline.compact", "settle_fallback", lambda prep: prep),
               ("oasis_opt.offline.compact", "RACE_DELAY", 0.0)),
    "round4": (("oasis_opt.offline.compact", "settle_fallback", lambda prep: prep),
               ("oasis_opt.offline.compact", "RACE_DELAY", 0.0)),
    "round5": (("oasis_opt.offline.compact", "racers", _round5_racers),),
    "round6": (("oasis_opt.offline", "FLOOR_FIRST", None),),
    "round7": (("oasis_opt.offline.backends", "mip_options", _round7_mip_options),),
    "round9": (("oasis_opt.offline.plan", "RELAXED_PARTNER", False),),
    "round10": (("oasis_opt.offline", "FLOOR_WITHOUT_LIMIT", False),),
    "round16": (("oasis_opt.offline.backends", "mip_options", _round16_mip_options),),
    "round29": (("oasis_opt.offline.compact", "race_at_home", lambda prep: False),),
    "delay0": (("oasis_opt.offline.compact", "RACE_DELAY", 0.0),),
    "round42": (("oasis_opt.offline.compact", "PROBER_IN_RACE", False),
                ("oasis_opt.offline.compact", "EARLY_PROBE_SECONDS", 0.3)),
    "round43": (("oasis_opt.offline.compact", "PREP_STOPS", False),
                ("oasis_opt.offline.compact", "PROBER_BESIDE_PROBE", False),
                ("oasis_opt.offline.compact", "PROBER_KEPT", False),
                ("oasis_opt.offline.plan", "PATTERN_MIN_SHARED_WORKERS", 0.0)),
    "twins-ps": (("oasis_opt.offline.plan", "PATTERN_MIN_SHARED_WORKERS", 0.0),),
    "round44": (("oasis_opt.offline.compact", "PROBER_AS_PLAIN_PARTNER", False),),
}


def instances(family: str, seeds: int = 3) -> Iterator[Instance]:
    """The instances of one family (``seeds`` of each generated one; hard-mix: all)."""
    if family in GENERATED:
        for seed in range(seeds):
            yield generate(family, seed=seed)
    elif family == "trace":
        from oasis_opt.traces import Policy, import_trace
        for start in (0, 40, 80)[:seeds]:
            yield import_trace("philly", PHILLY, Policy(jobs=12, horizon=80, start=start,
                                                         servers=1)).instance
    elif family == "hard-mix":
        for path in sorted(HARD_MIX.glob("hard-mix-*.json")):
            yield load_instance(path)
    elif family in fresh_families.FAMILIES:
        yield from fresh_families.family(family, seeds)
    else:
        raise ValueError(f"unknown family {family!r}; choose from {', '.join(FAMILIES)}")


def _cpu() -> float:
    """CPU seconds of this process and its finished children (racers, guarded colgen)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _timed(f: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), _cpu()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - w, _cpu() - c


def side_by_side(instance: Instance, first: int, limit: float = LIMIT,
                 variants: tuple[str, ...] = ("default",),
                 unlimited: bool = False) -> list[dict[str, Any]]:
    """The comparator and each variant of the default route on one instance, in an order
    rotated by ``first`` (A B, B A, …); one record per variant, sharing the comparator.
    ``unlimited``: the default route runs without a time limit (``oasis-opt solve`` as a new
    user types it; the comparator keeps ``limit``)."""
    def ours(variant: str) -> dict[str, Any]:
        name, _, race = variant.partition("@")
        saved = os.environ.get("OASIS_PORTFOLIO")
        if race:  # ``@race`` races wherever the route would, ``@solo`` never
            os.environ["OASIS_PORTFOLIO"] = {"race": "1", "solo": "0"}[race]
        import importlib
        patches = [(importlib.import_module(m), a, v) for m, a, v in ROUTE_PATCHES.get(name, ())]
        kept = [(m, a, getattr(m, a)) for m, a, _ in patches]
        try:
            for m, a, v in patches:
                setattr(m, a, v)
            (_, rep), wall, cpu = _timed(solve, instance,
                                         time_limit=None if unlimited else limit,
                                         options=VARIANTS[name])
        finally:
            for m, a, v in kept:
                setattr(m, a, v)
            if race:
                os.environ.pop("OASIS_PORTFOLIO", None)
                if saved is not None:
                    os.environ["OASIS_PORTFOLIO"] = saved
        return {"wall": wall, "cpu": cpu, "status": rep.status.value,
                "utility": rep.objective, "bound": rep.bound, "route": rep.route}

    def theirs() -> dict[str, Any]:
        res, wall, cpu = _timed(direct_highspy.solve, instance, time_limit=limit)
        return {"wall": wall, "cpu": cpu, "status": res.status, "utility": res.objective,
                "bound": res.bound}

    order: list[str | None] = [None, *variants]
    k = first % len(order)
    order = order[k:] + order[:k]
    got = {v: (theirs() if v is None else ours(v)) for v in order}
    comp = got[None]
    return [{"instance": instance.name, "variant": v, "order": [o or "comparator"
                                                                for o in order],
             "default": got[v], "comparator": comp,
             "ratio": got[v]["wall"] / max(comp["wall"], 1e-9), "load": os.getloadavg()[0]}
            for v in variants]


def features(instance: Instance) -> dict[str, Any]:
    """What the route rule reads (``oasis_opt.offline``), recorded with every measurement."""
    from oasis_opt.offline import instance_features
    return instance_features(instance)


def table(records: list[dict[str, Any]]) -> str:
    """Markdown: per family (and overall) n, median seconds of each side, median and worst
    ratio, total CPU seconds of each side, capped solves."""
    rows = ["| family | variant | n | median default s | median comparator s | median ratio "
            "| worst ratio | CPU default s | CPU comparator s | capped (default/comp.) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["family"], r["variant"]), []).append(r)
    for variant in sorted({r["variant"] for r in records}):
        groups[("all", variant)] = [r for r in records if r["variant"] == variant]
    for (fam, variant), rs in groups.items():
        ratios = [r["ratio"] for r in rs]
        capped_a = sum(r["default"]["status"] != "optimal" for r in rs)
        capped_b = sum(r["comparator"]["status"] != "Optimal" for r in rs)
        rows.append(
            f"| {fam} | {variant} | {len(rs)} "
            f"| {statistics.median(r['default']['wall'] for r in rs):.1f} "
            f"| {statistics.median(r['comparator']['wall'] for r in rs):.1f} "
            f"| {statistics.median(ratios):.2f} | {max(ratios):.2f} "
            f"| {sum(r['default']['cpu'] for r in rs):.0f} "
            f"| {sum(r['comparator']['cpu'] for r in rs):.0f} | {capped_a}/{capped_b} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure, appending one JSON line per instance")
    r.add_argument("--families", default=",".join(FAMILIES))
    r.add_argument("--seeds", type=int, default=3)
    r.add_argument("--only", default="", help="comma-separated instance names")
    r.add_argument("--limit", type=float, default=LIMIT)
    r.add_argument("--variants", default="default",
                   help=f"comma-separated, from {', '.join(VARIANTS)}; a suffix @race races "
                        "wherever the route would (OASIS_PORTFOLIO=1), @solo never")
    r.add_argument("--unlimited", action="store_true",
                   help="the default route without a time limit (the comparator keeps "
                        "--limit); leave out instances nobody proves (--only)")
    r.add_argument("--out", required=True)
    t = sub.add_parser("table", help="the per-family table of a results file")
    t.add_argument("results", nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "table":
        records = [json.loads(line) for f in args.results for line in open(f) if line.strip()]
        print(table(records))
        return
    only = set(filter(None, args.only.split(",")))
    k = 0
    for fam in args.families.split(","):
        for inst in instances(fam, args.seeds):
            if only and inst.name not in only:
                continue
            recs = side_by_side(inst, k, limit=args.limit,
                                variants=tuple(args.variants.split(",")),
                                unlimited=args.unlimited)
            k += 1
            for rec in recs:
                rec.update(family=fam, features=features(inst), unlimited=args.unlimited)
                with open(args.out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(f"{fam:10s} {inst.name:22s} {rec['variant']:8s} "
                      f"{rec['default']['wall']:6.1f} s ({rec['default']['status']}, "
                      f"{rec['default']['route']}) comparator {rec['comparator']['wall']:6.1f} s "
                      f"({rec['comparator']['status']}) ratio {rec['ratio']:.2f} "
                      f"load {rec['load']:.1f}", flush=True)


#: Quick mode (``OASIS_BENCH_QUICK=1``, CI): one instance of the families that prove in
#: seconds, and hard-mix-05; `hard` is bench_solver.py's, `ps-light`-s0 takes ~30 s.
QUICK_CASES = [(fam, 0) for fam in ("mixed", "mixed-2r", "uniform-1r", "loose", "ps-heavy",
                                    "trace")] + [("hard-mix", 4)]


def _cases() -> list[tuple[str, int]]:
    if QUICK:
        return QUICK_CASES
    return [(fam, k) for fam in FAMILIES for k in range(14 if fam == "hard-mix" else 3)]


@pytest.mark.parametrize(("family", "index"), _cases())
def test_family_side_by_side(benchmark, family, index):
    """One instance of one family: the default route (timed by pytest-benchmark) and the
    comparator; when both prove, their optima agree."""
    insts = list(instances(family, 3))
    if index >= len(insts):
        pytest.skip("no such instance")
    inst = insts[index]
    (rec,) = benchmark.pedantic(side_by_side, args=(inst, index), rounds=1, iterations=1)
    # the timed figure is both sides together; extra_info["ratio"] is the one to read
    benchmark.extra_info.update(family=family, **{k: v for k, v in rec.items()
                                                 if k != "instance"}, instance=inst.name,
                                jobs=inst.num_jobs, horizon=inst.horizon,
                                status=rec["default"]["status"])
    a, b = rec["default"], rec["comparator"]
    assert a["bound"] >= a["utility"] - 1e-6 * max(1.0, a["utility"])
    if a["status"] == "optimal" and b["status"] == "Optimal":
        assert abs(a["utility"] - b["utility"]) <= 1e-4 * max(1.0, a["utility"])


if __name__ == "__main__":
    main()
