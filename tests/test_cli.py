"""The command line contract of SPEC §6 for generate and validate: exit codes, --json, messages,
nothing written on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import INSTANCES, ROOT

from oasis_opt.cli import main

PHILLY = str(ROOT / "instances" / "traces" / "adaptdl" / "philly.csv")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """A real process, so that file-descriptor-level stdout hygiene is tested too."""
    return subprocess.run([sys.executable, "-m", "oasis_opt", *args], capture_output=True,
                          text=True, timeout=300)


def test_generate_json_and_file(tmp_path):
    out = tmp_path / "p.json"
    r = run_cli("generate", "--preset", "small", "--seed", "2", "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["name"] == "small-s2" and out.exists()
    again = tmp_path / "q.json"
    assert main(["generate", "--preset", "small", "--seed", "2", "-o", str(again)]) == 0
    assert again.read_text() == out.read_text()


def test_validate_exit_codes(tmp_path):
    inst = str(INSTANCES / "edge-zero-tail.json")
    sched = {"format": "oasis-schedule/1", "instance": "edge-zero-tail", "algorithm": "hand",
             "total_utility": 9,
             "jobs": [{"id": "a", "completed": True, "completion_slot": 1, "utility": 9,
                       "allocations": [{"slot": 0, "workers": {"w": 2}, "ps": {"p": 1}},
                                       {"slot": 1, "workers": {"w": 2}, "ps": {"p": 1}}]}]}
    good = tmp_path / "good.json"
    good.write_text(json.dumps(sched))
    r = run_cli("validate", inst, str(good), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_utility"] == 9

    sched["jobs"][0]["allocations"][1]["workers"]["w"] = 3  # 3 > max_workers, 3 GPUs > 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(sched))
    r = run_cli("validate", inst, str(bad))
    assert r.returncode == 1
    assert "max_workers" in r.stdout and "capacity" in r.stdout

    sched["jobs"][0]["allocations"][1]["workers"] = {"nowhere": 1}
    bad.write_text(json.dumps(sched))
    r = run_cli("validate", inst, str(bad), "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert "jobs[0].allocations[1].workers: unknown worker server 'nowhere'" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args,message", [
    (["generate", "--preset", "small", "--jobs", "-3", "-o", "X"], "--jobs must be at least 0"),
    (["generate", "--preset", "small", "--horizon", "0", "-o", "X"], "--horizon must be at least 1"),
    (["generate", "--preset", "small", "--horizon", "-2", "-o", "X"], "--horizon must be at least 1"),
    (["run", "INST", "--algorithm", "oasis", "--u-scale", "-1"], "--u-scale must be a positive"),
    (["solve", "INST", "--time-limit", "0"], "--time-limit must be a positive"),
    (["run", "INST", "--algorithm", "magic"], "--algorithm: unknown algorithm 'magic'"),
    (["generate", "--preset", "small", "-o", "/proc/no-such-dir/x.json"], "cannot write"),
    # flags that must be ≥ 1 say so for 0 and for a negative alike
    (["import", "philly", PHILLY, "-o", "X", "--jobs", "0"], "--jobs must be at least 1"),
    (["import", "philly", PHILLY, "-o", "X", "--jobs", "-3"], "--jobs must be at least 1"),
    (["import", "philly", PHILLY, "-o", "X", "--servers", "-2"], "--servers must be at least 1"),
    (["import", "philly", PHILLY, "-o", "X", "--horizon", "0"], "--horizon must be at least 1"),
])
def test_bad_parameters_exit_2_and_write_nothing(tmp_path, args, message):
    args = [a.replace("X", str(tmp_path / "out.json"))
            .replace("INST", str(INSTANCES / "small-s0.json")) for a in args]
    r = run_cli(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("args,occupied,message", [
    # a value the algorithm refuses: found by the first candidate, after the progress bar
    (["adversary", "--algorithm", "oasis", "--param", "u_scale=-1", "--jobs", "2",
      "--evaluations", "2", "-o", "OUT/w.json"], None,
     "--param u_scale: must be a positive number, got -1"),
    # an output written after the run, a folder of that name: found when written, after
    # the progress bar and the files before it
    (["verify", str(INSTANCES / "spaces" / "tiny-2jobs.json"), "--algorithm", "oasis", "-o",
      "OUT"], "histogram.png", "OUT/histogram.png: cannot write: it is a folder"),
    (["experiment", "ratio", "--quick", "--seeds", "1", "--workers", "0", "--out", "OUT"],
     "ratio.png", "OUT/ratio.png: cannot write: it is a folder"),
])
def test_long_commands_refuse_bad_input_before_any_progress(tmp_path, args, occupied,
                                                            message):
    """Progress goes to stderr without --json: a bad input must be the only line there, and
    nothing may be written."""
    out = tmp_path / "out"
    out.mkdir()  # the -o file's folder exists (a missing one is refused first)
    if occupied:
        (out / occupied).mkdir(parents=True)
    r = run_cli(*(a.replace("OUT", str(out)) for a in args))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"oasis-opt {args[0]}: error: {message.replace('OUT', str(out))}\n"
    written = sorted(p.relative_to(out) for p in out.rglob("*")) if out.exists() else []
    assert [str(p) for p in written] == ([occupied] if occupied else [])


def test_bad_instance_exit_2(tmp_path):
    p = tmp_path / "i.json"
    d = json.loads((INSTANCES / "small-s0.json").read_text())
    d["jobs"][3]["worker_demand"] = [1, 2]
    p.write_text(json.dumps(d))
    r = run_cli("validate", str(p), str(p))
    assert r.returncode == 2
    assert r.stderr.strip().endswith("jobs[3].worker_demand: expected 4 values, got 2")


def test_help_is_there():
    r = run_cli("--help")
    assert r.returncode == 0 and "solve" in r.stdout and "exit status" in r.stdout
    assert run_cli().returncode == 2


# An output file in a folder that does not exist: the folder was made, silently, with every
# missing folder above it (a typo in -o left results in a new tree). Neither SPEC §5–§6 nor
# the docs promise that; like the shell's '>' and most tools, it is now bad input, naming
# the option and the folder, before anything runs, and nothing is made.
_SMALL = str(INSTANCES / "small-s1.json")
_TRACE = str(INSTANCES / "traces" / "tiresias" / "60_job.csv")


@pytest.mark.parametrize("argv, flag, path", [
    (["generate", "--preset", "small", "-o", "nope/x.json"], "-o", "nope/x.json"),
    (["run", _SMALL, "-a", "fifo", "-o", "nope/s.json"], "-o", "nope/s.json"),
    (["solve", _SMALL, "-o", "nope/deeper/s.json"], "-o", "nope/deeper/s.json"),
    (["ratio", _SMALL, "--algorithms", "fifo", "--plot", "nope/r.png"], "--plot", "nope/r.png"),
    (["show", _SMALL, _SMALL, "-o", "nope/x.png"], "-o", "nope/x.png"),
    (["export", _SMALL, "-o", "nope/m.lp"], "-o", "nope/m.lp"),
    (["import", "tiresias", _TRACE, "--jobs", "5", "-o", "nope/i.json"], "-o", "nope/i.json"),
    (["adversary", "-a", "fifo", "--evaluations", "2", "-o", "nope/w.json"], "-o",
     "nope/w.json"),
    (["adversary", "-a", "fifo", "--evaluations", "2", "-o", "w.json", "--trajectory",
      "nope/t"], "--trajectory", "nope/t"),
])
def test_an_output_file_in_a_missing_folder_is_bad_input(tmp_path, monkeypatch, capfd, argv,
                                                         flag, path):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capfd.readouterr()
    folder = path.rsplit("/", 1)[0]
    assert err == f"oasis-opt {argv[0]}: error: {flag}: cannot write {path!r}: the folder " \
                  f"{folder!r} does not exist\n", err
    assert out == "" and list(tmp_path.iterdir()) == []


def test_an_output_folder_is_still_made(tmp_path, monkeypatch, capfd):
    """A DIR option names the folder to fill, made with its parents (``verify -o``'s default
    is results/verify/NAME): unchanged."""
    monkeypatch.chdir(tmp_path)
    assert main(["adversary", "--family", "threshold", "--share", "0.5", "--steps", "2",
                 "-o", "new/deeper", "--json"]) == 0
    assert (tmp_path / "new" / "deeper" / "tightness.csv").is_file()


@pytest.mark.parametrize("command", ["validate", "show"])
def test_a_schedule_file_is_sized_beside_its_instance(tmp_path, capsys, monkeypatch, command):
    """``validate`` and ``show`` read the schedule file with its instance already loaded:
    the file's parsing is sized beside the instance's state (``io.check_file_beside``), and
    a limit the file alone would pass but not both is refused before the file is read,
    naming both sizes (an outside audit: ``validate`` of 20 000 Philly jobs and a 22 MB
    schedule held 478 MiB at ``--max-memory 360M``)."""
    from oasis_opt.io import JSON_MEMORY_FACTOR, instance_bytes, load_instance
    inst_path = INSTANCES / "testbed-s0.json"
    sched = tmp_path / "s.json"
    assert main(["run", str(inst_path), "-a", "fifo", "-o", str(sched)]) == 0
    alone = sched.stat().st_size * JSON_MEMORY_FACTOR
    held = instance_bytes(load_instance(inst_path))
    limit = int(alone + 0.5 * held)
    extra = ["-o", str(tmp_path / "s.svg")] if command == "show" else []
    capsys.readouterr()
    assert main([command, str(inst_path), str(sched), "--max-memory", str(limit), *extra]) == 2
    err = capsys.readouterr().err
    assert "beside its instance" in err and "too large" in err
    if command == "show":
        assert not (tmp_path / "s.svg").exists()
    assert main([command, str(inst_path), str(sched), "--max-memory",
                 str(int(alone + 2 * held)), *extra]) == 0
