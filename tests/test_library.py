"""Issue 19: a researcher's own scheduler, named from outside, everywhere an algorithm is named.

The external algorithms live in a module written to a temporary folder (``mysched``): they are
found as ``mysched:NAME`` from the current folder, through ``register`` and through an entry
point of a fake installed distribution; each must give the same utility as a direct call.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INSTANCES

import oasis_opt
from oasis_opt import algorithms, ratio
from oasis_opt.errors import AlgorithmError, InputError
from oasis_opt.validate import validate

CLI = str(Path(sys.executable).with_name("oasis-opt"))

MODULE = '''
import dataclasses

import numpy as np  # the legacy global generator is what the registry seeds
from oasis_opt import algorithms
from oasis_opt.model import Allocation, JobResult, Schedule


def scaled(instance, u_scale=1.0):
    """OASiS with its price bound scaled: a scheduler with a parameter."""
    return algorithms.run("oasis", instance, u_scale=u_scale)


def noisy(instance):
    """OASiS with a random price scale: deterministic only if the seed is."""
    return algorithms.run("oasis", instance, u_scale=float(np.random.uniform(0.2, 5.0)))


def broken(instance):
    raise ZeroDivisionError("oops")


def not_a_schedule(instance):
    return 42


def cheat(instance):
    """Claims utility it did not earn: the validator must refuse it."""
    s = algorithms.run("fifo", instance)
    return Schedule(s.instance, "cheat", s.total_utility + 1.0, s.jobs, {})


def _fifo_arrays(instance):
    s = algorithms.run("fifo", instance)
    y, z = s.to_arrays(instance)
    return [i for i, jr in enumerate(s.jobs) if jr.completed], y, z


def by_id(instance):
    """Keys the arrays by job id, not position: every job was dropped, utility 0, no error."""
    done, y, z = _fifo_arrays(instance)
    jid = [j.id for j in instance.jobs]
    return Schedule.from_arrays(instance, "by-id", {jid[i]: y[i] for i in done},
                                {jid[i]: z[i] for i in done})


def transposed(instance):
    done, y, z = _fifo_arrays(instance)
    return Schedule.from_arrays(instance, "t", {i: y[i].T for i in done},
                                {i: z[i].T for i in done})


def halves(instance):
    """Half a worker per slot was rounded down to none without a word."""
    done, y, z = _fifo_arrays(instance)
    return Schedule.from_arrays(instance, "h", {i: y[i] * 0.5 for i in done},
                                {i: z[i] for i in done})


def lender(instance):
    """A job lends its workers to the others as negative counts: capacity summed to the
    limit, so the validator passed a schedule that runs more work than the cluster holds."""
    s = algorithms.run("fifo", instance)
    jobs = list(s.jobs)
    n = next(n for n, jr in enumerate(jobs) if jr.allocations)
    a = jobs[n].allocations[0]
    jobs[n] = JobResult(jobs[n].id, False, None, 0.0,
                        (Allocation(a.slot, {w: -5 for w in a.workers}, {}),))
    return Schedule(s.instance, "lender", s.total_utility, tuple(jobs), {})


def twice(instance):
    """Lists a completed job twice: its utility counted twice."""
    s = algorithms.run("fifo", instance)
    done = next(jr for jr in s.jobs if jr.completed)
    return Schedule(s.instance, "twice", s.total_utility, s.jobs + (done,), {})


def elsewhere(instance):
    """A schedule for another instance: unknown servers were exit 2 without a name."""
    import oasis_opt
    return algorithms.run("fifo", oasis_opt.generate("small", seed=9, servers=6))


def quits(instance):
    import sys
    sys.exit(0)


def aliases(instance):
    """Writes into the instance's capacities, thinking them a copy: the validator then judged
    an overfilled schedule by the raised capacities (and the next runs and the solve too)."""
    free = instance.worker_capacity
    free *= 100
    s = algorithms.run("fifo", instance)
    return s


def unlocks(instance):
    """Makes the capacities writable again (``setflags``: the usual answer to "read-only")
    and raises them: the read-only flag alone let it, and ``ratio`` called the overfilled
    schedule optimal."""
    free = instance.worker_capacity
    free.setflags(write=True)
    free *= 100
    return algorithms.run("fifo", instance)


def reorders(instance):
    """Reverses the server names in place (a list then): the validator read the capacities
    by the reversed names and passed an overfilled schedule, and every later run failed."""
    instance.worker_names.reverse()
    return algorithms.run("fifo", instance)


def renumbers(instance):
    """Swaps two jobs' entries of the job index in place (a dict then)."""
    index = instance.job_index
    a, b = list(index)[:2]
    index[a], index[b] = index[b], index[a]
    return algorithms.run("fifo", instance)


def lengthens(instance):
    """Gives itself five more slots through ``object.__setattr__``: OPT became 270.9 where it
    is 231.49, and the schedule, judged by the changed instance, passed."""
    object.__setattr__(instance, "horizon", instance.horizon + 5)
    return algorithms.run("fifo", instance)


def relabels(instance):
    """Labels its schedule with another instance's name."""
    return dataclasses.replace(algorithms.run("fifo", instance), instance="small-s2")


def needs(instance, *, n: int):
    """A parameter without a default."""
    return algorithms.run("fifo", instance).with_extras(n=n)


def picky(instance):
    """Fails where the first job needs more than one worker-slot."""
    if instance.jobs[0].workload > 1:
        raise RuntimeError("too much work")
    return algorithms.run("fifo", instance)


def zero_demand(instance):
    instance.jobs[0].worker_demand[:] = 0
    return algorithms.run("fifo", instance)


def richer(instance):
    """Reports its utilities ten times higher after scaling the instance's utility table."""
    s = algorithms.run("fifo", instance)
    instance.utility_table[:] *= 10
    return s


def int_completed(instance):
    """completed as 1/0: passed the validator, and the file written was refused on reading."""
    s = algorithms.run("fifo", instance)
    jobs = tuple(JobResult(j.id, int(j.completed), j.completion_slot, j.utility, j.allocations)
                 for j in s.jobs)
    return Schedule(s.instance, "x", s.total_utility, jobs, {})


def set_extras(instance):
    s = algorithms.run("fifo", instance)
    return Schedule(s.instance, "x", s.total_utility, s.jobs, {"tags": {1, 2}})


def no_jobs(instance):
    return Schedule(instance.name, "x", 0.0, None, {})


def list_counts(instance):
    j = instance.jobs[0]
    return Schedule(instance.name, "x", 0.0,
                    (JobResult(j.id, False, None, 0.0, (Allocation(j.arrival, [1], {}),)),), {})


def claims(instance):
    """Its extras hold figures named like the run's own: ``run --json`` reported them."""
    s = algorithms.run("fifo", instance)
    return Schedule(s.instance, "claims", s.total_utility, s.jobs,
                    {"total_utility": 1e9, "completed": 99, "note": "kept"})


def deep(instance, *, depth: int = 1):
    """An int parameter; says what it was given (``range(depth)`` fails on a float)."""
    s = algorithms.run("fifo", instance)
    return s.with_extras(depth=depth, steps=len(range(depth)))
