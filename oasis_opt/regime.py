"""The ``regime`` experiment (issue 13): does OASiS's 2α guarantee start to hold as each job's
demand becomes small next to a server?

The theorem (SPEC §3) assumes small per-server demand; the generated presets break it (one
worker takes half of a ``small`` server's GPUs, a PS all of a PS server's bandwidth). Here the
``small`` preset is drawn with ``generate(..., max_share=s)`` for s in ``SHARES``: the server
capacities of each pool are multiplied by ``m = max(1, u/s)`` (u the largest share of one
unit), so that no worker or PS takes more than s of any server resource, and the number of
jobs is multiplied by the worker pool's factor so that the load (demand over capacity) stays
that of the base instance. Each instance is solved exactly (or, at the time limit, bounded:
the ratio then uses the bound and is an upper bound on the true one) and every algorithm runs.

Rows (``tasks.COLUMNS``): ``ratio`` = OPT/ALG (OPT or its bound, ``opt_kind``); for OASiS and
oasis-adaptive ``alpha``, ``bound_2alpha`` and ``d_cert``. The CSV's columns are fixed for all
experiments, so the certificate's other figures are packed into ``status`` as
``"<solve status>;failures=F/A;job_share=X;unit_share=Y"``: F arrivals with α·ΔP < ΔD out of
A arrivals, X the largest share of a server resource one admitted job holds in a slot, Y that
of one worker or PS (``parse_status``).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .tasks import Task

SHARES = (1.0, 0.5, 0.25, 0.1, 0.05)
ALGORITHMS = ("oasis", "oasis-adaptive", "fifo", "drf", "rrh", "tetris")
BASE = {"preset": "small", "base_jobs": 4, "horizon": 8, "time_limit": 60.0}
QUICK = {"preset": "small", "base_jobs": 3, "horizon": 5, "time_limit": 10.0}

Rows = Sequence[dict[str, str]]


def tasks(seeds: int, quick: bool) -> list[Task]:
    shares, base = ((1.0, 0.25), QUICK) if quick else (SHARES, BASE)
    return [Task("regime", s, {**base, "max_share": share}, ALGORITHMS)
            for share in shares for s in range(seeds)]


def instance(params: dict[str, Any], seed: int):
    """The base draw tells the worker pool's capacity factor m; the instance then has
    ``round(base_jobs·m)`` jobs (same seed, so the same servers and a superset of draws)."""
    from .generator import generate
    kw = {"seed": seed, "horizon": params["horizon"], "max_share": params["max_share"]}
    first = generate(params["preset"], jobs=params["base_jobs"], **kw)
    m = first.extra["generator"]["capacity_scale"]["worker"]
    jobs = max(params["base_jobs"], round(params["base_jobs"] * m))
    return generate(params["preset"], jobs=jobs, name=f"regime-s{seed}-share{params['max_share']}",
                    **kw)


def execute(task: Task) -> list[dict[str, Any]]:
    from . import algorithms
    from .formulations.common import Options
    from .offline import solve
    inst = instance(task.params, task.seed)
    # One variable per server: the servers here are large (up to 20× the preset's), and the
    # default pattern packing enumerates single-server patterns whose number explodes with
    # capacity (a 40-job instance spent minutes in that enumeration, past its time limit).
    _, rep = solve(inst, time_limit=task.params["time_limit"],
                   options=Options(packing="server"))
    status = str(getattr(rep.status, "value", rep.status))
    optimal = status == "optimal"
    opt = float(rep.objective if optimal else rep.bound)
    base = {"experiment": task.experiment, "seed": task.seed, "params": task.params_key,
            "instance": inst.name, "jobs": inst.num_jobs, "horizon": inst.horizon,
            "worker_servers": len(inst.worker_names), "ps_servers": len(inst.ps_names),
            "opt": opt, "opt_kind": "optimal" if optimal else "bound"}
    rows = []
    for name in task.algorithms:
        sched = algorithms.run(name, inst)
        ex = sched.extras
        u = float(sched.total_utility)
        row = {**base, "algorithm": name, "utility": u, "completed": sched.completed,
               "seconds": ex.get("seconds"), "status": status,
               "ratio": opt / u if u > 1e-12 else (1.0 if opt <= 1e-12 else math.inf)}
        if "alpha" in ex:
            row.update(alpha=ex["alpha"], bound_2alpha=ex["two_alpha"], d_cert=ex["D_cert"])
            row["status"] = (f"{status};failures={len(ex['relationship_failures'])}/"
                             f"{inst.num_jobs};job_share={ex['max_job_share']:.6g};"
                             f"unit_share={ex['max_unit_share']:.6g}")
        rows.append(row)
    return rows


def parse_status(text: str) -> dict[str, Any]:
    """``"optimal;failures=3/12;job_share=0.5;unit_share=0.1"`` → its fields (module doc)."""
    parts = text.split(";")
    out: dict[str, Any] = {"solve": parts[0]}
    for p in parts[1:]:
        key, _, value = p.partition("=")
        if key == "failures":
            f, _, a = value.partition("/")
            out["failures"], out["arrivals"] = int(f), int(a)
        else:
            out[key] = float(value)
    return out


def _f(x: str) -> float:
    return float(x) if x not in ("", None) else math.nan


def _share(row: dict[str, str]) -> float:
    import json
    return float(json.loads(row["params"])["max_share"])


def summary(rows: Rows) -> dict[str, Any]:
    """Per max share: median OPT/ALG per algorithm (and the worst), and for OASiS and
    oasis-adaptive the median 2α, how many instances had OPT ≤ 2α·ALG, the share of arrivals
    with α·ΔP < ΔD, the median largest job share and the median D_cert/OPT."""
    acc: dict[float, dict[str, list[dict[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        acc[_share(r)][r["algorithm"]].append(r)
    out: dict[str, Any] = {}
    for share in sorted(acc, reverse=True):
        d: dict[str, Any] = {}
        for alg, rs in acc[share].items():
            ratios = sorted(_f(r["ratio"]) for r in rs)
            finite = [x for x in ratios if math.isfinite(x)]
            e: dict[str, Any] = {"instances": len(rs),
                                 "median_ratio": statistics.median(finite) if finite else None,
                                 "max_ratio": finite[-1] if finite else None,
                                 "earned_nothing": len(ratios) - len(finite),
                                 "bounded_opt": sum(r["opt_kind"] != "optimal" for r in rs),
                                 "jobs": statistics.median(int(r["jobs"]) for r in rs)}
            if rs[0].get("bound_2alpha"):
                st = [parse_status(r["status"]) for r in rs]
                e.update(
                    median_2alpha=statistics.median(_f(r["bound_2alpha"]) for r in rs),
                    within_2alpha=sum(_f(r["ratio"]) <= _f(r["bound_2alpha"]) + 1e-9
                                      for r in rs),
                    failure_fraction=sum(s["failures"] for s in st)
                    / max(1, sum(s["arrivals"] for s in st)),
                    instances_without_failures=sum(s["failures"] == 0 for s in st),
                    median_job_share=statistics.median(s["job_share"] for s in st),
                    max_unit_share=max(s["unit_share"] for s in st),
                    median_dcert_over_opt=statistics.median(
                        _f(r["d_cert"]) / _f(r["opt"]) for r in rs if _f(r["opt"]) > 0)
                    if any(_f(r["opt"]) > 0 for r in rs) else None)
            d[alg] = e
        out[str(share)] = d
    return out


def figure(rows: Rows, path: Path) -> None:
    """Three panels against the max share (log x, small shares to the right): median OPT/ALG
    per algorithm with OASiS's median 2α; the fraction of arrivals with α·ΔP < ΔD and the
    median largest job share; the median D_cert/OPT."""
    from .plots import pyplot
    plt = pyplot()
    s = summary(rows)
    shares = sorted((float(k) for k in s), reverse=True)
    algs = list(dict.fromkeys(r["algorithm"] for r in rows))

    def series(algorithm: str, key: str) -> list[float]:
        """``key`` of ``algorithm`` at every share (NaN where it has none: a gap)."""
        ys = [s[str(x)].get(algorithm, {}).get(key) for x in shares]
        return [math.nan if y is None else y for y in ys]

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    for a in algs:
        ax.plot(shares, series(a, "median_ratio"), marker="o", label=a,
                ls="--" if a == "oasis-adaptive" else "-")
    ax.plot(shares, series("oasis", "median_2alpha"), color="black", ls=":",
            label="2α (OASiS, median)")
    ax.set_yscale("log")
    ax.set_ylabel("median OPT / ALG (log)")
    ax.set_title("competitive ratio vs max share")
    ax.legend(fontsize=7)
    ax = axes[1]
    for a, color in (("oasis", "tab:blue"), ("oasis-adaptive", "tab:orange")):
        ax.plot(shares, series(a, "failure_fraction"), marker="o", color=color,
                label=f"{a}: arrivals with α·ΔP < ΔD")
    ax.plot(shares, series("oasis", "median_job_share"), marker="s", color="grey",
            label="OASiS: median largest job share")
    ax.plot(shares, shares, color="grey", ls=":", lw=0.8, label="max share (unit)")
    ax.set_ylim(0, 1.05)
    ax.set_title("allocation–price relationship")
    ax.legend(fontsize=7)
    ax = axes[2]
    for a, color in (("oasis", "tab:blue"), ("oasis-adaptive", "tab:orange")):
        ax.plot(shares, series(a, "median_dcert_over_opt"), marker="o", color=color, label=a)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("median D_cert / OPT (log)")
    ax.set_title("certificate tightness")
    ax.legend(fontsize=7)
    for ax in axes:
        ax.set_xscale("log")
        ax.invert_xaxis()
        ax.set_xlabel("max share of a server one worker/PS takes")
        ax.grid(alpha=0.3)
    n = len({r["seed"] for r in rows})
    fig.suptitle(f"The regime of OASiS's 2α guarantee: small preset, {n} seeds per share, "
                 "jobs scaled with the servers")
    from .plots import save_figure
    save_figure(fig, path, dpi=110)
