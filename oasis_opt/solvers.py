"""Other MILP solvers for the compact model (SPEC §6 ``solve --solver NAME``).

HiGHS stays in ``oasis_opt/offline/``; this is the one module that talks to every other
solver. Each solver gets the compact MILP exactly as a modeller builds it
(``formulations/compact_pyomo.py`` or ``compact_pulp.py``) through a maintained interface:

| name | route | needs |
| --- | --- | --- |
| ``cbc`` | PuLP ``PULP_CBC_CMD`` (CBC ships inside the PuLP wheel) | pulp |
| ``scip`` | Pyomo ``scip_direct`` (``pyomo.contrib.solver``) | pyscipopt (extra ``scip``) |
| ``gurobi`` | Pyomo ``gurobi_direct`` (``pyomo.contrib.solver``) | gurobipy and a licence |
| ``cplex`` | Pyomo ``cplex_direct`` (legacy interface) | cplex and a licence |
| ``xpress`` | Pyomo ``xpress_direct`` (legacy interface) | xpress and a licence |
| ``copt`` | PuLP ``COPT`` (Pyomo has no COPT interface) | coptpy and a licence |

Pyomo's own ``cbc`` wants a ``cbc`` executable that no wheel installs, hence PuLP for CBC.

What comes back is the one result record of every path (``formulations.result.SolveResult``,
``solver`` the solver's name), read from each solver's own status, never from a summary
string that hides a stop on a limit (/work/shared/SOLVERS.md):

- ``status`` (``SolveStatus``, the offline solve's own type, ``formulations/status.py``):
  ``optimal`` when the solver proved optimality (within ``mip_gap``),
  ``time_limit`` when it stopped on the time limit or another limit (an incumbent may exist),
  ``error`` otherwise. PuLP's ``LpStatus`` says "Optimal" after a time limit: CBC's status is
  ``problem.sol_status`` (1 optimal, 2 solution found on a limit);
- ``objective``: the solver's objective of its incumbent (None without one), ``values`` its
  ``(y, z, λ_w, λ_z)`` by index (empty without one);
- ``bound``: the solver's dual bound on the maximum (None when it gives none; the caller then
  uses the trivial bound). CBC reports its bound only in its log, rounded to 6 significant
  digits (``Upper bound: 315.173``): it is read from the log and raised by half a unit of the
  last printed digit, so that it stays an upper bound. The gap is never taken from a solver:
  ``offline.relative_gap`` computes it from bound and incumbent for every solver alike;
- the stopping gap ``mip_gap`` is passed to every solver even when it is 0: Gurobi, CPLEX,
  Xpress and COPT (like HiGHS) stop at a relative gap of 1e-4 by default and would call a
  schedule 0.01 % short of OPT optimal.
"""

from __future__ import annotations

import importlib.util
import math
import re
import tempfile
import time
import warnings
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from .errors import InputError, SolverError
from .formulations.result import SolveResult
from .formulations.status import SolveStatus, pyomo_status

OPTIMAL, TIME_LIMIT, ERROR = SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT, SolveStatus.ERROR


@dataclass(frozen=True)
class SolverInfo:
    """One solver: the modeller whose model it takes, the interface, the Python package it
    needs, and what to install when it is missing."""

    name: str
    modeler: str
    interface: str
    package: str
    install: str


SOLVERS: dict[str, SolverInfo] = {
    "highs": SolverInfo("highs", "pyomo", "Pyomo highs / PuLP HiGHS (oasis_opt.offline)",
                        "highspy", "pip install highspy"),
    "cbc": SolverInfo("cbc", "pulp", "PuLP PULP_CBC_CMD", "pulp", "pip install pulp"),
    "scip": SolverInfo("scip", "pyomo", "Pyomo scip_direct", "pyscipopt",
                       "pip install 'oasis-opt[scip]' (pyscipopt, which brings SCIP)"),
    "gurobi": SolverInfo("gurobi", "pyomo", "Pyomo gurobi_direct", "gurobipy",
                         "pip install gurobipy, with a Gurobi licence for models of this size"),
    "cplex": SolverInfo("cplex", "pyomo", "Pyomo cplex_direct", "cplex",
                        "pip install cplex, with a CPLEX licence for models of this size"),
    "xpress": SolverInfo("xpress", "pyomo", "Pyomo xpress_direct", "xpress",
                         "pip install xpress, with an Xpress licence for models of this size"),
    "copt": SolverInfo("copt", "pulp", "PuLP COPT", "coptpy",
                       "pip install coptpy, with a COPT licence"),
}

