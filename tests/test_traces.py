"""Trace importers (issue 12): the mapping by hand, each format, bad traces, determinism, the
``trace`` experiment. Alibaba's importer is tested on small files written here (its trace has
no licence of its own, so none of it is shipped)."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from oasis_opt import algorithms
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.io import load_instance, save_instance
from oasis_opt.traces import Policy, import_trace
from oasis_opt.traces.common import slot_seconds
from oasis_opt.utility import Deadline, Linear, Sigmoid

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "instances" / "traces"
SHARED = Path(os.environ.get("OASIS_TRACES") or ROOT.parent / "shared" / "traces")
needs_shared = pytest.mark.skipif(not SHARED.exists(), reason="no ../shared/traces copies")

PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run_cli(args: list[str], capfd) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capfd.readouterr()
    return rc, out, err


# --- the mapping, by hand -------------------------------------------------------------------


def test_philly_mapping_by_hand(tmp_path):
    trace = write(tmp_path / "p.csv", PHILLY_HEADER
                  + "2017-10-09 07:01:00,600.0,2,1200.0,vcA\n"
                  + "2017-10-09 07:00:00,90.0,1,90.0,vcA\n"
                  + "2017-10-09 07:10:00,3000.0,4,12000.0,vcB\n"
                  + "2017-10-09 07:05:00,61.0,1,61.0,vcA\n")
    res = import_trace("philly", trace, Policy(slot_seconds=60, horizon=30, elastic=2,
                                               slack=2, urgency=4, load=1.0))
    inst = res.instance
    # submission order: lines 3 (07:00), 2 (07:01), 5 (07:05), 4 (07:10)
    assert [j.id for j in inst.jobs] == ["L3", "L2", "L5", "L4"]
    assert inst.arrival.tolist() == [0, 1, 5, 10]
    # V = ceil(duration · GPUs / 60)
    assert inst.workload.tolist() == [2, 20, 2, 200]
    assert inst.requested_workers.tolist() == [1, 2, 1, 4]
    assert inst.max_workers.tolist() == [2, 4, 2, 8]
    # job L2: trace duration 600 s = 10 slots, target 2 · 10, gamma2 = 4 / 20, gamma1 = V
    u = inst.jobs[1].utility
    assert isinstance(u, Sigmoid)
    assert (u.gamma1, u.gamma2, u.gamma3) == (20.0, 0.2, 20.0)
    # servers: 4-GPU nodes whose GPUs reach max(W / (load · T), biggest gang) with
    # W = Σ min(V, N · (T − a)) = 2 + 20 + 2 + min(200, 8 · 20) = 184 → 184 / 30 → 2 nodes
    assert len(inst.worker_names) == 2 and inst.worker_capacity.tolist() == [[4.0], [4.0]]
    assert np.all(inst.ps_demand == 0) and inst.ps_ratio.tolist() == [2.0, 4.0, 2.0, 8.0]
    assert res.unfinishable == 1  # L4: 10 + ceil(200 / 8) > 30
    # in the trace, L2 (07:01–07:11, 2 GPUs) and L4 (from 07:10, 4 GPUs) overlap: 6 at once
    assert res.peak_gpus == 6 and res.report()["gpus"] == 8
    tr = inst.extra["trace"]
    assert tr["lines"] == [3, 2, 5, 4] and tr["slot_seconds"] == 60
    assert "p.csv" in inst.extra["description"] and "lines 2–5" in inst.extra["description"]
    # the instance is valid SPEC §5 and round-trips
    out = tmp_path / "i.json"
    save_instance(inst, out)
    back = load_instance(out)
    assert back.workload.tolist() == inst.workload.tolist()
    assert back.extra["trace"]["mapping"]["elastic"] == 2


def test_cluster_filter_and_utility_policies(tmp_path):
    trace = write(tmp_path / "p.csv", PHILLY_HEADER
                  + "2017-10-09 07:01:00,600.0,2,1200.0,vcA\n"
                  + "2017-10-09 07:00:00,90.0,1,90.0,vcB\n")
    res = import_trace("philly", trace, Policy(slot_seconds=60, horizon=30, utility="deadline",
                                               value="unit", slack=1.5), cluster="vcA")
    assert res.filtered == 1 and res.instance.num_jobs == 1
    assert res.instance.jobs[0].utility == Deadline(1.0, 15)  # ceil(1.5 · 10)
    lin = import_trace("philly", trace, Policy(slot_seconds=60, horizon=30,
                                               utility="linear")).instance.jobs[1].utility
    assert lin == Linear(20.0, 20.0 / 40.0)  # value V = 20, zero at d = 2·τ + 1 = 41
    with pytest.raises(InputError, match="no job of virtual cluster 'vcC'"):
        import_trace("philly", trace, Policy(), cluster="vcC")


def test_auto_slot_seconds_formula(tmp_path):
    rows = "".join(f"2017-10-09 07:{m:02d}:00,{d}.0,1,{d}.0,a\n"
                   for m, d in ((0, 100), (10, 200), (20, 300), (30, 4000)))
    res = import_trace("philly", write(tmp_path / "p.csv", PHILLY_HEADER + rows),
                       Policy(horizon=50))
    # A = 30 min = 1800 s, D75 (lower) = 300 s: ceil(2100 / 50) = 42
    assert res.slot_seconds == 42.0
    assert slot_seconds(_jobs([0, 10], [5, 7]), 4) == math.ceil((10 + 5) / 4)


def test_default_slot_keeps_the_last_arrival_inside(tmp_path, capfd):
    """Jobs of zero duration (D75 = 0) whose span is a multiple of the horizon: ceil(A / T)
    put the last arrival in slot T, and the import refused its own default ("arrives in slot
    100, past the horizon 100")."""
    assert slot_seconds(_jobs([0, 50, 100], [0, 0, 0]), 100) == 2
    assert slot_seconds(_jobs([0, 10], [5, 7]), 4) == 4  # unchanged where it fitted
    trace = write(tmp_path / "t.csv", "job_id,num_gpu,submit_time,iterations,model_name,"
                  "duration,interval\n0,1,0,10,vgg,0,1\n1,1,50,10,vgg,0,1\n2,1,100,10,vgg,0,1\n")
    out, sched = tmp_path / "i.json", tmp_path / "s.json"
    rc, _, err = run_cli(["import", "tiresias", str(trace), "-o", str(out)], capfd)
    assert rc == 0, err
    assert load_instance(out).arrival.tolist() == [0, 25, 50]
    rc, _, err = run_cli(["run", str(out), "-a", "oasis", "-o", str(sched)], capfd)
    assert rc == 0, err
    assert run_cli(["validate", str(out), str(sched)], capfd)[0] == 0


def _jobs(submits, durations):
    from oasis_opt.traces.common import TraceJob
    return [TraceJob(f"j{k}", k, s, d, 1, (1.0,)) for k, (s, d) in
            enumerate(zip(submits, durations, strict=True))]


# --- gavel: throughputs and measured scalability ----------------------------------------------


def _gavel_files(tmp_path, throughputs=None):
    thr = throughputs or {"v100": {
        "('X', 1)": {"null": 10.0}, "('X', 2)": {"null": 19.0}, "('X', 4)": {"null": 30.0},
        "('Y', 1)": {"null": 5.0}}}
    write(tmp_path / "simulation_throughputs.json", json.dumps(thr))
    return write(tmp_path / "vc.trace",
                 "X\tcmd\t-n\t1\t3000\t0.000000\t1\n"
                 "Y\tcmd\t-n\t0\t1000\t60.000000\t2\n"
                 "X\tcmd\t-n\t1\t1900\t120.000000\t2\n")


def test_gavel_measured_elasticity(tmp_path):
    trace = _gavel_files(tmp_path)
    res = import_trace("gavel", trace, Policy(slot_seconds=10, horizon=100, elastic=4))
    inst = res.instance
    # X at 1 GPU: 3000 / 10 = 300 s → 30 worker-slots; θ(2)/2 = 9.5 ≥ 0.8·10, θ(4)/4 = 7.5 < 8
    assert inst.workload[0] == 30 and inst.max_workers[0] == 2
    # Y at 2 GPUs was never measured: linear from 1 GPU (θ = 10), rigid at its request
    assert inst.workload[1] == math.ceil(1000 / 10 * 2 / 10) and inst.max_workers[1] == 2
    # X at 2 GPUs: 1900 / 19 = 100 s; θ(4)/4 = 7.5 ≥ 0.8 · 9.5 = 7.6? no → stays at 2
    assert inst.workload[2] == 20 and inst.max_workers[2] == 2
    assert inst.extra["trace"]["unmeasured_scale_lines"] == [2]
    looser = import_trace("gavel", trace, Policy(slot_seconds=10, elastic=4, efficiency=0.7))
    assert looser.instance.max_workers.tolist() == [4, 2, 4]


def test_a_gang_too_large_is_named_by_its_line_not_an_option(tmp_path):
    """A job of 10¹⁰ GPUs (a short one: throughput scaled linearly) was refused as
    "--slot-seconds: … a workload of 50 worker-slots × 100 slots", an option nobody gave and
    a size that did not explain the figure."""
    trace = _gavel_files(tmp_path)
    trace.write_text("X\tcmd\t-n\t1\t1000\t0\t10000000000\n")
    with pytest.raises(InputError, match=r"a job of up to 10000000000 workers × 100 slots "
                                         r"is too large") as err:
        import_trace("gavel", trace, Policy(elastic=1))
    assert err.value.place == f"{trace}:1"


@pytest.mark.parametrize("bad, message", [
    ({"v100": {"('X', 1)": {"null": "10"}}}, "expected a finite non-negative number"),
    ({"v100": {"('X', 1)": {"null": None}}}, "expected a finite non-negative number"),
    ({"v100": {"X-1": {"null": 1.0}}}, "expected a key"),
    ({"k80": {}}, "'v100' is not in"),
])
def test_gavel_bad_throughputs(tmp_path, bad, message):
    trace = _gavel_files(tmp_path, bad)
    with pytest.raises(InputError, match=message):
        import_trace("gavel", trace, Policy())


@pytest.mark.parametrize("spec, options, message", [
    ('{"philly": ["500:0:0"]}', {"gpu_type": "k80"}, "at most 0 k80 GPUs"),
    ('{"a": ["2:0:0"], "b": ["3:1:0"]}', {}, "at most 3 v100 GPUs, fewer than one node of 4"),
    ('{"philly": ["500:0:0"]}', {"gpus_per_server": 501}, "fewer than one node of 501"),
])
def test_gavel_cluster_spec_without_one_node_of_the_type(tmp_path, spec, options, message):
    """A cluster spec that holds no node of the chosen type and size is refused, naming the
    spec; it was read and then ignored (an unbounded cluster said to have no spec)."""
    trace = _gavel_files(tmp_path)
    thr = json.loads((tmp_path / "simulation_throughputs.json").read_text())
    write(tmp_path / "simulation_throughputs.json", json.dumps({**thr, "k80": thr["v100"]}))
    spec_path = write(tmp_path / "cluster_specs.json", spec)
    with pytest.raises(InputError, match=message) as err:
        import_trace("gavel", trace, Policy(), cluster_spec=spec_path, **options)
    assert err.value.place == str(spec_path)
    # one node fits: at most the spec's count, in whole nodes
    write(tmp_path / "cluster_specs.json", '{"philly": ["9:0:0"]}')
    res = import_trace("gavel", trace, Policy(), cluster_spec=spec_path)
    assert len(res.instance.worker_names) <= 2 and "at most the 9 v100 GPUs" in \
        res.instance.extra["trace"]["servers_from"]


def test_gavel_hostile_json_one_message(tmp_path):
    trace = _gavel_files(tmp_path)
    write(tmp_path / "simulation_throughputs.json", "[" * 100000 + "]" * 100000)
    with pytest.raises(InputError, match="nested too deeply"):
        import_trace("gavel", trace, Policy())
    write(tmp_path / "simulation_throughputs.json", "[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object"):
        import_trace("gavel", trace, Policy())


# --- pollux: steps ÷ measured throughput ---------------------------------------------------


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_pollux_workload_from_measurements():
    trace = SAMPLES / "adaptdl" / "workloads" / "workload-1.csv"
    res = import_trace("pollux", trace, Policy(jobs=5, slot_seconds=60))
    first = _read(trace)[0]  # cifar10-0: 6 replicas, batch 2048
    assert first["name"] == res.instance.jobs[0].id == "cifar10-0"
    apps = SAMPLES / "adaptdl" / "apps" / "cifar10"
    steps = max(int(r["iteration"]) for r in _read(apps / "validation-2048.csv"))
    # 6 GPUs packed on 4-GPU nodes is placement "24"; local batch 2048 / 6, interpolated
    pts = sorted((float(r["local_bsz"]), float(r["step_time"]) + float(r["sync_time"]))
                 for r in _read(apps / "placements.csv") if r["placement"] == "24")
    b = 2048 / 6
    (x0, y0), (x1, y1) = [(x, y) for x, y in pts if x < b][-1], [(x, y) for x, y in pts
                                                                 if x > b][0]
    t = y0 + (y1 - y0) * (b - x0) / (x1 - x0)
    assert res.instance.workload[0] == math.ceil(steps * t * 6 / 60 - 1e-9)
    assert res.instance.requested_workers[0] == 6 and res.instance.max_workers[0] >= 6
    assert len(res.instance.worker_names) <= 16  # the simulator's cluster


# --- tiresias: three layouts and its cluster spec --------------------------------------------


def test_tiresias_layouts_and_spec(tmp_path):
    res = import_trace("tiresias", SAMPLES / "tiresias" / "60_job.csv", Policy())
    assert res.instance.num_jobs == 40 and res.instance.jobs[0].id == "job0"
    assert res.instance.worker_capacity[0].tolist() == [4.0]  # cluster_spec.csv: 4 per node
    with pytest.raises(InputError, match="more than the 16 nodes"):
        import_trace("tiresias", SAMPLES / "tiresias" / "60_job.csv", Policy(servers=17))
    # tf_job.csv repeats its row: refused, or skipped and counted
    with pytest.raises(InputError, match=r"tf_job.csv:3: duplicate job id 'job10'"):
        import_trace("tiresias", SAMPLES / "tiresias" / "tf_job.csv", Policy())
    tf = import_trace("tiresias", SAMPLES / "tiresias" / "tf_job.csv", Policy(skip_bad=True))
    assert tf.skipped == 1 and tf.instance.num_jobs == 1
    assert tf.instance.requested_workers.tolist() == [12]
    # the yarn layout: one duration column, CRLF, no final newline
    yarn = write(tmp_path / "yarn.csv", "duration\r\n121\r\n300\r\n7")
    y = import_trace("tiresias", yarn, Policy(slot_seconds=10))
    assert y.instance.arrival.tolist() == [0, 0, 0]
    assert y.instance.workload.tolist() == [13, 30, 1]
    assert y.instance.requested_workers.tolist() == [1, 1, 1]


@pytest.mark.parametrize("empty", ['""', '" "'])
def test_yarn_empty_duration_is_a_bad_row_blank_lines_are_not(tmp_path, capfd, empty):
    # a CSV writer puts an empty value of a one-column file as "": a row, unlike the blank
    # lines (nothing, or only whitespace) around it, which every importer skips
    yarn = write(tmp_path / "yarn.csv", f"duration\r\n121\r\n\r\n{empty}\r\n  \t\r\n300\r\n7")
    out = tmp_path / "inst.json"
    rc, stdout, err = run_cli(["import", "tiresias", str(yarn), "-o", str(out)], capfd)
    assert rc == 2 and not out.exists() and stdout == ""
    assert err.strip() == (f"oasis-opt import: error: {yarn}:4: column duration: expected a "
                           f"number, got ''")
    rc, stdout, _ = run_cli(["import", "tiresias", str(yarn), "-o", str(out), "--skip-bad",
                             "--json"], capfd)
    report = json.loads(stdout)
    assert rc == 0 and report["skipped"] == 1 and report["jobs"] == 3
    assert report["first_skipped"] == f"{yarn}:4: column duration: expected a number, got ''"
    assert load_instance(out).extra["trace"]["lines"] == [2, 6, 7]


def test_delimiter_only_row_is_a_bad_row(tmp_path):
    trace = write(tmp_path / "t.csv", PHILLY_HEADER + ROW + ",,,,\n  \n\n")
    with pytest.raises(InputError, match=r"t.csv:3: column timestamp: expected a date"):
        import_trace("philly", trace, Policy())
    res = import_trace("philly", trace, Policy(skip_bad=True))
    assert res.skipped == 1 and res.instance.num_jobs == 1


@pytest.mark.parametrize("date", ['"2017-10-03\n04:19:04"', "2017-10-03\t04:19:04",
                                  "2017-10-03  04:19:04", "2017-10-3 4:19:04"])
def test_a_date_not_exactly_as_the_format_is_a_bad_row(tmp_path, date):
    """strptime takes any run of whitespace (a quoted line break too) for the format's space,
    and unpadded fields: such a date parsed."""
    trace = write(tmp_path / "t.csv", PHILLY_HEADER + ROW + f"{date},100,1,100.0,c\n")
    with pytest.raises(InputError, match=r"t.csv:3: column timestamp: expected a date"):
        import_trace("philly", trace, Policy())


# --- alibaba: small files in its format --------------------------------------------------------

POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
              "creation_time,deletion_time,scheduled_time\n")
