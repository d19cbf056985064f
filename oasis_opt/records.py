"""Results as rows: every result type's ``to_records()`` gives a list of flat dicts, and
``to_dataframe()`` the same rows as a pandas DataFrame when pandas is installed (an optional
extra: ``pip install 'oasis-opt[pandas]'``)."""

from __future__ import annotations

import csv
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any


def dataframe(records: Sequence[dict[str, Any]]) -> Any:
    """``records`` as a ``pandas.DataFrame``; ImportError with the install line without it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_dataframe() needs pandas: pip install 'oasis-opt[pandas]' "
                          "(or use to_records())") from None
    return pd.DataFrame.from_records(list(records))


def read_csv(path: str | Path, *, text: Collection[str] = (), integers: Collection[str] = (),
             columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The rows of a results CSV with typed cells: an empty cell is None, columns in ``text``
    stay strings, those in ``integers`` are ints, every other one a float; ``columns`` keeps
    only those."""
    def cell(column: str, value: str) -> Any:
        if value == "":
            return None
        if column in text:
            return value
        return int(value) if column in integers else float(value)
    with open(path, encoding="utf-8", newline="") as f:
        return [{k: cell(k, row[k]) for k in (columns or row)} for row in csv.DictReader(f)]
