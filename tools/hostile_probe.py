"""Adversarial probe of the whole command line: hostile files, flag values and output paths.

Run ``python tools/hostile_probe.py [-v] [FILTER]`` (``--help``: this text; ``PROBE_JOBS``:
cases at once, 2): every case whose label holds FILTER runs ``oasis-opt`` as a
subprocess with a timeout and is judged by the quality bar (docs/model.md "Strict numbers"):
bad input exits 2 with one line naming the place, no traceback, nothing half-written; nothing
hangs. Where an input is accepted by design (a byte-order mark, a missing output folder,
finite extremes the importer clamps) the case says so. It prints the cases that break it
(and, with ``-v``, every case): nothing, on a sound tree. Not a test: the defects it found
are pinned in ``tests/test_hostile_cli.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "instances" / "small-s0.json"
TIRESIAS = ROOT / "instances" / "traces" / "tiresias" / "60_job.csv"
SPACE = ROOT / "instances" / "spaces" / "tiny-2jobs.json"
TIMEOUT = 90
OUT = Path("@OUT@")  # replaced per case by a fresh folder


def _put(p: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data, encoding="utf-8")
    return p


def hostile_files(d: Path) -> dict[str, Path]:
    """name -> a hostile file (or directory) standing where an instance or schedule goes."""
    base = SMALL.read_text()
    doc = json.loads(base)
    f: dict[str, Path] = {}

    def put(name: str, data: str | bytes) -> None:
        f[name] = _put(d / name, data)

    put("empty.json", "")
    put("ws.json", "   \n\t ")
    put("truncated.json", base[: len(base) // 2])
    put("bom.json", "\ufeff" + base)
    put("crlf.json", base.replace("\n", "\r\n"))
    put("latin1.json", base.encode().replace(b'"small', b'"sm\xe9all'))
    put("nan.json", base.replace('"horizon": ', '"horizon": NaN, "x": ', 1))
    put("deep.json", "[" * 100000 + "]" * 100000)
    put("array.json", "[]")
    put("number.json", "4")
    put("null.json", "null")
    put("string.json", '"oasis-instance/1"')
    put("dupkey.json", base.replace('"horizon":', '"horizon": 3, "horizon":', 1))
    put("big-int.json", base.replace('"horizon": ', '"horizon": 1' + "0" * 5000 + ', "y": ', 1))
    for key, val in [("horizon", 1e309), ("horizon", -0.0), ("horizon", True),
                     ("horizon", "10"), ("horizon", None), ("horizon", [10]),
                     ("jobs", {}), ("jobs", "x"), ("jobs", [1]), ("jobs", [[]]),
                     ("resources", "gpu"), ("resources", [1, 2]), ("resources", []),
                     ("worker_servers", {}), ("worker_servers", [None]),
                     ("ps_servers", 3), ("format", 1), ("name", 5), ("name", ""),
                     ("name", "x" * 10000), ("name", "../../etc/passwd")]:
        dd = json.loads(base)
        dd[key] = val
        text = json.dumps(dd).replace("Infinity", "1e309")
        put(f"top-{key}-{type(val).__name__}-{str(val)[:8]}.json".replace("/", "_"), text)
    for key, val in [("id", 3), ("id", None), ("arrival", -0.0), ("arrival", -1),
                     ("arrival", 1.5), ("workload", 0), ("workload", 1e308),
                     ("max_workers", 0), ("ps_ratio", 0), ("ps_ratio", -1),
                     ("ps_ratio", float("nan")), ("worker_demand", "1,2"),
                     ("worker_demand", [[1]]), ("utility", None), ("utility", {}),
                     ("utility", {"kind": "bogus"}), ("utility", {"kind": "table"}),
                     ("utility", {"kind": "table", "values": []}),
                     ("utility", {"kind": "table", "values": [1e400]}),
                     ("utility", {"kind": "deadline", "value": 5, "deadline": -1}),
                     ("utility", {"kind": "linear", "value": 5, "decay": -1}),
                     ("utility", {"kind": "sigmoid", "gamma1": 5, "gamma2": 0, "gamma3": 0}),
                     ("training", {}), ("requested_workers", 99), ("extra_field", 1)]:
        dd = json.loads(base)
        dd["jobs"][0][key] = val
        text = json.dumps(dd).replace("NaN", "NaN").replace("Infinity", "1e400")
        put(f"job-{key}-{str(val)[:12]}.json".replace("/", "_").replace(" ", ""), text)
    (d / "a-dir.json").mkdir()
    f["dir"] = d / "a-dir.json"
    f["missing"] = d / "no-such.json"
    f["devnull"] = Path("/dev/null")
    big = d / "huge.json"
    with big.open("w") as fh:  # 300 MB of whitespace then a document
        fh.write(" " * 300_000_000)
        fh.write(base)
    f["huge"] = big
    del doc
    return f


def schedules(d: Path) -> dict[str, Path]:
    """Schedules for ``validate``/``show``: unknown job, unknown server, wrong types."""
    out = subprocess.run(["oasis-opt", "run", str(SMALL), "-a", "fifo", "-o",
                          str(d / "fifo.json")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    base = json.loads((d / "fifo.json").read_text())
    s: dict[str, Path] = {}

    def put(name: str, doc: object) -> None:
        p = d / name
        p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        s[name] = p

    def mut(fn) -> dict:
        x = json.loads(json.dumps(base))
        fn(x)
        return x

    job = next(j for j in base["jobs"] if j["allocations"])
    idx = base["jobs"].index(job)
    put("sched-unknown-job.json", mut(lambda x: x["jobs"][idx].update(id="nope")))
    put("sched-unknown-server.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(
        workers={"ghost": 1})))
    put("sched-unknown-ps.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(
        ps={"ghost": 1})))
    put("sched-dup-job.json", mut(lambda x: x["jobs"].append(x["jobs"][idx])))
    put("sched-slot-neg.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(slot=-1)))
    put("sched-slot-big.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(
        slot=10**6)))
    put("sched-slot-float.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(
        slot=1.5)))
    put("sched-workers-list.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(
        workers=[1])))
    put("sched-workers-neg.json", mut(lambda x: x["jobs"][idx]["allocations"][0].update(
        workers={next(iter(job["allocations"][0]["workers"])): -1})))
    put("sched-alloc-null.json", mut(lambda x: x["jobs"][idx].update(allocations=None)))
    put("sched-jobs-dict.json", mut(lambda x: x.update(jobs={})))
    put("sched-total-str.json", mut(lambda x: x.update(total_utility="1")))
    put("sched-format.json", mut(lambda x: x.update(format="oasis-instance/1")))
    put("sched-instance-other.json", mut(lambda x: x.update(instance="other")))
    put("sched-extras-list.json", mut(lambda x: x.update(extras=[1])))
    put("sched-dup-slot.json", mut(lambda x: x["jobs"][idx]["allocations"].append(
        x["jobs"][idx]["allocations"][0])))
    put("sched-completion-str.json", mut(lambda x: x["jobs"][idx].update(
        completion_slot="3")))
    put("sched-completion-big.json", mut(lambda x: x["jobs"][idx].update(
        completion_slot=10**13)))
    s["fifo"] = d / "fifo.json"
    return s


def traces(d: Path) -> dict[str, Path]:
    """Hostile tiresias/philly traces: missing columns, bad bytes, BOM, CRLF, NaN."""
    text = TIRESIAS.read_text()
    lines = text.splitlines()
    t: dict[str, Path] = {}

    def put(name: str, data: str | bytes) -> None:
        t[name] = _put(d / name, data)

    put("tr-empty.csv", "")
    put("tr-header-only.csv", lines[0] + "\n")
    put("tr-bom.csv", "\ufeff" + text)
    put("tr-crlf.csv", text.replace("\n", "\r\n"))
    put("tr-latin1.csv", text.encode() + b"\xff\xfe,1,2\n")
    header = lines[0].split(",")
    put("tr-missing-col.csv", "\n".join(",".join(r.split(",")[1:]) for r in lines) + "\n")
    put("tr-nan.csv", "\n".join([lines[0]] + [",".join("nan" if i == len(header) - 1 else v
                                                    for i, v in enumerate(r.split(",")))
                                              for r in lines[1:]]) + "\n")
    put("tr-inf.csv", "\n".join([lines[0]] + [",".join("1e309" if i == 2 else v
                                                     for i, v in enumerate(r.split(",")))
                                              for r in lines[1:]]) + "\n")
    put("tr-neg.csv", "\n".join([lines[0]] + [",".join("-5" if i == 2 else v
                                                    for i, v in enumerate(r.split(",")))
                                              for r in lines[1:]]) + "\n")
    put("tr-short-rows.csv", "\n".join([lines[0]] + [r.split(",")[0] for r in lines[1:]])
        + "\n")
    put("tr-nul.csv", text.replace(",", "\x00,", 3))
    put("tr-quote.csv", lines[0] + '\n"unterminated,1,2\n')
    put("tr-json.csv", SMALL.read_text())
    return t


#: Single commands that may succeed, by a flag and its value: finite extremes the importer
#: clamps or scales (a valid instance comes out), "all" in any case and spacing, a repeated
#: algorithm (run once), a memory limit beyond the machine (no limit), and
#: ``module:function`` names that resolve but fail on an instance (an algorithm error,
#: exit 1).
_ACCEPTED: dict[tuple[str, str, str], set[int]] = {
    **{("import", flag, v): {0, 2}
       for flag in ("--jobs", "--slot-seconds", "--load", "--slack", "--urgency", "--elastic")
       for v in ("1e300", "1e-300", "1" + "0" * 30, "ALL", " all ")},
    ("import", "--horizon", "1"): {0, 2},
    ("ratio", "--algorithms", "fifo,fifo"): {0},
    ("run", "-a", "os:system"): {1, 2}, ("run", "-a", "json:loads"): {1, 2},
    ("run", "--max-memory", "99999999999999999999T"): {0, 2},
}


def _expected(cmd: list[str]) -> set[int]:
    """The exit statuses a single command of the list below may end with: 2 (bad input)
    unless one of its flag/value pairs is accepted by design for that command."""
    for flag, value in zip(cmd, cmd[1:], strict=False):
        if (cmd[0], flag, value) in _ACCEPTED:
            return _ACCEPTED[cmd[0], flag, value]
    return {2}


def cases(d: Path) -> list[tuple[str, list[str], set[int]]]:
    f = hostile_files(d)
    s = schedules(d)
    tr = traces(d)
    ok = str(SMALL)
    o = str(OUT / "o.json")
    c: list[tuple[str, list[str], set[int]]] = []
    # every hostile instance through each command that reads one
    for name, p in f.items():
        # Accepted by design: CRLF and a byte-order mark (tests/test_hostile_cli.py), −0.0,
        # an extra field, any string as the instance's name (SPEC §4), a sigmoid with
        # γ2 = 0 (a constant utility).
        good = {0, 2} if name in ("crlf.json", "bom.json", "top-horizon-float--0.0.json",
                                  "job-arrival--0.0.json", "job-extra_field-1.json") \
            or name.startswith(("top-name-str-", "job-utility-{'kind':'si")) else {2}
        c.append((f"run {name}", ["run", str(p), "-a", "fifo", "-o", o], good))
        if name in ("huge",):
            continue
        c.append((f"validate {name}/inst", ["validate", str(p), str(s["fifo"])], good | {1}))
        c.append((f"validate {name}/sched", ["validate", ok, str(p)], {2}))
        c.append((f"export {name}", ["export", str(p), "-o", str(OUT / "m.lp")], good))
    for name, p in s.items():
        c.append((f"validate {name}", ["validate", ok, str(p)], {0, 1, 2}))
        c.append((f"show {name}", ["show", ok, str(p), "-o", str(OUT / "p.png")],
                  {0, 1, 2}))
    # outputs in hostile places (never a real device: as root, a rename would replace it)
    os.mkfifo(d / "a-fifo")
    for where in [d / "missing-dir" / "x.json", d / "a-dir.json", Path("/proc/version"),
                  Path("/sys/x.json"), d / "a-fifo", Path("")]:
        # What each kind of output argument must do there: a file at exactly that path, a
        # file at the path + a suffix (a fresh name beside it), a results folder, a prefix
        # of several files. Missing folders are made (io.atomic_output); only /proc and
        # /sys refuse everything.
        home = where  # where folder outputs go
        if where.parent == d / "missing-dir":
            file = suffixed = folder = prefix = {0}
            home = where.with_name("x-folder")  # x.json itself is a file once a case wrote it
        elif str(where).startswith(("/proc", "/sys")):
            file = suffixed = folder = prefix = {2}
        else:  # a folder, a named pipe, "." (Path(""))
            file, suffixed, prefix = {2}, {0}, {0}
            folder = {2} if where.name == "a-fifo" else {0}
        c.append((f"run -o {where}", ["run", ok, "-a", "fifo", "-o", str(where)], file))
        c.append((f"solve -o {where}", ["solve", ok, "-o", str(where)], file))
        c.append((f"generate -o {where}", ["generate", "--preset", "small", "-o", str(where)],
                  file))
        c.append((f"export -o {where}.lp", ["export", ok, "-o", str(where) + ".lp"], suffixed))
        c.append((f"show -o {where}.png", ["show", ok, str(s["fifo"]), "-o",
                                           str(where) + ".png"], suffixed))
        c.append((f"import -o {where}", ["import", "tiresias", str(TIRESIAS), "-o",
                                         str(where)], file))
        c.append((f"ratio --plot {where}.png", ["ratio", ok, "--algorithms", "fifo",
                                                "--plot", str(where) + ".png"], suffixed))
        c.append((f"ratio --opt-cache {home}", ["ratio", ok, "--algorithms", "fifo",
                                                 "--opt-cache", str(home)], folder))
        c.append((f"experiment --out {home}", ["experiment", "ratio", "--quick", "--seeds",
                                                "1", "--workers", "0", "--out", str(home)],
                  folder))
        c.append((f"verify -o {home}", ["verify", str(SPACE), "-a", "fifo", "-o",
                                         str(home)], folder))
        c.append((f"adversary -o {where}", ["adversary", "-a", "fifo", "--evaluations", "2",
                                            "-o", str(where)],
                  file | {0} if where.name == "a-fifo" else file))  # no candidate: no file
        c.append((f"adversary --trajectory {where}", ["adversary", "-a", "fifo",
                                                      "--evaluations", "2", "-o",
                                                      str(OUT / "w.json"),
                                                      "--trajectory", str(where)], prefix))
    # outputs that are folders with the suffix the command wants
    for suffix in (".png", ".lp", ".mps", ".json", ".svg"):
        (d / f"dir{suffix}").mkdir()
    c += [("show -o DIR.png", ["show", ok, str(s["fifo"]), "-o", str(d / "dir.png")], {2}),
          ("export -o DIR.lp", ["export", ok, "-o", str(d / "dir.lp")], {2}),
          ("export -o DIR.mps", ["export", ok, "-o", str(d / "dir.mps")], {2}),
          ("ratio --plot DIR.svg", ["ratio", ok, "--algorithms", "fifo", "--plot",
                                    str(d / "dir.svg")], {2}),
          ("adversary --trajectory DIR", ["adversary", "-a", "fifo", "--evaluations", "1",
                                          "-o", o, "--trajectory", str(d / "dir")], {2}),
          ("verify -o with a folder for instances.csv",
           ["verify", str(SPACE), "-a", "fifo", "-o", str(d)], {0, 2})]
    # numeric flags
    bad_nums = ["0", "-1", "nan", "inf", "-inf", "1e309", "", "abc", "1e-320", "-0",
                "1_0", "١٠", " 5", "+5", "0x10"]  # int()/float() took the last five
    for v in bad_nums:
        for cmd in (["solve", ok], ["ratio", ok, "--algorithms", "fifo"],
                    ["verify", str(SPACE), "-a", "fifo", "-o", str(OUT / "v")],
                    ["adversary", "-a", "fifo", "--evaluations", "2", "-o", o],
                    ["experiment", "trace", "--quick", "--seeds", "1", "--workers", "0",
                     "--out", str(OUT / "e")]):
            c.append((f"{cmd[0]} --time-limit {v!r}", cmd + ["--time-limit", v], {0, 2}))
        for cmd in (["solve", ok], ["ratio", ok, "--algorithms", "fifo"],
                    ["verify", str(SPACE), "-a", "fifo", "-o", str(OUT / "v")],
                    ["experiment", "ratio", "--quick", "--seeds", "1", "--out",
                     str(OUT / "e")],
                    ["sweep", str(d / "no-grid.json")]):
            c.append((f"{cmd[0]} --workers {v!r}", cmd + ["--workers", v], {0, 2}))
        c.append((f"experiment trace --scale {v!r}", ["experiment", "trace", "--scale", v,
                                                      "--seeds", "1", "--workers", "0",
                                                      "--out", str(OUT / "e")], {0, 2}))
        c.append((f"import --jobs {v!r}", ["import", "tiresias", str(TIRESIAS), "--jobs", v,
                                            "-o", o], {0, 2}))
        for flag in ["--start", "--slot-seconds", "--horizon", "--servers", "--load",
                     "--elastic", "--efficiency", "--slack", "--urgency", "--gpus-per-server"]:
            c.append((f"import {flag} {v!r}", ["import", "tiresias", str(TIRESIAS), flag, v,
                                                "-o", o], {0, 2}))
        for flag in ["--jobs", "--horizon", "--seed", "--max-share"]:
            c.append((f"generate {flag} {v!r}", ["generate", "--preset", "small", flag, v,
                                                  "-o", o], {0, 2}))
        for flag in ["--u-scale", "--l-scale"]:
            c.append((f"run {flag} {v!r}", ["run", ok, "-a", "oasis", flag, v], {0, 2}))
        c.append((f"solve --mip-gap {v!r}", ["solve", ok, "--mip-gap", v], {0, 2}))
        c.append((f"run --max-memory {v!r}", ["run", ok, "-a", "fifo", "--max-memory", v],
                  {0, 2}))
        for flag in ["--jobs", "--horizon", "--worker-servers", "--ps-servers", "--max-share",
                     "--evaluations", "--budget", "--seed"]:
            c.append((f"adversary {flag} {v!r}", ["adversary", "-a", "fifo", "--evaluations",
                                                  "2", flag, v, "-o", o], {0, 2}))
        for flag in ["--share", "--steps"]:
            c.append((f"adversary --family {flag} {v!r}", ["adversary", "--family",
                                                           "threshold", flag, v, "-o",
                                                           str(OUT / "fam")], {0, 2}))
        for flag in ["--max-instances", "--max-share"]:
            c.append((f"verify {flag} {v!r}", ["verify", str(SPACE), "-a", "fifo", flag, v,
                                               "-o", str(OUT / "v2")], {0, 2}))
        c.append((f"experiment --seeds {v!r}", ["experiment", "ratio", "--quick", "--seeds",
                                                v, "--workers", "0", "--out",
                                                str(OUT / "e")], {0, 2}))
    big = "1" + "0" * 30
    for cmd in [["generate", "--preset", "small", "--seed", big, "-o", o],
                ["generate", "--preset", "small", "--seed", "-5", "-o", o],
                ["generate", "--preset", "small", "--jobs", big, "-o", o],
                ["generate", "--preset", "small", "--jobs", "100000000", "-o", o],
                ["generate", "--preset", "small", "--horizon", big, "-o", o],
                ["adversary", "-a", "fifo", "--seed", "-5", "--evaluations", "2", "-o", o],
                ["adversary", "-a", "fifo", "--seed", big, "--evaluations", "2", "-o", o],
                ["adversary", "-a", "fifo", "--jobs", big, "--evaluations", "2", "-o", o],
                ["adversary", "-a", "fifo", "--evaluations", big, "-o", o],
                ["adversary", "--family", "threshold", "--steps", big, "-o",
                 str(OUT / "f")],
                ["adversary", "--family", "threshold", "--share", "1e-300", "-o",
                 str(OUT / "f")],
                ["experiment", "ratio", "--seeds", big, "--workers", "0", "--out",
                 str(OUT / "e")],
                ["experiment", "trace", "--scale", big, "--seeds", "1", "--workers", "0",
                 "--out", str(OUT / "e")],
                ["experiment", "trace", "--scale", ",", "--out", str(OUT / "e")],
                ["experiment", "trace", "--scale", "40,,40", "--out", str(OUT / "e")],
                ["experiment", "trace", "--scale", "٣", "--out", str(OUT / "e")],
                ["experiment", "trace", "--scale", "²", "--out", str(OUT / "e")],
                ["experiment", "nope", "--out", str(OUT / "e")],
                ["experiment", "ratio", "--method", "colgen", "--quick", "--workers", "0",
                 "--out", str(OUT / "e")],
                ["experiment", "ratio", "--scale", "40", "--quick", "--workers", "0",
                 "--out", str(OUT / "e")],
                ["experiment", "ratio", "-a", "nope:nope", "--quick", "--workers", "0",
                 "--out", str(OUT / "e")],
                ["import", "tiresias", str(TIRESIAS), "--jobs", big, "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--start", big, "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--horizon", big, "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--servers", big, "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--slot-seconds", "1e-300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--slot-seconds", "1e300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--load", "1e300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--load", "1e-300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--elastic", "1e300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--slack", "1e300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--slack", "1e-300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--urgency", "1e300", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--jobs", "all", "--horizon", "1",
                 "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--jobs", "ALL", "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--jobs", " all ", "-o", o],
                ["import", "bogus", str(TIRESIAS), "-o", o],
                ["import", "philly", str(TIRESIAS), "-o", o],
                ["import", "gavel", str(TIRESIAS), "-o", o],
                ["import", "pollux", str(TIRESIAS), "-o", o],
                ["import", "alibaba", str(TIRESIAS), "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--cluster-spec", str(f["dir"]), "-o", o],
                ["import", "tiresias", str(TIRESIAS), "--cluster-spec", str(f["empty.json"]),
                 "-o", o],
                ["import", "gavel", str(TIRESIAS), "--throughputs", str(f["deep.json"]),
                 "-o", o],
                ["import", "pollux", str(TIRESIAS), "--apps", str(f["empty.json"]), "-o", o],
                ["import", "alibaba", str(TIRESIAS), "--nodes", str(f["dir"]), "-o", o],
                ["import", "alibaba", str(TIRESIAS), "--phases", ",", "-o", o],
                ["solve", ok, "--solver", "nope"],
                ["solve", ok, "--solver", ""],
                ["solve", ok, "--floor", "nope"],
                ["solve", ok, "--floor", ",,,", "--time-limit", "5"],
                ["solve", ok, "--floor", "nope", "--time-limit", "5"],
                ["solve", ok, "--workers", "100000"],
                ["solve", ok, "--workers", big],
                ["ratio", ok, "--algorithms", ""],
                ["ratio", ok, "--algorithms", ",,"],
                ["ratio", ok, "--algorithms", "fifo,fifo"],
                ["ratio", ok, "--algorithms", "fifo", "--opt-cache", str(f["empty.json"])],
                ["ratio", ok, "--algorithms", "fifo", "--plot", str(d / "x.gif")],
                ["ratio", ok, "--algorithms", "fifo", "--param", "fifo", "x=1"],
                ["ratio", ok, "--algorithms", "oasis", "--param", "oasis", "u_scale=NaN"],
                ["ratio", ok, "--algorithms", "oasis", "--param", "oasis", "u_scale=1e999"],
                ["ratio", ok, "--algorithms", "oasis", "--param", "oasis", "u_scale=-1"],
                ["ratio", ok, "--algorithms", "oasis", "--param", "oasis", "u_scale=true"],
                ["ratio", ok, "--algorithms", "oasis", "--param", "oasis", "u_scale=\"1\""],
                ["run", ok, "-a", "oasis", "--param", "u_scale=[1]"],
                ["run", ok, "-a", "oasis", "--param", "u_scale=" + "[" * 5000],
                ["run", ok, "-a", "oasis", "--param", "u_scale=" + "[" * 950 + "]" * 950],
                ["run", ok, "-a", "fifo", "-o", "-"],
                ["ratio", ok, "--algorithms", "fifo", "--plot", ""],
                ["ratio", ok, "--algorithms", "oasis", "--param", "oasis", "u_scale=-1"],
                ["sweep", str(d / "deep.toml")],
                ["run", ok, "-a", "oasis", "--param", "l_scale=0"],
                ["run", ok, "-a", "", ],
                ["run", ok, "-a", "os:system"],
                ["run", ok, "-a", "json:loads"],
                ["run", ok, "-a", ":"],
                ["run", ok, "-a", "no_such_mod:fn"],
                ["bench", "--opt-cache", str(f["empty.json"]), "--quick", "-a", "nope"],
                ["bench", "-a", "nope", "--quick"],
                ["sweep", str(f["empty.json"])],
                ["sweep", str(f["dir"])],
                ["sweep", str(f["deep.json"])],
                ["sweep", str(ok)],
                ["sweep", str(d / "grid.toml")],
                ["verify", str(ok), "-a", "fifo"],
                ["verify", str(f["empty.json"]), "-a", "fifo"],
                ["verify", str(f["dir"]), "-a", "fifo"],
                ["verify", str(SPACE), "-a", "nope"],
                ["verify", str(SPACE), "-a", "fifo", "--param", "x=1"],
                ["show", ok, str(s["fifo"]), "-o", str(d / "x.gif")],
                ["export", ok, "-o", str(d / "x.txt")],
                ["export", ok, "-o", str(OUT / ".lp")],
                ["run", ok, "-a", "fifo", "--max-memory", "1"],
                ["run", ok, "-a", "fifo", "--max-memory", "1e400G"],
                ["run", ok, "-a", "fifo", "--max-memory", "99999999999999999999T"],
                ["validate", ok, ok],
                ["validate", str(s["fifo"]), str(s["fifo"])],
                ]:
        label = " ".join(cmd[:1] + [a if len(a) < 40 else a[:37] + "..." for a in cmd[1:]])
        c.append((label, cmd, _expected(cmd)))
    (d / "grid.toml").write_text("format = [[[")
    (d / "deep.toml").write_text('experiment = "ratio"\nseeds.' + ".".join(["a"] * 50000)
                                 + " = 1")
    # dask addresses: fail fast, one line
    for addr in ["nope", "tcp://", "tcp://localhost:1", "tcp://127.0.0.1:99999",
                 "tcp://10.255.255.1:8786", "tcp://[::1", "inproc://x", "ws://localhost:1",
                 "tls://localhost:1", "", "local:", "tcp://localhost:-1", "udp://x:1",
                 "tcp://name.invalid:8786"]:
        for cmd in (["solve", ok], ["ratio", ok, "--algorithms", "fifo"],
                    ["verify", str(SPACE), "-a", "fifo", "-o", str(OUT / "v3")],
                    ["adversary", "-a", "fifo", "--evaluations", "2", "-o", o],
                    ["experiment", "ratio", "--quick", "--seeds", "1", "--out",
                     str(OUT / "e")],
                    ["sweep", str(d / "grid.json")]):
            c.append((f"{cmd[0]} --dask {addr!r}", cmd + ["--dask", addr], {2}))
    (d / "grid.json").write_text(json.dumps({
        "format": "oasis-sweep/1", "instances": [str(SMALL)], "algorithms": {"fifo": {}},
        "reference": None, "out": str(OUT / "grid")}))
    # a space of 10^9 jobs per instance (once hung building its first instance) and one
    # whose size passes a float's range (once an OverflowError)
    space = json.loads(SPACE.read_text())
    for jobs in (10**9, 10_000):
        (d / f"space-{jobs}.json").write_text(json.dumps({**space, "jobs": jobs}))
        c.append((f"verify jobs={jobs}", ["verify", str(d / f"space-{jobs}.json"), "-a",
                                          "fifo", "-o", str(OUT / "v4")], {2}))
    for name, p in tr.items():
        c.append((f"import tiresias {name}", ["import", "tiresias", str(p), "-o", o], {0, 2}))
        c.append((f"import philly {name}", ["import", "philly", str(p), "-o", o], {0, 2}))
        c.append((f"import alibaba {name}", ["import", "alibaba", str(p), "-o", o], {0, 2}))
    for name in ("empty.json", "dir", "latin1.json", "missing"):
        c.append((f"import tiresias {name}", ["import", "tiresias", str(f[name]), "-o", o], {2}))
        c.append((f"import gavel {name}", ["import", "gavel", str(f[name]), "-o", o], {2}))
        c.append((f"import pollux {name}", ["import", "pollux", str(f[name]), "-o", o], {2}))
    return c


def judge(case, d: Path) -> tuple[str, str] | None:
    label, argv, good = case
    out_dir = d / "out"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    argv = [a.replace("@OUT@", str(out_dir)) for a in argv]
    env = {**os.environ, "OASIS_MAX_MEMORY": os.environ.get("OASIS_MAX_MEMORY", "2G")}
    try:
        r = subprocess.run(["oasis-opt", *argv], capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=d, env=env, errors="replace")
    except subprocess.TimeoutExpired:
        return label, f"HANG (> {TIMEOUT} s)"
    err = r.stderr
    problems = []
    if "Traceback" in err:
        problems.append("traceback")
    if r.returncode not in good:
        problems.append(f"exit {r.returncode} (want {sorted(good)})")
    if "internal error" in err:
        problems.append("internal error")
    if r.returncode == 2 and len([x for x in err.splitlines()  # progress lines: indented
                                  if x.strip() and not x.startswith(("usage:", " "))]) > 1:
        problems.append("more than one line")
    if r.returncode == 2:
        left = [p.name for p in out_dir.rglob("*")]
        if left:
            problems.append(f"wrote {left[:3]}")
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if problems or VERBOSE:
        return label, f"{'; '.join(problems) or 'ok'} | rc={r.returncode} | {last[:300]}"
    return None


VERBOSE = "-v" in sys.argv


def main() -> int:
    if sys.argv[1:] in (["-h"], ["--help"]):  # (a filter may start with -, but not these)
        print(__doc__.strip())
        return 0
    pattern = next((a for a in sys.argv[1:] if a != "-v"), "")  # a filter may start with -
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        all_cases = [c for c in cases(d) if pattern in c[0]]
        print(f"{len(all_cases)} cases", file=sys.stderr)

        def one(item):
            sub = d / f"case{item[0]}"
            sub.mkdir()
            return judge(item[1], sub)

        with ThreadPoolExecutor(int(os.environ.get("PROBE_JOBS", "2"))) as pool:
            for res in pool.map(one, enumerate(all_cases)):
                if res:
                    print(f"{res[0]}\n    {res[1]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
