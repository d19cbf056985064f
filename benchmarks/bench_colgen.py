"""Column generation (``oasis_opt.formulations.colgen``): the LP bound by column generation with
OASiS's subroutine as pricing oracle, then price-and-branch for a schedule, on a testbed
instance and on 50 jobs of the ``paper`` preset (100 slots, 40 + 40 servers), where the
compact MILP is out of reach.

``extra_info`` splits the time (LP, pricing, MIP) and records bound, schedule value, gap,
whether the bound is proven (pricing found no column), the instance size, and ``history``:
(seconds, incumbent, bound) whenever either side improved. The scale runs of docs/colgen.md
(100 and 200 jobs, 300 and 600 s) are too long for this pass: ``benchmarks/colgen_scale.py``.

    pytest benchmarks/bench_colgen.py --benchmark-only
"""

from __future__ import annotations

import pytest
from oasis_opt.formulations import colgen

from oasis_opt.generator import generate
from oasis_opt.model import Instance
from oasis_opt.validate import validate

TIME_LIMIT = 60.0

CASES = {
    "testbed-s0": lambda: generate("testbed", seed=0),
    "paper-s1-50jobs": lambda: generate("paper", seed=1, jobs=50),
}


@pytest.mark.parametrize("case", list(CASES))
def test_colgen_bound(benchmark, case: str) -> None:
    inst: Instance = CASES[case]()
    r = benchmark.pedantic(colgen.solve, args=(inst,), kwargs={"time_limit": TIME_LIMIT},
                           rounds=1, iterations=1)
    report = validate(inst, r.schedule)
    assert report.feasible, report.violations[:3]
    inc, x = r.objective, r.extras
    assert r.bound >= inc - 1e-6 * max(1.0, abs(inc))
    benchmark.extra_info.update(
        instance=inst.name, jobs=inst.num_jobs, horizon=inst.horizon,
        worker_servers=len(inst.worker_names), ps_servers=len(inst.ps_names),
        bound=r.bound, incumbent=inc, gap=(r.bound - inc) / max(abs(r.bound), 1e-9),
        status=r.status.value,
        **{k: x[k] for k in ("lp_proven", "mip_status", "iterations", "columns", "lp_seconds",
                             "pricing_seconds", "mip_seconds", "bound_seconds",
                             "pattern_seconds", "lns_moves")},
        history=[list(p) for p in x["history"]])
