"""Sparse allocations (issue 21): ``SlotCounts`` and ``Schedule.from_counts`` give the schedule
``from_arrays`` gives; the size checks count per-job and per-(slot, server, resource) state,
not jobs × slots × servers; ``import --jobs all``."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import INSTANCES, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from oasis_opt.errors import InputError
from oasis_opt.io import check_instance_size, load_instance, schedule_to_dict
from oasis_opt.model import Schedule, ServerGroup, SlotCounts
from oasis_opt.validate import validate

PHILLY = ROOT / "instances" / "traces" / "adaptdl" / "philly.csv"


def _random_counts(inst, rng):
    T, H, K = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    workers, ps = {}, {}
    for i in range(inst.num_jobs):
        if rng.random() < 0.3:
            continue  # did not run
        y = rng.integers(0, 3, size=(T, H)) * (rng.random((T, H)) < 0.3)
        z = rng.integers(0, 2, size=(T, K)) * (rng.random((T, K)) < 0.3)
        workers[i], ps[i] = y.astype(np.int64), z.astype(np.int64)
    return workers, ps


@pytest.mark.parametrize("name", ["small-s0.json", "testbed-s1.json", "paper-s1.json"])
@pytest.mark.parametrize("trim", [False, True])
def test_from_counts_equals_from_arrays(name: str, trim: bool) -> None:
    inst = load_instance(INSTANCES / name)
    rng = np.random.default_rng(len(name) + trim)
    workers, ps = _random_counts(inst, rng)
    dense = Schedule.from_arrays(inst, "x", workers, ps, {"k": 1}, trim=trim)
    sparse = Schedule.from_counts(inst, "x", {i: SlotCounts.from_dense(y)
                                              for i, y in workers.items()},
                                  {i: SlotCounts.from_dense(z) for i, z in ps.items()},
                                  {"k": 1}, trim=trim)
    assert json.dumps(schedule_to_dict(sparse)) == json.dumps(schedule_to_dict(dense))
    assert validate(inst, sparse).to_dict() == validate(inst, dense).to_dict()
    # and both are what the arrays say, slot by slot (the dense reading, written out here)
    for i, jr in enumerate(sparse.jobs):
        if i not in workers:
            assert not jr.completed and jr.allocations == ()
            continue
        y, z = workers[i], ps[i]
        hit = np.flatnonzero(np.cumsum(y.sum(axis=1)) >= inst.jobs[i].workload)
        slot = int(hit[0]) if hit.size else None
        assert jr.completion_slot == slot
        if trim and slot is not None:
            y, z = y[:slot + 1], z[:slot + 1]
        want = [(t, {inst.worker_names[h]: int(y[t, h]) for h in np.flatnonzero(y[t])},
                 {inst.ps_names[k]: int(z[t, k]) for k in np.flatnonzero(z[t])})
                for t in np.flatnonzero(y.any(axis=1) | z.any(axis=1))]
        assert [(a.slot, dict(a.workers), dict(a.ps)) for a in jr.allocations] == want


def test_slot_counts_round_trip() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, size=(7, 5)) * (rng.random((7, 5)) < 0.4)
    c = SlotCounts.from_dense(a, first_slot=0)
    assert np.array_equal(c.to_dense(7, 5), a)
    slots, per = c.per_slot()
    assert slots.tolist() == np.flatnonzero(a.sum(axis=1)).tolist()
    assert per.tolist() == a.sum(axis=1)[slots].tolist()
    cut = c.through(3)
    assert np.array_equal(cut.to_dense(7, 5)[:4], a[:4]) and not cut.to_dense(7, 5)[4:].any()
    rows = SlotCounts.from_rows(np.array([2, 5]), a[[2, 5]])
    assert rows.to_dense(7, 5)[[2, 5]].tolist() == a[[2, 5]].tolist()
    assert SlotCounts.concat([]).total == 0


def test_trace_sized_instance_passes_the_size_check() -> None:
    """20 000 jobs × 1 000 slots × 62 servers was refused as 9.24 GiB; what is built is the
    per-(slot, server, resource) state and a few KB per job."""
    servers = [ServerGroup("n", (4.0,), 62)]
    check_instance_size(1000, 20_000, 1, servers, [ServerGroup("ps", (0.0,))])
    check_instance_size(2700, 82_247, 1, servers, [ServerGroup("ps", (0.0,))])


def test_oversize_is_still_refused(monkeypatch) -> None:
    monkeypatch.setenv("OASIS_MAX_MEMORY", "64M")
    with pytest.raises(InputError, match=r"^jobs: 100000 jobs is too large"):
        check_instance_size(10, 100_000, 1, [ServerGroup("n", (4.0,), 2)], [])
    with pytest.raises(InputError, match=r"horizon: 2 servers × 1000000 slots"):
        check_instance_size(1_000_000, 10, 1, [ServerGroup("n", (4.0,), 2)], [])
    inst = load_instance(INSTANCES / "paper-s1.json")
    big = dataclasses.replace(inst, horizon=100_000)
    with pytest.raises(InputError, match=r"the utility table of 200 jobs × 100000 slots"):
        _ = big.utility_table
    assert big.utility_row(0).shape == (100_000,)  # one job's row is fine


def test_utility_row_is_the_table_row() -> None:
    inst = load_instance(INSTANCES / "paper-s1.json")
    fresh = dataclasses.replace(inst)
    rows = np.vstack([fresh.utility_row(i) for i in range(fresh.num_jobs)])
    assert np.array_equal(rows, inst.utility_table)  # bit for bit
    assert fresh.utility_at(3, inst.jobs[3].arrival + 2) == inst.utility_table[3, 2]


@pytest.mark.parametrize("name", ["paper-s1.json", "edge-last-slot.json", "edge-zero-tail.json"])
def test_utility_at_reads_the_table_numbers_without_it(name) -> None:
    """``utility_at`` computes one value when the table is not built: bit for bit the
    table's number at every job and every slot it may end in."""
    inst = load_instance(INSTANCES / name)
    fresh = dataclasses.replace(inst)
    for i, job in enumerate(inst.jobs):
        for t in range(job.arrival, inst.horizon):
            assert fresh.utility_at(i, t) == inst.utility_table[i, t - job.arrival]
    assert "utility_table" not in fresh.__dict__  # never built on the way
    late = max(range(inst.num_jobs), key=lambda i: inst.jobs[i].arrival)
    assert fresh.utility_at(late, inst.jobs[late].arrival - 1) == 0.0
    assert inst.utility_at(late, inst.jobs[late].arrival - 1) == 0.0


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["sigmoid", "table", "deadline", "linear"]),
       a=st.floats(0, 1e4), b=st.floats(0, 50), c=st.floats(-100, 5000),
       n=st.integers(1, 3000), d=st.integers(1, 3000))
