"""The command line against hostile options, output paths and addresses (the defects found by
``tools/hostile_probe.py``): each class pinned by exit status, the message's place, and
nothing written. Hostile files and numbers in files are ``test_hostile.py``'s."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from oasis_opt import cli

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "instances" / "small-s0.json"
TIRESIAS = ROOT / "instances" / "traces" / "tiresias" / "60_job.csv"
SPACE = ROOT / "instances" / "spaces" / "tiny-2jobs.json"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if "error" in x]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    return lines[0]


@pytest.fixture
def fifo_schedule(tmp_path) -> Path:
    path = tmp_path / "fifo.json"
    assert cli.main(["run", str(SMALL), "-a", "fifo", "-o", str(path)]) == 0
    return path


# --- output paths: refused before the work, never an internal error ---------------------


def _writers(tmp_path: Path, out: str, schedule: Path) -> list[list[str]]:
    return [["run", SMALL, "-a", "fifo", "-o", out],
            ["solve", SMALL, "-o", out],
            ["generate", "--preset", "small", "-o", out],
            ["import", "tiresias", TIRESIAS, "-o", out],
            ["export", SMALL, "-o", out + ".lp"],
            ["show", SMALL, schedule, "-o", out + ".png"],
            ["adversary", "-a", "fifo", "--evaluations", "1", "-o", out]]


@pytest.mark.parametrize("which", range(7))
def test_an_output_that_is_a_folder_is_refused(tmp_path, capsys, fifo_schedule, which,
                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "taken"
    for name in ("taken", "taken.lp", "taken.png"):
        (tmp_path / name).mkdir()
    argv = _writers(tmp_path, str(folder), fifo_schedule)[which]
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = _run(capsys, *argv)
    assert code == 2, err
    assert "cannot write: it is a folder" in _one_error(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary left over


@pytest.mark.parametrize("which", ["long", "socket"])
def test_an_output_no_file_can_be_is_refused_by_its_reason(tmp_path, capsys, monkeypatch,
                                                          which):
    """A name of 5 000 characters ended in "internal error: [Errno 36] File name too long"
    (exit 1); a socket was called "a named pipe that no process reads"."""
    monkeypatch.chdir(tmp_path)
    if which == "long":
        out, why = "a" * 5000 + ".json", "cannot write: File name too long"
    else:
        out, why = "sock.json", "cannot write: it is a socket, not a file"
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(tmp_path / out))
    try:
        code, _, err = _run(capsys, "run", SMALL, "-a", "fifo", "-o", out)
    finally:
        if which == "socket":
            listener.close()
    assert code == 2, err
    assert why in _one_error(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if which == "long" else [out])


@pytest.mark.parametrize("argv,message", [
    (["import", "tiresias", "LONG.csv", "-o", "o.json"], "LONG.csv: cannot read trace: File "
                                                         "name too long"),
    (["import", "pollux", ROOT / "instances" / "traces" / "adaptdl" / "workloads" /
      "workload-1.csv", "--apps", "LONG", "-o", "o.json"], "--apps: LONG is not a folder"),
    (["ratio", SMALL, "--algorithms", "fifo", "--opt-cache", "LONG"],
     "--opt-cache: cannot use 'LONG' as a folder: File name too long"),
    (["adversary", "--family", "threshold", "--steps", "3", "-o", "LONG"],
     "-o: cannot use 'LONG' as a folder: File name too long"),
])
def test_a_path_too_long_for_the_system_is_bad_input(tmp_path, capsys, monkeypatch, argv,
                                                     message):
    """Each ended in "internal error: [Errno 36] File name too long" (exit 1): the checks
    themselves (Path.is_dir, exists) raise for such a name."""
    monkeypatch.chdir(tmp_path)
    long = "b" * 5000
    code, _, err = _run(capsys, *[str(a).replace("LONG", long) for a in argv])
    assert code == 2, err
    assert message.replace("LONG", long)[:60] in _one_error(err).replace("…", "")
    assert "too long" in err or "not a folder" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("out,message", [(".", "'.' names no file"),
                                         ("", "names no file"),
                                         ("afile/x.json", "'afile' is a file, not a folder")])
def test_an_output_that_names_no_file_is_refused(tmp_path, capsys, monkeypatch, out, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    for argv in (["run", SMALL, "-a", "fifo", "-o", out],
                 ["adversary", "-a", "fifo", "--evaluations", "1", "-o", out]):
        code, _, err = _run(capsys, *argv)
        assert code == 2, err
        assert message in _one_error(err)


def test_ratio_plot_into_a_folder_is_refused_before_the_solve(tmp_path, capsys):
    (tmp_path / "p.png").mkdir()
    code, _, err = _run(capsys, "ratio", SMALL, "--algorithms", "fifo", "--plot",
                        tmp_path / "p.png", "--json")
    assert code == 2
    assert "--plot: cannot write" in _one_error(err) and "it is a folder" in err


def test_a_named_pipe_nobody_reads_is_refused_not_waited_on(tmp_path, capsys):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code, _, err = _run(capsys, "run", SMALL, "-a", "fifo", "-o", pipe)
    assert code == 2
    assert "a named pipe that no process reads" in _one_error(err)
    assert pipe.exists() and not pipe.is_file()  # still the pipe, not replaced by a file


def test_a_named_pipe_with_a_reader_gets_the_file_in_place(tmp_path, capsys):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    try:
        # the reader's open and ours meet; retry while the reader has not opened yet
        for _ in range(200):
            code, _, err = _run(capsys, "run", SMALL, "-a", "fifo", "-o", pipe, "--json")
            if code == 0:
                break
            threading.Event().wait(0.05)
    finally:
        if not got and reader.is_alive():
            try:  # let the reader end; non-blocking: it may have read and not yet appended
                os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader on the pipe any more
                pass
        reader.join(timeout=30)
    assert code == 0, err
    assert json.loads(got[0])["format"] == "oasis-schedule/1"
    assert not pipe.is_file()  # a rename would have replaced the pipe (or a device) by a file


@pytest.mark.parametrize("argv", [
    ["experiment", "ratio", "--quick", "--seeds", "1", "--workers", "0", "--out"],
    ["verify", SPACE, "-a", "fifo", "-o"],
])
def test_a_results_folder_that_is_a_file_is_refused(tmp_path, capsys, argv):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = _run(capsys, *argv, afile)
    assert code == 2, err
    assert "'" + str(afile) + "' is a file, not a folder" in _one_error(err)
    assert afile.read_text() == "x"


def test_a_results_file_that_is_not_utf8_is_refused(tmp_path, capsys):
    (tmp_path / "ratio.csv").write_bytes(b"\xff\xfe\n")
    code, _, err = _run(capsys, "experiment", "ratio", "--quick", "--seeds", "1", "--workers",
                        "0", "--out", tmp_path)
    assert code == 2
    assert "ratio.csv: not a results file: not UTF-8 text (byte 0)" in _one_error(err)


@pytest.mark.parametrize("taken", ["tightness.png", "threshold-c10-k2.json"])
def test_adversary_family_writes_nothing_when_one_file_cannot_be(tmp_path, capsys, taken):
    """A folder where a later file goes (the figure, an instance) was found only when that
    file was written: tightness.csv (and the figure) were left behind, exit 2."""
    (tmp_path / "fam" / taken).mkdir(parents=True)
    code, _, err = _run(capsys, "adversary", "--family", "threshold", "--steps", "2",
                        "--share", "0.1", "-o", tmp_path / "fam")
    assert code == 2
    assert f"{taken}: cannot write: it is a folder" in _one_error(err)
    assert [p.name for p in (tmp_path / "fam").iterdir()] == [taken]


def test_adversary_family_into_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    code, _, err = _run(capsys, "adversary", "--family", "threshold", "-o",
                        tmp_path / "afile")
    assert code == 2
    assert "-o: cannot use" in _one_error(err) and "it is a file" in err


# --- numbers that pass a flag's check and overflow later ---------------------------------


@pytest.mark.parametrize("argv,code,message", [
    (["import", "tiresias", TIRESIAS, "--slot-seconds", "1e-320"], 2,
     "workload (worker-slots; raise --slot-seconds) inf is too large"),
    (["import", "tiresias", TIRESIAS, "--load", "1e-320"], 0, None),  # the trace's cluster
    (["adversary", "--family", "threshold", "--share", "1e-320"], 2,
     "--share: 9.99989e-321 means more than 5000 jobs per block"),
    (["adversary", "-a", "fifo", "--evaluations", "10" + "0" * 29], 2,
     "--evaluations: must be in 1 … 1000000"),
    (["experiment", "ratio", "--seeds", "10" + "0" * 29, "--workers", "0"], 2,
     "--seeds: must be in 1 … 100000"),
    # deeper than the parser follows, closed or not: how deep it can go depends on the stack
    # below the command (under pytest 950 levels were a RecursionError, "not a JSON value")
    (["run", SMALL, "-a", "oasis", "--param", "u_scale=" + "[" * 5000], 2,
     "--param u_scale: nested too deeply (more than 100 levels)"),
    # JSON reads 950 levels; the checks after it recursed: 'internal error: maximum recursion'
    (["run", SMALL, "-a", "oasis", "--param", "u_scale=" + "[" * 950 + "]" * 950], 2,
     "--param u_scale: nested too deeply (more than 100 levels)"),
    (["adversary", "-a", "oasis", "--evaluations", "1", "--param",
      "u_scale=" + "[" * 950 + "]" * 950], 2,
     "--param u_scale: nested too deeply (more than 100 levels)"),
])
def test_extreme_numbers_in_flags(tmp_path, capsys, argv, code, message):
    out = tmp_path / "x.json"  # (in a folder that exists: a missing one is refused first)
    argv = argv + (["-o", out] if argv[0] in ("import", "adversary") else
                   ["--out", tmp_path / "e"] if argv[0] == "experiment" else [])
    got, _, err = _run(capsys, *argv)
    assert got == code, err
    if message is not None:
        line = _one_error(err)
        assert message in line
        assert len(line) < 300  # a hostile value is clipped, not echoed whole
        assert not out.exists() and not (tmp_path / "e").exists()


@pytest.mark.parametrize("scale,message", [
    ("²", "expected slice sizes (jobs), 'research' or 'whole', got '²'"),
    ("٣", "got '٣'"),  # a digit to Python, not to us
    ("40,,40", "got ''"),
    ("10" + "0" * 29, "no trace here holds a slice of 1" + "0" * 30 + " jobs"),
])
def test_trace_scale_refused_by_name(tmp_path, capsys, scale, message):
    code, _, err = _run(capsys, "experiment", "trace", "--scale", scale, "--seeds", "1",
                        "--workers", "0", "--out", tmp_path / "e")
    assert code == 2, err
    line = _one_error(err)
    assert "--scale: " in line and message in line
    assert not (tmp_path / "e").exists()


def test_research_scale_without_the_whole_traces_says_where_it_looked(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.setenv("OASIS_TRACES", str(tmp_path / "none"))
    code, _, err = _run(capsys, "experiment", "trace", "--scale", "research", "--seeds", "1",
                        "--workers", "0", "--out", tmp_path / "e")
    assert code == 2
    assert "no trace here holds a slice of 1000, 5000 jobs" in _one_error(err)
    assert str(tmp_path / "none") in err and "none found there" in err


# --- --dask: fail fast, one line ---------------------------------------------------------


def _server(reply: bytes | None):
    """A TCP server on loopback that accepts, then sends ``reply`` (None: says nothing)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []
    stop = threading.Event()

    def serve():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            conns.append(c)
            if reply is not None:
                c.sendall(reply)
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, stop, conns, t


