"""HiGHS alone over random seeds (issue 22, round 8): the model the default route hands to
HiGHS (its planned ``Prep``, the lazy floor's best schedule as MIP start, the route's HiGHS
settings) against the comparator (``direct_highspy``), each at HiGHS ``random_seed`` 0…S−1,
one thread, CPU seconds of ``Highs.run`` only. A single seed cannot tell a better model from
a lucky draw (docs/offline-journal.md, round 6); the median over seeds, and the mean over
seed pairs of min(Pa, Pb) (what the two-core seed race gets), can.

Variants (``--variants``): ``comparator``, ``route`` (as the route runs it), and ``route+K=V``
with HiGHS options on top (``route+mip_pscost_minreliable=4``; several joined by ``,``
inside one ``--variants`` entry are not supported — use ``;``). A key ``opt.NAME`` sets the
field NAME of the route's ``Options`` instead (``route+opt.energy_rows=true``: the planned
model with those rows, prepared again; issue 22 round 9). A key ``start`` sets the MIP
start: ``floor`` (the default, as the route), ``opt`` (the instance's optimal schedule from
one untimed route solve first) or ``none`` (issue 22 round 10). The planning and the HiGHS
set-up are the route's own functions (``compact.route_prep``, ``plan.plan_route``,
``backends.highspy_mip``), so a run measures what the route runs, its callbacks included.
Each record lists its improving incumbents (CPU s, objective); ``anatomy`` compares when the
final one was found with the whole run, and the floor's start with the optimal one;
``--log DIR`` keeps HiGHS's log of each route run (whether presolve kept the start).
``race`` and ``race+share=true`` run the route's race itself (``plan.racers``, forced on)
at HiGHS seeds (2·S, 2·S + 1), without and with shared incumbents: CPU of all processes.

    python benchmarks/seed_alone.py run --only mixed-s0,hard-mix-07 --seeds 0-4 \\
        --variants comparator,route,route+mip_lp_age_limit=20 --out alone.jsonl
    python benchmarks/seed_alone.py table alone.jsonl
    python benchmarks/seed_alone.py run --only mixed-s1 --variants route,route+start=opt \\
        --log logs --out anatomy.jsonl
    python benchmarks/seed_alone.py anatomy anatomy.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bench_families  # noqa: E402
import direct_highspy  # noqa: E402

from oasis_opt.generator import generate  # noqa: E402
from oasis_opt.io import load_instance  # noqa: E402
from oasis_opt.model import Instance  # noqa: E402


def load(name: str) -> Instance:
    """``family-sN`` (a generated family at seed N) or ``hard-mix-…`` (the shared file)."""
    if name.startswith("hard-mix"):
        return load_instance(bench_families.HARD_MIX / f"{name}.json")
    family, _, seed = name.rpartition("-s")
    return generate(family, seed=int(seed))


def route_model(instance: Instance) -> tuple[Any, Any]:
    """(prep, start): the route's planned model and the lazy floor's best schedule, as
    ``solve(instance, time_limit=60)`` hands them to HiGHS: the route's own functions
    (``Floor.run(FLOOR_FIRST)``, ``compact.route_prep``, ``plan.plan_route``)."""
    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.compact import route_prep
    from oasis_opt.offline.floor import FLOOR_FIRST, Floor, floor_names, floor_time_share
    from oasis_opt.offline.plan import plan_route
    clock = Clock(60.0)
    floor = Floor(instance, Tracker(clock, None), floor_names(None), clock,
                  floor_time_share(instance))
    best = floor.run(FLOOR_FIRST)
    prep, _ = plan_route(route_prep(instance, None, best), "auto", clock, "highs")
    return prep, best


def optimum(prep: Any, start: Any, limit: float) -> Any:
    """The optimal schedule of ``prep``'s model: one untimed route solve
    (``backends.solve_highspy`` at HiGHS seed 0 from ``start``, gap 0), extracted as the
    route extracts it; the ``start=opt`` variants' MIP start."""
    from oasis_opt.offline import backends
    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.report import SolveStatus, extract
    clock = Clock(limit)
    raw = backends.solve_highspy(prep, clock, Tracker(clock, None), 0.0, 0, start)
    if raw.status is not SolveStatus.OPTIMAL:
        raise SystemExit(f"{prep.instance.name}: no optimum in {limit} s ({raw.status})")
    return extract(prep, raw)


