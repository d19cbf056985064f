"""The last resort of ``oasis-opt solve --time-limit S``: it returns within ``1.1·S + 10``
seconds with the best schedule found and a valid bound (SPEC §6) even where a solver does
not. Every loop of the package watches the deadline and HiGHS stops at its ``time_limit``,
but not in every phase: HiGHS 1.16's MIP presolve (``HPresolve::strengthenInequalities``)
was seen looping for minutes on one small MILP of the trace-scale search, and nothing in the
process can stop a call into the solver.

``Lifeline`` keeps what the solve has told so far — the schedules the floor made, already
validated (``offline.solve(on_schedule=)``), the least bound and the progress points
(``on_progress``) — and a daemon thread. Where the solve has not returned ``WRITE + REST``
(5) seconds before the promise ends, the thread runs the floor's algorithms the solve had
not run yet (until ``WRITE`` seconds before the promise ends at the latest), then writes
the best schedule and the least bound as the answer (status ``time_limit``, route
``lifeline``; with no floor the empty schedule) through the command's own writer, stops this
process's child processes and ends the process (``os._exit``: the solver's thread cannot be
interrupted; highspy lets other threads run while HiGHS works). Only the command line holds
one: a library call cannot end its caller's process.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence

from .model import Instance, Schedule

#: The promise of SPEC §6: ``SLACK_FACTOR·S + SLACK_SECONDS``.
SLACK_FACTOR = 1.1
SLACK_SECONDS = 10.0
#: Seconds before the promise's end by which the lifeline writes: the schedule file (tens of
#: MB at trace scale) and the report must be out by then.
WRITE = 3.0
#: Seconds before that at which the lifeline wakes, to run the floor's algorithms that the
#: solve had not run (the lazy floor leaves OASiS, oasis-adaptive and DRF until after the
#: solve), each stopped by the write (``limits.deadline``). As late as it can be: a solve
#: with Pyomo or PuLP may legitimately come back seconds past S (docs/offline.md).
REST = 2.0
#: Seconds that writing the answer's schedule file takes per allocation (one job's slot) on a
#: busy machine, beside the solve's thread, which keeps half of the interpreter: 2.2 s for
#: the 31 879 allocations (14 MB) of a partial OASiS on the whole Philly trace, alone at load
#: 3. The lifeline wakes, and stops the floor's runs, this much earlier for the best
#: schedule it holds: with ``WRITE`` alone that file ended the command at 78 s of a 76 s
#: promise. A schedule the rest of the floor makes late is kept only where it can still be
#: written in time.
WRITE_PER_ALLOCATION = 1.5e-4

Write = Callable[[Schedule, float, list[tuple[float, float | None, float]]], None]


class Lifeline:
    """What the solve has told so far, and the thread that wakes at ``wake`` and writes the
    answer by ``write_at`` (``time.perf_counter`` instants) unless ``close()`` came first.
    ``names``: the floor's algorithms (the command's ``--floor``, or the built-in ones);
    ``instance``: theirs to run; ``write(schedule, bound, history)`` writes the answer, on
    the lifeline's thread."""

    def __init__(self, wake: float, write_at: float, instance: Instance,
                 names: Sequence[str], write: Write | None, command: str = "solve",
                 per_allocation: float = 0.0) -> None:
        self.wake, self.write_at = wake, write_at
        #: seconds per allocation of the schedule ``write`` writes (``WRITE_PER_ALLOCATION``
        #: where it writes a schedule file), and what the best one so far would take
        self.per_allocation = per_allocation
        self.write_cost = 0.0
        self.instance, self.names, self.command = instance, tuple(names), command
        #: None until the command can answer without the solve (``ratio``: from the start,
        #: ``compare(on_solve=)``); a lifeline without one at its wake waits for it
        self.write = write
        self.schedule: Schedule | None = None
        self.seen: set[str] = set()
        self.bound = math.inf
        self.history: list[tuple[float, float | None, float]] = []
        self.lock = threading.Lock()
        self.done = False
        self.thread = threading.Thread(target=self._wait, name="oasis-lifeline", daemon=True)

    @classmethod
    def for_limit(cls, time_limit: float, start: float, instance: Instance,
                  names: Sequence[str], write: Write | None, command: str = "solve",
                  schedule_file: bool = False) -> Lifeline:
        """The lifeline of ``oasis-opt COMMAND`` started at ``start`` with
        ``--time-limit``; ``schedule_file``: its answer includes the schedule's file."""
        end = start + SLACK_FACTOR * time_limit + SLACK_SECONDS
        return cls(end - WRITE - REST, end - WRITE, instance, names, write, command,
                   WRITE_PER_ALLOCATION if schedule_file else 0.0)

    def start(self) -> Lifeline:
        self.thread.start()
        return self

    def on_schedule(self, schedule: Schedule) -> None:
        """``offline.solve``'s ``on_schedule``: a schedule of the floor, validated. The best
        is kept where it can still be written by the write (``WRITE_PER_ALLOCATION``)."""
        self.seen.add(str(schedule.algorithm))
        if self.schedule is None or schedule.total_utility > self.schedule.total_utility:
            cost = self.per_allocation * sum(len(job.allocations) for job in schedule.jobs)
            if not cost or time.perf_counter() + cost <= self.write_at:
                self.schedule, self.write_cost = schedule, cost

    def on_progress(self, seconds: float, incumbent: float | None, bound: float) -> None:
        """``offline.solve``'s ``on_progress``: the least bound, and the points."""
        self.bound = min(self.bound, bound)
        self.history.append((seconds, incumbent, bound))

    def close(self) -> None:
        """The solve returned: the lifeline writes nothing (if it is writing already, this
        waits, and the process ends with it)."""
        with self.lock:
            self.done = True

    def _sleep_until_wake(self) -> bool:
        """Sleep until the wake, earlier by the best schedule's write; False if the solve
        returned meanwhile."""
        while (left := self.wake - self.write_cost - time.perf_counter()) > 0:
            if self.done:
                return False
            time.sleep(min(left, 0.5))
        return not self.done

    def _wait(self) -> None:
        if not self._sleep_until_wake():
            return
        # a command that cannot answer yet answers as soon as it can (the lifeline gave up,
        # and ``ratio``'s solve given a second after its algorithms took 28.6 s more)
        while self.write is None:
            if self.done:
                return
            time.sleep(0.05)
        write = self.write
        self._rest()  # stops by ``write_at``; then the answer goes out at once
        with self.lock:
            if self.done:
                return
            self.done = True
            status = 0
            try:
                # no floor (``--floor ''``) and nothing found: the empty schedule is valid
                schedule = self.schedule or Schedule.from_counts(self.instance, "none", {}, {})
                bound = self.bound
                if not math.isfinite(bound):  # the solve told none yet: Σ f_i(1) holds
                    from .utility import trivial_bound
                    bound = trivial_bound(job.utility for job in self.instance.jobs)
                write(schedule, max(bound, schedule.total_utility), list(self.history))
            except BaseException as err:  # noqa: BLE001 — the process ends either way
                sys.stderr.write(f"oasis-opt {self.command}: error: {err}\n")
                status = 1
            finally:
                _end(status)

    def _rest(self) -> None:
        """Run the floor's algorithms the solve had not run, each until the write."""
        from . import algorithms
        from .limits import OutOfTime, deadline
        from .offline.floor import FLOOR_PARAMS
        for name in self.names:
            stop = self.write_at - self.write_cost
            if name in self.seen or self.done or time.perf_counter() >= stop:
                continue
            try:
                with deadline(stop):
                    schedule = algorithms.run(name, self.instance, **FLOOR_PARAMS.get(name, {}))
            except OutOfTime:
                return
            except Exception:  # noqa: BLE001 — as the floor: a failing algorithm is left out
                continue
            if not self.done:
                self.on_schedule(schedule)


