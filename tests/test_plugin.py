"""The pytest plugin (``oasis_opt.pytest_plugin``) run on tiny user suites with pytester, and the
``--opt-cache`` of ``sweep`` and ``bench``: the second run solves nothing."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from oasis_opt import bench, cli, io, offline, pytest_plugin
from oasis_opt.generator import generate
from oasis_opt.io import save_instance

pytest_plugins = ["pytester"]

MANIFEST = json.loads((pytest_plugin.shipped_folder() / "manifest.json").read_text())
OPTIMUM = {e["name"]: e["optimum"] for e in MANIFEST["instances"]}


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the instances ``offline.solve`` is called on (in this process)."""
    calls: list[str] = []
    real = offline.solve

    def counting(instance, *args, **kwargs):
        calls.append(instance.name)
        return real(instance, *args, **kwargs)
    monkeypatch.setattr(offline, "solve", counting)
    return calls


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider", *args)


USER_SUITE = """
import pytest
from oasis_opt.pytest_plugin import generated, matching, shipped

@pytest.mark.parametrize("instance", shipped("small-s[01]") + generated("small", seeds=[5])
                         + matching("data/*.json"))
def test_ratio(oasis_assert_ratio, instance):
    check = oasis_assert_ratio("oasis", instance, limit=LIMIT)
    assert check.proven and check.opt >= check.alg > 0

def test_sets(oasis_instances, oasis_opt_value):
    names = [i.name for i in oasis_instances.shipped("small-*")]
    assert names == [f"small-s{k}" for k in range(5)]
    assert [i.name for i in oasis_instances.generated("small", 2, jobs=3)] == \\
        ["small-s0-j3", "small-s1-j3"]
    assert [i.name for i in oasis_instances.matching("data/*.json")] == ["own"]
    assert oasis_opt_value(oasis_instances.shipped("small-s0")[0]) == \\
        pytest.approx({opt0!r}, rel=1e-6)
"""


def _user_suite(pytester: pytest.Pytester, limit: float) -> None:
    pytester.makepyfile(test_user=f"LIMIT = {limit!r}\n" +
                        USER_SUITE.replace("{opt0!r}", repr(OPTIMUM["small-s0"])))
    data = pytester.mkdir("data")
    save_instance(generate("small", seed=9, jobs=3, name="own"), data / "own.json")


def test_fixtures_and_the_cache_hit_the_second_time(pytester, solves, tmp_path):
    _user_suite(pytester, limit=3.0)
    cache = tmp_path / "cache"
    first = _run(pytester, "--oasis-opt-cache", str(cache), "-p", "no:benchmark")
    first.assert_outcomes(passed=5)
    # small-s0, small-s1, small-s5, own: solved once each (test_sets reads small-s0 back)
    assert sorted(solves) == ["own", "small-s0", "small-s1", "small-s5"]
    assert len(list(cache.glob("*.json"))) == 4
    first.stdout.fnmatch_lines(["oasis-opt: 1 optima from the cache, 4 solved (* s) *"])
    assert f"[{cache}]" in first.stdout.str()
    solves.clear()
    second = _run(pytester, "--oasis-opt-cache", str(cache), "-p", "no:benchmark")
    second.assert_outcomes(passed=5)
    assert solves == []
    second.stdout.fnmatch_lines(["oasis-opt: 5 optima from the cache, 0 solved (*"])


def test_ratio_over_the_limit_fails_naming_everything(pytester, tmp_path):
    pytester.makepyfile(test_user="""
from oasis_opt.pytest_plugin import shipped_instances

def test_fifo(oasis_assert_ratio):
    oasis_assert_ratio("fifo", shipped_instances("small-s0")[0], limit=1.5)
""")
    result = _run(pytester, "--oasis-opt-cache", str(tmp_path), "-p", "no:benchmark")
    result.assert_outcomes(failed=1)
    opt = OPTIMUM["small-s0"]
    result.stdout.fnmatch_lines([
        f"E*AssertionError: OPT/ALG of fifo on small-s0 is 2.00149 > limit 1.5: "
        f"OPT = {opt:.10g}, ALG = 84.66*"])
    assert "pytest_plugin.py" not in result.stdout.str()  # the user's line, not the plugin's


