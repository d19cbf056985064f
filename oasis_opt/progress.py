"""Progress on long work: a rich bar on stderr (stdout stays free for ``--json``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class _Silent:
    def advance(self, steps: int = 1) -> None:
        pass

    def describe(self, text: str) -> None:
        pass


class _Bar:
    def __init__(self, progress: Any, task: Any) -> None:
        self._p, self._t = progress, task

    def advance(self, steps: int = 1) -> None:
        self._p.advance(self._t, steps)

    def describe(self, text: str) -> None:
        self._p.update(self._t, description=text)


@contextmanager
def progress_bar(enabled: bool, total: int, description: str = "",
                 transient: bool = False) -> Iterator[_Bar | _Silent]:
    """Yields a bar with ``advance()`` and ``describe(text)``; does nothing when disabled."""
    if not enabled:
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                  transient=transient) as p:
        yield _Bar(p, p.add_task(description, total=total))


def step_lines(enabled: bool) -> Callable[[str], None] | None:
    """One stderr line per step of a long task (the trace experiment's import, algorithms and
    solve rounds; above the bar when one is live), or None when disabled."""
    if not enabled:
        return None
    from rich.console import Console
    console = Console(stderr=True, highlight=False)

    def show(line: str) -> None:
        console.print(line, markup=False, soft_wrap=True)
    return show


def solve_lines(emit: Callable[[float, str], None], every: float = 1.0
                ) -> Callable[[float, float | None, float], None]:
    """``offline.solve``'s ``on_progress(seconds, incumbent, bound)`` as text for ``emit(seconds,
    text)``, the same on the command line and in the experiments' step lines: a line whenever
    the incumbent improves, otherwise at most one every ``every`` seconds of the solve."""
    last: list[Any] = [-math.inf, None]

    def show(seconds: float, incumbent: float | None, bound: float) -> None:
        if incumbent == last[1] and seconds - last[0] < every:
            return
        last[0], last[1] = seconds, incumbent
        inc = "–" if incumbent is None else f"{incumbent:.8g}"
        gap = "–" if not incumbent or not math.isfinite(bound) else \
            f"{max(0.0, bound - incumbent) / abs(incumbent):.2%}"
        emit(seconds, f"incumbent {inc:>10}  bound {bound:.8g}  gap {gap}")
    return show


def round_text(r: Any) -> str:
    """One round of column generation's bound phase (``colgen.Round``) as text, the same on
    the command line and in the experiments' step lines: the round, bound, incumbent, gap,
    and what the round is doing (pricing k/n jobs, or the master's columns and LP)."""
    import math
    if getattr(r, "note", ""):  # a phase left out for want of memory
        return f"column generation: {r.note}"
    where = f"pricing {r.priced}/{r.jobs} jobs" if r.priced is not None else \
        f"{r.columns} columns, LP {r.lp:.8g}"
    gap = f"{r.gap:.2%}" if math.isfinite(r.gap) else "–"
    return (f"round {r.iteration:4d}  bound {r.bound:.8g}  incumbent {r.incumbent:.8g}  "
            f"gap {gap}  ({where})")
