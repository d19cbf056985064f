"""How a solve ended: one status type for every path (issue 22) — the offline solve's report
(``oasis_opt.offline.SolveStatus`` is this type) and the one result record of every solve
(``result.SolveResult``: the back-ends', the other MILP solvers', column generation's and an
LNS window's), whose extras carry column generation's MIP stage (``mip_status``).

It lives in ``formulations/`` because column generation sets it and ``formulations/`` imports
nothing of the offline solve. A ``str`` enum: it compares equal to its value and is written
as the value in JSON.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class SolveStatus(str, Enum):
    """How the solve ended: proven optimal, stopped by the time limit (or another limit)
    with the incumbent, or feasible without proof."""

    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    #: column generation finished without a time limit, but price-and-branch left a gap to
    #: the LP bound, or a ``mip_gap`` above 1e-6 was reached with the gap still open
    #: (``offline.unproven_at_gap``): a feasible schedule and a valid bound, no proof.
    FEASIBLE = "feasible"
    #: the solver failed; ``offline.solve`` raises ``SolverError`` instead of returning it
    #: (kept for readers of old reports).
    ERROR = "error"
    #: a MIP stage of column generation found no solution of its own (the seed schedule
    #: stands); never the status of a whole solve.
    NO_SOLUTION = "no_solution"


def pyomo_status(termination: Any, has_solution: bool) -> SolveStatus:
    """``pyomo.contrib.solver`` termination condition → status. Optimal needs the proof and a
    solution; a limit (time, iterations, objective, an interrupt) is ``TIME_LIMIT``, and so is
    ``unknown`` with a solution (SCIP's ``memlimit``/``sollimit`` stops); anything else is
    ``ERROR``."""
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    if termination == TC.convergenceCriteriaSatisfied and has_solution:
        return SolveStatus.OPTIMAL
    if termination in (TC.maxTimeLimit, TC.iterationLimit, TC.objectiveLimit,
                       TC.interrupted) or (termination == TC.unknown and has_solution):
        return SolveStatus.TIME_LIMIT
    return SolveStatus.ERROR
