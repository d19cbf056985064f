"""The one exception type for bad input: it names the place in the file that is wrong."""

from __future__ import annotations


class InputError(ValueError):
    """A malformed or inconsistent instance, schedule or parameter.

    ``place`` is a JSON path such as ``jobs[3].worker_demand`` (empty when the whole input is
    wrong); ``str(err)`` is the one-line message the command line prints before exiting with 2.
    """

    def __init__(self, place: str, message: str) -> None:
        self.place = place
        self.message = message
        super().__init__(f"{place}: {message}" if place else message)


class SolverError(RuntimeError):
    """A solver or internal step failed on valid input (not the user's fault): the command
    line prints one line and exits with status 1, never 0 and never a traceback."""


class AlgorithmError(RuntimeError):
    """An algorithm (built-in or the user's own) failed on valid input: it raised, returned
    something that is not a schedule, or produced a schedule that breaks a rule of the model.
    The message names the algorithm; the command line prints it and exits with status 1."""
