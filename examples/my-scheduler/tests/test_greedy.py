"""The greedy scheduler against the offline optimum, with the oasis-opt pytest plugin.

The plugin comes with oasis-opt (nothing to import in conftest.py). Optima are cached in
``.oasis-opt-cache`` (``oasis_opt_cache`` in pyproject.toml): keep that folder between CI runs
and each instance is solved once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oasis_opt import algorithms
from oasis_opt.pytest_plugin import generated, matching, shipped, shipped_folder

#: OPT/ALG the greedy must stay under (it measures 1.0-1.25 on these instances).
LIMIT = 1.5

HERE = Path(__file__).resolve().parent


def test_the_entry_point_names_it():
    assert "greedy-example" in algorithms.names()


# The shipped small instances are generate("small", seed=0..4): other seeds add new ones.
@pytest.mark.parametrize("instance", shipped("small-*") + generated("small", seeds=[5, 6, 7]))
def test_ratio_stays_under_limit(oasis_assert_ratio, instance):
    check = oasis_assert_ratio("greedy-example", instance, limit=LIMIT)
    assert check.proven and check.alg > 0


@pytest.mark.parametrize("instance", matching("data/*.json"))  # relative to this file
def test_ratio_on_our_own_instances(oasis_assert_ratio, instance):
    oasis_assert_ratio("greedy-example", instance, limit=LIMIT)


def test_cached_optima_are_the_manifest_optima(oasis_opt_value, oasis_instances):
    manifest = json.loads((shipped_folder() / "manifest.json").read_text())
    known = {e["name"]: e["optimum"] for e in manifest["instances"]}
    for inst in oasis_instances.shipped("small-*"):
        assert oasis_opt_value(inst) == pytest.approx(known[inst.name], rel=1e-6)


def test_grid_names_the_entry_point(tmp_path, oasis_opt_cache_dir):
    """``oasis-opt sweep`` runs the grid; its reference solves share the plugin's cache, so a
    second run (fresh output folder) solves nothing: the cache files are untouched."""
    def sweep(out: Path) -> list[dict]:
        cmd = [sys.executable, "-m", "oasis_opt", "sweep", str(HERE.parent / "grid.json"),
               "--out", str(out), "--workers", "0", "--json"]
        if oasis_opt_cache_dir is not None:
            cmd += ["--opt-cache", str(oasis_opt_cache_dir)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        lines = (out / "results.csv").read_text().splitlines()
        return sorted(lines)

    first = sweep(tmp_path / "a")
    assert any(",greedy-example," in line for line in first)
    if oasis_opt_cache_dir is None:
        return
    before = {f.name: f.stat().st_mtime_ns for f in oasis_opt_cache_dir.iterdir()}
    second = sweep(tmp_path / "b")
    after = {f.name: f.stat().st_mtime_ns for f in oasis_opt_cache_dir.iterdir()}
    assert after == before
    no_seconds = [",".join(x.split(",")[:5] + x.split(",")[6:]) for x in first]
    assert no_seconds == [",".join(x.split(",")[:5] + x.split(",")[6:]) for x in second]
