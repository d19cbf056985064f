"""The plain comparator (benchmarks/direct_highspy.py) agrees with solve where γ ≥ 1e9·N:
ceil(N/γ − 1e-9) is 0 there, and a positive worker count still needs one PS (SPEC §5,
model.ps_needed); with 0 PSs allowed the comparator gave the job no variables and called 0
optimal where OPT is 53.9 (found by the mid-size audit, seed 89)."""

import sys
from pathlib import Path

import pytest

from oasis_opt.io import instance_from_dict
from oasis_opt.offline import solve

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import direct_highspy  # noqa: E402


@pytest.mark.parametrize("ratio, workers", [(1e9, 1), (1e12, 3), (2.0, 1)])
def test_comparator_gives_a_job_of_huge_ps_ratio_one_ps(ratio, workers):
    instance = instance_from_dict({
        "format": "oasis-instance/1", "name": "huge-ratio", "horizon": 1,
        "resources": ["bw"],
        "worker_servers": [{"name": "w", "capacity": [4.0]}],
        "ps_servers": [{"name": "p", "capacity": [2.0]}],
        "jobs": [{"id": "j0", "arrival": 0, "workload": 1, "max_workers": workers,
                  "ps_ratio": ratio, "worker_demand": [0.4], "ps_demand": [1.0],
                  "utility": {"kind": "linear", "value": 53.947282, "decay": 19.327}}]})
    _, rep = solve(instance)
    assert rep.objective == pytest.approx(53.947282, rel=1e-9)
    res = direct_highspy.solve(instance)
    assert res.status == "Optimal"
    assert res.objective == pytest.approx(rep.objective, rel=1e-6)
