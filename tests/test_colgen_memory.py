"""Column generation within ``--max-memory`` (issue 21, round 42): the least master with its
pricing tables refused up front, naming the size; the phases after the bound (the pattern
master, its MILP, the LNS windows; at trace scale the roundings, ejections and moves) left
out where their estimate beside what the process holds would pass the limit, the incumbent
and the bound kept, and said so."""

from __future__ import annotations

import numpy as np
import pytest
from oasis_opt.formulations import colgen

from oasis_opt import limits
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import instance_from_dict, save_instance
from oasis_opt.online.subroutine import JobSpec, best_schedule


def _long_job(horizon: int = 3000, workload: int = 2000) -> dict:
    """One job whose pricing tables (its dynamic programme over the horizon) dwarf the
    master: a few columns of one job, but (S+1)·(W+V+1) cells."""
    return {"format": "oasis-instance/1", "name": "long-job", "horizon": horizon,
            "resources": ["gpu"], "worker_servers": [{"name": "w", "count": 2, "capacity": [4]}],
            "ps_servers": [{"name": "p", "capacity": [4]}],
            "jobs": [{"id": "j0", "arrival": 0, "workload": workload, "max_workers": 8,
                      "ps_ratio": 4, "worker_demand": [1], "ps_demand": [1],
                      "requested_workers": 8,
                      "utility": {"kind": "sigmoid", "gamma1": 50, "gamma2": 0.8,
                                  "gamma3": 5}}]}


def test_pricing_bytes_are_what_the_subroutine_checks(monkeypatch):
    inst = instance_from_dict(_long_job())
    nbytes, job = colgen.pricing_bytes(inst)
    assert job == 0
    T, H, K, R = inst.horizon, 2, 1, 1
    zero_w, zero_p = (np.zeros((T, n, R)) for n in (H, K))
    spec = JobSpec.from_instance(inst, 0)
    monkeypatch.setenv(limits.ENV, str(int(nbytes)))  # exactly the tables: priced
    best_schedule(spec, zero_w, zero_p, inst.worker_capacity, inst.ps_capacity)
    monkeypatch.setenv(limits.ENV, str(int(nbytes) - 1))  # a byte less: refused, same size
    with pytest.raises(InputError, match=f"about {limits.human(nbytes)}".replace(".", r"\.")):
        best_schedule(spec, zero_w, zero_p, inst.worker_capacity, inst.ps_capacity)


def test_master_with_its_pricing_tables_refused_up_front(monkeypatch, tmp_path, capsys):
    inst = instance_from_dict(_long_job())
    rows_inst = colgen.with_count_rows(inst)
    master, _ = colgen.master_bytes(rows_inst, True, pool_all=True)
    tables, _ = colgen.pricing_bytes(rows_inst)
    assert tables > 5 * master
    limit = int(master + tables / 2)  # the master fits alone, not with its tables
    monkeypatch.setenv(limits.ENV, str(limit))
    with pytest.raises(InputError) as err:
        colgen.check_least_master(inst)
    text = str(err.value)
    assert "pricing tables" in text and "jobs[0]" in text and "workload of 2000" in text
    assert f"about {limits.human(master + tables)}" in text
    assert f"limit {limits.human(limit)}" in text
    path, out = tmp_path / "long.json", tmp_path / "s.json"
    save_instance(inst, path)
    ran = []
    monkeypatch.setattr("oasis_opt.offline.colgen_route.colgen_inputs",
                        lambda *a, **k: ran.append(1))
    code = main(["solve", str(path), "--method", "colgen", "--time-limit", "30",
                 "--max-memory", str(limit), "-o", str(out)])
    assert code == 2
    assert "pricing tables" in capsys.readouterr().err
    assert not out.exists() and not ran
    monkeypatch.setenv(limits.ENV, str(int(master + tables)))  # both fit: not refused
    colgen.check_least_master(inst)
