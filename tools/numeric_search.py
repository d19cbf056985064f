"""Search small instances with extreme numbers for exact answers that are wrong.

Run ``python tools/numeric_search.py FIRST LAST [--routes compact,colgen,limited]
[--budget SECONDS] [--out DIR]``: for each seed in [FIRST, LAST) a random instance whose
capacities and demands span 1e-9 … 1e15 within a pool, with quotients a float cannot hold
(1/7, 1 − 1e-9, 0.33333334) and PS ratios below 1, is solved on each route and compared
with the best of the five online schedules (each one validated): a schedule called optimal
below it, or a bound below it, is wrong, and so is an exception on a valid instance. Routes:

- ``compact``: the compact MILP through highspy and through PuLP without a floor
  (``floor=()``: no online schedule guards the proof), and through highspy with it;
- ``colgen``: ``method="colgen"``, 3 s;
- ``limited``: the default route with a 4 s limit (the race and the guard).

Each failure is one JSON line on stdout (seed, route, what was found, the best online
utility) and its instance is written to ``DIR/n<seed>.json``. Not a test: the defects it
found are pinned in ``tests/test_tolerance.py`` (``tests/numeric_cases.json``); round 26 found
seven (docs/offline.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

SCALES = (1e-9, 1e-6, 1e-3, 1.0, 1.0, 1.0, 1e3, 1e6, 1e9, 1e12, 1e15)
SHARES = (0, 1, 1, 1 / 7, 1 - 1e-9, 1 + 1e-9, 0.5, 2 / 7, 1 / 3, 0.33333334, 1e-9, 2, 0.999999)
ONLINE = ("fifo", "drf", "tetris", "oasis", "rrh")


def instance(seed: int) -> dict[str, Any]:
    """One random ``oasis-instance/1`` dict (it may break SPEC §5's limits: then it is
    skipped)."""
    rng = random.Random(seed)
    resources = rng.randint(1, 3)
    horizon = rng.randint(1, 6)
    scale = [rng.choice(SCALES) for _ in range(resources)]

    def vector() -> list[float]:
        return [min(1e15, rng.choice(SHARES) * scale[r]) for r in range(resources)]

    def servers(prefix: str) -> list[dict[str, Any]]:
        return [{"name": f"{prefix}{g}", "capacity": vector(), "count": rng.randint(1, 3)}
                for g in range(rng.randint(1, 2))]

    def utility() -> dict[str, Any]:
        kind = rng.randint(0, 3)
        if kind == 0:
            return {"kind": "sigmoid", "gamma1": rng.uniform(0, 100),
                    "gamma2": rng.uniform(0, 5), "gamma3": rng.uniform(-5, 10)}
        if kind == 1:
            return {"kind": "table", "values": sorted(
                (rng.uniform(0, 50) for _ in range(rng.randint(0, 7))), reverse=True)}
        if kind == 2:
            return {"kind": "deadline", "value": rng.uniform(0, 50),
                    "deadline": rng.randint(1, 8)}
        return {"kind": "linear", "value": rng.uniform(0, 50), "decay": rng.uniform(0, 10)}

    jobs = []
    for i in range(rng.randint(1, 4)):
        most = rng.randint(1, 4)
        jobs.append({"id": f"j{i}", "arrival": rng.randint(0, horizon - 1),
                     "workload": rng.randint(1, 8), "max_workers": most,
                     "ps_ratio": rng.choice([1, 2, 3, 1.5, 2 / 3, 0.5]),
                     "worker_demand": vector(), "ps_demand": vector(),
                     "requested_workers": rng.randint(1, most), "utility": utility()})
    return {"format": "oasis-instance/1", "name": f"n{seed}", "horizon": horizon,
            "resources": [f"r{k}" for k in range(resources)],
            "worker_servers": servers("w"), "ps_servers": servers("p"), "jobs": jobs}


def solves(route: str) -> list[tuple[str, dict[str, Any]]]:
    """(label, keywords of ``offline.solve``) of a route."""
    if route == "compact":
        return [("highspy-nofloor", {"modeler": "highspy", "floor": ()}),
                ("pulp-nofloor", {"modeler": "pulp", "floor": ()}),
                ("highspy", {"modeler": "highspy"})]
    if route == "colgen":
        return [("colgen", {"method": "colgen", "floor": (), "time_limit": 3})]
    if route == "limited":
        return [("limited", {"time_limit": 4})]
    raise SystemExit(f"unknown route {route!r}: choose from compact, colgen, limited")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("first", type=int)
    p.add_argument("last", type=int)
    p.add_argument("--routes", default="compact")
    p.add_argument("--budget", type=float, default=None, help="stop after this many seconds")
    p.add_argument("--out", default="numeric-search", help="folder for failing instances")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    from oasis_opt import algorithms
    from oasis_opt.errors import InputError
    from oasis_opt.io import instance_from_dict
    from oasis_opt.offline import SolveStatus, solve

    runs = [s for r in args.routes.split(",") for s in solves(r)]
    out = Path(args.out)
    start, tried, failed = time.perf_counter(), 0, 0
    for seed in range(args.first, args.last):
        if args.budget is not None and time.perf_counter() - start > args.budget:
            break
        data = instance(seed)
        try:
            inst = instance_from_dict(data)
        except InputError:
            continue  # outside SPEC §5's limits
        tried += 1
        best = max(algorithms.run(a, inst).total_utility for a in ONLINE)
        below = best - 1e-6 * max(1.0, best)
        for label, kwargs in runs:
            try:
                schedule, report = solve(inst, **kwargs)
                wrong = (report.status is SolveStatus.OPTIMAL and schedule.total_utility < below) \
                    or (report.bound is not None and report.bound < below)
                found: Any = {"utility": schedule.total_utility, "bound": report.bound,
                              "status": report.status.value}
            except Exception as exc:  # noqa: BLE001 (every failure is a finding)
                wrong, found = True, f"{type(exc).__name__}: {exc}"[:300]
            if wrong:
                failed += 1
                out.mkdir(parents=True, exist_ok=True)
                (out / f"n{seed}.json").write_text(json.dumps(data))
                print(json.dumps({"seed": seed, "route": label, "found": found,
                                  "best_online": best}), flush=True)
    print(json.dumps({"instances": tried, "failures": failed,
                      "seconds": round(time.perf_counter() - start, 1)}), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
