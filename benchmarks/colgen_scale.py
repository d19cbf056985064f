"""Column generation at the paper's scale: gap against time (issue 11, docs/colgen.md).

Too long for the pytest-benchmark pass (300–600 s per run). Each run generates a ``paper``
preset instance (100 slots, 40 + 40 servers) or reads an instance file, runs
``colgen.solve(instance, time_limit=S)``, validates the schedule and appends one JSON line
(instance, limit, seconds, incumbent, bound, gap, history) to ``--out``; ``--plot`` draws the
gap against time of every line of that file.

    python benchmarks/colgen_scale.py --jobs 100 --seed 1 --limit 300 --out runs.jsonl
    python benchmarks/colgen_scale.py --file trace.json --limit 300 --out runs.jsonl
    python benchmarks/colgen_scale.py --plot docs/results/colgen-gap.png --out runs.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from oasis_opt.formulations import colgen

from oasis_opt.generator import generate
from oasis_opt.io import load_instance, write_text_atomic
from oasis_opt.offline import colgen_inputs
from oasis_opt.validate import validate


def run(args: argparse.Namespace) -> dict:
    inst = load_instance(args.file) if args.file else generate("paper", seed=args.seed,
                                                               jobs=args.jobs)

    def show(s: float, inc: float, b: float) -> None:
        print(f"{s:8.1f} s  incumbent {inc:10.2f}  bound {b:10.2f}  "
              f"gap {100 * (b - inc) / max(b, 1e-9):6.2f} %", file=sys.stderr, flush=True)

    t = time.perf_counter()
    r = colgen.solve(inst, **colgen_inputs(inst), time_limit=args.limit, on_progress=show)
    took = time.perf_counter() - t
    rep = validate(inst, r.schedule)
    inc, x = r.objective, r.extras
    return {"instance": inst.name, "jobs": inst.num_jobs, "horizon": inst.horizon,
            "limit": args.limit, "seconds": took, "incumbent": inc, "bound": r.bound,
            "gap": (r.bound - inc) / max(r.bound, 1e-9), "feasible": rep.feasible,
            **{k: x[k] for k in ("lp_proven", "bound_seconds", "pattern_seconds",
                                 "lns_moves", "columns", "integer_slots")},
            "history": [list(p) for p in x["history"]]}


def plot(lines: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for d in lines:
        h = [p for p in d["history"] if p[2] > 0]
        secs = [p[0] for p in h] + [d["seconds"]]
        # optimal (gap 0) drawn at the floor of the log axis, 0.01 %
        gaps = [max(1e-2, 100 * (p[2] - p[1]) / p[2]) for p in h] + \
            [max(1e-2, 100 * d["gap"])]
        ax.step(secs, gaps, where="post",
                label=f"{d['instance']}, {d['jobs']} jobs ({d['limit']:.0f} s)")
    ax.set_yscale("log")
    ax.set_ylim(0.8e-2, 100)
    ax.set_xlabel("seconds")
    ax.set_ylabel("gap (bound − incumbent) / bound, % (0.01 = optimal)")
    ax.axhline(2.0, color="grey", lw=0.6, ls="--")
    ax.axhline(0.5, color="grey", lw=0.6, ls=":")
    ax.legend(fontsize=7)
    ax.set_title("column generation + pattern master + LNS (2 shared cores)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=120, bbox_inches="tight", format="png")
    tmp.replace(path)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--file", default=None)
    ap.add_argument("--limit", type=float, default=300.0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args()
    if args.plot:
        lines = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
        plot(lines, args.plot)
        return
    line = json.dumps(run(args))
    old = args.out.read_text() if args.out.exists() else ""
    write_text_atomic(args.out, old + line + "\n")
    print(line)


if __name__ == "__main__":
    main()
