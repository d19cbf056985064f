"""The time of one offline solve: its deadline and its progress.

``Clock`` holds the call's one ``Deadline`` (``formulations/deadline.py``): the instant
``start + time_limit`` fixed at the first line of ``solve``. Every step asks it what is left,
the HiGHS callbacks interrupt at it, and column generation is handed the same instant (less
its reserve for validation, ``Deadline.before``) rather than a clock of its own.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..formulations.deadline import Deadline
from ..model import REL_TOL, Schedule

#: The longest time limit taken (seconds); waits and solver options overflow far beyond it.
MAX_TIME_LIMIT = 1e7

#: Progress callback: (elapsed seconds, incumbent utility or None, bound).
Progress = Callable[[float, "float | None", float], None]


class Clock:
    """The start of one call and its ``deadline`` (``start + time_limit``; a ``Deadline`` that
    never passes without a limit)."""

    def __init__(self, time_limit: float | None) -> None:
        self.start = time.perf_counter()
        self.limit = time_limit
        self.deadline = Deadline(None if time_limit is None else self.start + time_limit)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float | None:
        """Seconds left (negative once past the deadline); None without a limit."""
        return None if self.deadline.at is None else self.deadline.left()

    def reserving(self, seconds: float) -> Clock:
        """The same start with the deadline ``seconds`` earlier: the clock of a phase that
        must leave them to the steps after it (the lazy floor's rest, ``floor.Floor``)."""
        phase = copy.copy(self)
        phase.deadline = self.deadline.before(seconds)
        return phase

    def within(self, seconds: float) -> Clock:
        """The same start with the deadline at most ``seconds`` from now: the clock of a
        step that may take no longer (the second opinion on an optimum proven without
        presolve, ``report.second_opinion``)."""
        phase = copy.copy(self)
        phase.deadline = self.deadline.earlier(time.perf_counter() + seconds)
        return phase



@dataclass(eq=False)
class Tracker:
    """The best incumbent and the least bound seen so far; every change is appended to the
    history and reported to ``on_progress`` (an incumbent withdrawn too, ``retract``)."""

    clock: Clock
    on_progress: Progress | None
    incumbent: float | None = None
    bound: float = math.inf
    history: list[tuple[float, float | None, float]] = field(default_factory=list)
    #: the floor's algorithms in the order they were considered: each one's utility, or why
    #: it has none ("skipped: time budget", "failed: …"); the report's ``floor_runs``
    floor_runs: dict[str, float | str] = field(default_factory=dict)

    #: two routes update one tracker from two threads (``route_race``)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: told each schedule of the floor, validated (``offer``)
    on_schedule: Callable[[Schedule], None] | None = None

    def offer(self, schedule: Schedule) -> None:
        """``schedule`` passed the validator (one of the floor's): tell ``on_schedule``."""
        if self.on_schedule is not None:
            with self.lock:
                self.on_schedule(schedule)

    def update(self, incumbent: float | None = None, bound: float | None = None) -> None:
        with self.lock:
            self._update(incumbent, bound)

    def retract(self, incumbent: float | None) -> None:
        """Withdraw every incumbent above ``incumbent`` (the best schedule known valid, None
        for none): the solver reported one the validator refused (``report.solved_again``).
        The history keeps what was reported then, and gains a point with the withdrawn one."""
        with self.lock:
            if self.incumbent is None or (incumbent is not None and
                                          self.incumbent <= incumbent):
                return
            self.incumbent = incumbent
            point = (round(self.clock.elapsed(), 4), self.incumbent, self.bound)
            self.history.append(point)
            if self.on_progress is not None:
                self.on_progress(*point)

    def retract_bound(self, bound: float) -> None:
        """Withdraw a bound that a valid schedule contradicts (it earns more: the solver's
        error, not a relaxation's, ``report.second_opinion``): the least bound is ``bound``
        from here on, higher or not (+inf: none, and ``report.finish`` settles the trivial
        bound). The history keeps what was reported then, and gains a point with the bound
        withdrawn (``finish``'s where none is left)."""
        with self.lock:
            if bound == self.bound:
                return
            self.bound = float(bound)
            if not math.isfinite(self.bound):
                return
            point = (round(self.clock.elapsed(), 4), self.incumbent, self.bound)
            self.history.append(point)
            if self.on_progress is not None:
                self.on_progress(*point)

    def _update(self, incumbent: float | None, bound: float | None) -> None:
        changed = False
        if incumbent is not None and math.isfinite(incumbent) and (
                self.incumbent is None or incumbent > self.incumbent + REL_TOL * max(
                    1.0, abs(incumbent))):
            self.incumbent, changed = float(incumbent), True
        if bound is not None and math.isfinite(bound) and bound < self.bound - REL_TOL * max(
                1.0, abs(bound)):
            self.bound, changed = float(bound), True
        if changed:
            point = (round(self.clock.elapsed(), 4), self.incumbent, self.bound)
            self.history.append(point)
            if self.on_progress is not None:
                self.on_progress(*point)

