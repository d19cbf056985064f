"""The registry: one name, one ``run(instance, **params) -> Schedule`` function.

Modules load lazily so that ``oasis-opt validate`` does not import every algorithm. ``run``
passes every schedule through the validator: an algorithm that emits an infeasible schedule is
a bug, reported as one.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

from .model import Instance, Schedule
from .validate import validate

#: name -> "module:function"; online/heuristic schedulers, in the order reports list them.
REGISTRY: dict[str, str] = {
    "oasis": "oasis_opt.online.oasis:run",
    "oasis-adaptive": "oasis_opt.online.adaptive:run",
    "fifo": "oasis_opt.baselines.fifo:run",
    "drf": "oasis_opt.baselines.drf:run",
    "rrh": "oasis_opt.baselines.rrh:run",
    "tetris": "oasis_opt.baselines.tetris:run",
}


class InvalidScheduleError(RuntimeError):
    """An algorithm produced a schedule the validator refuses (a bug in the algorithm)."""


def names() -> list[str]:
    return list(REGISTRY)


def get(name: str) -> Callable[..., Schedule]:
    try:
        target = REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown algorithm {name!r}; choose from {', '.join(REGISTRY)}") from None
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)


def run(name: str, instance: Instance, **params: Any) -> Schedule:
    """Run one algorithm, validate its schedule, and record the wall seconds in ``extras``."""
    fn = get(name)
    start = time.perf_counter()
    schedule = fn(instance, **params)
    seconds = time.perf_counter() - start
    report = validate(instance, schedule)
    if not report.feasible:
        raise InvalidScheduleError(
            f"{name} produced an infeasible schedule on {instance.name}: "
            + "; ".join(str(v) for v in report.violations[:5]))
    return schedule.with_extras(seconds=seconds)
