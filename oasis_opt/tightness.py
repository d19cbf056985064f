"""How tight is 2α: structured families in the theorem's regime, with OPT in closed form
(issue 20, item 2; ``oasis-opt adversary --family NAME``).

**The ``threshold`` family** (the classic lower bound of online packing, Buchbinder–Naor): one
worker server with ``C = 1/s`` GPUs (``s`` the share one job can hold), one PS server whose
PSs cost nothing, one slot. ``K`` blocks of ``C`` jobs arrive in order; every job needs one
worker for one slot (``V = N = 1``, ``α = 1`` GPU: share ``1/C``) and is worth, in block
``k = 1 … K``,

    v_k = v_top · (4C)^((k − K)/K),

so values per unit of resource rise geometrically from just above ``v_top/(4C)`` to ``v_top``.
``v_top/(4C)`` and ``v_top`` are exactly OASiS's default price bounds ``L`` and ``U`` on this
instance (SPEC §3: ``U = max f/α = v_top``, ``L = OPT_lb/(2·n·T·ΣC) = v_top/(4C)`` with
``n = 2`` priced pairs, ``T = 1``), so ``α = ln(4C)``. The adversary may stop the sequence after
any block: the family is the K prefixes ``P_1 … P_K``.

**OPT in closed form.** One slot, unit jobs, capacity C: OPT takes the C most valuable jobs of
the prefix, ``OPT(P_k) = C·v_k`` (the whole of block k). Tests check it against the exact DP.

**What any online algorithm must lose** (deterministic or randomised; the fractional relaxation
only helps it): with ``x_j`` the expected share of the capacity it gives block j, stopping after
block k demands ``Σ_{j≤k} x_j·v_j ≥ v_k/c``. Weighting constraint k by ``1/v_k − 1/v_{k+1}``
(and K by ``1/v_K``) and using ``Σ x_j ≤ 1`` gives

    c ≥ c*(K, C) = 1 + Σ_{k<K} (1 − v_k/v_{k+1}) = 1 + (K − 1)·(1 − (4C)^(−1/K)),

attained with every constraint tight; ``c* → 1 + ln(4C) = 1 + α`` as K grows. So on this family
no online algorithm beats about ``1 + α``, and OASiS is promised ``2α``.

Two OASiS settings are measured on every prefix: ``oasis`` with the package's default bounds
(derived from the prefix itself, so they rescale with its top value), and ``oasis`` with the
family's fixed bounds ``[v_top/(4C), v_top]`` (the theorem's setting: the bounds are known in
advance and do not depend on where the adversary stops).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import InputError

FAMILIES = ("threshold",)
#: Value of the top block (the scale is irrelevant: every ratio here is scale-invariant).
V_TOP = 100.0
DEFAULT_SHARES = (0.1, 0.05, 0.02, 0.01)
DEFAULT_STEPS = 12
#: Jobs per family instance the command accepts (K·C; OASiS runs once per prefix).
MAX_JOBS = 5000


def check(family: str, share: float, steps: int) -> int:
    """The capacity ``C = round(1/share)``; ``InputError`` for a bad family, share or K."""
    if family not in FAMILIES:
        raise InputError("family", f"unknown family {family!r}; choose from "
                                     f"{', '.join(FAMILIES)}")
    if not (math.isfinite(share) and 0 < share <= 1):
        raise InputError("share", f"must be in (0, 1], got {share}")
    if share * MAX_JOBS < 1:  # 1/share can overflow: refuse before rounding it
        raise InputError("share", f"{share:g} means more than {MAX_JOBS} jobs per block "
                                  f"(at least {1 / MAX_JOBS:g})")
    C = max(1, round(1 / share))
    if steps < 2:
        raise InputError("steps", f"must be at least 2, got {steps}")
    if steps * C > MAX_JOBS:
        raise InputError("steps", f"{steps} blocks of {C} jobs is {steps * C} jobs, more "
                                    f"than {MAX_JOBS}")
    return C


def block_values(C: int, steps: int) -> list[float]:
    """``v_k = v_top·(4C)^((k − K)/K)``, k = 1 … K."""
    return [V_TOP * (4 * C) ** ((k - steps) / steps) for k in range(1, steps + 1)]


def threshold_instance(share: float, steps: int, blocks: int | None = None) -> dict[str, Any]:
    """The prefix of the first ``blocks`` blocks (all K by default), as an instance dict."""
    C = check("threshold", share, steps)
    vals = block_values(C, steps)[: steps if blocks is None else blocks]
    jobs = [{"id": f"b{k + 1}-{c}", "arrival": 0, "workload": 1, "max_workers": 1,
             "ps_ratio": 1, "worker_demand": [1], "ps_demand": [0], "requested_workers": 1,
             "utility": {"kind": "table", "values": [v]}}
            for k, v in enumerate(vals) for c in range(C)]
    return {"format": "oasis-instance/1", "name": f"threshold-c{C}-k{steps}-p{len(vals)}",
            "description": f"threshold family (oasis_opt.tightness): share 1/{C}, prefix of "
                           f"{len(vals)} of {steps} blocks",
            "horizon": 1, "resources": ["gpu"],
            "worker_servers": [{"name": "w", "capacity": [C]}],
            "ps_servers": [{"name": "p", "capacity": [1]}], "jobs": jobs}


def threshold_opt(C: int, steps: int, blocks: int) -> float:
    """``OPT(P_k) = C·v_k``: the C most valuable jobs of the prefix."""
    return C * block_values(C, steps)[blocks - 1]


def online_lower_bound(C: int, steps: int) -> float:
    """``c*(K, C) = 1 + Σ_{k<K}(1 − v_k/v_{k+1})`` (module docstring)."""
    v = block_values(C, steps)
    return 1.0 + sum(1.0 - v[k] / v[k + 1] for k in range(steps - 1))


@dataclass(frozen=True)
class TightnessRow:
    family: str
    share: float
    capacity: int
    steps: int
    jobs: int
    alpha: float
    two_alpha: float
    online_lower_bound: float  # c*: what any online algorithm must lose on the family
    one_plus_alpha: float
    worst_ratio: float  # OPT/OASiS, default bounds, worst prefix
    worst_prefix: int
    alpha_fixed: float  # ln(U/L) of the fixed bounds
    two_alpha_fixed: float
    worst_ratio_fixed: float  # OPT/OASiS with the family's fixed bounds
    worst_prefix_fixed: int
    ratios: tuple[float, ...]  # per prefix, default bounds
    ratios_fixed: tuple[float, ...]


def tightness(family: str, share: float, steps: int) -> TightnessRow:
    """Run OASiS (both settings) on every prefix of the family; OPT from the closed form."""
    from . import algorithms
    from .io import instance_from_dict
    from .online.prices import default_bounds
    C = check(family, share, steps)
    top = default_bounds(instance_from_dict(threshold_instance(share, steps)))
    low = default_bounds(instance_from_dict(threshold_instance(share, steps, 1)))
    # U from the whole family, L from its smallest prefix: D0 ≤ OPT/2 on every prefix
    fixed = {"U_w": list(top.U_w), "L_w": list(low.L_w), "U_ps": list(low.L_ps),
             "L_ps": list(low.L_ps)}
    alpha_fixed = max(1.0, math.log(top.U_w[0] / low.L_w[0]))
    ratios, ratios_fixed = [], []
    alpha = two_alpha = math.nan
    for k in range(1, steps + 1):
        inst = instance_from_dict(threshold_instance(share, steps, k))
        opt = threshold_opt(C, steps, k)
        s = algorithms.run("oasis", inst, certificate=False)
        f = algorithms.run("oasis", inst, certificate=False, bounds=fixed)
        ratios.append(_ratio(opt, s.total_utility))
        ratios_fixed.append(_ratio(opt, f.total_utility))
        if k == steps:
            alpha, two_alpha = float(s.extras["alpha"]), float(s.extras["two_alpha"])
    w = max(range(steps), key=lambda k: (ratios[k], -k))
    wf = max(range(steps), key=lambda k: (ratios_fixed[k], -k))
    return TightnessRow(family, 1.0 / C, C, steps, steps * C, alpha, two_alpha,
                        online_lower_bound(C, steps), 1.0 + alpha, ratios[w], w + 1,
                        alpha_fixed, 2 * alpha_fixed, ratios_fixed[wf], wf + 1, tuple(ratios),
                        tuple(ratios_fixed))


def _ratio(opt: float, alg: float) -> float:
    return math.inf if alg <= 1e-6 * max(1.0, opt) else opt / alg


CSV_COLUMNS = ("family", "share", "capacity", "steps", "jobs", "alpha", "two_alpha",
               "online_lower_bound", "one_plus_alpha", "worst_ratio", "worst_prefix",
               "alpha_fixed", "two_alpha_fixed", "worst_ratio_fixed", "worst_prefix_fixed")


def rows_csv(rows: Sequence[TightnessRow]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in rows:
        d = asdict(r)
        w.writerow([d[c] for c in CSV_COLUMNS])
    return buf.getvalue()


def figure(rows: Sequence[TightnessRow], path: str | Path) -> None:
    """The tightness curve: worst OPT/OASiS (both settings) against the share, beside α, 2α
    and the online lower bound c*; written atomically (``plots.save_figure``)."""
    from .plots import pyplot, save_figure
    plt = pyplot()
    rows = sorted(rows, key=lambda r: r.share)
    x = [r.share for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(x, [r.two_alpha_fixed for r in rows], "r--", lw=1,
            label="2α of the fixed bounds (their guarantee)")
    ax.plot(x, [r.two_alpha for r in rows], "b--", lw=1,
            label="2α of each prefix's bounds")
    ax.plot(x, [r.one_plus_alpha for r in rows], "k:", label="1 + α (α of the whole family)")
    ax.plot(x, [r.online_lower_bound for r in rows], "g-s",
            label="c*: any online algorithm (lower bound)")
    ax.plot(x, [r.worst_ratio_fixed for r in rows], "r-o",
            label="OASiS, fixed bounds [L, U] (worst prefix)")
    ax.plot(x, [r.worst_ratio for r in rows], "b-^",
            label="OASiS, bounds from each prefix (worst prefix)")
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("share of a server one job can hold (log; the regime deepens to the right)")
    ax.set_ylabel("OPT / ALG")
    steps = sorted({r.steps for r in rows})
    ax.set_title(f"threshold family, K = {', '.join(map(str, steps))} blocks of 1/share jobs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=110)