def test_a_function_is_checked_through_the_validator(pytester, tmp_path):
    pytester.makepyfile(test_user="""
import pytest
from oasis_opt import algorithms
from oasis_opt.model import Schedule
from oasis_opt.pytest_plugin import shipped_instances

INST = shipped_instances("small-s0")[0]

def nothing(instance):
    return Schedule.from_arrays(instance, "nothing", {}, {})

def greedy(instance):
    return algorithms.get("oasis")(instance)

def test_function(oasis_assert_ratio):
    check = oasis_assert_ratio(greedy, INST, limit=2)
    assert check.algorithm == "test_user.greedy" and check.ratio < 2
    assert "test_user.greedy" not in algorithms.names()  # registered only for the check

def test_zero_utility(oasis_assert_ratio):
    oasis_assert_ratio(nothing, INST, limit=100)

def test_bad_limit(oasis_assert_ratio):
    with pytest.raises(ValueError, match="limit must be a number ≥ 1"):
        oasis_assert_ratio("fifo", INST, limit=0.5)
""")
    result = _run(pytester, "--oasis-opt-cache", str(tmp_path), "-p", "no:benchmark")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*OPT/ALG of test_user.nothing on small-s0 is inf > limit 100*"])


RATIO_ONLY = """
from oasis_opt.pytest_plugin import shipped

import pytest

@pytest.mark.parametrize("instance", shipped("small-s0"))
def test_ratio(oasis_assert_ratio, instance):
    oasis_assert_ratio("fifo", instance, limit=3)
    oasis_assert_ratio("oasis", instance, limit=3)  # a second call in a test is not timed
"""


def test_run_time_goes_to_pytest_benchmark(pytester, tmp_path):
    pytester.makepyfile(test_user=RATIO_ONLY)
    out = tmp_path / "bench.json"
    result = _run(pytester, "--oasis-opt-cache", str(tmp_path), f"--benchmark-json={out}",
                  "--benchmark-min-rounds=1", "--benchmark-max-time=0",
                  "--benchmark-warmup=off")
    result.assert_outcomes(passed=1)
    (b,) = json.loads(out.read_text())["benchmarks"]
    assert b["name"] == "test_ratio[small-s0]"
    info = b["extra_info"]
    assert info["algorithm"] == "fifo" and info["limit"] == 3 and info["proven"]
    assert info["opt"] == pytest.approx(OPTIMUM["small-s0"], rel=1e-6)
    assert info["ratio"] == pytest.approx(info["opt"] / info["alg"])


@pytest.mark.parametrize("flags", [["--benchmark-skip"], ["-p", "no:benchmark"]])
def test_without_pytest_benchmark_the_check_runs_untimed(pytester, tmp_path, flags):
    pytester.makepyfile(test_user=RATIO_ONLY)
    _run(pytester, "--oasis-opt-cache", str(tmp_path), *flags).assert_outcomes(passed=1)


def test_ini_key_default_folder_and_no_cache(pytester):
    pytester.makepyfile(test_user=RATIO_ONLY)
    # default: a folder of pytest's own cache (what CI keeps between runs)
    pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:benchmark") \
        .assert_outcomes(passed=1)
    assert len(list((pytester.path / ".pytest_cache/d/oasis-opt").glob("*.json"))) == 1
    # the ini key, relative to the ini file
    pytester.makeini("[pytest]\noasis_opt_cache = optima\n")
    _run(pytester, "-p", "no:benchmark").assert_outcomes(passed=1)
    assert len(list((pytester.path / "optima").glob("*.json"))) == 1
    result = _run(pytester, "-p", "no:benchmark", "--oasis-opt-no-cache")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["oasis-opt: 0 optima from the cache, 2 solved (* s) ?no cache?"])


def test_unproven_optimum_fails_with_a_message(pytester, tmp_path):
    pytester.makepyfile(test_user="""
from oasis_opt.pytest_plugin import shipped_instances

def test_value(oasis_opt_value):
    oasis_opt_value(shipped_instances("testbed-s0")[0])
""")
    result = _run(pytester, "--oasis-opt-cache", str(tmp_path), "-p", "no:benchmark",
                  "--oasis-opt-time-limit", "0.01")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*testbed-s0: the offline solve ended with status time_limit"
                                 "*no proven OPT: raise --oasis-opt-time-limit*"])