def test_one_value_is_the_row_value_bit_for_bit(kind, a, b, c, n, d) -> None:
    from oasis_opt.utility import Deadline, Linear, Sigmoid, Table
    u = {"sigmoid": lambda: Sigmoid(a, b, c), "table": lambda: Table((a, b, c)),
         "deadline": lambda: Deadline(a, int(abs(c))), "linear": lambda: Linear(a, b)}[kind]()
    d = min(d, n)
    assert u.values(n)[d - 1] == u.at(d) or (np.isnan(u.at(d)) and np.isnan(u.values(n)[d - 1]))


def test_import_all_jobs(tmp_path) -> None:
    from oasis_opt import import_trace
    every = import_trace("philly", PHILLY, jobs="all", start=1500, slot_seconds=3600,
                         horizon=2000)
    assert every.num_jobs == 2000 - 1500
    with pytest.raises(InputError, match="jobs: expected a number of jobs or 'all'"):
        import_trace("philly", PHILLY, jobs="most")


def test_import_all_jobs_cli(tmp_path, capfd) -> None:
    from oasis_opt.cli import main
    out = tmp_path / "all.json"
    rc = main(["import", "philly", str(PHILLY), "--jobs", "all", "--slot-seconds", "3600",
               "--horizon", "2000", "-o", str(out), "--json"])
    data = json.loads(capfd.readouterr().out)
    assert rc == 0 and data["jobs"] == 2000 and load_instance(out).num_jobs == 2000
    with pytest.raises(SystemExit) as exit_:
        main(["import", "philly", str(PHILLY), "--jobs", "some", "-o", str(out)])
    assert exit_.value.code == 2 and "--jobs must be an integer" in capfd.readouterr().err


