"""Servers that hold many workers of one job class (``generate --max-share``): two bugs lived
here — the column-generation master capped a demand class at one job's count ("server 0 in slot
1 holds no pattern", and a master tighter than the problem), and the compact MILP's pattern
search enumerated non-maximal vectors for minutes under a 30 s time limit."""

from __future__ import annotations

import pytest

from oasis_opt.generator import generate
from oasis_opt.offline import solve
from oasis_opt.validate import validate


@pytest.mark.slow
def test_colgen_bound_covers_the_compact_optimum_on_large_servers():
    inst = generate("small", seed=0, jobs=20, horizon=8, max_share=0.1)
    exact, rep = solve(inst, method="compact")
    assert rep.status.value == "optimal"
    cg, crep = solve(inst, method="colgen", time_limit=20)
    assert validate(inst, cg).feasible
    assert crep.bound >= rep.objective * (1 - 1e-6)
    assert crep.objective <= rep.objective * (1 + 1e-6)


@pytest.mark.slow
def test_pattern_search_is_bounded_on_many_classes():
    # 40 jobs on servers 20x the size of one worker: the pattern search gives up within its
    # node budget and the server packing proves the optimum.
    inst = generate("small", seed=0, jobs=40, horizon=8, max_share=0.05)
    sched, rep = solve(inst, time_limit=60)
    assert rep.status.value == "optimal"
    assert validate(inst, sched).feasible


def test_the_pattern_count_stops_once_asked_to():
    """``prepare``'s ``stop`` is asked while the patterns are counted (the default route's
    early prober ends the count with its proof, issue 22 round 44): once it is true,
    ``Stopped``; while it is false, the same patterns as without it."""
    from oasis_opt.formulations.common import Options, Stopped, prepare
    inst = generate("hard", seed=5)
    plain = prepare(inst, Options())
    assert plain.packing == "pattern"
    asked = [0]

    def never() -> bool:
        asked[0] += 1
        return False
    watched = prepare(inst, Options(), stop=never)
    assert asked[0] > 1 and watched.packing == "pattern"
    assert watched.worker_patterns == plain.worker_patterns
    assert watched.ps_patterns == plain.ps_patterns
    total, asked[0] = asked[0], 0

    def later() -> bool:  # true half-way through the count
        asked[0] += 1
        return asked[0] > total // 2
    with pytest.raises(Stopped):
        prepare(inst, Options(), stop=later)
    assert asked[0] == total // 2 + 1
    with pytest.raises(Stopped):
        prepare(inst, Options(), stop=lambda: True)
