"""The threshold family (issue 20, item 2): its closed-form OPT is the exact optimum, its online
lower bound c* is attained by the tight fractional allocation and certified by the weighted sum
of the prefix constraints, and the ratios it reports are OPT/OASiS of the prefix instances."""

from __future__ import annotations

import json

import pytest

from oasis_opt import algorithms
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict
from oasis_opt.tightness import (
    block_values,
    online_lower_bound,
    threshold_instance,
    threshold_opt,
    tightness,
)
from oasis_opt.verifier import dp_optimum, milp_optimum


@pytest.mark.parametrize("share, steps, blocks", [(0.5, 3, 1), (0.5, 3, 3), (0.25, 4, 2),
                                                  (0.25, 4, 4), (1 / 3, 5, 5)])
def test_closed_form_opt_is_the_exact_optimum(share, steps, blocks):
    inst = instance_from_dict(threshold_instance(share, steps, blocks))
    C = round(1 / share)
    dp = dp_optimum(inst)  # None where its table is too large (16 jobs: 2^16 states)
    if dp is not None:
        assert threshold_opt(C, steps, blocks) == pytest.approx(dp, rel=1e-9)
    assert threshold_opt(C, steps, blocks) == pytest.approx(milp_optimum(inst), rel=1e-9)


@pytest.mark.parametrize("C, K", [(4, 2), (10, 6), (100, 12)])
def test_online_lower_bound_is_attained_and_certified(C, K):
    v = block_values(C, K)
    c = online_lower_bound(C, K)
    # the tight allocation: every prefix constraint Σ_{j≤k} x_j v_j ≥ v_k / c holds with =
    x = [1 / c] + [(1 - v[k - 1] / v[k]) / c for k in range(1, K)]
    assert sum(x) == pytest.approx(1.0)
    for k in range(K):
        assert sum(x[j] * v[j] for j in range(k + 1)) == pytest.approx(v[k] / c)
    # the certificate: weights w_k = 1/v_k − 1/v_{k+1}, w_K = 1/v_K sum to Σ x ≤ 1 on the left
    w = [1 / v[k] - 1 / v[k + 1] for k in range(K - 1)] + [1 / v[-1]]
    assert sum(w[k] * v[k] for k in range(K)) == pytest.approx(c)
    assert 1 < c < 1 + __import__("math").log(4 * C) + 1e-12


def test_reported_ratios_are_opt_over_oasis_of_each_prefix():
    row = tightness("threshold", 0.25, 4)
    for k in range(1, 5):
        inst = instance_from_dict(threshold_instance(0.25, 4, k))
        alg = algorithms.run("oasis", inst).total_utility
        assert row.ratios[k - 1] == pytest.approx(threshold_opt(4, 4, k) / alg, rel=1e-9)
    assert row.worst_ratio == max(row.ratios)
    assert row.worst_ratio <= row.two_alpha and row.worst_ratio_fixed <= row.two_alpha_fixed


def test_cli_family(tmp_path, capfd):
    assert main(["adversary", "--family", "threshold", "--share", "0.5", "--steps", "3",
                 "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capfd.readouterr().out)
    assert data["rows"][0]["capacity"] == 2 and (tmp_path / "tightness.png").exists()
    with pytest.raises(SystemExit) as stop:  # the flag's own range: a usage error
        main(["adversary", "--family", "threshold", "--steps", "1", "-o", str(tmp_path / "x")])
    assert stop.value.code == 2
    assert "--steps" in capfd.readouterr().err and not (tmp_path / "x").exists()
    with pytest.raises(InputError, match="^family: "):
        tightness("nope", 0.1, 3)
