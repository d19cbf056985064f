"""``ratio.compare``: OPT/ALG, the 2α and weak-duality checks, time limits, missing algorithms."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from test_oasis import blocked_instance

from oasis_opt import algorithms, ratio
from oasis_opt.errors import InputError


def _fake_solve(status: str, objective: float, bound: float):
    def solve(instance, time_limit, modeler, solver="highs", opt_cache=None, method="auto",
              executor=None, **_):
        return SimpleNamespace(status=status, objective=objective, bound=bound, seconds=0.1)
    return solve


def _row(rep, name):
    return next(r for r in rep.rows if r["algorithm"] == name)


def test_optimal_blocked_case(monkeypatch) -> None:
    # OASiS earns 20, OPT = 100, α = ln 4, D_cert = 125 (see test_oasis.blocked_instance).
    monkeypatch.setattr(ratio, "_solve", _fake_solve("optimal", 100.0, 100.0))
    rep = ratio.compare(blocked_instance(), ["oasis"])
    row = _row(rep, "oasis")
    assert row["utility"] == 20.0 and row["completed"] == 1
    assert row["opt_over_alg"] == row["opt_over_alg_low"] == pytest.approx(5.0)
    assert row["two_alpha"] == pytest.approx(2 * math.log(4))
    assert row["within_2alpha"] is False  # large demands: the guarantee's assumption fails
    assert row["dcert_ge_opt"] is True
    assert rep.opt_label == "OPT" and "OPT = 100" in rep.headline()
    assert set(rep.columns) == set(row)
    assert rep.to_dict()["rows"] == rep.rows


def test_time_limit_uses_the_bound_and_undecided_checks(monkeypatch) -> None:
    monkeypatch.setattr(ratio, "_solve", _fake_solve("time_limit", 90.0, 130.0))
    rep = ratio.compare(blocked_instance(), ["oasis"])
    row = _row(rep, "oasis")
    assert rep.opt_label == "OPT ≤ bound" and rep.reference == 130.0
    assert "OPT ≤ 130" in rep.headline()
    assert row["opt_over_alg"] == pytest.approx(6.5)
    assert row["opt_over_alg_low"] == pytest.approx(4.5)  # OPT/ALG ∈ [90/20, 130/20]
    assert row["dcert_ge_opt"] is None  # 90 ≤ OPT ≤ 130 and D_cert = 125: undecided
    assert row["within_2alpha"] is False  # even OPT = 90 > 2α·20
    assert any("time limit" in n for n in rep.notes)


def test_zero_utility_ratio() -> None:
    assert ratio.ratio(5.0, 0.0) == math.inf
    assert ratio.ratio(0.0, 0.0) is None
    assert ratio.ratio(10.0, 4.0) == 2.5


def test_ratios_and_checks_keep_when_every_utility_is_scaled() -> None:
    """Multiplying every utility by a constant keeps OPT/ALG and every check: with an
    absolute floor of 1e-6, utilities near 1e-9 made every OPT/ALG None (ALG taken for 0) and
    every ``≤`` check true (``D_cert ≥ OPT`` held at a third of OPT)."""
    import copy

    from test_scale import TINY, times

    from oasis_opt.io import instance_from_dict
    assert ratio.ratio(2.5e-9, 1e-9) == pytest.approx(2.5)
    assert ratio.ratio(2.5e-9, 0.0) == math.inf
    assert ratio._at_most(3e-9, 3e-9, 1e-9) is False
    assert ratio._at_most(1e-9, 3e-9, 2e-9) is None
    got = {}
    for k in (1.0, 1e-9):
        data = copy.deepcopy(TINY)
        for j in data["jobs"]:
            j["utility"] = times(j["utility"], k)
        rep = ratio.compare(instance_from_dict(data), ["fifo", "drf", "rrh"])
        assert rep.status == "optimal"
        got[k] = {r["algorithm"]: r["opt_over_alg"] for r in rep.rows}
    assert all(v is not None and v > 1.0 for v in got[1e-9].values())
    assert got[1e-9] == pytest.approx(got[1.0], rel=1e-9)


def test_an_algorithm_that_does_not_import_is_refused_before_the_solve(monkeypatch) -> None:
    solves = []
    monkeypatch.setattr(ratio, "_solve", lambda *a, **k: solves.append(1))
    monkeypatch.setitem(algorithms.REGISTRY, "nope", "oasis_opt.baselines.not_written_yet:run")
    with pytest.raises(InputError, match="'nope': cannot import module "
                                         "'oasis_opt.baselines.not_written_yet'"):
        ratio.compare(blocked_instance(), ["oasis", "nope"])
    assert not solves


def test_real_solver_on_blocked_case() -> None:
    pytest.importorskip("oasis_opt.offline")
    rep = ratio.compare(blocked_instance(), ["oasis"])
    assert rep.status == "optimal" and rep.reference == pytest.approx(100.0)
    assert _row(rep, "oasis")["dcert_ge_opt"] is True


def test_time_limit_lower_end_raised_by_algorithms(monkeypatch) -> None:
    # A weak incumbent (5) below OASiS's 20: OPT ≥ 20, so 2α·20 ≈ 55 < OPT is decided false
    # only if OPT's lower end exceeds it; with bound 50 the 2α check holds for all OPT ≤ 50.
    monkeypatch.setattr(ratio, "_solve", _fake_solve("time_limit", 5.0, 50.0))
    rep = ratio.compare(blocked_instance(), ["oasis"])
    assert any("OPT ≥ 20" in n for n in rep.notes)
    assert _row(rep, "oasis")["within_2alpha"] is True
    assert _row(rep, "oasis")["dcert_ge_opt"] is True


def test_a_value_an_algorithm_refuses_names_the_algorithm() -> None:
    """Two algorithms may take ``u_scale``: the error said ``u_scale: …``, not whose."""
    with pytest.raises(InputError, match=r"^algorithms\.oasis-adaptive\.u_scale: must be a "
                                         "positive number, got -2"):
        ratio.compare(blocked_instance(), {"oasis": {"u_scale": 1}, "oasis-adaptive":
                                           {"u_scale": -2}}, time_limit=5)
