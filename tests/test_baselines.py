"""The baselines (SPEC §4): hand-made instances whose right answer is obvious, every schedule
through the validator on generated and random instances, and the simulator's own checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import INSTANCE_FILES, INSTANCES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances

from oasis_opt import algorithms
from oasis_opt.baselines import drf as drf_mod
from oasis_opt.baselines.sim import Placement, Policy, SchedulingError, first_fit, simulate
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.io import instance_from_dict, load_instance
from oasis_opt.model import Instance, Schedule

BASELINES = ["fifo", "drf", "rrh", "tetris"]


def make(jobs: list[dict[str, Any]], *, horizon: int = 6, resources=("gpu", "cpu"),
         workers=None, ps=None) -> Instance:
    """A hand-made instance; job fields default to a 1-GPU worker and a cheap PS."""
    full = []
    for n, j in enumerate(jobs):
        job = {"id": f"j{n}", "arrival": 0, "ps_ratio": 4, "worker_demand": [1, 1],
               "ps_demand": [0, 1], "utility": {"kind": "linear", "value": 100, "decay": 1}}
        job.update(j)
        job.setdefault("requested_workers", job["max_workers"])
        full.append(job)
    return instance_from_dict({
        "format": "oasis-instance/1", "name": "hand", "horizon": horizon,
        "resources": list(resources),
        "worker_servers": workers or [{"name": "w", "capacity": [4, 16]}],
        "ps_servers": ps or [{"name": "p", "capacity": [0, 16]}],
        "jobs": full,
    })


def slots(schedule: Schedule, job_id: str) -> dict[int, int]:
    """Worker count per slot of one job."""
    return {a.slot: sum(a.workers.values()) for a in schedule.job(job_id).allocations}


# --- FIFO ---------------------------------------------------------------------------------


def test_fifo_head_of_line_blocking():
    # j0 takes 2 of the 4 GPUs for slots 0–1; j1 wants all 4 and must wait for slot 2; j2 needs
    # one GPU and would fit next to j0 at once, but FIFO does not let it pass j1.
    inst = make([
        {"workload": 4, "max_workers": 2},
        {"workload": 4, "max_workers": 4},
        {"workload": 1, "max_workers": 1},
    ])
    s = algorithms.run("fifo", inst)
    assert slots(s, "j0") == {0: 2, 1: 2}
    assert slots(s, "j1") == {2: 4}
    assert slots(s, "j2") == {3: 1}  # j1 holds every GPU in slot 2
    # DRF, which does not queue, runs j2 at once.
    assert 0 in slots(algorithms.run("drf", inst), "j2")


def test_fifo_keeps_its_placement_and_shrinks_only_in_the_last_slot():
    # Gang of 3 workers over two 2-GPU servers: 2 on w0, 1 on w1; 7 units = 3 + 3 + 1.
    inst = make([{"workload": 7, "max_workers": 3, "ps_ratio": 2}],
                workers=[{"name": "w", "count": 2, "capacity": [2, 8]}],
                ps=[{"name": "p", "count": 2, "capacity": [0, 1]}])
    s = algorithms.run("fifo", inst)
    allocs = s.job("j0").allocations
    assert [a.slot for a in allocs] == [0, 1, 2]
    assert [dict(a.workers) for a in allocs] == [{"w0": 2, "w1": 1}] * 2 + [{"w0": 1}]
    assert [dict(a.ps) for a in allocs] == [{"p0": 1, "p1": 1}] * 2 + [{"p0": 1}]
    assert s.job("j0").completion_slot == 2


def test_fifo_refuses_a_job_that_can_never_fit():
    s = algorithms.run("fifo", load_instance(INSTANCES / "edge-never-fits.json"))
    assert s.extras["unplaceable"] == ["j-big"]
    assert s.job("j-ok").completed  # not blocked forever behind j-big


# --- DRF ----------------------------------------------------------------------------------


def test_drf_equalises_dominant_shares():
    # Ghodsi et al.'s example: 9 CPUs, 18 GB; A's tasks need <1 CPU, 4 GB> (memory-dominant),
    # B's <3 CPU, 1 GB> (CPU-dominant). Progressive filling gives A 3 tasks and B 2, both at a
    # dominant share of 2/3. PSs use nothing here so that only workers count.
    inst = make([
        {"id": "A", "workload": 30, "max_workers": 10, "worker_demand": [1, 4],
         "ps_demand": [0, 0], "ps_ratio": 10},
        {"id": "B", "workload": 30, "max_workers": 10, "worker_demand": [3, 1],
         "ps_demand": [0, 0], "ps_ratio": 10},
    ], resources=("cpu", "mem_gb"), workers=[{"name": "w", "capacity": [9, 18]}],
        ps=[{"name": "p", "capacity": [0, 0]}])
    s = algorithms.run("drf", inst)
    assert slots(s, "A")[0] == 3 and slots(s, "B")[0] == 2
    share_a = drf_mod.dominant_share(inst, 0, 3, 1)
    share_b = drf_mod.dominant_share(inst, 1, 2, 1)
    assert share_a == pytest.approx(2 / 3) and share_b == pytest.approx(2 / 3)


def test_drf_caps_at_requested_workers_and_remaining_work():
    inst = make([{"workload": 3, "max_workers": 4, "requested_workers": 2}])
    s = algorithms.run("drf", inst)
    assert slots(s, "j0") == {0: 2, 1: 1}  # never more than requested, never past the work


def test_drf_is_preemptive_between_slots():
    # j0 has the cluster alone in slot 0; when j1 arrives, they split the 4 GPUs 2/2.
    inst = make([{"workload": 20, "max_workers": 4},
                 {"workload": 20, "max_workers": 4, "arrival": 1}])
    s = algorithms.run("drf", inst)
    assert slots(s, "j0")[0] == 4
    assert slots(s, "j0")[1] == 2 and slots(s, "j1")[1] == 2


def _drf_filled_to_the_end(inst: Instance, monkeypatch: Any) -> Schedule:
    """DRF with its early end switched off: every waiting job takes its turn and fails."""
    from oasis_opt.baselines.sim import Packer
    with monkeypatch.context() as m:
        m.setattr(Packer, "fits_nowhere", lambda self, alpha: False)
        return algorithms.run("drf", inst)


def _same(a: Schedule, b: Schedule) -> bool:
    from oasis_opt.io import schedule_to_dict
    strip = [schedule_to_dict(s) for s in (a, b)]
    for d in strip:
        d.get("extras", {}).pop("seconds", None)
    return strip[0] == strip[1]


def test_drf_ends_a_slot_once_no_waiting_worker_fits_and_places_the_same(monkeypatch):
    """Progressive filling ends once every worker class of the jobs still waiting fits
    nowhere (on the whole Philly trace 3 500 jobs waited in a full cluster, each given an
    empty placement and failed, slot after slot: 1 054 of 2 615 slots in 40 s, now 2 380).
    The placements are those of filling to the end, here on two worker classes (one fills
    up first) with PSs that bind, and on the shipped instances."""
    inst = make([{"id": f"a{n}", "workload": 40, "max_workers": 3, "arrival": n % 3,
                  "worker_demand": [1, 2], "ps_demand": [1, 1], "ps_ratio": 2}
                 for n in range(8)] +
                [{"id": f"b{n}", "workload": 40, "max_workers": 2, "arrival": n % 2,
                  "worker_demand": [2, 1], "ps_demand": [1, 3], "ps_ratio": 1}
                 for n in range(8)],
                resources=("gpu", "cpu"),
                workers=[{"name": "w0", "capacity": [5, 7]}, {"name": "w1", "capacity": [4, 4]}],
                ps=[{"name": "p", "capacity": [6, 9]}])
    calls = {"grow": 0}
    from oasis_opt.baselines.sim import Packer
    grow = Packer.grow

    def counted(self, *args):
        calls["grow"] += 1
        return grow(self, *args)
    monkeypatch.setattr(Packer, "grow", counted)
    quick = algorithms.run("drf", inst)
    ran = calls["grow"]
    calls["grow"] = 0
    assert _same(quick, _drf_filled_to_the_end(inst, monkeypatch))
    assert ran < calls["grow"]  # (the early end skipped turns that could only fail)
    monkeypatch.undo()
    for path in INSTANCE_FILES:
        inst = load_instance(path)
        assert _same(algorithms.run("drf", inst), _drf_filled_to_the_end(inst, monkeypatch))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances().map(instance_from_dict))
def test_drf_early_end_places_the_same_on_random_instances(inst):
    with pytest.MonkeyPatch.context() as m:
        assert _same(algorithms.run("drf", inst), _drf_filled_to_the_end(inst, m))


# --- RRH ----------------------------------------------------------------------------------


def test_rrh_rejects_a_job_that_cannot_finish_in_time():
    inst = make([
        {"id": "ok", "workload": 4, "max_workers": 2},
        # 10 units at 2 workers need 5 slots; the horizon has 4.
        {"id": "late", "workload": 10, "max_workers": 2},
        # Could finish in slot 0, but is worth nothing by then.
        {"id": "worthless", "workload": 1, "max_workers": 1,
         "utility": {"kind": "table", "values": [0]}},
    ], horizon=4)
    s = algorithms.run("rrh", inst)
    assert s.extras["rejected"] == {"late": "hopeless", "worthless": "hopeless"}
    assert s.job("late").allocations == () and s.job("worthless").allocations == ()
    assert s.job("ok").completed
    # FIFO, without admission control, wastes slots on the hopeless job.
    assert algorithms.run("fifo", inst).job("late").allocations


def test_rrh_rejects_a_job_whose_delay_cost_exceeds_its_gain():
    # 'all' needs every GPU in every slot to meet its deadline; running 'small' would cost it
    # its whole value, far more than 'small' can earn.
    s = algorithms.run("rrh", load_instance(INSTANCES / "edge-whole-cluster.json"))
    assert s.extras["rejected"] == {"small": "unprofitable"}
    assert s.job("all").completed


def test_rrh_runs_the_more_valuable_job_first():
    # Two identical gangs that each need the whole cluster; the second is worth more.
    inst = make([
        {"id": "cheap", "workload": 8, "max_workers": 4,
         "utility": {"kind": "linear", "value": 10, "decay": 1}},
        {"id": "dear", "workload": 8, "max_workers": 4,
         "utility": {"kind": "linear", "value": 50, "decay": 1}},
    ])
    s = algorithms.run("rrh", inst)
    assert min(slots(s, "dear")) == 0 and min(slots(s, "cheap")) == 2
    f = algorithms.run("fifo", inst)
    assert min(slots(f, "cheap")) == 0 and min(slots(f, "dear")) == 2


# --- Tetris -------------------------------------------------------------------------------


def test_tetris_packs_by_alignment():
    # w0 is a balanced [4 GPU, 4 CPU] server, w1 a CPU box with one GPU. First-fit puts the
    # small job X on w0, after which Y (4 GPUs) fits nowhere; Tetris puts X where its demand is
    # best aligned with the free capacity (w1) and both run in slot 0.
    inst = make([
        {"id": "X", "workload": 1, "max_workers": 1, "worker_demand": [1, 1]},
        {"id": "Y", "workload": 1, "max_workers": 1, "worker_demand": [4, 1]},
    ], workers=[{"name": "w0", "capacity": [4, 4]}, {"name": "w1", "capacity": [1, 8]}])
    t = algorithms.run("tetris", inst)
    assert dict(t.job("X").allocations[0].workers) == {"w1": 1}
    assert dict(t.job("Y").allocations[0].workers) == {"w0": 1}
    assert t.completed == 2 and t.job("Y").completion_slot == 0
    d = algorithms.run("drf", inst)
    assert dict(d.job("X").allocations[0].workers) == {"w0": 1}
    assert d.job("Y").completion_slot == 1


def test_tetris_is_elastic_up_to_max_workers():
    inst = make([{"workload": 9, "max_workers": 4, "requested_workers": 1}])
    s = algorithms.run("tetris", inst)
    assert slots(s, "j0") == {0: 4, 1: 4, 2: 1}


@pytest.mark.parametrize("algorithm", BASELINES)
def test_a_ps_ratio_below_one_brings_several_pss_a_worker(algorithm):
    """γ = 0.5: each worker needs two PSs, three PS slots of room hold one worker. Tetris and
    DRF added one PS a worker and ran two workers on two PSs (the schedule broke the ratio
    rule, exit 1 on a valid instance). FIFO's and RRH's gang of two workers needs four PSs
    and never fits."""
    from oasis_opt.validate import validate
    inst = make([{"workload": 2, "max_workers": 2, "ps_ratio": 0.5,
                  "worker_demand": [1, 1], "ps_demand": [0, 1]}], horizon=3,
                workers=[{"name": "w0", "capacity": [10, 10]},
                         {"name": "w1", "capacity": [3, 3]}],
                ps=[{"name": "p", "capacity": [0, 3]}])
    s = algorithms.run(algorithm, inst)
    assert validate(inst, s).feasible
    if algorithm in ("fifo", "rrh"):
        assert not s.jobs[0].completed
        return
    assert s.jobs[0].completed and s.jobs[0].completion_slot == 1  # one worker a slot
    for a in s.jobs[0].allocations:
        assert sum(a.workers.values()) == 1 and sum(a.ps.values()) == 2


def test_tetris_favours_less_remaining_work():
    # Same demand, room for only one worker: the job nearer its end goes first.
    inst = make([{"id": "long", "workload": 6, "max_workers": 1},
                 {"id": "short", "workload": 2, "max_workers": 1}],
                workers=[{"name": "w", "capacity": [1, 4]}], horizon=10)
    s = algorithms.run("tetris", inst)
    assert slots(s, "short") == {0: 1, 1: 1}
    assert min(slots(s, "long")) == 2


# --- every baseline, every instance -------------------------------------------------------


@pytest.mark.parametrize("name", BASELINES)
@pytest.mark.parametrize("preset,seed", [("small", s) for s in range(8)]
                         + [("testbed", s) for s in range(4)])
def test_generated_instances_validate(name, preset, seed):
    inst = generate(preset, seed=seed)
    s = algorithms.run(name, inst)  # raises InvalidScheduleError if the validator objects
    assert s.algorithm == name
    assert 0 <= s.total_utility <= inst.utility_table[:, 0].sum() + 1e-9


@pytest.mark.parametrize("name", BASELINES)
@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.stem)
def test_stored_instances_validate(name, path):
    """Includes the paper-scale instance (200 jobs, 100 slots, 80 servers): about a second."""
    algorithms.run(name, load_instance(path))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances().map(instance_from_dict))
def test_random_instances_validate(inst):
    for name in BASELINES:
        algorithms.run(name, inst)
    # FIFO gangs never pause and never move: one contiguous run on fixed servers.
    fifo = algorithms.run("fifo", inst)
    for jr in fifo.jobs:
        if not jr.allocations:
            continue
        held = [a.slot for a in jr.allocations]
        assert held == list(range(held[0], held[0] + len(held)))
        first = jr.allocations[0].workers
        for a in jr.allocations[:-1]:
            assert dict(a.workers) == dict(first)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12), st.integers(1, 12))
def test_generator_instances_validate(seed, jobs, horizon):
    inst = generate("small", seed=seed, jobs=jobs, horizon=horizon)
    for name in BASELINES:
        algorithms.run(name, inst)


# --- the simulator itself -----------------------------------------------------------------


def test_first_fit_fills_servers_in_index_order():
    free = np.array([[2.0, 8.0], [0.5, 8.0], [4.0, 1.0], [4.0, 8.0]])
    assert first_fit(free, np.array([1.0, 2.0]), 5).tolist() == [2, 0, 0, 3]
    assert first_fit(free, np.array([1.0, 2.0]), 7) is None
    assert first_fit(free, np.array([0.0, 0.0]), 3).tolist() == [3, 0, 0, 0]


def test_simulator_refuses_an_over_capacity_policy():
    class Greedy(Policy):
        def allocate(self, state):
            # 5 one-GPU workers on a 4-GPU server
            return {i: Placement(np.array([5]), np.array([2])) for i in state.active().tolist()}

    inst = make([{"workload": 10, "max_workers": 5}])
    with pytest.raises(SchedulingError, match="capacity"):
        simulate(inst, Greedy())


def test_simulator_refuses_work_past_completion():
    class Overrun(Policy):
        def allocate(self, state):
            return {i: Placement(np.array([3]), np.array([1])) for i in state.active().tolist()}

    inst = make([{"workload": 2, "max_workers": 3}])
    with pytest.raises(SchedulingError, match="remaining 2"):
        simulate(inst, Overrun())


@pytest.mark.parametrize("name,params,place", [
    ("rrh", {"delay_weight": -1}, "delay_weight"),
    ("tetris", {"remaining_weight": -0.5}, "remaining_weight"),
])
def test_bad_parameters_are_input_errors(name, params, place):
    with pytest.raises(InputError) as err:
        algorithms.run(name, make([{"workload": 1, "max_workers": 1}]), **params)
    assert err.value.place == place


@pytest.mark.parametrize("name", ["drf", "tetris"])
def test_a_policy_that_places_one_unit_at_a_time_refuses_too_many_units(name):
    """DRF and Tetris place one worker (or PS) at a time: a 400-byte file of one job of 10^8
    worker-slots at 10^-9 GPU a worker kept ``run -a drf`` going past two minutes (an
    outside audit). Refused up front (SPEC §5), naming the workload; FIFO places gangs at
    once and runs."""
    inst = make([{"workload": 10**8, "max_workers": 10**8, "ps_ratio": 10**8,
                  "worker_demand": [1e-9, 0], "ps_demand": [0, 1e-9]}], horizon=2)
    with pytest.raises(InputError, match=rf"{name} places one worker \(or PS\) at a time.*"
                                         r"1e\+08 placements \(limit 2e\+07\)") as err:
        algorithms.run(name, inst)
    assert err.value.place == "jobs[0].workload"
    assert algorithms.run("fifo", inst).completed == 1  # the whole gang in its first slot


def test_the_simulator_skips_slots_in_which_nothing_can_run():
    """Two jobs done in their first slots over 2 000 000 slots took FIFO 9.8 s, one pass of
    every policy over each empty slot (an outside audit): where no job is active the
    simulator goes on at the next arrival. The policy is asked only in slots with work."""
    asked: list[int] = []

    class Counting(drf_mod.DrfPolicy):
        def allocate(self, state):
            asked.append(state.t)
            return super().allocate(state)

    inst = make([{"workload": 4, "max_workers": 4}, {"workload": 2, "max_workers": 2,
                                                      "arrival": 1_999_990}],
                horizon=2_000_000)
    schedule = simulate(inst, Counting(inst))
    assert asked == [0, 1_999_990]
    assert schedule.completed == 2 and slots(schedule, "j1") == {1_999_990: 2}
