"""Fuzzing the command line (issue 14): valid files, mutated by hypothesis, fed to ``oasis-opt``
as a subprocess.

Each example takes one valid document (an instance, a schedule, a sweep grid, a trace), applies
one or two mutations — a hostile value at any place (wrong type, extreme or tiny number, huge
count, NaN literal, deep nesting), a deleted or unknown field, a duplicated key, truncated text,
bytes that are not UTF-8 — and runs a command on it. Whatever the input, the command must:

- exit 0, 1 or 2, never with a traceback or an "internal error";
- write nothing when it refuses (exit 2);
- write only schedules that pass the validator (re-checked here, in-process), and with
  ``--json`` print exactly one JSON object.

The number of examples per target is ``OASIS_FUZZ_EXAMPLES`` (default 25, which keeps the
suite near a minute in CI); examples are derandomized so that CI runs are reproducible, and
``OASIS_FUZZ_RANDOM=1`` explores new ones.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oasis_opt.io import load_instance, load_schedule
from oasis_opt.validate import validate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("OASIS_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                derandomize=not os.environ.get("OASIS_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


# --- documents and mutations -------------------------------------------------------------


class Raw:
    """Text put into the serialised document as it is (deep nesting, NaN literals)."""

    def __init__(self, text: str) -> None:
        self.text = text


class Dup(dict):
    """An object one of whose keys is written twice (JSON allows the text, SPEC §5 not)."""

    def __init__(self, base: dict, key: str, value: Any) -> None:
        super().__init__(base)
        self.dup = (key, value)


def dump(x: Any) -> str:
    if isinstance(x, Raw):
        return x.text
    if isinstance(x, dict):
        items = [f"{json.dumps(str(k))}: {dump(v)}" for k, v in x.items()]
        if isinstance(x, Dup):
            items.append(f"{json.dumps(x.dup[0])}: {dump(x.dup[1])}")
        return "{" + ", ".join(items) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(dump(v) for v in x) + "]"
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if x != x else ("Infinity" if x > 0 else "-Infinity")
    return json.dumps(x)


HOSTILE = st.one_of(
    st.sampled_from([
        "3", "", "x" * 300, True, False, None, [], {}, [1, 2, 3], {"a": 1},
        0, -1, 1, 2, 4.0, 0.5, 1.5, -0.0, 1e-300, 1e-12, 5e-324, 1e15, 1e16, 1e300, -1e300,
        2**31, 2**53 + 1, 2**63, 10**12 + 1, 10**15, 10**30, -10**30, 10**400,
        float("nan"), float("inf"), float("-inf"), Raw("1e999"), Raw("-1e999"),
        Raw("[" * 50_000 + "]" * 50_000), Raw("{\"a\": " * 20_000 + "1" + "}" * 20_000),
        "oasis-instance/1", "oasis-schedule/1", "sigmoid", "table", "w0", "ps0", "j0",
    ]),
    st.integers(min_value=-10, max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=8),
)


def paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON tree (the root excluded)."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append(prefix + (k,))
            out.extend(paths(v, prefix + (k,)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append(prefix + (i,))
            out.extend(paths(v, prefix + (i,)))
    return out


def _parent(doc: Any, path: tuple) -> Any:
    for p in path[:-1]:
        doc = doc[p]
    return doc


@st.composite
def mutated_json(draw, base: dict) -> bytes:
    """``base`` with one to three mutations, serialised (sometimes truncated or corrupted)."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        places = paths(doc)
        if not places:
            break
        path = draw(st.sampled_from(places))
        parent = _parent(doc, path)
        op = draw(st.sampled_from(["set", "set", "set", "delete", "unknown", "dup", "grow"]))
        if op == "set":
            parent[path[-1]] = draw(HOSTILE)
        elif op == "delete":
            del parent[path[-1]]
        elif op == "unknown" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "workers", "Arrival", "count", "slot"]))] = \
                draw(HOSTILE)
        elif op == "dup" and isinstance(parent, dict):
            key = path[-1]
            holder = _parent(doc, path[:-1]) if len(path) > 1 else None
            dup = Dup(parent, key, draw(HOSTILE))
            if holder is None:
                doc = dup
            else:
                holder[path[-2]] = dup
        elif op == "grow" and isinstance(parent[path[-1]], list) and parent[path[-1]]:
            parent[path[-1]] = parent[path[-1]] * draw(st.sampled_from([2, 50]))
    text = dump(doc).encode("utf-8")
    tail = draw(st.sampled_from(["keep"] * 8 + ["truncate", "bytes"]))
    if tail == "truncate":
        text = text[:draw(st.integers(0, max(0, len(text) - 1)))]
    elif tail == "bytes":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + b"\xff\xfe\x00" + text[at:]
    return text


