"""The library in a notebook session (issue 19, item 3): ``offline.solve`` next to other HiGHS
users in the same process, in any order, through every route, from threads and forks.

HiGHS fixes each thread's task scheduler at that thread's first solve (the default: half the
cores); a later solve that sets ``threads`` to another number used to be refused ("Not Set").
That state is per process, so every scenario runs in a fresh Python subprocess (the pytest
process has long been initialised by other tests) and reports what each step returned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import INSTANCES, ROOT

from oasis_opt.io import load_instance
from oasis_opt.model import REL_TOL
from oasis_opt.offline import solve

#: One scenario: a foreign HiGHS user (``OTHER``) solves first, then ``offline.solve`` through
#: every route, the foreign user again, repeated calls, and the same in a fresh thread. Each
#: step's outcome goes into one JSON object on the last line of stdout.
SCENARIO = textwrap.dedent("""
    import json, os, sys, threading
    other, trace, only_limited = sys.argv[1], sys.argv[2], sys.argv[4] == "limited"

    def foreign():
        '''A tiny MILP (max x, x <= 3 integer) solved by a foreign HiGHS user, default threads.'''
        if other in ("pyomo_highs", "appsi_highs"):
            import pyomo.environ as pyo
            m = pyo.ConcreteModel()
            m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 3))
            m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
            pyo.SolverFactory("highs" if other == "pyomo_highs" else "appsi_highs").solve(m)
            return pyo.value(m.x)
        if other == "highspy":
            import highspy
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.addVar(0, 3)
            h.changeColCost(0, -1)
            h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
            h.run()
            return h.getSolution().col_value[0]
        if other == "pulp_highs":
            import pulp
            p = pulp.LpProblem("t", pulp.LpMaximize)
            x = pulp.LpVariable("x", 0, 3, pulp.LpInteger)
            p += x
            p.solve(pulp.HiGHS(msg=False))
            return x.varValue
        raise ValueError(other)

    def explicit(threads):
        '''The same model on highspy with an explicit thread count.'''
        import highspy
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", threads)
        h.addVar(0, 3)
        h.changeColCost(0, -1)
        h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
        h.run()
        return h.getSolution().col_value[0] if h.getInfo().primal_solution_status == 2 \
            else h.modelStatusToString(h.getModelStatus())

    from oasis_opt.io import load_instance
    from oasis_opt.offline import solve
    small = load_instance(sys.argv[3])
    out = {}

    def step(name, fn):
        try:
            out[name] = fn()
        except Exception as exc:
            out[name] = f"error: {type(exc).__name__}: {exc}"

    def ours(instance, **kw):
        schedule, report = solve(instance, **kw)
        return [report.status.value, report.objective, report.route]

    step("foreign", foreign)
    if only_limited:
        step("limited", lambda: ours(small, time_limit=60))
        print(json.dumps(out))
        sys.exit(0)
    step("auto", lambda: ours(small))
    step("pyomo", lambda: ours(small, modeler="pyomo"))
    step("pulp", lambda: ours(small, modeler="pulp"))
    step("colgen", lambda: ours(small, method="colgen"))
    step("limited", lambda: ours(small, time_limit=30))  # one racer in a forked child
    step("foreign_after", foreign)
    step("again", lambda: ours(small))
    step("explicit_after", lambda: explicit(2))  # our solves left no 1-thread scheduler
    step("explicit_ours", lambda: ours(small))

    def nested():  # solves from the progress callback, some inside the HiGHS run
        inner = []
        def cb(*_):
            if len(inner) < 3:
                inner.append(ours(small))
        return [ours(small, on_progress=cb), inner]
    step("nested", nested)

    # another thread solving with HiGHS at its default while this one solves: each thread
    # has its own scheduler, so this thread's replacements never touch the other's runs
    background = []
    def loop():
        for _ in range(100):
            background.append(foreign())
    bg = threading.Thread(target=loop)
    bg.start()
    step("foreground_1", lambda: ours(small))
    step("foreground_2", lambda: ours(small, modeler="pulp"))
    bg.join()
    out["background"] = sorted(set(background))
    if trace != "-":  # continuous workers: the parent extracts whole ones with HiGHS
        step("trace", lambda: ours(load_instance(trace), time_limit=30))

    def in_thread():
        step("thread_foreign", foreign)
        step("thread", lambda: ours(small))
        step("thread_pulp", lambda: ours(small, modeler="pulp"))
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    step("main_after_thread", lambda: ours(small))
    print(json.dumps(out))
