"""``oasis-opt export``: the written MILP, read back by a second reader (highspy) and solved,
has the manifest's optimum; names say what each column and row is; bad suffixes are refused
and nothing half-written is left behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

import highspy
import pytest

from oasis_opt.cli import main
from oasis_opt.errors import InputError
from oasis_opt.export import export
from oasis_opt.io import load_instance

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
MANIFEST = json.loads((INSTANCES / "manifest.json").read_text())
QUICK = [e for e in MANIFEST["instances"] if e["seconds"] < 2]


def _solve_file(path: Path) -> tuple[float, highspy.Highs]:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getLp().sense_ == highspy.ObjSense.kMaximize
    return h.getInfo().objective_function_value, h


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
@pytest.mark.parametrize("entry", QUICK, ids=[e["name"] for e in QUICK])
def test_exported_optimum_equals_opt(entry, suffix, tmp_path):
    inst = load_instance(INSTANCES / entry["file"])
    out = tmp_path / f"model{suffix}"
    info = export(inst, out)
    value, h = _solve_file(out)
    assert value == pytest.approx(entry["optimum"], rel=MANIFEST["rel_tol"], abs=1e-9)
    # an empty model gets one placeholder column from Pyomo's writer (constant objective)
    assert h.getNumCol() == max(1, info["variables"])
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left


def test_names_say_what_columns_and_rows_are(tmp_path):
    inst = load_instance(INSTANCES / "small-s0.json")
    out = tmp_path / "m.lp"
    export(inst, out)
    _, h = _solve_file(out)
    cols = [h.getColName(j)[1] for j in range(h.getNumCol())]
    rows = [h.getRowName(r)[1] for r in range(h.getNumRow())]
    job_ids = {j.id for j in inst.jobs}
    families = {re.match(r"[a-z_]+", c).group(0) for c in cols}
    assert families <= {"workers", "ps", "completes", "running", "worker_patterns",
                        "ps_patterns", "work_done", "window"}
    assert {"workers", "ps", "completes", "running"} <= families
    for c in cols:
        if c.startswith(("workers(", "completes(")):
            assert c[c.index("(") + 1:].split(",")[0] in job_ids, c
    assert any(re.fullmatch(r"c_e_workload\(j\d+\)_", r) for r in rows)
    assert any(r.startswith("c_u_ps_ratio(") for r in rows)
    # the objective's coefficient of completes(j, t) is f_j(t - a_j + 1)
    j = inst.jobs[0]
    t = j.arrival + 1
    col = cols.index(f"completes({j.id},t{t})")
    assert h.getLp().col_cost_[col] == pytest.approx(inst.utility_at(0, t))


def test_odd_names_are_sanitised_and_unique(tmp_path):
    data = json.loads((INSTANCES / "small-s3.json").read_text())
    data["jobs"][0]["id"] = "job 1+"
    data["jobs"][1]["id"] = "job_1_"  # collides with the first after sanitising
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    inst = load_instance(path)
    out = tmp_path / "odd.lp"
    export(inst, out)
    value, h = _solve_file(out)
    names = [h.getColName(j)[1] for j in range(h.getNumCol())]
    assert len(set(names)) == len(names)
    assert not any(" " in n or "+" in n for n in names)
    # job ids do not change the problem: small-s3's optimum
    assert value == pytest.approx(114.73768945699823, rel=1e-6)


def test_bad_suffix_is_refused_and_nothing_written(tmp_path, capsys):
    with pytest.raises(InputError, match=r"\.mps or \.lp"):
        export(load_instance(INSTANCES / "small-s0.json"), tmp_path / "m.txt")
    code = main(["export", str(INSTANCES / "small-s0.json"), "-o", str(tmp_path / "m.gz")])
    assert code == 2
    assert "expected a file name ending in .mps or .lp" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_cli_json(tmp_path, capfd):
    out = tmp_path / "m.MPS"  # suffix case does not matter (a missing folder: test_cli)
    code = main(["export", str(INSTANCES / "small-s1.json"), "-o", str(out), "--json"])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and data["format"] == "mps" and out.exists()
    value, _ = _solve_file(out)
    assert value == pytest.approx(231.48965056912695, rel=1e-6)


def test_too_large_a_model_is_refused_before_it_is_built(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OASIS_MAX_MEMORY", "200K")  # reads the file, refuses the model
    code = main(["export", str(INSTANCES / "small-s0.json"), "-o", str(tmp_path / "m.lp")])
    err = capsys.readouterr().err
    assert code == 2 and "the compact MILP" in err and "too large" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_a_model_without_variables_is_written_without_a_warning(suffix, tmp_path, caplog):
    """No job, no variable: Pyomo's writer printed "WARNING: Constant objective detected,
    replacing with a placeholder" on stderr beside the command's own line. The file is the
    same (one placeholder column, optimum 0); the warning is held, and only it."""
    import logging
    import subprocess
    import sys
    empty = tmp_path / "empty.json"
    assert main(["generate", "--preset", "small", "--jobs", "0", "-o", str(empty)]) == 0
    out = tmp_path / f"model{suffix}"
    with caplog.at_level(logging.WARNING, logger="pyomo.core"):
        export(load_instance(empty), out)
        logging.getLogger("pyomo.core").warning("Constant objective detected, said after")
    assert [r.getMessage() for r in caplog.records] == [
        "Constant objective detected, said after"]  # the filter went with the write
    value, h = _solve_file(out)
    assert value == 0 and h.getNumCol() == 1
    done = subprocess.run([sys.executable, "-m", "oasis_opt", "export", str(empty), "-o",
                           str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "0 variables" in done.stdout
