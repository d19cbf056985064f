"""The one exception type for bad input: it names the place in the file that is wrong."""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast


class InputError(ValueError):
    """A malformed or inconsistent instance, schedule or parameter.

    ``place`` is a JSON path such as ``jobs[3].worker_demand`` (empty when the whole input is
    wrong); ``str(err)`` is the one-line message the command line prints before exiting with 2.
    """

    def __init__(self, place: str, message: str) -> None:
        # a hostile name (a job id, a field, a format tag of 100 000 characters) is echoed
        # clipped: the message stays one readable line
        self.place = elide(place, MAX_PLACE)
        self.message = elide(message, MAX_MESSAGE)
        super().__init__(f"{self.place}: {self.message}" if self.place else self.message)

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # from a pool or Dask worker to the command: rebuilt from place and message (the
        # default would call ``InputError(str(self))`` and fail in the parent)
        return type(self), (self.place, self.message)


#: the most characters of an error's place and of its message (longer: the middle elided)
MAX_PLACE = 300
MAX_MESSAGE = 600


#: What ``one_line`` escapes: C0 and C1 controls and the characters ``str.splitlines`` breaks at
_LINE_BREAKERS = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7f, *range(0x80, 0xa0)]} | {
    0x2028: "\\u2028", 0x2029: "\\u2029", 0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r"}


def one_line(text: str) -> str:
    """``text`` with line breaks and control characters escaped (``\\n``, ``\\x1b``): an
    error names places from the user's files and paths, and one line stays one line (and no
    escape sequence reaches the terminal)."""
    return text.translate(_LINE_BREAKERS)


def lone_surrogate(text: str) -> str | None:
    """The escape (``\\ud800``) of the first lone surrogate in ``text``, or None: a string
    holding one (a JSON ``"\\ud800"``, a shell argument that is not UTF-8) is no text that
    a UTF-8 file, hash or terminal can take."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(text[exc.start]):04x}"
    return None


def elide(text: str, most: int) -> str:
    """``text``, or its start and end around " … " where it is longer than ``most``."""
    if not isinstance(text, str) or len(text) <= most:
        return text
    tail = most // 4
    return f"{text[: most - tail - 3]} … {text[-tail:]}"


def _kind(value: Any) -> str:
    """``str '5'``, ``NoneType``: the value's type, and the value where it is short."""
    name = type(value).__name__
    return f"{name} {value!r}" if isinstance(value, (str, float, int)) and len(repr(value)) < 40 \
        else name


def some(names: Iterable[Any], most: int = 8) -> str:
    """``a, b, c`` — or the first ``most`` and ``… N in all``: a list of what a file holds
    in a one-line message (a trace of 20 000 clusters is not one line)."""
    items = [str(n) for n in names]
    if len(items) <= most:
        return ", ".join(items)
    return ", ".join(items[:most]) + f", … {len(items)} in all"


def expect_type(place: str, value: Any, kind: type, what: str, hint: str = "") -> None:
    """Refuse (``InputError`` at ``place``) a ``value`` that is not a ``kind``: "expected
    ``what``, got str" (a path where an instance goes, arguments swapped), not an
    ``AttributeError`` from deep inside."""
    if not isinstance(value, kind):
        raise InputError(place, f"expected {what}, got {_kind(value)}{hint}")


def expect_callable(place: str, value: Any) -> None:
    """Refuse a callback that is not a function (``on_progress=5``) when it is given, not
    with "'int' object is not callable" the first time it would be called, after work."""
    if value is not None and not callable(value):
        raise InputError(place, f"must be a function, got {_kind(value)}")


def expect_path(place: str, value: Any) -> None:
    """Refuse a path that is no ``str`` or ``os.PathLike`` (None, a number) by its parameter,
    not with pathlib's "expected str, bytes or os.PathLike object" naming none."""
    if not isinstance(value, str | os.PathLike):
        raise InputError(place, f"expected a path, got {_kind(value)}")
    if value == "":  # Path('') is '.': the working folder, as the command line's '' was
        raise InputError(place, "an empty path names no file")
    text = os.fspath(value)
    if "\0" in (text if isinstance(text, str) else text.decode("latin-1")):
        # os.stat's "embedded null byte", naming nothing
        raise InputError(place, "a path cannot hold a NUL character")


def expect_executor(place: str, value: Any) -> None:
    """Refuse an executor that is none (None is each caller's own default): it failed with
    "'int' object has no attribute 'submit'" once the work was under way."""
    if value is not None and not callable(getattr(value, "submit", None)):
        raise InputError(place, f"expected an executor (with submit), got {_kind(value)}")


def expect_number(place: str, value: Any) -> None:
    """Refuse a value that is not a real number (a string, None, True) before it is
    compared with one."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(place, f"must be a number, got {_kind(value)}")


def expect_integer(place: str, value: Any) -> None:
    """Refuse a value that is not an integer (1.5, "3", True)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(place, f"must be an integer, got {_kind(value)}")


def refuse_unknown_keywords(function: str, given: Iterable[str], known: Sequence[str]) -> None:
    """Refuse the first keyword of ``given`` that is not in ``known``: ``InputError`` at that
    keyword, "not a parameter of FUNCTION (it takes …)" with every keyword ``known``."""
    for key in given:
        if key not in known:
            raise InputError(key, f"not a parameter of {function} (it takes "
                                  f"{', '.join(known) or 'none'})")


_F = TypeVar("_F", bound=Callable[..., Any])


def keywords_checked(fn: _F) -> _F:
    """``fn``, refusing a keyword it does not take with ``refuse_unknown_keywords`` before it
    runs (Python's "got an unexpected keyword argument" is a ``TypeError`` that lists none of
    the keywords). The signature that ``inspect`` and ``help`` show stays ``fn``'s; a function
    with ``**kwargs`` checks those itself."""
    params = inspect.signature(fn).parameters.values()
    known = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            refuse_unknown_keywords(fn.__name__, kwargs, known)
        return fn(*args, **kwargs)

    return cast(_F, checked)


class SolverError(RuntimeError):
    """A solver or internal step failed on valid input (not the user's fault): the command
    line prints one line and exits with status 1, never 0 and never a traceback."""


class AlgorithmError(RuntimeError):
    """An algorithm (built-in or the user's own) failed on valid input: it raised, returned
    something that is not a schedule, or produced a schedule that breaks a rule of the model.
    The message names the algorithm; the command line prints it and exits with status 1.
    ``instance`` is the instance it failed on (set by ``algorithms.run``; None if unknown):
    where the instance was made, not read (``adversary``, ``verify``), the command line
    writes it, so that the failure can be run again."""

    instance: Any = None


class PluginWarning(UserWarning):
    """An installed plug-in (an entry point of ``oasis_opt.algorithms``) is ignored: named like
    a built-in, by a name no command line can write, or declared by a second package too. The
    command line prints it as one ``note:`` line; in Python it is a warning like any other
    (``warnings.filterwarnings("ignore", category=oasis_opt.PluginWarning)``)."""
