"""OASiS (SPEC §3): feasibility, monotone prices, the dual certificate, price bounds, CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import INSTANCES

from oasis_opt import algorithms
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict, save_instance
from oasis_opt.online import oasis, prices
from oasis_opt.validate import validate

TIMING = ("seconds", "decision_ms_median", "decision_seconds", "certificate_seconds")


def _instances() -> list:
    out = [generate("small", seed=s) for s in range(6)]
    out += [generate("testbed", seed=s) for s in range(3)]
    out += [generate("small", seed=s, jobs=12, horizon=8) for s in range(2)]
    return out


@pytest.fixture(scope="module", params=range(11), ids=lambda k: f"inst{k}")
def inst(request):
    return _instances()[request.param]


def test_schedule_validates_and_utility_matches(inst) -> None:
    s = algorithms.run("oasis", inst)  # run() validates too; check the report itself
    rep = validate(inst, s)
    assert rep.feasible, rep.violations
    assert rep.total_utility == pytest.approx(s.total_utility, rel=1e-9)
    ex = s.extras
    assert ex["P"] == pytest.approx(s.total_utility, rel=1e-9, abs=1e-12)
    for job in s.jobs:  # admitted ⇔ payoff > 1e-9 ⇔ completed (OASiS plans finish)
        p = ex["payoff"][job.id]
        assert job.completed == (p is not None and p > oasis.ADMIT_TOL)
        if job.completed:
            assert job.utility >= p  # payoff = f − cost, cost ≥ 0


@pytest.mark.parametrize("path", sorted(INSTANCES.glob("edge-*.json")), ids=lambda p: p.stem)
def test_edge_instances(path: Path) -> None:
    from oasis_opt.io import load_instance
    inst = load_instance(path)
    s = algorithms.run("oasis", inst)
    assert validate(inst, s).feasible
    assert s.extras["D_cert"] >= s.total_utility - 1e-9


def test_prices_never_decrease(inst, monkeypatch) -> None:
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    original = prices.PriceState.add

    def add(self, counts, demand):
        before = self.price.copy()
        original(self, counts, demand)
        seen.append((before, self.price.copy()))

    monkeypatch.setattr(prices.PriceState, "add", add)
    s = oasis.run(inst)
    for before, after in seen:
        assert (after >= before).all()
    d = list(s.extras["D_after"].values())  # ΔD = u_i + Δ(Σ p·C) ≥ 0
    assert all(b >= a - 1e-9 for a, b in zip([s.extras["D0"], *d[:-1]], d, strict=True))
    assert d[-1] == s.extras["D_final"]


def test_deterministic_rerun(inst) -> None:
    a, b = oasis.run(inst), oasis.run(inst)
    assert a.jobs == b.jobs
    strip = lambda e: {k: v for k, v in e.items() if k not in TIMING}  # noqa: E731
    assert strip(a.extras) == strip(b.extras)


def test_default_bounds_give_d0_half_opt_lb(inst) -> None:
    b = prices.default_bounds(inst)
    s = oasis.run(inst)
    assert s.extras["D0"] == pytest.approx(b.opt_lb / 2, rel=1e-12)
    assert s.extras["alpha"] == pytest.approx(b.alpha)
    assert b.n == int((inst.worker_capacity.sum(0) > 0).sum() + (inst.ps_capacity.sum(0) > 0).sum())
    assert (b.U_w >= b.L_w).all() and (b.U_ps >= b.L_ps).all()


# --- against the exact optimum -------------------------------------------------------------


def _solve(inst):
    offline = pytest.importorskip("oasis_opt.offline")
    sched, rep = offline.solve(inst, time_limit=60)
    if str(getattr(rep.status, "value", rep.status)) != "optimal":
        pytest.skip(f"offline solve not optimal: {rep.status}")
    return float(rep.objective)


@pytest.mark.parametrize("seed", range(3))
def test_opt_bounds_oasis_and_dcert_bounds_opt(seed: int) -> None:
    inst = generate("small", seed=seed)
    s = oasis.run(inst)
    opt = _solve(inst)
    assert opt >= s.total_utility - 1e-6 * max(1.0, opt)
    assert s.extras["D_cert"] >= opt - 1e-6 * max(1.0, opt)


def blocked_instance():
    """One worker server with 2 GPUs, one slot. Job a (1 GPU, worth 20) arrives first and is
    admitted; job b (2 GPUs, worth 100) no longer fits the 1 GPU left. By hand (n = 2 priced
    pairs: worker gpu, PS gpu): OPT_lb = 100, L_w = 100/(2·2·1·2) = 12.5, U_w = max(20/1,
    100/2) = 50, L_ps = U_ps = 100/(2·2·1·1) = 25; D0 = 50; a pays 12.5, u_a = 7.5; the GPU
    price becomes 12.5·4^(1/2) = 25; D_final = 7.5 + 2·25 + 25 = 82.5 < OPT = 100; at the
    final prices against the full server b's payoff is 100 − 2·25 = 50 and a's is < 0, so
    D_cert = 50 + 50 + 25 = 125 ≥ OPT."""
    job = {"arrival": 0, "workload": 1, "max_workers": 1, "ps_ratio": 1, "ps_demand": [0]}
    return instance_from_dict({
        "format": "oasis-instance/1", "name": "blocked", "horizon": 1, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "capacity": [2]}],
        "ps_servers": [{"name": "p", "capacity": [1]}],
        "jobs": [{**job, "id": "a", "worker_demand": [1],
                  "utility": {"kind": "table", "values": [20]}},
                 {**job, "id": "b", "worker_demand": [2],
                  "utility": {"kind": "table", "values": [100]}}],
    })


def test_small_leftover_blocks_a_job_dfinal_below_opt_dcert_above() -> None:
    inst = blocked_instance()
    s = oasis.run(inst)
    ex = s.extras
    opt = 100.0  # a and b need 3 GPUs together; b alone is best
    assert s.total_utility == 20.0 and [j.completed for j in s.jobs] == [True, False]
    assert ex["D0"] == pytest.approx(50.0)
    assert ex["payoff"] == {"a": pytest.approx(7.5), "b": None}
    assert ex["D_final"] == pytest.approx(82.5) and ex["D_final"] < opt
    assert ex["D_cert"] == pytest.approx(125.0) and ex["D_cert"] >= opt
    assert ex["alpha"] == pytest.approx(math.log(4.0))
    # α·ΔP = ln4·20 ≈ 27.7 < ΔD = 32.5: the relationship fails (one worker takes half a server)
    assert [f["job"] for f in ex["relationship_failures"]] == ["a"]
    assert ex["max_job_share"] == pytest.approx(0.5) and ex["max_unit_share"] == pytest.approx(1.0)
    if _has_offline():
        assert _solve(inst) == pytest.approx(opt)


def _has_offline() -> bool:
    try:
        import oasis_opt.offline  # noqa: F401
    except ImportError:
        return False
    return True


# --- parameters -------------------------------------------------------------------------


def test_scales_multiply_the_bounds() -> None:
    inst = generate("testbed", seed=0)
    base = prices.default_bounds(inst)
    s = oasis.run(inst, u_scale=0.5, l_scale=2.0)
    got = s.extras["bounds"]["worker"]
    for r, res in enumerate(inst.resources):
        if base.worker_priced[r]:
            assert got[res]["L"] == pytest.approx(2.0 * base.L_w[r])
            assert got[res]["U"] == pytest.approx(max(0.5 * base.U_w[r], 2.0 * base.L_w[r]))
    assert s.extras["D0"] == pytest.approx(2.0 * base.opt_lb / 2)
    assert validate(inst, s).feasible


def test_u_below_l_is_raised_with_a_note() -> None:
    inst = generate("small", seed=1)
    s = oasis.run(inst, u_scale=1e-6, l_scale=1e3)
    assert any("U set to L" in n for n in s.extras["notes"])
    assert s.extras["alpha"] == 1.0  # constant prices: ln(U/L) = 0
    for pool in s.extras["bounds"].values():
        if isinstance(pool, dict):
            for v in pool.values():
                assert v["U"] == v["L"]
    assert validate(inst, s).feasible


def test_caller_bounds() -> None:
    inst = blocked_instance()
    s = oasis.run(inst, bounds={"U_w": [50.0], "L_w": [1.0]})
    assert s.extras["bounds"]["worker"]["gpu"] == {"U": 50.0, "L": 1.0}
    with pytest.raises(InputError, match="bounds.L_w"):
        oasis.run(inst, bounds={"L_w": [1.0, 2.0]})


@pytest.mark.parametrize("bounds, match", [
    ([1, 2], "bounds: expected an object"),           # a list was read as "no keys": defaults
    ("U_w", "bounds: expected an object"),
    ({"U_x": [1.0]}, "unknown key 'U_x'"),
    ({"U_w": ["a"]}, "bounds.U_w: expected a list of 1 numbers"),
    ({"U_w": [True]}, "bounds.U_w: expected a list of 1 numbers"),
    ({"U_w": {"gpu": 1}}, "bounds.U_w: expected a list of 1 numbers"),
])
def test_caller_bounds_refused(bounds, match) -> None:
    """Bounds that are not an object of R-vectors are refused naming the place; before, a list
    or a string silently gave the default bounds (``"U_w" in [1, 2]`` is False)."""
    with pytest.raises(InputError, match=match):
        oasis.run(blocked_instance(), bounds=bounds)


@pytest.mark.parametrize("kw", [{"u_scale": 0}, {"u_scale": -1.0}, {"l_scale": 0.0},
                                {"l_scale": math.nan}, {"u_scale": math.inf}])
def test_bad_scales_raise_input_error(kw) -> None:
    with pytest.raises(InputError, match="scale"):
        oasis.run(blocked_instance(), **kw)


@pytest.mark.parametrize("algorithm", ["oasis", "oasis-adaptive"])
def test_a_scale_that_takes_the_dual_cost_out_of_range_is_refused(algorithm) -> None:
    """``--l-scale 1e308`` kept every price bound finite, but Σ p·C over the horizon
    overflowed: exit 0 with D0, D_final and D_cert null, where SPEC §3 promises D_cert ≥ OPT
    (an outside audit). Refused, naming the scale; 1e300 still runs."""
    from oasis_opt import algorithms
    inst = generate("small", seed=2)
    with pytest.raises(InputError, match=r"1e\+308 takes the dual cost") as err:
        algorithms.run(algorithm, inst, l_scale=1e308)
    assert err.value.place == "l_scale"
    s = algorithms.run(algorithm, inst, l_scale=1e300)
    assert s.extras["D_cert"] is not None and math.isfinite(s.extras["D_cert"])


def test_certificate_can_be_skipped() -> None:
    inst = generate("small", seed=2)
    s = oasis.run(inst, certificate=False)
    assert s.extras["D_cert"] is None
    assert s.jobs == oasis.run(inst).jobs


# --- command line ------------------------------------------------------------------------


def test_cli_run_json_and_validate(tmp_path: Path) -> None:
    inst_path, out = tmp_path / "i.json", tmp_path / "s.json"
    save_instance(generate("testbed", seed=1), inst_path)
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "run", str(inst_path), "--algorithm",
                        "oasis", "--u-scale", "0.8", "-o", str(out), "--json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # exactly one JSON object
    for key in ("total_utility", "completed", "seconds", "payoff", "D0", "D_final", "D_cert",
                "alpha", "P"):
        assert key in data
    assert data["u_scale"] == 0.8
    v = subprocess.run([sys.executable, "-m", "oasis_opt", "validate", str(inst_path), str(out),
                        "--json"], capture_output=True, text=True, check=False)
    assert v.returncode == 0, v.stdout
    assert json.loads(v.stdout)["total_utility"] == pytest.approx(data["total_utility"])


@pytest.mark.parametrize("seed", range(2))
def test_dcert_equals_unpruned_recomputation(seed: int) -> None:
    """D_cert skips jobs by a payoff bound; recompute it from the schedule without skipping."""
    from oasis_opt.online.subroutine import JobSpec, best_schedule
    inst = generate("testbed", seed=seed, jobs=30)
    s = oasis.run(inst)
    b = prices.default_bounds(inst)
    w = prices.PriceState(inst.worker_capacity, b.U_w, b.L_w, inst.horizon)
    p = prices.PriceState(inst.ps_capacity, b.U_ps, b.L_ps, inst.horizon)
    y, z = s.to_arrays(inst)
    for i in range(inst.num_jobs):
        w.add(y[i], inst.worker_demand[i])
        p.add(z[i], inst.ps_demand[i])
    u = [max(0.0, best_schedule(JobSpec.from_instance(inst, i), w.price, p.price,
                                inst.worker_capacity, inst.ps_capacity).payoff)
         for i in range(inst.num_jobs)]
    expected = sum(u) + w.dual_cost() + p.dual_cost()
    assert s.extras["D_cert"] == pytest.approx(expected, rel=1e-9)
    assert s.extras["D_final"] == pytest.approx(sum(
        v for v in s.extras["payoff"].values() if v is not None and v > oasis.ADMIT_TOL)
        + w.dual_cost() + p.dual_cost(), rel=1e-9)