def parse_options(variant: str) -> dict[str, Any]:
    """``route+a=1;b=x`` → {a: 1, b: 'x'} (ints, floats, true/false as such)."""
    out: dict[str, Any] = {}
    _, _, tail = variant.partition("+")
    for item in filter(None, tail.split(";")):
        key, _, raw = item.partition("=")
        value: Any = raw
        if raw in ("true", "false"):
            value = raw == "true"
        else:
            for cast in (int, float):
                try:
                    value = cast(raw)
                    break
                except ValueError:
                    pass
        out[key] = value
    return out


def with_options(prep: Any, opts: dict[str, Any]) -> Any:
    """``prep`` prepared again with the ``opt.NAME`` entries of ``opts`` set on its
    ``Options`` (the same prep where there are none)."""
    from dataclasses import replace

    from oasis_opt.formulations.common import prepare
    fields = {k[4:]: v for k, v in opts.items() if k.startswith("opt.")}
    return prepare(prep.instance, replace(prep.options, **fields)) if fields else prep


def timed_run(h: Any, log: Path | None = None) -> dict[str, Any]:
    """Run a prepared ``Highs``: CPU seconds of ``run`` alone, status, objective, nodes, and
    every improving incumbent as (CPU s since the run started, objective) in ``improving``.
    With ``log``, HiGHS's log goes to that file and its lines about the MIP start to
    ``start_log`` (whether presolve kept the start: docs/performance.md, round 8)."""
    if log is not None:
        h.setOptionValue("log_file", str(log))
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("output_flag", True)
    improving: list[tuple[float, float]] = []
    c, w = time.process_time(), time.perf_counter()
    h.cbMipImprovingSolution.subscribe(lambda e: improving.append(
        (round(time.process_time() - c, 4), float(e.data_out.objective_function_value))))
    h.run()
    cpu, wall = time.process_time() - c, time.perf_counter() - w
    info = h.getInfo()
    rec = {"cpu": cpu, "wall": wall, "status": h.modelStatusToString(h.getModelStatus()),
           "objective": float(info.objective_function_value),
           "nodes": int(info.mip_node_count), "rows": h.getNumRow(), "improving": improving}
    if log is not None:
        h.setOptionValue("output_flag", False)
        rec["start_log"] = [line.strip() for line in log.read_text().splitlines()
                            if "start" in line.lower() or "reduced space" in line.lower()]
    return rec


def run_route(prep: Any, start: Any, seed: int, extra: dict[str, Any],
              limit: float, log: Path | None = None) -> dict[str, Any]:
    """HiGHS on the route's model exactly as ``backends.solve_highspy`` sets it up
    (``backends.highspy_mip``: one thread, gap 0, ``mip_options``, the start, the progress
    and deadline callbacks), with ``extra`` HiGHS options on top."""
    from oasis_opt.formulations import compact_highspy

    from oasis_opt.offline import backends
    from oasis_opt.offline.clock import Clock, Tracker
    m = compact_highspy.build(prep.instance, prep=prep)
    clock = Clock(limit)
    h = backends.highspy_mip(m, clock, Tracker(clock, None), 0.0, seed, start)
    for k, v in extra.items():
        h.setOptionValue(k, v)
    return timed_run(h, log)