def test_from_arrays_takes_a_list_or_a_stacked_array_by_position() -> None:
    """Counts by job position as a list, or as one (J, T, H) array, are the same schedule as
    the dict; they raised AttributeError ('list' object has no attribute 'items')."""
    inst = load_instance(INSTANCES / "small-s0.json")
    workers, ps = _random_counts(inst, np.random.default_rng(7))
    J = inst.num_jobs
    full_w = [workers.get(i, np.zeros((inst.horizon, len(inst.worker_names)), np.int64))
              for i in range(J)]
    full_p = [ps.get(i, np.zeros((inst.horizon, len(inst.ps_names)), np.int64))
              for i in range(J)]
    want = json.dumps(schedule_to_dict(Schedule.from_arrays(
        inst, "x", dict(enumerate(full_w)), dict(enumerate(full_p)))))
    for w, p in ((full_w, full_p), (np.stack(full_w), np.stack(full_p)),
                 (tuple(full_w), tuple(full_p))):
        got = Schedule.from_arrays(inst, "x", w, p)
        assert json.dumps(schedule_to_dict(got)) == want
    # a shorter list: the jobs past its end did not run, as jobs absent from a dict
    short = Schedule.from_arrays(inst, "x", full_w[:2], full_p[:2])
    assert [jr.allocations == () for jr in short.jobs][2:] == [True] * (J - 2)
    with pytest.raises(ValueError, match=r"workers: expected a dict \{job position: array\}, "
                                         r"a list of arrays or one \(jobs, slots, servers\) "
                                         r"array, got NoneType"):
        Schedule.from_arrays(inst, "x", None, {})
    with pytest.raises(ValueError, match=r"workers: key 7 is not a job's position"):
        Schedule.from_arrays(inst, "x", full_w + [full_w[0]], full_p)
    with pytest.raises(ValueError, match=r"instance: expected an Instance"):
        Schedule.from_arrays(None, "x", full_w, full_p)


@pytest.mark.parametrize("counts,message", [
    # cast to int64 these wrapped round: 1e30 became -2^63, 2^64 - 1 became -1, and the
    # schedule was then refused for a negative count the caller never gave
    (lambda t, h: np.full((t, h), 1e30), r"workers\[0\]: slot 0, server 0 holds 1e\+30; "
                                         r"counts are non-negative integers of at most 1e\+12"),
    (lambda t, h: np.full((t, h), 2**64 - 1, dtype=np.uint64),
     r"workers\[0\]: slot 0, server 0 holds 18446744073709551615;"),
    (lambda t, h: np.full((t, h), 2**62), r"workers\[0\]: slot 0, server 0 holds 4611686018"),
    # numpy's own words, naming no entry
    (lambda t, h: [[1] * h, [1]], r"workers\[0\]: expected an array of shape \(\d+, \d+\) "
                                  r"\(slots, servers\), got a ragged list"),
    # a mask is no count: True was taken as one worker (an outside audit)
    (lambda t, h: np.ones((t, h), dtype=bool), r"^workers\[0\]: expected integer counts, got "
                                               r"an array of bool$"),
    (lambda t, h: [[True] * h] * t, r"^workers\[0\]: expected integer counts, got an array "
                                    r"of bool$"),
])
def test_from_arrays_refuses_counts_no_schedule_holds(counts, message) -> None:
    inst = load_instance(INSTANCES / "small-s0.json")
    t, h = inst.horizon, len(inst.worker_names)
    with pytest.raises(ValueError, match=message):
        Schedule.from_arrays(inst, "x", {0: counts(t, h)}, {})


def test_from_arrays_refuses_boolean_ps_and_stacked_boolean_arrays() -> None:
    inst = load_instance(INSTANCES / "small-s0.json")
    t, h, k = inst.horizon, len(inst.worker_names), len(inst.ps_names)
    y = np.zeros((t, h), dtype=np.int64)
    y[0, 0] = inst.workload[0]
    with pytest.raises(ValueError, match=r"^ps\[0\]: expected integer counts, got an array "
                                         r"of bool$"):
        Schedule.from_arrays(inst, "x", {0: y}, {0: np.ones((t, k), dtype=bool)})
    with pytest.raises(ValueError, match=r"^workers\[0\]: expected integer counts, got an "
                                         r"array of bool$"):
        Schedule.from_arrays(inst, "x", np.ones((1, t, h), dtype=bool), [])
    assert Schedule.from_arrays(inst, "x", {0: y}, {0: np.ones((t, k), dtype=np.int8)}) \
        .jobs[0].completed  # an integer dtype of any width is still a count


