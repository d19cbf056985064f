"""Hypothesis strategies shared by the property tests: random valid instances (as dicts) with
odd corners — zero capacities and demands, fractional PS ratios, every utility kind."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def instances(draw):
    r = draw(st.integers(1, 3))
    horizon = draw(st.integers(1, 6))
    vec = st.lists(st.sampled_from([0, 1, 2, 3, 0.5]), min_size=r, max_size=r)

    def servers(prefix):
        n = draw(st.integers(1, 2))
        out = []
        for g in range(n):
            s = {"name": f"{prefix}{g}x", "capacity": draw(vec)}
            if draw(st.booleans()):
                s["count"] = draw(st.integers(1, 3))
            out.append(s)
        return out

    utilities = st.one_of(
        st.builds(lambda a, b, c: {"kind": "sigmoid", "gamma1": a, "gamma2": b, "gamma3": c},
                  st.floats(0, 100), st.floats(0, 5), st.floats(-5, 10)),
        st.lists(st.floats(0, 50), max_size=7).map(
            lambda v: {"kind": "table", "values": sorted(v, reverse=True)}),
        st.builds(lambda v, d: {"kind": "deadline", "value": v, "deadline": d},
                  st.floats(0, 50), st.integers(1, 8)),
        st.builds(lambda v, d: {"kind": "linear", "value": v, "decay": d},
                  st.floats(0, 50), st.floats(0, 10)),
    )
    jobs = []
    for i in range(draw(st.integers(0, 4))):
        n = draw(st.integers(1, 4))
        jobs.append({
            "id": f"j{i}", "arrival": draw(st.integers(0, horizon - 1)),
            "workload": draw(st.integers(1, 8)), "max_workers": n,
            "ps_ratio": draw(st.sampled_from([1, 2, 3, 1.5])),
            "worker_demand": draw(vec), "ps_demand": draw(vec),
            "requested_workers": draw(st.integers(1, n)), "utility": draw(utilities),
        })
    return {"format": "oasis-instance/1", "name": "h", "horizon": horizon,
            "resources": [f"r{k}" for k in range(r)],
            "worker_servers": servers("w"), "ps_servers": servers("p"), "jobs": jobs}
