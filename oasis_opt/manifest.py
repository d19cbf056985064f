"""``instances/manifest.json``: the committed instances whose offline optimum is known, each
proven optimal by both modellers (Pyomo and PuLP) and agreeing to 1e-6 relative.

``python -m oasis_opt.manifest --write`` rebuilds it from every ``*.json`` instance of the
folder; ``--check`` re-solves the listed instances and reports any disagreement (exit 1).
Instances too large for the compact MILP, or not proven optimal within the time limit by both
modellers, are listed under ``skipped`` with the reason.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import InputError
from .io import check_format, dumps, load_instance, read_json, write_text_atomic
from .model import REL_TOL

FORMAT = "oasis-manifest/1"
#: Instances with more allocation variables than this (server-mode estimate J·(H+K)·T) are
#: left to column generation / time-limited runs.
MAX_SIZE = 20000
DEFAULT_TIME_LIMIT = 300.0


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def _size(instance: Any) -> int:
    return instance.num_jobs * (len(instance.worker_names) + len(instance.ps_names)) \
        * instance.horizon


def solve_both(path: Path, time_limit: float) -> dict[str, Any]:
    """Solve one instance with both modellers; an entry, or a ``skip`` reason."""
    from .offline import solve

    instance = load_instance(path)
    if _size(instance) > MAX_SIZE:
        return {"file": path.name, "skip": f"too large for the compact MILP "
                                           f"({_size(instance)} > {MAX_SIZE} allocation cells)"}
    results = {}
    for modeler in ("pyomo", "pulp"):
        _, rep = solve(instance, modeler=modeler, time_limit=time_limit)
        if rep.status.value != "optimal":
            return {"file": path.name, "skip": f"{modeler}: {rep.status.value} after "
                                               f"{rep.seconds:.1f} s (limit {time_limit:g} s)"}
        results[modeler] = rep
    a, b = results["pyomo"].objective, results["pulp"].objective
    if not _close(a, b):
        return {"file": path.name, "skip": f"modellers disagree: pyomo {a!r}, pulp {b!r}"}
    return {"file": path.name, "name": instance.name, "optimum": a, "jobs": instance.num_jobs,
            "horizon": instance.horizon, "seconds": round(max(r.seconds for r in
                                                              results.values()), 3)}


def build_manifest(directory: Path, time_limit: float = DEFAULT_TIME_LIMIT) -> dict[str, Any]:
    """Solve every instance of ``directory`` with both modellers (slow: minutes)."""
    entries, skipped = [], []
    for path in sorted(directory.glob("*.json")):
        if path.name == "manifest.json":
            continue
        e = solve_both(path, time_limit)
        (skipped if "skip" in e else entries).append(e)
    return {"format": FORMAT, "rel_tol": REL_TOL, "time_limit": time_limit,
            "instances": entries, "skipped": skipped}


def check_manifest(path: Path, max_seconds: float | None = None) -> list[str]:
    """Re-solve the manifest's instances (those that took at most ``max_seconds`` when
    recorded, all by default) with both modellers; the list of disagreements (empty: all
    good)."""
    from .offline import solve

    path = Path(path)
    data = _read(path)
    problems = []
    for e in data["instances"]:
        if max_seconds is not None and e["seconds"] > max_seconds:
            continue
        instance = load_instance(path.parent / e["file"])
        for modeler in ("pyomo", "pulp"):
            _, rep = solve(instance, modeler=modeler)
            if rep.status.value != "optimal":
                problems.append(f"{e['file']}: {modeler} ended {rep.status.value}")
            elif not _close(rep.objective, e["optimum"]):
                problems.append(f"{e['file']}: {modeler} finds {rep.objective!r}, the manifest "
                                f"says {e['optimum']!r}")
    return problems


def _read(path: Path) -> dict[str, Any]:
    """The manifest, strict as every file the package reads (``io.read_json``), with the
    fields ``check_manifest`` uses checked: a list, a missing field or a string for a number
    ended in a traceback of ``--check``."""
    data = read_json(path, "manifest")
    if not isinstance(data, dict):
        raise InputError(str(path), f"expected an object, got {type(data).__name__}")
    check_format(data, FORMAT, f"{path}.format")
    entries = data.get("instances")
    if entries is None:
        raise InputError(f"{path}: instances", "missing field")
    if not isinstance(entries, list):
        raise InputError(f"{path}: instances", "expected a list")
    for k, e in enumerate(entries):
        place = f"{path}: instances[{k}]"
        if not isinstance(e, dict):
            raise InputError(place, "expected an object")
        if not isinstance(e.get("file"), str) or not e["file"]:
            raise InputError(f"{place}.file", f"expected a file name, got {e.get('file')!r}")
        for field in ("optimum", "seconds"):
            x = e.get(field)
            if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
                raise InputError(f"{place}.{field}", f"expected a number, got {x!r}")
    return data


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m oasis_opt.manifest", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                allow_abbrev=False)  # flags named whole, as the CLI's
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="solve every instance and rewrite")
    mode.add_argument("--check", action="store_true", help="re-solve the listed instances")
    p.add_argument("--dir", default="instances", help="instance folder (default instances/)")
    from .cli import seconds_type  # the command line's seconds: strict, positive, finite
    p.add_argument("--time-limit", type=seconds_type("--time-limit"), default=DEFAULT_TIME_LIMIT,
                   metavar="S", help="per modeller and instance when writing (default 300)")
    p.add_argument("--max-seconds", type=seconds_type("--max-seconds"), default=None, metavar="S",
                   help="--check only instances recorded as solving within S seconds")
    args = p.parse_args(argv)
    folder = Path(args.dir)
    try:
        if args.write:
            data = build_manifest(folder, args.time_limit)
            write_text_atomic(folder / "manifest.json", dumps(data) + "\n")
            print(f"wrote {folder / 'manifest.json'}: {len(data['instances'])} instances, "
                  f"{len(data['skipped'])} skipped")
            for s in data["skipped"]:
                print(f"  skipped {s['file']}: {s['skip']}")
            return 0
        problems = check_manifest(folder / "manifest.json", args.max_seconds)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for msg in problems:
        print(msg)
    print("manifest: ok" if not problems else f"manifest: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