# --- running the command line ------------------------------------------------------------


def oasis_opt(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OASIS_MAX_MEMORY": "2G"}  # refusals, not a swapping machine
    env.pop("OASIS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "oasis_opt", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def check_outcome(proc: subprocess.CompletedProcess, out: Path | None, *,
                  instance: Path | None = None, json_mode: bool = False) -> None:
    err = proc.stderr
    assert proc.returncode in (0, 1, 2), f"exit {proc.returncode}: {err[-2000:]}"
    assert "Traceback" not in err, err[-3000:]
    assert "internal error" not in err, err[-2000:]
    if proc.returncode == 2:
        assert err.strip(), "a refusal must say why"
        # One message: a single error line (argparse puts its usage lines before it).
        assert sum("error" in line for line in err.strip().splitlines()) == 1, err
    if proc.returncode == 2 and out is not None:
        assert not out.exists(), f"{out.name} written although the input was refused: {err}"
        leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
        assert not leftovers, leftovers
    if json_mode and proc.returncode == 0:
        json.loads(proc.stdout)  # exactly one JSON object
    if proc.returncode == 0 and out is not None and out.exists() and instance is not None:
        rep = validate(load_instance(instance), load_schedule(out))
        assert rep.feasible, [str(v) for v in rep.violations[:5]]


# --- targets -----------------------------------------------------------------------------

BASE_INSTANCE = json.loads((ROOT / "instances" / "small-s0.json").read_text())


@pytest.fixture(scope="module")
def base_schedule(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("base")
    proc = oasis_opt("run", ROOT / "instances" / "small-s0.json", "--algorithm", "oasis",
                     "-o", d / "s.json", cwd=d)
    assert proc.returncode == 0, proc.stderr
    return json.loads((d / "s.json").read_text())


@FUZZ
@given(text=mutated_json(BASE_INSTANCE),
       command=st.sampled_from(["oasis", "fifo", "drf", "rrh", "tetris", "solve", "validate"]))
def test_fuzzed_instance(tmp_path_factory, base_schedule, text, command):
    d = tmp_path_factory.mktemp("inst")
    inst = d / "inst.json"
    inst.write_bytes(text)
    out = d / "out.json"
    if command == "validate":
        (d / "s.json").write_text(json.dumps(base_schedule))
        proc = oasis_opt("validate", inst, d / "s.json", cwd=d)
        check_outcome(proc, None)
        return
    if command == "solve":
        proc = oasis_opt("solve", inst, "--time-limit", "5", "-o", out, "--json", cwd=d)
    else:
        proc = oasis_opt("run", inst, "--algorithm", command, "-o", out, "--json", cwd=d)
    assert proc.returncode != 1, proc.stderr  # run and solve have no exit 1 on valid input
    check_outcome(proc, out, instance=inst, json_mode=True)


@FUZZ
@given(data=st.data())
def test_fuzzed_schedule(tmp_path_factory, base_schedule, data):
    d = tmp_path_factory.mktemp("sched")
    sched = d / "s.json"
    sched.write_bytes(data.draw(mutated_json(base_schedule)))
    proc = oasis_opt("validate", ROOT / "instances" / "small-s0.json", sched, "--json", cwd=d)
    check_outcome(proc, None)
    if proc.returncode in (0, 1):
        rep = json.loads(proc.stdout)
        assert rep["feasible"] == (proc.returncode == 0)


# --- traces (CSV) --------------------------------------------------------------------------

#: Synthetic rows in each importer's format (made up here, not copied from any trace).
TRACES = {
    "philly": ("timestamp,duration,num_gpus,gpu_time,cluster",
               ["2017-10-03 0{h}:1{m}:00,{d}.0,{g},{gd}.0,vc{c}"]),
    "tiresias": ("job_id,num_gpu,submit_time,iterations,model_name,duration,interval",
                 ["{i},{g},{s},{it},resnet50,{d},{m}"]),
    "alibaba": ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                "creation_time,deletion_time,scheduled_time",
                ["pod-{i},{cpu},{mem},{g},1000,,LS,Succeeded,{s},{e},{s}"]),
}
CELLS = st.sampled_from([
    "", " ", "nan", "NaN", "inf", "-inf", "-1", "0", "1e400", "1e-300", "abc", "1,2", '"',
    "2017-13-45 99:99:99", "9" * 400, "\x00", "true", "-0", "3.5", "1e12", "12345678901234567890",
])


def _trace_rows(fmt: str, n: int) -> list[list[str]]:
    header, (template,) = TRACES[fmt]
    rows = [header.split(",")]
    for i in range(n):
        g = [1, 2, 4, 8][i % 4]
        d = 600 + 900 * (i % 5)
        line = template.format(h=i % 10, m=i % 6, d=d, g=g, gd=g * d, c=i % 2, i=i,
                               s=60 * i, it=100 * (i + 1), cpu=4000 * g, mem=16384 * g,
                               e=60 * i + d)
        rows.append(line.split(","))
    return rows


@st.composite
def mutated_csv(draw, fmt: str) -> bytes:
    rows = _trace_rows(fmt, 12)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["cell", "cell", "cell", "drop_col", "add_col", "dup_header",
                                   "short_row", "long_row", "blank"]))
        r = draw(st.integers(0, len(rows) - 1))
        if op == "cell" and rows[r]:
            rows[r][draw(st.integers(0, len(rows[r]) - 1))] = draw(CELLS)
        elif op == "drop_col" and len(rows[0]) > 1:
            c = draw(st.integers(0, len(rows[0]) - 1))
            rows = [row[:c] + row[c + 1:] for row in rows]
        elif op == "add_col":
            rows = [row + ["extra"] for row in rows]
        elif op == "dup_header":
            rows[0][draw(st.integers(0, len(rows[0]) - 1))] = rows[0][0]
        elif op == "short_row" and rows[r]:
            rows[r] = rows[r][:-1]
        elif op == "long_row":
            rows[r] = rows[r] + ["1"]
        elif op == "blank":
            rows[r] = []
    text = ("\n".join(",".join(row) for row in rows) + "\n").encode("utf-8", "surrogatepass")
    tail = draw(st.sampled_from(["keep"] * 8 + ["truncate", "bytes", "empty"]))
    if tail == "truncate":
        text = text[:draw(st.integers(0, max(0, len(text) - 1)))]
    elif tail == "bytes":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + b"\xff\xfe\x00" + text[at:]
    elif tail == "empty":
        text = b""
    return text


