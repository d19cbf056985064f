"""The PS counts relaxed, then made whole (``Options.ps_relaxed``, issue 22 round 10): the
highspy back-end solves the model with z continuous, repairs the solution to whole PS counts
(``formulations/ps_relax.py``) and, where no repair exists, solves the whole model. Either
way the answer is the brute force's optimum and the schedule validates."""

from __future__ import annotations

from dataclasses import replace

import highspy
import numpy as np
import pytest
from bruteforce import best_utility
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from oasis_opt.formulations import compact_highspy, ps_relax
from oasis_opt.formulations.common import PLAIN, prepare

from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict
from oasis_opt.model import REL_TOL
from oasis_opt.offline import SolveStatus, backends, solve
from oasis_opt.offline.clock import Clock, Tracker
from oasis_opt.validate import validate

RELAXED = replace(PLAIN, ps_relaxed=True)


def _job(jid: str, arrival: int, workload: int, n: int, gamma: float, utility: list,
         ps: float = 0.6) -> dict:
    return {"id": jid, "arrival": arrival, "workload": workload, "max_workers": n,
            "ps_ratio": gamma, "worker_demand": [1, 0], "ps_demand": [0, ps],
            "utility": {"kind": "table", "values": utility}}


def crowded_ps() -> dict:
    """Three jobs that each need a whole PS (0.6 of the one PS server) to run at all: with z
    continuous each runs on a quarter of one (W/ρ = 1/4) and all three finish in slot 2
    (27); whole, one PS at a time (19). No repair exists: the whole model decides."""
    return {"format": "oasis-instance/1", "name": "crowded-ps", "horizon": 3,
            "resources": ["gpu", "bw"], "worker_servers": [{"name": "w", "capacity": [3, 0]}],
            "ps_servers": [{"name": "p", "capacity": [0, 1]}],
            "jobs": [_job(j, 0, 2, 4, 8, [9, 9, 1]) for j in "abc"]}


def _backend(instance, options):
    prep = prepare(instance, options)
    clock = Clock(None)
    return prep, backends.solve_highspy(prep, clock, Tracker(clock, None), 0.0)


def test_no_repair_falls_back_to_the_whole_model():
    instance = instance_from_dict(crowded_ps())
    assert best_utility(instance) == pytest.approx(19.0)
    prep, raw = _backend(instance, RELAXED)
    assert raw.extras["ps_relaxed"] == "whole"
    assert raw.status is SolveStatus.OPTIMAL
    assert raw.objective == pytest.approx(19.0) and raw.bound == pytest.approx(19.0)
    # the relaxation alone is worth more: the repair had nothing to find
    m = compact_highspy.build(instance, prep=prep)
    assert not any(m.integer[j] for j in m.z.values())
    sched, rep = solve(instance, modeler="highspy", options=RELAXED)
    assert rep.status is SolveStatus.OPTIMAL and rep.objective == pytest.approx(19.0)
    assert validate(instance, sched).feasible


def test_repair_keeps_the_relaxations_value_on_a_generated_instance():
    instance = generate("mixed-2r", seed=0)
    _, whole = _backend(instance, PLAIN)
    prep, raw = _backend(instance, RELAXED)
    assert raw.extras["ps_relaxed"] == "repaired"
    assert raw.status is SolveStatus.OPTIMAL
    assert abs(raw.objective - whole.objective) <= REL_TOL * max(1.0, whole.objective)
    sched, rep = solve(instance, modeler="highspy", options=RELAXED)
    assert validate(instance, sched).feasible
    assert abs(rep.objective - whole.objective) <= REL_TOL * max(1.0, whole.objective)
    # the repaired PS counts are whole
    assert all(abs(v - round(v)) < 1e-6 for v in raw.values[1].values())


def test_repair_finds_whole_counts_or_says_none():
    instance = instance_from_dict(crowded_ps())
    m = compact_highspy.build(instance, prep=prepare(instance, RELAXED))
    x = np.zeros(m.num_col)  # nothing runs: whole at once
    fixed = ps_relax.repair(m, x)
    assert fixed is not None and float(np.dot(m.cost, fixed)) == 0.0
    # all three finishing in slot 2 needs three PSs on a server that holds one
    lp = m.lp()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(lp)
    h.run()
    relaxed = np.asarray(h.getSolution().col_value)
    assert float(np.dot(m.cost, relaxed)) == pytest.approx(27.0)
    assert ps_relax.repair(m, relaxed) is None


@st.composite
def _fractional_ps(draw) -> dict:
    """1–3 jobs whose γ exceeds their most workers (a PS could be shared in the relaxation)
    on one or two PS servers with fractional demands."""
    n_jobs = draw(st.integers(1, 3))
    horizon = draw(st.integers(1, 3))
    jobs = [_job(f"j{k}", draw(st.integers(0, horizon - 1)), draw(st.integers(1, 4)),
                 draw(st.integers(1, 3)), draw(st.sampled_from([4, 8])),
                 sorted(draw(st.lists(st.integers(1, 20), min_size=1, max_size=3)),
                        reverse=True), draw(st.sampled_from([0.4, 0.6, 1.0])))
            for k in range(n_jobs)]
    ps = [{"name": f"p{k}", "capacity": [0, draw(st.sampled_from([0.5, 1.0, 1.5]))]}
          for k in range(1 if n_jobs == 3 else draw(st.integers(1, 2)))]
    return {"format": "oasis-instance/1", "name": "fractional-ps", "horizon": horizon,
            "resources": ["gpu", "bw"],
            "worker_servers": [{"name": "w", "capacity": [draw(st.integers(1, 4)), 0]}],
            "ps_servers": ps, "jobs": jobs}


#: A draw that failed (round 24): FIFO's start (2.0) made HiGHS end the relaxed model
#: "Optimal" at 3.0 with the start's vector, worth 2.0, which the repair kept; the route
#: answered "optimal" 2.0 with a bound of 3.0. It is a disagreement now, solved again.
_START_KEPT = {
    "format": "oasis-instance/1", "name": "fractional-ps", "horizon": 2,
    "resources": ["gpu", "bw"], "worker_servers": [{"name": "w", "capacity": [2, 0]}],
    "ps_servers": [{"name": "p0", "capacity": [0, 1.0]}],
    "jobs": [_job("j0", 0, 1, 1, 4, [1], 0.4), _job("j1", 0, 1, 1, 4, [2, 1], 1.0),
             _job("j2", 0, 1, 1, 4, [1], 0.4)]}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(_fractional_ps())
@example(_START_KEPT)
def test_random_shared_ps_pools_match_bruteforce(d):
    instance = instance_from_dict(d)
    expected = best_utility(instance)
    sched, rep = solve(instance, modeler="highspy", options=RELAXED)
    assert rep.status is SolveStatus.OPTIMAL
    assert abs(rep.objective - expected) <= REL_TOL * max(1.0, expected), d
    assert validate(instance, sched).feasible
