"""Write the compact MILP (SPEC §2) as an MPS or LP file for any solver (``oasis-opt export``).

The model is the compact MILP as the Pyomo modeller builds it (``formulations/compact_pyomo``
``build`` with the default tightenings, ``common.Options()``), written by Pyomo's own writers.
Its optimal objective equals OPT (the tightenings keep at least one optimal schedule;
``formulations/common.Options``).

Names say what each column and row is, with the instance's own job, server and resource names
instead of indices (sanitised to letters, digits, ``_`` and ``.``, which both formats accept):

- ``workers(JOB,SERVER,tT)``: ``y_iht``, workers of JOB on worker server SERVER in slot T;
- ``ps(JOB,SERVER,tT)``: ``z_ikt``, parameter servers of JOB on PS server SERVER in slot T;
- ``completes(JOB,tT)``: ``c_it``, JOB's last slot is T;
- ``running(JOB,tT)``: ``s_it``, JOB is still running in slot T (``Σ_{t' ≥ T} c_it'``);
- ``worker_patterns(UNIT,tT,pP)``: ``λ_gpt``, servers of a group of identical worker servers
  that take pattern P in slot T (``ps_patterns`` alike);
- rows: ``worker_capacity(SERVER,RESOURCE,tT)`` (``ps_capacity`` alike),
  ``running_def(JOB,tT)`` (``s_it = c_it + s_{i,t+1}``), and the other row families of
  ``compact_pyomo`` under their own names (``workload(JOB)``, ``ps_ratio(JOB,tT)``,
  ``work_link(JOB,tT)`` …; their docstrings say what each enforces).

Pyomo's writers put ``c_e_``, ``c_l_`` or ``c_u_`` before a row's name (an ``=``, ``≥`` or
``≤`` row) and ``_`` after it. A group of identical servers (pattern packing) is named
``FIRST..LAST`` by its first and last server. The objective row is ``utility`` (maximise).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import InputError
from .limits import check_allocation
from .model import Instance

FORMATS = {".mps": "mps", ".lp": "lp"}

#: Pyomo's model objects take about this many bytes per variable or row (measured order of
#: magnitude: ~1 kB per component data object and its expression).
BYTES_PER_ENTRY = 2_000

_VARIABLES = {"y": "workers", "z": "ps", "c": "completes", "s": "running",
              "lw": "worker_patterns", "lz": "ps_patterns",
              "p": "work_done", "u": "window",  # chained rows (common.Options.chained)
              "running": "running_def",  # the row s_it = c_it + s_i,t+1 (s is "running")
              "window": "window_def"}  # the row of U_it (u is "window")


def format_of(path: str | Path) -> str:
    """``mps`` or ``lp`` from the file name's suffix; anything else is bad input."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError("-o", f"expected a file name ending in .mps or .lp, got {str(path)!r}")
    return FORMATS[suffix]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", text) or "_"


