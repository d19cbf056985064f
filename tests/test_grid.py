"""``oasis-opt sweep GRID``: the user's own grid. Rows are the algorithms' own results against
the manifest's optima, the store resumes, executors agree, TOML equals JSON, the built-in
experiment configs still run, and bad grids are refused with the field named, nothing written."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from oasis_opt import algorithms
from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.generator import generate
from oasis_opt.grid import COLUMNS, load, run_grid, run_sweep_cli
from oasis_opt.io import load_instance

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
MANIFEST = {e["file"]: e for e in json.loads((INSTANCES / "manifest.json").read_text())
            ["instances"]}
PHILLY = ("timestamp,duration,num_gpus,gpu_time,cluster\n"
          "2017-10-09 07:00:00,90.0,1,90.0,vcA\n"
          "2017-10-09 07:01:00,600.0,2,1200.0,vcA\n"
          "2017-10-09 07:05:00,61.0,1,61.0,vcA\n")


def _grid(folder: Path, **change) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "inst").mkdir(exist_ok=True)
    for name in ("small-s0.json", "small-s3.json"):
        shutil.copy(INSTANCES / name, folder / "inst" / name)
    (folder / "philly.csv").write_text(PHILLY)
    grid = {"format": "oasis-sweep/1",
            "instances": ["inst/small-*.json",
                          {"preset": "small", "seeds": [1], "jobs": [4], "horizon": 6},
                          {"trace": "philly", "file": "philly.csv", "jobs": 3, "horizon": 12,
                           "slot_seconds": 60}],
            "algorithms": {"oasis": {"u_scale": [0.5, 1], "l_scale": 1}, "fifo": {}},
            "reference": {"solve": {"time_limit": 30}},
            "out": "out"}
    grid.update(change)
    return grid


def _write(folder: Path, grid: dict, name: str = "grid.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(grid))
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_rows_are_the_algorithms_results_against_opt(tmp_path):
    path = _write(tmp_path, _grid(tmp_path))
    res = run_sweep_cli(str(path), workers=0, dask=None, out=None, progress=False)
    rows = _rows(Path(res["csv"]))
    with open(res["csv"]) as f:
        assert tuple(next(csv.reader(f))) == COLUMNS
    labels = ["inst/small-s0.json", "inst/small-s3.json", "small-s1-j4-T6",
              "philly:philly.csv#0+3?horizon=12&slot_seconds=60"]
    combos = ['{"l_scale":1,"u_scale":0.5}', '{"l_scale":1,"u_scale":1}', "{}"]
    assert sorted((r["instance"], r["params"]) for r in rows) == sorted(
        (lab, c) for lab in labels for c in combos)
    assert res["done"] == res["new"] == res["rows_expected"] == 12
    for r in rows:
        if r["instance"].startswith("inst/"):  # the reference is the manifest's optimum
            opt = MANIFEST[Path(r["instance"]).name]["optimum"]
            assert float(r["opt"]) == pytest.approx(opt, rel=1e-6)
            inst = load_instance(INSTANCES / Path(r["instance"]).name)
        elif r["instance"].startswith("small"):
            inst = generate("small", seed=1, jobs=4, horizon=6)
        else:
            continue
        params = json.loads(r["params"])
        sched = algorithms.run(r["algorithm"], inst, **params)
        assert float(r["utility"]) == pytest.approx(sched.total_utility, rel=1e-12)
        assert int(r["completed"]) == sched.completed
        assert float(r["bound"]) >= float(r["opt"]) * (1 - 1e-9)
        assert float(r["opt_over_alg"]) == pytest.approx(float(r["opt"]) / sched.total_utility)
    trace = [r for r in rows if r["instance"].startswith("philly")]
    assert len(trace) == 3 and all(r["opt"] != "" for r in trace)


def test_rerun_resumes_and_extends(tmp_path):
    grid = _grid(tmp_path, instances=["inst/small-s0.json"], reference=None)
    path = _write(tmp_path, grid)
    first = run_sweep_cli(str(path), workers=0, dask=None, out=None, progress=False)
    assert first["new"] == 3
    again = run_sweep_cli(str(path), workers=0, dask=None, out=None, progress=False)
    assert again["new"] == 0 and again["tasks_run"] == 0
    grid["algorithms"]["oasis"]["u_scale"] = [0.5, 1, 2]
    grid["algorithms"]["drf"] = {}
    _write(tmp_path, grid)
    more = run_sweep_cli(str(path), workers=0, dask=None, out=None, progress=False)
    assert more["new"] == 2 and more["done"] == 5
    rows = _rows(Path(more["csv"]))
    assert len({(r["instance"], r["algorithm"], r["params"]) for r in rows}) == 5
    assert all(r["opt"] == r["bound"] == r["opt_over_alg"] == "" for r in rows)


def test_a_trace_entry_is_named_by_its_mapping_too(tmp_path):
    """A trace entry's rows were keyed by its slice alone: after ``load`` 1 → 2 the rerun
    computed nothing ("new": 0) and kept the load-1 numbers, and the two could not be listed
    together ("listed twice")."""
    entry = {"trace": "philly", "file": "philly.csv", "jobs": 3, "horizon": 12,
             "slot_seconds": 60, "servers": 1}
    grid = _grid(tmp_path, instances=[entry], reference=None, algorithms={"fifo": {}})
    path = _write(tmp_path, grid)
    first = run_sweep_cli(str(path), workers=0, dask=None, out=None, progress=False)
    entry2 = {**entry, "servers": 2}
    _write(tmp_path, {**grid, "instances": [entry, entry2]})
    both = run_sweep_cli(str(path), workers=0, dask=None, out=None, progress=False)
    assert first["new"] == 1 and both["new"] == 1 and both["done"] == 2
    rows = {r["instance"]: r for r in _rows(Path(both["csv"]))}
    assert sorted(rows) == ["philly:philly.csv#0+3?horizon=12&servers=1&slot_seconds=60",
                            "philly:philly.csv#0+3?horizon=12&servers=2&slot_seconds=60"]


def test_values_that_are_one_key_are_one_row(tmp_path):
    """``u_scale: [1, 1.0]`` is one parameter key (an integral float is the integer): the
    run wrote its rows twice, and a rerun kept both."""
    grid = _grid(tmp_path, instances=["inst/small-s0.json"], reference=None,
                 algorithms={"oasis": {"u_scale": [1, 1.0, 2], "certificate": [True, False]}})
    res = run_sweep_cli(str(_write(tmp_path, grid)), workers=0, dask=None, out=None,
                        progress=False)
    rows = _rows(Path(res["csv"]))
    assert res["new"] == len(rows) == 4
    assert sorted(r["params"] for r in rows) == [
        '{"certificate":false,"u_scale":1}', '{"certificate":false,"u_scale":2}',
        '{"certificate":true,"u_scale":1}', '{"certificate":true,"u_scale":2}']


def test_process_pool_equals_in_process(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    res_a = run_grid(load(_write(a, _grid(a))), workers=0)
    res_b = run_grid(load(_write(b, _grid(b))), workers=2)

    def stable(p):
        return sorted(tuple((k, v) for k, v in r.items() if k != "seconds")
                      for r in _rows(Path(p)))
    assert stable(res_a["csv"]) == stable(res_b["csv"])
    assert res_b["executor"] == "processes"


@pytest.mark.slow
def test_local_dask_equals_in_process(tmp_path):
    pytest.importorskip("distributed")
    a, b = tmp_path / "a", tmp_path / "b"
    grid = _grid(a, instances=["inst/small-*.json"])
    res_a = run_grid(load(_write(a, grid)), workers=0)
    res_b = run_grid(load(_write(b, _grid(b, instances=["inst/small-*.json"]))), workers=2,
                     dask="local")
    assert res_b["executor"] == "dask"
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in _rows(Path(res_a["csv"]))]
    assert sorted(map(str, strip)) == sorted(
        str({k: v for k, v in r.items() if k != "seconds"}) for r in _rows(Path(res_b["csv"])))


def test_toml_grid_equals_json(tmp_path):
    pytest.importorskip("tomllib")
    toml = """format = "oasis-sweep/1"
