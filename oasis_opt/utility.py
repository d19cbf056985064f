"""Utility families f(d): the value of finishing a job with duration d = last_slot - arrival + 1.

Every family is non-negative and non-increasing in d (SPEC §1). ``values(n)`` returns
``[f(1), …, f(n)]`` as one numpy array, which is how algorithms read utilities.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np


@dataclass(frozen=True)
class Sigmoid:
    """``f(d) = gamma1 / (1 + exp(gamma2·(d − gamma3)))``: priority, urgency, target duration."""

    gamma1: float
    gamma2: float
    gamma3: float
    kind: ClassVar[str] = "sigmoid"

    def values(self, n: int) -> np.ndarray:
        return self._f(np.arange(1, n + 1, dtype=float))

    def at(self, d: int) -> float:
        return float(self._f(np.array([float(d)]))[0])

    def _f(self, d: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return self.gamma1 / (1.0 + np.exp(self.gamma2 * (d - self.gamma3)))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "gamma1": self.gamma1, "gamma2": self.gamma2,
                "gamma3": self.gamma3}

    def scaled(self, k: float) -> Sigmoid:
        """``k·f`` (exactly ``k`` times every value where ``k`` is a power of two, and
        ``γ1·k`` a double: ``_times``)."""
        return Sigmoid(_times(self.gamma1, k), self.gamma2, self.gamma3)


@dataclass(frozen=True)
class Table:
    """``f(d) = values[d-1]``; durations past the table are worth 0."""

    table: tuple[float, ...]
    kind: ClassVar[str] = "table"

    def values(self, n: int) -> np.ndarray:
        out = np.zeros(n)
        k = min(n, len(self.table))
        out[:k] = self.table[:k]
        return out

    def at(self, d: int) -> float:
        return float(self.table[d - 1]) if d <= len(self.table) else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "values": list(self.table)}

    def scaled(self, k: float) -> Table:
        """``k·f`` (exactly ``k`` times every value where ``k`` is a power of two)."""
        return Table(tuple(_times(v, k) for v in self.table))


@dataclass(frozen=True)
class Deadline:
    """``f(d) = value`` if ``d ≤ deadline`` else 0: a hard deadline."""

    value: float
    deadline: int
    kind: ClassVar[str] = "deadline"

    def values(self, n: int) -> np.ndarray:
        d = np.arange(1, n + 1)
        return np.where(d <= self.deadline, float(self.value), 0.0)

    def at(self, d: int) -> float:
        return float(self.value) if d <= self.deadline else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "deadline": self.deadline}

    def scaled(self, k: float) -> Deadline:
        """``k·f`` (exactly ``k`` times every value where ``k`` is a power of two)."""
        return Deadline(_times(self.value, k), self.deadline)


@dataclass(frozen=True)
class Linear:
    """``f(d) = max(0, value − decay·(d − 1))``: linear decay from the fastest finish."""

    value: float
    decay: float
    kind: ClassVar[str] = "linear"

    def values(self, n: int) -> np.ndarray:
        d = np.arange(1, n + 1, dtype=float)
        return np.maximum(0.0, self.value - self.decay * (d - 1.0))

    def at(self, d: int) -> float:
        return max(0.0, self.value - self.decay * (d - 1.0))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "decay": self.decay}

    def scaled(self, k: float) -> Linear:
        """``k·f`` (exactly ``k`` times every value where ``k`` is a power of two: the
        product and the difference of ``at`` scale without rounding). A decay that overflows
        is held at the largest double: every f(d ≥ 2) is 0 either way, and an infinite one
        made f(1) = max(0, value − inf·0) = 0 (NaN)."""
        return Linear(_times(self.value, k), _times(self.decay, k))


def _times(x: float, k: float) -> float:
    """``x·k`` for a parameter ``x ≥ 0``, held at the largest double where it overflows.
    ``solve`` scales utilities so that the most a job can earn lies in [1, 2)
    (``offline/scale.py``); a value no schedule can earn (a table's entry for a duration
    shorter than the job can finish in, a job that cannot finish) may then overflow, and an
    infinite one made OASiS's subroutine read ``inf − inf`` (seed 45 414 of the numeric-range
    search: a table of 4e11, 3e11 and 1e-300 where only the third duration is reachable,
    scaled by 2^997). Every value a schedule can earn is at most 2 once scaled, so it keeps
    its exact product; a sigmoid's ``γ1·k`` overflows only where ``e^{γ2(d−γ3)}`` exceeds
    9e307 at the job's fastest finish."""
    return min(x * k, sys.float_info.max)


Utility = Sigmoid | Table | Deadline | Linear


def trivial_bound(utilities: Iterable[Utility]) -> float:
    """``Σ max(0, f(1))``: no schedule earns more (every f is non-increasing), exactly summed
    (``math.fsum``), and ``inf`` where the sum passes the largest double (scaled values held
    there, ``_times``, overflowed ``fsum``)."""
    try:
        return math.fsum(max(0.0, u.at(1)) for u in utilities)
    except OverflowError:
        return math.inf


def value(utility: Utility, d: int) -> float:
    """f(d) for one duration ``d ≥ 1``, without building the table up to d (d may be huge)."""
    if d < 1:
        raise ValueError(f"duration must be at least 1, got {d}")
    return utility.at(d)