class Labeler:
    """Pyomo ``labeler``: a readable, unique name for every variable and constraint."""

    def __init__(self, prep: Any) -> None:
        inst: Instance = prep.instance
        self.jobs = [_safe(j.id) for j in inst.jobs]
        self.resources = [_safe(r) for r in inst.resources]
        self.worker_units = [self._unit(inst.worker_names, g) for g in prep.worker_units]
        self.ps_units = [self._unit(inst.ps_names, g) for g in prep.ps_units]
        self.worker_servers = [_safe(n) for n in inst.worker_names]
        self.ps_servers = [_safe(n) for n in inst.ps_names]
        self.seen: set[str] = set()
        self.names: dict[int, str] = {}  # writers ask more than once for the same object

    @staticmethod
    def _unit(names: list[str], group: tuple[int, ...]) -> str:
        if len(group) == 1:
            return _safe(names[group[0]])
        return f"{_safe(names[group[0]])}..{_safe(names[group[-1]])}"

    def _parts(self, family: str, index: tuple) -> list[str]:
        """Index → names, by what the family is indexed by (``compact_pyomo``)."""
        i = list(index)
        job = lambda n: self.jobs[n]  # noqa: E731
        slot = lambda n: f"t{n}"  # noqa: E731
        if family in ("y", "server_link"):
            return [job(i[0]), self.worker_units[i[1]], slot(i[2])]
        if family in ("z", "ps_link"):
            return [job(i[0]), self.ps_units[i[1]], slot(i[2])]
        if family in ("lw", "worker_pattern_count", "worker_pattern_hold"):
            rest = [f"p{i[2]}"] if family == "lw" else \
                [f"class{i[2]}"] if family == "worker_pattern_hold" else []
            return [self.worker_units[i[0]], slot(i[1]), *rest]
        if family in ("lz", "ps_pattern_count", "ps_pattern_hold"):
            rest = [f"p{i[2]}"] if family == "lz" else \
                [f"class{i[2]}"] if family == "ps_pattern_hold" else []
            return [self.ps_units[i[0]], slot(i[1]), *rest]
        if family == "worker_capacity":
            return [self.worker_servers[i[0]], self.resources[i[1]], slot(i[2])]
        if family == "ps_capacity":
            return [self.ps_servers[i[0]], self.resources[i[1]], slot(i[2])]
        if family in ("worker_symmetry", "ps_symmetry"):
            names = self.worker_servers if family == "worker_symmetry" else self.ps_servers
            return [names[i[0]], names[i[1]], slot(i[2])]
        if len(i) == 1:
            return [job(i[0])]
        if len(i) == 2:  # (job, slot): running, work_link, cumulative, cuts, ps_ratio, …
            return [job(i[0]), slot(i[1])]
        return [str(x) for x in i]

    def __call__(self, obj: Any) -> str:
        known = self.names.get(id(obj))
        if known is not None:
            return known
        family = obj.parent_component().local_name
        index = obj.index()
        if index is None:
            name = _safe(family)
        else:
            index = index if isinstance(index, tuple) else (index,)
            label = _VARIABLES.get(family, family)
            name = f"{label}({','.join(self._parts(family, index))})"
        base, n = name, 1
        while name in self.seen:  # sanitising can merge two names: keep them apart
            n += 1
            name = f"{base}_{n}"
        self.seen.add(name)
        self.names[id(obj)] = name
        return name


def export(instance: Instance, path: str | Path) -> dict[str, Any]:
    """Build the compact MILP of ``instance`` and write it to ``path`` (``.mps`` or ``.lp``),
    atomically: a temporary file in the same folder, then a rename. Returns counts."""
    from .formulations import compact_pyomo
    from .formulations.common import prepare
    from .io import atomic_output

    fmt = format_of(path)
    path = Path(path)
    prep = prepare(instance)
    columns = (len(prep.y_index) + len(prep.z_index) + 2 * len(prep.c_index)
               + len(prep.worker_pattern_index) + len(prep.ps_pattern_index))
    rows = 3 * len(prep.y_index) + len(prep.z_index) + 4 * len(prep.c_index) \
        + len(prep.worker_capacity_rows) + len(prep.ps_capacity_rows)
    check_allocation("INSTANCE", BYTES_PER_ENTRY * (columns + rows),
                     f"the compact MILP ({columns} variables, about {rows} rows)")
    m = compact_pyomo.build(instance, prep=prep)
    # the writer guesses the format from the name too: one suffix, no other dots
    with atomic_output(path, prefix="_oasis_export_", suffix=path.suffix.lower()) as tmp, \
            _no_constant_objective_warning():
        # the format comes from the suffix (a format string here makes Pyomo warn)
        m.write(str(tmp), io_options={"labeler": Labeler(prep)})
    from pyomo.environ import Constraint, Var
    n_vars = sum(1 for _ in m.component_data_objects(Var, active=True))
    n_rows = sum(1 for _ in m.component_data_objects(Constraint, active=True))
    return {"output": str(path), "format": fmt, "variables": n_vars, "constraints": n_rows,
            "packing": prep.packing, "active_jobs": len(prep.active),
            "upper_bound": prep.upper_bound()}


@contextlib.contextmanager
def _no_constant_objective_warning() -> Iterator[None]:
    """Pyomo's writers log "Constant objective detected, replacing with a placeholder" on
    stderr for a model without variables (no job can run): library code does not print,
    and the file says it (the objective ``ONE_VAR_CONSTANT``). Only that message is held."""
    import logging
    log = logging.getLogger("pyomo.core")

    def drop(record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Constant objective detected")
    log.addFilter(drop)
    try:
        yield
    finally:
        log.removeFilter(drop)