@pytest.mark.parametrize("value", ["-1", "1_0", " 5", "nan", "١٠"])
def test_bad_time_limit_is_a_usage_error(pytester, value):
    """float() took '1_0', ' 5' and '١٠' (as the command line's flags did)."""
    pytester.makepyfile(test_user="def test_x():\n    pass\n")
    result = _run(pytester, f"--oasis-opt-time-limit={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--oasis-opt-time-limit: expected a positive number*"])


@pytest.mark.parametrize("value", ["1e8", "1e300"])
def test_a_time_limit_past_the_solves_is_a_usage_error(pytester, value):
    """1e8 was taken, then every test that asks for OPT failed on the solve's own limit
    ("time_limit: 1e+08 s is too long"): the command line refuses it at the flag."""
    pytester.makepyfile(test_user="def test_x():\n    pass\n")
    result = _run(pytester, f"--oasis-opt-time-limit={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--oasis-opt-time-limit: at most 1e7 seconds*"])


@pytest.mark.parametrize("value,message", [
    ("1_0", "expected a positive number of seconds, got '1_0'"),
    ("-5", "expected a positive number of seconds, got '-5'"),
    ("nan", "expected a positive number of seconds, got 'nan'"),
    ("1e8", "at most 1e7 seconds (about 115 days), got '1e8'"),
])
def test_bad_ini_time_limit_is_a_usage_error_that_names_the_ini(pytester, value, message):
    """The message names the ini, where the value is (a negative or too large ini value was
    reported as the command line's flag)."""
    pytester.makepyfile(test_user="def test_x():\n    pass\n")
    pytester.makeini(f"[pytest]\noasis_opt_time_limit = {value}\n")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*ini oasis_opt_time_limit: {message}*"])
    assert "--oasis-opt-time-limit" not in result.stderr.str()


def test_shipped_instances_come_from_package_data_when_installed(monkeypatch, tmp_path):
    """A non-editable install carries instances/ as oasis_opt/data/instances (pyproject's
    package-dir); a checkout finds the repository's folder."""
    assert pytest_plugin.shipped_folder() == io.SOURCE_FOLDER
    (tmp_path / "manifest.json").write_text("{}")
    monkeypatch.setattr(io, "DATA_FOLDER", tmp_path)
    assert pytest_plugin.shipped_folder() == tmp_path
    with pytest.raises(ValueError, match="no shipped instance matches 'small-\\*'"):
        pytest_plugin.shipped_instances("small-*")


@pytest.mark.parametrize("call,message", [
    (lambda: pytest_plugin.shipped_instances(5), r"pattern: a glob string .*, got int"),
    (lambda: pytest_plugin.matching_instances(None), r"pattern: a glob string .*, got NoneType"),
    (lambda: pytest_plugin.matching_instances("*.json", root=5),
     r"root: a folder's path, got int"),
])
def test_instance_helpers_name_an_argument_of_the_wrong_type(call, message):
    """``shipped_instances(5)`` failed in fnmatch ("expected str, bytes or os.PathLike
    object"), naming no argument."""
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("seeds,message", [
    (0, r"seeds: a count of at least 1, got 0"), (-2, r"seeds: a count of at least 1, got -2"),
    (True, r"seeds: a count of at least 1, got True"), ([], r"seeds: no seed given"),
    (2.5, r"seeds: a count or a list of seeds, got 2.5"),
])
def test_generated_instances_never_make_an_empty_set(seeds, message):
    """``generated("small", 0)`` (or -2, or []) parametrized a test over nothing: pytest
    skipped it as an empty parameter set, and the check never ran."""
    with pytest.raises(ValueError, match=message):
        pytest_plugin.generated_instances("small", seeds)


@pytest.mark.parametrize("limit", [True, "2", None])
def test_a_ratio_limit_that_is_no_number_is_refused(limit):
    """``limit=True`` passed as the limit 1 (a bool is an int to isinstance)."""
    check = pytest_plugin.RatioAsserter.__new__(pytest_plugin.RatioAsserter)
    with pytest.raises(ValueError, match="limit must be a number ≥ 1"):
        check("fifo", None, limit)


