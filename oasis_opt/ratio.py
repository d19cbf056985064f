"""Competitive ratios on one instance: OPT (or its bound) against each algorithm (SPEC §3, §6).

For each algorithm: its utility ALG, completed jobs, ``OPT/ALG``; for OASiS also the guarantee
``2α``, whether ``OPT ≤ 2α·ALG`` held and whether weak duality ``D_cert ≥ OPT`` held.

When the offline solve stops at its time limit, the true OPT lies in ``[incumbent, bound]``
(the lower end raised to the best algorithm's validated utility): the ratio is computed with
the bound (an upper bound on the true ratio, labelled ``OPT ≤ bound``) and the interval's
lower end too: OPT/ALG ∈ [``opt_over_alg_low``, ``opt_over_alg``] = [incumbent/ALG,
bound/ALG] (equal ends when OPT is proven). Each check is
``True`` when it holds for every OPT in that interval, ``False`` when it fails for every one,
and ``None`` (undecided) otherwise.

A time limit bounds the whole comparison (SPEC §6), not the solve alone: the algorithms run
first, the solve gets the time they left (``solve_budget``) and reuses their schedules as its
floor instead of running them again (``offline.solve(floor_schedules=…)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import algorithms
from .errors import AlgorithmError, InputError
from .io import check_schedule_size
from .model import REL_TOL, Instance, Schedule

COLUMNS = ["algorithm", "utility", "completed", "opt_over_alg_low", "opt_over_alg", "two_alpha",
           "within_2alpha",
           "D_cert", "dcert_ge_opt", "seconds"]


class SolverUnavailableError(RuntimeError):
    """The offline solver (``oasis_opt.offline``) cannot be imported."""


@dataclass(frozen=True)
class RatioReport:
    """OPT and one row per algorithm (``COLUMNS``); ``opt_label`` says what ``reference`` is."""

    instance: str
    status: str  # the offline solve's: optimal | time_limit | feasible | error
    opt: float | None  # utility of the solver's schedule (the optimum when status is optimal)
    bound: float | None  # the solver's upper bound on OPT
    reference: float | None  # the OPT used in ratios: opt if optimal, bound on a time limit
    opt_label: str  # "OPT" or "OPT ≤ bound"
    solve_seconds: float
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=lambda: list(COLUMNS))

    def headline(self) -> str:
        if self.reference is None:
            return f"{self.instance}: OPT unavailable (offline solve: {self.status})"
        if self.opt_label == "OPT":
            return (f"{self.instance}: OPT = {self.reference:.10g} (optimal, "
                    f"{self.solve_seconds:.2f} s)")
        return (f"{self.instance}: OPT ≤ {self.reference:.10g} (time limit; incumbent "
                f"{self.opt:.10g}, {self.solve_seconds:.2f} s); ratios use the bound")

    def to_records(self) -> list[dict[str, Any]]:
        """One flat row per algorithm (the instance, OPT and the offline status on each)."""
        return [{"instance": self.instance, "status": self.status, "opt": self.opt,
                 "bound": self.bound, **row} for row in self.rows]

    def to_dataframe(self) -> Any:
        """``to_records()`` as a pandas DataFrame (needs pandas)."""
        from .records import dataframe
        return dataframe(self.to_records())

    def to_dict(self) -> dict[str, Any]:
        return {"instance": self.instance, "status": self.status, "opt": self.opt,
                "bound": self.bound, "reference": self.reference, "opt_label": self.opt_label,
                "solve_seconds": self.solve_seconds, "columns": self.columns, "rows": self.rows,
                "notes": self.notes}


#: The least time the offline solve gets in a time-limited ``compare``, even where the
#: algorithms used the whole limit: this share of it, and at least ``SOLVE_MIN_SECONDS``, so
#: that a valid bound (and the floor's schedule) still comes back. SPEC §6 allows
#: ``0.1·S + 10`` s past the limit.
SOLVE_MIN_SHARE = 0.1
SOLVE_MIN_SECONDS = 1.0


def solve_budget(time_limit: float, elapsed: float) -> float:
    """The offline solve's seconds in a ``compare`` limited to ``time_limit`` whose
    algorithms took ``elapsed``: what is left, never less than ``SOLVE_MIN_SHARE`` of the
    limit or ``SOLVE_MIN_SECONDS``."""
    return max(time_limit - elapsed, SOLVE_MIN_SHARE * time_limit, SOLVE_MIN_SECONDS)


def _offline() -> Any:
    """``oasis_opt.offline``, or ``SolverUnavailableError`` (before any algorithm runs)."""
    try:
        from . import offline
    except ImportError as err:
        raise SolverUnavailableError(
            f"the offline solver is not available ({err}); `oasis-opt ratio` needs "
            "oasis_opt.offline") from err
    return offline


def _solve(instance: Instance, time_limit: float | None, modeler: str,
           solver: str = "highs", opt_cache: str | Path | None = None,
           method: str = "auto", executor: Any = None, *, clock: Any = None,
           floor_schedules: Mapping[str, Schedule] | None = None,
           record: dict[str, float] | None = None,
           listeners: Mapping[str, Callable[..., None]] | None = None) -> Any:
    """The offline solve's report, through ``optcache``. The cache key holds ``time_limit``
    (the whole command's); the solve itself gets ``solve_budget(time_limit,
    clock.elapsed())`` seconds, fixed when it starts (after a cache miss),
    ``floor_schedules`` and ``listeners`` (``on_progress``, ``on_schedule``);
    ``record["seconds"]`` holds that budget (absent: the cache answered)."""
    from . import optcache
    offline = _offline()
    extra: dict[str, Any] = {} if method == "auto" else {"method": method}
    if executor is not None:
        extra["executor"] = executor

    def run(inst: Instance, **settings: Any) -> tuple[Schedule, Any]:
        if time_limit is not None and clock is not None:
            settings["time_limit"] = solve_budget(time_limit, clock.elapsed())
            if record is not None:
                record["seconds"] = settings["time_limit"]
        if floor_schedules:
            settings["floor_schedules"] = floor_schedules
        settings.update(listeners or {})
        return offline.solve(inst, **settings)  # looked up now: tests count the calls
    return optcache.solve(instance, opt_cache, solver_fn=run, modeler=modeler,
                          time_limit=time_limit, solver=solver, **extra)[1]


def algorithm_table(algorithms_: algorithms.Algorithm | Sequence[algorithms.Algorithm]
                    | Mapping[algorithms.Algorithm, Mapping[str, Any] | None]
                    ) -> dict[algorithms.Algorithm, dict[str, Any]]:
    """``"oasis"``, ``["oasis", "fifo"]`` or ``{"oasis": {"u_scale": 0.5}, "fifo": {}}`` →
    ``{name: params}``, a function standing wherever a name may (as in ``run``); every name
    resolved and every parameter checked before anything runs (``InputError`` naming it)."""
    if isinstance(algorithms_, str) or callable(algorithms_) and \
            not isinstance(algorithms_, Mapping):
        table: dict[algorithms.Algorithm, dict[str, Any]] = {algorithms_: {}}
    elif isinstance(algorithms_, Mapping):
        table = {}
        for name, params in algorithms_.items():
            if params is not None and not isinstance(params, Mapping):
                raise InputError(f"algorithms.{name}", "parameters must be a dict "
                                                       f"{{KEY: VALUE}}, got {params!r}")
            table[name] = dict(params or {})
    elif not isinstance(algorithms_, Iterable):
        raise InputError("algorithms", f"expected algorithm names or functions, got "
                                       f"{type(algorithms_).__name__}")
    else:
        table = {}
        for name in algorithms_:
            if not isinstance(name, str) and not callable(name):
                raise InputError("algorithms", f"expected algorithm names or functions, got "
                                               f"{name!r:.60}")
            table[name] = {}
    if not table:
        raise InputError("algorithms", "no algorithm to compare")
    for name, params in table.items():
        algorithms.check(name)
        algorithms.check_params(name, params, place=f"algorithms.{name}")
    return table


def _le(a: float, b: float) -> bool:
    """``a ≤ b`` up to REL_TOL (relative: utilities of any size compare as their scaled
    copies do; an absolute floor of REL_TOL held every check on utilities near 1e-9)."""
    return a <= b + REL_TOL * max(abs(a), abs(b))


def _at_most(lo: float, hi: float, limit: float) -> bool | None:
    """Does ``OPT ≤ limit`` hold for OPT ∈ [lo, hi]? True if it holds at hi, False if it fails
    at lo, None when the interval does not decide it."""
    if _le(hi, limit):
        return True
    if not _le(lo, limit):
        return False
    return None


def ratio(opt: float, alg: float) -> float | None:
    """OPT/ALG; inf when only ALG is 0 (at most REL_TOL·OPT), None when both are. Relative
    only, so that multiplying every utility by a constant keeps the ratio: with utilities near
    1e-9 an absolute floor of REL_TOL made every ratio None."""
    if alg > REL_TOL * abs(opt):
        return opt / alg
    return math.inf if opt > 0 else None


def _time_note(time_limit: float, ran: float, solve_seconds: float | None) -> str:
    """How a time-limited ``compare`` spent its limit: the algorithms' seconds, the solve's
    budget (None: the cache answered), and whether the algorithms alone overran."""
    if solve_seconds is None:
        return (f"the offline result came from the opt cache (solved with the {time_limit:g} s "
                f"limit); the algorithms took {ran:.3g} s")
    if ran > time_limit:
        return (f"the algorithms alone took {ran:.3g} s, more than the {time_limit:g} s time "
                "limit (an algorithm cannot be interrupted): the command overruns it; the "
                f"offline solve still had {solve_seconds:.3g} s for a valid bound")
    least = " (its minimum)" if solve_seconds > time_limit - ran + 1e-9 else ""
    return (f"time limit {time_limit:g} s for the whole command: the algorithms took "
            f"{ran:.3g} s, the offline solve had {solve_seconds:.3g} s{least}")


def compare(instance: Instance,
            names: str | Sequence[str] | Mapping[str, Mapping[str, Any] | None] | None = None,
            time_limit: float | None = None, modeler: str = "pyomo", solver: str = "highs",
            opt_cache: str | Path | None = None, method: str = "auto",
            executor: Any = None, *, on_progress: Callable[..., None] | None = None,
            on_schedule: Callable[[Schedule], None] | None = None,
            on_solve: Callable[[Callable[[Any], RatioReport]], None] | None = None,
            default_set: bool = False) -> RatioReport:
    """Run each algorithm, solve the offline optimum once (with ``solver``,
    ``oasis_opt.solvers``; through the cache folder ``opt_cache`` when given,
    ``oasis_opt.optcache``), and compare (module docstring).

    ``names``: one algorithm name, a list of names, or ``{name: params}``; default every
    algorithm ``algorithms.names()`` lists that loads (an installed one whose entry point
    does not, or that needs a parameter, is left out, and the notes say so; so is one that
    fails when it runs, built-ins apart: another package's broken plug-in stops no other
    row). ``default_set``: ``names`` is that set as the caller made it (the command line,
    with ``--param`` values), left out the same way. ``method`` and ``executor`` go to
    ``offline.solve`` (``method="colgen"`` with a time limit: the certified bound at trace
    scale, its pricing on ``executor``).

    ``time_limit`` bounds the whole call (SPEC §6): one clock starts once the names and
    settings are checked, the algorithms run first (they cannot be interrupted), and the
    solve gets the time left (``solve_budget``: at least a tenth of the limit or 1 s, so that
    a valid bound comes back; the notes say when the algorithms alone took longer than the
    limit). Their schedules (those run with default parameters) go to the solve's floor
    (``offline.solve(floor_schedules=…)``): no algorithm runs twice. The cache key keeps
    ``time_limit`` itself. Without a limit only the order changes.

    ``on_progress`` and ``on_schedule`` hear the solve (``offline.solve``'s, with every
    algorithm's schedule told to ``on_schedule`` as it is made), and ``on_solve`` is told,
    before the algorithms run, how to make this report of a solve report (from the
    algorithms that have run by then: one still running has no utility, and a note says
    so): the command line's ``--time-limit`` answers from them where the algorithms or the
    solve do not return in time (``oasis_opt/lifeline.py``; a user's scheduler that hung
    kept ``ratio --time-limit 5`` going past 60 s)."""
    offline = _offline()
    offline.check_arguments(on_progress=on_progress, on_schedule=on_schedule,
                            on_solve=on_solve)
    left_out: list[str] = []
    chosen = names is not None and not default_set
    if names is None:  # every named algorithm that loads (``algorithms.loadable_names``)
        names, left_out = algorithms.loadable_names()
    table = algorithm_table(names)
    names = list(table)
    offline.check_settings(modeler, time_limit, method=method, solver=solver)
    offline.check_counts(instance)  # before the algorithms run: they take long on such jobs
    if opt_cache is None:  # before them too (a cached result needs no room to solve)
        offline.check_route_sizes(instance, method if solver == "highs" else "compact",
                                  time_limit)
    if solver != "highs":  # as offline.solve would, but before the algorithms run
        from . import solvers
        solvers.check(solver)
    check_schedule_size(instance, len(names), names)  # every schedule is kept to the end
    from .offline.clock import Clock
    clock = Clock(time_limit)
    schedules: dict[str, Any] = {}
    dropped: list[str] = []  # the default set's plug-ins that failed (``left_out`` says why)
    ran: float | None = None  # the algorithms' seconds, once they have all run
    record: dict[str, float] = {}

    def report_of(rep: Any) -> RatioReport:
        done = dict(schedules)  # (the lifeline's thread may ask while an algorithm runs)
        shown = [n for n in names if n not in dropped]
        notes = list(left_out)
        running = [algorithms.label(n) for n in shown if n not in done]
        if running:
            notes.append(f"the time limit came while {', '.join(running)} still ran "
                         "(an algorithm cannot be interrupted): no utility for "
                         f"{'it' if len(running) == 1 else 'them'}; OPT is bounded from the "
                         "schedules made so far")
        elif time_limit is not None and ran is not None:
            notes.append(_time_note(time_limit, ran, record.get("seconds")))
        return _report(instance, shown, done, rep, notes)
    if on_solve is not None:  # from the start: the algorithms too may run past the limit
        on_solve(report_of)
    for name in names:
        try:
            schedules[name] = algorithms.run(name, instance, **table[name])
        except (InputError, AlgorithmError) as err:
            if not chosen and name not in algorithms.REGISTRY:
                # the default set: another package's plug-in that fails stops no other row
                left_out.append(f"{name} left out: {err}")
                dropped.append(name)
                continue
            if isinstance(err, InputError) and err.place in table[name]:
                # a value the algorithm refused: say whose parameter
                raise InputError(f"algorithms.{name}.{err.place}", err.message) from None
            raise
        if on_schedule is not None:
            on_schedule(schedules[name])
    ran = clock.elapsed()
    # a schedule stands for its algorithm in the floor only as run with default parameters
    handed = {n: s for n, s in schedules.items() if not table[n]} \
        if time_limit is not None else None
    listeners = {k: f for k, f in (("on_progress", on_progress),
                                   ("on_schedule", on_schedule)) if f is not None}
    return report_of(_solve(instance, time_limit, modeler, solver, opt_cache, method, executor,
                            clock=clock, floor_schedules=handed, record=record,
                            listeners=listeners))


def _report(instance: Instance, names: Sequence[str], schedules: Mapping[str, Schedule],
            rep: Any, notes: list[str]) -> RatioReport:
    """``compare``'s report from the algorithms' ``schedules`` and the solve's report."""
    status = str(getattr(rep.status, "value", rep.status))
    if status == "optimal":
        lo = hi = ref = float(rep.objective)
        label = "OPT"
        opt, bound = float(rep.objective), float(rep.bound)
    elif status in ("time_limit", "feasible"):
        lo, hi = float(rep.objective), float(rep.bound)
        ref = hi
        label = "OPT ≤ bound"
        opt, bound = lo, hi
        why = "hit its time limit" if status == "time_limit" else \
            f"({rep.method}) did not prove optimality"
        notes.append(f"the offline solve {why}: {lo:.10g} ≤ OPT ≤ {hi:.10g}; "
                     "opt_over_alg uses the bound; checks are None where the interval "
                     "does not decide them")
    else:
        lo = hi = math.nan
        ref = None
        label = "OPT"
        opt = bound = None
        notes.append(f"the offline solve ended with status {status}: no OPT to compare with")

    if status in ("time_limit", "feasible") and schedules:
        # Every validated schedule is feasible, so OPT is at least the best of them too.
        best_alg = max(float(sch.total_utility) for sch in schedules.values())
        if best_alg > lo:
            lo = best_alg
            notes.append(f"OPT ≥ {lo:.10g}, the best algorithm's validated schedule")

    rows: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = {c: None for c in COLUMNS}
        row["algorithm"] = algorithms.label(name)  # a function passed directly: its name
        sched = schedules.get(name)
        if sched is None:
            rows.append(row)
            continue
        alg = float(sched.total_utility)
        row.update(utility=alg, completed=sched.completed, seconds=sched.extras.get("seconds"))
        if ref is not None:
            row["opt_over_alg"] = ratio(ref, alg)
            row["opt_over_alg_low"] = ratio(lo, alg)
            if not _le(alg, hi):
                notes.append(f"{name}: utility {alg:.10g} exceeds OPT's upper value "
                             f"{hi:.10g}: a bug in the solver or the algorithm")
        if name in ("oasis", "oasis-adaptive"):  # both carry the certificate
            ex = sched.extras
            two_alpha = float(ex["two_alpha"])
            row["two_alpha"] = two_alpha
            row["D_cert"] = ex.get("D_cert")
            if ref is not None:
                if name == "oasis":  # oasis-adaptive claims no ratio (docs/oasis.md)
                    row["within_2alpha"] = _at_most(lo, hi, two_alpha * alg)
                if ex.get("D_cert") is not None:
                    row["dcert_ge_opt"] = _at_most(lo, hi, float(ex["D_cert"]))
            share = float(ex.get("max_job_share", 0.0))
            fails = len(ex.get("relationship_failures", []))
            notes.append(
                f"{name}: α = {ex['alpha']:.4g}; largest share of a server resource one job "
                f"holds in a slot {share:.3g} (the 2α guarantee assumes it is small); "
                f"α·ΔP < ΔD at {fails} arrival(s)")
            notes.extend(f"{name}: {n}" for n in ex.get("notes", []))
        rows.append(row)
    return RatioReport(instance.name, status, opt, bound, ref, label,
                       float(getattr(rep, "seconds", 0.0)), rows, notes)
