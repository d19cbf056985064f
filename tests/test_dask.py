"""Sweeps on a real Dask cluster (scheduler + two workers, separate processes on loopback) give
the same results as the local process pool."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oasis_opt.errors import InputError
from oasis_opt.grid import run_sweep_cli

pytest.importorskip("distributed")

#: Columns that depend on the machine, not on the computation.
TIMING = {"seconds", "decision_ms"}


def _dask_bin() -> str:
    exe = Path(sys.executable).with_name("dask")
    return str(exe) if exe.exists() else (shutil.which("dask") or "dask")


@pytest.fixture
def dask_cluster(tmp_path):
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    sched = subprocess.Popen(
        [_dask_bin(), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--scheduler-file", str(sched_file), "--dashboard-address", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    procs = [sched]
    try:
        deadline = time.time() + 60
        while not sched_file.exists() or not sched_file.read_text().strip():
            if time.time() > deadline or sched.poll() is not None:
                pytest.fail("the Dask scheduler did not start")
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        procs.append(subprocess.Popen(
            [_dask_bin(), "worker", "--scheduler-file", str(sched_file), "--nworkers", "2",
             "--nthreads", "1", "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        from distributed import Client
        with Client(address, timeout=30) as c:
            c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _stable_rows(path: Path) -> list[tuple]:
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return sorted(tuple((k, v) for k, v in r.items() if k not in TIMING) for r in rows)


def _config(tmp_path: Path, out: Path) -> Path:
    cfg = tmp_path / f"cfg-{out.name}.json"
    cfg.write_text(json.dumps({"experiment": "utility-vs-jobs", "seeds": 2, "quick": True,
                               "out": str(out)}))
    return cfg


def test_dask_sweep_equals_local_pool(tmp_path, dask_cluster):
    local = run_sweep_cli(str(_config(tmp_path, tmp_path / "local")), workers=2, dask=None,
                          out=None, progress=False)
    remote = run_sweep_cli(str(_config(tmp_path, tmp_path / "dask")), workers=None,
                           dask=dask_cluster, out=None, progress=False)
    assert local["done"] == remote["done"] > 0
    assert _stable_rows(Path(local["csv"])) == _stable_rows(Path(remote["csv"]))
    again = run_sweep_cli(str(_config(tmp_path, tmp_path / "dask")), workers=None,
                          dask=dask_cluster, out=None, progress=False)
    assert again["new"] == 0


def test_bad_sweep_configs(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"experiment": "nope"}))
    with pytest.raises(InputError, match="experiment: unknown experiment 'nope'"):
        run_sweep_cli(str(bad), workers=0, dask=None, out=None, progress=False)
    bad.write_text(json.dumps({"experiment": "ratio", "seeds": 0}))
    with pytest.raises(InputError, match="seeds: must be an integer from 1 to 100000"):
        run_sweep_cli(str(bad), workers=0, dask=None, out=None, progress=False)
    bad.write_text(json.dumps({"experiment": "ratio", "colour": "red"}))
    with pytest.raises(InputError, match="colour: unknown field"):
        run_sweep_cli(str(bad), workers=0, dask=None, out=None, progress=False)
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        bad.write_text(json.dumps({"experiment": "ratio", "quick": True}))
        run_sweep_cli(str(bad), workers=None, dask="tcp://127.0.0.1:1", out=str(tmp_path),
                      progress=False)


def test_registered_notebook_function_reaches_dask_workers(dask_cluster, tmp_path) -> None:
    """A scheduler defined in a notebook (module ``__main__``, not importable by the workers)
    and registered by name runs on separate Dask worker processes, with the same utility."""
    import oasis_opt
    from oasis_opt import algorithms
    namespace: dict = {"__name__": "__main__"}
    exec("from oasis_opt import algorithms\n"
         "import numpy as np\n"
         "def notebook_sched(instance):\n"
         "    return algorithms.run('oasis', instance,\n"
         "                          u_scale=float(np.random.uniform(0.2, 5.0)))\n", namespace)
    oasis_opt.register("notebook-sched", namespace["notebook_sched"])
    try:
        grid = {"format": "oasis-sweep/1",
                "instances": [{"preset": "small", "seeds": [0, 1], "jobs": 5}],
                "algorithms": {"notebook-sched": {}}, "reference": None}
        rows = oasis_opt.sweep(grid, out=tmp_path / "d", dask=dask_cluster).to_records()
        assert len(rows) == 2
        for row in rows:
            inst = oasis_opt.generate("small", seed=int(row["instance"][len("small-s")]),
                                      jobs=5, name=row["instance"])
            assert row["utility"] == pytest.approx(
                algorithms.run("notebook-sched", inst).total_utility)
    finally:
        oasis_opt.unregister("notebook-sched")
