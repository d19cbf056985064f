"""The CI regression guard: how one OASiS decision's cost grows within a run.

The dual subroutine (``oasis_opt.online.subroutine.best_schedule``, one call per arrival) costs
O(S·(H+K)·N) for its slot tables and O(S·N·V) for its DP, so doubling the horizon T, the
servers H = K or the workload V should at most double a call: growth exponent
``log2(t(2x)/t(x)) ≈ 1``. A change that makes one of these passes quadratic measures ≈ 2 and
fails here (limit ``oasis_opt.bench.GROWTH_LIMIT`` = 1.6).

Why the subroutine on fixed inputs rather than whole OASiS runs: it is a pure function, so x
and 2x differ only in the size under test (a whole run on a larger instance also admits other
jobs, which changes the work done). The two sizes are timed interleaved, many calls per sample,
and the exponent comes from the median of the paired ratios, so load on the shared machine
hits both sides. Nothing absolute is asserted. When an exponent exceeds the limit, it is
measured once more with twice the rounds and the lower of the two counts: a real regression
fails both times, a burst of load rarely does.

    pytest benchmarks/bench_scaling.py --benchmark-only
"""

from __future__ import annotations

import pytest

from oasis_opt.bench import GROWTH_BASE, GROWTH_LIMIT, growth, growth_case
from oasis_opt.online.subroutine import best_schedule

ROUNDS = 11


@pytest.mark.parametrize("axis", list(GROWTH_BASE))
def test_growth_exponent(benchmark, axis: str) -> None:
    g = growth(axis, rounds=ROUNDS)
    if g.exponent > GROWTH_LIMIT:
        again = growth(axis, rounds=2 * ROUNDS)
        g = min(g, again, key=lambda x: x.exponent)
    large = growth_case(axis, 2)
    # The table's time is one call at the doubled size; the guard is in extra_info.
    benchmark.pedantic(best_schedule, args=large, rounds=5, iterations=1)
    benchmark.extra_info.update(
        axis=axis, exponent=round(g.exponent, 3), ratio=round(g.ratio, 3),
        small_ms=round(g.small_ms, 3), large_ms=round(g.large_ms, 3), limit=GROWTH_LIMIT,
        small_size=g.small, large_size=g.large, rounds=g.rounds)
    assert g.exponent <= GROWTH_LIMIT, (
        f"a decision's cost grows as {axis}^{g.exponent:.2f} ({g.small_ms:.2f} ms at "
        f"{g.small} -> {g.large_ms:.2f} ms at {g.large}); expected linear (≈ 1), "
        f"limit {GROWTH_LIMIT}")