NODES = ("sn,cpu_milli,memory_mib,gpu,model\n"
         "n0,64000,262144,2,P100\n"
         "n1,32000,131072,0,\n"
         "n2,96000,393216,8,G2\n"
         "n3,96000,393216,8,G2\n"
         "n4,104000,524288,2,T4\n")


def _alibaba(tmp_path, pods: str) -> tuple[Path, Path]:
    return (write(tmp_path / "openb_pod_list_test.csv", POD_HEADER + pods),
            write(tmp_path / "openb_node_list_gpu_node.csv", NODES))


def test_alibaba_demand_vectors_filters_and_nodes(tmp_path):
    pods, nodes = _alibaba(tmp_path, (
        "p0,12000,16384,1,460,,LS,Succeeded,0,1200,100\n"
        "p1,88000,327680,8,1000,,Burstable,Running,60,6060,60\n"
        "p2,4000,8192,0,0,,BE,Succeeded,120,300,120\n"        # CPU-only: filtered
        "p3,6000,12288,1,1000,,LS,Pending,180,400,\n"          # never ran: filtered
        "p4,8000,10240,2,1000,V100M16|V100M32,LS,Failed,240,840,300\n"))
    res = import_trace("alibaba", pods, Policy(slot_seconds=60, horizon=200, servers=3))
    inst = res.instance
    assert inst.resources == ("gpu", "cpu", "mem_gib")
    assert [j.id for j in inst.jobs] == ["p0", "p1", "p4"] and res.filtered == 2
    # one worker per GPU: (gpu_milli/1000, cores/g, GiB/g)
    np.testing.assert_allclose(inst.worker_demand, [[0.46, 12.0, 16.0], [1.0, 11.0, 40.0],
                                                    [1.0, 4.0, 5.0]])
    assert inst.requested_workers.tolist() == [1, 8, 2]
    # duration = deletion − scheduled: 1100 s, 6000 s, 540 s
    assert inst.workload.tolist() == [math.ceil(1100 / 60), 100 * 8, 9 * 2]
    assert inst.arrival.tolist() == [0, 1, 4]
    # the four GPU nodes, three evenly spaced: k·4 // 3 = 0, 1, 2 → n0, n2, n3
    assert inst.worker_names == ("n0", "n2", "n3")
    assert inst.worker_capacity.tolist() == [[2, 64, 256], [8, 96, 384], [8, 96, 384]]
    only = import_trace("alibaba", pods, Policy(slot_seconds=60, horizon=200),
                        phases=("Succeeded",))
    assert [j.id for j in only.instance.jobs] == ["p0"]


