"""OASiS speed (pytest-benchmark): one arrival decision, a whole run on the ``paper`` preset,
the certificate pass, and how a decision grows with horizon, servers and workload.

Targets (issue 4): median < 5 ms per arrival decision; a whole paper-preset run < 1 s.

    pytest benchmarks/bench_oasis.py --benchmark-only
    python benchmarks/bench_oasis.py          # the growth table of docs/oasis.md
"""

from __future__ import annotations

import dataclasses
import statistics
import time

import numpy as np
import pytest

from oasis_opt.generator import generate
from oasis_opt.model import Instance, ServerGroup
from oasis_opt.online import oasis
from oasis_opt.online.prices import PriceState, default_bounds
from oasis_opt.online.subroutine import JobSpec, best_schedule


def _size(inst: Instance) -> dict[str, int]:
    return {"jobs": inst.num_jobs, "horizon": inst.horizon,
            "worker_servers": len(inst.worker_names), "ps_servers": len(inst.ps_names),
            "median_workload": int(np.median(inst.workload)),
            "median_max_workers": int(np.median(inst.max_workers))}


@pytest.fixture(scope="module")
def paper() -> Instance:
    return generate("paper", seed=1)


def mid_run_state(inst: Instance, admitted_first: int):
    """Prices and free capacity after OASiS has decided the first ``admitted_first`` arrivals."""
    b = default_bounds(inst)
    w = PriceState(inst.worker_capacity, b.U_w, b.L_w, inst.horizon)
    p = PriceState(inst.ps_capacity, b.U_ps, b.L_ps, inst.horizon)
    order = np.argsort(inst.arrival, kind="stable")
    for i in order[:admitted_first]:
        spec = JobSpec.from_instance(inst, int(i))
        best = best_schedule(spec, w.price, p.price, w.free, p.free)
        if best.payoff > oasis.ADMIT_TOL:
            w.add(best.workers, spec.worker_demand)
            p.add(best.ps, spec.ps_demand)
    return w, p, [int(i) for i in order[admitted_first:]]


def test_subroutine_decision(benchmark, paper: Instance) -> None:
    """The dual subroutine alone, for the second half of the arrivals at mid-run prices."""
    w, p, rest = mid_run_state(paper, paper.num_jobs // 2)
    specs = [JobSpec.from_instance(paper, i) for i in rest]

    def decide_all() -> None:
        for s in specs:
            best_schedule(s, w.price, p.price, w.free, p.free)

    per_call = []
    for s in specs:
        start = time.perf_counter()
        best_schedule(s, w.price, p.price, w.free, p.free)
        per_call.append(time.perf_counter() - start)
    benchmark.extra_info.update(_size(paper), decisions_per_round=len(specs),
                                median_ms_per_decision=1e3 * statistics.median(per_call),
                                max_ms_per_decision=1e3 * max(per_call))
    benchmark.pedantic(decide_all, rounds=5, iterations=1)


@pytest.mark.parametrize("certificate", [False, True], ids=["run", "run+certificate"])
def test_whole_run(benchmark, paper: Instance, certificate: bool) -> None:
    sched = benchmark.pedantic(oasis.run, args=(paper,), kwargs={"certificate": certificate},
                               rounds=3, iterations=1)
    ex = sched.extras
    benchmark.extra_info.update(_size(paper), completed=sched.completed,
                                median_ms_per_decision=ex["decision_ms_median"],
                                decision_seconds=ex["decision_seconds"],
                                certificate_seconds=ex["certificate_seconds"])


# --- growth ------------------------------------------------------------------------------


def with_servers(inst: Instance, n: int) -> Instance:
    """``inst`` with ``n`` worker and ``n`` PS servers of the same capacities."""
    wg, pg = inst.worker_groups[0], inst.ps_groups[0]
    return dataclasses.replace(inst, worker_groups=(ServerGroup(wg.name, wg.capacity, n),),
                               ps_groups=(ServerGroup(pg.name, pg.capacity, n),))


def with_workload(inst: Instance, factor: float) -> Instance:
    jobs = tuple(dataclasses.replace(j, workload=max(1, round(j.workload * factor)))
                 for j in inst.jobs)
    return dataclasses.replace(inst, jobs=jobs)


def variants() -> list[tuple[str, str, Instance]]:
    base = generate("paper", seed=1)
    out = [("horizon", str(T), generate("paper", seed=1, horizon=T)) for T in (25, 50, 100, 200)]
    out += [("servers", f"{n}+{n}", with_servers(base, n)) for n in (10, 20, 40, 80)]
    out += [("workload", f"x{f:g}", with_workload(base, f)) for f in (0.5, 1, 2, 4)]
    return out


@pytest.mark.parametrize("axis,value,inst",
                         [pytest.param(*v, id=f"{v[0]}-{v[1]}") for v in variants()])
def test_growth(benchmark, axis: str, value: str, inst: Instance) -> None:
    sched = benchmark.pedantic(oasis.run, args=(inst,), kwargs={"certificate": False},
                               rounds=1, iterations=1)
    benchmark.extra_info.update(_size(inst), axis=axis, value=value,
                                median_ms_per_decision=sched.extras["decision_ms_median"])


def growth_table(repeats: int = 3) -> str:
    """Markdown table: median ms per decision and whole-run seconds (median of ``repeats``)."""
    lines = ["| varied | value | median ms / decision | run s (no certificate) | completed |",
             "| --- | --- | --- | --- | --- |"]
    for axis, value, inst in variants():
        ms, secs = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            s = oasis.run(inst, certificate=False)
            secs.append(time.perf_counter() - start)
            ms.append(s.extras["decision_ms_median"])
        lines.append(f"| {axis} | {value} | {statistics.median(ms):.2f} | "
                     f"{statistics.median(secs):.2f} | {s.completed} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(growth_table())