""")


def _run(other: str, trace: str = "-", instance: str = "small-s0", steps: str = "all",
         env: dict | None = None) -> dict:
    r = subprocess.run([sys.executable, "-c", SCENARIO, other, trace,
                        str(INSTANCES / f"{instance}.json"), steps], capture_output=True, text=True,
                       timeout=600, cwd=ROOT, env={**os.environ, **(env or {})})
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def small_optimum() -> float:
    return solve(load_instance(INSTANCES / "small-s0.json"))[1].objective


@pytest.fixture(scope="module")
def small_colgen() -> float:
    return solve(load_instance(INSTANCES / "small-s0.json"), method="colgen")[1].objective


@pytest.fixture(scope="module")
def trace_instance(trace_path) -> str:
    from oasis_opt.formulations.common import prepare
    assert prepare(load_instance(trace_path)).flow_workers  # the flow extraction runs
    return trace_path


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("other", ["pyomo_highs", "appsi_highs", "highspy", "pulp_highs"])
def test_solves_next_to_other_highs_users(other, small_optimum, small_colgen, trace_instance):
    """A foreign HiGHS solve first (its scheduler: the default thread count), then every
    route of ``offline.solve`` (highspy, Pyomo, PuLP, column generation, a forked racer, the
    flow extraction of continuous workers), the foreign user again, repeated calls, and all
    of it from a fresh thread; solves from a progress callback (some inside the HiGHS run);
    another thread solving with HiGHS meanwhile; a foreign solve with an explicit thread
    count after ours. Each step returns the optimum (3 for the foreign model)."""
    out = _run(other, trace_instance)
    for name in ("foreign", "foreign_after", "thread_foreign", "explicit_after"):
        assert out[name] == 3, (name, out[name])
    assert out["background"] == [3], out  # the other thread's 100 solves
    assert isinstance(out["nested"], list) and len(out["nested"][1]) == 3, out["nested"]
    solved = {name: out[name] for name in (
        "auto", "pyomo", "pulp", "limited", "again", "explicit_ours", "foreground_1",
        "foreground_2", "thread", "thread_pulp", "main_after_thread")}
    solved["nested"] = out["nested"][0]
    solved.update({f"nested_{k}": got for k, got in enumerate(out["nested"][1])})
    for name, got in solved.items():
        assert isinstance(got, list), (name, got)
        assert got[0] == "optimal" and _close(got[1], small_optimum), (name, got)
    # column generation's schedule (not always proven): the same as in a quiet process (its
    # LPs used to fail quietly and it returned a worse schedule labelled optimal)
    assert isinstance(out["colgen"], list) and _close(out["colgen"][1], small_colgen), out
    assert isinstance(out["trace"], list) and out["trace"][0] == "optimal", out["trace"]
    trace_optimum = solve(load_instance(trace_instance))[1].objective
    assert _close(out["trace"][1], trace_optimum)


def test_racers_next_to_another_highs_user():
    """The portfolio's two forked racers inherit a scheduler of the foreign user's thread
    count; each one's solve and the parent's extraction still succeed."""
    out = _run("pyomo_highs", instance="testbed-s0", steps="limited",
               env={"OASIS_PORTFOLIO": "1"})
    optimum = solve(load_instance(INSTANCES / "testbed-s0.json"))[1].objective
    assert out["limited"][0] == "optimal" and _close(out["limited"][1], optimum), out
    assert out["limited"][2].endswith("+race"), out
