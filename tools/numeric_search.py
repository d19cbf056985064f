"""Search small random instances for exact answers that are wrong.

Run ``python tools/numeric_search.py FIRST LAST [--mode extreme|ordinary|tiny]
[--routes compact,colgen,limited] [--budget SECONDS] [--out DIR]``. For each seed in
[FIRST, LAST) one random instance of the mode is solved on each route:

- ``extreme`` (the default; round 26): capacities and demands span 1e-9 … 1e15 within a
  pool, with quotients a float cannot hold (1/7, 1 − 1e-9, 0.33333334) and PS ratios below 1;
- ``ordinary``: the numbers of a real cluster (capacities 4, 8, 32 …, demands 0.5, 1, 2 …,
  several server shapes per pool, PS ratios 0.5 … 4, sigmoid, table, deadline and linear
  utilities), 2–7 jobs over 3–8 slots;
- ``tiny``: what ``tests/bruteforce.py`` enumerates (1–3 jobs, 1–2 servers per pool, horizon
  ≤ 4, workloads ≤ 6, few enough allocations per slot), half of them with ordinary numbers,
  half with the extreme ones.

Routes (each a list of ``offline.solve`` calls):

- ``compact``: the compact MILP through highspy, PuLP and Pyomo (where installed) without a
  floor (``floor=()``: no online schedule guards the proof), and through highspy with it;
- ``colgen``: ``method="colgen"``, 3 s;
- ``limited``: the default route with a 4 s limit (the race and the guard).

The references. A schedule fits *strictly* when no server's load passes its capacity by more
than 1e-12 of it (float noise), and *loosely* when it stays within the validator's 1e-9·C
(``model.CAP_TOL``); between the two lie the MILP's rows (``C·(1 + 5e-10)``, docs/offline.md),
so an optimum proven there may be anywhere between the strict and the loose optimum.

- every mode: the best of the five online schedules (each validated) and every schedule the
  routes return are lower bounds on the optimum. A route that calls a schedule optimal which
  earns less (by more than 1e-6 relative) than one of them, or gives a bound below one of
  them, is wrong, and so is an exception on a valid instance. Two proven optima that differ
  are caught so: the lower one is below the other's schedule.
- ``tiny`` also: brute force gives the loose optimum (``best_utility``, the validator's
  tolerance) and the strict one (the same on capacities shrunk to ``C·(1 + 1e-12)`` in the
  validator's eyes). A proven optimum outside [strict, loose], a bound below the strict
  optimum or any schedule above the loose one is wrong (beyond 1e-6 relative); so is a
  brute force below an online schedule (``route: bruteforce``: the reference is broken).

A finding that only a schedule loaded past ``C·(1 + 1e-12)`` or the loose optimum shows is
reported with ``"kind": "boundary"`` (with that schedule's ``overload``, relative to the
capacity): the model allows it (the rows' slack is not the validator's), so it is a note, not
a failure; ``"kind": "disagreement"`` where that schedule is another route's proven optimum
(two routes prove different optima: they read the validator's margin differently), a note
for the lead to weigh. Each finding is one JSON line on stdout (mode, seed, route, what was
claimed, the reference) and its instance is written to ``DIR/<name>.json`` (name
``n<seed>``, ``o<seed>`` or ``t<seed>``: the generator of the mode remakes it from the
seed); the counts of instances per kind and route go to stderr at the end, and the exit status is 1
when anything failed.

``python tools/numeric_search.py --minimise FILE --route LABEL [--what W] [--against L2]
[--mode M] [--out DIR]`` drops jobs, servers, slots, resources and work from a failing
instance while LABEL (e.g. ``pulp-nofloor``) still fails on it the same way (its ``W``:
optimum, bound, schedule or exception; judged as in mode M: ``tiny`` compares with brute
force; with ``--against``, a disagreement with route L2 counts), and writes the smallest one
to ``DIR/<name>-min.json``.

Not a test: the defects it found are pinned in ``tests/test_tolerance.py``
(``tests/numeric_cases.json``); round 26 found seven, round 37 three more: r25834 (the
patterns' fit test) and the solver's own r18551 and r46354 (docs/offline.md). Round 37's
runs after the fixes found none in about 89 000 instances of the three modes on every route.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

SCALES = (1e-9, 1e-6, 1e-3, 1.0, 1.0, 1.0, 1e3, 1e6, 1e9, 1e12, 1e15)
SHARES = (0, 1, 1, 1 / 7, 1 - 1e-9, 1 + 1e-9, 0.5, 2 / 7, 1 / 3, 0.33333334, 1e-9, 2, 0.999999)
#: capacities of ``tiny``'s extreme instances, in the units of a resource's scale
CAP_SHARES = (1, 1, 2, 3, 1 - 1e-9, 1 + 1e-9, 0.999999, 1 / 7, 2 / 7, 0.33333334 * 3)
ONLINE = ("fifo", "drf", "tetris", "oasis", "rrh")
#: relative tolerance of utilities (SPEC §2)
REL = 1e-6
#: a load up to this far past its capacity (relative) is float noise: the strict fit
STRICT = 1e-12
#: brute force's slot enumeration grows as Π_i (N_i+1)^H·(⌈N_i/γ_i⌉+1)^K: at most this many
TINY_ENUM = 20_000
MODES = ("extreme", "ordinary", "tiny")


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
        return _utility(rng)

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


def _utility(rng: random.Random) -> dict[str, Any]:
    """A random utility of one of the four families (the draws of ``instance``)."""
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


#: ordinary numbers per resource: (capacities, worker demands, PS demands)
ORDINARY = {"gpu": ((1, 2, 4, 8), (0, 0.5, 1, 1, 2), (0, 0, 0, 1)),
            "cpu": ((4, 8, 16, 32), (0.5, 1, 2, 4), (0.5, 1, 2)),
            "mem_gb": ((8, 16, 32, 64, 128), (1, 2, 4, 8, 16), (1, 2, 4, 8))}


def ordinary(seed: int) -> dict[str, Any]:
    """An instance with the numbers of a real cluster: 1–3 resources, 1–3 worker server
    shapes and 1–2 PS shapes of 1–3 servers each, 2–7 jobs over 3–8 slots."""
    rng = random.Random(seed)
    names = ["gpu", "cpu", "mem_gb"][:rng.randint(1, 3)]

    def servers(prefix: str, shapes: int) -> list[dict[str, Any]]:
        return [{"name": f"{prefix}{g}", "count": rng.randint(1, 3),
                 "capacity": [rng.choice(ORDINARY[r][0]) for r in names]}
                for g in range(rng.randint(1, shapes))]

    horizon = rng.randint(3, 8)
    jobs = []
    for i in range(rng.randint(2, 7)):
        most = rng.randint(1, 6)
        wd = [rng.choice(ORDINARY[r][1]) for r in names]
        if not any(wd):
            wd[0] = 1
        jobs.append({"id": f"j{i}", "arrival": rng.randint(0, horizon - 1),
                     "workload": rng.randint(1, 20), "max_workers": most,
                     "ps_ratio": rng.choice([0.5, 1, 1.5, 2, 3, 4]),
                     "worker_demand": wd,
                     "ps_demand": [rng.choice(ORDINARY[r][2]) for r in names],
                     "requested_workers": rng.randint(1, most),
                     "utility": _ordinary_utility(rng, horizon)})
    return {"format": "oasis-instance/1", "name": f"o{seed}", "horizon": horizon,
            "resources": names, "worker_servers": servers("w", 3),
            "ps_servers": servers("p", 2), "jobs": jobs}


def _ordinary_utility(rng: random.Random, horizon: int) -> dict[str, Any]:
    """A utility with the parameters of the paper's experiments (sigmoid), or a table,
    deadline or linear one of plain numbers."""
    kind = rng.randint(0, 3)
    if kind == 0:
        return {"kind": "sigmoid", "gamma1": rng.choice([1, 5, 10, 50, 100]),
                "gamma2": rng.choice([0.1, 0.5, 1, 2, 4]),
                "gamma3": rng.randint(1, horizon + 2)}
    if kind == 1:
        return {"kind": "table", "values": sorted(
            (rng.choice([1, 2, 5, 10, 20, 50]) for _ in range(rng.randint(1, horizon))),
            reverse=True)}
    if kind == 2:
        return {"kind": "deadline", "value": rng.choice([1, 10, 20, 50]),
                "deadline": rng.randint(1, horizon)}
    return {"kind": "linear", "value": rng.choice([10, 20, 50, 100]),
            "decay": rng.choice([0.5, 1, 2, 5, 10])}


def enumeration(data: dict[str, Any]) -> int:
    """How many (job, allocation) combinations brute force enumerates per slot, at most."""
    H = sum(g.get("count", 1) for g in data["worker_servers"])
    K = sum(g.get("count", 1) for g in data["ps_servers"])
    n = 1
    for job in data["jobs"]:
        N = job["max_workers"]
        z = max(1, math.ceil(N / job["ps_ratio"] - 1e-9))
        n *= 1 + (N + 1) ** H * (z + 1) ** K
    return n


def tiny(seed: int) -> dict[str, Any]:
    """An instance brute force solves in a second (module docstring); with ordinary numbers
    for an even draw, else the extreme ones of ``instance``."""
    rng = random.Random(seed)
    extreme = rng.random() < 0.5
    resources = rng.randint(1, 2)
    horizon = rng.randint(1, 4)
    scale = [rng.choice(SCALES) for _ in range(resources)]

    def vector(kind: int) -> list[float]:
        if extreme:  # capacities mostly hold a demand of the same scale
            return [min(1e15, rng.choice(CAP_SHARES if kind == 0 else SHARES) * scale[r])
                    for r in range(resources)]
        return [rng.choice(((1, 2, 3, 4, 8), (0, 0.5, 1, 1, 1.5, 2, 3), (0, 0.5, 1, 2))[kind])
                for _ in range(resources)]

    def servers(prefix: str) -> list[dict[str, Any]]:
        if rng.random() < 0.5:
            return [{"name": prefix, "count": rng.randint(1, 2), "capacity": vector(0)}]
        return [{"name": f"{prefix}{g}", "capacity": vector(0)} for g in range(2)]

    data = {"format": "oasis-instance/1", "name": f"t{seed}", "horizon": horizon,
            "resources": [f"r{k}" for k in range(resources)],
            "worker_servers": servers("w"), "ps_servers": servers("p"), "jobs": []}
    for i in range(rng.choice((1, 2, 2, 3, 3))):
        most = rng.randint(1, 3)
        arrival = rng.randint(0, horizon - 1)
        job = {"id": f"j{i}", "arrival": arrival,  # mostly a workload that can finish
               "workload": rng.randint(1, min(6, most * (horizon - arrival) + 1)),
               "max_workers": most,
               "ps_ratio": rng.choice([1, 2, 3, 1.5, 2 / 3, 0.5]),
               "worker_demand": vector(1), "ps_demand": vector(2),
               "requested_workers": rng.randint(1, most),
               "utility": _utility(rng) if extreme else _ordinary_utility(rng, horizon)}
        data["jobs"].append(job)
    while enumeration(data) > TINY_ENUM:  # the largest job: fewer workers, or fewer PSs
        job = max(data["jobs"], key=lambda j: enumeration({**data, "jobs": [j]}))
        if job["max_workers"] > 1:
            job["max_workers"] -= 1
            job["requested_workers"] = min(job["requested_workers"], job["max_workers"])
        else:  # one worker, one PS at most: 17 allocations a job, 4913 for three
            job["ps_ratio"] = max(job["ps_ratio"], 1)
    return data


GENERATORS = {"extreme": instance, "ordinary": ordinary, "tiny": tiny}


def solves(route: str) -> list[tuple[str, dict[str, Any]]]:
    """(label, keywords of ``offline.solve``) of a route."""
    if route == "compact":
        out = [("highspy-nofloor", {"modeler": "highspy", "floor": ()}),
               ("pulp-nofloor", {"modeler": "pulp", "floor": ()})]
        if importlib.util.find_spec("pyomo") is not None:
            out.append(("pyomo-nofloor", {"modeler": "pyomo", "floor": ()}))
        return out + [("highspy", {"modeler": "highspy"})]
    if route == "colgen":
        return [("colgen", {"method": "colgen", "floor": (), "time_limit": 3})]
    if route == "limited":
        return [("limited", {"time_limit": 4})]
    raise SystemExit(f"unknown route {route!r}: choose from compact, colgen, limited")


def below(a: float, b: float) -> bool:
    """``a`` is less than ``b`` by more than REL of the larger magnitude."""
    return b - a > REL * max(abs(a), abs(b))


def overload(inst: Any, schedule: Any) -> float:
    """The most any server's load passes its capacity, relative to it (0 if none does;
    infinite on a capacity of 0)."""
    import numpy as np
    worst = 0.0
    for demand, cap, index, pick in (
            (inst.worker_demand, inst.worker_capacity, inst.worker_index, "workers"),
            (inst.ps_demand, inst.ps_capacity, inst.ps_index, "ps")):
        used = np.zeros((inst.horizon,) + cap.shape)
        for jr in schedule.jobs:
            i = inst.job_index[jr.id]
            for a in jr.allocations:
                for name, count in getattr(a, pick).items():
                    used[a.slot, index[name]] += count * demand[i]
        over = used - cap[None]
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(over > 0, np.where(cap[None] > 0, over / cap[None], np.inf), 0.0)
        worst = max(worst, float(rel.max(initial=0.0)))
    return worst


class _Strict:
    """An instance whose capacities brute force reads as ``C·(1 + STRICT)`` against its
    ``C·(1 + CAP_TOL)`` (a view: the file's limits would refuse a shrunk capacity of 1e-9)."""

    def __init__(self, inst: Any) -> None:
        from oasis_opt.model import CAP_TOL
        self._inst = inst
        shrink = (1 + STRICT) / (1 + CAP_TOL)
        self.worker_capacity = inst.worker_capacity * shrink
        self.ps_capacity = inst.ps_capacity * shrink

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inst, name)