class LastResort:
    """A thread that, unless ``close()`` came first, calls ``answer()`` at the instant ``at``
    (``time.perf_counter``) and ends the process with the status it returns (1 and one line
    on stderr if it raises): the promise of a command whose work runs in this process and
    may never return — ``oasis-opt adversary --budget S``, whose candidates run a user's
    scheduler (``Lifeline`` is ``solve``'s and ``ratio``'s, which also run the floor)."""

    def __init__(self, at: float, answer: Callable[[], int], command: str) -> None:
        self.at, self.answer, self.command = at, answer, command
        self.lock = threading.Lock()
        self.done = False
        self.thread = threading.Thread(target=self._wait, name="oasis-last-resort",
                                       daemon=True)

    @classmethod
    def for_budget(cls, budget: float, start: float, answer: Callable[[], int],
                   command: str) -> LastResort:
        """Answering by ``SLACK_FACTOR·budget + SLACK_SECONDS`` after ``start``, ``WRITE``
        seconds before that to write."""
        return cls(start + SLACK_FACTOR * budget + SLACK_SECONDS - WRITE, answer, command)

    def start(self) -> LastResort:
        self.thread.start()
        return self

    def close(self) -> None:
        """The work returned: nothing is answered from here (if the answer is being written,
        this waits, and the process ends with it)."""
        with self.lock:
            self.done = True

    def _wait(self) -> None:
        while (left := self.at - time.perf_counter()) > 0:
            if self.done:
                return
            time.sleep(min(left, 0.25))
        with self.lock:
            if self.done:
                return
            self.done = True
            status = 1
            try:
                status = self.answer()
            except BaseException as err:  # noqa: BLE001 — the process ends either way
                from .errors import one_line
                sys.stderr.write(f"oasis-opt {self.command}: error: {one_line(str(err))}\n")
            finally:
                _end(status)


def _end(status: int) -> None:
    """Stop this process's children (racers, guarded solves, pricing workers), flush the
    output and end the process now."""
    import multiprocessing
    for child in multiprocessing.active_children():
        child.kill()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
