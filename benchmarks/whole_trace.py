"""Every online algorithm on a whole trace (issue 21): wall and CPU seconds and peak RSS of
``oasis-opt run`` and ``oasis-opt validate`` as separate processes, as a user runs them.

``python benchmarks/whole_trace.py PHILLY.csv OUTDIR [ALGORITHM ...]`` imports the whole trace
with the documented whole-trace mapping (docs/traces.md) unless ``OUTDIR/philly-all.json``
exists, then runs each algorithm (default all six) and prints one JSON line per command.
``bench_traces.py`` runs the same under pytest-benchmark.

Peak RSS is the child's own high-water mark (``wait4``'s ``ru_maxrss``), cross-checked with
psutil's RSS sampled every 0.2 s; CPU seconds (user + system) are what the command cost
whatever the machine's load, wall seconds what the user waited.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import psutil

ALGORITHMS = ("oasis", "oasis-adaptive", "fifo", "drf", "rrh", "tetris")
#: The whole-trace mapping of docs/traces.md: one-hour slots over the trace's 109 days plus
#: the tail of the durations, the default --load (the cluster from the work).
IMPORT_ARGS = ("--jobs", "all", "--slot-seconds", "3600", "--horizon", "2700")


def measure(cmd: list[str]) -> dict[str, float]:
    """Run ``cmd``; its wall and CPU seconds, peak RSS (MiB), exit status, machine load."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = psutil.Popen(cmd, stdout=open(os.devnull, "w"), stderr=open(os.devnull, "w"))
    sampled = [0]

    def sample() -> None:
        # /proc reads only: poll() would reap the child before wait4 reads its usage
        while True:
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:
                    return
                sampled[0] = max(sampled[0], proc.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.2)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    watcher.join(timeout=1)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": max(usage.ru_maxrss * 1024, sampled[0]) / 2**20,
            "exit": proc.returncode, "load_before": load, "load_after": os.getloadavg()[0]}


def oasis_opt() -> list[str]:
    return [sys.executable, "-m", "oasis_opt"]


def import_whole(trace: Path, out: Path) -> dict[str, float]:
    return measure([*oasis_opt(), "import", "philly", str(trace), *IMPORT_ARGS, "-o", str(out)])


def run_and_validate(instance: Path, algorithm: str, outdir: Path) -> dict[str, dict]:
    sched = outdir / f"{algorithm}.json"
    run = measure([*oasis_opt(), "run", str(instance), "--algorithm", algorithm,
                   "-o", str(sched)])
    check = measure([*oasis_opt(), "validate", str(instance), str(sched)])
    return {"run": run, "validate": check}


def main(argv: list[str]) -> int:
    trace, outdir = Path(argv[0]), Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    inst = outdir / "philly-all.json"
    if not inst.exists():
        print(json.dumps({"import": import_whole(trace, inst)}), flush=True)
    for alg in argv[2:] or ALGORITHMS:
        print(json.dumps({"algorithm": alg, **run_and_validate(inst, alg, outdir)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
