"""The class and energy rows (``Options.class_rows``, ``Options.energy_rows``; issue 22 round
9, off by default): each back-end proves the brute force's optimum with them, on the
hand-built tiny instances and on random ones whose jobs share demand vectors (where the class
rows exist), and the schedules validate; the rows are what their docstrings say."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from bruteforce import best_utility
from hypothesis import given, settings
from hypothesis import strategies as st
from oasis_opt.formulations.common import PLAIN, Options, prepare
from test_offline import TINY, close, inst, job, table

from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict
from oasis_opt.offline import SolveStatus, solve
from oasis_opt.validate import validate

ROWS = {"plain": replace(PLAIN, class_rows=True, energy_rows=True),
        "server": Options(packing="server", class_rows=True, energy_rows=True),
        "default": Options(class_rows=True, energy_rows=True)}


def _proves_the_brute_force(instance, options: Options) -> None:
    expected = best_utility(instance)
    for modeler in ("pyomo", "pulp", "highspy"):
        sched, rep = solve(instance, modeler=modeler, options=options)
        assert rep.status is SolveStatus.OPTIMAL
        assert close(rep.objective, expected), (modeler, options, rep.objective, expected)
        assert validate(instance, sched).feasible


@pytest.mark.parametrize("name", sorted(TINY))
def test_rows_keep_the_brute_force_optimum(name):
    instance = instance_from_dict(TINY[name])
    for options in ROWS.values():
        _proves_the_brute_force(instance, options)


def test_tiny_instances_have_the_rows():
    """The instances above exercise both families (not only their absence)."""
    counts = [prepare(instance_from_dict(d), ROWS["plain"]).row_counts() for d in TINY.values()]
    assert any(c.get("worker_class") for c in counts)
    assert any(c.get("ps_class") for c in counts)
    assert any(c.get("energy") for c in counts)


@st.composite
def _shared_demands(draw):
    """2–3 jobs drawn from two demand vectors (so classes of ≥ 2 jobs occur), horizon ≤ 3,
    one or two servers per pool of small capacity (so the classes' bounds round down)."""
    vec = st.lists(st.sampled_from([0.5, 1]), min_size=2, max_size=2)
    cap = st.lists(st.sampled_from([1, 1.5, 2, 3]), min_size=2, max_size=2)
    wd, pd = [draw(vec), draw(vec)], [draw(vec), draw(vec)]
    horizon = draw(st.integers(1, 3))
    n_jobs = draw(st.integers(2, 3))
    pools = {p: [{"name": f"{p}{k}", "capacity": draw(cap)}
                 for k in range(1 if n_jobs == 3 else draw(st.integers(1, 2)))]
             for p in ("w", "p")}
    jobs = []
    for i in range(n_jobs):
        k = draw(st.sampled_from([0, 0, 1]))
        jobs.append(job(f"j{i}", draw(st.integers(0, horizon - 1)), draw(st.integers(1, 3)),
                        draw(st.integers(1, 3)), draw(st.sampled_from([1, 2, 1.5])), wd[k],
                        pd[k], table(*sorted(draw(st.lists(st.integers(1, 20), min_size=1,
                                                           max_size=3)), reverse=True))))
    return inst("shared", horizon, pools["w"], pools["p"], jobs, resources=("r0", "r1"))


@settings(max_examples=30, deadline=None)
@given(_shared_demands())
def test_random_instances_with_the_rows_match_bruteforce(d):
    _proves_the_brute_force(instance_from_dict(d), ROWS["plain"])


def test_class_rows_are_the_rounded_capacity_rows():
    """Each class row bounds a class of ≥ 2 jobs of equal demand on one server and slot by
    ``⌊min_r C_hr/α_cr⌋``, only where the jobs' own bounds add up to more."""
    instance = generate("mixed", seed=0)
    prep = prepare(instance, ROWS["plain"])
    assert prep.worker_class_rows and prep.ps_class_rows
    for h, t, jobs, bound in prep.worker_class_rows:
        d = instance.worker_demand[jobs[0]]
        assert len(jobs) >= 2 and all((instance.worker_demand[i] == d).all() for i in jobs)
        assert all(i in prep.jobs_on_worker[h, t] for i in jobs)
        used = d > 0
        assert bound == int(np.floor(instance.worker_capacity[h, used] / d[used]).min())
        assert bound < prep.ub_y[list(jobs), h].sum()
    assert "worker_class" not in prepare(instance, PLAIN).row_counts()


def test_energy_rows_hold_for_the_floor_schedule():
    """Every energy row holds at a feasible schedule's completion slots (here the best
    online algorithm's on mixed-s0), and can bind: its coefficients sum above its right side."""
    from oasis_opt import algorithms
    instance = generate("mixed", seed=0)
    prep = prepare(instance, ROWS["plain"])
    assert prep.energy_rows
    sched = max((algorithms.run(name, instance) for name in ("rrh", "tetris", "oasis")),
                key=lambda s: s.total_utility)
    index = {job.id: i for i, job in enumerate(instance.jobs)}
    done = {index[j.id]: j.completion_slot for j in sched.jobs if j.completed}
    for _pool, _r, a, b, terms, rhs in prep.energy_rows:
        assert sum(c for _, c in terms) > rhs
        lhs = sum(c for i, c in terms if i in done and a <= done[i] <= b)
        assert lhs <= rhs + 1e-9