instances = ["inst/small-s3.json", {preset = "small", seeds = 2, jobs = 4}]
reference = "none"
out = "out"

[algorithms.oasis]
u_scale = [0.5, 1.0]

[algorithms.fifo]
"""
    a, b = tmp_path / "a", tmp_path / "b"
    _grid(a)
    (a / "grid.toml").write_text(toml)
    res_t = run_sweep_cli(str(a / "grid.toml"), workers=0, dask=None, out=None, progress=False)
    grid = _grid(b, instances=["inst/small-s3.json", {"preset": "small", "seeds": 2,
                                                       "jobs": 4}],
                 algorithms={"oasis": {"u_scale": [0.5, 1.0]}, "fifo": {}}, reference=None)
    res_j = run_sweep_cli(str(_write(b, grid)), workers=0, dask=None, out=None, progress=False)

    def stable(p):
        return sorted(tuple((k, v) for k, v in r.items() if k != "seconds")
                      for r in _rows(Path(p)))
    assert stable(res_t["csv"]) == stable(res_j["csv"])
    assert len(_rows(Path(res_t["csv"]))) == 9  # (1 file + 2 seeds) × 3 combinations


def test_experiment_configs_still_run(tmp_path, capfd):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"experiment": "ratio", "seeds": 1, "quick": True,
                               "out": str(tmp_path / "res")}))
    code = main(["sweep", str(cfg), "--workers", "0", "--json"])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and data["kind"] == "experiment" and data["done"] > 0
    assert (tmp_path / "res" / "ratio.csv").exists()
    assert data["executor"] == "in-process"  # (it said "processes", as a grid's did not)


def test_an_experiment_configs_out_is_relative_to_it(tmp_path, capfd, monkeypatch):
    """``out`` of an experiment config is taken from the config's folder, as a grid's paths
    are (SPEC §6), not from the working folder."""
    (tmp_path / "cfg").mkdir()
    (tmp_path / "elsewhere").mkdir()
    cfg = tmp_path / "cfg" / "ratio.json"
    cfg.write_text(json.dumps({"experiment": "ratio", "seeds": 1, "quick": True,
                               "out": "res"}))
    monkeypatch.chdir(tmp_path / "elsewhere")
    code = main(["sweep", str(cfg), "--workers", "0", "--json"])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and Path(data["csv"]) == tmp_path / "cfg" / "res" / "ratio.csv"
    assert Path(data["csv"]).exists() and not (tmp_path / "elsewhere" / "res").exists()


BAD = [
    # pydantic's own words ("List should have at least 1 item after validation, not 0",
    # "Input should be a valid dictionary") in the files' words
    (lambda g: g.update(instances=[]), "instances: empty list: give at least one value"),
    (lambda g: g.update(algorithms=5), "algorithms: expected an object, got 5"),
    (lambda g: g.update(format="oasis-sweep/2"), "format: expected 'oasis-sweep/1'"),
    (lambda g: g.pop("reference"), "reference: missing field"),
    (lambda g: g.update(colour="red"), "colour: unknown field"),
    (lambda g: g["instances"].append("nothing-*.json"), "instances[3]: no file matches"),
    (lambda g: g["instances"].append({"size": 3}), "instances[3]: expected a file name"),
    (lambda g: g["instances"][1].update(seeds=["0"]),
     "instances[1].seeds[0]: expected an integer, got a string"),
    (lambda g: g["instances"][1].update(jobs=4.5), "instances[1].jobs: expected an integer"),
    # once generated one by one into memory until the machine killed the process
    (lambda g: g["instances"][1].update(seeds=10**9),
     "instances[1].seeds: 1000000000 seeds × 1 sizes are 1000000000 instances, more than"),
    (lambda g: g["instances"][1].update(seeds=list(range(1000)), jobs=list(range(1, 201))),
     "instances[1].seeds: 1000 seeds × 200 sizes are 200000 instances, more than"),
    (lambda g: g["instances"][1].update(preset="huge"), "instances[1].preset: unknown preset"),
    # an entry's error was told of another kind of entry ("instances[2].preset: missing field"
    # for a trace's bad field, "instances[1].preset: unknown field" for a preset's)
    (lambda g: g["instances"][1].update(colour=1), "instances[1].colour: unknown field"),
    (lambda g: g["instances"][2].update(colour=1), "instances[2].colour: unknown field"),
    (lambda g: g["instances"][2].pop("file"), "instances[2].file: missing field"),
    (lambda g: g["instances"][2].update(efficiency=2), "instances[2].efficiency: "),
    (lambda g: g["instances"][2].update(phases="x"),
     "instances[2].phases: expected a list, got a string ('x')"),
    (lambda g: g["instances"].append(5), "instances[3]: expected a file name"),
    (lambda g: g["instances"][2].update(trace="slurm"), "instances[2].trace: unknown trace"),
    (lambda g: g["instances"][2].update(nodes="n.csv"),
     "instances[2].nodes: not an option of the philly format"),
    (lambda g: g["instances"][2].update(file="missing.csv"), "instances[2].file:"),
    (lambda g: g["algorithms"].update(simplex={}), "algorithms.simplex: unknown algorithm"),
    (lambda g: g["algorithms"]["oasis"].update(alpha=2),
     "algorithms.oasis.alpha: not a parameter of oasis"),
    (lambda g: g["algorithms"]["oasis"].update(u_scale=[1, -2]),
     'algorithms.oasis: {"l_scale":1,"u_scale":-2}: u_scale: must be a positive number'),
    (lambda g: g["algorithms"]["oasis"].update(u_scale=[None]),
     "algorithms.oasis.u_scale[0]:"),
    # each combination was tried on a probe instance, one by one: 10^10 of them ran for days
    (lambda g: g["algorithms"]["oasis"].update(u_scale=[k + 1 for k in range(10**5)],
                                               l_scale=[k + 1 for k in range(10**5)]),
     "algorithms.oasis: 100000 × 100000 values are 10000000000 combinations, more than "
     "10000"),
    (lambda g: g["algorithms"].update(oasis={"u_scale": [k + 1 for k in range(6000)]},
                                      fifo={"block_unplaceable": [True, False]}, drf={},
                                      **{"oasis-adaptive": {"u_scale": list(range(1, 4001))}}),
     "algorithms: 10003 combinations in all, more than 10000"),
    (lambda g: g["reference"]["solve"].update(time_limit="30"),
     "reference.solve.time_limit: expected a number, got a string"),
    (lambda g: g["reference"]["solve"].update(time_limit=True),
     "reference.solve.time_limit: expected a number, got a boolean"),
    (lambda g: g["reference"]["solve"].update(method="simplex"),
     "reference.solve.method: unknown method"),
    (lambda g: g["reference"]["solve"].update(solver="glpk"),
     "reference.solve.solver: unknown solver 'glpk'"),
    (lambda g: g.pop("out"), "out: missing field (or give --out)"),
    # a NUL in a path ("\u0000", valid JSON): "internal error: embedded null byte", after the
    # work for "out"
    (lambda g: g.update(out="o\x00ut"), "cannot write: a path cannot hold a NUL character"),
    (lambda g: g["instances"][2].update(file="p\x00.csv"),
     "cannot read trace: embedded null byte"),
]


@pytest.mark.parametrize("change,message", BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_grids_are_refused_with_the_field_named(tmp_path, capfd, change, message):
    grid = _grid(tmp_path)
    change(grid)
    path = _write(tmp_path, grid)
    code = main(["sweep", str(path), "--workers", "0"])
    err = capfd.readouterr().err
    assert code == 2, err
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_grid_checks_its_stored_numbers(tmp_path, capfd):
    """An edited results.csv row ('abc' for a utility) was kept as done, exit 0."""
    grid = _grid(tmp_path, instances=["inst/small-s0.json"], algorithms={"fifo": {}},
                 reference=None)
    path = _write(tmp_path, grid)
    assert main(["sweep", str(path), "--workers", "0"]) == 0
    store = tmp_path / "out" / "results.csv"
    header, row = store.read_text().splitlines()
    cells = row.split(",")
    cells[3] = "abc"
    store.write_text(header + "\n" + ",".join(cells) + "\n")
    capfd.readouterr()
    assert main(["sweep", str(path), "--workers", "0"]) == 2
    err = capfd.readouterr().err
    assert f"{store}:2: column utility: expected a number, got 'abc'" in err
    assert err.count("\n") == 1


def test_a_toml_grid_with_a_byte_order_mark_reads_as_a_json_one_does(tmp_path, capfd):
    """A JSON grid with a byte-order mark ran; the same in TOML was "not valid TOML: Invalid
    statement (at line 1, column 1)", a place that shows nothing wrong."""
    pytest.importorskip("tomllib")
    _grid(tmp_path)
    path = tmp_path / "grid.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b'format = "oasis-sweep/1"\r\ninstances = '
                     b'["inst/small-s0.json"]\r\nreference = "none"\r\nout = "out"\r\n'
                     b"[algorithms.fifo]\r\n")
    assert main(["sweep", str(path), "--workers", "0"]) == 0, capfd.readouterr().err
    assert len(_rows(tmp_path / "out" / "results.csv")) == 1


