"""Solves in forked child processes, stopped at the deadline: the portfolio (variants of the
compact MILP race; the first proof wins) and the guard of column generation (its last
schedule and bound are kept when it is stopped)."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..errors import InputError, SolverError
from ..formulations.deadline import Deadline
from ..formulations.highs import quiet_stdout
from ..formulations.result import SolveResult
from ..limits import die_with_parent
from ..model import REL_TOL, Instance, Schedule
from . import backends
from .clock import Clock, Tracker
from .report import SolveStatus

#: Seconds between two looks at a race's ``stop`` (``solve_portfolio``, ``colgen_guarded``).
STOP_POLL = 0.1


def can_fork() -> bool:
    """A child process is possible: fork exists and this process is no daemon (Dask's and
    ``multiprocessing.Pool``'s workers may not have children)."""
    import multiprocessing as mp
    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def prepared(variant: Any) -> Any:
    """A racer's model: ``variant`` itself, or where it is a function (``solve_portfolio``:
    a model prepared only once its racer starts) what it returns."""
    return variant() if callable(variant) else variant


class _Board:
    """The best schedule any racer has found, for the others to take (issue 22 round 10):
    the parent writes it to a file and then counts it in shared memory; a racer reads the
    file when the count has moved. Nothing here can block either side (a pipe to a racer
    inside a long root LP, which reads nothing, could fill up and stall the parent)."""

    def __init__(self, ctx: Any) -> None:
        import tempfile
        self.folder = tempfile.mkdtemp(prefix="oasis-race-")
        self.posted = ctx.Value("q", 0, lock=False)  # inherited by the forked racers
        self.best: Schedule | None = None

    def post(self, schedule: Schedule, source: int) -> None:
        """``schedule`` (found by racer ``source``) is the best so far: publish it."""
        import os
        import pickle
        path = os.path.join(self.folder, "best.pickle")
        with open(path + ".part", "wb") as f:
            pickle.dump((source, schedule), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(path + ".part", path)
        self.best = schedule
        self.posted.value += 1

    def reader(self, racer: int) -> Any:
        """For racer ``racer`` (in its process): a function returning the schedule posted
        since its last call, or None (nothing new, or its own)."""
        import os
        import pickle
        seen = [0]

        def read() -> Schedule | None:
            count = self.posted.value
            if count == seen[0]:
                return None
            seen[0] = count
            with open(os.path.join(self.folder, "best.pickle"), "rb") as f:
                source, schedule = pickle.load(f)
            return None if source == racer else schedule
        return read

    def close(self) -> None:
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)


def _portfolio_worker(prep: Any, random_seed: int, time_limit: float | None, mip_gap: float,
                      start: Schedule | None, conn: Any, inbox: Any = None,
                      hold: tuple[Any, float] | None = None,
                      probe: tuple[Any, float] | None = None) -> None:
    """One racer (a forked child: ``prep`` is inherited, not pickled): build and solve its
    variant; send ``("progress", incumbent, bound)`` on every improvement, ``("incumbent",
    result)`` with every improving incumbent (a ``SolveResult`` stopped on the limit, so that
    the parent keeps it if it has to kill this process at the deadline), and ``("done",
    result)`` or ``("error", text)`` at the end. ``inbox``: the other racers' schedules
    (``_Board.reader``), handed to HiGHS while it runs (``backends.take_schedules``).
    ``hold``: (connection, seconds): the racer waits that long before it starts (sending
    ``("started",)`` then), sooner on ``"go"`` from the parent, and ends without a word on
    anything else or once the parent closes the connection (a partner of the racer that runs
    in the parent, ``solve_portfolio(home=True)``). ``probe``: (model, seconds): while held,
    the racer first solves that model (or what the function returns) for that many seconds
    of HiGHS; where it proves the optimum it sends ``("probed", result)`` and ends, else it
    is held for what is left of its wait."""
    die_with_parent()
    try:
        if hold is not None:
            waited = time.perf_counter()
            control, seconds = hold
            if probe is not None:
                proof = _probe(probe, time_limit, mip_gap, start)
                if proof is not None:
                    conn.send(("probed", proof))
                    return
                seconds = max(0.0, seconds - (time.perf_counter() - waited))
            if control.poll(seconds):
                try:
                    if control.recv() != "go":
                        return
                except EOFError:  # the parent's racer proved first (or the parent ended)
                    return
            conn.send(("started",))
            if time_limit is not None:
                time_limit = max(0.05, time_limit - (time.perf_counter() - waited))
        # a scheduler inherited from the parent of another thread count is reset by the
        # first run (formulations/highs.py)
        clock = Clock(time_limit)
        prep = prepared(prep)
        tracker = Tracker(clock, lambda _s, inc, b: conn.send(("progress", inc, b)))
        result = backends.solve_highspy(
            prep, clock, tracker, mip_gap, random_seed, start,
            on_values=lambda obj, v: conn.send(("incumbent", SolveResult(
                SolveStatus.TIME_LIMIT, obj, values=v, solver="highspy"))), inbox=inbox)
        conn.send(("done", result))
    except Exception as exc:  # reported to the parent, which decides
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _probe(probe: tuple[Any, float], time_limit: float | None, mip_gap: float,
           start: Schedule | None) -> SolveResult | None:
    """``_portfolio_worker``'s probe: the model solved for its seconds of HiGHS (within
    ``time_limit``), its result where it proves the optimum, else None."""
    variant, seconds = probe
    window = backends.window_for(seconds)
    return _proof(prepared(variant), window if time_limit is None else min(window, time_limit),
                  mip_gap, start)


def _proof(model: Any, time_limit: float | None, mip_gap: float, start: Schedule | None,
           halt: Callable[[], bool] | None = None) -> SolveResult | None:
    """``model`` solved alone within ``time_limit`` (until ``halt()``, if given), its result
    where it proves the optimum, else None (a probe's and the prober's run)."""
    clock = Clock(time_limit)
    result = backends.solve_highspy(model, clock, Tracker(clock, None), mip_gap, start=start,
                                    halt=halt)
    return result if result.status is SolveStatus.OPTIMAL else None


class Prober:
    """A model solved for a few seconds of HiGHS in a forked child from the start of a solve
    (``compact.early_prober``: the plain model while the floor runs and the route is
    planned, issue 22 round 42), stopped by ``close()``, or past its window once told to
    ``keep`` on. ``proof()`` is its result where it has proven the optimum, else None, and
    never waits."""

    def __init__(self, variant: Any, seconds: float, time_limit: float | None,
                 mip_gap: float, max_nonzeros: int) -> None:
        import multiprocessing as mp
        ctx = mp.get_context("fork")  # as the portfolio's racers
        recv, send = ctx.Pipe(duplex=False)
        told, self.control = ctx.Pipe(duplex=False)
        # the window's end (``seconds``, within the time limit): the child's HiGHS stops
        # there unless it is told to keep on by then
        self.ends = time.perf_counter() + (seconds if time_limit is None
                                           else min(seconds, time_limit))
        self.proc = ctx.Process(target=_prober_worker, daemon=True, args=(
            variant, self.ends, time_limit, mip_gap, max_nonzeros, send, told))
        self.proc.start()
        send.close()
        told.close()
        self.conn, self.result, self.ended, self.last = recv, None, False, 0.0

    def left(self) -> float:
        """Seconds until the child's window is over (0 once it has ended)."""
        return 0.0 if self.ended else max(0.0, self.ends - time.perf_counter())

    def keep(self) -> None:
        """Let the child's HiGHS go on past its window, within the solve's time limit,
        until ``close()``: no racer will want its core."""
        with contextlib.suppress(OSError):  # it has ended: nothing to tell
            self.control.send("keep")

    def proof(self) -> SolveResult | None:
        """The probe's result where it proved the optimum (read from the child if it has
        said so by now), else None."""
        if not self.ended and self.conn.poll():
            self.ended = True
            with contextlib.suppress(EOFError):  # died without a word: no proof
                msg = self.conn.recv()
                self.result = msg[1] if msg[0] == "probed" else None
        return self.result

    def proven(self) -> bool:
        """``proof()`` is not None, asked at most every ``HOME_POLL`` seconds (for HiGHS's
        callbacks and a guard's ``stop``)."""
        now = time.perf_counter()
        if self.result is None and not self.ended and now - self.last >= HOME_POLL:
            self.last = now
            self.proof()
        return self.result is not None

    def close(self) -> None:
        """Stop the child (if it still runs); ``proof()`` stays what it was."""
        self.ended = True
        self.conn.close()
        self.control.close()
        _stop_racers([self.proc])

    def __enter__(self) -> Prober:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _prober_worker(variant: Any, ends: float, time_limit: float | None, mip_gap: float,
                   max_nonzeros: int, conn: Any, told: Any) -> None:
    """``Prober``'s child: ``("probed", result)`` where the model (or what the function
    returns) proves the optimum by ``ends`` (``time.perf_counter``), or within the time
    limit once ``told`` says ``"keep"`` (``Prober.keep``), else ``("unproven",)``, also where
    it has ``max_nonzeros`` or more."""
    die_with_parent()
    kept = [False]

    def over() -> bool:
        """The window is over and the parent has not said to keep on (asked by HiGHS's
        callbacks)."""
        if not kept[0] and told.poll():
            with contextlib.suppress(EOFError):  # closed: the parent no longer listens
                kept[0] = told.recv() == "keep"
        return not kept[0] and time.perf_counter() >= ends
    try:
        model = prepared(variant)
        proof = None if model.model_size()["nonzeros"] >= max_nonzeros else _proof(
            model, time_limit, mip_gap, None, over)
        conn.send(("unproven",) if proof is None else ("probed", proof))
    except Exception as exc:  # no proof: the solve goes on without it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


class _Standings:
    """What the racers of one race have said (``_portfolio_worker``'s messages): each one's
    end (result or error), best incumbent and least bound, and the answer made of them."""

    def __init__(self, preps: list[Any], tracker: Tracker, board: _Board | None) -> None:
        self.preps, self.tracker, self.board = preps, tracker, board
        self.probe = len(preps)  # the index a held racer's probe proves under (``probed``)
        self.done: dict[int, SolveResult] = {}
        self.errors: dict[int, str] = {}
        self.found: dict[int, SolveResult] = {}  # best incumbent of each
        self.bounds: dict[int, float] = {}
        self.started: set[int] = set()  # racers held back that have started (``hold``)
        self.posted = 0  # schedules put on the board

    def take(self, k: int, msg: tuple[Any, ...]) -> bool:
        """Racer ``k``'s message ``msg``; true where it was the racer's last."""
        from .report import extract
        kind = msg[0]
        if kind == "started":
            self.started.add(k)
            return False
        if kind == "progress":
            self.tracker.update(msg[1], msg[2])
            if msg[2] is not None and math.isfinite(msg[2]):
                self.bounds[k] = min(self.bounds.get(k, math.inf), msg[2])
            return False
        if kind == "incumbent":
            if k not in self.found or msg[1].objective > self.found[k].objective:
                self.found[k] = msg[1]
            board = self.board
            if board is not None and (board.best is None or msg[1].objective
                                      > board.best.total_utility + REL_TOL * max(
                                          1.0, abs(msg[1].objective))):
                self.preps[k] = prepared(self.preps[k])
                board.post(extract(self.preps[k], msg[1]), k)
                self.posted += 1
            return False
        if kind == "done":
            self.done[k] = msg[1]
        elif kind == "probed":  # the racer's probe proved the optimum; the racer ended
            self.done[self.probe] = msg[1]
        else:
            self.errors[k] = msg[1]
        return True

    def read(self, conns: dict[Any, int], ready: list[Any]) -> None:
        """One message from each of ``ready`` (connections of ``conns``, which loses those
        whose racer has ended)."""
        for c in ready:
            k = conns[c]
            try:
                msg = c.recv()
            except EOFError:  # the racer died without a word
                self.errors.setdefault(k, "the process ended without a result")
                del conns[c]
                continue
            if self.take(k, msg):
                del conns[c]

    def drain(self, conns: dict[Any, int]) -> None:
        """Every message the racers of ``conns`` have sent so far, without waiting."""
        for c in list(conns):
            while c in conns and c.poll():
                self.read(conns, [c])

    def proven(self) -> bool:
        return any(r.status is SolveStatus.OPTIMAL for r in self.done.values())

    def answer(self, clock: Clock, racers: dict[str, int]) -> SolveResult:
        """The race's result: the first proof, else the best incumbent with the least bound
        of all racers (each is a bound on the same OPT); ``extras`` as ``solve_portfolio``
        says."""
        done = self.done
        for k, found_k in self.found.items():  # killed racers: their last incumbent
            if k not in done:
                done[k] = replace(found_k, bound=self.bounds.get(k),
                                  solve_seconds=clock.elapsed())
        if not done:
            if self.errors:
                raise SolverError("every racer of the portfolio failed: "
                                  + "; ".join(self.errors.values()))
            return SolveResult(SolveStatus.TIME_LIMIT, None,
                               min(self.bounds.values(), default=None),
                               solve_seconds=clock.elapsed(), solver="highspy",
                               extras={"racer": 0, **racers})  # nothing found: the floor
        proven = [k for k, r in done.items() if r.status is SolveStatus.OPTIMAL]
        if proven:
            return replace(done[proven[0]], extras={**done[proven[0]].extras,
                                                    "racer": proven[0], **racers})
        best = max(done, key=lambda k: -math.inf if done[k].objective is None
                   else done[k].objective)
        bounds = [r.bound for r in done.values() if r.bound is not None]
        return replace(done[best], bound=min(bounds) if bounds else None,
                       extras={**done[best].extras, "racer": best, **racers})


def _stop_racers(procs: list[Any]) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=2.0)
        if p.is_alive():
            p.kill()


