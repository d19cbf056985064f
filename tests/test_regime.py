"""The theorem's regime (issue 13): ``generate(..., max_share=s)`` bounds the share of a server
one worker or PS takes, keeps the jobs, and the ``regime`` experiment's rows carry the
certificate figures it reports."""

from __future__ import annotations

import numpy as np
import pytest

from oasis_opt import algorithms
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.regime import execute, instance, parse_status, summary, tasks


@pytest.mark.parametrize("share", [1.0, 0.25, 0.05])
def test_max_share_bounds_every_unit_and_keeps_the_jobs(share):
    base = generate("testbed", seed=2)
    inst = generate("testbed", seed=2, max_share=share)
    assert [j.id for j in inst.jobs] == [j.id for j in base.jobs]
    assert np.array_equal(inst.worker_demand, base.worker_demand)
    unit = algorithms.run("oasis", inst).extras["max_unit_share"]
    assert unit <= share + 1e-12
    if share < 1:  # the testbed preset's PS takes a whole server's bandwidth: it had to grow
        assert inst.extra["generator"]["capacity_scale"]["ps"] > 1
        assert unit > share * 0.9  # scaled just enough (factor rounded up to 3 decimals)


def test_bad_max_share_is_refused():
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(InputError, match="max_share"):
            generate("small", max_share=bad)


def test_regime_rows_scale_the_jobs_and_report_the_certificate():
    t = [x for x in tasks(1, quick=True) if x.params["max_share"] == 0.25][0]
    inst = instance(t.params, t.seed)
    m = inst.extra["generator"]["capacity_scale"]["worker"]
    assert inst.num_jobs == max(t.params["base_jobs"], round(t.params["base_jobs"] * m))
    rows = execute(t)
    oasis = next(r for r in rows if r["algorithm"] == "oasis")
    st = parse_status(oasis["status"])
    assert st["solve"] == "optimal" and st["arrivals"] == inst.num_jobs
    assert 0 <= st["failures"] <= st["arrivals"]
    assert st["unit_share"] <= 0.25 + 1e-12
    assert oasis["d_cert"] >= oasis["opt"] * (1 - 1e-6)
    for r in rows:
        assert r["ratio"] >= 1 - 1e-6
    s = summary([{k: ("" if v is None else str(v)) for k, v in r.items()} for r in rows])
    assert s["0.25"]["oasis"]["within_2alpha"] in (0, 1)
