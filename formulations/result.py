"""What a solve of any kind hands back: one record for every path (issue 22).

Every back-end returns a ``SolveResult``: the compact MILP on highspy, Pyomo or PuLP
(``oasis_opt/offline/backends.py``), a racer of the portfolio (``offline/race.py``), another
MILP solver (``oasis_opt/solvers.py``), column generation (``colgen.solve``), its
pattern master's MILP (``PatternMaster.solve_mip``) and one neighbourhood of its
large-neighbourhood search (``lns.search``). The offline solve's public
report, ``oasis_opt.offline.SolveReport``, is built from it in one place
(``offline/report.py`` ``finish``), after validation and the floor.

It lives in ``formulations/`` because column generation returns it and ``formulations/``
imports nothing of the offline solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from oasis_opt.model import Schedule

from .status import SolveStatus


@dataclass(frozen=True)
class SolveResult:
    """One solve's outcome, as the solver saw it (nothing validated or compared with the
    floor yet).

    - ``status``: ``SolveStatus`` (``formulations/status.py``): optimal, stopped on a limit
      (``time_limit``), feasible without proof, or ``no_solution`` (a search step that found
      nothing of its own);
    - ``objective``: the solver's objective of its incumbent, a maximum (None without one);
    - ``bound``: its dual bound on that maximum (None when it gives none; the caller then
      uses the trivial bound ``Σ_i max_t f_i``);
    - ``values``: the solution as the model holds it — for the compact MILP
      ``(y, z, λ_w, λ_z)`` by index (a customized model adds ``c``), for the pattern
      master's MILP and an LNS window its ``(x, λ)`` arrays; empty without an incumbent;
    - ``schedule``: the solution as a schedule, where the route builds one itself (column
      generation); None where ``offline.report.extract`` reads it from ``values``;
    - seconds: ``build_seconds`` (the model), ``handover_seconds`` (model to the solver and
      the solution back), ``solve_seconds`` (the solver's own run);
    - ``solver``: what ran (``highspy``, ``pyomo``, ``pulp``, ``portfolio1``, ``cbc``,
      ``colgen``, ``pattern-master``, ``lns``, ``skipped`` …);
    - ``extras``: what only this route knows (column generation's ``iterations``,
      ``columns``, ``lp_value`` …; an LNS window's ``free_jobs``); the route passes what the
      report shows on to ``finish``.
    """

    status: SolveStatus
    objective: float | None = None
    bound: float | None = None
    values: tuple[Any, ...] = ()
    schedule: Schedule | None = None
    build_seconds: float = 0.0
    handover_seconds: float = 0.0
    solve_seconds: float = 0.0
    solver: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
