"""HiGHS for library code: a quiet ``highspy.Highs`` (no banner, no log on the console), and
runs that work whatever other HiGHS users did before in the same process.

Output: the first ``Highs()`` of a process prints HiGHS's banner on file descriptor 1 whatever
``sys.stdout`` is, which would break ``--json`` output; ``quiet_stdout`` sends it to /dev/null
(once per process, see there).

Threads: HiGHS keeps one task scheduler per calling thread, created by that thread's first
solve with the ``threads`` option then in force (0, the default, means half the cores), and
refuses any later solve in that thread whose ``threads`` differs ("Option 'threads' is set to
1 but global scheduler has already been initialized to use 2 threads"; ``run`` returns an
error and the model status stays "Not Set"). So a notebook that solved any small model with
Pyomo's ``highs``, ``appsi_highs``, highspy or PuLP's HiGHS at the default, and then asked this
package (which runs HiGHS on one thread) for an optimum, got "Not Set" from every route. The
remedy lives here and every route uses it: ``run(h)`` runs a ``Highs`` object and, when that
exact refusal comes back (it comes before any work), replaces the calling thread's scheduler
by one of the right size and runs once more. The objects of ``new_highs`` (every ``Highs`` of
the package: the compact MILP on highspy, the flow extraction, column generation, the pattern
master, LNS, the racers) call it from their own ``run()``. ``threads_for(n)`` does the same
around a run that someone else's interface starts (Pyomo's, PuLP's), deciding beforehand with
a probe (an empty model run with ``threads = n``, about 0.1 ms). Either way the thread is left
without a scheduler afterwards, so the caller's next solve gets one of its own ``threads`` as
if we had never run.

Replacing the scheduler (``highspy.Highs.resetGlobalScheduler``) is safe where it is done:

- the scheduler dropped is the calling thread's own; a HiGHS solve running in another thread
  has its own and is not touched (HiGHS ≥ 1.2 creates one per user thread);
- within one thread, the only HiGHS run that can be in progress is one whose callback called
  us (a progress callback that solves again). Ours are counted per thread: a replacement
  needed under one of them raises ``SolverError`` instead of pulling the scheduler from under
  it, and only the outermost drops the scheduler at its end. (A solve started from inside
  another library's HiGHS callback is not supported.)
- resets are serialised by a lock (cheap; HiGHS has had races between concurrent resets); a
  forked child gets a fresh lock, and does not wait for the worker threads of a scheduler it
  inherited (they do not exist in the child: the reset detaches them instead of joining).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from oasis_opt.errors import SolverError

_LOCK = threading.Lock()
#: Per thread: ``depth``, our HiGHS runs in progress; ``probe``, an empty ``Highs``.
_LOCAL = threading.local()
#: The process that imported this module: a forked child has another pid, and its
#: inherited scheduler's worker threads were not copied into it.
_PID = os.getpid()
#: HiGHS's banner has been printed (to /dev/null) in this process.
_BANNER_OUT = False


def _after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()  # a lock held by another thread at the fork is never released


os.register_at_fork(after_in_child=_after_fork)


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Around code that may create the process's first ``Highs`` (ours or a modeller's): its
    banner goes to /dev/null. The banner comes once per process, so the first call creates a
    throwaway ``Highs`` with file descriptor 1 sent to /dev/null, and every call after that
    redirects nothing: fd 1 belongs to the whole process, and redirecting it while another
    thread prints, or while another library redirects it too (Pyomo's solvers capture their
    output so), would lose or misroute that output."""
    global _BANNER_OUT
    if not _BANNER_OUT:
        with _LOCK:
            if not _BANNER_OUT:
                import highspy
                fd = 1  # native code writes to the process's fd 1 whatever sys.stdout is
                with contextlib.suppress(ValueError, OSError):  # closed or swapped by others
                    sys.stdout.flush()
                saved = os.dup(fd)
                devnull = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(devnull, fd)
                    highspy.Highs()
                finally:
                    os.dup2(saved, fd)
                    os.close(saved)
                    os.close(devnull)
                _BANNER_OUT = True
    yield


def mip_options(prep: Any) -> dict[str, Any]:
    """HiGHS settings that go with a prepared formulation (``common.Prep``; beyond threads,
    gap, seed and time limit, which the caller sets): ``mip_allow_restart`` off where
    ``Options.restart`` is false, or ``None`` and the packing resolved to servers;
    ``mip_heuristic_run_root_reduced_cost`` off where ``Options.root_heuristic`` is false,
    or ``None`` and every job's PS ratio γ_i is at most 1."""
    restart = prep.options.restart
    if restart is None:
        restart = prep.packing != "server"
    out: dict[str, Any] = {} if restart else {"mip_allow_restart": False}
    root = prep.options.root_heuristic
    if root is None:
        root = not bool((prep.instance.ps_ratio <= 1).all())
    if not root:
        out["mip_heuristic_run_root_reduced_cost"] = False
    return out