def test_the_plugin_imports_no_solver():
    code = ("import sys, oasis_opt.pytest_plugin; print(sorted(m for m in ('pyomo', "
            "'highspy', 'pulp', 'matplotlib', 'oasis_opt.offline') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# --- sweep --opt-cache, bench --opt-cache --------------------------------------------------


def test_sweep_opt_cache_solves_each_instance_once(tmp_path, solves, capfd):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({
        "format": "oasis-sweep/1", "instances": [{"preset": "small", "seeds": 2}],
        "algorithms": {"fifo": {}, "oasis": {}}, "reference": {"solve": {}}}))
    cache = tmp_path / "cache"

    def sweep(out: str) -> list[dict[str, str]]:
        assert cli.main(["sweep", str(grid), "--out", str(tmp_path / out), "--workers", "0",
                         "--opt-cache", str(cache), "--json"]) == 0
        assert json.loads(capfd.readouterr().out)["opt_cache"] == str(cache)
        with open(tmp_path / out / "results.csv", newline="") as f:
            rows = [{k: v for k, v in row.items() if k != "seconds"}
                    for row in csv.DictReader(f)]
        return sorted(rows, key=lambda r: (r["instance"], r["algorithm"]))

    first = sweep("a")
    assert sorted(solves) == ["small-s0", "small-s1"]
    mtimes = {f: f.stat().st_mtime_ns for f in cache.iterdir()}
    assert len(mtimes) == 2
    solves.clear()
    second = sweep("b")  # a fresh output folder: every row again, no solve
    assert solves == [] and first == second
    assert {f: f.stat().st_mtime_ns for f in cache.iterdir()} == mtimes
    # the grid's optima are the manifest's
    for row in first:
        assert float(row["opt"]) == pytest.approx(OPTIMUM[row["instance"]], rel=1e-6)


def test_sweep_opt_cache_refusals(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({
        "format": "oasis-sweep/1", "instances": [{"preset": "small"}],
        "algorithms": {"fifo": {}}, "reference": None, "out": "out"}))
    assert cli.main(["sweep", str(grid), "--opt-cache", str(tmp_path / "file"),
                     "--workers", "0"]) == 2
    assert "--opt-cache: cannot use" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    exp = tmp_path / "exp.json"
    exp.write_text(json.dumps({"experiment": "ratio", "quick": True}))
    assert cli.main(["sweep", str(exp), "--opt-cache", str(tmp_path / "c")]) == 2
    assert "--opt-cache: only a grid's reference solves are cached" in capsys.readouterr().err


def test_bench_ratios_read_the_optimum_the_solver_row_stored(tmp_path, solves):
    inst = generate("small", seed=0)
    row = bench.bench_solver(inst, 30.0, tmp_path)
    assert row["status"] == "optimal" and len(solves) == 1
    rows = bench.bench_ratios(inst, ["fifo", "oasis"], 30.0, tmp_path)
    assert len(solves) == 1  # the timed solve's result was stored
    assert [r["name"] for r in rows] == ["OPT/ALG fifo", "OPT/ALG oasis"]
    assert all("(cached)" in r["note"] for r in rows)
    assert rows[0]["median"] == pytest.approx(OPTIMUM["small-s0"] / rows[0]["utility"])
    fresh = bench.bench_ratios(generate("small", seed=1), ["fifo"], 30.0, tmp_path)
    assert "(solved)" in fresh[0]["note"] and len(solves) == 2


def test_bench_opt_cache_folder_is_checked_first(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert cli.main(["bench", "--quick", "--opt-cache", str(tmp_path / "file" / "x")]) == 2
    assert "--opt-cache: cannot use" in capsys.readouterr().err


def test_example_project_files_agree():
    """The example's grid names its entry point; its pyproject declares it."""
    root = Path(__file__).resolve().parents[1] / "examples" / "my-scheduler"
    grid = json.loads((root / "grid.json").read_text())
    assert "greedy-example" in grid["algorithms"]
    assert 'greedy-example = "my_scheduler.greedy:run"' in (root / "pyproject.toml").read_text()
