"""HiGHS alone over random seeds (issue 22, round 8): the model the default route hands to
HiGHS (its planned ``Prep``, the lazy floor's best schedule as MIP start, the route's HiGHS
settings) against the comparator (``direct_highspy``), each at HiGHS ``random_seed`` 0…S−1,
one thread, CPU seconds of ``Highs.run`` only. A single seed cannot tell a better model from
a lucky draw (docs/offline.md, round 6); the median over seeds, and the mean over seed pairs
of min(Pa, Pb) (what the two-core seed race gets), can.

Variants (``--variants``): ``comparator``, ``route`` (as the route runs it), and ``route+K=V``
with HiGHS options on top (``route+mip_pscost_minreliable=4``; several joined by ``,``
inside one ``--variants`` entry are not supported — use ``;``). A key ``opt.NAME`` sets the
field NAME of the route's ``Options`` instead (``route+opt.energy_rows=true``: the planned
model with those rows, prepared again; issue 22 round 9).

    python benchmarks/seed_alone.py run --only mixed-s0,hard-mix-07 --seeds 0-4 \\
        --variants comparator,route,route+mip_lp_age_limit=20 --out alone.jsonl
    python benchmarks/seed_alone.py table alone.jsonl
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
    ``solve(instance, time_limit=60)`` hands them to HiGHS."""
    from oasis_opt.formulations.common import prepare

    from oasis_opt.offline.clock import Clock, Tracker
    from oasis_opt.offline.floor import FLOOR_FIRST, Floor, floor_names, floor_time_share
    from oasis_opt.offline.plan import plan_route, route_options, settle_fallback
    clock = Clock(60.0)
    floor = Floor(instance, Tracker(clock, None), floor_names(None), clock,
                  floor_time_share(instance))
    best = floor.run(FLOOR_FIRST)
    prep = settle_fallback(prepare(instance, route_options(
        instance, None if best is None else best.total_utility)))
    prep, _ = plan_route(prep, "auto", clock, "highs")
    return prep, best


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


def timed_run(h: Any) -> dict[str, Any]:
    """Run a prepared ``Highs``: CPU seconds of ``run`` alone, status, objective, nodes."""
    c = time.process_time()
    h.run()
    cpu = time.process_time() - c
    info = h.getInfo()
    return {"cpu": cpu, "status": h.modelStatusToString(h.getModelStatus()),
            "objective": float(info.objective_function_value), "nodes": int(info.mip_node_count),
            "rows": h.getNumRow()}


def run_route(prep: Any, start: Any, seed: int, extra: dict[str, Any],
              limit: float) -> dict[str, Any]:
    """HiGHS on the route's model as ``backends.solve_highspy`` sets it up (one thread, gap
    0, ``mip_options``, the start), with ``extra`` options on top."""
    import highspy
    from oasis_opt.formulations import compact_highspy
    from oasis_opt.formulations.highs import mip_options, new_highs
    m = compact_highspy.build(prep.instance, prep=prep)
    h = new_highs()
    opts = {"threads": 1, "mip_rel_gap": 0.0, "random_seed": seed, "time_limit": limit,
            **mip_options(prep), **extra}
    for k, v in opts.items():
        h.setOptionValue(k, v)
    h.passModel(m.lp())
    x = compact_highspy.start_vector(m, start) if start is not None else None
    if x is not None:
        sol = highspy.HighsSolution()
        sol.col_value = x.tolist()
        sol.value_valid = True
        h.setSolution(sol)
    return timed_run(h)


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
    with open(args.out, "a") as out:
        for name in args.only.split(","):
            instance = load(name)
            prep, start = route_model(instance)
            preps = {v: with_options(prep, parse_options(v)) for v in variants}
            for seed in seeds_of(args.seeds):
                # rotate the variants per seed: a change of load hurts none of them more
                k = seed % len(variants)
                for variant in variants[k:] + variants[:k]:
                    highs = {key: v for key, v in parse_options(variant).items()
                             if not key.startswith("opt.")}
                    rec = run_comparator(instance, seed, args.limit) if variant == "comparator" \
                        else run_route(preps[variant], start, seed, highs, args.limit)
                    rec.update(instance=name, seed=seed, variant=variant,
                               route="plain" if prep.options == PLAIN else prep.packing)
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    print(name, seed, variant, f"{rec['cpu']:.2f}", rec["status"],
                          f"{rec['objective']:.4f}", flush=True)


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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--only", required=True)
    r.add_argument("--seeds", default="0-4")
    r.add_argument("--variants", default="comparator,route")
    r.add_argument("--limit", type=float, default=60.0)
    r.add_argument("--out", required=True)
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    args = p.parse_args()
    cmd_run(args) if args.cmd == "run" else cmd_table(args)


if __name__ == "__main__":
    main()