@pytest.mark.parametrize("reply,message", [
    (None, "no Dask scheduler answered at"),  # an HTTP server waits for a request line
    # an HTTP server's answer read as a Dask frame: a length of exabytes
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
     "does not speak Dask's protocol"),
])
@pytest.mark.parametrize("command", [["ratio", SMALL, "--algorithms", "fifo"],
                                     ["solve", SMALL]])
def test_dask_address_of_a_stranger_fails_fast(capsys, monkeypatch, reply, message, command):
    pytest.importorskip("distributed")
    from oasis_opt import tasks
    monkeypatch.setattr(tasks, "DASK_CONNECT_SECONDS", 0.5)
    srv, stop, conns, t = _server(reply)
    try:
        address = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
        code, _, err = _run(capsys, *command, "--dask", address, "--json")
    finally:
        stop.set()
        t.join()
        for c in conns:
            c.close()
        srv.close()
    assert code == 2
    line = _one_error(err)
    assert line.startswith(f"oasis-opt {command[0]}: error: --dask: ") and message in line


@pytest.mark.parametrize("address", ["nope", "tcp://", "tcp://[::1", "inproc://x"])
def test_dask_address_that_is_not_one(capsys, address):
    pytest.importorskip("distributed")
    code, _, err = _run(capsys, "ratio", SMALL, "--algorithms", "fifo", "--dask", address)
    assert code == 2
    assert "--dask: cannot reach the Dask scheduler at" in _one_error(err)


@pytest.mark.parametrize("command", [["ratio", SMALL, "--algorithms", "fifo"],
                                     ["verify", SPACE, "-a", "fifo", "-o", "{tmp}/v"]])
def test_workers_with_a_dask_scheduler_is_refused(capsys, tmp_path, command):
    """``--workers 2 --dask tcp://…`` was taken and the 2 ignored: a scheduler's workers are
    its own (with ``--dask local`` it sizes the local cluster)."""
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in command]
    code, out, err = _run(capsys, *argv, "--workers", "2", "--dask", "tcp://127.0.0.1:1")
    assert code == 2 and out == "" and not (tmp_path / "v").exists()
    assert _one_error(err).endswith("error: --workers: sizes a local pool or a --dask local "
                                    "cluster; a Dask scheduler's workers are its own")


