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


@pytest.mark.parametrize("change, message", [
    (lambda a: a.workers.update(big=-2), r"^jobs\[0\]\.allocations\[0\]\.workers\.big: expected "
                                         "a non-negative integer count, got -2"),
    (lambda a: a.ps.update(p0=1.5), r"^jobs\[0\]\.allocations\[0\]\.ps\.p0: expected a "
                                    "non-negative integer count, got 1.5"),
    (lambda a: a.workers.update(big=True), r"^jobs\[0\]\.allocations\[0\]\.workers\.big: "
                                           "expected a non-negative integer count, got True"),
])
def test_schedules_built_in_memory_are_held_to_the_files_rules(tiny, change, message):
    """``load_schedule`` refuses these in a file; a ``Schedule`` built in Python (a
    researcher's scheduler) went through with a negative count freeing capacity for others."""
    s = schedule_from_dict(copy.deepcopy(VALID))
    change(s.jobs[0].allocations[0])
    with pytest.raises(InputError, match=message):
        validate(tiny, s)


def _first_job(**change):
    def edit(s):
        return dataclasses.replace(s, jobs=(dataclasses.replace(s.jobs[0], **change),)
                                   + s.jobs[1:])
    return edit


def _first_allocation(**change):
    def edit(s):
        a = dataclasses.replace(s.jobs[0].allocations[0], **change)
        return _first_job(allocations=(a,) + s.jobs[0].allocations[1:])(s)
    return edit


@pytest.mark.parametrize("edit, message", [
    (lambda s: dataclasses.replace(s, jobs=None),
     r"^jobs: expected a list of JobResult, got NoneType"),
    (lambda s: dataclasses.replace(s, jobs=(None,) + s.jobs),
     r"^jobs\[0\]: expected a JobResult, got NoneType"),
    (_first_job(allocations=None), r"^jobs\[0\]\.allocations: expected a list of Allocation, "
                                   r"got NoneType"),
    (_first_job(allocations=(5,)), r"^jobs\[0\]\.allocations\[0\]: expected an Allocation, "
                                   r"got int"),
    (_first_allocation(workers=[1]), r"^jobs\[0\]\.allocations\[0\]\.workers: expected a dict "
                                     r"\{server: count\}, got list"),
    (_first_allocation(ps=None), r"^jobs\[0\]\.allocations\[0\]\.ps: expected a dict "
                                 r"\{server: count\}, got NoneType"),
])
def test_a_schedule_of_the_wrong_shape_in_memory_is_malformed(tiny, edit, message):
    """A ``Schedule`` built in Python with ``jobs=None``, an allocation that is a number or
    counts that are a list failed inside the validator ('NoneType' object is not iterable,
    'list' object has no attribute 'items')."""
    s = edit(schedule_from_dict(copy.deepcopy(VALID)))
    with pytest.raises(InputError, match=message):
        validate(tiny, s)


def test_a_job_listed_twice_in_memory_is_malformed(tiny):
    """Listed twice, j1's utility was summed twice (the file loader refuses a duplicate id;
    where the cluster has room for both copies, the schedule passed)."""
    s = schedule_from_dict(copy.deepcopy(VALID))
    doubled = dataclasses.replace(s, jobs=s.jobs + (s.jobs[1],), total_utility=45.0)
    with pytest.raises(InputError, match=r"^jobs\[2\]\.id: duplicate job id 'j1' "
                                         r"\(also jobs\[1\]\)"):
        validate(tiny, doubled)


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


def test_every_capacity_violation_names_its_holders():
    """A hostile schedule overfills every (slot, server) cell with many jobs: each violation
    names exactly the jobs that hold that cell (found by bisection over the sorted entries;
    the time of a large such file is in benchmarks/bench_io.py)."""
    from oasis_opt.model import Allocation, JobResult

    horizon, servers, jobs = 30, 7, 5
    inst, sched = _crowded(horizon, servers, jobs)
    # job j holds every server but w{j} in slot j: that cell has one holder fewer
    sched = dataclasses.replace(sched, jobs=tuple(
        JobResult(jr.id, False, None, 0.0, tuple(
            Allocation(a.slot, {n: c for n, c in a.workers.items() if n != f"w{k}"
                                or a.slot != k}, a.ps) for a in jr.allocations))
        for k, jr in enumerate(sched.jobs)))
    rep = validate(inst, sched)
    over = [v for v in rep.violations if v.rule == "capacity"]
    assert len(over) == horizon * servers
    for v in over:
        t = int(v.place.split()[1])
        h = int(v.message.split("'")[1][1:])
        holders = [f"j{i}:1" for i in range(jobs) if not (i == t and i == h)]
        assert v.message == (f"worker server 'w{h}', resource gpu: used {len(holders)} > "
                             f"capacity 1 (jobs {', '.join(holders)})")


def _crowded(horizon: int, servers: int, jobs: int):
    """An instance of ``servers`` one-GPU servers and a schedule that puts each of ``jobs``
    jobs on every server in every slot."""
    from oasis_opt.io import instance_from_dict
    from oasis_opt.model import Allocation, JobResult, Schedule

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
    return inst, sched


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_an_infinite_reported_utility_breaks_the_utility_rule(tiny, value):
    """A schedule built in memory may report ±inf (a file cannot: the loader refuses it):
    ``inf − x ≤ 1e-6·inf`` held, so a scheduler that reported an infinite total passed the
    validator, and ``ratio`` gave it OPT/ALG 0 (an outside audit)."""
    s = schedule_from_dict(copy.deepcopy(VALID))
    rep = validate(tiny, dataclasses.replace(s, total_utility=value))
    assert [v.place for v in rep.violations] == ["total_utility"]
    assert rep.total_utility == pytest.approx(35.0)
    job = dataclasses.replace(s.jobs[1], utility=value)
    rep = validate(tiny, dataclasses.replace(s, jobs=(s.jobs[0], job)))
    assert [v.place for v in rep.violations] == ["jobs[1].utility"]


def test_a_missing_completion_slot_is_said_as_the_file_writes_it(tiny):
    """``"completed": true, "completion_slot": null``: the message said "completion slot
    None", Python's word, not the file's (an outside audit)."""
    rep = _check(tiny, _broken(lambda d: _j(d, 0).update(completion_slot=None)))
    (v,) = [v for v in rep.violations if v.place == "jobs[0].completion_slot"]
    assert "reports completion slot null, but its work" in v.message
