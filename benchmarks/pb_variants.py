"""Price-and-branch variants on a master state saved by ``benchmarks/pb_bound.py``, each
answer and every improving solution placed, filled and compacted (docs/performance.md,
round 9). One JSON line; HiGHS's log in /tmp/stab9/log-TAG-VARIANT.txt.

    python benchmarks/pb_variants.py INSTANCE.json STATE.pkl VARIANT SECONDS

VARIANT: ``base`` (the last LP's support and the start, as ``_Master.mip``) joined by ``+``
with ``union`` (every exact LP's support), ``pen`` (every penalised LP's), ``all``,
``rcF`` (F × the support's size more columns of least reduced cost), ``nopre`` (presolve
off), ``nostart``, ``fix1`` (the LP's x = 1 columns fixed), ``multiK`` (K runs, seeds 1..K),
``sols`` (place every improving solution)."""
import json
import os
import pickle
import sys
import time

import highspy
import numpy as np
from oasis_opt.formulations import colgen
from oasis_opt.formulations.colgen_scale import round_lp, with_count_rows
from oasis_opt.formulations.highs import new_highs

from oasis_opt.io import load_instance

inst_path, state_path, variant, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
inst = load_instance(inst_path)
st = pickle.load(open(state_path, "rb"))
t0 = time.time()
m = colgen._Master(with_count_rows(inst), aggregate=True, pool_all=True)
for c in st["columns"]:
    m.add(c)
picked = [m.add(c) for c in st["start"]]
n = len(m.columns)
x = np.zeros(n)
x[:len(st["x"])] = st["x"]
build = time.time() - t0

used = np.zeros(n, dtype=bool)
used[:len(st["x"])] = st["x"] > 1e-9
parts = variant.split("+")
if "union" in parts:
    used[st["supports"]] = True
if "pen" in parts:
    used[st["pen_supports"]] = True
if "all" in parts:
    used[:] = True
for p in parts:
    if p.startswith("rc"):  # support ∪ the (factor × support) columns of least reduced cost
        factor = float(p[2:])
        t_rc = time.time()
        m.h.setOptionValue("simplex_strategy", 1)
        m.h.run()
        d = np.asarray(m.h.getSolution().col_dual)[:n]
        rc_lp = -m.h.getInfo().objective_function_value
        extra = int(factor * used.sum())
        order = np.argsort(np.where(used, np.inf, d))[:extra]
        used[order] = True
        print(f"rc: LP {rc_lp:.1f} in {time.time() - t_rc:.0f}s, max d added {d[order].max():.4g}",
              file=sys.stderr)
used[picked] = True
keep = np.flatnonzero(used)

h = new_highs()
h.setOptionValue("threads", 1)
h.passModel(m.h.getLp())
drop = np.flatnonzero(~used).astype(np.int32)
h.deleteCols(len(drop), drop)
k = len(keep)
h.changeColsIntegrality(k, np.arange(k, dtype=np.int32), np.full(k, highspy.HighsVarType.kInteger))
h.setOptionValue("mip_rel_gap", 1e-4)
if "fix1" in parts:  # the LP's integral columns fixed at 1: the MILP decides the rest
    xk = np.zeros(k)
    inx = keep < len(st["x"])
    xk[inx] = st["x"][keep[inx]]
    ones = np.flatnonzero(xk > 1 - 1e-6).astype(np.int32)
    h.changeColsBounds(len(ones), ones, np.ones(len(ones)), np.ones(len(ones)))
    print(f"fix1: {len(ones)} columns at 1", file=sys.stderr)
h.setOptionValue("time_limit", limit)
tag = state_path.split("state-")[-1].replace(".pkl", "")
h.setOptionValue("output_flag", True)
h.setOptionValue("log_to_console", False)
os.makedirs("/tmp/stab9", exist_ok=True)
h.setOptionValue("log_file", f"/tmp/stab9/log-{tag}-{variant}.txt")
if "nopre" in parts:
    h.setOptionValue("presolve", "off")
pos = {int(j): a for a, j in enumerate(keep)}
x0 = np.zeros(k)
x0[[pos[j] for j in picked]] = 1.0
start_val = float(sum(m.columns[j].value for j in picked))
if "nostart" not in parts:
    s0 = highspy.HighsSolution()
    s0.col_value = list(x0)
    s0.value_valid = True
    h.setSolution(s0)
sols = []
if "sols" in parts:
    def cb(e):
        d = e.data_out
        sols.append((time.time() - t1, -float(d.objective_function_value),
                     np.round(np.asarray(d.mip_solution))))
    h.cbMipImprovingSolution.subscribe(cb)
t1 = time.time()
multi = [int(p[5:]) for p in parts if p.startswith("multi")]
if multi:
    for r in range(multi[0]):
        h.setOptionValue("random_seed", r + 1)
        h.setOptionValue("time_limit", limit / multi[0])
        if r and "nostart" not in parts:
            h.setSolution(s0)
        h.run()
        h.clearSolver()
else:
    h.run()
secs = time.time() - t1
sol = h.getSolution()
info = h.getInfo()
xm = np.zeros(n)
if sol.value_valid:
    xm[keep] = np.round(np.asarray(sol.col_value))
    sched = round_lp(inst, m.columns, xm, fill=True, compact=True)
    placed = sched.total_utility
else:
    placed = None
placed_all = []
for ts, obj, sv in sols:
    if sv.size != k:
        continue
    xs = np.zeros(n)
    xs[keep] = sv
    worth = round_lp(inst, m.columns, xs, fill=True, compact=True).total_utility
    placed_all.append((round(ts, 1), round(obj, 1), round(worth, 1)))
lp_sched = round_lp(inst, m.columns, x, fill=True, compact=True).total_utility
print(json.dumps(dict(state=tag, variant=variant, limit=limit, cols=n, mip_cols=k,
                      support=int((st["x"] > 1e-9).sum()), union=len(st["supports"]),
                      start=start_val, lp_exact=st.get("lp_exact"),
                      mip_obj=-info.objective_function_value if sol.value_valid else None,
                      mip_bound=-info.mip_dual_bound, nodes=info.mip_node_count,
                      placed=placed, lp_rounded=lp_sched, mip_seconds=round(secs, 1),
                      build=round(build, 1), sols=placed_all, left=st["left"])))
