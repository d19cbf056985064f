"""Pictures a person reads at a glance (``oasis-opt show`` and ``ratio --plot``); matplotlib,
Agg backend, PNG, SVG or PDF by the file's suffix.

``schedule_figure`` draws one schedule on its instance, top to bottom:

1. jobs over slots: one row per job (arrival order), a cell per slot it runs in, shaded by its
   workers ``W_it = Σ_h y_iht`` and labelled ``workers/PSs`` when the grid is small enough to
   read; a triangle at the arrival ``a_i``, a black frame on the completion slot, and at the
   right what the job earned ``f_i(d_i)`` — or why it earned nothing (rejected by OASiS, not
   run, unfinished);
2. each server's use of each resource over time: one heatmap per resource, rows = worker then
   PS servers, colour = ``Σ_i α_ir·y_iht / C_hr`` (red above 1: a capacity breach);
3. for OASiS (the schedule's extras carry its price bounds ``U``, ``L``): the final prices
   ``p_h[t][r] = L_r·(U_r/L_r)^(g_h[t][r]/C_hr)`` after all arrivals, recomputed from the
   allocations with the same ``PriceState`` OASiS uses; per pool and resource the mean over
   servers (line) and the min–max band, on a log scale between ``L`` and ``U``.

``ratio_figure`` draws a ``ratio.RatioReport``: each algorithm's utility as a bar, OPT (or its
bound) as a line, ``OPT/ALG`` above each bar, and the 2α guarantee as the line ``OPT/(2α)``
that OASiS's bar must reach.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError
from .limits import check_allocation
from .model import Instance, Schedule
from .plots import plain_log_ticks, pyplot, quiet_glyphs

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}

#: Cells get their ``workers/PSs`` text only while the job grid is this small.
TEXT_CELLS = 900


def format_of(path: str | Path, place: str = "-o") -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(place, f"expected a file name ending in .png, .svg or .pdf, "
                                f"got {str(path)!r}")
    return FORMATS[suffix]


def save_figure(fig: Any, path: str | Path, place: str = "-o") -> None:
    """Atomic (``io.atomic_output``): draw to a temporary file in the same folder, then
    rename; the figure is closed either way."""
    from .io import atomic_output
    fmt = format_of(path, place)
    try:
        plain_log_ticks(fig)
        with atomic_output(path, suffix=Path(path).suffix) as tmp, quiet_glyphs():
            fig.savefig(tmp, format=fmt, dpi=130, bbox_inches="tight")
    finally:
        pyplot().close(fig)


# --- the schedule ------------------------------------------------------------------------


def counts(instance: Instance, schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """(J, T, H) workers and (J, T, K) PSs as float64 (a hostile count cannot wrap around);
    allocations past the horizon are left out. Names must be known (``validate``)."""
    J, T = instance.num_jobs, instance.horizon
    H, K = len(instance.worker_names), len(instance.ps_names)
    check_allocation("INSTANCE", 8.0 * J * T * (H + K) * 3,
                     f"{J} jobs × {T} slots × {H + K} servers")
    y = np.zeros((J, T, H))
    z = np.zeros((J, T, K))
    wi, pi = instance.worker_index, instance.ps_index
    for jr in schedule.jobs:
        i = instance.job_index[jr.id]
        for a in jr.allocations:
            if a.slot >= T:
                continue
            for name, n in a.workers.items():
                y[i, a.slot, wi[name]] += n
            for name, n in a.ps.items():
                z[i, a.slot, pi[name]] += n
    return y, z


def _fate(schedule: Schedule, job_id: str, utility: float, completed: bool,
          ran: bool) -> tuple[str, str]:
    """(text, colour) at the right of a job's row."""
    if completed:
        return f"✓ {utility:.4g}", "black"
    payoff = schedule.extras.get("payoff")
    p = payoff.get(job_id, "") if isinstance(payoff, dict) and not ran else ""
    if p is None:
        return "rejected: nothing fits", "tab:red"
    if isinstance(p, int | float) and not isinstance(p, bool):  # extras are free-form
        return f"rejected (payoff {p:.3g})", "tab:red"
    return ("unfinished" if ran else "not run"), "tab:red"


