"""Size and range limits (SPEC §5): refuse an input before anything large is allocated.

Every code path that allocates in proportion to the input (numpy arrays, Pyomo/PuLP/highspy
models, DP tables) first asks :func:`check_allocation` with an estimate of the bytes it is about
to take. Above the limit it raises ``InputError`` naming the field that makes it large and the
size, which the command line turns into exit status 2 with one message. The limit defaults to
``DEFAULT_MAX_MEMORY`` (a quarter of this machine's memory, at most 8 GiB) and is raised or
lowered with ``--max-memory`` on every command (:func:`set_max_memory`) or the environment
variable ``OASIS_MAX_MEMORY`` (bytes, or with a K/M/G/T suffix), which child processes inherit.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from .errors import InputError

_GIB = 1024**3
_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 1024**2, "MB": 1024**2,
          "MIB": 1024**2, "G": _GIB, "GB": _GIB, "GIB": _GIB, "T": 1024**4, "TB": 1024**4,
          "TIB": 1024**4}
ENV = "OASIS_MAX_MEMORY"


def _machine_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 8 GiB
        return 8 * _GIB


DEFAULT_MAX_MEMORY = min(8 * _GIB, _machine_memory() // 4)


def parse_size(text: str, place: str = "--max-memory") -> int:
    """``"512M"``, ``"2G"``, ``"1.5GiB"``, ``"1000000"`` → bytes; anything else is bad input
    (spaces and signs too, as in every number flag: ``cli.seconds_type``)."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)", text)
    if not m or m.group(2).upper() not in _UNITS:
        raise InputError(place, f"expected a size such as 512M or 4G, got {text!r}")
    value = float(m.group(1)) * _UNITS[m.group(2).upper()]
    if not math.isfinite(value):  # 1e999, or 400 digits of gigabytes
        raise InputError(place, f"too large a size, got {text!r}")
    if value < 1:
        raise InputError(place, f"must be a positive size, got {text!r}")
    return int(value)


def max_memory() -> int:
    """The current limit in bytes: ``OASIS_MAX_MEMORY`` if set, else the default."""
    text = os.environ.get(ENV)
    if text:
        return _parsed(text)
    return DEFAULT_MAX_MEMORY


@functools.lru_cache(maxsize=8)
def _parsed(text: str) -> int:
    """``parse_size`` of the environment's text, once per text (``check_allocation`` runs
    once per OASiS decision)."""
    return parse_size(text.strip(), ENV)  # a file's or a shell's line may end in "\n"


def set_max_memory(nbytes: int) -> None:
    """Set the limit for this process and the processes it starts (sweep workers)."""
    os.environ[ENV] = str(int(nbytes))


def human(nbytes: float) -> str:
    for unit, size in (("TiB", 1024**4), ("GiB", _GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:.0f} B"


def check_allocation(place: str, nbytes: float, what: str) -> None:
    """Refuse (``InputError`` at ``place``) an allocation of about ``nbytes`` bytes above the
    limit. ``what`` says what would be built, with the sizes that make it large, e.g.
    ``"10000000 servers × 10 slots"``."""
    limit = max_memory()
    if not nbytes <= limit:  # also refuses NaN
        raise InputError(place, f"{what} is too large: about {human(nbytes)} "
                                f"(limit {human(limit)}; raise it with --max-memory)")


def check_count(place: str, count: float, limit: float, what: str) -> None:
    """Refuse a count above a hard limit that no memory setting lifts (e.g. a value past
    what double precision represents exactly)."""
    if not count <= limit:
        raise InputError(place, f"{what} {count:g} is too large (limit {limit:g})")


# --- time: the instant past which the online algorithms stop --------------------------------

#: The ``time.perf_counter()`` instant set by ``deadline`` (None: no limit), per context.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("oasis_deadline",
                                                                         default=None)