@pytest.mark.parametrize("argv", [
    ["verify", SPACE, "-a", "fifo", "--max-share", "2", "-o", "{tmp}/v"],
    ["verify", SPACE, "-a", "oasis", "--param", "u_scale=-1", "-o", "{tmp}/v"],
    ["adversary", "-a", "fifo", "--seed", str(2**63), "-o", "{tmp}/a.json"],
    ["adversary", "-a", "oasis", "--param", "u_scale=-1", "-o", "{tmp}/a.json"],
    ["experiment", "ratio", "--method", "colgen", "--quick", "--out", "{tmp}/e"],
    ["experiment", "ratio", "-a", "nope:nope", "--quick", "--out", "{tmp}/e"],
])
def test_bad_input_is_refused_before_a_local_dask_cluster_starts(tmp_path, capsys,
                                                                  monkeypatch, argv):
    """The commands' own checks ran after ``--dask local`` had started a cluster: each bad
    input cost seconds (and a cluster's log lines) before its message."""
    distributed = pytest.importorskip("distributed")

    def started(*args, **kwargs):
        raise AssertionError("a local Dask cluster started")
    monkeypatch.setattr(distributed, "LocalCluster", started)
    code, _, err = _run(capsys, *[str(a).format(tmp=tmp_path) for a in argv],
                        "--dask", "local")
    assert code == 2, err
    _one_error(err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.filterwarnings("ignore:Glyph 0")  # the name in the histogram's title
@pytest.mark.parametrize("name", ["../../outside", "a\u0000b", "/abs/olute"])
def test_a_space_name_makes_one_folder_under_the_default(tmp_path, capsys, monkeypatch, name):
    """The default folder is results/verify/NAME-ALGORITHM: a name with "/" wrote outside
    results/verify, one with a NUL byte was an internal error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps({**json.loads(SPACE.read_text()),
                                                 "name": name}))
    code, _, err = _run(capsys, "verify", tmp_path / "s.json", "-a", "fifo")
    assert code == 0, err
    made = [p for p in tmp_path.iterdir() if p.name != "s.json"]
    assert [p.name for p in made] == ["results"]
    assert [p.name for p in (tmp_path / "results" / "verify").iterdir()] == \
        [name.replace("/", "_").replace("\0", "_") + "-fifo"]


_BIG = "[1e308, 1e308, 1e308, 1e308]"


@pytest.mark.parametrize("param,message", [
    ("u_scale=1e308", "--param u_scale: 1e+308 takes the price bounds out of a double's range"),
    ("l_scale=1e-320", "--param l_scale: 1e-320 takes the price bounds out of a double's "
                       "range"),
    (f'bounds={{"U_w": {_BIG}, "L_w": [1e-308, 1e-308, 1e-308, 1e-308]}}',
     "--param bounds: U_w/L_w overflows a double"),
])
def test_price_bounds_out_of_a_doubles_range_are_refused(capsys, param, message):
    """U·u_scale = inf, L·l_scale = 0 or U/L = inf made α infinite and the prices NaN: exit 0
    with numpy's overflow warnings, α and D_final null, a schedule priced by NaN."""
    code, out, err = _run(capsys, "run", SMALL, "-a", "oasis", "--param", param)
    assert code == 2, err
    assert message in _one_error(err) and "Warning" not in err


@pytest.mark.parametrize("out,trajectory", [("a.csv", "a"), ("a.png", "./a"),
                                             ("d/a.csv", "d/../d/a")])
def test_an_instance_output_that_is_a_trajectory_file_is_refused(tmp_path, capsys,
                                                                 monkeypatch, out, trajectory):
    """``adversary -o a.csv --trajectory a``: the trajectory's CSV replaced the worst
    instance just written, and the command said it wrote the instance there (exit 0)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    code, _, err = _run(capsys, "adversary", "-a", "fifo", "--evaluations", "1", "-o", out,
                        "--trajectory", trajectory)
    assert code == 2, err
    assert "--trajectory: " in _one_error(err) and "is the -o file" in _one_error(err)
    assert [p.name for p in tmp_path.rglob("*")] == ["d"]


def test_an_import_over_the_cluster_spec_it_found_is_refused(tmp_path, capsys):
    """The cluster spec found beside the trace (not given by --cluster-spec) was read, then
    replaced by the instance (exit 0)."""
    (tmp_path / "t.csv").write_bytes(TIRESIAS.read_bytes())
    spec = tmp_path / "cluster_spec.csv"
    spec.write_bytes((TIRESIAS.parent / "cluster_spec.csv").read_bytes())
    before = spec.read_bytes()
    code, _, err = _run(capsys, "import", "tiresias", tmp_path / "t.csv", "-o", spec)
    assert code == 2, err
    assert "cannot write: it is the cluster spec being read" in _one_error(err)
    assert spec.read_bytes() == before and len(list(tmp_path.iterdir())) == 2


# --- messages name the file -------------------------------------------------------------


@pytest.mark.parametrize("command", ["validate", "show"])
def test_an_unknown_job_names_the_schedule_file(tmp_path, capsys, fifo_schedule, command):
    doc = json.loads(fifo_schedule.read_text())
    doc["jobs"][0]["id"] = "nope"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    argv = [command, SMALL, bad] + (["-o", tmp_path / "p.png"] if command == "show" else [])
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert f"{bad}: jobs[0].id: unknown job 'nope'" in _one_error(err)
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("text,message", [
    ("[]", "an instance must be a JSON object, got a list"),
    ("null", "an instance must be a JSON object, got null"),
])
def test_a_document_that_is_not_an_object_names_the_file(tmp_path, capsys, text, message):
    p = tmp_path / "inst.json"
    p.write_text(text)
    code, _, err = _run(capsys, "run", p, "-a", "fifo")
    assert code == 2
    assert f"{p}: {message}" in _one_error(err)


def test_a_byte_order_mark_is_accepted(tmp_path, capsys):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + SMALL.read_bytes().replace(b"\n", b"\r\n"))
    code, _, err = _run(capsys, "run", p, "-a", "fifo")
    assert code == 0, err


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["jobs"][0].update(utility={}), "jobs[0].utility: missing field 'kind'"),
    (lambda d: d.update(jobs={}), "jobs: expected a list, got an object"),
    (lambda d: d["worker_servers"].__setitem__(0, None),
     "worker_servers[0]: expected an object, got null"),
])
def test_type_errors_in_plain_words(tmp_path, capsys, edit, message):
    doc = json.loads(SMALL.read_text())
    edit(doc)
    p = tmp_path / "i.json"
    p.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "run", p, "-a", "fifo")
    assert code == 2
    assert message in _one_error(err)


def test_an_integer_of_thousands_of_digits(tmp_path, capsys):
    p = tmp_path / "i.json"
    p.write_text(SMALL.read_text().replace('"horizon": ', '"horizon": 1' + "0" * 5000
                                           + ', "x": ', 1))
    code, _, err = _run(capsys, "run", p, "-a", "fifo")
    assert code == 2
    assert "not valid JSON: an integer of 5001 digits" in _one_error(err)


@pytest.mark.parametrize("digits", [309, 400, 4000])
def test_an_integer_past_a_double_is_too_large_not_an_overflow(tmp_path, capsys, fifo_schedule,
                                                                digits):
    """``"horizon": 10**400`` (or a schedule's slot) ended in "internal error: int too large
    to convert to float" (exit 1): the message's number was printed through float()."""
    p = tmp_path / "i.json"
    p.write_text(SMALL.read_text().replace('"horizon": ', '"horizon": 1' + "0" * digits
                                           + ', "x": ', 1))
    code, _, err = _run(capsys, "run", p, "-a", "fifo")
    assert code == 2
    assert "horizon: 1e+" in _one_error(err) and "is too large" in err
    doc = json.loads(fifo_schedule.read_text())
    doc["jobs"][0]["allocations"][0]["slot"] = 10**digits
    fifo_schedule.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "validate", SMALL, fifo_schedule)
    assert code == 2
    assert f"{fifo_schedule}: jobs[0].allocations[0].slot: 1e+" in _one_error(err)
    assert len(err) < 300


def test_trace_ratios_are_ratio_ratio_with_zero_over_zero_one():
    """``traces.experiment`` uses ``ratio.ratio`` for OPT/ALG; only 0/0 differs (1, not
    None: the algorithm matched OPT on that slice, docs/traces.md)."""
    from oasis_opt.ratio import ratio
    from oasis_opt.traces.experiment import _median, _over
    for x, u in [(2.0, 1.0), (5.0, 0.0), (1e-9, 5.0), (3.0, 3.0)]:
        assert _over(x, u) == ratio(x, u)
    assert ratio(0.0, 0.0) is None and _over(0.0, 0.0) == 1.0
    assert _over(None, 1.0) is None
    assert _median([3.0, float("nan"), 1.0, 2.0]) == 2.0 and _median([]) is None
    assert _median([1.0, 2.0]) == 1.5


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("argv", [
    ["solve", SMALL, "-o", "/proc/oasis-out.json"],
    ["experiment", "ratio", "--quick", "--seeds", "1", "--workers", "0", "--out",
     "/proc/oasis-out"],
    ["verify", SPACE, "-a", "fifo", "-o", "/proc/oasis-out"],
    ["adversary", "-a", "fifo", "--evaluations", "1", "-o", "/proc/oasis-out.json"],
])
def test_a_folder_where_nothing_can_be_made_is_refused_before_the_work(capsys, argv):
    """/proc exists and is a folder, yet no file can be made there (like a read-only mount,
    whatever the permissions say to root): refused before the solve or the first task, so
    the one line on stderr is the error, no progress before it."""
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and "cannot write" in _one_error(err), err


# --- inputs that are not regular files ---------------------------------------------------


@pytest.mark.parametrize("argv,message", [
    (["run", "{pipe}", "-a", "fifo"], "{pipe}: empty: no JSON instance in it"),
    (["validate", SMALL, "{pipe}"], "{pipe}: empty: no JSON schedule in it"),
    (["import", "tiresias", "{pipe}", "-o", "{out}"], "{pipe}: empty trace"),
    (["sweep", "{pipe}"], "{pipe}: empty: no JSON sweep grid in it"),
    (["verify", "{pipe}", "-a", "fifo", "-o", "{out}"], "{pipe}: empty: no JSON space in it"),
])
def test_a_named_pipe_nobody_writes_reads_as_empty_not_forever(tmp_path, capsys, argv,
                                                                 message):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    fill = {"pipe": pipe, "out": tmp_path / "out"}
    code, _, err = _run(capsys, *[str(a).format(**fill) for a in argv])
    assert code == 2
    assert message.format(**fill) in _one_error(err)
    assert not (tmp_path / "out").exists()


def test_an_endless_input_stops_at_the_limit(capsys):
    code, _, err = _run(capsys, "run", "/dev/zero", "-a", "fifo", "--max-memory", "64M")
    assert code == 2
    assert ("/dev/zero: instance larger than 4 MiB, the most the memory limit 64 MiB lets "
            "parse") in _one_error(err)


def test_an_instance_through_a_pipe_is_read(capsys):
    r, w = os.pipe()
    data = SMALL.read_bytes()
    writer = threading.Thread(target=lambda: (os.write(w, data), os.close(w)))
    writer.start()
    try:
        code, _, err = _run(capsys, "run", f"/dev/fd/{r}", "-a", "fifo")
    finally:
        writer.join()
        os.close(r)
    assert code == 0, err


@pytest.mark.parametrize("pod_memory,node_memory,message", [
    ("99999999999999999999", "262144", "t.csv:2: a worker's mem_gib 9.76562e+16 is outside"),
    ("16384", "9" * 22, "node n0's mem_gib 9.76562e+18 is outside"),
])
def test_an_import_never_writes_an_instance_that_does_not_load(tmp_path, capsys, pod_memory,
                                                                node_memory, message):
    """Found by the trace property test: a pod asking for 1e17 GiB imported, and the instance
    written was one ``load_instance`` refuses (demands above 1e15)."""
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        f"sn,cpu_milli,memory_mib,gpu,model\nn0,64000,{node_memory},2,P100\n")
    (tmp_path / "t.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        f"deletion_time,scheduled_time\np0,12000,{pod_memory},1,460,,LS,Succeeded,0,1200,100\n")
    code, _, err = _run(capsys, "import", "alibaba", tmp_path / "t.csv", "-o",
                        tmp_path / "i.json")
    assert code == 2
    assert message in _one_error(err) and "(0, or 1e-09 to 1e+15)" in err
    assert not (tmp_path / "i.json").exists()


def test_a_huge_memory_limit_reads_files_as_usual(capsys):
    """``--max-memory 99999999999999999999T`` is a (silly) valid limit: reading a file in
    pieces never asks for a buffer of the limit's size (it was an internal error)."""
    code, _, err = _run(capsys, "run", SMALL, "-a", "fifo", "--max-memory",
                        "99999999999999999999T")
    assert code == 0, err


# --- lists of algorithm names: one parser for --algorithms and --floor ------------------


@pytest.mark.parametrize(("argv", "place", "words"), [
    (["ratio", SMALL, "--algorithms", ""], "--algorithms", "names no algorithm"),
    (["ratio", SMALL, "--algorithms", "fifo,,drf"], "--algorithms", "an empty name"),
    (["ratio", SMALL, "--algorithms", "fifo,nope"], "--algorithms", "unknown algorithm 'nope'"),
    (["solve", SMALL, "--time-limit", "5", "--floor", "fifo,"], "--floor", "an empty name"),
])
def test_a_bad_list_of_algorithms_is_refused_by_its_option(capsys, argv, place, words):
    code, out, err = _run(capsys, *argv)
    line = _one_error(err)
    assert code == 2 and out == "" and f"{place}: " in line and words in line


def test_a_repeated_algorithm_is_compared_once(capfd):
    # --json writes on the real stdout (file descriptor 1): capfd, not capsys
    code, out, _ = _run(capfd, "ratio", SMALL, "--algorithms", "fifo,fifo", "--json")
    assert code == 0 and [r["algorithm"] for r in json.loads(out)["rows"]] == ["fifo"]


def test_an_empty_floor_is_no_floor(capfd):
    code, out, _ = _run(capfd, "solve", SMALL, "--time-limit", "20", "--floor", "", "--json")
    assert code == 0 and json.loads(out)["floor_runs"] == {}


# --- measurement files beside a trace: numbers int() or a float cannot take ---------------


def _gavel(tmp_path: Path, throughputs: dict, spec: dict) -> list:
    (tmp_path / "t.trace").write_text("A\tcmd\t-n\t1\t1000\t0.0\t2\nA\tcmd\t-n\t1\t1000\t5.0\t1\n")
    (tmp_path / "thr.json").write_text(json.dumps(throughputs))
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    return ["import", "gavel", tmp_path / "t.trace", "--throughputs", tmp_path / "thr.json",
            "--cluster-spec", tmp_path / "spec.json"]


@pytest.mark.parametrize("throughputs,spec,message", [
    ({"v100": {"('A', 0)": {"null": 1.0}}}, {"a": ["1:1:1"]},
     "thr.json: v100.('A', 0): the scale factor must be in 1 … 999999999"),
    ({"v100": {"('A', 1)": {"null": 1.0}, "('A', " + "9" * 5000 + ")": {"null": 1.0}}},
     {"a": ["1:1:1"]}, "the scale factor must be in 1 … 999999999"),
    ({"v100": {"('A', 1)": {"null": 1.0}}}, {"a": ["²:1:1"]},
     "spec.json: a[0]: expected \"V100:P100:K80\" counts, got '²:1:1'"),
    ({"v100": {"('A', 1)": {"null": 1.0}}}, {"a": ["9" * 5000 + ":1:1"]},
     "spec.json: a[0]: a GPU count of more than 15 digits"),
    # a number where the counts' text goes: "'int' object is not subscriptable"
    ({"v100": {"('A', 1)": {"null": 1.0}}}, {"a": [4]},
     "spec.json: a[0]: expected \"V100:P100:K80\" counts, got 4"),
    ({"v100": {"('A', 1)": {"null": 1.0}}}, {"a": [None]},
     "spec.json: a[0]: expected \"V100:P100:K80\" counts, got None"),
])
def test_gavel_measurements_int_and_float_cannot_take(tmp_path, capsys, throughputs, spec,
                                                       message):
    """Once internal errors: a scale factor 0 divided by zero, '²' passed ``isdigit`` but not
    ``int``, 5000 digits passed ``isdigit`` but not int()'s limit."""
    out = tmp_path / "i.json"
    code, _, err = _run(capsys, *_gavel(tmp_path, throughputs, spec), "-o", out)
    assert code == 2, err
    line = _one_error(err)
    assert message in line and len(line) < 300
    assert not out.exists()


@pytest.mark.parametrize("placement", ["²", "4" * 5000])
def test_pollux_placement_that_is_no_count(tmp_path, capsys, placement):
    app = tmp_path / "apps" / "a"
    app.mkdir(parents=True)
    (app / "validation-8.csv").write_text("progress,iteration,metric,grad_sqr,grad_var\n"
                                          "1,100,1,1,1\n")
    (app / "scalability.csv").write_text("num_nodes,num_replicas,local_bsz,step_time,"
                                         "sync_time\n")
    (app / "placements.csv").write_text("placement,local_bsz,step_time,sync_time\n"
                                        f"1,4,1,0\n{placement},4,1,0\n")
    (tmp_path / "w.csv").write_text("name,time,application,num_replicas,batch_size\n"
                                    "j0,0,a,1,8\n")
    out = tmp_path / "i.json"
    code, _, err = _run(capsys, "import", "pollux", tmp_path / "w.csv", "--apps",
                        tmp_path / "apps", "-o", out)
    assert code == 2, err
    line = _one_error(err)
    assert "placements.csv:3: column placement: expected GPU counts per node" in line
    assert len(line) < 300 and not out.exists()


_TIRESIAS_HEADER = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"


@pytest.mark.parametrize("rows,flags,message", [
    # finite times whose sum (the slice's span plus its durations) is not
    (["1,1,0,10,r,1.7e308,1", "2,1,1.7e308,10,r,1.7e308,1"], [],
     "t.csv:2: run time 1.7e+308 s is too large (limit 1e+15 s)"),
    (["1,1,0,10,r,100,1", "2,1,1.7e308,10,r,100,1"], [],
     "t.csv:3: submission time 1.7e+308 s is too large (limit 1e+15 s)"),
    # an arrival slot of (1000 s / 1e-310 s) = inf, which has no floor
    (["1,1,0,10,r,1e-310,1", "2,1,1000,10,r,1e-310,1"], ["--slot-seconds", "1e-310"],
     "t.csv:3 arrives in slot inf, past the horizon 100"),
    (["1,1,0,10,r,1e-300,1", "2,1,1000,10,r,1e-300,1"], ["--slot-seconds", "1e-300"],
     "t.csv:3 arrives in slot 1e+303, past the horizon 100"),  # not 304 digits
    # a large slice's horizon from --slot-seconds alone
    ([f"{i},1,{i},10,r,1e-310,1" for i in range(120)], ["--jobs", "all", "--slot-seconds",
                                                         "1e-310"],
     "--slot-seconds: inf slots of 1e-310 s is too large"),
])
def test_trace_times_whose_slots_overflow(tmp_path, capsys, rows, flags, message):
    """Once internal errors ("cannot convert float infinity to integer")."""
    (tmp_path / "t.csv").write_text(_TIRESIAS_HEADER + "\n".join(rows) + "\n")
    out = tmp_path / "i.json"
    code, _, err = _run(capsys, "import", "tiresias", tmp_path / "t.csv", *flags, "-o", out)
    assert code == 2, err
    line = _one_error(err)
    assert message in line and len(line) < 300
    assert not out.exists()


def test_a_denormal_gavel_throughput_is_a_bad_row(tmp_path, capsys):
    """steps ÷ 5e-324 steps/s is an infinite run time: a bad row (skipped with --skip-bad),
    not an internal error."""
    argv = _gavel(tmp_path, {"v100": {"('A', 1)": {"null": 5e-324}}}, {"a": ["4:1:1"]})
    code, _, err = _run(capsys, *argv, "-o", tmp_path / "i.json")
    assert code == 2
    assert "t.trace:1: run time inf s is too large (limit 1e+15 s)" in _one_error(err)
    code, _, err = _run(capsys, *argv, "--skip-bad", "-o", tmp_path / "i.json")
    assert code == 2 and "no usable job (2 bad rows skipped)" in _one_error(err)


# --- an output that is the command's own input -------------------------------------------


@pytest.mark.parametrize("argv,what", [
    (["run", "{inst}", "-a", "fifo", "-o", "{inst}"], "instance"),
    (["solve", "{inst}", "--time-limit", "5", "-o", "./{inst_name}"], "instance"),
    (["import", "tiresias", "{trace}", "-o", "{trace}"], "trace"),
    (["export", "{lp}", "-o", "{lp}"], "instance"),  # an instance whose name ends in .lp
    (["show", "{inst}", "{png}", "-o", "{png}"], "schedule"),
    (["verify", "{summary}", "-a", "fifo", "-o", "."], "space"),  # its summary.json
    (["ratio", "{pnginst}", "--algorithms", "fifo", "--plot", "{pnginst}"], "instance"),
    (["verify", "{argmax}", "-a", "fifo", "-o", "."], "space"),
])
def test_an_output_that_is_the_input_is_refused(tmp_path, capsys, monkeypatch, argv, what):
    """``run i.json -o i.json`` replaced the instance by its schedule (exit 0)."""
    monkeypatch.chdir(tmp_path)
    files = {"inst": tmp_path / "i.json", "trace": tmp_path / "t.csv",
             "lp": tmp_path / "i.lp", "png": tmp_path / "s.png",
             "summary": tmp_path / "summary.json", "argmax": tmp_path / "argmax.json",
             "pnginst": tmp_path / "i.png"}  # an instance whose name ends in .png
    files["pnginst"].write_bytes(SMALL.read_bytes())
    files["inst"].write_bytes(SMALL.read_bytes())
    files["summary"].write_bytes(SPACE.read_bytes())
    files["argmax"].write_bytes(SPACE.read_bytes())
    files["lp"].write_bytes(SMALL.read_bytes())
    files["trace"].write_bytes(TIRESIAS.read_bytes())
    assert cli.main(["run", str(SMALL), "-a", "fifo", "-o", str(files["png"])]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, _, err = _run(capsys, *[a.format(inst_name="i.json", **files) for a in argv])
    assert code == 2, err
    assert f"cannot write: it is the {what} being read" in _one_error(err)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# --- numbers in flags: ASCII decimal only (int() and float() took '1_0', '١٠', ' 5') --------


def _numeric_flags() -> list[tuple[str, str, object]]:
    """(command, flag, its parser) for every option of every command that takes a number."""
    parser = cli.build_parser()
    found = []
    for command, sub in cli.COMMAND_PARSERS.items():
        for action in sub._actions:
            if action.type is not None and action.option_strings and \
                    action.dest not in ("max_memory",):
                found.append((command, action.option_strings[-1], action.type))
    assert parser is not None and len(found) > 30
    return found


def test_no_flag_takes_python_s_int_or_float():
    assert [(c, f) for c, f, t in _numeric_flags() if t in (int, float)] == []


@pytest.mark.parametrize("text", ["1_0", "١٠", "１０", " 5", "5 ", "+5", "0x10", "nan", "inf",
                                  "-inf", "Infinity", "", "5\n", "1e400"])
def test_every_numeric_flag_refuses_what_is_no_decimal(text):
    import argparse
    for command, flag, parse in _numeric_flags():
        if flag == "--jobs" and command == "import" and text.strip().lower() == "all":
            continue
        with pytest.raises(argparse.ArgumentTypeError) as info:
            parse(text)
        assert str(info.value).startswith(flag), (command, flag, str(info.value))
        assert repr(text) in str(info.value) or text == "1e400", (command, flag, str(info.value))


@pytest.mark.parametrize("argv,message", [
    (["generate", "--preset", "small", "--jobs", "1_0"], "--jobs must be an integer, got '1_0'"),
    (["generate", "--preset", "small", "--jobs", "١٠"], "--jobs must be an integer, got '١٠'"),
    (["generate", "--preset", "small", "--seed", "+5"], "--seed must be an integer, got '+5'"),
    (["generate", "--preset", "small", "--horizon", " 5"],
     "--horizon must be an integer, got ' 5'"),
    (["solve", SMALL, "--time-limit", "nan"], "--time-limit must be a number, got 'nan'"),
    (["solve", SMALL, "--time-limit", "1_0"], "--time-limit must be a number, got '1_0'"),
    (["solve", SMALL, "--time-limit", "0x10"], "--time-limit must be a number, got '0x10'"),
    (["solve", SMALL, "--mip-gap", "1_0"], "--mip-gap must be a number, got '1_0'"),
    (["import", "tiresias", TIRESIAS, "--efficiency", "١"],
     "--efficiency must be a number, got '١'"),
    (["import", "tiresias", TIRESIAS, "--urgency", "inf"], "--urgency must be a number, got 'inf'"),
    (["import", "tiresias", TIRESIAS, "--jobs", "4" * 5000], "--jobs: '444"),
])
def test_a_number_flag_that_is_no_decimal_exits_2(tmp_path, capsys, argv, message):
    out = tmp_path / "x.json"
    with pytest.raises(SystemExit) as info:
        cli.main([str(a) for a in argv] + ["-o", str(out)])
    err = capsys.readouterr().err
    assert info.value.code == 2
    line = _one_error(err)
    assert message in line and len(line) < 300
    assert not out.exists()


@pytest.mark.parametrize("argv", [
    ["generate", "--preset", "small", "--jobs", "3", "--seed", "-0"],
    ["solve", SMALL, "--time-limit", "5.", "--mip-gap", ".5"],
    ["solve", SMALL, "--time-limit", "1e1", "--mip-gap", "0"],
    ["import", "tiresias", TIRESIAS, "--jobs", "ALL", "--urgency=1E-3", "--efficiency=-0.5"],
])
def test_ordinary_decimals_still_parse(argv):
    args = cli.build_parser().parse_args([str(a) for a in argv] + ["-o", "x.json"])
    assert args.command == argv[0]


# --- '-' and '' as paths: a file named '-', an option silently left out ----------------------


@pytest.mark.parametrize("argv,place", [
    (["generate", "--preset", "small", "--name", "a\udcffb"], "--name"),
    (["import", "tiresias", TIRESIAS, "--name", "\udcff"], "--name"),
])
def test_a_name_that_is_no_text_is_refused(tmp_path, capsys, monkeypatch, argv, place):
    """A shell passes bytes: ``--name $'a\\xffb'`` reached Python as 'a\\udcffb' and was
    written into an instance that no command could load ('name: a lone surrogate')."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, *argv, "-o", "x.json")
    assert code == 2, err
    assert f"{place}: {argv[-1]!r} is not UTF-8 text" in _one_error(err)
    assert list(tmp_path.iterdir()) == []


def test_a_path_that_is_no_text_is_still_a_path(tmp_path, capsys, monkeypatch):
    """A file named $'x\\xff.json' was written, then printing its name where standard output
    is strict UTF-8 (``PYTHONIOENCODING=utf-8``, an en_US.UTF-8 locale; capsys here) ended
    the command in 'internal error: surrogates not allowed' (exit 1)."""
    monkeypatch.chdir(tmp_path)
    out = os.fsdecode(b"x\xff.json")
    code, shown, err = _run(capsys, "generate", "--preset", "small", "-o", out)
    assert code == 0, err
    assert (tmp_path / out).exists()
    assert "wrote x\\udcff.json" in shown + err  # escaped, as Python's stderr shows it
    code, _, err = _run(capsys, "run", out, "-a", "fifo", "-o", os.fsdecode(b"s\xff.json"))
    assert code == 0, err


@pytest.mark.parametrize("argv,place", [
    (["run", SMALL, "-a", "fifo", "-o", "-"], "-o"),
    (["generate", "--preset", "small", "-o", "-"], "-o"),
    (["solve", SMALL, "-o", "-"], "-o"),
    (["import", "tiresias", TIRESIAS, "-o", "-"], "-o"),
    (["adversary", "-a", "fifo", "--evaluations", "1", "-o", "-"], "-o"),
    (["verify", SPACE, "-a", "fifo", "-o", "-"], "-o"),
    (["ratio", SMALL, "--algorithms", "fifo", "--plot", "-"], "--plot"),
    (["ratio", SMALL, "--algorithms", "fifo", "--opt-cache", "-"], "--opt-cache"),
    (["experiment", "ratio", "--quick", "--out", "-"], "--out"),
])
def test_a_dash_output_is_refused_not_a_file_named_dash(tmp_path, capsys, monkeypatch, argv,
                                                        place):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert _one_error(err).endswith(f"error: {place}: '-' is not standard output here; "
                                    "name a path (./- for one named '-')")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv,place", [
    (["ratio", SMALL, "--algorithms", "fifo", "--plot", ""], "--plot"),
    (["ratio", SMALL, "--algorithms", "fifo", "--opt-cache", ""], "--opt-cache"),
    (["adversary", "-a", "fifo", "--evaluations", "1", "--jobs", "2", "--horizon", "3",
      "--trajectory", "", "-o", "a.json"], "--trajectory"),
    (["experiment", "ratio", "--quick", "--seeds", "1", "--workers", "0", "--out", ""],
     "--out"),
    (["import", "tiresias", TIRESIAS, "--cluster-spec", "", "-o", "t.json"], "--cluster-spec"),
    (["import", "tiresias", TIRESIAS, "--phases", "", "-o", "t.json"], "--phases"),
    (["import", "tiresias", TIRESIAS, "--name", "", "-o", "t.json"], "--name"),
    (["generate", "--preset", "small", "--name", "", "-o", "g.json"], "--name"),
    (["run", "", "-a", "fifo"], "INSTANCE"),
    (["validate", SMALL, ""], "SCHEDULE"),
    (["run", SMALL, "-a", "fifo", "-o", ""], "-o"),
    (["import", "", TIRESIAS, "-o", "t.json"], "FORMAT: an empty value names nothing"),
    (["experiment", ""], "NAME: an empty value names nothing"),
    (["import", "tiresias", TIRESIAS, "--nodes", "", "-o", "t.json"],
     "--nodes: an empty path names no file"),
])
def test_an_empty_option_is_refused_by_its_name(tmp_path, capsys, monkeypatch, argv, place):
    """``--plot ''`` drew nothing, ``--out ''`` wrote into the working folder, ``--name ''``
    took the default: each said nothing (exit 0)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, ""), err
    line = _one_error(err)
    assert f"error: {place}" in line and "empty" in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_file_named_dash_is_still_reachable(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "run", SMALL, "-a", "fifo", "-o", "./-")
    assert code == 0, err
    assert json.loads((tmp_path / "-").read_text())["algorithm"] == "fifo"


# --- a refused --param value is named by the flag the user typed --------------------------


def test_a_ratio_param_nested_too_deeply_is_refused(capsys):
    code, _, err = _run(capsys, "ratio", SMALL, "--algorithms", "fifo", "--param", "fifo",
                        "block_unplaceable=" + "[" * 950 + "]" * 950)
    assert code == 2
    assert _one_error(err).endswith("error: --param fifo block_unplaceable: nested too deeply "
                                    "(more than 100 levels)")


@pytest.mark.parametrize("argv,message", [
    (["ratio", SMALL, "--algorithms", "oasis,fifo", "--param", "oasis", "u_scale=-1"],
     "--param oasis u_scale: must be a positive number, got -1"),
    (["ratio", SMALL, "--algorithms", "fifo,oasis", "--param", "oasis", "l_scale=1e-320"],
     "--param oasis l_scale: 1e-320 takes the price bounds out of a double's range"),
    (["ratio", SMALL, "--algorithms", "oasis,oasis-adaptive", "--param", "oasis", "u_scale=1",
      "--param", "oasis-adaptive", "u_scale=-2"],
     "--param oasis-adaptive u_scale: must be a positive number, got -2"),
    (["run", SMALL, "-a", "oasis", "--param", "u_scale=-1"],
     "--param u_scale: must be a positive number, got -1"),
    (["adversary", "-a", "oasis", "--param", "u_scale=-1", "--evaluations", "1", "--jobs", "2",
      "--horizon", "3", "-o", "a.json"],
     "--param u_scale: must be a positive number, got -1"),
    (["verify", SPACE, "-a", "oasis", "--param", "u_scale=-1", "-o", "v"],
     "--param u_scale: must be a positive number, got -1"),
])
def test_a_refused_param_names_the_flag(tmp_path, capsys, monkeypatch, argv, message):
    """``ratio --param oasis u_scale=-1`` said ``u_scale: …``, a place the user never typed."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert f"error: {message}" in _one_error(err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("size", [" 1G", "1G ", "1 G", "+1G"])
def test_a_memory_limit_with_spaces_or_a_sign_is_refused_as_the_numbers_are(capsys, size):
    code, out, err = _run(capsys, "run", SMALL, "-a", "fifo", "--max-memory", size)
    assert (code, out) == (2, ""), err
    assert _one_error(err).endswith(f"error: --max-memory: expected a size such as 512M or 4G, "
                                    f"got {size!r}")


@pytest.mark.parametrize("env", [False, True])
@pytest.mark.parametrize("size", ["1e999", "9" * 400 + "G"])
def test_a_memory_limit_past_a_double_is_too_large_not_non_positive(capsys, monkeypatch, env,
                                                                      size):
    """``--max-memory 1e999`` (or OASIS_MAX_MEMORY) said "must be a positive size"."""
    argv = ["run", SMALL, "-a", "fifo"]
    if env:
        monkeypatch.setenv("OASIS_MAX_MEMORY", size)
    else:
        argv += ["--max-memory", size]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    place = "OASIS_MAX_MEMORY" if env else "--max-memory"
    assert f"error: {place}: too large a size, got '" in _one_error(err)


def test_the_environments_memory_limit_may_end_in_a_newline(capsys, monkeypatch):
    monkeypatch.setenv("OASIS_MAX_MEMORY", "4G\n")
    code, _, err = _run(capsys, "run", SMALL, "-a", "fifo")
    assert code == 0, err


# --- a hostile name is clipped, not echoed whole ---------------------------------------------


@pytest.mark.parametrize("edit,command,start", [
    (lambda d: d["jobs"][0].update(id="x" * 100000), "run", "jobs[0].id: "),  # duplicates j1?
    (lambda d: d.update(format="f" * 100000), "run", "format: expected 'oasis-instance/1', "
                                                      "got 'fff"),
    (lambda d: d["jobs"][0].update({"z" * 100000: 1}), "run", "jobs[0].zzz"),
    (lambda d: d["resources"].__setitem__(1, d["resources"][0]) or
     d["resources"].__setitem__(0, "r" * 100000) or
     d["resources"].__setitem__(1, "r" * 100000), "run", "resources[1]: duplicate resource "
                                                        "name 'rrr"),
])
def test_a_hostile_name_in_a_message_is_clipped(tmp_path, capsys, edit, command, start):
    """A 100 000-character job id, field name or format tag was echoed whole: one error line
    of 100 kB."""
    doc = json.loads(SMALL.read_text())
    edit(doc)
    if start == "jobs[0].id: ":  # an id the schedule names but the instance does not have
        p = tmp_path / "s.json"
        code = cli.main(["run", str(SMALL), "-a", "fifo", "-o", str(p)])
        sched = json.loads(p.read_text())
        sched["jobs"][0]["id"] = "x" * 100000
        p.write_text(json.dumps(sched))
        argv = ["validate", SMALL, p]
        start = "jobs[0].id: unknown job 'xxx"
    else:
        p = tmp_path / "i.json"
        p.write_text(json.dumps(doc))
        argv = ["run", p, "-a", "fifo"]
    capsys.readouterr()
    code, _, err = _run(capsys, *argv)
    assert code == 2
    line = _one_error(err)
    assert start in line and len(line) < 1200 and "…" in line, line[:300]


def test_a_hostile_instance_name_in_a_warning_is_clipped(tmp_path, capsys, fifo_schedule):
    sched = json.loads(fifo_schedule.read_text())
    sched["instance"] = "v" * 100000
    fifo_schedule.write_text(json.dumps(sched))
    code, _, err = _run(capsys, "validate", SMALL, fifo_schedule)
    assert code == 0 and err.startswith("warning: schedule is for instance 'vvv")
    assert len(err) < 300, len(err)


@pytest.mark.parametrize("argv", [["generate", "--preset", "x" * 100000, "-o", "x.json"],
                                  ["run", SMALL, "-a", "fifo", "y" * 100000],
                                  ["z" * 100000]])
def test_a_hostile_argument_in_a_usage_error_is_clipped(capsys, argv):
    """argparse echoed an unknown choice, argument or command whole."""
    with pytest.raises(SystemExit) as info:
        cli.main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert info.value.code == 2
    line = _one_error(err)
    assert len(line) < 1000 and "…" in line, line[:200]


@pytest.mark.parametrize("where", ["key", "path", "escape"])
def test_a_line_break_in_a_place_stays_one_line(tmp_path, capsys, where):
    """A field named "bo\\ngus" (or a path with a line break) was printed as it is: the error
    took two lines of stderr, and an ESC byte reached the terminal."""
    doc = json.loads(SMALL.read_text())
    key = {"key": "bo\ngus", "path": "x", "escape": "\x1b[31mred\u2028"}[where]
    doc["jobs"][0][key] = 1
    p = tmp_path / ("i\n.json" if where == "path" else "i.json")
    if where != "path":
        p.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "run", p, "-a", "fifo")
    assert code == 2
    assert len(err.splitlines()) == 1 and err.endswith("\n"), repr(err)
    assert "\x1b" not in err
    want = {"key": "jobs[0].bo\\ngus: unknown field", "path": "i\\n.json: cannot read",
            "escape": "jobs[0].\\x1b[31mred\\u2028: unknown field"}[where]
    assert want in err, err


# --- names are drawn as text, never as matplotlib's mathtext ---------------------------------


def test_a_name_that_looks_like_mathtext_is_drawn_as_it_is(tmp_path, capsys):
    """A job id '$\\frac{$' ended show in 'internal error: ' (exit 1, an empty message): the
    figure parsed the id as mathtext; so did verify's histogram the space's name."""
    doc = json.loads(SMALL.read_text())
    doc["jobs"][0]["id"] = "$\\frac{$"
    doc["name"] = "$\\bad{"
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps(doc))
    sched = tmp_path / "s.json"
    assert cli.main(["run", str(inst), "-a", "oasis", "-o", str(sched)]) == 0
    code, _, err = _run(capsys, "show", inst, sched, "-o", tmp_path / "p.svg")
    assert code == 0, err
    assert (tmp_path / "p.svg").stat().st_size > 0
    space = json.loads(SPACE.read_text())
    space["name"] = "$\\frac{$"
    (tmp_path / "sp.json").write_text(json.dumps(space))
    code, _, err = _run(capsys, "verify", tmp_path / "sp.json", "-a", "fifo", "-o",
                        tmp_path / "v")
    assert code == 0, err
    assert (tmp_path / "v" / "histogram.png").exists()


def test_a_name_the_font_cannot_draw_leaves_stderr_quiet(tmp_path):
    """A job id with a control character drew with matplotlib's 'Glyph 27 missing from
    font(s)' warnings on stderr (exit 0, four lines of noise)."""
    doc = json.loads(SMALL.read_text())
    doc["jobs"][0]["id"] = "a\x1b[31mb"
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps(doc))
    sched = tmp_path / "s.json"
    assert cli.main(["run", str(inst), "-a", "fifo", "-o", str(sched)]) == 0
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "show", str(inst), str(sched),
                        "-o", str(tmp_path / "p.png")], capture_output=True, text=True,
                       timeout=120)  # a process: pytest would catch the warnings itself
    assert (r.returncode, r.stderr) == (0, ""), r.stderr


