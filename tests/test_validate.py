"""The validator: a valid hand-made schedule is accepted with the right utility; each rule of
SPEC §1/§5 is caught on a schedule that breaks only it; all violations are listed."""

from __future__ import annotations

import copy
import dataclasses
import math

import pytest

from oasis_opt.errors import InputError
from oasis_opt.io import schedule_from_dict
from oasis_opt.validate import validate

F0_D2 = 50 / (1 + math.exp(0.8 * (2 - 2)))  # j0 finishing in slot 1 (d = 2) = 25

VALID = {
    "format": "oasis-schedule/1", "instance": "tiny", "algorithm": "hand",
    "total_utility": F0_D2 + 10,
    "jobs": [
        {"id": "j0", "completed": True, "completion_slot": 1, "utility": F0_D2,
         "allocations": [{"slot": 0, "workers": {"big": 4}, "ps": {"p0": 2}},
                         {"slot": 1, "workers": {"w0": 2}, "ps": {"p0": 1}}]},
        {"id": "j1", "completed": True, "completion_slot": 1, "utility": 10,
         "allocations": [{"slot": 1, "workers": {"big": 2}, "ps": {"p0": 2}}]},
    ],
}


def _check(tiny, d):
    return validate(tiny, schedule_from_dict(d))


def test_valid_schedule_accepted_with_utility(tiny):
    rep = _check(tiny, VALID)
    assert rep.feasible, rep.violations
    assert rep.total_utility == pytest.approx(35.0)
    assert rep.completed == 2
    assert rep.job_utility == {"j0": pytest.approx(25.0), "j1": 10}


def test_missing_jobs_and_zero_counts_mean_nothing(tiny):
    d = copy.deepcopy(VALID)
    d["jobs"] = d["jobs"][1:]
    d["jobs"][0]["allocations"].append({"slot": 3, "workers": {"w1": 0}, "ps": {}})
    d["total_utility"] = 10
    rep = _check(tiny, d)
    assert rep.feasible, rep.violations
    assert rep.total_utility == 10


def _broken(mutate):
    d = copy.deepcopy(VALID)
    mutate(d)
    return d


def _j(d, k):
    return d["jobs"][k]


