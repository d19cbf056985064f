"""Generator: determinism per seed, preset sizes, workloads from the training formula."""

from __future__ import annotations

import pytest

from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.generator import MODELS, PRESETS, demand_ratio, generate
from oasis_opt.io import instance_to_dict, load_instance


@pytest.mark.parametrize("preset", ["small", "testbed", "paper"])
def test_same_seed_same_instance(preset):
    a, b = generate(preset, seed=7), generate(preset, seed=7)
    assert instance_to_dict(a) == instance_to_dict(b)
    assert instance_to_dict(a) != instance_to_dict(generate(preset, seed=8))


@pytest.mark.parametrize("seed", range(6))
def test_small_preset_sizes(seed):
    inst = generate("small", seed=seed)
    p = PRESETS["small"]
    assert p.jobs[0] <= inst.num_jobs <= p.jobs[1]
    assert 6 <= inst.horizon <= 10
    assert 2 <= len(inst.worker_names) <= 4
    assert 1 <= len(inst.ps_names) <= 2


def test_testbed_and_paper_sizes():
    t = generate("testbed", seed=1)
    assert (t.num_jobs, t.horizon) == (12, 10)
    p = generate("paper", seed=1)
    assert (p.horizon, len(p.worker_names), len(p.ps_names)) == (100, 40, 40)


@pytest.mark.parametrize("seed", range(3))
def test_paper_preset_is_contended(seed):
    assert max(demand_ratio(generate("paper", seed=seed)).values()) >= 1.5


def test_workloads_follow_training_formula():
    inst = generate("testbed", seed=3)
    names = {m.name for m in MODELS}
    for job in inst.jobs:
        assert job.training is not None and job.training.model in names
        assert job.workload == job.training.workload()
        assert job.training.chunks == job.max_workers
        assert 1 <= job.requested_workers <= job.max_workers
        assert job.arrival < inst.horizon


def test_overrides_and_bad_parameters():
    inst = generate("paper", seed=1, jobs=10, horizon=20)
    assert (inst.num_jobs, inst.horizon) == (10, 20)
    assert all(j.arrival < 20 for j in inst.jobs)
    with pytest.raises(InputError, match="^preset: unknown preset 'huge'"):
        generate("huge")
    with pytest.raises(InputError, match="^horizon: must be at least 1"):
        generate("small", horizon=0)


@pytest.mark.parametrize("preset", ["mixed", "mixed-2r", "uniform-1r", "loose", "ps-heavy",
                                    "ps-light"])
def test_issue22_families(preset):
    """The families that the `hard` preset lacks: heterogeneous pools where shapes are given
    (every shape present as far as the count goes), the preset's resources, ½-GPU workers and
    table utilities where asked, deterministic per seed."""
    p = PRESETS[preset]
    insts = [generate(preset, seed=s) for s in range(4)]
    assert instance_to_dict(insts[0]) == instance_to_dict(generate(preset, seed=0))
    for inst in insts:
        assert len(inst.resources) == p.resources
        assert inst.worker_demand.shape[1] == p.resources
        for shapes, groups in ((p.worker_shapes, inst.worker_groups),
                               (p.ps_shapes, inst.ps_groups)):
            n = sum(g.count or 1 for g in groups)
            want = min(n, len(shapes)) if shapes else 1
            assert len({g.capacity for g in groups}) == want
    kinds = {j.utility.kind for inst in insts for j in inst.jobs}
    assert ("table" in kinds) == bool(p.table_share)
    halves = any(j.worker_demand[0] == 0.5 for inst in insts for j in inst.jobs)
    assert halves == bool(p.fractional)


def test_instances_drawn_differently_are_named_and_recorded_differently(tmp_path):
    """``generate --jobs/--horizon`` wrote ``small-s0`` for every size, and the file's
    ``generator`` record kept only the preset and seed: three different instances had one
    name and one record. The name and the record now carry every size given."""
    plain = generate("small", seed=0)
    sized = generate("small", seed=0, jobs=4, horizon=9, servers=3, max_share=0.5)
    assert plain.name == "small-s0"
    assert plain.extra["generator"] == {"preset": "small", "seed": 0}
    assert sized.name == "small-s0-j4-T9-H3-share0.5"
    record = sized.extra["generator"]
    assert {k: record[k] for k in ("preset", "seed", "jobs", "horizon", "servers",
                                   "max_share")} == {
        "preset": "small", "seed": 0, "jobs": 4, "horizon": 9, "servers": 3,
        "max_share": 0.5}
    assert generate("small", seed=0, jobs=4, name="mine").name == "mine"
    path = tmp_path / "g.json"
    assert main(["generate", "--preset", "small", "--jobs", "4", "--horizon", "9",
                 "-o", str(path)]) == 0
    again = load_instance(path)
    assert again.name == "small-s0-j4-T9"
    assert again.extra["generator"] == {"preset": "small", "seed": 0, "jobs": 4, "horizon": 9}
