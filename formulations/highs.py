"""A quiet ``highspy.Highs`` for library code (no banner, no log on the console).

The first ``Highs()`` of a process prints HiGHS's banner on file descriptor 1 whatever
``sys.stdout`` is, which would break ``--json`` output; ``quiet_stdout`` sends fd 1 to
/dev/null for that moment.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Send whatever native code writes on file descriptor 1 to /dev/null for a moment
    (HiGHS's banner); library code never prints."""
    fd = 1  # native code writes to the process's fd 1 whatever sys.stdout is
    sys.stdout.flush()
    saved = os.dup(fd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
        os.close(devnull)


def new_highs() -> Any:
    """A ``highspy.Highs`` with ``output_flag`` off, created without its banner."""
    import highspy
    with quiet_stdout():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    return h