@pytest.mark.parametrize("make,where", [
    (lambda a: SlotCounts.from_dense(a), "counts"),
    (lambda a: SlotCounts.from_rows(np.arange(len(a)), a), "rows"),
])
@pytest.mark.parametrize("counts,message", [
    # True became a count of 1, 0.5 an entry of 0 workers, 1e30 -2^63: from_counts then took
    # the SlotCounts as given
    (np.array([[False, True]]), r"^counts: expected integer counts, got an array of bool$"),
    (np.array([[0.0, 0.5]]), r"^counts: row 0, column 1 holds 0\.5; counts are non-negative "
                             r"integers of at most 1e\+12$"),
    (np.array([[1e30, 0.0]]), r"^counts: row 0, column 0 holds 1e\+30"),
    (np.array([["1", "2"]]), r"^counts: expected integer counts, got an array of <U1$"),
    (np.array([1, 2]), r"^counts: expected a 2-d array \(slots, servers\), got shape \(2,\)$"),
])
def test_slot_counts_from_arrays_refuses_what_is_no_count(make, where, counts, message) -> None:
    with pytest.raises(ValueError, match=message.replace("counts:", f"{where}:", 1)):
        make(counts)


def test_slot_counts_from_arrays_keep_integral_floats() -> None:
    got = SlotCounts.from_dense(np.array([[0.0, 2.0], [3.0, 0.0]]), first_slot=5)
    assert got.slot.tolist() == [5, 6] and got.count.tolist() == [2, 3]
    assert got.count.dtype == np.int64


def test_from_arrays_refuses_extras_that_are_no_mapping() -> None:
    """``extras=[1]`` failed in dict(): "cannot convert dictionary update sequence"."""
    inst = load_instance(INSTANCES / "small-s0.json")
    with pytest.raises(ValueError, match=r"extras: expected a dict \{name: value\}, got list"):
        Schedule.from_arrays(inst, "x", {}, {}, [1])


def _sc(slot, server, count) -> SlotCounts:
    return SlotCounts(*(np.array(x, dtype=np.int64) for x in (slot, server, count)))


@pytest.mark.parametrize("workers,message", [
    # a server past the pool: IndexError; -1: the last server, without a word
    ({0: _sc([0], [99], [4])}, r"workers\[0\]: entry 0 is on server 99; the pool has 4"),
    ({0: _sc([0], [-1], [4])}, r"workers\[0\]: entry 0 is on server -1; the pool has 4"),
    ({0: _sc([0], [0], [2**62])}, r"workers\[0\]: entry 0 counts 4611686018427387904; counts "
                                  r"are non-negative integers of at most 1e\+12"),
    ({0: _sc([0], [0], [-1])}, r"workers\[0\]: entry 0 counts -1"),
    ({0: _sc([-1], [0], [4])}, r"workers\[0\]: entry 0 is in slot -1"),
    ({0: _sc([3, 0], [0, 0], [1, 1])}, r"workers\[0\]: entry 1 \(slot 0, server 0\) is not "
                                       r"after the one before it"),
    ({0: _sc([0, 1], [0], [4])}, r"workers\[0\]: expected a SlotCounts of three integer "
                                 r"arrays of one length"),
    ({0: SlotCounts([0], [0], [4])}, r"workers\[0\]: expected a SlotCounts of three integer"),
    ({0: "x"}, r"workers\[0\]: expected a SlotCounts \(SlotCounts.from_dense\), got str"),
    # a key that is no position was dropped: the job did not run, and nothing said so
    ({"j0": SlotCounts.empty()}, r"workers: key 'j0' is not a job's position"),
    ({99: SlotCounts.empty()}, r"workers: key 99 is not a job's position"),
    ([SlotCounts.empty()], r"workers: expected a dict \{job position: SlotCounts\}, got list"),
])
def test_from_counts_refuses_what_from_arrays_refuses(workers, message) -> None:
    inst = load_instance(INSTANCES / "small-s0.json")
    with pytest.raises(ValueError, match=message):
        Schedule.from_counts(inst, "x", workers, {})
    with pytest.raises(ValueError, match=r"instance: expected an Instance"):
        Schedule.from_counts(None, "x", {}, {})