#: HiGHS's options for a careful solve of the compact MILP, where its defaults do not serve.
#: Its feasibility tolerances are absolute (1e-6 on a MIP's rows), so demands of 1e-8 beside 1,
#: or 0.33333334 three times, sum past a capacity by less: 1e-9, the validator's 1e-9·C on
#: a capacity of 1. Its presolve, at 1e-10, proved 12 optimal where 13 is, on a PS row
#: holding 1, 0.33333333 and 1e-6 (tests/test_tolerance.py): off. Not 1e-10 without
#: presolve: HiGHS 1.16 then proved 0 "optimal" on the `hard` preset's seed 1 in 0.1 s
#: (438.7 is), and 181.9 on `mixed` seed 0 (391.5 is); at 1e-9 it proves both.
CAREFUL: dict[str, Any] = {"mip_feasibility_tolerance": 1e-9,
                           "primal_feasibility_tolerance": 1e-9, "presolve": "off"}
#: A positive demand below this share of the largest capacity of its pool and resource makes
#: the compact MILP's solve careful from the start (``fine_demands``).
FINE_DEMAND = 1e-4


#: A capacity that a job's demand divides into a whole number of units within this share, but
#: not exactly, makes the compact MILP's solve go without presolve (``near_whole``).
NEAR_WHOLE = 1e-6
#: HiGHS's options where the instance has ``near_whole`` capacities: its defaults but presolve.
NO_PRESOLVE: dict[str, Any] = {"presolve": "off"}
#: The second solve where the first was ``CAREFUL``: its tolerances, with presolve.
TIGHT: dict[str, Any] = {k: v for k, v in CAREFUL.items() if k != "presolve"}
#: ``care_options``'s ``careful`` for the second opinion on a solve without presolve.
SECOND = "second"
#: Quotients closer than this share to a whole number are whole (rounding: 0.3 / 0.1).
WHOLE = 1e-12


def care_options(instance: Any, careful: bool | str = False) -> dict[str, Any]:
    """HiGHS's options for the compact MILP of ``instance``: where it has ``fine_demands``,
    ``CAREFUL``; else where it has ``near_whole`` capacities, ``NO_PRESOLVE``; else none (its
    defaults). ``careful`` (a second solve, after the first one's schedule overfilled a
    server or its proven optimum lay below an online schedule): ``CAREFUL``, or ``TIGHT``
    where the first solve was careful already: the same options again would give the same
    wrong answer (r18551 through PuLP: 39.91 proved twice where 45.01 is). ``careful`` =
    ``SECOND`` (the second opinion on a proven optimum where the first options turn
    presolve off, ``presolve_off``): the first options with presolve."""
    first = CAREFUL if fine_demands(instance) else NO_PRESOLVE if near_whole(instance) else {}
    if careful == SECOND:
        return {k: v for k, v in first.items() if k != "presolve"}
    if careful:
        return dict(TIGHT if first == CAREFUL else CAREFUL)
    return dict(first)


def presolve_off(instance: Any) -> bool:
    """Whether the first solve of ``instance``'s compact MILP runs without presolve
    (``care_options``). HiGHS 1.16 so proved wrong optima: 0 where 32.44 is (r46354,
    ``near_whole``, through PuLP) and 39.91 where 45.01 is (r18551, ``fine_demands``,
    through PuLP and Pyomo; the same model written out and read back, it proved 39.91
    without presolve and at ``mip_feasibility_tolerance`` 1e-9 only); with presolve it
    proved both. Such an optimum gets a second opinion (``SECOND``,
    ``oasis_opt/offline/report.second_opinion``)."""
    return care_options(instance).get("presolve") == "off"


def near_whole(instance: Any) -> bool:
    """Whether on a resource where some server may bind (as in ``fine_demands``) a capacity C
    holds a job's positive demand d of its pool k ≥ 1 times but for a sliver: C/d within
    ``NEAR_WHOLE`` of k, and not exactly (``WHOLE``). Such a row's right-hand side lies
    within HiGHS's tolerances of what its entries sum to, on one side or the other, and its
    presolve then reasons wrongly: two PSs of 2e13 on a server of 3.999999996e13 (the second
    is over by 1e-9·C), or one worker of 9.99999999e14 on a server of 1e15, and HiGHS 1.16
    proved 0 optimal where 53.37 and 40.32 are, through every modeller, at one unit of the
    rows and not the next (1e4 and 1e5 wrong, 1e6 right), and always right without presolve
    (tests/test_tolerance.py). The shipped instances and the imported traces have none: their
    capacities are whole multiples of the demands or far from them."""
    for demand, capacity, binds in _binding_pools(instance):
        for r in np.flatnonzero(binds):
            d = np.unique(demand[:, r][demand[:, r] > 0])
            c = np.unique(capacity[:, r][capacity[:, r] > 0])
            if not d.size or not c.size:
                continue
            q = c[:, None] / d[None, :]
            k = np.rint(q)
            off = np.abs(q - k) / np.maximum(q, 1.0)
            if ((k >= 1) & (off > WHOLE) & (off < NEAR_WHOLE)).any():
                return True
    return False


