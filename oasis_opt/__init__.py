"""oasis-opt: offline optima, OASiS and baselines for scheduling ML training jobs."""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import InputError
from .io import load_instance, load_schedule, save_instance, save_schedule
from .model import Allocation, Instance, Job, JobResult, Schedule, ServerGroup
from .validate import ValidationReport, Violation, validate

__all__ = [
    "Allocation", "Instance", "InputError", "Job", "JobResult", "Schedule", "ServerGroup",
    "ValidationReport", "Violation", "load_instance", "load_schedule", "save_instance",
    "save_schedule", "validate", "__version__",
]
