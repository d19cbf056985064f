"""Relative links in README.md and docs/*.md: every one names a file that exists and, where it
carries a ``#fragment`` into a markdown file, a heading of that file (GitHub's anchors: the
heading lower-cased, its punctuation dropped, spaces turned into hyphens, ``-1``, ``-2`` … on
repeats). Links to web addresses are not checked; fenced blocks and inline code are skipped."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from conftest import ROOT

LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
# what GitHub keeps of a heading in its anchor: letters, marks, decimal and letter numbers,
# connector punctuation (``_``), spaces (which become hyphens) and hyphens
KEPT = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd", "Nl", "Pc")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def slug(heading: str) -> str:
    text = CODE.sub(lambda m: m.group(0).strip("`"), heading).lower()
    text = "".join(c for c in text if c in " -" or unicodedata.category(c) in KEPT)
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", doc.read_text(encoding="utf-8")).splitlines():
        m = HEADING.match(line)
        if m:
            s = slug(m.group(1))
            found.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return found


def links(doc: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", doc.read_text(encoding="utf-8")))
    return [m.group(1) for m in LINK.finditer(text)]


def broken(doc: Path) -> list[str]:
    """The relative links of ``doc`` that do not resolve, each with the reason."""
    bad = []
    for target in links(doc):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # https:, mailto: …
            continue
        path, _, fragment = target.partition("#")
        dest = (doc.parent / path) if path else doc
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            bad.append(f"{target}: no heading #{fragment} in {dest.name}")
    return bad


def test_every_relative_link_in_the_docs_resolves() -> None:
    found = {doc.relative_to(ROOT).as_posix(): broken(doc) for doc in documents()}
    assert {doc: bad for doc, bad in found.items() if bad} == {}
    assert sum(len(links(doc)) for doc in documents()) > 50  # the docs do link


def test_the_check_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## The formulation (`common.py`)\n\n"
                                       "```\n# not a heading\n```\n\n## Twice\n\n## Twice\n")
    doc = tmp_path / "doc.md"
    doc.write_text("[a](other.md) [b](other.md#the-formulation-commonpy) [c](other.md#twice-1)\n"
                   "[d](missing.md) [e](other.md#not-a-heading) [f](#here) "
                   "[g](https://example.org/x.md) `[h](missing-in-code.md)`\n\n## Here\n")
    assert broken(doc) == ["missing.md: no such file",
                           "other.md#not-a-heading: no heading #not-a-heading in other.md"]
    assert slug("10 jobs × 20 slots, 0–4 — quiet") == "10-jobs--20-slots-04--quiet"