def test_an_internal_error_whose_message_starts_with_a_newline_is_not_blank(capsys,
                                                                             monkeypatch):
    def broken(args):
        raise ValueError("\n\\frac{\n     ^\nExpected \\frac{num}{den}")
    monkeypatch.setitem(cli.COMMANDS, "validate", broken)
    code, _, err = _run(capsys, "validate", SMALL, SMALL)
    assert code == 1
    assert err == ("oasis-opt validate: internal error: \\frac{ (set OASIS_DEBUG=1 for a "
                   "traceback)\n")


@pytest.mark.parametrize("kind", ["algorithm", "internal"])
def test_a_long_failure_message_is_clipped(capsys, monkeypatch, kind):
    """``run -a sys:exit`` ended in "algorithm error: … SystemExit: Instance(name=…" of
    3 000 characters (the instance's repr): InputError's messages were clipped, these not."""
    from oasis_opt.errors import AlgorithmError

    def broken(args):
        text = "x" * 100_000
        raise AlgorithmError(text) if kind == "algorithm" else RuntimeError(text)
    monkeypatch.setitem(cli.COMMANDS, "validate", broken)
    code, _, err = _run(capsys, "validate", SMALL, SMALL)
    assert code == 1
    assert len(err.splitlines()) == 1 and len(err) < 1000 and " … " in err, err[:200]
    assert err.endswith("(set OASIS_DEBUG=1 for a traceback)\n")