def run_race(prep: Any, start: Any, seed: int, share: bool, limit: float,
             extra: dict[str, Any]) -> dict[str, Any]:
    """The route's race (``plan.racers``, the second racer ``plan.RACE_DELAY`` later, the
    floor's start) at the HiGHS seed pair (2·seed, 2·seed + 1) offset from the racers' own
    seeds, forced on, with or without sharing incumbents (issue 22 round 10), ``extra``
    HiGHS options in both racers: CPU seconds of this process and of both racers (reaped
    children), wall seconds."""
    import resource

    from oasis_opt.formulations.common import prepare

    from oasis_opt.offline import backends, race
    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.plan import RACE_DELAY, racers
    pairs = racers(prep)
    variants = [prep] + [prep if o == prep.options else prepare(prep.instance, o)
                         for o, _ in pairs[1:]]
    seeds = [s + 2 * seed for _, s in pairs]

    def children() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    clock = Clock(limit)
    own = backends.mip_options  # the racers are forked: they inherit the patch
    backends.mip_options = lambda p: {**own(p), **extra}
    try:
        kids, c, w = children(), time.process_time(), time.perf_counter()
        raw = race.solve_portfolio(variants, seeds, clock, Tracker(clock, None), 0.0, start,
                                   [0.0] + [RACE_DELAY] * (len(pairs) - 1), share=share)
    finally:
        backends.mip_options = own
    wall = time.perf_counter() - w
    cpu = time.process_time() - c + children() - kids
    return {"cpu": cpu, "wall": wall, "status": "Optimal" if raw.status.name == "OPTIMAL"
            else raw.status.name, "objective": raw.objective, "seeds": seeds,
            **{k: v for k, v in raw.extras.items()}}


def run_comparator(instance: Instance, seed: int, limit: float) -> dict[str, Any]:
    """The comparator's model at HiGHS seed ``seed`` (its own 1e-4 gap, one thread)."""
    h = direct_highspy.build(instance)
    h.setOptionValue("random_seed", seed)
    h.setOptionValue("time_limit", limit)
    return timed_run(h)


