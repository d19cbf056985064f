"""Importers for the public job traces of this field (docs/traces.md): one module per format,
the shared mapping in :mod:`oasis_opt.traces.common`.

``import_trace(fmt, path, policy, **options)`` returns an :class:`~.common.Imported` (the
instance and what the command line reports); ``OPTIONS`` names the format options each
format takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

from ..errors import InputError, expect_integer, expect_type
from .common import Imported, Policy

FORMATS = ("philly", "gavel", "pollux", "tiresias", "alibaba")
#: The keyword options of each format's ``load``.
OPTIONS: dict[str, tuple[str, ...]] = {
    "philly": ("cluster", "gpus_per_server"),
    "gavel": ("throughputs", "gpu_type", "cluster_spec", "gpus_per_server"),
    "pollux": ("apps",),
    "tiresias": ("cluster_spec",),
    "alibaba": ("nodes", "phases"),
}


#: What each format option holds: a name, a count, a file, or names (``phases``).
OPTION_KINDS = {"cluster": "name", "gpu_type": "name", "gpus_per_server": "count",
                "throughputs": "path", "cluster_spec": "path", "apps": "path", "nodes": "path",
                "phases": "names"}


def check_option(name: str, value: Any) -> None:
    """A format option of the wrong kind, refused by name before the trace is read (a list
    as ``gpu_type`` failed as "unhashable type", a number as a file inside ``pathlib``)."""
    kind = OPTION_KINDS.get(name)
    if kind == "name":
        expect_type(name, value, str, "a string")
    elif kind == "count":
        expect_integer(name, value)
    elif kind == "path":
        expect_type(name, value, (str, Path), "a path")
    elif kind == "names" and (isinstance(value, str) or not isinstance(value, Sequence)
                              or not all(isinstance(x, str) for x in value)):
        raise InputError(name, f"expected a list of phase names, got "
                               f"{type(value).__name__} {str(value)[:40]!r}")


def import_trace(fmt: str, trace: str | Path, policy: Policy, **options: Any) -> Imported:
    """Read ``trace`` in format ``fmt`` and map it with ``policy``; ``options`` left as None
    take the format's default, an option of another format is refused."""
    if fmt not in FORMATS:
        raise InputError("format", f"unknown trace format {fmt!r}; choose from "
                                   f"{', '.join(FORMATS)}")
    policy.check()
    given = {k: v for k, v in options.items() if v is not None}
    for k in given:
        if k not in OPTIONS[fmt]:
            users = [f for f, opts in OPTIONS.items() if k in opts]
            raise InputError(k,
                             f"applies to {' and '.join(users) or 'no format'}, not {fmt}")
    for k, v in given.items():
        check_option(k, v)
    module = import_module(f".{fmt}", __name__)
    return module.load(trace, policy, **given)


__all__ = ["FORMATS", "OPTIONS", "OPTION_KINDS", "Imported", "Policy", "check_option",
           "import_trace"]