def oasis_prices(instance: Instance, schedule: Schedule, y: np.ndarray,
                  z: np.ndarray) -> list[tuple[str, str, np.ndarray, float, float]] | None:
    """[(pool, resource, prices (T, S), L, U)] for each priced pair, or None when the
    schedule carries no OASiS price bounds."""
    bounds = schedule.extras.get("bounds")
    if not isinstance(bounds, dict):
        return None
    from .online.prices import PriceState
    out = []
    R = len(instance.resources)
    for pool, counts_, demand, cap in (
            ("worker", y, instance.worker_demand, instance.worker_capacity),
            ("ps", z, instance.ps_demand, instance.ps_capacity)):
        table = bounds.get(pool)
        if not isinstance(table, dict) or not table:
            continue
        U, L = np.zeros(R), np.zeros(R)
        try:
            for r, name in enumerate(instance.resources):
                if name in table:
                    U[r], L[r] = float(table[name]["U"]), float(table[name]["L"])
        except (KeyError, TypeError, ValueError):
            return None  # not bounds of this instance: draw no prices rather than wrong ones
        if not (np.all(np.isfinite(U)) and np.all(np.isfinite(L))):
            return None
        state = PriceState(cap, U, L, instance.horizon)
        for i in range(instance.num_jobs):
            if counts_[i].any():
                state.add(counts_[i], demand[i])
        for r, name in enumerate(instance.resources):
            if L[r] > 0:
                out.append((pool, name, state.price[:, :, r], float(L[r]), float(U[r])))
    return out or None