def brute_force(inst: Any) -> tuple[float, float]:
    """(strict, loose) optimum of a tiny instance by ``tests/bruteforce.py`` (module
    docstring): loose at the validator's 1e-9·C, strict at ``STRICT``."""
    tests = Path(__file__).resolve().parent.parent / "tests"
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    from bruteforce import best_utility
    return best_utility(_Strict(inst)), best_utility(inst)


def judge(inst: Any, data: dict[str, Any], mode: str,
          runs: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], float | None]:
    """Solve ``inst`` on every run and return its findings (module docstring) and the best
    online utility (None if the instance is refused)."""
    from oasis_opt import algorithms
    from oasis_opt.offline import SolveStatus, solve

    # lower bounds: (utility, who, overload)
    known: list[tuple[float, str, float]] = []
    for a in ONLINE:
        s = algorithms.run(a, inst)
        known.append((s.total_utility, a, overload(inst, s)))
    best = max(u for u, _, _ in known)
    findings: list[dict[str, Any]] = []
    answers: list[tuple[str, Any]] = []
    for label, kwargs in runs:
        try:
            schedule, report = solve(inst, **kwargs)
        except Exception as exc:  # noqa: BLE001 (every failure is a finding)
            findings.append({"route": label, "kind": "failure", "what": "exception",
                             "found": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        answers.append((label, {"utility": schedule.total_utility, "bound": report.bound,
                                "status": report.status.value,
                                "optimal": report.status is SolveStatus.OPTIMAL}))
        known.append((schedule.total_utility, label, overload(inst, schedule)))
    ref: dict[str, float] = {}
    if mode == "tiny":
        ref["strict"], ref["loose"] = brute_force(inst)
        if below(ref["loose"], best):
            findings.append({"route": "bruteforce", "kind": "failure",
                             "what": "brute force below an online schedule",
                             "found": ref["loose"], "reference": best})
    proven = {label for label, a in answers if a["optimal"]}
    for label, a in answers:
        claims = [("optimum", a["utility"])] if a["optimal"] else []
        claims += [("bound", a["bound"])] if a["bound"] is not None else []
        for what, value in claims:
            # the best other schedule that fits strictly, else the best one (a boundary)
            others = [k for k in known if what == "bound" or k[1] != label]
            for u, who, over in sorted(others, key=lambda k: (k[2] > STRICT, -k[0])):
                if below(value, u):
                    kind = "failure" if over <= STRICT else \
                        "disagreement" if what == "optimum" and who in proven else "boundary"
                    findings.append({"route": label, "what": f"{what} below {who}'s schedule",
                                     "kind": kind,
                                     "found": a, "reference": u, "overload": over})
                    break
            if "strict" in ref:
                if below(value, ref["strict"]):
                    findings.append({"route": label, "kind": "failure",
                                     "what": f"{what} below brute force", "found": a,
                                     "reference": ref})
                elif below(value, ref["loose"]):
                    findings.append({"route": label, "kind": "boundary",
                                     "what": f"{what} below brute force (loose only)",
                                     "found": a, "reference": ref})
        if "loose" in ref and below(ref["loose"], a["utility"]):
            findings.append({"route": label, "kind": "failure",
                             "what": "schedule above brute force", "found": a,
                             "reference": ref})
    return findings, best


def fails(data: dict[str, Any], mode: str, label: str, what: str,
          against: str | None = None) -> bool:
    """``label`` still has a failure ``what`` (its first word: optimum, bound, schedule or
    exception) on ``data``, judged with the routes ``label`` and ``against`` alone (and the
    online schedules); with ``against``, a disagreement counts too. False if ``data`` is
    refused or too large for brute force."""
    from oasis_opt.errors import InputError
    from oasis_opt.io import instance_from_dict
    runs = [s for r in ("compact", "colgen", "limited") for s in solves(r)]
    run = [r for r in runs if r[0] in (label, against)]
    if mode == "tiny" and enumeration(data) > 50 * TINY_ENUM:
        return False
    try:
        inst = instance_from_dict(data)
    except InputError:
        return False
    found, _ = judge(inst, data, mode, run)
    kinds = ("failure", "disagreement") if against else ("failure",)
    return any(f["route"] == label and f["kind"] in kinds
               and f["what"].split(" ")[0] == what.split(" ")[0] for f in found)


def smaller(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One-step reductions of an instance: a job, a server group or a server, the last slot
    or the first, a resource, a unit of work or a worker fewer."""
    out: list[dict[str, Any]] = []

    def copy() -> dict[str, Any]:
        return json.loads(json.dumps(data))

    for i in range(len(data["jobs"])):
        if len(data["jobs"]) > 1:
            d = copy()
            del d["jobs"][i]
            out.append(d)
    for pool in ("worker_servers", "ps_servers"):
        for g, group in enumerate(data[pool]):
            if len(data[pool]) > 1:
                d = copy()
                del d[pool][g]
                out.append(d)
            if group.get("count", 1) > 1:
                d = copy()
                d[pool][g]["count"] -= 1
                out.append(d)
    if data["horizon"] > 1:
        d = copy()
        d["horizon"] -= 1
        d["jobs"] = [j for j in d["jobs"] if j["arrival"] < d["horizon"]]
        if d["jobs"]:
            out.append(d)
        d = copy()
        d["horizon"] -= 1
        d["jobs"] = [j for j in d["jobs"] if j["arrival"] > 0]
        for j in d["jobs"]:
            j["arrival"] -= 1
        if d["jobs"]:
            out.append(d)
    R = len(data["resources"])
    for r in range(R if R > 1 else 0):
        d = copy()
        del d["resources"][r]
        for pool in ("worker_servers", "ps_servers"):
            for group in d[pool]:
                del group["capacity"][r]
        for j in d["jobs"]:
            del j["worker_demand"][r]
            del j["ps_demand"][r]
        out.append(d)
    for i, j in enumerate(data["jobs"]):
        for key in ("workload", "max_workers"):
            if j[key] > 1:
                d = copy()
                d["jobs"][i][key] -= 1
                m = d["jobs"][i]["max_workers"]
                d["jobs"][i]["requested_workers"] = min(j.get("requested_workers", m), m)
                out.append(d)
    return out


def minimise(data: dict[str, Any], mode: str, label: str, what: str,
             against: str | None = None) -> dict[str, Any]:
    """Greedy: take the first one-step reduction that still fails, until none does."""
    progress = True
    while progress:
        progress = False
        for d in smaller(data):
            if fails(d, mode, label, what, against):
                data, progress = d, True
                break
    return data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("first", type=int, nargs="?")
    p.add_argument("last", type=int, nargs="?")
    p.add_argument("--mode", choices=MODES, default="extreme")
    p.add_argument("--routes", default="compact")
    p.add_argument("--budget", type=float, default=None, help="stop after this many seconds")
    p.add_argument("--out", default="numeric-search", help="folder for failing instances")
    p.add_argument("--minimise", metavar="FILE", help="shrink this failing instance")
    p.add_argument("--route", help="with --minimise: the failing route's label")
    p.add_argument("--what", default="optimum",
                   help="with --minimise: optimum, bound, schedule or exception")
    p.add_argument("--against", help="with --minimise: the route it disagrees with")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    out = Path(args.out)
    if args.minimise:
        if not args.route:
            p.error("--minimise needs --route")
        data = json.loads(Path(args.minimise).read_text())
        if not fails(data, args.mode, args.route, args.what, args.against):
            print(json.dumps({"minimised": None, "reason": "it does not fail"}))
            return 0
        small = minimise(data, args.mode, args.route, args.what, args.against)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{data['name']}-min.json"
        small["name"] = f"{data['name']}-min"
        path.write_text(json.dumps(small))
        print(json.dumps({"minimised": str(path), "jobs": len(small["jobs"]),
                          "horizon": small["horizon"]}))
        return 1
    if args.first is None or args.last is None:
        p.error("FIRST and LAST are needed")
    from oasis_opt.errors import InputError
    from oasis_opt.io import instance_from_dict

    runs = [s for r in args.routes.split(",") for s in solves(r)]
    make = GENERATORS[args.mode]
    start, tried, counts, end = time.perf_counter(), 0, Counter(), args.first
    for seed in range(args.first, args.last):
        if args.budget is not None and time.perf_counter() - start > args.budget:
            break
        end = seed + 1
        data = make(seed)
        try:
            inst = instance_from_dict(data)
        except InputError:
            continue  # outside SPEC §5's limits
        tried += 1
        findings, best = judge(inst, data, args.mode, runs)
        counts.update({f"{f['kind']}:{f['route']}" for f in findings})  # instances
        for f in findings:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{data['name']}.json").write_text(json.dumps(data))
            print(json.dumps({"mode": args.mode, "seed": seed, **f, "best_online": best},
                             default=str), flush=True)
    failed = sum(n for k, n in counts.items() if k.startswith("failure:"))  # (instance, route)
    print(json.dumps({"mode": args.mode, "routes": args.routes, "seeds": [args.first, end],
                      "instances": tried, "failures": failed,
                      "instances_by_kind_and_route": dict(sorted(counts.items())),
                      "seconds": round(time.perf_counter() - start, 1)}), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
