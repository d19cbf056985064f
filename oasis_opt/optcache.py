"""Offline optima cached on disk, keyed by the instance's content and the solve settings.

A CI run that compares a scheduler against OPT on the same instances every time should solve
each instance once: ``solve(instance, cache=DIR, time_limit=…, …)`` returns the cached schedule
and report when a file for the same key exists, and otherwise solves and writes one.

The key is the SHA-256 of the instance as written to a file (``io.instance_to_dict``: every
field, the name included), the settings that change the answer (``time_limit``, ``mip_gap``,
``method``, ``modeler``, ``solver``) and the package version, so that a new release solves
again. ``ratio --time-limit S`` keys by its S although its solve had only the time the
algorithms left (``ratio.solve_budget``): the setting asked for, as ``bench --opt-cache``
writes it. The floor (its algorithms or handed-over schedules) is not in the key. A cached
schedule is checked by the validator when it is read, and its report against it (the
utility the schedule's, the bound a finite number at least that, the gap theirs); a file
that does not read back (truncated, edited, another format) is solved again and replaced.
Files are written atomically: concurrent writers of one key leave one whole file. A solve
that ends in an error is not cached.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import InputError
from .model import Instance, Schedule
from .version import __version__

CACHE_FORMAT = "oasis-opt-cache/1"


def settings_of(time_limit: float | None = None, mip_gap: float = 0.0, method: str = "auto",
                modeler: str = "auto", solver: str = "highs") -> dict[str, Any]:
    """The solve settings that enter the key, normalised (``1`` and ``1.0`` are one key)."""
    return {"time_limit": None if time_limit is None else float(time_limit),
            "mip_gap": float(mip_gap), "method": method, "modeler": modeler, "solver": solver}


def key(instance: Instance, settings: dict[str, Any]) -> str:
    """Hex SHA-256 of the instance's content, the settings and the package version."""
    from .io import instance_to_dict
    text = json.dumps({"instance": instance_to_dict(instance), "settings": settings,
                       "version": __version__}, sort_keys=True, separators=(",", ":"),
                      default=float)
    return hashlib.sha256(text.encode()).hexdigest()


#: A cached optimum reads back only if its gap is at most the solve's ``mip_gap`` plus this
#: (a solver's own stopping tolerance): what a solve could have reported as optimal.
OPTIMAL_GAP_SLACK = 1e-4


def _real(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _consistent(report: Any, schedule: Schedule, utility: float, mip_gap: float) -> bool:
    """Whether a cached report says what a solve of that schedule could say
    (``offline.report.finish``): its utility is the schedule's (recomputed), the bound a
    finite number at least that, the gap the two's, and an optimum within ``mip_gap``. An
    edited figure (a utility of 10^5 on a schedule worth 169) was reported as OPT."""
    from .model import REL_TOL
    from .offline import SolveStatus, relative_gap
    if not (_real(report.objective) and _real(report.bound)) or \
            (report.gap is not None and not _real(report.gap)):
        return False
    if not math.isclose(report.objective, utility, rel_tol=REL_TOL, abs_tol=REL_TOL) or \
            not math.isclose(schedule.total_utility, report.objective, rel_tol=1e-12,
                             abs_tol=1e-12):
        return False
    if report.bound < report.objective:
        return False
    gap = relative_gap(report.bound, report.objective)
    if (gap is None) != (report.gap is None) or \
            (gap is not None and not math.isclose(gap, report.gap, rel_tol=1e-9,
                                                  abs_tol=1e-12)):
        return False
    return report.status is not SolveStatus.OPTIMAL or gap is None or \
        gap <= mip_gap + OPTIMAL_GAP_SLACK


def _read(path: Path, instance: Instance, mip_gap: float = 0.0
          ) -> tuple[Schedule, Any] | None:
    """The cached pair, or None when the file is missing, does not read back whole (strict
    JSON: no NaN, no duplicate keys), or its report disagrees with its schedule."""
    from .io import read_json, schedule_from_dict
    from .offline import SolveReport, SolveStatus
    from .validate import validate
    try:
        data = read_json(path, "opt cache entry")
        if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
            return None
        rep = dict(data["report"])
        rep["status"] = SolveStatus(rep["status"])
        rep["objective"] = rep.pop("total_utility")
        rep["history"] = tuple(tuple(h) for h in rep.get("history", ()))
        report = SolveReport(**{k: v for k, v in rep.items()
                                if k in SolveReport.__dataclass_fields__})
        schedule = schedule_from_dict(data["schedule"])
        checked = validate(instance, schedule)  # an unknown job is an InputError
        if not checked.feasible or \
                not _consistent(report, schedule, checked.total_utility, mip_gap):
            return None
    except (OSError, ValueError, KeyError, TypeError, InputError):
        return None
    return schedule.with_extras(opt_cache=str(path)), report


def solve(instance: Instance, cache: str | Path | None,
          solver_fn: Callable[..., tuple[Schedule, Any]] | None = None,
          **settings: Any) -> tuple[Schedule, Any]:
    """``offline.solve(instance, **settings)``, through the cache folder ``cache`` (None: no
    cache). Returns ``(schedule, report)``; a cached schedule carries ``extras["opt_cache"]``
    (the file it came from)."""
    from .offline import solve as offline_solve
    run = solver_fn or offline_solve
    if cache is None:
        return run(instance, **settings)
    from .io import dumps, ensure_folder, schedule_to_dict, write_text_atomic
    norm = settings_of(**{k: settings[k] for k in ("time_limit", "mip_gap", "method",
                                                   "modeler", "solver") if k in settings})
    path = ensure_folder(cache, "opt_cache") / f"{key(instance, norm)}.json"
    hit = _read(path, instance, norm["mip_gap"]) if path.exists() else None
    if hit is not None:
        return hit
    schedule, report = run(instance, **settings)
    record = {"format": CACHE_FORMAT, "instance": instance.name, "settings": norm,
              "version": __version__, "report": report.to_dict(),
              "schedule": schedule_to_dict(schedule)}
    write_text_atomic(path, dumps(record) + "\n")
    return schedule, report


__all__ = ["CACHE_FORMAT", "key", "settings_of", "solve"]