def test_json_with_standard_output_closed_is_refused_before_the_work(tmp_path):
    """``--json >&-`` ended in "internal error: 'NoneType' object has no attribute 'flush'"
    (exit 1) after the schedule was written."""
    import subprocess
    import sys
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, "-m", "oasis_opt", "run", str(SMALL), "-a", "fifo",
                        "-o", str(out), "--json"], stderr=subprocess.PIPE, text=True,
                       timeout=120, preexec_fn=lambda: os.close(1))
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("oasis-opt run: error: --json: standard output is closed: nowhere to "
                        "print the JSON object\n")
    assert not out.exists()


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("how", ["full", "pipe"])
def test_standard_output_that_cannot_be_written_is_one_line_not_an_internal_error(
        tmp_path, json_flag, how):
    """``> /dev/full`` or a reader that left (``| head -c0``) ended in "internal error:
    [Errno 28] No space left on device" / "[Errno 32] Broken pipe" (exit 1), as if a bug."""
    import subprocess
    import sys
    out = tmp_path / "s.json"
    argv = [sys.executable, "-m", "oasis_opt", "run", str(SMALL), "-a", "fifo", "-o", str(out),
            *json_flag]
    if how == "full":
        with open("/dev/full", "w") as full:
            r = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        code, err = r.returncode, r.stderr
    else:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdout.close()  # the reader leaves before the command prints
        err = p.stderr.read()
        code = p.wait(timeout=120)
    why = "No space left on device" if how == "full" else "Broken pipe"
    assert (code, err) == (2, f"oasis-opt run: error: standard output: cannot write: {why}\n")
    assert out.exists()  # the schedule was written before the report