#: Solvers whose packages are free to install and need no licence: the test suite runs these.
OPEN_SOLVERS = ("highs", "cbc", "scip")


def names() -> list[str]:
    return list(SOLVERS)


def availability(name: str) -> str | None:
    """None when solver ``name`` can run here, else why not (a phrase)."""
    info = SOLVERS[name]
    if importlib.util.find_spec(info.package) is None:
        return f"its Python package {info.package!r} is not installed"
    try:
        if name in ("highs", "cbc"):
            return None
        if name in ("scip", "gurobi"):
            import pyomo.environ  # noqa: F401  (registers the solver plugins)
            from pyomo.contrib.solver.common.factory import SolverFactory
            avail = SolverFactory(_CONTRIB[name]).available()
            return None if avail else f"Pyomo reports {avail.name}"
        if name in ("cplex", "xpress"):
            import pyomo.environ as pyo
            opt = pyo.SolverFactory(_LEGACY[name])
            if not opt.available(exception_flag=False):
                return "Pyomo cannot load it"
            if hasattr(opt, "license_is_valid") and not opt.license_is_valid():
                return "no valid licence was found"
            return None
        if name == "copt":
            import pulp
            return None if pulp.COPT(msg=False).available() else "PuLP cannot load COPT"
    except Exception as exc:  # a broken install or licence check: say so, do not crash
        return f"it failed to load ({type(exc).__name__}: {exc})"
    return "no interface"


def check(name: str) -> str:
    """Refuse an unknown or unavailable solver (``InputError`` at ``--solver``, naming what to
    install); return the modeller its model is built with."""
    if not isinstance(name, str) or name not in SOLVERS:  # a list: unhashable
        raise InputError("solver", f"unknown solver {name!r}; choose from {', '.join(SOLVERS)}")
    why = availability(name)
    if why is not None:
        raise InputError("solver", f"{name} is not available: {why}; "
                                     f"install it with: {SOLVERS[name].install}")
    return SOLVERS[name].modeler


def solve(name: str, prep: Any, time_limit: float | None, mip_gap: float,
          threads: int = 1) -> SolveResult:
    """Build the compact MILP of ``prep`` (``formulations.common.Prep``) with solver ``name``'s
    modeller and solve it. HiGHS is not routed here (``oasis_opt.offline``)."""
    check(name)
    if name == "highs":
        raise ValueError("HiGHS runs in oasis_opt.offline, not here")
    route = ROUTES[name]
    try:
        return route(name, prep, time_limit, mip_gap, threads)
    except InputError:
        raise
    except Exception as exc:
        text = str(exc)
        if "licen" in text.lower():  # licence too small for the model, expired, …
            raise InputError("solver", f"{name} refused the model: {text.strip()}; "
                                         f"{SOLVERS[name].install}") from None
        raise SolverError(f"{name} failed: {type(exc).__name__}: {text}") from exc


# --- Pyomo: new interface (scip, gurobi) --------------------------------------------------

_CONTRIB = {"scip": "scip_direct", "gurobi": "gurobi_direct"}
_LEGACY = {"cplex": "cplex_direct", "xpress": "xpress_direct"}


def _pyomo_model(prep: Any) -> tuple[Any, float]:
    from .formulations import compact_pyomo
    t0 = time.perf_counter()
    m = compact_pyomo.build(prep.instance, prep=prep)
    return m, time.perf_counter() - t0