@FUZZ
@given(data=st.data(), fmt=st.sampled_from(sorted(TRACES)), skip=st.booleans())
def test_fuzzed_trace(tmp_path_factory, data, fmt, skip):
    d = tmp_path_factory.mktemp("trace")
    trace = d / "trace.csv"
    trace.write_bytes(data.draw(mutated_csv(fmt)))
    out = d / "inst.json"
    args = ["import", fmt, trace, "-o", out, "--jobs", "8", "--horizon", "30", "--json"]
    if fmt == "alibaba":
        nodes = d / "nodes.csv"
        nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\n"
                         + "".join(f"node{i},96000,786432,8,V100M32\n" for i in range(4)))
        args += ["--nodes", nodes]
    if skip:
        args.append("--skip-bad")
    proc = oasis_opt(*args, cwd=d)
    assert proc.returncode in (0, 2), proc.stderr
    check_outcome(proc, out, json_mode=True)
    if proc.returncode == 0:
        inst = load_instance(out)  # what the importer writes reads back strictly
        assert inst.num_jobs >= 1
        run = oasis_opt("run", out, "--algorithm", "oasis", "-o", d / "s.json", cwd=d)
        check_outcome(run, d / "s.json", instance=out)


# --- sweep grids -----------------------------------------------------------------------------

BASE_GRID = {
    "format": "oasis-sweep/1",
    "instances": ["inst.json", {"preset": "small", "seeds": [0], "jobs": 3, "horizon": 5}],
    "algorithms": {"oasis": {"u_scale": [0.5, 1.0]}, "fifo": {}},
    "reference": None,
    "out": "grid",
}


#: The built-in experiments' config form, which ``sweep`` reads too.
BASE_EXPERIMENT = {"experiment": "ratio", "seeds": 1, "quick": True, "out": "grid"}


@FUZZ
@given(data=st.data(), base=st.sampled_from([BASE_GRID, BASE_GRID, BASE_EXPERIMENT]))
def test_fuzzed_grid(tmp_path_factory, data, base):
    d = tmp_path_factory.mktemp("grid")
    small = json.loads((ROOT / "instances" / "edge-last-slot.json").read_text())
    (d / "inst.json").write_text(json.dumps(small))
    grid = d / "grid.json"
    grid.write_bytes(data.draw(mutated_json(base)))
    proc = oasis_opt("sweep", grid, "--workers", "0", "--json", cwd=d)
    check_outcome(proc, None, json_mode=True)
    assert proc.returncode in (0, 2), proc.stderr
    if proc.returncode == 2:  # refused: no results appear
        assert not (d / "grid").exists() or not any((d / "grid").iterdir()), proc.stderr


