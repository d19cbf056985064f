"""The held-out families of the exact-engine benchmark (benchmarks/fresh_families.py,
issue 22): valid instances of what they claim to cover, the same on every call, and on
them the default route proves the optimum that the Pyomo modeller and the plain comparator
prove, with a schedule the validator accepts."""

import sys
from pathlib import Path

import pytest
from oasis_opt.formulations.common import Options

from oasis_opt.offline import SolveStatus, solve
from oasis_opt.validate import validate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import direct_highspy  # noqa: E402
import fresh_families  # noqa: E402


def test_the_fresh_families_are_what_they_say():
    a, b = fresh_families.family("fresh-a", 24), fresh_families.family("fresh-b", 24)
    assert [i.name for i in a] == [f"fresh-{s}" for s in range(100, 124)]
    assert [i.name for i in b] == [f"fresh-{s}" for s in range(200, 224)]
    assert fresh_families.fresh(205, "b") == fresh_families.fresh(205, "b")
    assert fresh_families.fresh(205, "b") != fresh_families.fresh(205, "a")
    for inst in a + b:
        assert 12 <= inst.num_jobs <= 16 and 12 <= inst.horizon <= 16
        assert 2 <= len(inst.resources) <= 4
    # the mix the README describes, over each family: half-GPU demands, both utility kinds,
    # PS ratios above one, pools of more than one worker shape
    for fam in (a, b):
        jobs = [j for inst in fam for j in inst.jobs]
        assert any(0 < d < 1 for j in jobs for d in j.worker_demand)
        assert {j.utility.kind for j in jobs} == {"sigmoid", "table"}
        assert max(j.ps_ratio for j in jobs) > 1
    with pytest.raises(ValueError, match="kind"):
        fresh_families.fresh(1, "c")


@pytest.mark.parametrize("seed, kind", [(223, "b"), (211, "b"), (123, "a")])
def test_the_route_proves_the_second_modellers_optimum_on_held_out_instances(seed, kind):
    from oasis_opt.io import instance_from_dict
    inst = instance_from_dict(fresh_families.fresh(seed, kind))
    schedule, report = solve(inst, time_limit=60)
    _, ref = solve(inst, modeler="pyomo", options=Options())
    res = direct_highspy.solve(inst, time_limit=60)
    assert report.status is SolveStatus.OPTIMAL and ref.status is SolveStatus.OPTIMAL
    assert report.objective == pytest.approx(ref.objective, rel=1e-6)
    assert res.status == "Optimal" and res.objective == pytest.approx(ref.objective, rel=1e-4)
    assert validate(inst, schedule).feasible
    assert schedule.total_utility == pytest.approx(report.objective, rel=1e-6)
