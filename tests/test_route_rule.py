"""The route chosen by the instance (issue 22): demand-class patterns only where every PS
server has an identical twin or the PS pool cannot bind; server packing elsewhere, with the
same proven optimum (the brute force's)."""

from __future__ import annotations

from bruteforce import best_utility

from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict
from oasis_opt.model import REL_TOL
from oasis_opt.offline import SolveStatus, instance_features, route_options, solve
from oasis_opt.validate import validate


def test_patterns_stay_on_identical_ps_servers():
    for preset in ("hard", "testbed", "uniform-1r"):
        assert route_options(generate(preset, seed=1)) is None, preset


def test_server_packing_where_ps_servers_differ():
    for preset, seed in (("mixed", 0), ("ps-heavy", 1), ("ps-light", 2)):
        instance = generate(preset, seed=seed)
        f = instance_features(instance)
        assert f["ps_binds"] and f["shared_ps"] < 1.0, (preset, f)
        assert route_options(instance).packing == "server", preset


def tiny_heterogeneous() -> dict:
    """Two worker servers and two PS servers, each pair of different shapes; three jobs that
    contend, with fractional demands and a table utility."""
    def job(jid, arrival, workload, n, gamma, wd, pd, utility):
        return {"id": jid, "arrival": arrival, "workload": workload, "max_workers": n,
                "ps_ratio": gamma, "worker_demand": wd, "ps_demand": pd, "utility": utility}
    return {"format": "oasis-instance/1", "name": "tiny-mixed", "horizon": 3,
            "resources": ["gpu", "cpu"],
            "worker_servers": [{"name": "w0", "capacity": [2, 8]},
                               {"name": "w1", "capacity": [1, 6]}],
            "ps_servers": [{"name": "p0", "capacity": [0, 4]}, {"name": "p1", "capacity": [0, 2]}],
            "jobs": [job("a", 0, 4, 2, 1, [1, 2], [0, 2], {"kind": "table", "values": [9, 6, 2]}),
                     job("b", 0, 3, 2, 2, [0.5, 3], [0, 1],
                         {"kind": "sigmoid", "gamma1": 8, "gamma2": 1, "gamma3": 2}),
                     job("c", 1, 2, 1, 1, [1, 1], [0, 2], {"kind": "table", "values": [7, 7]})]}


def test_server_route_proves_the_brute_force_optimum():
    instance = instance_from_dict(tiny_heterogeneous())
    assert route_options(instance).packing == "server"
    sched, rep = solve(instance)
    assert rep.status is SolveStatus.OPTIMAL
    expected = best_utility(instance)
    assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected)
    assert validate(instance, sched).feasible
    assert sched.extras["packing"] == "server"
