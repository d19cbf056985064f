"""One wall-clock deadline shared by every loop and every HiGHS run of a solve (issue 22).

A time limit is a promise about the whole call (SPEC §6: the answer within ``1.1·S + 10`` s).
It breaks as soon as one step takes "at least a little" past it: a loop that grants each
round a minimum slice, a HiGHS run given ``max(left, 0.1)`` seconds, a packing MILP with a
fixed 2 s. So every step asks the same object what is left, a step that would start past the
deadline does not start, and every ``Highs`` object that runs under it is interrupted by
callback once the deadline has passed. HiGHS's own ``time_limit`` means two things: an LP
run compares it with the run time the ``Highs`` object has accumulated over all its runs
(``getRunTime``; ``clearModel`` does not reset it), so a limit for one more LP run is that
plus the seconds it may take; a MIP run compares it with its own run's time (its solver
keeps its own clock), so a MIP's limit is just its seconds (``run_limit``).

``Deadline(None)`` never passes: the same code runs without a limit.
"""

from __future__ import annotations

import math
import time
from typing import Any

from . import highs


class Deadline:
    """The instant ``at`` (``time.perf_counter()`` seconds) after which no step starts and every
    running HiGHS solve is interrupted; ``None``: no deadline."""

    def __init__(self, at: float | None = None) -> None:
        self.at = at

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        """The deadline ``seconds`` from now (None: none)."""
        return cls(None if seconds is None else time.perf_counter() + seconds)

    def left(self) -> float:
        """Seconds left (``inf`` without a deadline; negative once it has passed)."""
        return math.inf if self.at is None else self.at - time.perf_counter()

    def passed(self) -> bool:
        return self.at is not None and time.perf_counter() >= self.at

    def before(self, seconds: float) -> Deadline:
        """The same deadline less ``seconds`` (a reserve kept for the steps after a phase)."""
        return self if self.at is None else Deadline(self.at - seconds)

    def earlier(self, at: float | None) -> Deadline:
        """The earlier of this deadline and ``at`` (a phase's own end)."""
        if at is None:
            return self
        return Deadline(at if self.at is None else min(self.at, at))

    def end_now(self) -> None:
        """The deadline is now: a phase whose goal is met ends as if its time were up (a
        deadline made for the phase by ``earlier`` or ``before``, which no one else holds)."""
        self.at = time.perf_counter()

    def slice(self, want: float | None) -> float:
        """Seconds a step that wants ``want`` (None: as long as it takes) may run: never more
        than what is left, and ≤ 0 when the step must not start."""
        left = self.left()
        return left if want is None else min(want, left)

    def highs_limit(self, h: Any, want: float | None, *, mip: bool = False) -> bool:
        """Let ``h``'s next run (a MIP when ``mip``) take ``slice(want)`` seconds (HiGHS's
        infinity for no limit; ``run_limit``); False when nothing is left and the run must not
        start."""
        import highspy
        s = self.slice(want)
        if s <= 0:
            return False
        h.setOptionValue("time_limit", run_limit(h, s, mip=mip) if math.isfinite(s)
                         else highspy.kHighsInf)
        return True

    def watch(self, h: Any) -> None:
        """Interrupt every MIP, simplex and interior-point run of ``h`` once the deadline has
        passed (checked by HiGHS at its callbacks, several times a second). Once per Highs
        object: the callbacks stay subscribed for all its later runs."""
        if self.at is None:
            return

        def stop(e: Any) -> None:
            if time.perf_counter() >= self.at or highs.interrupted():  # type: ignore[operator]
                e.interrupt()
        h.cbMipInterrupt.subscribe(stop)
        h.cbSimplexInterrupt.subscribe(stop)
        h.cbIpmInterrupt.subscribe(stop)


def run_limit(h: Any, seconds: float, *, mip: bool = False) -> float:
    """The ``time_limit`` that lets ``Highs`` object ``h``'s next run take ``seconds``. An LP
    run compares its limit with the run time ``h`` has accumulated over all its runs (a master
    re-solved every round), so a plain ``seconds`` stops it at once once ``h`` has run that
    long in total: the limit is that total plus ``seconds``. A MIP run (``mip``) times itself
    from its own start (HiGHS 1.16; a master's MILP after its LPs, a packer reused for every
    slot), and the accumulated time added would let it run that much longer."""
    return float(seconds) if mip else float(h.getRunTime() + seconds)