@pytest.mark.parametrize("args", [["--help"], ["solve", "--help"], ["--version"], []])
def test_help_that_cannot_be_written_is_an_error_not_exit_0(args):
    """``--help > /dev/full`` printed nothing and exited 0 (argparse passes over a failed
    write); now one line naming standard output, exit 2. Written, the texts are unchanged."""
    import subprocess
    import sys
    argv = [sys.executable, "-m", "oasis_opt", *args]
    with open("/dev/full", "w") as full:
        r = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (
        2, "oasis-opt: error: standard output: cannot write: No space left on device\n")
    ok = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert ok.returncode == (2 if not args else 0) and ok.stderr == ""
    from oasis_opt import __version__
    assert ok.stdout.startswith(f"oasis-opt {__version__}\n" if args == ["--version"]
                                else "usage: oasis-opt")


@pytest.mark.parametrize("argv", [["--check", "--max-seconds", "1_0"],
                                  ["--check", "--max-seconds", "nan"],
                                  ["--check", "--max-seconds", "-1"],
                                  ["--write", "--time-limit", "inf"]])
def test_the_manifest_tool_takes_its_seconds_as_the_cli_does(capsys, argv):
    """``python -m oasis_opt.manifest`` parsed its seconds with float(): '1_0', 'nan' (every
    instance checked) and -1 (none, and 'ok')."""
    from oasis_opt import manifest
    with pytest.raises(SystemExit) as info:
        manifest.main(argv + ["--dir", "/nonexistent"])
    assert info.value.code == 2
    assert f"argument {argv[1]}: {argv[1]} must be" in capsys.readouterr().err