@pytest.mark.parametrize("row, message", [
    ("p9,12000,16384,1,460,,LS,Succeeded,100,50,100", "column deletion_time: 50 is before"),
    # a finished pod without its end was dropped without a word (counted as filtered)
    ("p9,12000,16384,1,460,,LS,Succeeded,100,,150", "column deletion_time: empty for a "
                                                    "scheduled Succeeded pod"),
    ("p9,12000,16384,1,460,,LS,Running,100,,150", "column deletion_time: empty for a "
                                                  "scheduled Running pod"),
    ("p9,12000,16384,1,1460,,LS,Succeeded,0,50,0", "column gpu_milli: at most 1000"),
    ("p9,12000,16384,1,0,,LS,Succeeded,0,50,0", "column gpu_milli: must be positive"),
    ("p9,12000,16384,1,460,,LS,Sleeping,0,50,0", "column pod_phase"),
    ("p9,12000,sixteen,1,460,,LS,Succeeded,0,50,0", "column memory_mib: expected a number"),
    ("p9,12000,16384,1.5,460,,LS,Succeeded,0,50,0", "column num_gpu: expected an integer"),
    # demands an instance cannot hold (docs/model.md): a bad row like the others, skipped with
    # --skip-bad and checked in the whole file (they were checked in the slice only, and
    # refused even with --skip-bad)
    ("p9,1e308,16384,1,460,,LS,Succeeded,0,50,0", r"a worker's cpu 1e\+305 is outside"),
    ("p9,12000,16384,1,1e-9,,LS,Succeeded,0,50,0", "a worker's gpu 1e-12 is outside"),
])
def test_alibaba_bad_rows(tmp_path, row, message):
    pods, _ = _alibaba(tmp_path, "p0,12000,16384,1,460,,LS,Succeeded,0,1200,100\n" + row + "\n")
    for jobs in (40, 1):  # the whole file is checked, not only the slice
        with pytest.raises(InputError, match=message) as err:
            import_trace("alibaba", pods, Policy(jobs=jobs))
        assert err.value.place.endswith("openb_pod_list_test.csv:3")
    res = import_trace("alibaba", pods, Policy(skip_bad=True))
    assert res.skipped == 1 and res.instance.num_jobs == 1


