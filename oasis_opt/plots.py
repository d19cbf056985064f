"""Figures of the experiments (matplotlib, Agg backend, PNG) and the numbers they show."""

from __future__ import annotations

import contextlib
import json
import math
import statistics
import warnings
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

Rows = Sequence[dict[str, str]]

PAPER_RATIO = (1.1, 1.5)


def pyplot():
    """``matplotlib.pyplot`` as every figure of the package draws with it: the Agg backend,
    and text drawn as written: names from files (a job id ``$\\frac{$``, a space's name) are
    no mathtext, which refused them with an empty ``ValueError``. The package's own labels use
    no mathtext either."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt
    return plt


def _f(x: str) -> float:
    return float(x) if x not in ("", None) else math.nan


def _p(row: dict[str, str]) -> dict[str, Any]:
    return json.loads(row["params"])


def save_figure(fig, path: str | Path, dpi: int = 120) -> None:
    """Write a PNG atomically (``io.atomic_output``: a temporary file in the same folder,
    then rename) and close the figure; nothing is left behind if drawing fails."""
    from .io import atomic_output
    try:
        plain_log_ticks(fig)
        with atomic_output(path, suffix=".png") as tmp, quiet_glyphs():
            fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
    finally:
        pyplot().close(fig)


def plain_log_ticks(fig: Any) -> None:
    """Log axes' tick labels as plain numbers (``1000``, ``1e+05``). matplotlib writes them as
    mathtext (``$\\mathdefault{10^{3}}$``), which ``pyplot``'s ``text.parse_math = False``
    then printed as those characters."""
    from matplotlib.ticker import LogFormatter
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_major_formatter(LogFormatter())
                axis.set_minor_formatter(LogFormatter(labelOnlyBase=False,
                                                      minor_thresholds=(2, 0.4)))


@contextlib.contextmanager
def quiet_glyphs() -> Iterator[None]:
    """While a figure is drawn: a character of a name that the font has no glyph for (a
    control character in a job id) is drawn as a box, without matplotlib's warning line on
    stderr for each."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font",
                                category=UserWarning)
        yield


def _algorithms(rows: Rows) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        seen.setdefault(r["algorithm"], None)
    return list(seen)


# --- ratio -------------------------------------------------------------------------------


def ratio(rows: Rows, path: Path) -> None:
    plt = pyplot()
    algs = _algorithms(rows)
    data = [[_f(r["ratio"]) for r in rows if r["algorithm"] == a and math.isfinite(_f(r["ratio"]))]
            for a in algs]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.axhspan(*PAPER_RATIO, color="tab:green", alpha=0.15, label="paper: OASiS 1.1–1.5")
    if any(data):
        ax.boxplot([d or [math.nan] for d in data], tick_labels=algs)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_yscale("log")  # one starved instance can reach 100x; the bulk sits near 1–3
    ax.set_ylabel("OPT / ALG (log scale; lower is better)")
    n = len({r["seed"] for r in rows})
    ax.set_title(f"Empirical competitive ratio on {n} small instances")
    ax.legend(loc="upper left")
    save_figure(fig, path)


def _ratio_summary(rows: Rows) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in _algorithms(rows):
        vals = [_f(r["ratio"]) for r in rows if r["algorithm"] == a]
        finite = sorted(v for v in vals if math.isfinite(v))
        out[a] = {
            "instances": len(vals),
            "median": statistics.median(finite) if finite else None,
            # interpolated (a rank rounded down gave the minimum of two: below the median)
            "p90": (statistics.quantiles(finite, n=10, method="inclusive")[-1]
                    if len(finite) > 1 else finite[0] if finite else None),
            "max": finite[-1] if finite else None,
            "earned_nothing": sum(1 for v in vals if not math.isfinite(v)),
            "within_2alpha": sum(1 for r in rows if r["algorithm"] == a and r["bound_2alpha"]
                                 and _f(r["ratio"]) <= _f(r["bound_2alpha"]) + 1e-9),
        }
    return out


# --- utility vs jobs ---------------------------------------------------------------------


def _by(rows: Rows, key: str, metric: str) -> dict[str, dict[float, float]]:
    acc: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        acc[r["algorithm"]][float(_p(r)[key]) if key in _p(r) else _f(r[key])].append(
            _f(r[metric]))
    return {a: {x: statistics.mean(v) for x, v in sorted(d.items())} for a, d in acc.items()}