def solve_portfolio(preps: list[Any], seeds: list[int], clock: Clock, tracker: Tracker,
                    mip_gap: float, start: Schedule | None,
                    delays: list[float] | None = None, share: bool = False,
                    stop: Callable[[], bool] | None = None,
                    home: bool = False, probe: tuple[Any, float] | None = None,
                    prober: Prober | None = None) -> SolveResult:
    """Race the variants in child processes; the first proof wins and the others are
    stopped. Racer k starts ``delays[k]`` seconds after the first (default: all at once),
    and only if no racer has proven the optimum by then: a model that proves before the
    partner's start never pays for its process. Without a proof (time limit) the best
    incumbent wins, and the bound is the least of their bounds (each is a bound on the same
    OPT). Returns the winner's result, its index into ``preps`` as ``extras["racer"]`` and
    the number of racers started as ``extras["racers"]``. A racer's model may be a function
    returning it (``prepared``), called in the racer's process once it starts; the first
    is a model.

    ``home`` (issue 22 round 30): the first racer runs in this process, the others in
    children forked before it starts, each held until its delay has passed (it then
    starts unless the first has proven the optimum) or the first has failed; HiGHS's
    callbacks read the children's messages and stop the first racer at another's proof. On
    a model that proves within the delay the race costs one idle fork instead of a whole
    solve in a child (its first HiGHS run, its model built again, every incumbent sent back):
    for models small enough that HiGHS's callbacks keep the deadline
    (``plan.GUARD_MIN_NONZEROS``). Not with ``share`` or ``stop``. ``probe`` (model or
    function, seconds; with ``home`` only): the second racer, while it is held, first
    solves that model for that many seconds of HiGHS on the core the wait leaves idle
    (``compact.plain_probe``'s PLAIN); its proof wins as a racer's does, with
    ``extras["racer"]`` = ``len(preps)`` (the probe's model is not one of ``preps``).
    ``prober`` (with ``home`` only, instead of ``probe``): that probe already runs
    (``Prober``, since the solve's start): the second racer is held until its window is
    over as well, its proof wins as the probe's does, and the race ends it.

    ``share`` (issue 22 round 10): every improving incumbent that beats all racers' so far
    becomes a schedule (``report.extract`` on its racer's model) that the other racers hand
    to their running HiGHS (``backends.take_schedules``, each on its own model), and a racer
    started later starts from it instead of ``start``; ``extras["shared"]`` counts them.

    ``stop()`` true (asked every ``STOP_POLL`` seconds) ends the race as the deadline does:
    another route has proven the optimum or closed the gap (``route_race``)."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    # fork: quick, and it re-imports nobody's main module (spawn and forkserver would run a
    # user's script again); each child resets HiGHS's thread pool before it solves
    ctx = mp.get_context("fork")
    left = backends.highs_budget(clock, preps[0])
    budget = None if left is None else max(0.05, left - 0.5)  # the processes start
    waits = list(delays) if delays is not None else [0.0] * len(preps)
    if len(waits) != len(preps) or len(seeds) != len(preps):
        raise ValueError("one seed and one delay per racer")
    if (probe is not None or prober is not None) and not (home and len(preps) > 1):
        raise ValueError("a probe runs beside a racer at home while its partner is held")
    if probe is not None and prober is not None:
        raise ValueError("one probe beside the racer at home: a model or a running prober")
    if home:
        if share or stop is not None:
            raise ValueError("a race with a racer at home neither shares nor stops")
        return _race_at_home(ctx, preps, seeds, clock, tracker, mip_gap, start, waits,
                             budget, probe, prober)
    procs: list[Any] = []
    conns: dict[Any, int] = {}
    t0 = time.perf_counter()
    board = _Board(ctx) if share else None
    standings = _Standings(preps, tracker, board)

    def launch(k: int) -> None:
        recv, send = ctx.Pipe(duplex=False)
        rest = None if budget is None else max(0.05, budget - (time.perf_counter() - t0))
        first = start if board is None or board.best is None else board.best
        p = ctx.Process(target=_portfolio_worker, daemon=True, args=(
            preps[k], seeds[k], rest, mip_gap, first, send,
            None if board is None else board.reader(k)))
        p.start()
        send.close()
        procs.append(p)
        conns[recv] = k
    try:
        while True:
            pending = list(range(len(procs), len(preps)))
            if pending and not conns and not standings.done:
                launch(pending.pop(0))  # every racer so far failed: the next one now
            while pending and time.perf_counter() - t0 >= waits[pending[0]]:
                launch(pending.pop(0))  # racers start in their order
            if not conns:
                break  # all that started have ended (a racer due later is not needed)
            left = clock.remaining()
            timeout = None if left is None else max(0.0, left + 0.2)
            if pending:  # wake up for the next racer's start
                due = max(0.0, waits[pending[0]] - (time.perf_counter() - t0))
                timeout = due if timeout is None else min(timeout, due)
            if stop is not None:
                timeout = STOP_POLL if timeout is None else min(timeout, STOP_POLL)
                if stop():
                    break  # as at the deadline: the racers are killed, their incumbents kept
            ready = wait(list(conns), timeout=timeout)
            if not ready and (left is None or clock.remaining() > -0.2) and (
                    pending or stop is not None):
                continue  # the next racer is due, or a poll of ``stop``
            if not ready:
                break  # past the deadline: the racers are killed, their incumbents kept
            standings.read(conns, ready)
            if standings.proven():
                break
        standings.drain(conns)  # sent before the end and not read yet: a last incumbent
    finally:
        _stop_racers(procs)
        if board is not None:
            board.close()
    return standings.answer(clock, {"racers": len(procs),
                                    **({"shared": standings.posted} if share else {})})


#: Seconds between two reads of the children's messages from the home racer's callbacks.
HOME_POLL = 0.01


def _race_at_home(ctx: Any, preps: list[Any], seeds: list[int], clock: Clock,
                  tracker: Tracker, mip_gap: float, start: Schedule | None,
                  waits: list[float], budget: float | None,
                  probe: tuple[Any, float] | None = None, prober: Prober | None = None
                  ) -> SolveResult:
    """``solve_portfolio(home=True)``: racer 0 here, the others forked now and held (racer
    1 probing first, ``probe``, or held until ``prober``'s window is over as well)."""
    from multiprocessing.connection import wait

    procs: list[Any] = []
    conns: dict[Any, int] = {}
    controls: list[Any] = []
    standings = _Standings(preps, tracker, None)
    last = [0.0]

    def heard() -> None:
        """The children's messages so far read, and the prober's proof if it has one."""
        standings.drain(conns)
        if prober is not None and (proof := prober.proof()) is not None:
            standings.done.setdefault(standings.probe, proof)

    def halt() -> bool:
        """Asked by racer 0's HiGHS callbacks: true once a child or the prober has proven
        the optimum (read every ``HOME_POLL`` seconds)."""
        now = time.perf_counter()
        if now - last[0] < HOME_POLL:
            return False
        last[0] = now
        heard()
        return standings.proven()
    try:
        if prober is not None:  # the partner's core is the prober's until its window ends
            waits = [waits[0], max(waits[1], prober.left()), *waits[2:]]
        for k in range(1, len(preps)):
            recv, send = ctx.Pipe(duplex=False)
            held, control = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_portfolio_worker, daemon=True, args=(
                preps[k], seeds[k], budget, mip_gap, start, send, None, (held, waits[k]),
                probe if k == 1 else None))
            p.start()
            send.close()
            held.close()
            procs.append(p)
            conns[recv] = k
            controls.append(control)
        try:
            standings.done[0] = backends.solve_highspy(preps[0], clock, tracker, mip_gap,
                                                       seeds[0], start, halt=halt)
        except Exception as exc:  # as a child's failure: the others start now
            standings.errors[0] = f"{type(exc).__name__}: {exc}"
            for control in controls:
                with contextlib.suppress(OSError):  # a racer that has ended reads nothing
                    control.send("go")
        while conns and not standings.proven():
            left = clock.remaining()
            ready = wait(list(conns), timeout=None if left is None else max(0.0, left + 0.2))
            if not ready:
                break  # past the deadline: the racers are killed, their incumbents kept
            standings.read(conns, ready)
        heard()  # what came meanwhile: "started", a last incumbent, a proof
    finally:
        for control in controls:
            control.close()  # a held racer ends
        _stop_racers(procs)
        if prober is not None:
            prober.close()
    return standings.answer(clock, {"racers": 1 + len(standings.started)})


