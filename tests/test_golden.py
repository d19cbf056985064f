"""Byte-identical schedules (issue 21): every built-in online algorithm's schedule file and
validator verdict on the shipped and a few generated instances match the fingerprints recorded
before the sparse representation (``tests/golden_cases.py`` says how they are made)."""

from __future__ import annotations

import json

import pytest
from golden_cases import ALGORITHMS, HASHES, cases, fingerprint

EXPECTED = json.loads(HASHES.read_text())
CASES = dict(cases())


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedules_unchanged(name: str) -> None:
    inst = CASES[name]()
    got = {alg: fingerprint(inst, alg) for alg in ALGORITHMS}
    want = {alg: EXPECTED[f"{name}/{alg}"] for alg in ALGORITHMS}
    assert got == want


def test_every_case_recorded() -> None:
    assert {f"{n}/{a}" for n in CASES for a in ALGORITHMS} == set(EXPECTED)