# --- flags are named in full: argparse took a prefix of a long option ------------------------


@pytest.mark.parametrize("argv,flag", [
    (["run", SMALL, "--algo", "fifo"], "--algo"),
    (["solve", SMALL, "--time-lim", "5"], "--time-lim"),
    (["generate", "--preset", "small", "--se", "1"], "--se"),
    (["import", "tiresias", TIRESIAS, "--slot", "60"], "--slot"),
    (["ratio", SMALL, "--algorithms", "fifo", "--max-mem", "1G"], "--max-mem"),
])
def test_an_abbreviated_flag_is_refused(tmp_path, capsys, argv, flag):
    """``--time-lim 5`` ran as ``--time-limit 5``: SPEC §6 names the flags, and a prefix that
    is unique today takes another meaning the day a flag is added."""
    out = tmp_path / "x.json"
    with pytest.raises(SystemExit) as info:
        cli.main([str(a) for a in argv] + ["-o", str(out)])
    assert info.value.code == 2
    line = _one_error(capsys.readouterr().err)
    assert f"unrecognized arguments: {flag}" in line, line
    assert not out.exists()


def test_every_parser_refuses_abbreviations():
    cli.build_parser()
    assert [c for c, p in cli.COMMAND_PARSERS.items() if p.allow_abbrev] == []


