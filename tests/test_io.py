"""File I/O: round trips and every bad input of SPEC §5, refused by message."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import INSTANCE_FILES

from oasis_opt.errors import InputError
from oasis_opt.io import (
    instance_from_dict,
    instance_to_dict,
    load_instance,
    load_schedule,
    save_instance,
    save_schedule,
    schedule_from_dict,
    schedule_to_dict,
)
from oasis_opt.model import Schedule


def test_tiny_instance_arrays(tiny):
    assert tiny.worker_names == ("big", "w0", "w1")
    assert tiny.ps_names == ("p0",)
    assert tiny.worker_capacity.shape == (3, 2)
    np.testing.assert_array_equal(tiny.worker_capacity[1], [2, 8])
    assert tiny.worker_demand.shape == (2, 2)
    assert tiny.requested_workers.tolist() == [2, 2]  # j1 defaults to max_workers
    assert tiny.utility_table.shape == (2, 4)
    assert tiny.utility_table[1].tolist() == [10, 6, 0, 0]  # missing tail = 0
    assert tiny.utility_at(0, 1) == pytest.approx(50 / (1 + np.exp(0.8 * (2 - 2))))


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.stem)
def test_committed_instances_round_trip(path, tmp_path):
    inst = load_instance(path)
    out = tmp_path / "x.json"
    save_instance(inst, out)
    again = load_instance(out)
    assert instance_to_dict(again) == instance_to_dict(inst)
    assert json.loads(out.read_text()) == instance_to_dict(inst)


def test_training_derives_workload(tiny_dict):
    tiny_dict["jobs"][0].pop("workload")
    tiny_dict["jobs"][0]["training"] = {
        "epochs": 2, "chunks": 4, "minibatches_per_chunk": 100, "minibatch_seconds": 0.5,
        "gradient_gbit": 1.0, "bandwidth_gbps": 4.0, "slot_seconds": 100}
    inst = instance_from_dict(tiny_dict)
    # ceil(2·4·100·(0.5 + 2·1/4) / 100) = 8
    assert inst.jobs[0].workload == 8
    tiny_dict["jobs"][0]["workload"] = 9
    with pytest.raises(InputError, match=r"jobs\[0\]\.workload: 9 disagrees with training"):
        instance_from_dict(tiny_dict)


def _set(d, path, value):
    *head, last = path
    for p in head:
        d = d[p]
    if value is _DELETE:
        del d[last]
    else:
        d[last] = value


_DELETE = object()

BAD_INSTANCES = [
    (("format",), "oasis-instance/2", r"^format: expected 'oasis-instance/1', got 'oasis-instance/2'"),
    (("format",), _DELETE, r"^format: missing field \(expected 'oasis-instance/1'\)$"),
    (("horizon",), _DELETE, r"^horizon: missing field"),
    (("jobs", 1, "worker_demand"), [1], r"^jobs\[1\]\.worker_demand: expected 2 values, got 1"),
    (("jobs", 0, "ps_demand"), [0, 1, 2], r"^jobs\[0\]\.ps_demand: expected 2 values, got 3"),
    (("worker_servers", 1, "capacity"), [2], r"^worker_servers\[1\]\.capacity: expected 2 values"),
    (("jobs", 0, "worker_demand", 1), -2, r"^jobs\[0\]\.worker_demand\[1\]: must be at least 0, got -2"),
    (("ps_servers", 0, "capacity", 0), -1, r"^ps_servers\[0\]\.capacity\[0\]: must be at least 0"),
    (("jobs", 1, "arrival"), 4, r"^jobs\[1\]\.arrival: 4 is not before the horizon 4"),
    (("jobs", 1, "arrival"), -1, r"^jobs\[1\]\.arrival: must be at least 0, got -1"),
    (("jobs", 0, "workload"), 0, r"^jobs\[0\]\.workload: must be at least 1, got 0"),
    (("jobs", 0, "max_workers"), _DELETE, r"^jobs\[0\]\.max_workers: missing field"),
    (("jobs", 0, "ps_ratio"), 0, r"^jobs\[0\]\.ps_ratio: must be positive, got 0"),
    (("jobs", 0, "requested_workers"), 5, r"^jobs\[0\]\.requested_workers: 5 exceeds max_workers 4"),
    (("jobs", 1, "utility", "values"), [1, 3], r"^jobs\[1\]\.utility\.values\[1\]: 3 is greater than values\[0\] = 1: utility must not increase"),
    (("jobs", 0, "utility", "gamma2"), -0.5, r"^jobs\[0\]\.utility\.gamma2: must be at least 0, got -0.5"),
    (("jobs", 0, "utility", "kind"), "cubic", r"^jobs\[0\]\.utility: unknown utility kind"),
    (("jobs", 1, "id"), "j0", r"^jobs\[1\]\.id: duplicate job id 'j0' \(also jobs\[0\]\)"),
    (("worker_servers", 0, "name"), "w1", r"^worker_servers\[1\]\.name: duplicate server name 'w1'"),
    (("jobs", 0, "workers"), 3, r"^jobs\[0\]\.workers: unknown field"),
    (("resources",), ["gpu", "gpu"], r"^resources\[1\]: duplicate resource name 'gpu'"),
    (("jobs", 0, "workload"), 2.5, r"^jobs\[0\]\.workload: .*integer"),
    (("horizon",), "ten", r"^horizon: .*integer"),
    # SPEC §5 strict numbers: no coercion from strings or booleans, no null, no NaN/inf.
    (("jobs", 1, "arrival"), "3", r"^jobs\[1\]\.arrival: expected an integer, got a string \('3'\)"),
    (("jobs", 0, "workload"), True, r"^jobs\[0\]\.workload: expected an integer, got a boolean"),
    (("worker_servers", 0, "capacity", 0), "4", r"^worker_servers\[0\]\.capacity\[0\]: expected a number, got a string"),
    (("jobs", 0, "ps_ratio"), None, r"^jobs\[0\]\.ps_ratio: expected a number, got null"),
    (("jobs", 0, "ps_ratio"), False, r"^jobs\[0\]\.ps_ratio: expected a number, got a boolean"),
    (("jobs", 0, "worker_demand", 0), float("nan"), r"^jobs\[0\]\.worker_demand\[0\]: expected a finite number, got nan"),
    (("jobs", 0, "utility", "gamma1"), float("inf"), r"^jobs\[0\]\.utility\.gamma1: expected a finite number"),
    (("jobs", 0, "id"), 7, r"^jobs\[0\]\.id: expected a string, got 7$"),
    (("name",), None, r"^name: expected a string, got null$"),
    # Size and range.
    (("worker_servers", 0, "count"), 10**30, r"^worker_servers\[0\]\.count: 1e\+30 is too large \(limit 1e\+12\)"),
    (("jobs", 0, "workload"), 10**15, r"^jobs\[0\]\.workload: 1e\+15 is too large \(limit 1e\+12\)"),
    (("jobs", 0, "ps_ratio"), 1e-300, r"^jobs\[0\]\.ps_ratio: 1e-300 means 4e\+300 PSs in a slot for max_workers 4"),
    # max_workers / ps_ratio overflows: "internal error: cannot convert float infinity"
    (("jobs", 0, "ps_ratio"), 1e-308, r"^jobs\[0\]\.ps_ratio: 1e-308 means inf PSs in a slot"),
    (("jobs", 0, "ps_ratio"), 5e-324, r"^jobs\[0\]\.ps_ratio: 4.94066e-324 means inf PSs in a slot"),
    (("jobs", 0, "ps_ratio"), 1e300, r"^jobs\[0\]\.ps_ratio: 1e\+300 is too large \(limit 1e\+12\)"),
    (("jobs", 0, "utility", "gamma1"), 1e300, r"^jobs\[0\]\.utility\.gamma1: 1e\+300 is too large \(limit 1e\+15\)"),
    (("jobs", 0, "worker_demand", 0), 1e-300, r"^jobs\[0\]\.worker_demand\[0\]: 1e-300 is too small"),
    (("jobs", 0, "worker_demand", 0), 10**400, r"^jobs\[0\]\.worker_demand\[0\]: expected a finite number, got a huge integer"),
]


@pytest.mark.parametrize("path,value,message", BAD_INSTANCES,
                         ids=[m.split(":")[0].strip("^\\").replace("\\", "") for _, _, m in BAD_INSTANCES])
def test_bad_instance_is_refused_by_place(tiny_dict, path, value, message):
    _set(tiny_dict, path, value)
    with pytest.raises(InputError, match=message):
        instance_from_dict(tiny_dict)


def test_bad_json_names_the_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"format": "oasis-instance/1", ')
    with pytest.raises(InputError, match=r"bad\.json: not valid JSON"):
        load_instance(p)
    with pytest.raises(InputError, match="cannot read instance"):
        load_instance(tmp_path / "missing.json")


def _schedule_dict():
    return {
        "format": "oasis-schedule/1", "instance": "tiny", "algorithm": "hand",
        "total_utility": 0.0,
        "jobs": [{"id": "j0", "completed": False, "completion_slot": None, "utility": 0,
                  "allocations": [{"slot": 0, "workers": {"big": 1}, "ps": {"p0": 1}}]}],
    }


BAD_SCHEDULES = [
    (("format",), "oasis-instance/1", r"^format: expected 'oasis-schedule/1'"),
    (("format",), _DELETE, r"^format: missing field \(expected 'oasis-schedule/1'\)$"),
    (("total_utility",), _DELETE, r"^total_utility: missing field"),
    (("jobs", 0, "completed"), _DELETE, r"^jobs\[0\]\.completed: missing field"),
    (("jobs", 0, "allocations", 0, "slot"), -1, r"^jobs\[0\]\.allocations\[0\]\.slot: must be at least 0, got -1"),
    (("jobs", 0, "allocations", 0, "workers", "big"), -1, r"^jobs\[0\]\.allocations\[0\]\.workers\.big: must be at least 0"),
    (("jobs", 0, "allocations", 0, "workers", "big"), 1.5, r"^jobs\[0\]\.allocations\[0\]\.workers\.big: .*integer"),
    # SPEC §5: strings and non-booleans are malformed in schedules too (exit 2, not 1).
    (("jobs", 0, "allocations", 0, "slot"), "3", r"^jobs\[0\]\.allocations\[0\]\.slot: expected an integer, got a string"),
    (("jobs", 0, "completed"), 1, r"^jobs\[0\]\.completed: expected true or false, got 1$"),
    (("jobs", 0, "utility"), "48.2", r"^jobs\[0\]\.utility: expected a number, got a string"),
    (("total_utility",), True, r"^total_utility: expected a number, got a boolean"),
    (("jobs", 0, "allocations", 0, "workers", "big"), 10**30, r"^jobs\[0\]\.allocations\[0\]\.workers\.big: 1e\+30 is too large"),
    (("jobs", 0, "allocations", 0, "ps"), [], r"^jobs\[0\]\.allocations\[0\]\.ps: expected an object, got a list$"),
    (("jobs", 0, "allocations", 0, "gpus"), 1, r"^jobs\[0\]\.allocations\[0\]\.gpus: unknown field"),
]


@pytest.mark.parametrize("path,value,message", BAD_SCHEDULES)
def test_bad_schedule_is_refused_by_place(path, value, message):
    d = _schedule_dict()
    _set(d, path, value)
    with pytest.raises(InputError, match=message):
        schedule_from_dict(d)


def test_duplicate_job_in_schedule():
    d = _schedule_dict()
    d["jobs"].append(dict(d["jobs"][0]))
    with pytest.raises(InputError, match=r"^jobs\[1\]\.id: duplicate job id 'j0'"):
        schedule_from_dict(d)


def test_schedule_round_trip(tmp_path, tiny):
    y = {0: np.zeros((4, 3), dtype=int)}
    z = {0: np.zeros((4, 1), dtype=int)}
    y[0][0, 0] = 4
    y[0][1, 1] = 2
    z[0][0, 0] = 2
    z[0][1, 0] = 1
    s = Schedule.from_arrays(tiny, "hand", y, z, {"note": "x", "arr": np.arange(3),
                                                   "inf": float("inf")})
    assert s.jobs[0].completed and s.jobs[0].completion_slot == 1
    out = tmp_path / "s.json"
    save_schedule(s, out)
    again = load_schedule(out)
    assert schedule_to_dict(again) == schedule_to_dict(s)
    assert again.extras == {"note": "x", "arr": [0, 1, 2], "inf": None}  # JSON has no inf


def _saved(tiny):
    y = {0: np.zeros((4, 3), dtype=int)}
    z = {0: np.zeros((4, 1), dtype=int)}
    y[0][0, 0], z[0][0, 0] = 4, 2
    return Schedule.from_arrays(tiny, "hand", y, z)


def _job0(s, **change):
    import dataclasses
    return dataclasses.replace(s, jobs=(dataclasses.replace(s.jobs[0], **change),) + s.jobs[1:])


@pytest.mark.parametrize("edit,message", [
    # written, then refused by load_schedule: a file no command reads back
    (lambda s: _job0(s, id=5), r"^jobs\[0\]\.id: expected a string, got 5"),
    (lambda s: __import__("dataclasses").replace(s, total_utility=float("nan")),
     r"^total_utility: expected a finite number, got nan"),
    (lambda s: _job0(s, utility=float("inf")), r"^jobs\[0\]\.utility: expected a finite number"),
    # TypeErrors from inside: "'NoneType' object is not iterable", "cannot convert
    # dictionary update sequence", "Object of type object is not JSON serializable"
    (lambda s: __import__("dataclasses").replace(s, jobs=None),
     r"^jobs: expected a list of JobResult, got NoneType"),
    (lambda s: __import__("dataclasses").replace(s, extras={1, 2}),
     r"^extras: expected a dict, got set"),
    (lambda s: __import__("dataclasses").replace(s, extras={"a": object()}),
     r"^extras: not JSON values"),
])
def test_a_schedule_no_file_can_hold_is_not_saved(tmp_path, tiny, edit, message):
    out = tmp_path / "s.json"
    with pytest.raises(InputError, match=message):
        save_schedule(edit(_saved(tiny)), out)
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_leaves_nothing_on_failure(tmp_path, tiny):
    out = tmp_path / "x.json"
    out.write_text("old")

    class Boom:
        pass

    from oasis_opt.io import write_json_atomic
    with pytest.raises(TypeError):
        write_json_atomic(out, {"x": Boom()})
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_an_output_through_a_link_and_dotdot_is_where_the_system_puts_it(tmp_path,
                                                                          monkeypatch):
    """``link/../out/x.json`` with ``link`` → ``out``: the system goes up from where the link
    leads; tempfile's names go up from the link itself (lexically), to a folder that is not
    there: the output was refused, 'cannot write: No such file or directory'."""
    from oasis_opt.io import write_text_atomic
    (tmp_path / "out").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path / "out")
    monkeypatch.chdir(tmp_path / "a")
    write_text_atomic("link/../out/x.json", "hi")
    assert (tmp_path / "out" / "x.json").read_text() == "hi"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "link", "out", "x.json"]


def test_an_output_that_is_a_link_is_written_through_it(tmp_path):
    """A link named as the output leads the write to its target, as the shell's ``>`` does
    (the atomic rename replaced the link itself with the file); a dangling one makes its
    target; a loop of links is refused, nothing written."""
    from oasis_opt.io import write_text_atomic
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "real.json").write_text("old")
    (tmp_path / "good").symlink_to("sub/real.json")
    write_text_atomic(tmp_path / "good", "new")
    assert (tmp_path / "good").is_symlink() and (tmp_path / "sub" / "real.json").read_text() \
        == "new"
    (tmp_path / "dangling").symlink_to(tmp_path / "sub" / "made.json")
    write_text_atomic(tmp_path / "dangling", "made")
    assert (tmp_path / "dangling").is_symlink() and (tmp_path / "sub" / "made.json").read_text() \
        == "made"
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(InputError) as err:
        write_text_atomic(tmp_path / "a", "loop")
    assert str(err.value) == f"{tmp_path / 'a'}: cannot write: Too many levels of symbolic links"
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()


def test_a_refusal_inside_the_os_checks_is_not_wrapped_again(tmp_path):
    """The checks catch ValueError beside OSError (a NUL in a file's path string); an
    InputError is a ValueError, and one raised inside them was wrapped in a second
    "cannot write: PATH: cannot write: …"."""
    from oasis_opt.io import check_output, ensure_folder, read_input
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x" * 100)
    with pytest.raises(InputError) as err:
        check_output(tmp_path / "d")
    assert str(err.value) == f"{tmp_path / 'd'}: cannot write: it is a folder"
    with pytest.raises(InputError) as err:
        ensure_folder(tmp_path / "f", "out")
    assert str(err.value) == f"out: cannot use {str(tmp_path / 'f')!r} as a folder: it is a file"
    with pytest.raises(InputError) as err:
        read_input(tmp_path / "f", "trace", 10, "the limit")
    assert str(err.value) == f"{tmp_path / 'f'}: trace larger than 10 B, the limit"