def test_alibaba_resource_only_pod_list_refused(tmp_path):
    pods = write(tmp_path / "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                                        "p0,12000,16384,1,1000\n")
    write(tmp_path / "openb_node_list_gpu_node.csv", NODES)
    with pytest.raises(InputError, match="no phase, creation, deletion or scheduled times"):
        import_trace("alibaba", pods, Policy())


# --- bad traces through the command line ------------------------------------------------------

ROW = "2017-10-09 07:01:55,66.0,1,66.0,a\n"


@pytest.mark.parametrize("content, where, message", [
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,nan,1,66.0,a\n", ":3:", "column duration"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,inf,1,66.0,a\n", ":3:", "column duration"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,-5,1,66.0,a\n", ":3:", "column duration"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,abc,1,66.0,a\n", ":3:", "column duration"),
    # float() takes these; a trace's numbers are ASCII decimals
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,1_000,1,66.0,a\n", ":3:", "column duration"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,5,\u0661,66.0,a\n", ":3:", "column num_gpus"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,5,1,\uff16\uff16,a\n", ":3:", "column gpu_time"),
    (PHILLY_HEADER + ROW + "2017-02-30 07:01:55,5,1,66.0,a\n", ":3:", "column timestamp"),
    (PHILLY_HEADER + ROW + "yesterday,5,1,66.0,a\n", ":3:", "column timestamp"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,5,0,66.0,a\n", ":3:", "column num_gpus"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,5,1.5,66.0,a\n", ":3:", "column num_gpus"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,5,1\n", ":3:", "expected 5 columns"),
    (PHILLY_HEADER + ROW + "2017-10-09 07:01:55,5,1,5,a,extra\n", ":3:", "expected 5 columns"),
    # a quoted field with line breaks: the row is named by the line it starts on
    (PHILLY_HEADER + ROW + '2017-10-09 07:01:55,abc,1,66.0,"vc\nsecond\nthird"\n', ":3:",
     "column duration"),
    (PHILLY_HEADER + ROW + '2017-10-09 07:01:55,5,"1\n2",66.0,a\n', ":3:", "column num_gpus"),
])
def test_malformed_row_refused_or_skipped(tmp_path, capfd, content, where, message):
    trace = write(tmp_path / "t.csv", content)
    out = tmp_path / "inst.json"
    rc, _, err = run_cli(["import", "philly", str(trace), "-o", str(out)], capfd)
    assert rc == 2 and not out.exists()
    assert f"t.csv{where}" in err and message in err and len(err.strip().splitlines()) == 1
    rc, stdout, _ = run_cli(["import", "philly", str(trace), "-o", str(out), "--skip-bad",
                             "--json"], capfd)
    assert rc == 0 and json.loads(stdout)["skipped"] == 1 and json.loads(stdout)["jobs"] == 1
    assert load_instance(out).num_jobs == 1
    # what was skipped is said, where and why
    first = json.loads(stdout)["first_skipped"]
    assert f"t.csv{where}" in first and message in first
    rc, stdout, _ = run_cli(["import", "philly", str(trace), "-o", str(out), "--skip-bad"], capfd)
    assert rc == 0 and f"1 bad rows skipped (first: {first})" in stdout


@pytest.mark.parametrize("content, message", [
    (b"", "empty trace"),
    (b"\n\n  \n", "empty trace"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text file"),
    (b"\xff\xfe\xfa timestamp", "not UTF-8 text"),
    (PHILLY_HEADER.encode(), "no usable job"),
    (ROW.encode(), "missing or unexpected header"),
    (b"timestamp,duration,duration,gpu_time,cluster\n" + ROW.encode(), "duplicate column"),
    (b"time,duration,num_gpus,gpu_time,cluster\n" + ROW.encode(), "missing or unexpected"),
    (PHILLY_HEADER.encode() + b'2017-10-09 07:01:55,"66.0,1,66.0,a\n', "not CSV"),
])
def test_bad_files_one_message(tmp_path, capfd, content, message):
    trace = tmp_path / "t.csv"
    trace.write_bytes(content)
    out = tmp_path / "inst.json"
    rc, stdout, err = run_cli(["import", "philly", str(trace), "-o", str(out), "--skip-bad"],
                              capfd)
    assert rc == 2 and not out.exists() and stdout == ""
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_broken_quoting_names_the_row_where_it_starts(tmp_path, capfd):
    # the quote opened on line 3 is never closed: csv notices at the end of the file
    trace = write(tmp_path / "t.csv", PHILLY_HEADER + ROW + '2017-10-09 07:01:55,"66\n'
                  + ROW + ROW)
    rc, _, err = run_cli(["import", "philly", str(trace), "-o", str(tmp_path / "i.json")],
                         capfd)
    assert rc == 2 and err.strip() == (f"oasis-opt import: error: {trace}:3: not CSV: "
                                       "unexpected end of data (at line 5 of the row "
                                       "starting here)")


@pytest.mark.parametrize("args, message", [
    (["--horizon", "100000000000"], "--horizon: 100000000000 slots is too large"),
    (["--jobs", "5000", "--horizon", "100000000", "--slot-seconds", "100000"],
     "worker-slots × 100000000 slots is too large"),
    (["--slot-seconds", "0.001"], "too large"),
    (["--start", "5000"], "--start: 5000 is past the 2000 usable jobs"),
    (["--throughputs", "x.json"], "--throughputs: applies to gavel, not philly"),
    (["--elastic", "0.5"], "--elastic: must be at least 1"),
    (["--efficiency", "1.5"], "--efficiency: must be in [0, 1]"),
])
def test_bad_options(tmp_path, capfd, args, message):
    out = tmp_path / "inst.json"
    rc, _, err = run_cli(["import", "philly", str(SAMPLES / "adaptdl" / "philly.csv"),
                          "-o", str(out), *args], capfd)
    assert rc == 2 and not out.exists() and message in err, err


def test_unknown_format(tmp_path, capfd):
    rc, _, err = run_cli(["import", "slurm", "x.csv", "-o", str(tmp_path / "i.json")], capfd)
    assert rc == 2 and "unknown trace format 'slurm'" in err


# --- the command: JSON, determinism, every algorithm runs -------------------------------------


def test_same_command_same_bytes(tmp_path, capfd):
    trace = str(SAMPLES / "gavel" / "msr" / "seed=0" / "6214e9.trace")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    rc, stdout, _ = run_cli(["import", "gavel", trace, "-o", str(a), "--json"], capfd)
    assert rc == 0
    data = json.loads(stdout)
    assert data["jobs"] == 40 and data["horizon"] == 100 and data["skipped"] == 0
    assert run_cli(["import", "gavel", trace, "-o", str(b), "--json"], capfd)[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_every_algorithm_and_the_optimum_on_an_import(tmp_path, capfd):
    from oasis_opt.offline import solve
    from oasis_opt.validate import validate
    out = tmp_path / "t.json"
    rc, _, _ = run_cli(["import", "tiresias", str(SAMPLES / "tiresias" / "60_job.csv"),
                        "--jobs", "6", "--horizon", "16", "-o", str(out)], capfd)
    assert rc == 0
    inst = load_instance(out)
    sched, rep = solve(inst, time_limit=20)
    assert rep.status == "optimal" and validate(inst, sched).feasible
    utilities = {n: algorithms.run(n, inst).total_utility for n in algorithms.builtin_names()}
    assert all(u <= rep.objective * (1 + 1e-6) + 1e-9 for u in utilities.values())
    assert max(utilities.values()) > 0  # the import is not degenerate
    # contended: the optimum does not finish every job at its best utility
    best_alone = sum(float(j.utility.values(inst.horizon)[0]) for j in inst.jobs)
    assert rep.objective < best_alone


def test_trace_experiment_quick(tmp_path):
    from oasis_opt.experiments import run_experiment
    res = run_experiment("trace", quick=True, seeds=1, out=tmp_path)
    rows = _read(tmp_path / "trace.csv")
    assert res["tasks_run"] == 2 and len(rows) == 2 * (len(algorithms.builtin_names()) + 1)
    for r in rows:
        if r["opt_kind"] == "optimal" and r["algorithm"] != "optimal":
            assert float(r["ratio"]) >= 1 - 1e-6  # nothing beats the proven optimum
    assert (tmp_path / "trace.png").stat().st_size > 1000
    assert set(res["summary"]) == {"tiresias@1", "tiresias@2"}


# --- the copies in ../shared/traces ----------------------------------------------------------


@needs_shared
@pytest.mark.slow
@pytest.mark.parametrize("fmt, rel, start, options", [
    ("philly", "adaptdl/philly.csv", 1000, {"cluster": "6214e9"}),
    ("gavel", "gavel/msr/seed=1/b436b2.trace", 0, {}),
    ("pollux", "adaptdl/workloads-1.5/workload-3.csv", 0, {}),
    ("tiresias", "tiresias/60_job.csv", 0, {}),
    ("alibaba", "alibaba-gpu-v2023/openb_pod_list_gpushare40.csv", 1000, {}),
])
def test_shared_traces_import(tmp_path, fmt, rel, start, options):
    res = import_trace(fmt, SHARED / rel, Policy(start=start), **options)
    out = tmp_path / "i.json"
    save_instance(res.instance, out)
    inst = load_instance(out)
    assert inst.num_jobs == 40 and inst.horizon == 100 and res.skipped == 0
    assert inst.extra["trace"]["sha256"] and inst.extra["trace"]["file_name"] == Path(rel).name
    # contended by default: the GPU work the horizon can hold is about 1.5 × the capacity
    # (less when rounding up to whole nodes, or when one node is already too many)
    held = np.minimum(inst.workload, inst.max_workers * (inst.horizon - inst.arrival))
    demand = float((held * inst.worker_demand[:, 0]).sum())
    capacity = float(inst.worker_capacity[:, 0].sum()) * inst.horizon
    assert demand > 0.75 * capacity or len(inst.worker_names) == 1
    assert res.report()["gpus"] < res.peak_gpus  # smaller than the slice's peak demand
    algorithms.run("oasis", inst)  # validated inside


@needs_shared
@pytest.mark.slow
def test_every_shared_gavel_trace_imports():
    for path in sorted((SHARED / "gavel" / "msr").glob("seed=*/*.trace")):
        if path.stat().st_size == 0:
            with pytest.raises(InputError, match="empty trace"):
                import_trace("gavel", path, Policy())
            continue
        assert import_trace("gavel", path, Policy()).instance.num_jobs >= 1


# --- hostile input: whatever the bytes, one InputError or an instance -------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_CELLS = st.sampled_from(["0", "1", "4", "-1", "2.5", "1e400", "nan", "", "x", "\"", "a,b",
                          "2017-10-09 07:01:55", "2017-02-30 07:01:55", "Running", "Pending",
                          "Succeeded", "1000", "99999999999999999999"])
_HEADERS = {
    "philly": PHILLY_HEADER.strip(),
    "tiresias": "job_id,num_gpu,submit_time,iterations,model_name,duration,interval",
    "alibaba": POD_HEADER.strip(),
}


_GOOD = {
    "philly": ["2017-10-09 07:01:55", "66.0", "1", "66.0", "a"],
    "tiresias": ["0", "1", "0", "606", "vgg19", "164", "30"],
    "alibaba": ["p0", "12000", "16384", "1", "460", "", "LS", "Succeeded", "0", "1200", "100"],
}
_ROW = st.one_of(
    st.lists(_CELLS, min_size=0, max_size=12),  # noise
    st.tuples(st.integers(0, 10), _CELLS),       # a good row with one cell replaced
    st.none(),                                   # a good row
)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(sorted(_HEADERS)), header=st.booleans(),
       rows=st.lists(_ROW, max_size=6), sep=st.sampled_from([",", ",", "\t"]),
       skip=st.booleans())
