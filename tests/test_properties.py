"""Property-based tests: random valid instances survive a round trip; random schedules are
either accepted or refused with reasons, and the reasons are the rules they break."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances

from oasis_opt.io import instance_from_dict, instance_to_dict, schedule_from_dict, schedule_to_dict
from oasis_opt.model import Schedule, ps_needed
from oasis_opt.validate import validate

small = st.integers(min_value=0, max_value=4)


@settings(max_examples=60, deadline=None)
@given(instances())
def test_random_instance_round_trip(d):
    inst = instance_from_dict(d)
    again = instance_from_dict(instance_to_dict(inst))
    assert instance_to_dict(again) == instance_to_dict(inst)
    np.testing.assert_array_equal(again.utility_table, inst.utility_table)
    assert (np.diff(inst.utility_table, axis=1) <= 1e-12).all()  # never increasing


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.data())
def test_random_schedule_accepted_or_refused_with_reasons(d, data):
    inst = instance_from_dict(d)
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    y, z = {}, {}
    for i in range(inst.num_jobs):
        if data.draw(st.booleans()):
            y[i] = np.array(data.draw(st.lists(st.lists(small, min_size=H, max_size=H),
                                               min_size=T, max_size=T))).reshape(T, H)
            z[i] = np.array(data.draw(st.lists(st.lists(small, min_size=K, max_size=K),
                                               min_size=T, max_size=T))).reshape(T, K)
    sched = Schedule.from_arrays(inst, "random", y, z)
    sched = schedule_from_dict(schedule_to_dict(sched))  # through the file format too
    rep = validate(inst, sched)
    assert rep.feasible == (not rep.violations)
    # Independent recomputation of the rules that from_arrays cannot satisfy by construction.
    expected = set()
    used_w = np.zeros((T, H, len(inst.resources)))
    used_p = np.zeros((T, K, len(inst.resources)))
    for i, yi in y.items():
        job = inst.jobs[i]
        w = yi.sum(axis=1)
        if (w > job.max_workers).any():
            expected.add("max_workers")
        if (z[i].sum(axis=1) < ps_needed(w, job.ps_ratio)).any():
            expected.add("ps_ratio")
        if (yi[:job.arrival].any() or z[i][:job.arrival].any()):
            expected.add("arrival")
        done = np.cumsum(w)
        if done[-1] >= job.workload:
            c = int(np.argmax(done >= job.workload))
            if yi[c + 1:].any() or z[i][c + 1:].any():
                expected.add("after_completion")
        used_w += yi[:, :, None] * job.worker_demand
        used_p += z[i][:, :, None] * job.ps_demand
    if (used_w > inst.worker_capacity + 1e-9).any() or (used_p > inst.ps_capacity + 1e-9).any():
        expected.add("capacity")
    assert {v.rule for v in rep.violations} == expected
    assert rep.total_utility == sched.total_utility or abs(rep.total_utility -
                                                           sched.total_utility) < 1e-6