def _colgen_worker(instance: Instance, kwargs: dict[str, Any], conn: Any) -> None:
    """Column generation in a forked child: ``("progress", incumbent, bound)`` and
    ``("schedule", schedule)`` on every improvement, ``("done", result)``, ``("input", place,
    message)`` (bad input: exit 2 as in-process) or ``("error", text)`` at the end."""
    import highspy

    from ..formulations import colgen
    die_with_parent()
    try:
        highspy.Highs.resetGlobalScheduler(True)  # a pool inherited from the parent is dead
        with quiet_stdout():
            res = colgen.solve(instance, on_progress=lambda _s, inc, b: conn.send(
                ("progress", inc, b)), on_schedule=lambda s: conn.send(("schedule", s)),
                **kwargs)
        conn.send(("done", res))
    except InputError as exc:  # too large an input, say: the parent raises it as such
        conn.send(("input", exc.place, exc.message))
    except Exception as exc:  # reported to the parent, which raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def colgen_guarded(instance: Instance, kwargs: dict[str, Any], deadline: Deadline,
                   tracker: Tracker, stop: Callable[[], bool] | None = None,
                   on_start: Callable[[], None] | None = None) -> SolveResult:
    """``colgen.solve`` in a child process stopped at ``deadline`` or once ``stop()`` is true
    (asked every ``STOP_POLL`` seconds); its result, or (stopped) one made of the last
    schedule and the least bound it sent (``colgen.result``). ``on_start()`` is called once
    the child runs (``route_race`` starts the other route's process after it)."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    from ..formulations.colgen import ColgenStats, result

    started = time.perf_counter()
    ctx = mp.get_context("fork")  # as the portfolio: no re-import of the user's main module
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_colgen_worker, daemon=True, args=(instance, kwargs, send))
    try:
        proc.start()
    finally:
        if on_start is not None:
            on_start()
    send.close()
    best: Schedule | None = None
    bound = math.inf
    try:
        while True:
            left = deadline.left()
            if left <= 0 or stop is not None and stop():
                break  # the deadline (or the other route's proof): stop the child
            if not wait([recv], timeout=left if stop is None else min(left, STOP_POLL)):
                if stop is not None and deadline.left() > 0:
                    continue  # a poll of ``stop``
                break  # the deadline: stop the child, keep what it sent
            try:
                msg = recv.recv()
            except EOFError:
                raise SolverError("column generation ended without a result") from None
            if msg[0] == "progress":  # incumbents count once their schedule is here
                tracker.update(bound=msg[2])
                if msg[2] is not None and math.isfinite(msg[2]):
                    bound = min(bound, msg[2])
            elif msg[0] == "schedule":
                if best is None or msg[1].total_utility > best.total_utility:
                    best = msg[1]
                    tracker.update(incumbent=best.total_utility)
            elif msg[0] == "done":
                return msg[1]
            elif msg[0] == "input":
                raise InputError(msg[1], msg[2])
            else:
                raise SolverError(f"column generation failed on {instance.name}: {msg[1]}")
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join(timeout=2.0)
        if proc.is_alive():
            proc.kill()
        recv.close()
    if best is None:
        best = Schedule.from_arrays(instance, "colgen", {}, {})
    return result(ColgenStats(bound, 0.0, False, SolveStatus.TIME_LIMIT, 0, 0), best,
                  time.perf_counter() - started)
