"""Column generation within ``--max-memory`` (issue 21, round 42): the least master with its
pricing tables refused up front, naming the size; the phases after the bound (the pattern
master, its MILP, the LNS windows; at trace scale the roundings, ejections and moves) left
out where their estimate beside what the process holds would pass the limit, the incumbent
and the bound kept, and said so."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import INSTANCES
from oasis_opt.formulations import colgen, pattern_master

from oasis_opt import limits
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict, save_instance
from oasis_opt.offline import colgen_inputs
from oasis_opt.online.subroutine import JobSpec, best_schedule
from oasis_opt.progress import round_text
from oasis_opt.validate import validate


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


@pytest.fixture
def spied(monkeypatch):
    """``limits.no_room``'s questions (estimate, phase; ``need_room`` asks it too), with
    nothing held: the limit alone decides, whatever else the test process holds."""
    asked: list[tuple[float, str]] = []
    real = limits.no_room

    def spy(nbytes: float, what: str) -> str | None:
        asked.append((nbytes, what))
        return real(nbytes, what)
    monkeypatch.setattr(limits, "held_bytes", lambda: 0)
    monkeypatch.setattr(limits, "no_room", spy)
    return asked


def test_a_limit_below_the_milp_skips_it_and_keeps_the_answer(monkeypatch, spied):
    inst = generate("small", seed=0, jobs=20)
    inputs = colgen_inputs(inst)
    settings = {"mip_time_limit": 1.0, "bound_only": False, **inputs}
    first = colgen.solve(inst, **settings)
    estimate = dict((what.split(" of ")[0], b) for b, what in spied)
    built = estimate["the pattern master"]
    milp = estimate["the MILP over the pattern master"]
    assert built < milp
    limit = int((built + milp) / 2)  # the pattern master fits, its MILP does not
    monkeypatch.setenv(limits.ENV, str(limit))
    spied.clear()
    mips = []
    monkeypatch.setattr(pattern_master.PatternMaster, "solve_mip",
                        lambda *a, **k: mips.append(1))
    rounds = []
    res = colgen.solve(inst, on_round=rounds.append, **settings)
    assert not mips  # neither the MILP nor an LNS window (each solves one)
    asked = {what.split(" of ")[0]: b for b, what in spied}
    assert asked["the pattern master"] <= limit < asked["the MILP over the pattern master"]
    notes = res.extras["notes"]
    assert any(n.startswith("the MILP over the pattern master skipped") for n in notes)
    assert any(n.startswith("the LNS windows skipped") for n in notes)
    assert all(limits.human(limit) in n for n in notes)
    assert [r.note for r in rounds if r.note] == notes
    assert "column generation: the MILP" in round_text(next(r for r in rounds if r.note))
    # the answer so far stands: the best seed (or the dive's), a valid bound
    best_seed = max(s.total_utility for s in inputs["seeds"])
    assert res.schedule.total_utility >= best_seed - 1e-9
    assert validate(inst, res.schedule).feasible
    assert res.bound >= res.schedule.total_utility - 1e-9
    assert res.bound >= first.schedule.total_utility - 1e-6  # still a bound on OPT
    assert "notes" not in first.extras  # the default limit: nothing left out, nothing said


def test_without_room_for_the_pattern_master_the_lp_is_rounded(monkeypatch, spied):
    inst = generate("small", seed=0, jobs=20)
    inputs = colgen_inputs(inst)
    settings = {"mip_time_limit": 1.0, "bound_only": False, **inputs}
    colgen.solve(inst, **settings)
    built = next(b for b, what in spied if what.startswith("the pattern master of"))
    limit = int(built) - 1  # the master fits (its estimate is far less), the pattern one not
    monkeypatch.setenv(limits.ENV, str(limit))
    spied.clear()
    made = []
    monkeypatch.setattr(pattern_master.PatternMaster, "add", lambda *a: made.append(1))
    rounded: list[int] = []
    real = colgen.round_lp
    monkeypatch.setattr(colgen, "round_lp", lambda *a, **k: rounded.append(1) or real(*a, **k))
    res = colgen.solve(inst, **settings)
    assert not made  # no pattern master: not a column of one
    assert res.extras["notes"][0].startswith("the pattern master of")
    assert rounded  # the bound's LP rounded instead, as at trace scale
    assert all(b <= limit for b, what in spied if not what.startswith("the pattern master"))
    best_seed = max(s.total_utility for s in inputs["seeds"])
    assert res.schedule.total_utility >= best_seed - 1e-9
    assert validate(inst, res.schedule).feasible
    assert res.bound >= res.schedule.total_utility - 1e-9


def test_trace_scale_phases_skipped_when_nothing_more_fits(monkeypatch, spied):
    inst = generate("small", seed=0, jobs=20)  # the seeds leave a gap: every phase asked
    inputs = colgen_inputs(inst)
    monkeypatch.setattr(limits, "held_bytes", limits.max_memory)  # all of it held already
    rounded = []
    monkeypatch.setattr(colgen, "round_lp", lambda *a, **k: rounded.append(1))
    rounds = []
    res = colgen.solve(inst, bound_only=True, on_round=rounds.append, **inputs)
    phases = {what for _, what in spied}
    assert phases <= {"rounding the LP", "the ejections", "the moves"}
    assert "rounding the LP" in phases
    assert not rounded
    assert [n.split(" skipped")[0] for n in res.extras["notes"]] == sorted(
        phases, key=["rounding the LP", "the ejections", "the moves"].index)
    assert [r.note for r in rounds if r.note] == res.extras["notes"]
    # the bound phase ran (the master is checked against the limit alone, up front)
    assert res.extras["iterations"] >= 1
    best_seed = max(s.total_utility for s in inputs["seeds"])
    assert res.schedule.total_utility == pytest.approx(best_seed)
    assert res.bound >= res.schedule.total_utility - 1e-9


def test_need_room_counts_what_is_held(monkeypatch):
    monkeypatch.setenv(limits.ENV, "1000")
    monkeypatch.setattr(limits, "held_bytes", lambda: 600)
    limits.need_room(400, "a phase")
    with pytest.raises(limits.NoRoom) as err:
        limits.need_room(401, "a phase")
    assert err.value.note.startswith("a phase skipped: about 401 B beside 600 B held")


def test_held_bytes_is_this_process_resident_memory():
    held = limits.held_bytes()
    assert held == 0 or 10 * 2**20 < held < 64 * 2**30


def test_the_compact_bound_beside_column_generation_only_where_it_fits(monkeypatch):
    from oasis_opt.offline import colgen_route
    inst = generate("small", seed=0, jobs=20)
    monkeypatch.setattr(limits, "held_bytes", lambda: 0)
    assert colgen_route._room_for_prepare(inst)
    monkeypatch.setattr(limits, "held_bytes", limits.max_memory)
    assert not colgen_route._room_for_prepare(inst)


def test_the_command_line_says_what_column_generation_left_out(monkeypatch, tmp_path, capsys):
    """Below trace scale column generation runs in a forked child that hears no rounds: its
    notes come back with its result and are told then, one progress line each."""
    monkeypatch.setattr(limits, "held_bytes", limits.max_memory)  # the child inherits it
    out = tmp_path / "s.json"
    code = main(["solve", str(INSTANCES / "testbed-s0.json"), "--method", "colgen",
                 "--time-limit", "10", "-o", str(out)])
    assert code == 0
    err = capsys.readouterr().err
    assert "column generation: the pattern master of" in err
    notes = json.loads(out.read_text())["extras"]["notes"]
    assert notes[0].startswith("the pattern master of") and " skipped: about " in notes[0]
    assert all(f"column generation: {n}" in err for n in notes)