def fine_demands(instance: Any) -> bool:
    """Whether some job's positive demand in ``instance`` (an ``Instance``) is below
    ``FINE_DEMAND`` of the largest capacity of its pool and resource: its capacity rows hold
    entries HiGHS reads as nearly 0, and its compact MILP is solved carefully
    (``care_options``). The benchmark's instances, the shipped ones and the imported traces
    have none. A schedule that overfills a server anyway is solved again carefully
    (``offline/report.py``, ``solved_again``).

    Only a resource on which some server may bind counts (its capacity below what every
    job's most units a slot hold together, as ``offline/scale.py`` asks): the rows of the
    others are not built. A PS demand of 1.9 beside capacities of 1.9e15 that nothing could
    fill made a solve careful, and HiGHS without presolve then proved 205 004 optimal
    through PuLP where 7.07e10 is (seed 64 215 of the numeric-range search)."""
    for demand, capacity, binds in _binding_pools(instance):
        top = capacity.max(axis=0)  # per resource
        if ((demand > 0) & (demand < FINE_DEMAND * top[None, :]) & binds[None, :]).any():
            return True
    return False


def _binding_pools(instance: Any) -> Iterator[tuple[Any, Any, Any]]:
    """(demand (J, R), capacity (S, R), binds (R,) bool) of the worker and the PS pool, where
    both are non-empty: ``binds[r]`` where some server's capacity of r may bind (below what
    every job's most units a slot hold together, as ``offline/scale.py`` asks); the rows of
    the other resources are not built."""
    from .common import may_bind, most_units
    units = most_units(instance)
    for demand, capacity, most in ((instance.worker_demand, instance.worker_capacity,
                                    units[0]),
                                   (instance.ps_demand, instance.ps_capacity, units[1])):
        if demand.size and capacity.size:
            yield demand, capacity, may_bind(capacity, demand, most).any(axis=0)


def new_highs(threads: int | None = None) -> Any:
    """A ``highspy.Highs`` with ``output_flag`` off, created without its banner, and the
    ``threads`` option set when given; its ``run()`` is this module's ``run``, so every
    route that builds on it (the compact MILP on highspy, the flow extraction, column
    generation, the pattern master, LNS) is served whatever the thread's scheduler."""
    with quiet_stdout():
        h = _highs_class()()
        h.setOptionValue("output_flag", False)
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    return h


@functools.cache
def _highs_class() -> type:
    import highspy

    class Highs(highspy.Highs):  # type: ignore[misc, valid-type]
        """``highspy.Highs`` whose ``run`` goes through ``formulations.highs.run``."""

        def run(self) -> Any:
            return run(self)

        # HiGHS refuses a change it cannot take (a matrix entry of 1e15 or more, an infinite
        # cost) with kError and goes on without it: a column silently missing from a master
        # made column generation prove 0.0094 where OPT is 0.0136. Every change is checked.
        def passModel(self, *args: Any) -> Any:
            return _accepted(super().passModel(*args), "passModel")

        def addRows(self, *args: Any) -> Any:
            return _accepted(super().addRows(*args), "addRows")

        def addCols(self, *args: Any) -> Any:
            return _accepted(super().addCols(*args), "addCols")

        def addCol(self, *args: Any) -> Any:
            return _accepted(super().addCol(*args), "addCol")
    return Highs


def _accepted(status: Any, call: str) -> Any:
    """``status`` of a model change, or ``SolverError`` where HiGHS refused it."""
    import highspy
    if status == highspy.HighsStatus.kError:
        raise SolverError(f"HiGHS refused a model change ({call}): a coefficient or bound "
                          f"outside its range; the instance's numbers were not brought into "
                          f"it (please report this with the instance)")
    return status


def option(h: Any, name: str) -> Any:
    """The value of ``h``'s option ``name`` (highspy returns it bare, or, in 1.16, as a
    ``(status, value)`` pair)."""
    value = h.getOptionValue(name)
    return value[-1] if isinstance(value, tuple) else value


