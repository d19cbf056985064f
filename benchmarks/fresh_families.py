"""The held-out families of the exact-engine benchmark (issue 22, round 40): tight instances
from a generator that is not the project's (``oasis_opt/generator.py``), written from
``../shared/bench/README.md``'s description of the other generator only and never used to
fit the route rule: 12–16 jobs over 12–16 slots; worker and PS pools of two or three server
shapes; two to four resources (gpu, cpu, mem_gb, bw_gbps); half-GPU demands; sigmoid and
table utilities; ``ps_ratio`` 1–4.

``fresh-a`` is seeds 100–123, ``fresh-b`` seeds 200–223 with larger workloads (more workers
a job, longer runs). ``benchmarks/bench_families.py`` runs them as families.

    python benchmarks/fresh_families.py 100 124 a OUT_DIR    # write the instances as files
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from oasis_opt.io import instance_from_dict
from oasis_opt.model import Instance

RESOURCES = ("gpu", "cpu", "mem_gb", "bw_gbps")
#: Capacities a server shape draws from, per resource.
CAPACITY = {"gpu": [2, 4, 6, 8], "cpu": [8, 16, 24, 32], "mem_gb": [16, 32, 48, 64, 96],
            "bw_gbps": [10, 20, 25, 40]}
#: A worker's demand draws from, per resource.
DEMAND = {"gpu": [0.5, 1, 1, 2], "cpu": [1, 2, 4, 6], "mem_gb": [4, 8, 16, 24],
          "bw_gbps": [1, 2, 5, 10]}
#: The first seed of each family.
FAMILIES = {"fresh-a": 100, "fresh-b": 200}


def fresh(seed: int, kind: str = "a") -> dict[str, Any]:
    """One instance (the file's dict) of family ``fresh-<kind>`` at ``seed``."""
    if kind not in ("a", "b"):
        raise ValueError(f"kind must be 'a' or 'b', got {kind!r}")
    rng = random.Random(seed)
    count = rng.choice([2, 3, 4, 4])
    resources = list(RESOURCES[:count]) if count != 2 else rng.choice(
        [["gpu", "cpu"], ["cpu", "mem_gb"], ["gpu", "mem_gb"]])
    horizon, jobs = rng.randint(12, 16), rng.randint(12, 16)

    def shape(ps: bool = False) -> list[float]:
        return [0 if ps and r == "gpu" else rng.choice(CAPACITY[r]) for r in resources]

    def pool(prefix: str, shapes: int, counts: list[int], ps: bool) -> list[dict[str, Any]]:
        out = []
        for s in range(shapes):
            c = rng.choice(counts)
            name = f"{prefix}{s}_" if c > 1 else f"{prefix}{s}"
            out.append({"name": name, **({"count": c} if c > 1 else {}),
                        "capacity": shape(ps)})
        return out
    workers = pool("w", rng.randint(2, 3), [1, 1, 2], False)
    ps_servers = pool("p", rng.randint(1, 3), [1, 2], True)
    out = []
    for i in range(jobs):
        wd = [rng.choice(DEMAND[r]) for r in resources]
        pd = [0 if r == "gpu" else max(1, round(w * rng.uniform(0.3, 1.2)))
              for r, w in zip(resources, wd, strict=True)]
        if kind == "a":
            n = rng.randint(1, 6)
            v = rng.randint(2, 3 * n + 8)
        else:
            n = rng.randint(2, 6)
            v = rng.randint(n + 2, 4 * n + 12)
        arrival = rng.randint(0, horizon - 3)
        if rng.random() < 0.5:
            utility: dict[str, Any] = {
                "kind": "sigmoid", "gamma1": round(rng.uniform(2, 100), 3),
                "gamma2": round(rng.uniform(0.5, 2.0), 3),
                "gamma3": round(rng.uniform(1, 8 if kind == "a" else 5), 3)}
        else:
            values = sorted((round(rng.uniform(1, 100), 3)
                             for _ in range(rng.randint(2, 7))), reverse=True)
            utility = {"kind": "table", "values": values}
        out.append({"id": f"j{i}", "arrival": arrival, "workload": v, "max_workers": n,
                    "ps_ratio": rng.randint(1, 4), "worker_demand": wd, "ps_demand": pd,
                    "requested_workers": rng.randint(1, n), "utility": utility})
    return {"format": "oasis-instance/1", "name": f"fresh-{seed}", "horizon": horizon,
            "resources": resources, "worker_servers": workers, "ps_servers": ps_servers,
            "jobs": out}


def family(name: str, seeds: int) -> list[Instance]:
    """The first ``seeds`` instances of ``fresh-a`` or ``fresh-b``."""
    first = FAMILIES[name]
    return [instance_from_dict(fresh(first + k, name[-1])) for k in range(seeds)]


if __name__ == "__main__":
    lo, hi, which, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    folder.mkdir(parents=True, exist_ok=True)
    for s in range(lo, hi):
        (folder / f"fresh-{s}.json").write_text(json.dumps(fresh(s, which)))
