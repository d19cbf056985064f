"""Everything against everything on random tiny instances: the two modellers agree on OPT; no
algorithm beats OPT (every schedule validated by the registry); column generation's bound is
≥ OPT and its schedule ≤ OPT; OASiS's certificate D_cert is ≥ OPT."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from strategies import instances

from oasis_opt import algorithms
from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict
from oasis_opt.offline import solve
from oasis_opt.offline.scale import objective_scale


def _solvable(inst) -> bool:
    try:
        objective_scale(inst)
    except InputError:
        return False
    return True


def _tol(x: float) -> float:
    return 1e-6 * max(1.0, abs(x))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(instances())
def test_random_instances_cross_check(d):
    inst = instance_from_dict(d)
    # a sigmoid of gamma1 1e-313 was drawn: where no job can earn 2^-1000, ``solve`` refuses
    # the instance by design (docs/offline.md, "Utilities and capacities of any size")
    assume(_solvable(inst))
    _, pyomo = solve(inst, modeler="pyomo")
    _, pulp = solve(inst, modeler="pulp")
    assert pyomo.status.value == pulp.status.value == "optimal"
    opt = pyomo.objective
    assert abs(pulp.objective - opt) <= _tol(opt)
    for name in algorithms.builtin_names():
        sched = algorithms.run(name, inst)
        assert sched.total_utility <= opt + _tol(opt), name
        if name == "oasis":
            assert sched.extras["D_cert"] >= opt - _tol(opt)
    _, cg = solve(inst, method="colgen")
    assert cg.bound >= opt - _tol(opt)
    assert cg.objective <= opt + _tol(opt)