def test_random_rows_never_crash(tmp_path, fmt, header, rows, sep, skip):
    lines = []
    for k, r in enumerate(rows):
        good = list(_GOOD[fmt])
        good[0] = good[0] if fmt == "philly" else f"{k}"  # unique ids
        if isinstance(r, tuple):
            good[r[0] % len(good)] = r[1]
        lines.append(sep.join(good if not isinstance(r, list) else r))
    text = (_HEADERS[fmt] + "\n" if header else "") + "\n".join(lines)
    trace = write(tmp_path / "t.csv", text)
    write(tmp_path / "openb_node_list_gpu_node.csv", NODES)
    try:
        res = import_trace(fmt, trace, Policy(skip_bad=skip, horizon=50))
    except InputError as err:
        assert str(err) and "\n" not in str(err)
        return
    inst = res.instance
    assert inst.num_jobs >= 1 and res.skipped <= len(rows)
    assert skip or res.skipped == 0
    out = tmp_path / "i.json"
    save_instance(inst, out)
    assert load_instance(out).num_jobs == inst.num_jobs  # what is written is a valid instance


def test_random_rows_strategy_reaches_instances(tmp_path):
    """The property above sees instances, not only refusals: a good row imports."""
    for fmt, good in _GOOD.items():
        trace = write(tmp_path / f"{fmt}.csv", _HEADERS[fmt] + "\n" + ",".join(good) + "\n")
        write(tmp_path / "openb_node_list_gpu_node.csv", NODES)
        assert import_trace(fmt, trace, Policy(horizon=50)).instance.num_jobs == 1