@pytest.mark.parametrize("value", ["0", "-1"])
def test_verify_max_instances_below_one_says_one(tmp_path, capsys, value):
    """``--max-instances -1`` said "must be at least 0" and 0 then "at least 1"."""
    with pytest.raises(SystemExit) as info:
        cli.main(["verify", str(SPACE), "-a", "fifo", "--max-instances", value, "-o",
                  str(tmp_path / "v")])
    assert info.value.code == 2
    assert f"--max-instances must be at least 1, got '{value}'" in _one_error(
        capsys.readouterr().err)
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("value", ["0", "-1"])
def test_experiment_seeds_below_one_says_one(tmp_path, capsys, value):
    """``--seeds -1`` said "must be at least 0" and 0 then "must be in 1 … 100000"."""
    with pytest.raises(SystemExit) as info:
        cli.main(["experiment", "ratio", "--seeds", value, "--out", str(tmp_path / "r")])
    assert info.value.code == 2
    assert f"--seeds must be at least 1, got '{value}'" in _one_error(capsys.readouterr().err)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("doc,message", [
    ([], "manifest.json: expected an object"),
    ({"format": "oasis-manifest/1"}, "manifest.json: instances: missing field"),
    ({"format": "oasis-manifest/1", "instances": {}}, "instances: expected a list"),
    ({"format": "oasis-manifest/1", "instances": [5]}, "instances[0]: expected an object"),
    ({"format": "oasis-manifest/1", "instances": [{"file": "small-s0.json", "optimum": 1}]},
     "instances[0].seconds: expected a number"),
    ({"format": "oasis-manifest/1",
      "instances": [{"file": "small-s0.json", "optimum": "1", "seconds": 1}]},
     "instances[0].optimum: expected a number"),
    ({"format": "oasis-manifest/1",
      "instances": [{"file": 5, "optimum": 1, "seconds": 1}]},
     "instances[0].file: expected a file name"),
    ('{"format": "oasis-manifest/1", "instances": [], "instances": []}', "duplicate key"),
])
def test_the_manifest_tool_refuses_a_malformed_manifest(tmp_path, capsys, doc, message):
    """A manifest that was a list, or lacked "instances", or held a string where a number
    goes, ended in a traceback (AttributeError, KeyError, TypeError) of --check."""
    from oasis_opt import manifest
    (tmp_path / "manifest.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    assert manifest.main(["--check", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1, err