def schedule_figure(instance: Instance, schedule: Schedule, violations: int = 0) -> Any:
    """The figure of ``schedule`` on ``instance`` (module docstring). Names must be known to
    the instance (``validate.check_names``); an infeasible schedule (``violations`` broken
    rules) is drawn as it is, with a red note. Completion slots and utilities are recomputed
    from the allocations (the file's own figures may be wrong)."""
    plt = pyplot()
    from matplotlib import colors
    from matplotlib.patches import Rectangle

    y, z = counts(instance, schedule)
    J, T = instance.num_jobs, instance.horizon
    H, K = len(instance.worker_names), len(instance.ps_names)
    R = len(instance.resources)
    W = y.sum(axis=2)  # (J, T)
    P = z.sum(axis=2)
    order = sorted(range(J), key=lambda i: (int(instance.arrival[i]), i))
    prices = oasis_prices(instance, schedule, y, z)

    job_h = min(11.0, 0.8 + 0.32 * max(J, 1))
    srv_h = min(6.0, 1.2 + 0.22 * (H + K))
    heights = [job_h, srv_h] + ([2.6] if prices else [])
    width = min(18.0, max(10.0, 4.5 + 0.35 * T * (1 if R <= 2 else 0.8)))
    head_h = 1.05 if violations else 0.75  # room for the title (and the infeasibility note)
    fig_h = sum(heights) + 0.45 + head_h
    fig = plt.figure(figsize=(width, fig_h))
    grid = fig.add_gridspec(len(heights), max(R, 2), height_ratios=heights, hspace=0.55,
                            wspace=0.25, top=1 - head_h / fig_h, bottom=0.45 / fig_h)

    # 1. jobs over slots
    ax = fig.add_subplot(grid[0, :])
    Wo = W[order] if J else np.zeros((1, T))
    vmax = max(1.0, float(Wo.max()))
    cmap = plt.get_cmap("Blues").with_extremes(bad="white")
    img = ax.imshow(np.ma.masked_where(Wo <= 0, Wo), aspect="auto", cmap=cmap,
                    norm=colors.Normalize(vmin=0, vmax=vmax * 1.25), interpolation="nearest",
                    extent=(-0.5, T - 0.5, max(J, 1) - 0.5, -0.5))
    text = J * T <= TEXT_CELLS
    earned = 0.0
    done = 0
    for row, i in enumerate(order):
        job = instance.jobs[i]
        ran = bool(W[i].any())
        reached = np.flatnonzero(np.cumsum(W[i]) >= job.workload)
        completion = int(reached[0]) if reached.size else None
        completed = completion is not None
        utility = instance.utility_at(i, completion) if completed else 0.0
        a = int(job.arrival)
        ax.add_patch(Rectangle((a - 0.5, row - 0.5), T - a, 1, fill=False, lw=0.4,
                               ec="0.75", zorder=1))  # the slots in which it may run
        ax.plot(a - 0.5, row, marker=">", color="0.25", ms=5, zorder=3, clip_on=False)
        if completion is not None:
            ax.add_patch(Rectangle((completion - 0.5, row - 0.5), 1, 1, fill=False, lw=1.8,
                                   ec="black", zorder=4))
            earned += utility
            done += 1
        if ran:  # work that earns nothing (never completes, or after completion): hatched
            wasted = W[i] > 0
            if completion is not None:
                wasted[: completion + 1] = False
            for t in np.flatnonzero(wasted):
                ax.add_patch(Rectangle((t - 0.5, row - 0.5), 1, 1, fill=False, hatch="///",
                                       ec="tab:red", lw=0, zorder=2))
        if text:
            for t in np.flatnonzero(W[i] > 0):
                dark = W[i, t] > 0.6 * vmax * 1.25
                ax.text(t, row, f"{W[i, t]:.0f}/{P[i, t]:.0f}", ha="center", va="center",
                        fontsize=7 if T <= 20 else 6, color="white" if dark else "black",
                        zorder=5)
        label, colour = _fate(schedule, job.id, utility, completed, ran)
        ax.text(T - 0.5 + 0.25, row, label, ha="left", va="center", fontsize=8,
                color=colour, clip_on=False)
    ax.set_yticks(range(J))
    ax.set_yticklabels([instance.jobs[i].id for i in order], fontsize=8 if J <= 40 else 5)
    ax.set_xlim(-0.5, T - 0.5)
    ax.set_xticks(range(0, T, max(1, T // 25)))
    ax.set_xlabel("slot")
    ax.set_ylabel("job (arrival order)")
    cells = "cell: workers/PSs; " if text else ""
    ax.set_title(f"jobs over slots — {cells}▸ arrival, framed cell = completion, hatched = work "
                 f"that earns nothing", fontsize=9, loc="left")
    # the job's fate is written right of the grid: the colour bar goes beyond it
    bar = fig.colorbar(img, ax=ax, fraction=0.02, pad=0.16 if T > 12 else 0.2)
    bar.set_label("workers in slot", fontsize=8)
    head = f"{schedule.algorithm} on {instance.name}: utility {earned:.6g}, {done} of {J} jobs " \
        "completed"
    fig.suptitle(head, fontsize=12, x=0.02, y=1 - 0.2 / fig_h, ha="left")
    if violations:
        fig.text(0.02, 1 - 0.55 / fig_h, f"INFEASIBLE: {violations} broken rule(s) — "
                 "oasis-opt validate lists them", color="tab:red", fontsize=11, ha="left",
                 va="top", weight="bold")

    # 2. server use per resource
    used_w = np.einsum("jth,jr->rht", y, instance.worker_demand)  # (R, H, T)
    used_p = np.einsum("jtk,jr->rkt", z, instance.ps_demand)
    cap = np.concatenate([instance.worker_capacity, instance.ps_capacity])  # (H+K, R)
    # purple: above capacity; grey: a server without this resource
    ucmap = plt.get_cmap("YlOrRd").with_extremes(over="purple", bad="0.85")
    names = [f"w:{n}" for n in instance.worker_names] + [f"ps:{n}" for n in instance.ps_names]
    for r, res in enumerate(instance.resources):
        axr = fig.add_subplot(grid[1, r])
        used = np.concatenate([used_w[r], used_p[r]])  # (H+K, T)
        c = cap[:, r][:, None]
        share = np.where(c > 0, used / np.where(c > 0, c, 1), np.nan)
        share = np.where((c == 0) & (used > 0), 2.0, share)  # use of a zero capacity: a breach
        im = axr.imshow(np.ma.masked_invalid(share), aspect="auto", cmap=ucmap, vmin=0,
                        vmax=1, interpolation="nearest",
                        extent=(-0.5, T - 0.5, H + K - 0.5, -0.5))
        axr.axhline(H - 0.5, color="black", lw=1)
        axr.set_title(f"{res}: share of capacity", fontsize=9)
        axr.set_xlabel("slot", fontsize=8)
        axr.tick_params(labelsize=7)
        if H + K <= 30:
            axr.set_yticks(range(H + K))
            axr.set_yticklabels(names if r == 0 else [""] * (H + K), fontsize=7)
        elif r == 0:
            axr.set_yticks([H / 2 - 0.5, H + K / 2 - 0.5])
            axr.set_yticklabels([f"{H} worker servers", f"{K} PS servers"], fontsize=7)
        else:
            axr.set_yticks([])
    fig.colorbar(im, ax=fig.axes[-R:], fraction=0.02, pad=0.01, extend="max").set_label(
        "used / capacity (purple > 1)", fontsize=8)

    # 3. OASiS's prices
    if prices:
        pools = [p for p in ("worker", "ps") if any(q[0] == p for q in prices)]
        for n, pool in enumerate(pools):
            axp = fig.add_subplot(grid[2, n * max(R, 2) // len(pools):
                                       (n + 1) * max(R, 2) // len(pools)])
            slots = np.arange(T)
            for k, (_, res, p, L, U) in enumerate(q for q in prices if q[0] == pool):
                rel = p / L  # price in units of its floor L: 1 = idle, U/L = full
                colour = f"C{k}"
                axp.plot(slots, rel.mean(axis=1), color=colour, lw=1.6,
                         label=f"{res} (U/L = {U / L:.3g})")
                axp.fill_between(slots, rel.min(axis=1), rel.max(axis=1), color=colour,
                                 alpha=0.15, lw=0)
                axp.axhline(U / L, color=colour, ls=":", lw=0.8)
            axp.set_yscale("log")
            axp.set_xlim(-0.5, T - 0.5)
            axp.set_xlabel("slot", fontsize=8)
            if n == 0:  # one label for both pools: a second one would run into the first plot
                axp.set_ylabel("price / L\n(line: mean over servers,\nband: min–max)",
                               fontsize=7)
            axp.tick_params(labelsize=7)
            who = "worker" if pool == "worker" else "PS"
            axp.set_title(f"OASiS's final {who} prices (dotted: U)", fontsize=9, loc="left")
            axp.legend(fontsize=7, loc="upper right")
    return fig


def show(instance: Instance, schedule: Schedule, path: str | Path) -> dict[str, Any]:
    """Check the schedule's names (``InputError`` for unknown jobs or servers), validate it,
    draw it and write the picture to ``path``. Returns the validation outcome."""
    from .validate import validate
    format_of(path)
    report = validate(instance, schedule)  # names: InputError; rules: listed, drawn anyway
    fig = schedule_figure(instance, schedule, len(report.violations))
    save_figure(fig, path)
    return {"output": str(path), "algorithm": schedule.algorithm, "feasible": report.feasible,
            "total_utility": report.total_utility, "completed": report.completed,
            "violations": [str(v) for v in report.violations],
            "priced": oasis_prices(instance, schedule, *counts(instance, schedule)) is not None}


# --- the ratio table ---------------------------------------------------------------------


def ratio_figure(report: Any) -> Any:
    """Bars of each algorithm's utility against OPT (or its bound), ``OPT/ALG`` on each bar,
    and OASiS's guarantee ``OPT/(2α)`` (``report``: ``ratio.RatioReport``)."""
    plt = pyplot()
    rows = [r for r in report.rows if r.get("utility") is not None]
    names = [r["algorithm"] for r in rows]
    values = [float(r["utility"]) for r in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(rows) + 2.5), 4.5))
    colours = ["tab:blue" if n == "oasis" else "tab:gray" for n in names]
    bars = ax.bar(names, values, color=colours, width=0.6)
    ref = report.reference
    top = max(values + ([ref] if ref is not None else []) + [1e-9])
    if ref is not None:
        ax.axhline(ref, color="black", lw=1.5)
        ax.text(len(rows) - 0.45, ref, f" {report.opt_label}\n = {ref:.5g}", va="center",
                ha="left", fontsize=9, clip_on=False)  # right of the bars: never on a label
        ax.set_xlim(-0.55, len(rows) - 0.45)
    for bar, r in zip(bars, rows, strict=True):
        q = r.get("opt_over_alg")
        txt = "–" if q is None else ("∞" if math.isinf(q) else f"{q:.3g}×")
        tall = bar.get_height() > 0.3 * top  # inside a tall bar: clear of the OPT line
        ax.text(bar.get_x() + bar.get_width() / 2,
                bar.get_height() - 0.02 * top if tall else bar.get_height() + 0.01 * top,
                f"{txt}\n{r['utility']:.4g}", ha="center",
                va="top" if tall else "bottom", fontsize=8, color="white" if tall else "black")
        ta = r.get("two_alpha")
        if ta and ref is not None:
            g = ref / float(ta)
            x0 = bar.get_x() - 0.1
            ax.plot([x0, x0 + bar.get_width() + 0.2], [g, g], color="tab:red", ls="--", lw=1.5)
            ax.text(bar.get_x() + bar.get_width() / 2, g + 0.01 * top,
                    f"guarantee OPT/2α = {g:.3g}\n(2α = {float(ta):.3g})", color="tab:red",
                    ha="center", va="bottom", fontsize=7,
                    bbox={"facecolor": "white", "alpha": 0.85, "lw": 0, "pad": 1})
    ax.set_ylim(0, top * 1.22)
    ax.set_ylabel("total utility")
    against = "OPT" if report.opt_label == "OPT" else "the bound on OPT"
    ax.set_title(f"{report.instance}: utility of each algorithm against {against}\n"
                 f"(on each bar: OPT/ALG and the utility)", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    return fig