def test_bad_measurement_file_named(tmp_path):
    import shutil
    apps = tmp_path / "apps"
    shutil.copytree(SAMPLES / "adaptdl" / "apps" / "ncf", apps / "ncf")
    lines = (apps / "ncf" / "placements.csv").read_text().splitlines()
    lines[3] = "1,64,fast,0.1"
    (apps / "ncf" / "placements.csv").write_text("\n".join(lines) + "\n")
    trace = write(tmp_path / "w.csv", "name,time,application,num_replicas,batch_size\n"
                                      "ncf-0,0,ncf,1,32768\n")
    with pytest.raises(InputError, match="column step_time: expected a number") as err:
        import_trace("pollux", trace, Policy(), apps=apps)
    assert err.value.place.endswith("placements.csv:4")
    bad_app = write(tmp_path / "w2.csv", "name,time,application,num_replicas,batch_size\n"
                                         "x-0,0,gpt,1,32\n")
    with pytest.raises(InputError, match=r"w2.csv:2: column application: 'gpt' has no"):
        import_trace("pollux", bad_app, Policy(), apps=apps)


@pytest.mark.parametrize("rows", ["", "1.5,0,0.1,1,1\n2.5,0,0.2,1,1\n"])
def test_a_validation_file_with_no_steps_is_named_not_missing(tmp_path, rows):
    """A validation-B.csv holding only its header, or iterations of 0, was reported as
    "no validation-B.csv for APP": the file is there, and its rows are what is wrong."""
    import shutil
    apps = tmp_path / "apps"
    shutil.copytree(SAMPLES / "adaptdl" / "apps" / "ncf", apps / "ncf")
    name = next(p.name for p in (apps / "ncf").glob("validation-*.csv"))
    batch = name.removeprefix("validation-").removesuffix(".csv")
    (apps / "ncf" / name).write_text("progress,iteration,metric,grad_sqr,grad_var\n" + rows)
    trace = write(tmp_path / "w.csv", "name,time,application,num_replicas,batch_size\n"
                                      f"ncf-0,0,ncf,1,{batch}\n")
    with pytest.raises(InputError, match="no row with a positive iteration") as err:
        import_trace("pollux", trace, Policy(), apps=apps)
    assert err.value.place == str(apps / "ncf" / name)


