"""Progress text shared by the command line and the experiments' step lines."""

from __future__ import annotations

import math

from oasis_opt.progress import solve_lines


def test_solve_lines_throttle_unless_the_incumbent_improves():
    seen: list[tuple[float, str]] = []
    show = solve_lines(lambda s, text: seen.append((s, text)), every=10.0)
    show(0.0, None, math.inf)        # first call: always a line
    show(1.0, None, 120.0)           # same incumbent within 10 s: dropped
    show(2.0, 100.0, 120.0)          # a new incumbent: a line at once
    show(3.0, 100.0, 110.0)          # dropped
    show(12.5, 100.0, 105.0)         # 10 s after the last line: a line
    assert [s for s, _ in seen] == [0.0, 2.0, 12.5]
    assert seen[0][1].split() == ["incumbent", "–", "bound", "inf", "gap", "–"]
    assert seen[1][1].split() == ["incumbent", "100", "bound", "120", "gap", "20.00%"]
    assert seen[2][1].endswith("gap 5.00%")


def test_solve_lines_gap_is_never_negative():
    seen: list[str] = []
    show = solve_lines(lambda s, text: seen.append(text))
    show(0.0, 100.0, 99.9999)  # a bound a hair below the incumbent (solver tolerance)
    assert seen == [f"incumbent {'100':>10}  bound 99.9999  gap 0.00%"]
