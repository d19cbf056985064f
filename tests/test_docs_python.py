"""docs/python.md: every ```python block runs, in order, in one namespace (a notebook)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import INSTANCES, ROOT

DOC = ROOT / "docs" / "python.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_its_sections() -> None:
    text = DOC.read_text(encoding="utf-8")
    for section in ("Load and generate", "Solve", "Your own constraints", "Run and compare",
                    "Plug in your scheduler", "Sweep", "Plot"):
        assert f"## {section}" in text
    assert len(blocks()) >= 8


def test_every_public_name_is_on_the_page() -> None:
    """What ``oasis_opt`` exports is what the guide documents (a name in ``__all__`` that
    the page never mentions is an undocumented promise)."""
    import oasis_opt
    text = DOC.read_text(encoding="utf-8")
    missing = [n for n in oasis_opt.__all__ if not re.search(rf"\b{re.escape(n)}\b", text)]
    assert not missing, f"docs/python.md does not mention {missing}"


@pytest.mark.slow
def test_every_block_runs_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oasis_opt import algorithms
    shutil.copytree(INSTANCES, tmp_path / "instances")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    try:
        for n, code in enumerate(blocks()):
            try:
                exec(compile(code, f"{DOC.name} block {n + 1}", "exec"), namespace)
            except Exception as err:  # name the block: the doc is what is wrong
                raise AssertionError(f"docs/python.md block {n + 1} failed: "
                                     f"{type(err).__name__}: {err}\n{code}") from err
    finally:
        algorithms.unregister("one-worker")
    assert (tmp_path / "ratio.png").stat().st_size > 0
    assert (tmp_path / "sweep.png").stat().st_size > 0


def test_the_readme_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Python sketch runs as written (it used an undefined ``my_greedy``)."""
    from oasis_opt import algorithms
    (code,) = BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    shutil.copytree(INSTANCES, tmp_path / "instances")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    try:
        exec(compile(code, "README.md", "exec"), namespace)
    finally:
        algorithms.unregister("greedy")
    rows = namespace["report"].rows  # type: ignore[attr-defined]
    assert [r["algorithm"] for r in rows] == ["greedy", "oasis"]
    assert all(r["opt_over_alg"] >= 1 - 1e-9 for r in rows)
