"""Importers for the public job traces of this field (docs/traces.md): one module per format,
the shared mapping in :mod:`oasis_opt.traces.common`.

``import_trace(fmt, path, policy, **options)`` returns an :class:`~.common.Imported` (the
instance and what the command line reports); ``OPTIONS`` names the format options each
format takes.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

from ..errors import InputError
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
    module = import_module(f".{fmt}", __name__)
    return module.load(trace, policy, **given)


__all__ = ["FORMATS", "OPTIONS", "Imported", "Policy", "import_trace"]