@pytest.mark.parametrize("text", [
    "format = " + "[" * 100000 + "]" * 100000,  # tomllib's own recursion
    'experiment = "ratio"\nseeds.' + ".".join(["a"] * 50000) + " = 1",  # dotted keys
])
def test_a_toml_grid_nested_too_deeply_is_refused(tmp_path, capfd, text):
    """Both ended in 'internal error: maximum recursion depth exceeded' (exit 1): tomllib
    recursed, or the 50000 levels its dotted keys make were shown in a message."""
    path = tmp_path / "g.toml"
    path.write_text(text)
    assert main(["sweep", str(path), "--workers", "0"]) == 2
    err = capfd.readouterr().err
    assert err == f"oasis-opt sweep: error: {path}: not valid TOML: nested too deeply\n", err


def test_nan_in_a_grid_is_refused(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(_grid(tmp_path)).replace('"time_limit": 30',
                                                        '"time_limit": NaN'))
    with pytest.raises(InputError, match="NaN"):
        load(path)


def test_sweep_module_does_not_import_experiments():
    """experiments → sweep is the only direction; the CLI entry lives in grid."""
    import subprocess
    import sys
    code = ("import sys, oasis_opt.tasks; "
            "print('oasis_opt.experiments' in sys.modules, 'oasis_opt.grid' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]