def _solve_contrib(name: str, prep: Any, time_limit: float | None, mip_gap: float,
                   threads: int) -> SolveResult:
    """``pyomo.contrib.solver`` (``scip_direct``, ``gurobi_direct``): the same Results as the
    HiGHS route. SCIP maps its ``gaplimit`` stop to convergence (right: ``limits/gap`` is
    ``mip_gap``) and ``memlimit``/``sollimit`` to ``unknown``, which with an incumbent is a
    stop on a limit, not an error."""
    import pyomo.environ  # noqa: F401
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    from .formulations import compact_pyomo

    m, build = _pyomo_model(prep)
    opt = SolverFactory(_CONTRIB[name])
    t1 = time.perf_counter()
    res = opt.solve(m, time_limit=time_limit, rel_gap=mip_gap, threads=threads,
                    raise_exception_on_nonoptimal_result=False, load_solutions=False)
    elapsed = time.perf_counter() - t1
    if res.termination_condition == TerminationCondition.interrupted:
        # SCIP (and Gurobi) take Ctrl-C themselves and stop with their incumbent: the
        # command ends as on every other route (exit 130), not with "time_limit", exit 0
        raise KeyboardInterrupt
    own = res.timing_info.value().get(f"{name}_time") if hasattr(res.timing_info, "value") \
        else None
    solve_s = float(own) if own is not None else elapsed
    has_solution = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    status = pyomo_status(res.termination_condition, has_solution)
    values: tuple[dict, ...] = ()
    t2 = time.perf_counter()
    if has_solution and res.incumbent_objective is not None:
        res.solution_loader.load_vars()
        values = compact_pyomo.values(m)
    handover = max(0.0, elapsed - solve_s) + time.perf_counter() - t2
    return SolveResult(status, _num(res.incumbent_objective) if values else None,
                       _num(res.objective_bound), values, build_seconds=build,
                       handover_seconds=handover, solve_seconds=solve_s, solver=name)


# --- Pyomo: legacy direct interfaces (cplex, xpress) --------------------------------------

def legacy_options(name: str, time_limit: float | None, mip_gap: float,
                    threads: int) -> dict[str, Any]:
    """Native options of the legacy direct interfaces. ``mipgap`` is set even at 0: CPLEX's and
    Xpress's default relative gap is 1e-4, which would report "optimal" short of OPT. Time:
    CPLEX ``timelimit`` (seconds); Xpress ``maxtime`` negative = stop at the limit even
    without a MIP solution (a positive value waits for one)."""
    opts: dict[str, Any] = {"mipgap": mip_gap, "threads": threads}
    if time_limit is not None:
        if name == "cplex":
            opts["timelimit"] = float(time_limit)
        else:
            opts["maxtime"] = -max(1, math.ceil(time_limit))
    return opts


def _solve_legacy(name: str, prep: Any, time_limit: float | None, mip_gap: float,
                  threads: int) -> SolveResult:
    """Pyomo's legacy ``*_direct`` interfaces. For a maximisation, ``results.problem``'s
    ``upper_bound`` is the dual bound and ``lower_bound`` the incumbent; the values load only
    when the results carry a solution."""
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    from .formulations import compact_pyomo

    m, build = _pyomo_model(prep)
    opt = pyo.SolverFactory(_LEGACY[name])
    t1 = time.perf_counter()
    res = opt.solve(m, options=legacy_options(name, time_limit, mip_gap, threads),
                    load_solutions=False)
    solve_s = time.perf_counter() - t1
    tc = res.solver.termination_condition
    has_solution = len(res.solution) > 0
    if tc == TC.optimal and has_solution:
        status = OPTIMAL
    elif tc in (TC.maxTimeLimit, TC.maxIterations, TC.maxEvaluations, TC.userInterrupt,
                TC.resourceInterrupt):
        status = TIME_LIMIT
    else:
        status = ERROR
    values: tuple[dict, ...] = ()
    incumbent = None
    if has_solution and status != ERROR:
        m.solutions.load_from(res)
        values = compact_pyomo.values(m)
        incumbent = float(pyo.value(m.utility))
    bound = _num(getattr(res.problem, "upper_bound", None))
    return SolveResult(status, incumbent, bound, values, build_seconds=build,
                       solve_seconds=solve_s, solver=name)


# --- PuLP (cbc, copt) ---------------------------------------------------------------------

_BOUND_LINE = re.compile(r"^(?:Upper|Lower) bound:\s+(\S+)", re.MULTILINE)


def cbc_bound_from_log(log: str) -> float | None:
    """CBC's dual bound from its log (``Upper bound:`` for a maximisation), raised by half a
    unit of its last printed digit: CBC prints 6 significant digits, and a bound rounded down
    would no longer be a bound. None when the log has no bound line."""
    found = _BOUND_LINE.findall(log)
    if not found:
        return None
    text = found[-1]
    try:
        d = Decimal(text)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    return float(d) + 0.5 * 10.0 ** exponent