BASE_SPACE = json.loads((ROOT / "instances" / "spaces" / "tiny-2jobs.json").read_text())


@FUZZ
@given(data=st.data())
def test_fuzzed_space(tmp_path_factory, data):
    d = tmp_path_factory.mktemp("space")
    space = d / "space.json"
    space.write_bytes(data.draw(mutated_json(BASE_SPACE)))
    proc = oasis_opt("verify", space, "--algorithm", "fifo", "--max-instances", "300",
                     "--time-limit", "2", "-o", d / "out", "--json", cwd=d)
    check_outcome(proc, None, json_mode=True)
    assert proc.returncode in (0, 2), proc.stderr
    if proc.returncode == 2:  # refused: nothing ran, nothing written
        assert not (d / "out").exists(), proc.stderr


# --- command-line options ---------------------------------------------------------------------

OPTION_VALUES = st.sampled_from([
    "0", "1", "-1", "3", "1e309", "nan", "inf", "-inf", "1e-300", "abc", "", "10000000000",
    "99999999999999999999", "0.5", "4.0", "2G", "1K", "-5M",
    "1e-320", "-0", "²", "٣", "research", "whole", "40,,40", "all",
    "1_0", "١٠", " 5", "+5", "0x10", "-", "[" * 950,
])
COMMAND_LINES = {
    "generate": (["generate", "--preset", "small", "-o", "{out}"],
                 ["--jobs", "--horizon", "--seed", "--max-share", "--max-memory"]),
    "run": (["run", "{inst}", "--algorithm", "oasis", "-o", "{out}"],
            ["--u-scale", "--l-scale", "--max-memory"]),
    "solve": (["solve", "{inst}", "-o", "{out}", "--time-limit", "5"],
              ["--time-limit", "--mip-gap", "--max-memory"]),
    "adversary": (["adversary", "--algorithm", "fifo", "--evaluations", "4", "--workers", "0",
                   "-o", "{out}"],
                  ["--jobs", "--horizon", "--seed", "--worker-servers", "--time-limit",
                   "--budget"]),  # not --evaluations: 10^10 of them is a long, valid request
    "export": (["export", "{inst}", "-o", "{out_mps}"], ["--max-memory"]),
    "import": (["import", "tiresias", "{trace}", "-o", "{out}"],
               ["--jobs", "--start", "--slot-seconds", "--horizon", "--servers", "--load",
                "--elastic", "--efficiency", "--slack", "--urgency"]),
    # the recent flags (issue: hostile audit of the whole command line)
    "ratio": (["ratio", "{inst}", "--algorithms", "fifo", "--time-limit", "5"],
              ["--time-limit", "--workers", "--max-memory"]),
    "verify": (["verify", "{space}", "--algorithm", "fifo", "-o", "{out}"],
               ["--max-instances", "--max-share", "--time-limit", "--workers"]),
    "experiment": (["experiment", "trace", "--quick", "--seeds", "1", "--workers", "0",
                    "--out", "{out}"],
                   ["--scale", "--time-limit", "--seeds"]),
}


@FUZZ
@given(command=st.sampled_from(sorted(COMMAND_LINES)), data=st.data())
def test_fuzzed_options(tmp_path_factory, command, data):
    d = tmp_path_factory.mktemp("opts")
    argv, options = COMMAND_LINES[command]
    values = {"inst": ROOT / "instances" / "small-s0.json", "out": d / "out.json",
              "out_mps": d / "out.mps",
              "trace": ROOT / "instances" / "traces" / "tiresias" / "60_job.csv",
              "space": ROOT / "instances" / "spaces" / "tiny-2jobs.json"}
    args = [str(a).format(**values) for a in argv]
    for opt in data.draw(st.lists(st.sampled_from(options), min_size=1, max_size=3,
                                  unique=True)):
        args += [opt, data.draw(OPTION_VALUES)]
    if command == "experiment":  # the last --seeds counts
        seeds = args[max(i for i, a in enumerate(args) if a == "--seeds") + 1]
        if seeds.isascii() and seeds.isdigit() and 2 < int(seeds) <= 100_000:
            return  # a long, valid request
    if command == "adversary":
        if "--jobs" not in args:
            args += ["--jobs", "2"]
        args += ["--horizon", "3"] if "--horizon" not in args else []
    proc = oasis_opt(*args, cwd=d)
    out = d / ("out.mps" if command == "export" else "out.json")
    check_outcome(proc, out, instance=values["inst"] if command in ("run", "solve") else None)