def test_a_step_of_no_time_is_a_bad_measurement_row(tmp_path):
    """step_time = sync_time = 0 was read, then the job's replicas "were not measured"."""
    import shutil
    apps = tmp_path / "apps"
    shutil.copytree(SAMPLES / "adaptdl" / "apps" / "ncf", apps / "ncf")
    lines = (apps / "ncf" / "placements.csv").read_text().splitlines()
    cells = lines[1].split(",")
    lines[1] = ",".join([cells[0], cells[1], "0", "0"])
    (apps / "ncf" / "placements.csv").write_text("\n".join(lines) + "\n")
    trace = write(tmp_path / "w.csv", "name,time,application,num_replicas,batch_size\n"
                                      "ncf-0,0,ncf,1,32768\n")
    with pytest.raises(InputError, match="step_time \\+ sync_time: a step takes no time") as err:
        import_trace("pollux", trace, Policy(), apps=apps)
    assert err.value.place == f"{apps / 'ncf' / 'placements.csv'}:2"


def test_columns_are_read_by_name_in_any_order(tmp_path, capfd):
    """A trace whose columns come in another order (a spreadsheet's export, a script's
    dict writer) was refused as a missing header; it imports the same instance now."""
    rows = [ROW, "2017-10-09 07:05:00,120.5,2,241.0,b\n"]
    order = [4, 2, 0, 3, 1]  # cluster,num_gpus,timestamp,gpu_time,duration

    def reordered(line: str) -> str:
        fields = line.rstrip("\n").split(",")
        return ",".join(fields[k] for k in order) + "\n"
    same = write(tmp_path / "same.csv", PHILLY_HEADER + "".join(rows))
    moved = write(tmp_path / "moved.csv", reordered(PHILLY_HEADER)
                  + "".join(reordered(r) for r in rows))
    for trace in (same, moved):
        rc, _, err = run_cli(["import", "philly", str(trace), "-o",
                              str(tmp_path / f"{trace.stem}.json")], capfd)
        assert rc == 0, err
    a = json.loads((tmp_path / "same.json").read_text())
    b = json.loads((tmp_path / "moved.json").read_text())
    for doc in (a, b):  # what names the file differs, what was read from it does not
        for key in ("name", "trace", "description"):
            doc.pop(key, None)
    assert a == b and len(a["jobs"]) == 2


