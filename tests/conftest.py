from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = ROOT / "instances"
#: Every committed instance file (the manifest sits beside them and is not one).
INSTANCE_FILES = sorted(p for p in INSTANCES.glob("*.json") if p.name != "manifest.json")


def tiny_instance_dict() -> dict[str, Any]:
    """The SPEC §5 example, small enough to reason about by hand."""
    return {
        "format": "oasis-instance/1",
        "name": "tiny",
        "horizon": 4,
        "resources": ["gpu", "cpu"],
        "worker_servers": [{"name": "big", "capacity": [4, 16]},
                           {"name": "w", "count": 2, "capacity": [2, 8]}],
        "ps_servers": [{"name": "p0", "capacity": [0, 8]}],
        "jobs": [
            {"id": "j0", "arrival": 0, "workload": 6, "max_workers": 4, "ps_ratio": 2,
             "worker_demand": [1, 2], "ps_demand": [0, 2], "requested_workers": 2,
             "utility": {"kind": "sigmoid", "gamma1": 50, "gamma2": 0.8, "gamma3": 2}},
            {"id": "j1", "arrival": 1, "workload": 2, "max_workers": 2, "ps_ratio": 1,
             "worker_demand": [2, 4], "ps_demand": [0, 3],
             "utility": {"kind": "table", "values": [10, 6, 0]}},
        ],
    }


@pytest.fixture
def tiny_dict() -> dict[str, Any]:
    return copy.deepcopy(tiny_instance_dict())


@pytest.fixture
def tiny(tiny_dict):
    from oasis_opt.io import instance_from_dict
    return instance_from_dict(tiny_dict)


@pytest.fixture(scope="session")
def trace_path(tmp_path_factory) -> str:
    """Six Tiresias jobs over 12 slots (``oasis-opt import``): one GPU pool and free PSs, so
    the plain solve makes the workers continuous and rebuilds whole ones with its own small
    HiGHS MILP (``Prep.flow_workers``)."""
    import subprocess
    import sys
    path = tmp_path_factory.mktemp("trace") / "t.json"
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "import", "tiresias",
                        str(ROOT / "instances/traces/tiresias/60_job.csv"), "-o", str(path),
                        "--jobs", "6", "--horizon", "12", "--json"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return str(path)


def add_rows(model, rows) -> None:
    """Add ``rows`` (relational expressions) to a Pyomo model or a PuLP problem (a
    ``customize`` function's body)."""
    import pulp
    import pyomo.environ as pyo

    if isinstance(model, pulp.LpProblem):
        for row in rows:
            model += row
    else:
        model.mine = pyo.ConstraintList()
        for row in rows:
            model.mine.add(row)
