"""Print a compact table of a pytest-benchmark JSON file (used by ``.ci/run``):

    python benchmarks/summary.py .benchmarks/ci.json
"""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from oasis_opt.bench import SUMMARY_COLUMNS, machine, summarize_pytest_json


def main(path: str) -> int:
    with open(path) as f:
        data = json.load(f)
    table = Table(title=f"benchmarks, seconds ({machine()})")
    for c in SUMMARY_COLUMNS:
        table.add_column(c, justify="left" if c in ("name", "size", "figures") else "right")
    for row in summarize_pytest_json(data):
        # Text, not markup: names like test_x[fifo] would read as rich style tags.
        table.add_row(*(Text(f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]))
                        for c in SUMMARY_COLUMNS))
    Console(width=200, highlight=False).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".benchmarks/ci.json"))