@pytest.mark.parametrize("head, why", [
    ("timestamp,duration,num_gpus,cluster\n", "(missing gpu_time)"),
    ("timestamp,duration,num_gpus,gpu_time,cluster,user\n", "(unexpected user)"),
    ("timestamp,runtime,num_gpus,gpu_time,cluster\n", "(missing duration; unexpected runtime)"),
])
def test_a_header_names_what_it_misses(tmp_path, capfd, head, why):
    trace = write(tmp_path / "t.csv", head + ROW)
    rc, _, err = run_cli(["import", "philly", str(trace), "-o", str(tmp_path / "i.json")],
                         capfd)
    assert rc == 2 and f"t.csv:1: missing or unexpected header {why}: expected" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "i.json").exists()


def test_a_list_of_names_in_a_message_is_clipped(tmp_path, capfd):
    """``--cluster nope`` listed every cluster of the trace: 20 000 of them made one line of
    200 kB; a gavel --gpu-type and a pollux application listed all theirs too."""
    rows = "".join(f"2017-10-09 07:00:00,90.0,1,90.0,vc{k:05d}\n" for k in range(20000))
    trace = write(tmp_path / "p.csv", PHILLY_HEADER + rows)
    rc, _, err = run_cli(["import", "philly", str(trace), "--cluster", "nope", "-o",
                          str(tmp_path / "i.json")], capfd)
    assert rc == 2 and err.count("\n") == 1 and len(err) < 400, err
    assert "(clusters: vc00000, vc00001, vc00002, vc00003, vc00004, vc00005, vc00006, " \
           "vc00007, … 20000 in all)" in err
    thr = write(tmp_path / "thr.json", json.dumps({f"gpu{k}": {} for k in range(5000)}))
    rc, _, err = run_cli(["import", "gavel", str(SAMPLES / "gavel" / "msr" / "seed=0" /
                                                 "6214e9.trace"),
                          "--throughputs", str(thr), "--gpu-type", "v100", "-o",
                          str(tmp_path / "i.json")], capfd)
    assert rc == 2 and len(err) < 400 and "… 5000 in all)" in err, err
    wide = write(tmp_path / "w.csv", "job_id,num_gpu,submit_time,iterations,model_name,"
                 "duration,interval," + ",".join(f"c{k}" for k in range(20000)) + "\n")
    rc, _, err = run_cli(["import", "tiresias", str(wide), "-o", str(tmp_path / "i.json")],
                         capfd)
    assert rc == 2 and len(err) < 600 and "(unexpected c0, c1, c2, c3, c4, c5, c6, c7, … " \
        "20000 in all)" in err, err


def test_a_trace_too_large_for_the_memory_limit_is_refused_before_it_is_parsed(tmp_path,
                                                                                capfd):
    """Every row becomes a dict of strings (about 1 kB for a row of 25 bytes): a 29 MB trace
    took 1.1 GB under --max-memory 256M, a 512 MB one (the most an importer reads) would take
    20 GB. The rows and fields are counted first."""
    rows = "".join(f"{k},1,{k},10,vgg,100,1\n" for k in range(100_000))
    trace = write(tmp_path / "t.csv", "job_id,num_gpu,submit_time,iterations,model_name,"
                                      "duration,interval\n" + rows)
    rc, _, err = run_cli(["import", "tiresias", str(trace), "--max-memory", "32M", "-o",
                          str(tmp_path / "i.json")], capfd)
    assert rc == 2 and not (tmp_path / "i.json").exists()
    assert f"{trace}: reading this trace (100001 lines, 700007 fields) is too large" in err, err
    assert "raise it with --max-memory" in err and err.count("\n") == 1
    rc, _, err = run_cli(["import", "tiresias", str(trace), "--max-memory", "1G", "-o",
                          str(tmp_path / "i.json")], capfd)
    assert rc == 0, err


def test_the_trace_samples_are_found_where_the_package_is_installed(monkeypatch, tmp_path):
    """A non-editable install ships the samples as package data
    (``oasis_opt/data/instances/traces``, pyproject's package-data); ``experiment trace``
    looked for them beside the package's parent folder only, and ended in "cannot read
    trace" (an outside audit). A checkout reads the repository's folder."""
    from oasis_opt import io
    from oasis_opt.traces import experiment
    assert experiment.samples_root() == io.SOURCE_FOLDER / "traces"
    assert experiment.resolve("samples:tiresias/60_job.csv").is_file()
    (tmp_path / "traces" / "tiresias").mkdir(parents=True)
    monkeypatch.setattr(experiment, "DATA_FOLDER", tmp_path)
    assert experiment.resolve("samples:tiresias/60_job.csv") == \
        tmp_path / "traces" / "tiresias" / "60_job.csv"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"oasis_opt.data.instances" = ["*.json", "traces/**/*"]' in pyproject