def utility_vs_jobs(rows: Rows, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric, label in ((axes[0], "utility", "total utility"),
                              (axes[1], "completed", "completed jobs")):
        for a, series in _by(rows, "jobs", metric).items():
            ax.plot(list(series), list(series.values()), marker="o", label=a)
        ax.set_xlabel("arriving jobs")
        ax.set_ylabel(label + " (mean over seeds)")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle("Total utility and completed jobs vs load (paper preset)")
    save_figure(fig, path)


def _jobs_summary(rows: Rows) -> dict[str, Any]:
    util = _by(rows, "jobs", "utility")
    done = _by(rows, "jobs", "completed")
    return {a: {"utility": util[a], "completed": done[a]} for a in util}


# --- estimation error --------------------------------------------------------------------


def _estimation_series(rows: Rows) -> dict[str, dict[str, dict[float, float]]]:
    """scarcity -> which ('U' or 'L'; 'U (oasis-adaptive)' for another algorithm) -> factor ->
    mean utility relative to OASiS's with exact bounds (factor 1)."""
    acc: dict[tuple[str, str, float], list[float]] = defaultdict(list)
    base: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        p = _p(r)
        u = _f(r["utility"])
        alg = r.get("algorithm", "oasis")
        tag = "" if alg == "oasis" else f" ({alg})"
        if p["u_scale"] == 1.0 and p["l_scale"] == 1.0:
            if alg == "oasis":
                base[p["scarcity"]].append(u)
            for which in ("U", "L"):
                acc[(p["scarcity"], which + tag, 1.0)].append(u)
        elif p["u_scale"] != 1.0:
            acc[(p["scarcity"], "U" + tag, p["u_scale"])].append(u)
        else:
            acc[(p["scarcity"], "L" + tag, p["l_scale"])].append(u)
    out: dict[str, dict[str, dict[float, float]]] = defaultdict(lambda: defaultdict(dict))
    for (sc, which, f), us in sorted(acc.items()):
        b = statistics.mean(base[sc]) if base.get(sc) else math.nan
        out[sc][which][f] = statistics.mean(us) / b if b else math.nan
    return {sc: dict(d) for sc, d in out.items()}


def estimation_error(rows: Rows, path: Path) -> None:
    plt = pyplot()
    series = _estimation_series(rows)
    fig, axes = plt.subplots(1, max(1, len(series)), figsize=(11, 4), squeeze=False)
    for ax, (sc, d) in zip(axes[0], sorted(series.items()), strict=False):
        for which, pts in d.items():
            ax.plot(list(pts), list(pts.values()), marker="o", ls="--" if "(" in which else "-",
                    label=f"{which} × factor (the other "
                          f"{'estimated online' if '(' in which else 'exact'})")
        ax.set_xscale("log")
        ax.axvline(1.0, color="grey", lw=0.8)
        ax.set_xlabel("estimation factor (<1 under-, >1 over-estimate)")
        ax.set_ylabel("utility / OASiS's utility with exact bounds")
        ax.set_title(f"{sc} resources")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("OASiS under price-bound estimation error")
    save_figure(fig, path)


# --- runtime -----------------------------------------------------------------------------


def runtime(rows: Rows, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (key, fixed) in zip(axes, (("horizon", "servers"), ("servers", "horizon")),
                                strict=True):
        pts = _runtime_series(rows, key, fixed)
        ax.plot(list(pts), list(pts.values()), marker="o")
        ax.set_xlabel(key if key == "horizon" else "worker servers (= PS servers)")
        ax.set_ylabel("median ms per OASiS decision")
        ax.grid(alpha=0.3)
    fig.suptitle("OASiS decision time (paper preset)")
    save_figure(fig, path)


def _runtime_series(rows: Rows, key: str, fixed: str) -> dict[float, float]:
    """Decision ms vs ``key``, over the rows where ``fixed`` holds its most common value."""
    if not rows:
        return {}
    common = statistics.mode(_p(r)[fixed] for r in rows)
    acc: dict[float, list[float]] = defaultdict(list)
    for r in rows:
        p = _p(r)
        if p[fixed] == common:
            acc[float(p[key])].append(_f(r["decision_ms"]))
    return {k: statistics.median(v) for k, v in sorted(acc.items())}


def summary(name: str, rows: Rows) -> dict[str, Any]:
    if not rows:
        return {}
    if name == "ratio":
        return _ratio_summary(rows)
    if name == "utility-vs-jobs":
        return _jobs_summary(rows)
    if name == "estimation-error":
        return _estimation_series(rows)
    return {"vs_horizon": _runtime_series(rows, "horizon", "servers"),
            "vs_servers": _runtime_series(rows, "servers", "horizon")}