CASES = {
    "capacity": lambda d: _j(d, 1)["allocations"][0]["ps"].update(p0=3),  # p0 cpu 2 + 9 > 8
    "arrival": lambda d: _j(d, 1)["allocations"].insert(
        0, {"slot": 0, "workers": {"w1": 1}, "ps": {"p0": 1}}),
    "horizon": lambda d: (_j(d, 1).update(completed=False, completion_slot=None, utility=0),
                          _j(d, 1)["allocations"].__setitem__(
                              0, {"slot": 4, "workers": {"big": 2}, "ps": {"p0": 2}}),
                          d.update(total_utility=F0_D2)),
    "max_workers": lambda d: _j(d, 0)["allocations"][0]["workers"].update(w1=1),
    "ps_ratio": lambda d: _j(d, 0)["allocations"][0]["ps"].update(p0=1),
    "completion": lambda d: _j(d, 0).update(completion_slot=0),
    "after_completion": lambda d: _j(d, 0)["allocations"].append(
        {"slot": 2, "workers": {"w1": 1}, "ps": {"p0": 1}}),
    "utility": lambda d: _j(d, 1).update(utility=6),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_rule_is_caught(tiny, rule):
    rep = _check(tiny, _broken(CASES[rule]))
    assert not rep.feasible
    assert rule in {v.rule for v in rep.violations}, rep.violations


def test_capacity_message_names_server_resource_slot(tiny):
    rep = _check(tiny, _broken(CASES["capacity"]))
    [v] = [v for v in rep.violations if v.rule == "capacity"]
    assert v.place == "slot 1"
    assert "PS server 'p0', resource cpu: used 11 > capacity 8 (jobs j0:1, j1:3)" in v.message


def test_completed_flag_and_total_are_checked(tiny):
    d = _broken(lambda d: (_j(d, 1).update(completed=False), d.update(total_utility=99)))
    rep = _check(tiny, d)
    places = {v.place for v in rep.violations}
    assert {"jobs[1].completed", "total_utility"} <= places


def test_every_violation_is_listed(tiny):
    def many(d):
        for rule in ("capacity", "max_workers", "utility", "arrival"):
            CASES[rule](d)
    rep = _check(tiny, _broken(many))
    assert {"capacity", "max_workers", "utility", "arrival"} <= {v.rule for v in rep.violations}


def test_unfinished_job_must_report_zero(tiny):
    d = _broken(lambda d: _j(d, 0)["allocations"].pop())  # j0 now does 4 of 6
    rep = _check(tiny, d)
    rules = {v.rule for v in rep.violations}
    assert {"completion", "utility"} <= rules


@pytest.mark.parametrize("mutate,message", [
    (lambda d: _j(d, 0).update(id="nope"), r"^jobs\[0\]\.id: unknown job 'nope'"),
    (lambda d: _j(d, 1)["allocations"][0]["workers"].update(w9=1),
     r"^jobs\[1\]\.allocations\[0\]\.workers: unknown worker server 'w9'"),
    (lambda d: _j(d, 0)["allocations"][1]["ps"].update(big=1),
     r"^jobs\[0\]\.allocations\[1\]\.ps: unknown PS server 'big'"),
])
def test_unknown_names_are_malformed(tiny, mutate, message):
    with pytest.raises(InputError, match=message):
        _check(tiny, _broken(mutate))


def test_other_instance_name_is_a_warning(tiny):
    rep = _check(tiny, _broken(lambda d: d.update(instance="other")))
    assert rep.feasible
    assert rep.warnings and "other" in rep.warnings[0]


def test_misreported_tiny_utilities_are_caught(tiny):
    """Utilities of any size are checked relatively: at 2^-30 of the SPEC example, a schedule
    that reports twice its utility (or some for an unfinished job) breaks the utility rule,
    as it does at full size; the honest report is accepted."""
    k = 2.0**-30  # a power of two: every utility scales exactly
    small = dataclasses.replace(tiny, jobs=tuple(dataclasses.replace(j, utility=j.utility.scaled(k))
                                                 for j in tiny.jobs))
    honest = copy.deepcopy(VALID)
    honest["total_utility"] *= k
    for jr in honest["jobs"]:
        jr["utility"] *= k
    rep = _check(small, honest)
    assert rep.feasible, rep.violations
    assert rep.total_utility == pytest.approx(35.0 * k, rel=1e-12)

    doubled = copy.deepcopy(honest)
    doubled["total_utility"] *= 2
    _j(doubled, 0)["utility"] *= 2
    rep = _check(small, doubled)
    assert {v.place for v in rep.violations} == {"jobs[0].utility", "total_utility"}

    unfinished = _broken(lambda d: _j(d, 0)["allocations"].pop())  # j0 does 4 of 6
    _j(unfinished, 0).update(completed=False, completion_slot=None, utility=5e-7)
    unfinished["total_utility"] = 5e-7 + 10 * k
    _j(unfinished, 1)["utility"] = 10 * k
    rep = _check(small, unfinished)
    assert {v.place for v in rep.violations} == {"jobs[0].utility", "total_utility"}


def test_many_capacity_violations_are_listed_in_time():
    """A hostile schedule overfills every (slot, server) cell with many jobs: each violation
    names its holders, found by bisection over the sorted entries. A scan of every entry per
    cell took about 25 s here (O(cells × entries)); the listing now takes a fraction of it."""
    import time

    from oasis_opt.io import instance_from_dict
    from oasis_opt.model import Allocation, JobResult, Schedule

    horizon, servers, jobs = 600, 60, 12
    inst = instance_from_dict({
        "format": "oasis-instance/1", "name": "crowd", "horizon": horizon, "resources": ["gpu"],
        "worker_servers": [{"name": "w", "count": servers, "capacity": [1]}],
        "ps_servers": [{"name": "p", "capacity": [0]}],
        "jobs": [{"id": f"j{i}", "arrival": 0, "workload": 10**9, "max_workers": 10**6,
                  "ps_ratio": 10**6, "worker_demand": [1], "ps_demand": [0],
                  "utility": {"kind": "table", "values": [1]}} for i in range(jobs)]})
    every = {f"w{h}": 1 for h in range(servers)}
    sched = Schedule("crowd", "hand", 0.0, tuple(
        JobResult(f"j{i}", False, None, 0.0,
                  tuple(Allocation(t, every, {"p": 1}) for t in range(horizon)))
        for i in range(jobs)))
    start = time.perf_counter()
    rep = validate(inst, sched)
    seconds = time.perf_counter() - start
    over = [v for v in rep.violations if v.rule == "capacity"]
    assert len(over) == horizon * servers
    holders = ", ".join(f"j{i}:1" for i in range(jobs))
    assert over[-1].place == f"slot {horizon - 1}"
    assert over[-1].message == (f"worker server 'w{servers - 1}', resource gpu: "
                                f"used {jobs} > capacity 1 (jobs {holders})")
    assert seconds < 8, f"{seconds:.1f} s"
