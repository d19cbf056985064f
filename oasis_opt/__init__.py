"""oasis-opt: offline optima, OASiS and baselines for scheduling ML training jobs.

The public API (docs/python.md): files (``load_instance``, ``save_instance``,
``load_schedule``, ``save_schedule``), the model (``Instance``, ``Schedule``, …), the validator
(``validate``), and what the command line does — ``generate``, ``solve`` (with
``customize`` for your own rows), ``run``, ``compare``, ``import_trace``, ``adversary``,
``verify``, ``sweep`` (with ``Grid``) — plus ``register`` to add your own scheduler by name.
Library errors are ``InputError`` (bad input, naming the parameter or the place in a file),
``AlgorithmError`` (an algorithm failed, naming it) and ``SolverError`` (a solver failed on
valid input); ``PluginWarning`` says that an installed plug-in is ignored.
"""

from .algorithms import register, unregister
from .api import Solution, adversary, compare, generate, import_trace, run, solve, sweep, verify
from .errors import AlgorithmError, InputError, PluginWarning, SolverError
from .io import load_instance, load_schedule, save_instance, save_schedule, shipped_folder
from .model import Allocation, Instance, Job, JobResult, Schedule, ServerGroup
from .validate import ValidationReport, Violation, validate
from .version import __version__


def __getattr__(name: str):  # Grid loads pydantic's schema only when asked for
    if name == "Grid":
        from .grid import Grid
        return Grid
    raise AttributeError(f"module 'oasis_opt' has no attribute {name!r}")


def __dir__() -> list[str]:  # ``Grid`` too, which ``__getattr__`` gives
    return sorted(set(globals()) | {"Grid"})


__all__ = [
    "AlgorithmError", "Allocation", "Grid", "InputError", "Instance", "Job", "JobResult",
    "PluginWarning", "Schedule", "ServerGroup", "Solution", "SolverError", "ValidationReport",
    "Violation", "__version__", "adversary", "compare", "generate", "import_trace", "load_instance",
    "load_schedule", "register", "run", "save_instance", "save_schedule", "shipped_folder",
    "solve", "sweep", "unregister", "validate", "verify",
]