def seeds_of(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def cmd_run(args: argparse.Namespace) -> None:
    from oasis_opt.formulations.common import PLAIN
    variants = args.variants.split(",")
    logs = Path(args.log) if args.log else None
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as out:
        for name in args.only.split(","):
            instance = load(name)
            prep, floor = route_model(instance)
            preps = {v: with_options(prep, parse_options(v)) for v in variants}
            wanted = {parse_options(v).get("start", "floor") for v in variants}
            starts = {"floor": floor, "none": None}
            if "opt" in wanted:
                starts["opt"] = optimum(prep, floor, args.limit)
            for seed in seeds_of(args.seeds):
                # rotate the variants per seed: a change of load hurts none of them more
                k = seed % len(variants)
                for variant in variants[k:] + variants[:k]:
                    opts = parse_options(variant)
                    start = starts[opts.pop("start", "floor")]
                    highs = {key: v for key, v in opts.items() if not key.startswith("opt.")}
                    log = None if logs is None else logs / f"{name}-{seed}-{variant}.log"
                    if log is not None and log.exists():
                        log.unlink()  # HiGHS appends
                    if variant == "comparator":
                        rec = run_comparator(instance, seed, args.limit)
                    elif variant.startswith("race"):
                        share = bool(highs.pop("share", False))
                        rec = run_race(prep, floor, seed, share, args.limit, highs)
                    else:
                        rec = run_route(preps[variant], start, seed, highs, args.limit, log)
                    rec.update(instance=name, seed=seed, variant=variant,
                               route="plain" if prep.options == PLAIN else prep.packing)
                    if start is not None:
                        rec["start"] = start.total_utility
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    print(name, seed, variant, f"{rec['cpu']:.2f}", rec["status"],
                          f"{rec['objective']:.4f}", f"found {found_at(rec):.2f}", flush=True)


def found_at(rec: dict[str, Any]) -> float:
    """CPU seconds into the run at which its final incumbent was found: the first improving
    solution within 1e-6 of the final objective (0 where none improved on the start)."""
    final = rec["objective"]
    return next((t for t, obj in rec.get("improving", [])
                 if abs(obj - final) <= 1e-6 * max(1.0, abs(final))), 0.0)


def pair_min(values: list[float]) -> float:
    """Mean over unordered seed pairs of min(Pa, Pb): the seed race's expected CPU."""
    pairs = list(itertools.combinations(values, 2))
    return statistics.fmean(min(a, b) for a, b in pairs) if pairs else values[0]


def cmd_table(args: argparse.Namespace) -> None:
    seen: dict[tuple[str, str, int], dict[str, Any]] = {}
    for line in (line for f in args.files for line in open(f)):
        r = json.loads(line)  # a run resumed after a stop repeats a seed: the first counts
        seen.setdefault((r["instance"], r["variant"], r["seed"]), r)
    recs = list(seen.values())
    names = list(dict.fromkeys(r["instance"] for r in recs))
    variants = list(dict.fromkeys(r["variant"] for r in recs))
    print("| instance | route | " + " | ".join(
        f"{v} median [per seed] / pair-min" for v in variants) + " |")
    print("| --- | --- |" + " --- |" * len(variants))
    totals: dict[str, list[float]] = {v: [] for v in variants}
    for name in names:
        cells, route = [], ""
        for v in variants:
            rs = sorted((r for r in recs if r["instance"] == name and r["variant"] == v),
                        key=lambda r: r["seed"])
            if not rs:
                cells.append("–")
                continue
            route = rs[0]["route"] if v != "comparator" else route
            cpu = [r["cpu"] for r in rs]
            totals[v].append(statistics.median(cpu))
            cells.append(f"{statistics.median(cpu):.2f} [{' '.join(f'{c:.1f}' for c in cpu)}]"
                         f" / {pair_min(cpu):.2f}")
        print(f"| {name} | {route} | " + " | ".join(cells) + " |")
    print("| sum of medians | | " + " | ".join(f"{sum(totals[v]):.1f}" for v in variants)
          + " |")
    objs: dict[tuple[str, int], set[float]] = {}
    for r in recs:
        if r["status"] == "Optimal":
            objs.setdefault((r["instance"], r["seed"]), set()).add(round(r["objective"], 3))
    bad = {k: v for k, v in objs.items() if max(v) - min(v) > 1e-3 * max(1.0, max(v))}
    print("optima disagree:", bad or "none")


def cmd_anatomy(args: argparse.Namespace) -> None:
    """Per instance, the ``--base`` variant (the floor's start) against ``--opt`` (the
    optimum as start): median CPU s over seeds, when the base found its final incumbent
    (median CPU s, and its share of the base's CPU summed over seeds), median nodes, and
    the saving of the optimal start: the incumbent side's upper bound (issue 22 round 10)."""
    seen: dict[tuple[str, str, int], dict[str, Any]] = {}
    for line in (line for f in args.files for line in open(f)):
        r = json.loads(line)
        seen.setdefault((r["instance"], r["variant"], r["seed"]), r)
    names = list(dict.fromkeys(k[0] for k in seen))
    print("| instance | floor start: CPU s median [per seed] | final incumbent found at: "
          "median s [per seed] | share of CPU | nodes | optimal start: CPU s median "
          "[per seed] | nodes | saved (sum) | faster on seeds |")
    print("| --- |" + " --- |" * 8)
    tb = to = 0.0
    faster = 0
    for name in names:
        base = [seen[k] for k in sorted(seen) if k[0] == name and k[1] == args.base]
        opt = {k[2]: seen[k] for k in seen if k[0] == name and k[1] == args.opt}
        if not base or not opt:
            continue
        pairs = [(b, opt[b["seed"]]) for b in base if b["seed"] in opt]
        cb = [b["cpu"] for b, _ in pairs]
        co = [o["cpu"] for _, o in pairs]
        found = [found_at(b) for b, _ in pairs]
        sb, so = sum(cb), sum(co)
        tb, to = tb + sb, to + so
        med = statistics.median
        wins = sum(o < b for b, o in zip(cb, co, strict=True))
        faster += med(co) < med(cb)
        print(f"| {name} | {med(cb):.2f} [{' '.join(f'{c:.1f}' for c in cb)}] | "
              f"{med(found):.2f} [{' '.join(f'{c:.1f}' for c in found)}] | "
              f"{sum(found) / sb:.0%} | {med([b['nodes'] for b, _ in pairs]):.0f} | "
              f"{med(co):.2f} [{' '.join(f'{c:.1f}' for c in co)}] | "
              f"{med([o['nodes'] for _, o in pairs]):.0f} | {1 - so / sb:.0%} | "
              f"{wins} of {len(pairs)} |")
    print(f"| sum | {tb:.1f} | | | | {to:.1f} | | {1 - to / tb:.0%} | "
          f"median faster on {faster} of {len(names)} |")


def cmd_races(args: argparse.Namespace) -> None:
    """Per instance, the race without and with shared incumbents (``--base``, ``--share``):
    median CPU s of all processes and median wall s over seed pairs, schedules posted by the
    parent and handed over / accepted in the winning racer (summed over pairs)."""
    seen: dict[tuple[str, str, int], dict[str, Any]] = {}
    for line in (line for f in args.files for line in open(f)):
        r = json.loads(line)
        seen.setdefault((r["instance"], r["variant"], r["seed"]), r)
    names = list(dict.fromkeys(k[0] for k in seen))
    med = statistics.median
    print("| instance | CPU s race [per pair] | CPU s sharing [per pair] | wall s race / "
          "sharing (median) | posted / handed over / accepted in the winner |")
    print("| --- |" + " --- |" * 4)
    sums = [0.0, 0.0, 0.0, 0.0]
    lower = 0
    for name in names:
        a = [seen[k] for k in sorted(seen) if k[0] == name and k[1] == args.base]
        b = {k[2]: seen[k] for k in seen if k[0] == name and k[1] == args.share}
        pairs = [(r, b[r["seed"]]) for r in a if r["seed"] in b]
        if not pairs:
            continue
        ca, cb = [r["cpu"] for r, _ in pairs], [r["cpu"] for _, r in pairs]
        wa, wb = [r["wall"] for r, _ in pairs], [r["wall"] for _, r in pairs]
        sums = [sums[0] + med(ca), sums[1] + med(cb), sums[2] + med(wa), sums[3] + med(wb)]
        lower += med(cb) < med(ca)
        posted = sum(r.get("shared", 0) for _, r in pairs)
        handed = sum(r.get("received", 0) for _, r in pairs)
        took = sum(r.get("accepted", 0) for _, r in pairs)
        print(f"| {name} | {med(ca):.2f} [{' '.join(f'{c:.1f}' for c in ca)}] | "
              f"{med(cb):.2f} [{' '.join(f'{c:.1f}' for c in cb)}] | "
              f"{med(wa):.2f} / {med(wb):.2f} | {posted} / {handed} / {took} |")
    print(f"| sum of medians | {sums[0]:.1f} | {sums[1]:.1f} | {sums[2]:.1f} / {sums[3]:.1f} "
          f"| sharing lower CPU on {lower} of {len(names)} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--only", required=True)
    r.add_argument("--seeds", default="0-4")
    r.add_argument("--variants", default="comparator,route")
    r.add_argument("--limit", type=float, default=60.0)
    r.add_argument("--out", required=True)
    r.add_argument("--log", help="a folder for HiGHS's log of each route run")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    a = sub.add_parser("anatomy")
    a.add_argument("files", nargs="+")
    a.add_argument("--base", default="route")
    a.add_argument("--opt", default="route+start=opt")
    c = sub.add_parser("races")
    c.add_argument("files", nargs="+")
    c.add_argument("--base", default="race")
    c.add_argument("--share", default="race+share=true")
    args = p.parse_args()
    {"run": cmd_run, "table": cmd_table, "anatomy": cmd_anatomy, "races": cmd_races}[
        args.cmd](args)


if __name__ == "__main__":
    main()
