"""The trace-scale bound phase alone (in-process pricing) until it hands over to
price-and-branch; the master's state (columns, exact x, every exact and penalised LP's
support, the start) is pickled there and the MILP skipped (docs/performance.md, round 9).

    python benchmarks/pb_bound.py INSTANCE.json TAG STAB(0|1)   # -> /tmp/stab9/state-TAG.pkl

Then ``benchmarks/pb_variants.py`` runs price-and-branch variants on that state."""
import os
import pickle
import sys
import time

import highspy
import numpy as np
from oasis_opt.formulations import colgen

from oasis_opt import algorithms
from oasis_opt.io import load_instance

OUT = "/tmp/stab9"
os.makedirs(OUT, exist_ok=True)
inst_path, tag, stab = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
colgen.STAB_MASTER = stab
supports: set[int] = set()
pen_supports: set[int] = set()
orig_solve_lp = colgen._Master.solve_lp


def solve_lp(self, strategy=None):
    out = orig_solve_lp(self, strategy)
    if self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
        (pen_supports if self.penalised else supports).update(
            np.flatnonzero(self.x > 1e-9).tolist())
    return out


def mip(self, deadline, start=(), solutions=None):
    x = self.values().copy()
    state = dict(columns=list(self.columns), x=x, supports=sorted(supports),
                 pen_supports=sorted(pen_supports), start=list(start), left=deadline.left(),
                 stab=bool(self.base), lp_exact=self.lp_exact, cpu=time.process_time())
    with open(f"{OUT}/state-{tag}.pkl", "wb") as f:
        pickle.dump(state, f)
    return None


colgen._Master.solve_lp = solve_lp
colgen._Master.mip = mip
inst = load_instance(inst_path)
seeds = [algorithms.run(n, inst) for n in ("rrh", "tetris")]
t0, c0 = time.perf_counter(), time.process_time()


def on_round(r):
    print(f"{time.perf_counter() - t0:7.1f}s cpu {time.process_time() - c0:7.1f} "
          f"round {r.iteration} lp {r.lp:.1f} bound {r.bound:.1f} inc {r.incumbent:.1f}"
          f" cols {r.columns}", flush=True)


res = colgen.solve(inst, seeds=seeds, bound_only=True, time_limit=2400, mip_gap=0.01,
                   on_round=on_round)
print("done", res.objective, res.bound, {k: v for k, v in res.extras.items()
                                         if k not in ("history", "rounds")}, flush=True)