def _solve_copt(name: str, prep: Any, time_limit: float | None, mip_gap: float,
                threads: int) -> SolveResult:
    """PuLP's COPT interface builds the model; status, incumbent and bound are read from COPT
    itself, because PuLP keeps the values only of a proven optimum (an incumbent found before
    the time limit would be lost) and sets no solution status. ``RelGap`` is passed even at 0
    (COPT's default is 1e-4). Untested here: no COPT licence on this machine."""
    import coptpy
    import pulp

    from .formulations import compact_pulp

    t0 = time.perf_counter()
    m = compact_pulp.build(prep.instance, prep=prep)
    build = time.perf_counter() - t0
    problem = m.problem
    solver = pulp.COPT(msg=False, timeLimit=time_limit, RelGap=mip_gap, Threads=threads)
    t1 = time.perf_counter()
    problem.solve(solver)
    solve_s = time.perf_counter() - t1
    model = problem.solverModel
    st = model.status
    has_solution = bool(model.getAttr("HasMipSol"))
    if st == coptpy.COPT.OPTIMAL and has_solution:
        status = OPTIMAL
    elif st in (coptpy.COPT.TIMEOUT, coptpy.COPT.NODELIMIT, coptpy.COPT.INTERRUPTED,
                coptpy.COPT.UNFINISHED):
        status = TIME_LIMIT
    else:
        status = ERROR
    values: tuple[dict, ...] = ()
    incumbent = bound = None
    if has_solution:
        for var, value in zip(problem._variables, model.getInfo("Value", model.getVars()),
                              strict=True):
            var.varValue = value
        values = compact_pulp.values(m)
        incumbent = _num(model.getAttr("BestObj"))
    if status != ERROR:
        bound = _num(model.getAttr("BestBnd"))
    return SolveResult(status, incumbent, bound, values, build_seconds=build,
                       solve_seconds=solve_s, solver=name)


def _solve_cbc(name: str, prep: Any, time_limit: float | None, mip_gap: float,
                threads: int) -> SolveResult:
    """PuLP's CBC (the executable bundled with PuLP). ``LpStatus`` is not read: CBC's
    ``sol_status`` tells a proven optimum (1) from a solution found on a limit (2)."""
    import pulp

    from .formulations import compact_pulp

    t0 = time.perf_counter()
    m = compact_pulp.build(prep.instance, prep=prep)
    build = time.perf_counter() - t0
    problem = m.problem
    with tempfile.TemporaryDirectory(prefix="oasis-cbc-") as tmp:
        log_path = Path(tmp) / "solver.log"
        # PuLP 3.x marks PULP_CBC_CMD deprecated (4.0 moves CBC to an extra); it is still the
        # one CBC that installs with PuLP itself.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, gapRel=mip_gap,
                                       threads=threads, logPath=str(log_path), keepFiles=False)
        t1 = time.perf_counter()
        problem.solve(solver)
        solve_s = time.perf_counter() - t1
        log = log_path.read_text(encoding="utf-8", errors="replace") \
            if log_path.exists() else ""
    sol = problem.sol_status
    st = problem.status
    has_solution = sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    if sol == pulp.LpSolutionOptimal and st == pulp.LpStatusOptimal:
        status = OPTIMAL
    elif has_solution or "Stopped on time limit" in log or "Stopped on" in log:
        status = TIME_LIMIT
    else:
        status = ERROR
    values: tuple[dict, ...] = ()
    incumbent = None
    if has_solution:
        values = compact_pulp.values(m)
        incumbent = _num(pulp.value(problem.objective))
    bound = cbc_bound_from_log(log)
    if bound is None and status == OPTIMAL and mip_gap == 0 and incumbent is not None:
        bound = incumbent  # proven optimal at gap 0: CBC prints no bound line then
    return SolveResult(status, incumbent, bound, values, build_seconds=build,
                       solve_seconds=solve_s, solver=name)


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if not math.isnan(x) else None


ROUTES = {"cbc": _solve_cbc, "copt": _solve_copt, "scip": _solve_contrib,
           "gurobi": _solve_contrib, "cplex": _solve_legacy, "xpress": _solve_legacy}
