"""Racers that share incumbents (issue 22 round 10): a schedule one racer finds is handed to
the others' running HiGHS (``backends.take_schedules``, ``race.solve_portfolio(share=True)``).
The optimum is the brute force's and the comparator's, every schedule validates, and a
handed-over schedule becomes the receiver's incumbent."""

from __future__ import annotations

import sys
from pathlib import Path

from bruteforce import best_utility
from oasis_opt.formulations.common import PLAIN, prepare
from test_route_rule import tiny_heterogeneous

from oasis_opt import algorithms
from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict
from oasis_opt.model import REL_TOL
from oasis_opt.offline import SolveStatus, backends, race, solve
from oasis_opt.offline.clock import Clock, Tracker
from oasis_opt.offline.report import extract
from oasis_opt.validate import validate


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(b))


def once(schedule):
    """An inbox that holds ``schedule`` at its first query and nothing after."""
    left = [schedule]
    return lambda: left.pop() if left else None


def comparator_optimum(instance) -> float:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import direct_highspy
    h = direct_highspy.build(instance)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return float(h.getInfo().objective_function_value)


def best_online(instance):
    return max((algorithms.run(n, instance) for n in ("fifo", "rrh", "tetris")),
               key=lambda s: s.total_utility)


def test_a_handed_over_schedule_becomes_the_incumbent():
    """PLAIN on mixed-2r-s3 without a start, its inbox holding the optimal schedule: HiGHS
    takes it at its first query (received and accepted once: HiGHS's incumbent at the next
    query) and proves that optimum. Its presolve's aggregator rejects the same schedule
    (its image in the reduced space violates a row), so the rule is off here
    (``presolve_rule_off`` bit 12; docs/offline-journal.md round 10). A schedule no better than
    the incumbent is not handed over."""
    from oasis_opt.formulations import compact_highspy
    instance = generate("mixed-2r", seed=3)
    prep = prepare(instance, PLAIN)
    best, rep = solve(instance, options=PLAIN)
    assert rep.status is SolveStatus.OPTIMAL
    clock = Clock(60.0)
    m = compact_highspy.build(instance, prep=prep)
    h = backends.highspy_mip(m, clock, Tracker(clock, None), 0.0, 0, None)
    h.setOptionValue("presolve_rule_off", 1 << 12)
    counts = backends.take_schedules(h, m, once(best))
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    assert counts == {"received": 1, "accepted": 1}
    assert close(h.getInfo().objective_function_value, rep.objective)
    assert h.getInfo().mip_node_count <= 1  # handed the optimum, HiGHS only proves it
    # from the optimum as MIP start (kept: the same presolve rule off; with it on, whether
    # presolve keeps a start depends on which optimal schedule it is), the online schedule
    # in the inbox is worse than the incumbent at the first query: not handed over
    clock = Clock(60.0)
    h = backends.highspy_mip(m, clock, Tracker(clock, None), 0.0, 0, best)
    h.setOptionValue("presolve_rule_off", 1 << 12)
    counts = backends.take_schedules(h, m, once(best_online(instance)))
    h.run()
    assert counts == {"received": 0, "accepted": 0}
    assert close(h.getInfo().objective_function_value, rep.objective)
    assert validate(instance, best).feasible


def test_sharing_racers_prove_the_brute_force_and_comparator_optimum():
    """The seed race with sharing on, both racers at once and staggered, on a tiny
    heterogeneous instance (brute force) and on mixed-2r-s3 and ps-heavy-s0 (the plain
    comparator, benchmarks/direct_highspy.py): the same proven optimum, a schedule that
    validates, a bound that covers it."""
    for instance in (instance_from_dict(tiny_heterogeneous()), generate("mixed-2r", seed=3),
                     generate("ps-heavy", seed=0)):
        expected = best_utility(instance) if instance.name == "tiny-mixed" \
            else comparator_optimum(instance)
        prep = prepare(instance, PLAIN)
        floor = best_online(instance)
        for delays in ([0.0, 0.0], [0.0, 0.05]):
            clock = Clock(60.0)
            raw = race.solve_portfolio([prep, prep], [0, 1], clock, Tracker(clock, None), 0.0,
                                       floor, delays, share=True)
            assert raw.status is SolveStatus.OPTIMAL, instance.name
            assert close(raw.objective, expected), (instance.name, raw.objective, expected)
            assert raw.bound >= expected - REL_TOL * max(1.0, expected)
            assert "shared" in raw.extras
            sched = extract(prep, raw)
            assert validate(instance, sched).feasible
            assert close(sched.total_utility, expected)