def run(h: Any) -> Any:
    """``h.run()``; when HiGHS refused the run for its ``threads`` option, once more on a
    scheduler of that size (module docstring). Returns the ``HighsStatus``."""
    import highspy
    cls = _highs_class()
    plain = super(cls, h).run if isinstance(h, cls) else h.run  # HiGHS's own run
    threads = int(option(h, "threads"))
    with _keeping_ctrl_c(), _running(threads):
        status = plain()
        if status == highspy.HighsStatus.kError and threads > 0 \
                and h.getModelStatus() == highspy.HighsModelStatus.kNotset \
                and not _accepts(threads):
            _make_room(threads)
            status = plain()
    return status


def interrupted() -> bool:
    """Whether Ctrl-C (SIGINT) came during the HiGHS run in progress in the main thread.
    highspy swallows an exception raised in a Python callback, and the ``KeyboardInterrupt``
    of Ctrl-C is raised in whichever callback is running when it comes: HiGHS went on to the
    end and the command exited 0 with its answer. So ``run`` holds SIGINT while HiGHS runs:
    the signal only sets this flag, the package's interrupt callbacks (``Deadline.watch``,
    ``offline.backends.watch``) read it and stop HiGHS, and ``run`` raises
    ``KeyboardInterrupt`` once HiGHS has returned."""
    return _CTRL_C[0]


#: ``interrupted()``'s flag (one per process: signals come to the main thread).
_CTRL_C = [False]


def _on_ctrl_c(signum: int, frame: Any) -> None:
    _CTRL_C[0] = True


@contextlib.contextmanager
def _keeping_ctrl_c() -> Iterator[None]:
    """Around a HiGHS run: SIGINT sets ``interrupted()``'s flag instead of raising, and
    ``KeyboardInterrupt`` is raised after the run. Only where Python's own handler is in
    place and in the main thread (a caller's own handler, an ignored SIGINT in a worker, and
    a run inside another run's callback are left as they are). The default handler is put
    back before the flag is read: a signal that Python handles after that raises as usual,
    one handled before it has set the flag."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    _CTRL_C[0] = False
    signal.signal(signal.SIGINT, _on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if _CTRL_C[0]:
        _CTRL_C[0] = False
        raise KeyboardInterrupt


@contextlib.contextmanager
def threads_for(threads: int) -> Iterator[None]:
    """Around a HiGHS run that another interface starts with option ``threads`` (Pyomo's,
    PuLP's): this thread's scheduler is replaced first when it would refuse that number.
    Ctrl-C is held as in ``run``: PuLP's run stops at its next interrupt callback
    (``offline.backends.watch`` is on its ``Highs``); Pyomo's, whose ``Highs`` we do not
    see, at its end, and then ``KeyboardInterrupt`` is raised (both ran to the end and
    exited 0)."""
    with _keeping_ctrl_c(), _running(threads):
        if threads > 0 and not _accepts(threads):
            _make_room(threads)
        yield


@contextlib.contextmanager
def _running(threads: int) -> Iterator[None]:
    """Count our runs in progress in this thread; the outermost one that set ``threads``
    leaves the thread without a scheduler, so that whoever solves next in it gets one of
    its own ``threads`` (a 1-thread scheduler left in place would make a notebook's default
    solves single-threaded and refuse its explicit thread counts). Dropping one without
    worker threads costs nothing measurable (2 000 runs of a tiny LP: 87 µs each, with or
    without)."""
    _LOCAL.depth = getattr(_LOCAL, "depth", 0) + 1
    try:
        yield
    finally:
        _LOCAL.depth -= 1
        if _LOCAL.depth == 0 and threads > 0:
            _drop()


def _accepts(threads: int) -> bool:
    """Whether this thread's scheduler runs HiGHS with ``threads`` threads (a run of an empty
    model: HiGHS checks the option before anything else; a thread without a scheduler yet
    gets one of that size)."""
    import highspy
    probe = getattr(_LOCAL, "probe", None)
    if probe is None:  # HiGHS's own class: its run must not come back here
        with quiet_stdout():
            probe = _LOCAL.probe = highspy.Highs()
        probe.setOptionValue("output_flag", False)
    probe.setOptionValue("threads", threads)
    return probe.run() != highspy.HighsStatus.kError


def _make_room(threads: int) -> None:
    """Replace this thread's scheduler by one of ``threads``, unless one of our runs is in
    progress in this thread (its callback called us): that one is not pulled away."""
    if _LOCAL.depth > 1:
        raise SolverError(
            "HiGHS is already running in this thread with another thread count than this "
            "solve needs (a solve started from inside a HiGHS callback?); run it after that "
            "solve or in another thread")
    _drop()
    if not _accepts(threads):
        raise SolverError(f"HiGHS refuses to run with {threads} thread(s) even after "
                          f"resetting its scheduler")


def _drop() -> None:
    """Drop this thread's scheduler (the next run creates one)."""
    import highspy
    with _LOCK:
        # in a forked child the inherited worker threads do not exist: detach, do not join
        highspy.Highs.resetGlobalScheduler(os.getpid() == _PID)
