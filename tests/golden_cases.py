"""Golden schedules (issue 21): the schedule files of every built-in online algorithm on the
shipped instances and a few generated ones, recorded before the sparse rewrite, so that the
rewrite is shown to change no byte of any schedule file and no validator verdict.

A case's fingerprint is the SHA-256 of its schedule file as ``save_schedule`` writes it, with
the values of wall-clock fields (``*seconds*``, ``*_ms_*``) set to 0 — the only bytes that
differ between two runs of the same code on one machine — followed by the validator's
report, every fractional number in both written to ``FLOAT_DIGITS`` significant digits
(the last bits differ between machines).

``python tests/golden_cases.py [DIR]`` rewrites ``tests/golden_schedules.json`` (only when a change
is meant to alter schedules; say so in the commit) and keeps the normalised files in DIR.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HASHES = Path(__file__).resolve().parent / "golden_schedules.json"
ALGORITHMS = ("oasis", "oasis-adaptive", "fifo", "drf", "rrh", "tetris")
PHILLY = ROOT / "instances" / "traces" / "adaptdl" / "philly.csv"
_CLOCK = re.compile(r'("[A-Za-z_]*(?:seconds|_ms_)[A-Za-z_]*": )(-?[0-9.eE+-]+)')
#: A number with a fraction or an exponent: written with ``FLOAT_DIGITS`` significant digits
#: in the fingerprint. The last bits of ``math.exp`` and numpy's kernels differ between
#: machines (the recorded small-s2 OASiS hash failed on a Sapphire Rapids image, 2026-12-03,
#: with the code that had passed before), and a schedule file that differs only there is
#: the same schedule.
_FLOAT = re.compile(r'-?\d+\.\d+(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+')
FLOAT_DIGITS = 10


def _rounded(text: str) -> str:
    return _FLOAT.sub(lambda m: format(float(m.group()), f".{FLOAT_DIGITS}g"), text)


def cases() -> Iterator[tuple[str, Callable[[], object]]]:
    """(case name, instance builder): shipped files, generated presets, trace imports."""
    from oasis_opt import generate, import_trace
    from oasis_opt.io import load_instance

    for path in sorted((ROOT / "instances").glob("*.json")):
        if path.name != "manifest.json":
            yield path.stem, (lambda p=path: load_instance(p))
    for preset, seeds in (("paper", (1,)), ("hard", (0, 1, 2)), ("small", (5, 6)),
                          ("testbed", (3,))):
        for seed in seeds:
            yield f"gen-{preset}-s{seed}", (lambda p=preset, s=seed: generate(p, seed=s))
    yield "philly-1000", lambda: import_trace("philly", PHILLY, jobs=1000, horizon=500)
    yield "tiresias-60", lambda: import_trace(
        "tiresias", ROOT / "instances" / "traces" / "tiresias" / "60_job.csv")


def fingerprint(instance: object, algorithm: str, keep: Path | None = None) -> str:
    """SHA-256 of the schedule file (clock fields zeroed) and the validator's verdict;
    ``keep``: also write the normalised file there (for diffs)."""
    from oasis_opt import run
    from oasis_opt.io import save_schedule
    from oasis_opt.validate import validate

    sched = run(instance, algorithm)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "s.json"
        save_schedule(sched, out)
        text = _CLOCK.sub(r"\g<1>0", out.read_text())
    if keep is not None:
        keep.write_text(text)
    report = validate(instance, sched).to_dict()  # type: ignore[arg-type]
    h = hashlib.sha256(_rounded(text).encode())
    h.update(_rounded(json.dumps(report, sort_keys=True)).encode())
    return h.hexdigest()


def main() -> int:
    keep = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, build in cases():
        inst = build()
        for alg in ALGORITHMS:
            out[f"{name}/{alg}"] = fingerprint(
                inst, alg, keep / f"{name}__{alg}.json" if keep is not None else None)
            print(name, alg, out[f"{name}/{alg}"][:12], file=sys.stderr)
    HASHES.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
