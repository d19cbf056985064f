"""Speed of ``oasis-opt verify`` per instance (issue 20: a space of 10⁵ instances in minutes on
two cores): 200 consecutive instances of ``instances/spaces/contend-3jobs.json`` evaluated
in-process — exact OPT by the slot DP (caches cleared each round, so every OPT is solved) and
OASiS with and without its certificate — and the DP alone.

Run: ``pytest benchmarks/bench_verify.py --benchmark-only``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oasis_opt import verifier as verify
from oasis_opt.io import instance_from_dict

SPACE = Path(__file__).resolve().parents[1] / "instances" / "spaces" / "contend-3jobs.json"
START, COUNT = 30_000, 200


@pytest.fixture(scope="module")
def space() -> verify.Space:
    return verify.load_space(SPACE)


@pytest.mark.parametrize("certificate", [True, False])
def test_verify_instances(benchmark, space: verify.Space, certificate: bool) -> None:
    params = {} if certificate else {"certificate": False}

    def chunk() -> list[dict]:
        verify.clear_caches()  # the cold cost of every OPT
        return [verify.evaluate_index(space, n, "oasis", params)
                for n in range(START, START + COUNT)]
    rows = benchmark(chunk)
    assert all(r["status"] in ("ok", "opt_zero") for r in rows)
    benchmark.extra_info.update({"instances": COUNT, "space": space.name})


def test_dp_optimum(benchmark, space: verify.Space) -> None:
    insts = [instance_from_dict(space.instance_dict(n)) for n in range(START, START + COUNT)]
    values = benchmark(lambda: [verify.dp_optimum(i) for i in insts])
    assert all(v is not None for v in values)
    benchmark.extra_info.update({"instances": COUNT, "space": space.name})
