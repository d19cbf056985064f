"""``oasis-opt show`` and ``ratio --plot``: pictures in the three formats, what they say about
each job, OASiS's prices recomputed exactly, infeasible schedules drawn with a warning, and bad
files refused (exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oasis_opt import algorithms
from oasis_opt.cli import main
from oasis_opt.io import load_instance, save_schedule
from oasis_opt.show import counts, oasis_prices, schedule_figure

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
MAGIC = {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}


@pytest.fixture(scope="module")
def testbed():
    inst = load_instance(INSTANCES / "testbed-s1.json")
    return inst, algorithms.run("oasis", inst), algorithms.run("fifo", inst)


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_show_writes_each_format(testbed, tmp_path, suffix, capfd):
    inst, oasis, _ = testbed
    save_schedule(oasis, tmp_path / "s.json")
    out = tmp_path / f"pic{suffix}"
    code = main(["show", str(INSTANCES / "testbed-s1.json"), str(tmp_path / "s.json"),
                 "-o", str(out), "--json"])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and data["feasible"] and data["priced"]
    assert out.read_bytes().startswith(MAGIC[suffix])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["s.json", out.name])


def test_log_axes_are_labelled_with_numbers(testbed, tmp_path, capfd):
    """The price panel's log axis read ``$\\mathdefault{10^{3}}$``: matplotlib labels log
    ticks in mathtext, which the figures' ``text.parse_math = False`` printed as written."""
    inst, oasis, _ = testbed
    save_schedule(oasis, tmp_path / "s.json")
    out = tmp_path / "pic.svg"
    assert main(["show", str(INSTANCES / "testbed-s1.json"), str(tmp_path / "s.json"),
                 "-o", str(out)]) == 0
    svg = out.read_text()
    assert "mathdefault" not in svg and "10^" not in svg


def test_job_rows_say_what_each_job_earned(testbed):
    inst, oasis, fifo = testbed
    for sched in (oasis, fifo):
        fig = schedule_figure(inst, sched)
        labels = [t.get_text() for t in fig.axes[0].texts if t.get_position()[0] > inst.horizon - 1]
        assert len(labels) == inst.num_jobs
        done = [lab for lab in labels if lab.startswith("✓")]
        assert len(done) == sched.completed
        earned = sorted(float(lab[2:]) for lab in done)
        assert earned == pytest.approx(sorted(float(f"{j.utility:.4g}") for j in sched.jobs
                                              if j.completed))
        not_run = sum(1 for j in sched.jobs if not j.allocations)
        word = "rejected" if sched.algorithm == "oasis" else "not run"
        assert sum(1 for lab in labels if lab.startswith(word)) == not_run


@pytest.mark.parametrize("payoff", ["x", [1], {}])
def test_a_payoff_that_is_no_number_is_not_drawn(testbed, tmp_path, capfd, payoff):
    """``extras`` is free-form: a payoff of another type ended in 'internal error: Unknown
    format code 'g''; the job's row then says what any schedule's would."""
    inst, oasis, _ = testbed
    save_schedule(oasis, tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    doc["extras"]["payoff"] = {j: payoff for j in doc["extras"]["payoff"]}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    code = main(["show", str(INSTANCES / "testbed-s1.json"), str(tmp_path / "s.json"), "-o",
                 str(tmp_path / "p.png")])
    assert code == 0, capfd.readouterr().err
    assert (tmp_path / "p.png").read_bytes().startswith(MAGIC[".png"])


def test_prices_are_oasis_own(testbed):
    """Σ p·C over the recomputed final prices equals D_final − Σ admitted payoffs (oasis.py)."""
    inst, oasis, fifo = testbed
    y, z = counts(inst, oasis)
    panels = oasis_prices(inst, oasis, y, z)
    assert panels
    cap = {"worker": inst.worker_capacity, "ps": inst.ps_capacity}
    r_of = {r: n for n, r in enumerate(inst.resources)}
    price_cost = sum(float((p * cap[pool][:, r_of[res]][None, :]).sum())
                     for pool, res, p, _, _ in panels)
    admitted = sum(v for v in oasis.extras["payoff"].values() if v is not None and v > 0)
    assert price_cost == pytest.approx(oasis.extras["D_final"] - admitted, rel=1e-9)
    for _, _, p, L, U in panels:
        assert np.all(p >= L * (1 - 1e-12)) and np.all(p <= U * (1 + 1e-9))
    assert oasis_prices(inst, fifo, *counts(inst, fifo)) is None


def test_infeasible_schedule_is_drawn_with_a_warning(testbed, tmp_path, capfd):
    inst, _, fifo = testbed
    data = json.loads(json.dumps({"format": "oasis-schedule/1", "instance": inst.name,
                                  "algorithm": "fifo", "total_utility": fifo.total_utility,
                                  "jobs": []}))
    server = inst.worker_names[0]
    data["jobs"] = [{"id": inst.jobs[0].id, "completed": False, "completion_slot": None,
                     "utility": 0.0,
                     "allocations": [{"slot": 0, "workers": {server: 1000}, "ps": {}}]}]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    out = tmp_path / "bad.png"
    code = main(["show", str(INSTANCES / "testbed-s1.json"), str(tmp_path / "bad.json"),
                 "-o", str(out)])
    err = capfd.readouterr().err
    assert code == 0 and out.exists()
    assert "warning: the schedule breaks" in err and "drawn as it is" in err


@pytest.mark.parametrize("change,message", [
    (lambda d: d["jobs"][0]["allocations"][0]["workers"].update({"nowhere": 1}),
     "unknown worker server 'nowhere'"),
    (lambda d: d["jobs"][0]["allocations"][0].update({"slot": "3"}), "allocations[0].slot"),
    (lambda d: d.update({"format": "x"}), "format"),
])
def test_malformed_schedule_is_refused(testbed, tmp_path, capfd, change, message):
    inst, oasis, _ = testbed
    save_schedule(oasis, tmp_path / "s.json")
    d = json.loads((tmp_path / "s.json").read_text())
    d["jobs"] = [j for j in d["jobs"] if j["allocations"]]
    change(d)
    (tmp_path / "s.json").write_text(json.dumps(d))
    code = main(["show", str(INSTANCES / "testbed-s1.json"), str(tmp_path / "s.json"),
                 "-o", str(tmp_path / "p.png")])
    assert code == 2 and message in capfd.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_bad_suffix_is_refused(tmp_path, capfd):
    code = main(["show", str(INSTANCES / "small-s0.json"), str(tmp_path / "missing.json"),
                 "-o", str(tmp_path / "p.jpg")])
    assert code == 2 and ".png, .svg or .pdf" in capfd.readouterr().err
    code = main(["ratio", str(INSTANCES / "small-s0.json"), "--plot", str(tmp_path / "r.gif")])
    assert code == 2 and "--plot" in capfd.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_ratio_plot(tmp_path, capfd):
    out = tmp_path / "ratio.svg"
    code = main(["ratio", str(INSTANCES / "small-s2.json"), "--algorithms", "oasis,fifo",
                 "--plot", str(out), "--json"])
    data = json.loads(capfd.readouterr().out)
    assert code == 0 and data["plot"] == str(out)
    svg = out.read_text()
    assert svg.startswith("<?xml")
    q = data["rows"][0]["opt_over_alg"]
    assert f"{q:.3g}×" in svg  # the OPT/ALG figure of the table is on the picture
