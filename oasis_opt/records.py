"""Results as rows: every result type's ``to_records()`` gives a list of flat dicts, and
``to_dataframe()`` the same rows as a pandas DataFrame when pandas is installed (an optional
extra: ``pip install 'oasis-opt[pandas]'``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def dataframe(records: Sequence[dict[str, Any]]) -> Any:
    """``records`` as a ``pandas.DataFrame``; ImportError with the install line without it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_dataframe() needs pandas: pip install 'oasis-opt[pandas]' "
                          "(or use to_records())") from None
    return pd.DataFrame.from_records(list(records))
