"""The PS rate row (``Options.ps_rate``, issue 22): where one PS serves all the work a job can
do in a slot (``γ_i ≥ w_max_i``) the PS ratio row reads ``W_it ≤ w_max_i · Z_it``. Valid for
every schedule, so every medium still proves the brute force's optimum, with and without the
other tightenings; and the LP relaxation can only go down (strictly where it binds)."""

from __future__ import annotations

from dataclasses import replace

import highspy
import pytest
from bruteforce import best_utility
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oasis_opt.formulations import compact_highspy
from oasis_opt.formulations.common import PLAIN, SPEC_OPTIONS, Options, prepare

from oasis_opt.io import instance_from_dict
from oasis_opt.model import REL_TOL
from oasis_opt.offline import SolveStatus, solve
from oasis_opt.validate import validate


def _job(jid: str, arrival: int, workload: int, n: int, gamma: float, utility: list) -> dict:
    return {"id": jid, "arrival": arrival, "workload": workload, "max_workers": n,
            "ps_ratio": gamma, "worker_demand": [1], "ps_demand": [1],
            "utility": {"kind": "table", "values": utility}}


def one_ps_server() -> dict:
    """Three jobs that each need one PS (γ = 4, at most 2 workers) on one PS server with room
    for two: the PS server decides who runs. In the LP without the rate row each job held
    half a PS (W/γ = 2/4), so all three ran at once."""
    return {"format": "oasis-instance/1", "name": "one-ps", "horizon": 3,
            "resources": ["slot"], "worker_servers": [{"name": "w", "capacity": [6]}],
            "ps_servers": [{"name": "p", "capacity": [2]}],
            "jobs": [_job("a", 0, 4, 2, 4, [9, 8, 1]), _job("b", 0, 4, 2, 4, [9, 8, 1]),
                     _job("c", 0, 2, 2, 4, [6, 5, 1])]}


def _lp(instance, options: Options) -> float:
    m = compact_highspy.build(instance, prep=prepare(instance, options))
    m.integer = [False] * len(m.integer)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(m.lp())
    h.run()
    return h.getInfo().objective_function_value


def test_rate_is_the_lesser_of_ratio_and_most_work():
    prep = prepare(instance_from_dict(one_ps_server()))
    assert [prep.ps_rate(i) for i in prep.active] == [2.0, 2.0, 2.0]
    assert [prep.ps_needed(i, 4) for i in prep.active] == [2, 2, 2]  # two slots, one PS each
    off = prepare(prep.instance, replace(Options(), ps_rate=False))
    assert [off.ps_rate(i) for i in off.active] == [4.0, 4.0, 4.0]
    assert [off.ps_needed(i, 4) for i in off.active] == [1, 1, 1]
    assert not SPEC_OPTIONS.ps_rate  # the SPEC model stays the SPEC's rows


def test_rate_row_tightens_the_lp_and_keeps_the_optimum():
    instance = instance_from_dict(one_ps_server())
    expected = best_utility(instance)
    for options in (PLAIN, Options(packing="server"), Options()):
        on, off = _lp(instance, options), _lp(instance, replace(options, ps_rate=False))
        assert expected - 1e-6 <= on < off - 1.0, (options, on, off)
    for modeler in ("highspy", "pyomo", "pulp"):
        sched, rep = solve(instance, modeler=modeler)
        assert rep.status is SolveStatus.OPTIMAL
        assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected), modeler
        assert validate(instance, sched).feasible


@st.composite
def _few_ps(draw) -> dict:
    """1–3 jobs with γ ≥ their most workers on one or two PS servers that bind."""
    n_jobs = draw(st.integers(1, 3))
    horizon = draw(st.integers(1, 3))
    jobs = []
    for k in range(n_jobs):
        n = draw(st.integers(1, 2))
        jobs.append({**_job(f"j{k}", draw(st.integers(0, horizon - 1)),
                            draw(st.integers(1, 4)), n, draw(st.sampled_from([n, n + 1, 2.5])),
                            sorted(draw(st.lists(st.integers(1, 20), min_size=1,
                                                 max_size=3)), reverse=True)),
                     "ps_demand": [draw(st.sampled_from([1, 2]))]})
    ps = [{"name": f"p{k}", "capacity": [draw(st.sampled_from([1, 2, 3]))]}
          for k in range(1 if n_jobs == 3 else draw(st.integers(1, 2)))]
    return {"format": "oasis-instance/1", "name": "few-ps", "horizon": horizon,
            "resources": ["slot"],
            "worker_servers": [{"name": "w", "capacity": [draw(st.integers(1, 4))]}],
            "ps_servers": ps, "jobs": jobs}


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(_few_ps())
@pytest.mark.parametrize("options", [None, PLAIN, Options(packing="server")])
def test_random_binding_ps_pools_match_bruteforce(options, d):
    instance = instance_from_dict(d)
    expected = best_utility(instance)
    for modeler in ("highspy", "pyomo", "pulp"):
        sched, rep = solve(instance, modeler=modeler, options=options)
        assert rep.status is SolveStatus.OPTIMAL
        assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected), (modeler, d)
        assert validate(instance, sched).feasible
