"""The gap-against-time figure of docs/offline.md (issue 11, item 4).

Each route on the instances of the issue, its ``history`` of (seconds, incumbent, bound)
turned into ``gap = (bound − incumbent) / incumbent``:

- ``hard`` seed 3 (16 jobs … a provable instance): the default route (the portfolio) and the
  plain comparator (``direct_highspy.py``);
- the issue's trace instance (30 Philly jobs over 317 slots, one 4-GPU worker server and one
  PS server): the default route with ``time_limit=300`` (the issue's target);
- the ``paper`` preset at 100 jobs (seed 2) with ``time_limit=300`` (column generation).

    python benchmarks/gap_figure.py            # runs everything (~10 min), writes both files
    python benchmarks/gap_figure.py --plot     # redraws docs/offline-gap.png from the JSON

Writes ``docs/offline-gap.json`` (the histories) and ``docs/offline-gap.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
DOCS = HERE.parent / "docs"
sys.path.insert(0, str(HERE))


def _philly():
    """The issue's trace instance: the first 30 jobs of the Philly trace in
    ``instances/traces/adaptdl/philly.csv`` over 317 slots on one 4-GPU worker server and one
    PS server (``oasis-opt import philly … --jobs 30 --horizon 317 --servers 1``)."""
    import subprocess
    import tempfile

    from oasis_opt.io import load_instance

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "philly30.json"
        subprocess.run([sys.executable, "-m", "oasis_opt", "import", "philly",
                        str(HERE.parent / "instances/traces/adaptdl/philly.csv"), "--jobs",
                        "30", "--horizon", "317", "--servers", "1", "-o", str(path)],
                       check=True, capture_output=True)
        return load_instance(path)


def run_all() -> dict[str, dict]:
    import direct_highspy

    from oasis_opt.generator import generate
    from oasis_opt.offline import solve

    out: dict[str, dict] = {}
    hard = generate("hard", seed=3)
    _, rep = solve(hard)
    out["hard-s3: default"] = {"history": [list(h) for h in rep.history],
                               "status": rep.status.value, "seconds": rep.seconds,
                               "route": rep.route}
    hist: list = []
    res = direct_highspy.solve(hard, history=hist)
    hist.append((res.seconds, res.objective, res.bound))  # where it stopped
    out["hard-s3: comparator"] = {"history": [list(h) for h in hist], "status": res.status,
                                  "seconds": res.seconds}
    long = _philly()
    _, rep = solve(long, time_limit=300)
    out["Philly 30 jobs x 317 slots: default, 300 s"] = {
        "history": [list(h) for h in rep.history], "status": rep.status.value,
        "seconds": rep.seconds, "route": rep.route}
    paper = generate("paper", seed=2, jobs=100)
    _, rep = solve(paper, time_limit=300)
    out["paper 100 jobs: default, 300 s"] = {
        "history": [list(h) for h in rep.history], "status": rep.status.value,
        "seconds": rep.seconds, "route": rep.route}
    return out


def plot(data: dict[str, dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    floor = 1e-3  # % — a proof is drawn at this floor of the log axis
    for label, d in data.items():
        xs, ys = [], []
        for sec, inc, bound in d["history"]:
            if inc is None or not inc > 0 or bound is None:
                continue
            xs.append(max(sec, 1e-2))
            ys.append(max(100.0 * (bound - inc) / inc, floor))
        if xs:
            xs.append(max(d["seconds"], xs[-1]))
            ys.append(ys[-1])
            route = f", {d['route']}" if d.get("route") else ""
            ax.step(xs, ys, where="post", label=f"{label} ({d['status']}{route})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds (wall, 2 shared cores)")
    ax.set_ylabel("gap (bound − incumbent) / incumbent, %")
    ax.axhline(floor, color="grey", lw=0.5, ls=":")
    ax.set_title("Gap against time per route (proof = bottom line)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    from oasis_opt.io import write_json_atomic

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--plot", action="store_true", help="only redraw from the JSON")
    args = p.parse_args()
    data_path = DOCS / "offline-gap.json"
    if args.plot:
        data = json.loads(data_path.read_text())
    else:
        data = run_all()
        write_json_atomic(data_path, data)
    plot(data, DOCS / "offline-gap.png")


if __name__ == "__main__":
    main()