class OutOfTime(RuntimeError):
    """An online algorithm ran past the instant ``deadline`` set (a time-limited solve's
    floor, ``offline/floor.py``): its whole schedule is not wanted any more. ``partial``:
    where the algorithm can tell, a function that makes the schedule of its decisions so far
    (the simulator's jobs finished before the slot it stopped in, OASiS's jobs admitted
    before the arrival it stopped at, each with its whole allocation: a schedule of the
    instance that the validator accepts), with ``extras["partial"]`` saying where it
    stopped; None where it cannot (it stopped before its first decision)."""

    def __init__(self, message: str = "past the deadline",
                 partial: Callable[[], Any] | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@contextlib.contextmanager
def deadline(at: float | None) -> Iterator[None]:
    """Within it, the simulator's slots, the placement loops of Tetris and DRF and OASiS's
    arrivals raise ``OutOfTime`` once ``time.perf_counter()`` passes ``at`` (None: never).
    A policy that places one worker at a time took minutes for a job of 1e7 workers, so a
    solve's floor overran its time limit (SPEC §6) before any of its own checks."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def on_time() -> None:
    """Raise ``OutOfTime`` past the instant of ``deadline``; cheap (one lookup, one clock
    read): the placement loops call it once per worker."""
    at = _DEADLINE.get()
    if at is not None and time.perf_counter() > at:
        raise OutOfTime("past the deadline")


# --- the life of a child process ------------------------------------------------------------


def end_children() -> None:
    """Stop this process's child processes (SIGTERM): an interrupted command's last step.
    Ours end with it anyway (``die_with_parent``), but a solver that another library starts
    as a plain subprocess does not: after SIGINT to the command alone (not its process
    group), PuLP's ``cbc`` went on for the 56 s of its time limit (an outside audit), and
    without one for as long as it took. Linux lists them in ``/proc``; elsewhere only the
    ``multiprocessing`` children are known."""
    import glob
    import signal
    pids: set[int] = set()
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(path) as f:
                pids.update(int(p) for p in f.read().split())
        except (OSError, ValueError):
            continue
    if not pids:
        import multiprocessing as mp
        pids = {c.pid for c in mp.active_children() if c.pid is not None}
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:  # gone already
            continue


def die_with_parent() -> None:
    """In a child process: the kernel ends it once the thread that started it ends (Linux's
    ``PR_SET_PDEATHSIG``; the offline solve's racers and column generation, and the worker
    pools of ``tasks.make_executor``, are waited for by that thread). A command killed with
    SIGKILL (``timeout -s KILL``) left them running to their limit, and without one for ever.
    Elsewhere nothing changes.

    It also ignores Ctrl-C (SIGINT, which the terminal sends to the whole process group): the
    command answers it (``interrupted``, exit 130) and its children end with it; a child
    that took it too printed a stray ``Process ForkProcess-1:`` and its traceback."""
    import ctypes
    import multiprocessing as mp
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return
    if prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # 1: PR_SET_PDEATHSIG
        return
    parent = mp.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent ended before the signal was asked for


# --- what this process holds: room for a phase that may be left out -------------------------


def held_bytes() -> int:
    """This process's resident memory now, in bytes (Linux's ``/proc/self/statm``; 0 where
    it cannot be read). What a phase that can be left out (column generation's MILPs and
    searches after its bound, ``need_room``) counts beside its own estimate: the audit's
    tree RSS is what the limit is held to, and a forked child starts with its parent's."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


class NoRoom(Exception):
    """A phase that may be left out would pass the limit beside what the process holds
    (``need_room``); ``note`` says which, its estimate, what is held and the limit. Its
    caller keeps what it has (column generation: the incumbent and the bound so far)."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def no_room(nbytes: float, what: str) -> str | None:
    """Where ``nbytes`` more (``what`` would build them) would take this process past the
    limit beside ``held_bytes``, the sentence that says so (the phase is skipped); else
    None. Unlike ``check_allocation`` it refuses nothing: the answer so far stands."""
    held, limit = held_bytes(), max_memory()
    if held + nbytes <= limit:  # (NaN does not fit)
        return None
    return (f"{what} skipped: about {human(nbytes)} beside {human(held)} held would pass "
            f"the memory limit {human(limit)}")


def need_room(nbytes: float, what: str) -> None:
    """Raise ``NoRoom`` (its ``note``: ``no_room``'s sentence) where ``nbytes`` more would
    not fit: for a phase left out from inside a constructor (``PatternMaster``)."""
    note = no_room(nbytes, what)
    if note is not None:
        raise NoRoom(note)