'''


@pytest.fixture
def mysched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``mysched`` importable from ``tmp_path`` (the current folder of the CLI runs)."""
    (tmp_path / "mysched.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("mysched", None)
    import mysched
    yield mysched
    sys.modules.pop("mysched", None)


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None):
    return subprocess.run([CLI, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


@pytest.fixture
def small() -> oasis_opt.Instance:
    return oasis_opt.load_instance(INSTANCES / "small-s1.json")


# --- names -------------------------------------------------------------------------------


def test_module_function_runs_like_a_direct_call(mysched, small) -> None:
    direct = mysched.scaled(small, u_scale=0.5).total_utility
    s = algorithms.run("mysched:scaled", small, u_scale=0.5)
    assert s.total_utility == pytest.approx(direct)
    assert validate(small, s).feasible and s.extras["seconds"] >= 0


def test_register_and_compare_with_params(mysched, small) -> None:
    oasis_opt.register("mine", mysched.scaled)
    try:
        assert "mine" in algorithms.names()
        rep = oasis_opt.compare(small, {"mine": {"u_scale": 0.5}, "oasis": None})
        rows = {r["algorithm"]: r for r in rep.to_records()}
        assert rows["mine"]["utility"] == pytest.approx(
            mysched.scaled(small, u_scale=0.5).total_utility)
        assert rows["oasis"]["utility"] == pytest.approx(
            algorithms.run("oasis", small).total_utility)
        assert rows["mine"]["opt"] == rows["oasis"]["opt"] and rows["mine"]["status"] == "optimal"
    finally:
        oasis_opt.unregister("mine")
    assert "mine" not in algorithms.names()


def test_compare_takes_one_name(small) -> None:
    rep = ratio.compare(small, "oasis")
    assert [r["algorithm"] for r in rep.rows] == ["oasis"]


def test_compare_takes_functions_where_it_takes_names(mysched, small) -> None:
    """``run`` took a function, ``compare`` only in a dict: a list with one was refused
    ("expected algorithm names")."""
    mine = algorithms.run(mysched.scaled, small).total_utility
    for spec in ([mysched.scaled, "fifo"], mysched.scaled, {mysched.scaled: None}):
        rows = oasis_opt.compare(small, spec).rows
        assert rows[0]["algorithm"] == "mysched.scaled"
        assert rows[0]["utility"] == pytest.approx(mine)
    assert [r["algorithm"] for r in rows] == ["mysched.scaled"]


def test_compare_passes_parameters(small) -> None:
    # the parameters used to be dropped silently: u_scale 0.05 must change OASiS's schedule
    base = algorithms.run("oasis", small).total_utility
    scaled = algorithms.run("oasis", small, u_scale=0.05).total_utility
    assert base != pytest.approx(scaled)
    rep = ratio.compare(small, {"oasis": {"u_scale": 0.05}})
    assert rep.rows[0]["utility"] == pytest.approx(scaled)


@pytest.mark.parametrize("name, message", [
    ("nope", "unknown algorithm 'nope'"),
    ("no_such_module_xyz:run", "cannot import module 'no_such_module_xyz'"),
    ("mysched:absent", "has no 'absent'"),
    ("mysched", "unknown algorithm"),
])
def test_names_that_do_not_resolve(mysched, small, name, message) -> None:
    with pytest.raises(InputError, match=message) as err:
        algorithms.run(name, small)
    assert err.value.place == "algorithm"


@pytest.mark.parametrize("name, message", [
    ("mysched:broken", "algorithm 'mysched:broken' failed on small-s1: ZeroDivisionError: oops"),
    ("mysched:not_a_schedule", "returned int, not a Schedule"),
    ("mysched:cheat", "algorithm 'mysched:cheat' produced an infeasible schedule"),
    ("mysched:by_id", r"failed on small-s1: ValueError: workers: key 'j\d' is not a job's "
                      r"position in instance.jobs \(0 … 6\)"),
    ("mysched:transposed", r"ValueError: workers\[\d\]: expected an array of shape \(10, 2\) "
                           r"\(slots, servers\), got \(2, 10\)"),
    ("mysched:halves", r"ValueError: workers\[\d\]: slot \d+, server \d holds 0.5; counts are "
                       "non-negative integers"),
    ("mysched:lender", r"produced a malformed schedule on small-s1: "
                       r"jobs\[1\].allocations\[0\].workers.w\d: expected a non-negative "
                       "integer count, got -5"),
    ("mysched:twice", r"produced a malformed schedule on small-s1: jobs\[7\].id: duplicate "
                      r"job id 'j\d' \(also jobs\[\d\]\)"),
    ("mysched:elsewhere", r"algorithm 'mysched:elsewhere' produced a malformed schedule on "
                          r"small-s1: jobs\[\d\].allocations\[0\].workers: unknown worker "
                          "server"),
    ("mysched:quits", "algorithm 'mysched:quits' failed on small-s1: SystemExit: 0"),
    # the instance's arrays are read-only: a write into them fails where it is made
    ("mysched:aliases", "algorithm 'mysched:aliases' failed on small-s1: ValueError: .*read-only"),
    ("mysched:zero_demand", "'mysched:zero_demand' failed on small-s1: ValueError: .*read-only"),
    ("mysched:unlocks", "'mysched:unlocks' failed on small-s1: ValueError: cannot set "
                        "WRITEABLE flag"),
    ("mysched:richer", "algorithm 'mysched:richer' failed on small-s1: ValueError: .*read-only"),
    ("mysched:int_completed", r"produced a malformed schedule on small-s1: jobs\[0\].completed: "
                              "expected true or false, got [01]"),
    ("mysched:set_extras", "produced a malformed schedule on small-s1: extras: not JSON values"),
    ("mysched:no_jobs", "produced a malformed schedule on small-s1: jobs: expected a tuple"),
    ("mysched:list_counts", r"produced a malformed schedule on small-s1: jobs\[0\]\."
                            r"allocations\[0\]\.workers: expected a dict \{server: count\}, "
                            "got list"),
])
def test_runs_that_fail_name_the_algorithm(mysched, small, name, message) -> None:
    with pytest.raises(AlgorithmError, match=message):
        algorithms.run(name, small)


def test_a_failure_s_long_message_is_clipped_to_one_line(small) -> None:
    """``-a sys:exit`` failed with SystemExit(instance): its message was the instance's
    repr, 3 000 characters, whole in the error and in the solve's floor notes."""
    def loud(instance):
        sys.exit("line\n" + "x" * 10_000)
    with pytest.raises(AlgorithmError) as err:
        algorithms.run(loud, small)
    text = str(err.value)
    assert len(text) < 700 and " … " in text and "\n" not in text, text[:200]
    assert "failed on small-s1: SystemExit: line\\nxxx" in text


@pytest.mark.parametrize("name,message", [
    ("mysched:reorders", "'tuple' object has no attribute 'reverse'"),
    ("mysched:renumbers", "'mappingproxy' object does not support item assignment"),
    ("mysched:lengthens", "'mysched:lengthens' produced an infeasible schedule on small-s1: "
                          ".*past the horizon"),
    ("mysched:relabels", "produced a malformed schedule on small-s1: it names instance "
                         "'small-s2'"),
])
def test_a_run_is_judged_by_the_instance_as_given(mysched, small, name, message) -> None:
    """Names and indexes are read-only, and a user's scheduler gets its own copy of the
    instance (an outside audit: each of these passed, and the runs after it were judged by
    the changed instance); the built-ins after it run on the instance as given."""
    fifo = algorithms.run("fifo", small)
    with pytest.raises(AlgorithmError, match=message):
        algorithms.run(name, small)
    assert small.horizon == 10 and small.worker_names[0] == "w0"
    assert small.job_index[small.jobs[0].id] == 0
    again = algorithms.run("fifo", small)
    assert again.total_utility == fifo.total_utility and again.jobs == fifo.jobs


def test_a_run_cannot_change_the_instance(mysched, small) -> None:
    """A scheduler that wrote into the instance's capacities passed the validator with an
    overfilled schedule; the arrays are read-only, in this process and after pickling (the
    process pool, Dask)."""
    import pickle
    before = small.worker_capacity.copy()
    with pytest.raises(AlgorithmError, match="read-only"):
        algorithms.run("mysched:aliases", small)
    assert (small.worker_capacity == before).all()
    with pytest.raises(AlgorithmError, match="WRITEABLE"):
        algorithms.run("mysched:unlocks", small)
    assert (small.worker_capacity == before).all()
    clone = pickle.loads(pickle.dumps(small))
    for inst in (small, clone):
        for arrays in (inst.__dict__, inst.jobs[0].__dict__):
            for name, value in arrays.items():
                if hasattr(value, "flags"):
                    assert not value.flags.writeable, name
                    with pytest.raises(ValueError, match="WRITEABLE"):
                        value.setflags(write=True)
    assert validate(clone, algorithms.run("fifo", clone)).feasible


def test_compare_takes_what_python_md_says(small) -> None:
    """docs/python.md: ``compare`` takes ``method``, ``on_progress``, ``on_schedule`` and
    ``on_solve``; the public function refused them (TypeError)."""
    heard, told = [], []
    rep = oasis_opt.compare(small, ["fifo", "drf"], method="compact",
                            on_schedule=lambda s: heard.append(s.algorithm),
                            on_progress=lambda *point: None, on_solve=told.append)
    assert heard[:2] == ["fifo", "drf"] and len(told) == 1
    assert rep.rows[0]["opt_over_alg"] >= 1


@pytest.mark.parametrize("command, written", [
    (["adversary", "--jobs", "2", "--evaluations", "40", "-o", "worst.json"], "worst-failed.json"),
    (["verify", str(INSTANCES / "spaces" / "tiny-2jobs.json"), "-o", "v"], "v/failed.json"),
])
def test_a_failure_on_an_instance_the_command_made_keeps_it(mysched, tmp_path, command,
                                                            written) -> None:
    """"failed on adversary" left nothing to run again: the instance is written."""
    r = _cli(*command, "--algorithm", "mysched:picky", cwd=tmp_path)
    assert r.returncode == 1 and f"the instance it failed on is in '{written}'" in r.stderr, \
        r.stderr
    with pytest.raises(AlgorithmError, match="too much work"):
        algorithms.run("mysched:picky", oasis_opt.load_instance(tmp_path / written))


def test_a_module_that_exits_while_imported_is_bad_input(tmp_path, small) -> None:
    """A scheduler in a script that calls ``sys.exit()`` at its top ended the command with
    that status, 0 included, and no word (``SystemExit`` is not an ``Exception``)."""
    (tmp_path / "exits_now.py").write_text("import sys\nsys.exit(0)\ndef run(i): pass\n")
    inst = str(INSTANCES / "small-s1.json")
    r = _cli("run", inst, "--algorithm", "exits_now:run", "--json", "-o", "o.json",
             cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and not (tmp_path / "o.json").exists()
    assert r.stderr.strip() == "oasis-opt run: error: --algorithm: 'exits_now:run': importing " \
        "module 'exits_now' failed (it called sys.exit(0) while being imported)", r.stderr


def test_a_parameter_without_a_default_is_asked_for(mysched, small, tmp_path) -> None:
    """A keyword without a default that nobody gave failed inside the run (exit 1, a
    TypeError); it is a parameter missing, refused by name before anything runs."""
    with pytest.raises(InputError, match="needs this parameter") as err:
        algorithms.run("mysched:needs", small)
    assert err.value.place == "params.n"
    assert algorithms.run("mysched:needs", small, n=3).extras["n"] == 3
    r = _cli("run", str(INSTANCES / "small-s1.json"), "--algorithm", "mysched:needs",
             cwd=tmp_path)
    assert r.returncode == 2 and "error: --param n: mysched:needs needs this parameter (it " \
        "has no default)" in r.stderr, r.stderr


def test_unknown_parameter_is_refused_before_running(mysched, small) -> None:
    with pytest.raises(InputError, match="not a parameter of mysched:scaled .*u_scale"):
        algorithms.run("mysched:scaled", small, depth=3)
    with pytest.raises(InputError, match=r"algorithms.oasis.depth"):
        ratio.compare(small, {"oasis": {"depth": 3}})


@pytest.mark.parametrize("name, params, message", [
    ("oasis", {"certificate": "no"}, "certificate: oasis takes true or false here, got 'no'"),
    ("oasis", {"u_scale": True}, "u_scale: oasis takes a number here, got True"),
    ("oasis", {"bounds_update": 1}, "bounds_update: oasis takes a function here"),
    ("rrh", {"delay_weight": "x"}, "delay_weight: rrh takes a number here"),
    ("tetris", {"drop_hopeless": 0}, "drop_hopeless: tetris takes true or false here"),
])
def test_values_their_annotation_rules_out_are_refused(small, name, params, message) -> None:
    """A value of the wrong kind is refused naming it, before anything runs: ``"no"`` was a
    true ``certificate`` and ``delay_weight="x"`` an internal error."""
    with pytest.raises(InputError, match=message):
        algorithms.run(name, small, **params)


def test_numpy_scalars_pass_the_annotation_check(small) -> None:
    import numpy as np
    s = algorithms.run("tetris", small, remaining_weight=np.int64(2), drop_hopeless=np.bool_(1))
    assert validate(small, s).feasible


def test_arguments_in_the_wrong_order_get_a_short_message(small) -> None:
    """``oasis_opt.run("fifo", inst)`` (algorithms.run's order) put the whole instance's
    repr in the message: thousands of characters for a small instance."""
    with pytest.raises(InputError, match=r"got an Instance \(oasis_opt.run takes the "
                                         r"instance first") as err:
        oasis_opt.run("fifo", small)
    assert len(str(err.value)) < 200
    with pytest.raises(InputError) as err:
        oasis_opt.run(small, ["fifo"] * 1000)
    assert len(str(err.value)) < 200


def test_register_refuses_bad_names(mysched) -> None:
    for bad in ("", "a:b", "a,b", "a=b"):
        with pytest.raises(InputError, match="algorithm name"):
            oasis_opt.register(bad, mysched.scaled)
    with pytest.raises(InputError, match="built-in"):
        oasis_opt.register("oasis", mysched.scaled)
    with pytest.raises(InputError, match="fn"):
        oasis_opt.register("x", 3)
    with pytest.raises(InputError, match="'fifo' is a built-in algorithm"):
        oasis_opt.unregister("fifo")  # it said nothing, and fifo stayed
    assert "fifo" in algorithms.names()


def test_random_draws_are_seeded_by_the_instance(mysched, small) -> None:
    import numpy as np  # the legacy global generator is the one the registry seeds
    np.random.seed(123)  # noqa: NPY002
    before = np.random.random()  # noqa: NPY002
    np.random.seed(123)  # noqa: NPY002
    a = algorithms.run("mysched:noisy", small).total_utility
    b = algorithms.run("mysched:noisy", small).total_utility
    assert a == b
    assert np.random.random() == before  # noqa: NPY002 (the caller's state is restored)


# --- the command line --------------------------------------------------------------------


def test_cli_run_ratio_and_errors(mysched, small, tmp_path) -> None:
    inst = str(INSTANCES / "small-s1.json")
    direct = mysched.scaled(small, u_scale=0.5).total_utility
    r = _cli("run", inst, "--algorithm", "mysched:scaled", "--param", "u_scale=0.5", "--json",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_utility"] == pytest.approx(direct)
    r = _cli("ratio", inst, "--algorithms", "oasis,mysched:scaled", "--param", "mysched:scaled",
             "u_scale=0.5", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {row["algorithm"]: row for row in json.loads(r.stdout)["rows"]}
    assert rows["mysched:scaled"]["utility"] == pytest.approx(direct)

    r = _cli("run", inst, "--algorithm", "mysched:broken", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "algorithm error: algorithm 'mysched:broken' failed" in r.stderr
    r = _cli("run", inst, "--algorithm", "mysched:cheat", cwd=tmp_path)
    assert r.returncode == 1 and "infeasible schedule" in r.stderr
    for name in ("mysched:elsewhere", "mysched:quits", "mysched:by_id"):  # were 2, 0, 0
        r = _cli("run", inst, "--algorithm", name, "-o", "out.json", cwd=tmp_path)
        assert r.returncode == 1 and f"algorithm error: algorithm '{name}'" in r.stderr, name
        assert "Traceback" not in r.stderr and not (tmp_path / "out.json").exists()
    r = _cli("run", inst, "--algorithm", "mysched:claims", "--json", cwd=tmp_path)
    out = json.loads(r.stdout)  # the validated figures, not the extras' claims
    assert r.returncode == 0 and out["note"] == "kept", r.stderr
    assert out["total_utility"] == pytest.approx(algorithms.run("fifo", small).total_utility)
    assert out["completed"] == algorithms.run("fifo", small).completed
    r = _cli("run", inst, "--algorithm", "mysched:set_extras", "-o", "out.json", cwd=tmp_path)
    assert r.returncode == 1 and "algorithm error: algorithm 'mysched:set_extras'" in r.stderr
    assert not (tmp_path / "out.json").exists()
    r = _cli("run", inst, "--algorithm", "nomodule_abc:run", cwd=tmp_path)
    assert r.returncode == 2 and "--algorithm: 'nomodule_abc:run': cannot import" in r.stderr
    r = _cli("run", inst, "--algorithm", "mysched:scaled", "--param", "u_scale=NaN",
             cwd=tmp_path)
    assert r.returncode == 2 and "not a JSON value" in r.stderr
    r = _cli("run", inst, "--algorithm", "mysched:scaled", "--param", "u_scale=[1e400]",
             cwd=tmp_path)
    assert r.returncode == 2 and "numbers must be finite" in r.stderr
    r = _cli("run", inst, "--algorithm", "mysched:scaled", "--param", "u_scale=-1",
             cwd=tmp_path)  # refused inside the scheduler (by OASiS): not as --u-scale
    assert r.returncode == 2 and "error: algorithm 'mysched:scaled': u_scale: must be a " \
        "positive number, got -1" in r.stderr, r.stderr
    r = _cli("run", inst, "--algorithm", "mysched:scaled", "--param", "depth=1", cwd=tmp_path)
    assert r.returncode == 2 and "not a parameter of mysched:scaled" in r.stderr
    for cmd in (["adversary", "--jobs", "2", "-o", "w.json"],
                ["verify", str(INSTANCES / "spaces" / "tiny-2jobs.json"), "-o", "v"]):
        r = _cli(*cmd, "--algorithm", "mysched:scaled", "--param", "depth=1", cwd=tmp_path)
        assert r.returncode == 2, r.stderr  # the flag, not the library's "params.depth"
        assert "error: --param depth: not a parameter of mysched:scaled" in r.stderr, r.stderr
    r = _cli("ratio", inst, "--algorithms", "oasis", "--param", "fifo", "x=1", cwd=tmp_path)
    assert r.returncode == 2 and "not one of the algorithms compared" in r.stderr


def test_an_int_parameter_takes_an_integral_float_in_both_places(mysched, tmp_path) -> None:
    """One rule for ``--param`` and a grid's parameters (SPEC §5's, which grids followed):
    3.0 for an ``int`` parameter is 3; 3.5 is refused naming the key where it was written.
    The command line refused 3.0 (``--param.depth: … takes an integer here, got 3.0``), and
    a grid named 3.5 by the probe's ``params.depth`` inside its combination."""
    inst = str(INSTANCES / "small-s1.json")
    r = _cli("run", inst, "-a", "mysched:deep", "--param", "depth=3.0", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["params"] == {"depth": 3} and (data["depth"], data["steps"]) == (3, 3)
    r = _cli("run", inst, "-a", "mysched:deep", "--param", "depth=3.5", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("oasis-opt run: error: --param depth: mysched:deep takes an integer "
                        "here, got 3.5\n")
    r = _cli("ratio", inst, "--algorithms", "mysched:deep", "--param", "mysched:deep",
             "depth=3.5", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, "oasis-opt ratio: error: --param mysched:deep "
                                           "depth: mysched:deep takes an integer here, got "
                                           "3.5\n")
    for value, code in ((3.0, 0), (3.5, 2)):
        grid = {"format": "oasis-sweep/1", "instances": [inst], "reference": None,
                "algorithms": {"mysched:deep": {"depth": [1, value]}}, "out": f"o{value}"}
        (tmp_path / "grid.json").write_text(json.dumps(grid))
        r = _cli("sweep", "grid.json", cwd=tmp_path)
        assert r.returncode == code, r.stderr
    assert r.stderr == ("oasis-opt sweep: error: grid.json: algorithms.mysched:deep.depth: "
                        "mysched:deep takes an integer here, got 3.5\n")
    assert not (tmp_path / "o3.5").exists()
    rows = (tmp_path / "o3.0" / "results.csv").read_text().splitlines()[1:]
    assert [row.split(",")[2] for row in rows] == ['"{""depth"":1}"', '"{""depth"":3}"']
    # past 2^53 a float stands for no one integer: it stays a float (1e308 was a 309-digit
    # integer in the messages that named it)
    assert algorithms.param_values("oasis", {"u_scale": 2.0**53, "l_scale": 1e308}) == \
        {"u_scale": 2**53, "l_scale": 1e308}
    assert type(algorithms.param_values("oasis", {"u_scale": 1e308})["u_scale"]) is float


def test_cli_sweep_on_the_process_pool_and_adversary(mysched, small, tmp_path) -> None:
    grid = {"format": "oasis-sweep/1",
            "instances": [str(INSTANCES / "small-s1.json")],  # an absolute path
            "algorithms": {"mysched:scaled": {"u_scale": [0.5, 1.0]}, "mysched:noisy": {}},
            "reference": None, "out": "out"}
    (tmp_path / "grid.json").write_text(json.dumps(grid))
    r = _cli("sweep", "grid.json", "--workers", "2", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = oasis_opt.sweep(grid, base=tmp_path).to_records()  # resumes: nothing new runs
    got = {(row["algorithm"], row["params"]): row["utility"] for row in rows}
    assert got[("mysched:scaled", '{"u_scale":0.5}')] == pytest.approx(
        mysched.scaled(small, u_scale=0.5).total_utility)
    assert got[("mysched:noisy", "{}")] == pytest.approx(
        algorithms.run("mysched:noisy", small).total_utility)  # the pool's seed is ours

    r = _cli("adversary", "--algorithm", "mysched:scaled", "--param", "u_scale=0.5",
             "--evaluations", "4", "--jobs", "2", "--horizon", "3", "-o", "worst.json",
             "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["params"] == {"u_scale": 0.5}  # as run's and verify's reports say them
    if data.get("output"):
        worst = oasis_opt.load_instance(tmp_path / "worst.json")
        assert data["alg"] == pytest.approx(
            mysched.scaled(worst, u_scale=0.5).total_utility)


@pytest.mark.parametrize("name, params, code, message", [
    ("mysched:broken", {}, 1, "algorithm error: algorithms.mysched:broken: {}: algorithm "
                              "'mysched:broken' failed on probe: ZeroDivisionError: oops"),
    ("mysched:cheat", {}, 1, "algorithm error: algorithms.mysched:cheat: {}: algorithm "
                             "'mysched:cheat' produced an infeasible schedule"),
    ("mysched:scaled", {"u_scale": [-2]}, 2, "error: grid.json: algorithms.mysched:scaled: "
                                             '{"u_scale":-2}: algorithm \'mysched:scaled\': '
                                             "u_scale: must be a positive"),
])
def test_a_grid_names_a_failing_algorithm_with_exit_1(mysched, tmp_path, name, params, code,
                                                      message) -> None:
    """The grid tries each combination on a one-job instance first: a scheduler that failed
    there, or broke a rule, was bad input (exit 2); it is the algorithm's failure (exit 1,
    SPEC §6), and a value it refuses is still bad input."""
    grid = {"format": "oasis-sweep/1", "instances": [str(INSTANCES / "small-s1.json")],
            "algorithms": {name: params}, "reference": None, "out": "out"}
    (tmp_path / "grid.json").write_text(json.dumps(grid))
    r = _cli("sweep", "grid.json", "--workers", "0", cwd=tmp_path)
    assert r.returncode == code and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()


def test_registered_algorithm_on_the_process_pool(mysched, small, tmp_path) -> None:
    oasis_opt.register("mine", mysched.noisy)
    try:
        grid = {"format": "oasis-sweep/1", "instances": [str(INSTANCES / "small-s1.json")],
                "algorithms": {"mine": {}}, "reference": None}
        res = oasis_opt.sweep(grid, out=tmp_path / "pool", workers=2)
        assert res.summary["executor"] == "processes"
        (row,) = res.to_records()
        assert row["utility"] == pytest.approx(algorithms.run("mine", small).total_utility)
    finally:
        oasis_opt.unregister("mine")


def test_entry_point_algorithms_appear_by_name(mysched, tmp_path) -> None:
    dist = tmp_path / "mysched_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mysched-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[oasis_opt.algorithms]\nscaled-ep = mysched:scaled\n")
    env = {"PYTHONPATH": str(tmp_path)}
    r = _cli("run", "--help", cwd=tmp_path, env=env)
    assert "scaled-ep" in r.stdout
    r = _cli("run", str(INSTANCES / "small-s1.json"), "-a", "scaled-ep", "--param",
             "u_scale=0.5", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    small = oasis_opt.load_instance(INSTANCES / "small-s1.json")
    assert json.loads(r.stdout)["total_utility"] == pytest.approx(
        mysched.scaled(small, u_scale=0.5).total_utility)


# --- the Python API ----------------------------------------------------------------------


def test_library_errors_name_the_parameter(small) -> None:
    with pytest.raises(InputError) as err:
        oasis_opt.generate("nope")
    assert err.value.place == "preset"
    with pytest.raises(InputError) as err:
        oasis_opt.generate("small", horizon=0)
    assert err.value.place == "horizon"
    with pytest.raises(InputError) as err:
        oasis_opt.solve(small, time_limit=-1)
    assert err.value.place == "time_limit" and "--" not in str(err.value)


def test_cli_still_names_the_flag(tmp_path) -> None:
    r = _cli("generate", "--preset", "small", "--horizon", "0", "-o", "x.json", cwd=tmp_path)
    assert r.returncode == 2 and "--horizon" in r.stderr


def test_grid_from_dict_and_absolute_paths(tmp_path) -> None:
    grid = oasis_opt.Grid.from_dict({
        "format": "oasis-sweep/1",
        "instances": [str(INSTANCES / "small-s0.json"), {"preset": "small", "seeds": 1}],
        "algorithms": {"fifo": {}}, "reference": None, "out": "o"}, base=tmp_path)
    assert [label for label, _ in grid.instances] == [
        str((INSTANCES / "small-s0.json").resolve()), "small-s0"]
    assert grid.out == tmp_path.resolve() / "o"
    with pytest.raises(InputError, match="algorithms.nope: unknown algorithm"):
        oasis_opt.Grid.from_dict({"format": "oasis-sweep/1", "instances": ["small-*.json"],
                                  "algorithms": {"nope": {}}, "reference": None},
                                 base=INSTANCES)


def test_solve_unpacks_and_records(small) -> None:
    schedule, report = oasis_opt.solve(small)
    sol = oasis_opt.solve(small)
    assert sol.status == "optimal" and sol.objective == pytest.approx(report.objective)
    rows = sol.to_records()
    assert len(rows) == small.num_jobs
    assert sum(r["utility"] for r in rows) == pytest.approx(schedule.total_utility)


def test_to_dataframe_needs_pandas(small) -> None:
    s = oasis_opt.run(small, "fifo")
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install"):
            s.to_dataframe()
    else:
        assert list(s.to_dataframe()["job"]) == [j.id for j in s.jobs]


def test_public_api_is_documented() -> None:
    for name in oasis_opt.__all__:
        obj = getattr(oasis_opt, name)
        if callable(obj):
            assert obj.__doc__, f"oasis_opt.{name} has no docstring"


# --- the optimum cache -------------------------------------------------------------------


def test_opt_cache_solves_once(small, tmp_path, monkeypatch) -> None:
    from oasis_opt import offline
    calls = []
    real = offline.solve

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(offline, "solve", counting)
    first = ratio.compare(small, ["oasis"], opt_cache=tmp_path)
    second = ratio.compare(small, ["oasis"], opt_cache=tmp_path)
    assert len(calls) == 1 and first.opt == second.opt and second.status == "optimal"
    ratio.compare(small, ["oasis"], opt_cache=tmp_path, time_limit=30)  # other settings
    assert len(calls) == 2
    (f, *_) = sorted(tmp_path.glob("*.json"))
    f.write_text("{not json")  # a damaged file is solved again and replaced
    for p in tmp_path.glob("*.json"):
        p.write_text(p.read_text()[:50])
    ratio.compare(small, ["oasis"], opt_cache=tmp_path)
    assert len(calls) == 3
    ratio.compare(small, ["oasis"], opt_cache=tmp_path)
    assert len(calls) == 3


@pytest.mark.parametrize("text", ["[1]", "5", '"x"', "null", "ghost"])
def test_an_opt_cache_file_that_is_no_object_is_solved_again(small, tmp_path, text) -> None:
    """A JSON document but not an object ended in 'internal error: 'list' object has no
    attribute 'get'' (exit 1), a schedule of an unknown job in 'error: jobs[0].id: unknown
    job' (exit 2, no file named), instead of being solved again like any damaged file."""
    ratio.compare(small, ["oasis"], opt_cache=tmp_path)
    (f,) = tmp_path.glob("*.json")
    if text == "ghost":
        data = json.loads(f.read_text())
        data["schedule"]["jobs"][0]["id"] = "ghost"
        text = json.dumps(data)
    f.write_text(text)
    again = ratio.compare(small, ["oasis"], opt_cache=tmp_path)
    assert again.status == "optimal" and json.loads(f.read_text())["format"]


@pytest.mark.parametrize("edit", [
    lambda r: r.update(total_utility=1e5),  # was reported as OPT: OPT/ALG 1181 for 2.0
    lambda r: r.update(bound=1.0),  # a bound below the schedule's utility
    lambda r: r.update(bound="1"),  # a number as a string
    lambda r: r.update(bound=None),
    lambda r: r.update(gap=0.5),  # not the gap of its bound and utility
    lambda r: r.update(bound=1e9, gap=(1e9 - r["total_utility"]) / r["total_utility"]),
])
def test_an_opt_cache_report_that_disagrees_with_its_schedule_is_solved_again(
        small, tmp_path, edit) -> None:
    first = ratio.compare(small, ["fifo"], opt_cache=tmp_path)
    (f,) = tmp_path.glob("*.json")
    data = json.loads(f.read_text())
    edit(data["report"])
    f.write_text(json.dumps(data))
    again = ratio.compare(small, ["fifo"], opt_cache=tmp_path)
    assert (again.opt, again.bound, again.status) == (first.opt, first.bound, "optimal")
    assert not any("came from the opt cache" in n for n in again.notes)
    rewritten = json.loads(f.read_text())["report"]  # replaced by the new solve's
    assert (rewritten["total_utility"], rewritten["bound"]) == (first.opt, first.bound)


def test_an_opt_cache_file_with_nan_is_solved_again(small, tmp_path) -> None:
    first = ratio.compare(small, ["fifo"], opt_cache=tmp_path)
    (f,) = tmp_path.glob("*.json")
    f.write_text(f.read_text().replace('"bound": ', '"bound": NaN, "x": ', 1))
    again = ratio.compare(small, ["fifo"], opt_cache=tmp_path)
    assert again.bound == first.bound and "NaN" not in f.read_text()


def test_bench_times_an_external_algorithm(mysched, small) -> None:
    from oasis_opt.bench import bench_baseline, run_bench
    row = bench_baseline("mysched:scaled", small, runs=1)
    assert row["utility"] == pytest.approx(mysched.scaled(small).total_utility)
    with pytest.raises(InputError, match="unknown algorithm 'nope'"):
        run_bench(quick=True, algorithms=["nope"])  # refused before anything is measured
    with pytest.raises(AlgorithmError, match="mysched:cheat"):
        bench_baseline("mysched:cheat", small, runs=1)
    # its parameters (``bench --param NAME KEY=VALUE``, as ``ratio``'s)
    row = bench_baseline("mysched:scaled", small, runs=1, params={"u_scale": 0.5})
    assert row["utility"] == pytest.approx(mysched.scaled(small, u_scale=0.5).total_utility)
    assert row["note"].endswith('params {"u_scale": 0.5}')
    with pytest.raises(InputError, match=r"^params.oasis: not one of the algorithms added "
                                         r"\(mysched:scaled\)"):
        run_bench(quick=True, algorithms=["mysched:scaled"], params={"oasis": {"x": 1}})
    with pytest.raises(InputError, match="^params.mysched:scaled.depth: not a parameter"):
        run_bench(quick=True, algorithms=["mysched:scaled"],
                  params={"mysched:scaled": {"depth": 1}})


def test_verify_and_adversary_results_as_records(tmp_path) -> None:
    space = json.loads((INSTANCES / "spaces" / "tiny-2jobs.json").read_text())
    res = oasis_opt.verify(space, "oasis", out=tmp_path / "v")
    rows = res.to_records()
    assert [r["index"] for r in rows] == list(range(len(rows))) and len(rows) == 576
    finite = [r["ratio"] for r in rows if r["status"] == "ok"]
    assert max(finite) == pytest.approx(res.max_ratio)
    worst = oasis_opt.adversary("fifo", jobs=2, horizon=3, evaluations=4, seed=2)
    assert len(worst.to_records()) == len(worst.trajectory) > 0


def test_solve_floor_takes_named_algorithms(mysched, small, tmp_path) -> None:
    r = _cli("solve", str(INSTANCES / "small-s1.json"), "--time-limit", "20", "--floor",
             "mysched:scaled", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("solve", str(INSTANCES / "small-s1.json"), "--time-limit", "20", "--floor",
             "nope", cwd=tmp_path)
    assert r.returncode == 2 and "--floor: unknown algorithm 'nope'" in r.stderr


class _BrokenEntryPoint:
    """An installed plug-in whose module is gone."""

    name, value = "broken-plugin", "gone_module:run"

    def load(self):
        raise ModuleNotFoundError("No module named 'gone_module'")


def test_a_broken_plugin_is_left_out_of_the_default_comparison(monkeypatch, capfd):
    """``ratio`` and ``compare`` without names take every named algorithm; a third party's
    entry point that does not load made both exit 2. It is left out, and said; named
    explicitly it is still refused."""
    from oasis_opt import cli
    monkeypatch.setattr(algorithms, "_entry_points",
                        lambda: {"broken-plugin": _BrokenEntryPoint()})
    inst = oasis_opt.load_instance(INSTANCES / "small-s0.json")
    report = oasis_opt.compare(inst)
    assert [r["algorithm"] for r in report.rows] == algorithms.builtin_names()
    assert any(n.startswith("broken-plugin left out:") and "gone_module" in n
               for n in report.notes)
    assert cli.main(["ratio", str(INSTANCES / "small-s0.json"), "--json"]) == 0
    out, err = capfd.readouterr()
    assert "note: broken-plugin left out:" in err
    assert [r["algorithm"] for r in json.loads(out)["rows"]] == algorithms.builtin_names()
    assert cli.main(["ratio", str(INSTANCES / "small-s0.json"), "--algorithms",
                     "fifo,broken-plugin"]) == 2
    assert "does not load" in capfd.readouterr().err


class _LoadedEntryPoint:
    """An installed plug-in that loads ``fn``."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def load(self):
        return self.fn


def _needs_depth(instance, depth: int):
    return algorithms.run("fifo", instance)


def _fails(instance):
    raise RuntimeError("not today")


def test_a_plugin_that_needs_a_parameter_or_fails_is_left_out_of_the_default_set(
        monkeypatch, capfd) -> None:
    """An installed plug-in that needs a parameter made the default ``ratio`` exit 2 asking
    for ``--param``, and one that raised made it exit 1 with no row for anyone (an outside
    audit; plugin.md promises that another package's broken plug-in does not stop them).
    Both are left out with a note, every other row kept; named, each still fails."""
    from oasis_opt import cli
    monkeypatch.setattr(algorithms, "_entry_points", lambda: {
        "needs-depth": _LoadedEntryPoint(_needs_depth), "fails": _LoadedEntryPoint(_fails)})
    inst = oasis_opt.load_instance(INSTANCES / "small-s0.json")
    report = oasis_opt.compare(inst)
    assert [r["algorithm"] for r in report.rows] == algorithms.builtin_names()
    assert any(n.startswith("needs-depth left out: parameter depth:") for n in report.notes)
    assert any(n.startswith("fails left out: algorithm 'fails' failed on small-s0: "
                            "RuntimeError: not today") for n in report.notes)
    capfd.readouterr()
    assert cli.main(["ratio", str(INSTANCES / "small-s0.json"), "--json"]) == 0
    out, err = capfd.readouterr()
    assert "note: needs-depth left out: parameter depth" in err
    data = json.loads(out)
    assert [r["algorithm"] for r in data["rows"]] == algorithms.builtin_names()
    assert any(n.startswith("fails left out:") for n in data["notes"])
    assert cli.main(["ratio", str(INSTANCES / "small-s0.json"), "--algorithms",
                     "fifo,fails"]) == 1
    assert cli.main(["ratio", str(INSTANCES / "small-s0.json"), "--algorithms",
                     "fifo,needs-depth"]) == 2
    assert "needs this parameter" in capfd.readouterr().err


class _ShadowingEntryPoint:
    """An installed plug-in named like a built-in: loading it is a failure of the test."""

    group = algorithms.ENTRY_POINT_GROUP

    def __init__(self, name: str, dist: str = "shadow-pkg", value: str | None = None) -> None:
        self.name, self.value = name, value or f"shadow_pkg.{name}:run"
        self.dist = type("Dist", (), {"name": dist})()

    def load(self):
        raise AssertionError(f"the plug-in named {self.name!r} was loaded")


def test_a_plugin_named_like_a_builtin_is_ignored_and_said_once(monkeypatch, capfd) -> None:
    """An entry point called ``fifo`` was dropped without a word: its author never learnt why
    their scheduler did not run. The built-in keeps its name; one note says so, once."""
    import importlib.metadata

    from oasis_opt import cli
    eps = [_ShadowingEntryPoint("fifo"), _ShadowingEntryPoint("oasis")]
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: [e for e in eps if e.group == group])
    monkeypatch.setattr(algorithms, "_NOTED_IGNORED", set(), raising=False)
    small = oasis_opt.load_instance(INSTANCES / "small-s0.json")
    builtin = algorithms.run("fifo", small).total_utility
    capfd.readouterr()
    monkeypatch.setattr(algorithms, "_NOTED_IGNORED", set(), raising=False)
    for _ in range(2):  # the second command in the same process says nothing more
        assert cli.main(["run", str(INSTANCES / "small-s0.json"), "-a", "fifo", "--json"]) == 0
    out, err = capfd.readouterr()
    assert err.splitlines() == [
        "note: installed entry point 'fifo' (shadow_pkg.fifo:run) from shadow-pkg is ignored "
        "because it is named like a built-in algorithm",
        "note: installed entry point 'oasis' (shadow_pkg.oasis:run) from shadow-pkg is "
        "ignored because it is named like a built-in algorithm"]
    rows = [json.loads(part) for part in out.replace("}\n{", "}\x00{").split("\x00")]
    assert [r["total_utility"] for r in rows] == [pytest.approx(builtin)] * 2
    assert algorithms.names() == algorithms.builtin_names()


def test_plugins_no_command_can_name_or_named_twice_are_ignored_and_said(monkeypatch,
                                                                         capfd) -> None:
    """An entry point named ``a,b`` (no command line can name it) and a second package's
    ``greedy2`` beside the first one's were dropped without a word; the first ``greedy2``
    found is kept. Each ignored one is said once; the same one declared twice is no clash."""
    import importlib.metadata
    eps = [_ShadowingEntryPoint("a,b"),
           _ShadowingEntryPoint("greedy2", "first-pkg", "first.greedy:run"),
           _ShadowingEntryPoint("greedy2", "second-pkg", "second.greedy:run"),
           _ShadowingEntryPoint("greedy2", "first-pkg", "first.greedy:run")]
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: [e for e in eps if e.group == group])
    monkeypatch.setattr(algorithms, "_NOTED_IGNORED", set())
    capfd.readouterr()
    with pytest.warns(oasis_opt.PluginWarning) as caught:  # library code prints nothing
        for _ in range(2):
            assert algorithms.names() == [*algorithms.builtin_names(), "greedy2"]
    notes = [
        "installed entry point 'a,b' (shadow_pkg.a,b:run) from shadow-pkg is ignored "
        "because its name is empty or holds ':', ',', '=' or white space, which a command "
        "line cannot name",
        "installed entry point 'greedy2' (second.greedy:run) from second-pkg is ignored "
        "because 'greedy2' (first.greedy:run) from first-pkg has the same name (the first one "
        "found is kept)"]
    assert [str(w.message) for w in caught] == notes and capfd.readouterr().err == ""
    from oasis_opt import cli
    monkeypatch.setattr(algorithms, "_NOTED_IGNORED", set())
    assert cli.main(["run", str(INSTANCES / "small-s0.json"), "-a", "fifo", "--json"]) == 0
    assert capfd.readouterr().err.splitlines() == [f"note: {n}" for n in notes]


# Each public function refuses an argument of the wrong kind with InputError naming the
# parameter (api.py's promise); these raised AttributeError or a TypeError from deep inside
# ("'str' object has no attribute 'workload'", "'<=' not supported between 'int' and 'str'").
SPACE = str(INSTANCES / "spaces" / "tiny-2jobs.json")
TRACE = str(INSTANCES / "traces" / "tiresias" / "60_job.csv")
PHILLY = str(INSTANCES / "traces" / "adaptdl" / "philly.csv")
GAVEL = str(INSTANCES / "traces" / "gavel" / "msr" / "seed=0" / "6214e9.trace")
GRID = {"format": "oasis-sweep/1", "instances": [str(INSTANCES / "small-s0.json")],
        "algorithms": {"fifo": {}}, "reference": None}


def _wrong_kinds(small):
    path = str(INSTANCES / "small-s0.json")
    sched = oasis_opt.run(small, "fifo")
    return [
        ("instance", "expected an Instance", lambda: oasis_opt.solve(path)),
        ("instance", "expected an Instance", lambda: oasis_opt.solve(None)),
        ("instance", "expected an Instance", lambda: oasis_opt.run(None, "fifo")),
        ("instance", "expected an Instance", lambda: oasis_opt.compare(None)),
        ("instance", "expected an Instance", lambda: oasis_opt.validate(sched, small)),
        ("schedule", "expected a Schedule", lambda: oasis_opt.validate(small, None)),
        ("instance", "expected an Instance", lambda: oasis_opt.save_instance(sched, "x.json")),
        ("schedule", "expected a Schedule", lambda: oasis_opt.save_schedule(None, "x.json")),
        ("time_limit", "must be a number, got str '5'",
         lambda: oasis_opt.solve(small, time_limit="5")),
        ("time_limit", "must be a number, got bool", lambda: oasis_opt.solve(small, time_limit=True)),
        ("mip_gap", "must be a number, got str", lambda: oasis_opt.solve(small, mip_gap="0.1")),
        ("time_limit", "must be a number, got str", lambda: oasis_opt.compare(small, time_limit="1")),
        ("seed", "must be an integer, got float 1.5", lambda: oasis_opt.generate("small", seed=1.5)),
        ("jobs", "must be an integer, got float", lambda: oasis_opt.generate("small", jobs=2.5)),
        ("jobs", "too large", lambda: oasis_opt.generate("small", jobs=10**9)),
        ("space", "expected a dict or a path", lambda: oasis_opt.verify(None, "fifo", out="v")),
        ("time_limit", "must be a number, got str 'x'",
         lambda: oasis_opt.verify(SPACE, "fifo", out="v", time_limit="x")),
        ("max_instances", "must be an integer", lambda: oasis_opt.verify(SPACE, "fifo", out="v",
                                                                         max_instances="x")),
        ("max_share", "must be a number", lambda: oasis_opt.verify(SPACE, "fifo", out="v",
                                                                   max_share="x")),
        ("params", "expected a dict", lambda: oasis_opt.verify(SPACE, "fifo", out="v", params=3)),
        # out of range: time_limit=0 ran (its MILP fallback would refuse it mid-sweep), and
        # max_instances=-1 was "more than the limit of -1"
        ("time_limit", "must be a positive number, got 0",
         lambda: oasis_opt.verify(SPACE, "fifo", out="v", time_limit=0)),
        ("time_limit", "too long", lambda: oasis_opt.verify(SPACE, "fifo", out="v",
                                                            time_limit=1e300)),
        ("max_instances", "must be at least 1, got -1",
         lambda: oasis_opt.verify(SPACE, "fifo", out="v", max_instances=-1)),
        ("jobs", "must be an integer, got str", lambda: oasis_opt.adversary("fifo", jobs="x")),
        ("jobs", "must be an integer, got float", lambda: oasis_opt.adversary("fifo", jobs=2.5)),
        ("budget", "must be a number", lambda: oasis_opt.adversary("fifo", budget="1")),
        ("params", "expected a dict", lambda: oasis_opt.adversary("fifo", params=[1])),
        ("jobs", "must be an integer", lambda: oasis_opt.import_trace("tiresias", TRACE, jobs=2.5)),
        ("load", "must be a number", lambda: oasis_opt.import_trace("tiresias", TRACE, load="x")),
        ("path", "expected a path", lambda: oasis_opt.import_trace("tiresias", None)),
        ("workers", "must be an integer", lambda: oasis_opt.sweep(GRID, workers="x")),
        # callbacks and lists that failed deep inside: "'int' object is not callable" from
        # the solve's clock, after every algorithm ran (compare), or as a SolverError
        ("on_progress", "must be a function", lambda: oasis_opt.solve(small, on_progress=5)),
        ("on_round", "must be a function",
         lambda: oasis_opt.solve(small, method="colgen", on_round=5)),
        ("on_schedule", "must be a function", lambda: oasis_opt.solve(small, on_schedule=5)),
        ("options", "expected formulations.common.Options",
         lambda: oasis_opt.solve(small, options=5)),
        ("floor", "expected algorithm names, got int",
         lambda: oasis_opt.solve(small, time_limit=5, floor=5)),
        ("floor", "expected algorithm names, got int",
         lambda: oasis_opt.solve(small, time_limit=5, floor=[5])),
        ("algorithms", "expected algorithm names or functions, got int",
         lambda: oasis_opt.compare(small, 5)),
        ("algorithms", "expected algorithm names or functions, got 5",
         lambda: oasis_opt.compare(small, ["fifo", 5])),
        ("on_progress", "must be a function",
         lambda: oasis_opt.compare(small, "fifo", on_progress=5)),
        ("on_schedule", "must be a function",
         lambda: oasis_opt.compare(small, "fifo", on_schedule=5)),
        ("on_solve", "must be a function", lambda: oasis_opt.compare(small, "fifo", on_solve=5)),
        # a path of another type: "expected str, bytes or os.PathLike object, not int" from
        # pathlib, naming no parameter (verify and sweep after checking everything else)
        ("path", "expected a path, got int", lambda: oasis_opt.load_instance(5)),
        ("path", "expected a path, got NoneType", lambda: oasis_opt.load_schedule(None)),
        ("path", "expected a path, got int", lambda: oasis_opt.save_instance(small, 5)),
        ("path", "expected a path, got int", lambda: oasis_opt.save_schedule(sched, 5)),
        ("opt_cache", "expected a path, got int", lambda: oasis_opt.solve(small, opt_cache=5)),
        ("opt_cache", "expected a path, got int",
         lambda: oasis_opt.compare(small, "fifo", opt_cache=5)),
        ("out", "expected a path, got NoneType",
         lambda: oasis_opt.verify(SPACE, "fifo", out=None)),
        ("out", "expected a path, got int", lambda: oasis_opt.sweep(GRID, out=5)),
        ("base", "expected a path, got int", lambda: oasis_opt.sweep(GRID, base=5)),
        # '' ran in the working folder (verify's and a sweep's results, a cache entry there);
        # the command line refuses it by the flag
        ("out", "an empty path names no file", lambda: oasis_opt.verify(SPACE, "fifo", out="")),
        ("out", "an empty path names no file", lambda: oasis_opt.sweep(GRID, out="")),
        ("opt_cache", "an empty path names no file",
         lambda: oasis_opt.solve(small, opt_cache="")),
        ("path", "an empty path names no file", lambda: oasis_opt.import_trace("tiresias", "")),
        ("path", "an empty path names no file", lambda: oasis_opt.load_instance("")),
        ("path", "an empty path names no file", lambda: oasis_opt.save_instance(small, "")),
        # a NUL: "embedded null byte" from os.stat or tempfile, naming no parameter
        ("path", "a path cannot hold a NUL character",
         lambda: oasis_opt.load_instance("a\x00b.json")),
        ("path", "a path cannot hold a NUL character",
         lambda: oasis_opt.save_instance(small, "a\x00b.json")),
        ("opt_cache", "a path cannot hold a NUL character",
         lambda: oasis_opt.solve(small, opt_cache="a\x00b")),
        # an executor that is none: "'int' object has no attribute 'submit'" mid-run
        ("executor", "expected an executor (with submit), got int",
         lambda: oasis_opt.adversary("fifo", evaluations=2, executor=5)),
        ("executor", "expected an executor (with submit), got int",
         lambda: oasis_opt.verify(SPACE, "fifo", out="v", executor=5)),
        ("executor", "expected an executor (with submit), got int",
         lambda: oasis_opt.solve(small, method="colgen", executor=5)),
        # the pool's own words ("max_workers must be greater than 0"), pathlib's for a path
        ("workers", "must be at least 0, got -1", lambda: oasis_opt.sweep(GRID, workers=-1)),
        ("workers", "must be an integer, got str",
         lambda: oasis_opt.Grid.from_dict(GRID).run(out="o", workers="2")),
        ("base", "expected a path, got int", lambda: oasis_opt.Grid.from_dict(GRID, base=5)),
        ("out", "expected a path, got int", lambda: oasis_opt.Grid.from_dict(GRID).run(out=5)),
        ("opt_cache", "expected a path, got int",
         lambda: oasis_opt.Grid.from_dict(GRID).run(out="o", opt_cache=5)),
        # a name of another type: the instance was made, and its file did not load
        ("name", "expected a string, got int", lambda: oasis_opt.generate("small", name=5)),
        # a list where a name goes: "unhashable type: 'list'" from a dict lookup
        ("preset", "unknown preset ['small']", lambda: oasis_opt.generate(["small"])),
        ("solver", "unknown solver ['highs']", lambda: oasis_opt.solve(small, solver=["highs"])),
        ("solver", "unknown solver ['highs']",
         lambda: oasis_opt.compare(small, "fifo", solver=["highs"])),
        # import_trace: "must be real number, not str" from math.isfinite, a flag's name
        # ("--load: …") from the library, a name or flag of another type taken as it was
        ("elastic", "must be a number, got str", lambda: _import(elastic="2")),
        ("urgency", "must be a number, got str", lambda: _import(urgency="x")),
        ("efficiency", "must be a number, got NoneType", lambda: _import(efficiency=None)),
        ("slack", "must be a number, got list", lambda: _import(slack=[1])),
        ("load", "must be a positive number, got 0", lambda: _import(load=0)),
        ("slot_seconds", "must be a positive number", lambda: _import(slot_seconds=-1)),
        ("elastic", "must be a positive number", lambda: _import(elastic=float("nan"))),
        ("skip_bad", "expected True or False, got str", lambda: _import(skip_bad="yes")),
        ("name", "expected a string, got int", lambda: _import(name=5)),
        ("utility", "unknown policy", lambda: _import(utility=["x"])),
        ("gpus_per_server", "must be an integer, got str",
         lambda: oasis_opt.import_trace("philly", PHILLY, gpus_per_server="4")),
        ("gpu_type", "expected a string, got list",
         lambda: oasis_opt.import_trace("gavel", GAVEL, gpu_type=["v100"])),
        ("throughputs", "expected a path, got int",
         lambda: oasis_opt.import_trace("gavel", GAVEL, throughputs=5)),
        ("phases", "expected a list of phase names, got str",
         lambda: oasis_opt.import_trace("alibaba", TRACE, phases="Running")),
    ]


def _import(**options):
    return oasis_opt.import_trace("tiresias", TRACE, **options)


def test_arguments_of_the_wrong_kind_are_named(small, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for place, message, call in _wrong_kinds(small):
        with pytest.raises(InputError) as err:
            call()
        assert err.value.place == place, (place, str(err.value))
        assert message in str(err.value) and not str(err.value).startswith("--"), str(err.value)
        assert len(str(err.value)) < 200
    assert list(tmp_path.iterdir()) == []  # nothing written


# An unknown keyword: ``solve`` handed it to ``offline.solve``, whose TypeError ("solve() got
# an unexpected keyword argument 'bogus'") named neither the allowed keywords nor the
# package's error; the other public functions answered with Python's own TypeError. ``run``
# and ``import_trace`` refused it already (their messages are pinned here too).
def _unknown_keyword_calls(small, tmp_path):
    sched = oasis_opt.run(small, "fifo")
    return {
        "solve": lambda: oasis_opt.solve(small, bogus=1),
        "compare": lambda: oasis_opt.compare(small, "fifo", bogus=1),
        "generate": lambda: oasis_opt.generate("small", bogus=1),
        "adversary": lambda: oasis_opt.adversary("fifo", evaluations=2, bogus=1),
        "verify": lambda: oasis_opt.verify(SPACE, "fifo", out=tmp_path / "v", bogus=1),
        "sweep": lambda: oasis_opt.sweep(GRID, out=tmp_path / "s", bogus=1),
        "validate": lambda: oasis_opt.validate(small, sched, bogus=1),
        "load_instance": lambda: oasis_opt.load_instance(INSTANCES / "small-s1.json", bogus=1),
        "save_instance": lambda: oasis_opt.save_instance(small, tmp_path / "i.json", bogus=1),
        "load_schedule": lambda: oasis_opt.load_schedule(tmp_path / "none.json", bogus=1),
        "save_schedule": lambda: oasis_opt.save_schedule(sched, tmp_path / "s.json", bogus=1),
        "shipped_folder": lambda: oasis_opt.shipped_folder(bogus=1),
        "register": lambda: oasis_opt.register("x-bogus", lambda i: None, bogus=1),
        "unregister": lambda: oasis_opt.unregister("x-bogus", bogus=1),
    }


@pytest.mark.parametrize("name", ["solve", "compare", "generate", "adversary", "verify",
                                  "sweep", "validate", "load_instance", "save_instance",
                                  "load_schedule", "save_schedule", "shipped_folder",
                                  "register", "unregister"])
def test_an_unknown_keyword_is_an_input_error_naming_it_and_the_allowed_ones(
        small, tmp_path, name) -> None:
    call = _unknown_keyword_calls(small, tmp_path)[name]
    with pytest.raises(InputError) as err:
        call()
    taken = [p for p in inspect.signature(getattr(oasis_opt, name)).parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    assert err.value.place == "bogus", str(err.value)
    if name != "solve":  # its list holds what it passes on too: the next test
        assert err.value.message == f"not a parameter of {name} (it takes " + \
            (", ".join(p.name for p in taken) or "none") + ")", str(err.value)
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing started


def test_solve_names_every_keyword_it_passes_on() -> None:
    """``solve``'s own keywords and those it hands to ``offline.solve`` (``floor``,
    ``executor``, …), listed in one message; the documented signature is unchanged."""
    small = oasis_opt.load_instance(INSTANCES / "small-s1.json")
    with pytest.raises(InputError) as err:
        oasis_opt.solve(small, timelimit=5)
    assert str(err.value) == (
        "timelimit: not a parameter of solve (it takes instance, time_limit, mip_gap, modeler, "
        "method, solver, customize, opt_cache, on_progress, options, floor, floor_schedules, "
        "executor, on_round, on_schedule)")
    assert list(inspect.signature(oasis_opt.solve).parameters) == [
        "instance", "time_limit", "mip_gap", "modeler", "method", "solver", "customize",
        "opt_cache", "on_progress", "options"]
    assert oasis_opt.solve(small, floor=["fifo"], time_limit=30).status == "optimal"


def test_run_and_import_trace_refuse_an_unknown_keyword_as_before(small) -> None:
    with pytest.raises(InputError, match=r"^params\.bogus: not a parameter of fifo \(it "):
        oasis_opt.run(small, "fifo", bogus=1)
    with pytest.raises(InputError, match="^bogus: applies to no format, not tiresias"):
        oasis_opt.import_trace("tiresias", TRACE, bogus=1)
