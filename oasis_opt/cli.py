"""``oasis-opt``: the command line (SPEC §6).

Exit status: 0 success, 1 a schedule that breaks a rule of the model (``validate``), 2 bad input
or usage. With ``--json`` a command prints one JSON object on stdout and nothing else; messages
and progress go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from .errors import AlgorithmError, InputError, SolverError, lone_surrogate, one_line
from .version import __version__

EPILOG = """\
examples:
  oasis-opt generate --preset testbed --seed 1 -o testbed.json
  oasis-opt solve instances/testbed-s1.json -o opt.json        # exact offline optimum
  oasis-opt run instances/testbed-s1.json --algorithm oasis -o oasis.json
  oasis-opt validate instances/testbed-s1.json oasis.json
  oasis-opt ratio instances/testbed-s1.json                    # OPT/ALG for every algorithm

exit status: 0 success, 1 a schedule breaks a rule (validate) or a solver, algorithm or
internal failure, 2 bad input or usage, 130 interrupted
"""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # SPEC §6 names the flags whole: argparse would take '--time-lim' for '--time-limit',
        # and a prefix unique today means another flag the day one is added
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        # a prefix of a flag is named as what it is before argparse asks for a required
        # option it stood for ('--algo fifo': "--algorithm is required")
        for text in [] if args is None or self._subparsers is not None else args:
            if text == "--":
                break
            flag = text.split("=", 1)[0] if isinstance(text, str) else ""
            if flag.startswith("--") and flag not in self._option_string_actions:
                whole = sorted(o for o in self._option_string_actions if o.startswith(flag))
                if whole:
                    self.error(f"unrecognized arguments: {flag} (flags are written whole: "
                               f"{' or '.join(whole)})")
        return super().parse_known_args(args, namespace)

    def print_help(self, file: Any = None) -> None:
        # argparse's own printing passes over a failed write: ``--help > /dev/full`` said
        # nothing and exited 0; here the OSError reaches ``main`` (exit 2)
        stream = sys.stdout if file is None else file
        stream.write(self.format_help())
        stream.flush()

    def error(self, message: str) -> None:  # usage errors: one line, exit 2
        from .errors import MAX_MESSAGE, elide
        self.print_usage(sys.stderr)
        # argparse echoes an unknown choice or argument whole: clipped as InputError's are,
        # and on one line
        self.exit(2, f"{self.prog}: error: {one_line(elide(message, MAX_MESSAGE))}\n")


class _Version(argparse.Action):
    """``--version``: printed as ``--help`` is (``_Parser.print_help``: a failed write is an
    error, not exit 0)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None
                 ) -> None:
        sys.stdout.write(f"oasis-opt {__version__}\n")
        sys.stdout.flush()
        parser.exit()


def _number_text(name: str, text: str, *, integer: bool = False) -> float:
    """A flag's number as written: ASCII digits with an optional leading minus, and for a
    non-integer a point and an exponent (``io.DECIMAL``); finite. ``int()`` and ``float()``
    also take '1_0', '١٠', ' 5' and '+5', and ``float()`` 'nan' and 'inf': every number
    flag goes through here, then its own range check."""
    shown = _clip(text)
    if integer:
        if not _INTEGER.fullmatch(text):
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {shown!r}")
        if len(text) > MAX_FLAG_DIGITS:  # int() refuses 4 300 digits and more
            raise argparse.ArgumentTypeError(f"{name}: {shown!r} is too large ({len(text)} "
                                             "digits)")
        return int(text)
    from .io import decimal_value
    x = decimal_value(text)
    if text.startswith("+") or math.isnan(x):
        raise argparse.ArgumentTypeError(f"{name} must be a number, got {shown!r}")
    if not math.isfinite(x):  # 1e400
        raise argparse.ArgumentTypeError(f"{name} must be a finite number, got {shown!r}")
    return x


_INTEGER = re.compile(r"-?[0-9]+")
#: digits an integer flag may have (every count's own range is far below 10^100)
MAX_FLAG_DIGITS = 100


def _real(name: str) -> Callable[[str], float]:
    """A finite number (the command checks its range: ``--mip-gap``, ``--efficiency``)."""
    return lambda text: _number_text(name, text)


def _integer(name: str) -> Callable[[str], int]:
    """An integer of any sign (``--seed``: the command checks its range)."""
    return lambda text: int(_number_text(name, text, integer=True))


def _positive(name: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        x = _number_text(name, text)
        if not x > 0:
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {text!r}")
        return x
    return parse


def seconds_type(name: str) -> Callable[[str], float]:
    """A positive number of seconds, at most 10^7 (about 115 days: longer waits overflow the
    clocks of the solvers and of Python's own timeouts)."""
    positive = _positive(name)

    def parse(text: str) -> float:
        x = positive(text)
        if x > 1e7:
            raise argparse.ArgumentTypeError(f"{name} must be at most 1e7 seconds, got {text!r}")
        return x
    return parse


def _nonneg_int(name: str, least: int = 0) -> Callable[[str], int]:
    """An integer flag of at least ``least`` (the same message for -3 as for 0)."""
    def parse(text: str) -> int:
        x = int(_number_text(name, text, integer=True))
        if x < least:
            raise argparse.ArgumentTypeError(f"{name} must be at least {least}, got {text!r}")
        return x
    return parse


def _jobs_or_all(text: str) -> int | None:
    """``import --jobs``: a count, or ``all`` (None: every usable job from ``--start``)."""
    return None if text.lower() == "all" else _nonneg_int("--jobs", 1)(text)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="oasis-opt", description="Schedule distributed ML training jobs on a shared "
                "cluster: exact offline optimum, the OASiS online algorithm, baselines, and their "
                "competitive ratios.", epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, nargs=0, default=argparse.SUPPRESS,
                   help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    from .algorithms import describe
    names_help = "an algorithm: " + describe()

    def cmd(name: str, help_: str) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help_, description=help_)
        COMMAND_PARSERS[name] = c
        c.add_argument("--json", action="store_true",
                       help="print one JSON object on stdout and nothing else")
        c.add_argument("--max-memory", metavar="SIZE", default=None,
                       help="refuse inputs whose arrays or models would take more than SIZE "
                            "(e.g. 512M, 16G; default a quarter of this machine's memory, "
                            "at most 8G)")
        return c

    g = cmd("generate", "write a random instance from a preset")
    from .generator import PRESETS
    g.add_argument("--preset", required=True, choices=list(PRESETS),
                   help="small: exact-solvable; testbed: 12 jobs, 10 slots; paper: 100 slots, "
                        "40+40 servers, contended; hard: 12-16 jobs and slots, tight; mixed, "
                        "mixed-2r, uniform-1r, loose, ps-heavy, ps-light: heterogeneous pools, "
                        "1-4 resources, fractional demands (docs/offline-journal.md, issue 22)")
    g.add_argument("--jobs", type=_nonneg_int("--jobs"), help="number of jobs (preset default)")
    g.add_argument("--horizon", type=_nonneg_int("--horizon", 1), help="number of slots")
    g.add_argument("--seed", type=_integer("--seed"), default=0, help="random seed (default 0)")
    g.add_argument("--name", help="instance name (default PRESET-sSEED, then -jJOBS, -THORIZON, "
                                        "-shareS for each given)")
    g.add_argument("--max-share", type=_positive("--max-share"), default=None, metavar="S",
                   help="scale the servers so that one worker or PS takes at most S (0.001-1) "
                        "of any server resource: the regime of OASiS's 2α guarantee")
    g.add_argument("-o", "--output", required=True, metavar="FILE", help="instance file to write")

    v = cmd("validate", "check a schedule against an instance and recompute its utility")
    v.add_argument("instance", metavar="INSTANCE")
    v.add_argument("schedule", metavar="SCHEDULE")

    s = cmd("solve", "compute the offline optimum (or, with a time limit, incumbent and bound)")
    s.add_argument("instance", metavar="INSTANCE")
    s.add_argument("--modeler", choices=["auto", "highspy", "pyomo", "pulp"], default="auto",
                   help="modelling layer for the compact MILP (default auto: the same rows as "
                        "arrays on highspy; pyomo and pulp are the expression and cross-check)")
    s.add_argument("--method", choices=["auto", "compact", "colgen"], default="auto",
                   help="compact MILP, column generation (bound + price-and-branch), or auto "
                        "by size (default)")
    s.add_argument("--time-limit", type=seconds_type("--time-limit"), metavar="S",
                   help="stop after S seconds with the incumbent and the best bound")
    s.add_argument("--mip-gap", type=_real("--mip-gap"), default=0.0, metavar="G",
                   help="relative gap at which to stop (default 0: proven optimal; a stop "
                        "with the gap above 1e-6 is status feasible, not optimal)")
    s.add_argument("--solver", default="highs", metavar="NAME",
                   help="MILP solver: highs (default), cbc, scip, or gurobi, cplex, xpress, "
                        "copt when installed (all but highs take the compact model; --method "
                        "colgen with them is refused)")
    s.add_argument("--floor", metavar="A,B,…", default=None,
                   help="with --time-limit: the online algorithms whose best schedule is the "
                        "floor of the answer (default the built-in ones; '' for none): "
                        + names_help)
    _pricing_options(s)
    s.add_argument("-o", "--output", metavar="FILE", help="schedule file to write")

    r = cmd("run", "run one online algorithm or baseline")
    r.add_argument("instance", metavar="INSTANCE")
    r.add_argument("--algorithm", "-a", required=True, metavar="NAME", help=names_help)
    r.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of the algorithm, VALUE a JSON value (repeatable), "
                        "e.g. --param u_scale=0.5")
    r.add_argument("--u-scale", type=_positive("--u-scale"), default=None, metavar="X",
                   help="OASiS: multiply the price upper bounds U by X (default 1)")
    r.add_argument("--l-scale", type=_positive("--l-scale"), default=None, metavar="Y",
                   help="OASiS: multiply the price lower bounds L by Y (default 1)")
    r.add_argument("-o", "--output", metavar="FILE", help="schedule file to write")

    q = cmd("ratio", "OPT (or its bound), each algorithm's utility, OPT/ALG and the 2α bound")
    q.add_argument("instance", metavar="INSTANCE")
    q.add_argument("--algorithms", default=None, metavar="A,B,…",
                   help="comma-separated algorithms (default: every named one): " + names_help)
    q.add_argument("--param", action="append", nargs=2, metavar=("NAME", "KEY=VALUE"),
                   help="a parameter of algorithm NAME, VALUE a JSON value (repeatable), "
                        "e.g. --param oasis u_scale=0.5 --param mypkg.sched:run depth=3")
    q.add_argument("--opt-cache", metavar="DIR", default=None,
                   help="reuse optima solved before with the same instance and settings "
                        "(a folder; created if missing)")
    q.add_argument("--time-limit", type=seconds_type("--time-limit"), metavar="S",
                   help="time limit of the whole command: the algorithms run first, the "
                        "offline solve gets the time left (at least a tenth of S or 1 s, for "
                        "a valid bound) and reuses their schedules")
    q.add_argument("--modeler", choices=["auto", "highspy", "pyomo", "pulp"], default="auto")
    q.add_argument("--method", choices=["auto", "compact", "colgen"], default="auto",
                   help="method of the offline solve (as in solve --method; colgen with "
                        "--time-limit: the certified bound at trace scale)")
    _pricing_options(q)
    q.add_argument("--solver", default="highs", metavar="NAME",
                   help="MILP solver of the offline solve (as in solve --solver)")
    q.add_argument("--plot", metavar="FILE", default=None,
                   help="also draw the table: utility bars against OPT, with 2α "
                        "(.png, .svg or .pdf)")

    e = cmd("experiment", "reproduce one of the paper's findings: CSV + PNG figure")
    e.add_argument("name", metavar="NAME",
                   help="ratio, utility-vs-jobs, estimation-error, runtime, trace or regime")
    e.add_argument("--seeds", type=_nonneg_int("--seeds", 1), default=None, metavar="K",
                   help="number of seeds (default per experiment)")
    e.add_argument("--out", default="results", metavar="DIR", help="output folder (results/)")
    e.add_argument("--quick", action="store_true", help="a tiny configuration, for a smoke run")
    e.add_argument("--algorithm", "-a", action="append", default=[], metavar="NAME",
                   help="also run this algorithm where the experiment compares several "
                        "(repeatable): " + names_help)
    e.add_argument("--scale", default=None, metavar="SIZES",
                   help="trace: slice sizes in jobs, comma-separated; 'research' = 1000,5000; "
                        "'whole' = the whole Philly trace (default 40: the quick set)")
    e.add_argument("--time-limit", type=seconds_type("--time-limit"), default=None, metavar="S",
                   help="trace: the offline solve's time limit per slice (default 30 s for "
                        "40-job slices, 300 s at research scale, 2 400 s for the whole trace)")
    e.add_argument("--method", choices=["auto", "compact", "colgen"], default=None,
                   help="trace: the offline solve's method (default auto)")
    e.add_argument("--workers", type=_nonneg_int("--workers"), metavar="N", default=None,
                   help="local worker processes (default: number of cores; 0 = in-process)")
    e.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="tcp://HOST:PORT of a Dask scheduler, or 'local' for a local cluster")

    w = cmd("sweep", "run your own grid (instances × algorithms × parameters, against OPT) or "
                     "a built-in experiment's config, on a process pool or a Dask cluster")
    w.add_argument("config", metavar="GRID",
                   help="a grid file (.json or .toml, \"format\": \"oasis-sweep/1\"; README) "
                        "or an experiment config {\"experiment\", \"seeds\", \"quick\", "
                        "\"out\"}")
    w.add_argument("--workers", type=_nonneg_int("--workers"), metavar="N", default=None,
                   help="local worker processes (default: number of cores)")
    w.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="tcp://HOST:PORT of a Dask scheduler, or 'local' for a local cluster")
    w.add_argument("--out", default=None, metavar="DIR",
                   help="output folder for the CSV and figure (default: the config's out)")
    w.add_argument("--opt-cache", metavar="DIR", default=None,
                   help="a grid's reference solves: reuse optima solved before with the same "
                        "instance and settings (a folder every worker reaches; created if "
                        "missing)")

    d = cmd("show", "draw a schedule: jobs over slots, server use per resource, OASiS's prices")
    d.add_argument("instance", metavar="INSTANCE")
    d.add_argument("schedule", metavar="SCHEDULE")
    d.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="picture to write: .png, .svg or .pdf")

    x = cmd("export", "write the compact MILP as an MPS or LP file (by suffix) for any solver")
    x.add_argument("instance", metavar="INSTANCE")
    x.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.mps or FILE.lp")

    m = cmd("import", "an instance from a public job trace (mapping: docs/traces.md)")
    m.add_argument("format", metavar="FORMAT", help="philly, gavel, pollux, tiresias or alibaba")
    m.add_argument("trace", metavar="TRACE", help="the trace file")
    m.add_argument("-o", "--output", required=True, metavar="INSTANCE", help="file to write")
    m.add_argument("--jobs", type=_jobs_or_all, default=40, metavar="N",
                   help="jobs, in submission order, or 'all' for the whole trace from --start "
                        "(default 40)")
    m.add_argument("--start", type=_nonneg_int("--start"), default=0, metavar="K",
                   help="skip the first K usable jobs (default 0)")
    m.add_argument("--slot-seconds", type=_positive("--slot-seconds"), metavar="S",
                   help="slot length (default: ceil((arrival span + 75th-percentile "
                        "duration) / horizon); above 100 jobs without --horizon, the "
                        "smallest round length >= the median duration that keeps the "
                        "horizon within 3000 slots: docs/traces.md)")
    m.add_argument("--horizon", type=_nonneg_int("--horizon", 1), default=None, metavar="T",
                   help="slots (default 100; above 100 jobs, the slots that hold the "
                        "arrivals and the 75th-percentile duration after them)")
    m.add_argument("--servers", type=_nonneg_int("--servers", 1), metavar="H",
                   help="worker servers (default: from --load, at most the trace's cluster)")
    m.add_argument("--load", type=_positive("--load"), default=1.5, metavar="X",
                   help="work within the horizon over cluster capacity (default 1.5)")
    m.add_argument("--elastic", type=_positive("--elastic"), default=2.0, metavar="E",
                   help="max_workers up to E × the trace's request (default 2; 1 = rigid)")
    m.add_argument("--efficiency", type=_real("--efficiency"), default=0.8, metavar="F",
                   help="measured scalability: keep worker counts whose per-worker "
                        "throughput is ≥ F × the request's (default 0.8)")
    m.add_argument("--utility", choices=["sigmoid", "deadline", "linear"], default="sigmoid",
                   help="utility policy around the job's own trace duration (default sigmoid)")
    m.add_argument("--slack", type=_positive("--slack"), default=2.0, metavar="X",
                   help="target duration = X × the trace duration (default 2)")
    m.add_argument("--urgency", type=_real("--urgency"), default=4.0, metavar="U",
                   help="sigmoid steepness: gamma2 = U / target (default 4)")
    m.add_argument("--value", choices=["work", "unit"], default="work",
                   help="a job's top utility: its workload (work) or 1 (unit)")
    m.add_argument("--skip-bad", action="store_true",
                   help="skip and count malformed rows instead of refusing the trace")
    m.add_argument("--name", help="instance name (default FORMAT-FILE-START-JOBS)")
    m.add_argument("--cluster", metavar="VC", help="philly: one virtual cluster's jobs")
    m.add_argument("--gpus-per-server", type=_nonneg_int("--gpus-per-server", 1), metavar="G",
                   help="philly, gavel: GPUs per node (default 4)")
    m.add_argument("--throughputs", metavar="FILE",
                   help="gavel: simulation_throughputs.json (default: found near TRACE)")
    m.add_argument("--gpu-type", metavar="TYPE", help="gavel: k80, p100 or v100 (default v100)")
    m.add_argument("--cluster-spec", metavar="FILE",
                   help="gavel: cluster_specs.json; tiresias: cluster_spec.csv (default: "
                        "found near TRACE)")
    m.add_argument("--apps", metavar="DIR",
                   help="pollux: the applications' measurements (default: apps/ near TRACE)")
    m.add_argument("--nodes", metavar="FILE",
                   help="alibaba: the node list (default openb_node_list_gpu_node.csv)")
    m.add_argument("--phases", metavar="A,B", help="alibaba: pod phases kept (default "
                                                   "Succeeded,Failed,Running)")

    a = cmd("adversary", "search small instances for a high OPT/ALG (exact OPT for each); "
                         "write the worst one")
    a.add_argument("--algorithm", "-a", default=None, metavar="NAME",
                   help=names_help + "; required unless --family")
    a.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of the algorithm, VALUE a JSON value (repeatable)")
    add_family_arguments(a)
    a.add_argument("--jobs", type=_nonneg_int("--jobs", 1), default=4, metavar="J",
                   help="jobs per instance (default 4)")
    a.add_argument("--horizon", type=_nonneg_int("--horizon", 1), default=6, metavar="T",
                   help="slots (default 6)")
    a.add_argument("--worker-servers", type=_nonneg_int("--worker-servers", 1), default=2,
                   metavar="H", help="worker servers (default 2)")
    a.add_argument("--ps-servers", type=_nonneg_int("--ps-servers", 1), default=1, metavar="K",
                   help="PS servers (default 1)")
    a.add_argument("--max-share", type=_positive("--max-share"), default=None, metavar="S",
                   help="search only the theorem's regime: no job's workers or PSs hold more "
                        "than S (0.01-1) of a server resource in a slot")
    a.add_argument("--evaluations", type=_nonneg_int("--evaluations", 1), default=None,
                   metavar="N", help="candidates the search evaluates (the random control as "
                                     "many); the result is determined by --seed and N "
                                     "(default 200 without --budget)")
    a.add_argument("--budget", type=seconds_type("--budget"), default=None, metavar="S",
                   help="wall seconds; stops between rounds and reports the evaluations "
                        "done. The command answers by 1.1·S + 10 s whatever still runs (a "
                        "scheduler that never returns): with the evaluations done by then "
                        "and a note naming what still ran, or, with none done, exit 1 and "
                        "the instance it ran on in WORST-failed.json")
    a.add_argument("--seed", type=_integer("--seed"), default=0, metavar="K",
                   help="random seed (default 0)")
    a.add_argument("--time-limit", type=seconds_type("--time-limit"), default=10.0, metavar="S",
                   help="exact solve per candidate; an unproven one is skipped (default 10)")
    a.add_argument("--workers", type=_nonneg_int("--workers"), metavar="N", default=0,
                   help="local worker processes (default 0: in-process)")
    a.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="tcp://HOST:PORT of a Dask scheduler, or 'local' for a local cluster")
    a.add_argument("--trajectory", metavar="PREFIX", default=None,
                   help="write PREFIX.csv and PREFIX.png (default: next to -o, "
                        "WORST.trajectory.csv/.png)")
    a.add_argument("-o", "--output", required=True, metavar="WORST.json",
                   help="instance file to write (the worst instance found)")

    b = cmd("bench", "measure OASiS, baselines and the solver on this machine, with targets")
    b.add_argument("--quick", action="store_true", help="fewer rounds and smaller instances")
    b.add_argument("--algorithm", "-a", action="append", default=[], metavar="NAME",
                   help="also time this algorithm's run on paper-s1 (repeatable): " + names_help)
    b.add_argument("--param", action="append", nargs=2, metavar=("NAME", "KEY=VALUE"),
                   help="a parameter of algorithm NAME added with -a, VALUE a JSON value "
                        "(repeatable), e.g. --param mypkg.sched:run depth=3")
    b.add_argument("--opt-cache", metavar="DIR", default=None,
                   help="also report OPT/ALG of every algorithm on the solver's testbed "
                        "instances, OPT kept in this folder (the solver is still timed on "
                        "every run; created if missing)")
    add_verify_parser(cmd)
    return p


# --- commands ----------------------------------------------------------------------------


def _emit(args: argparse.Namespace, data: dict[str, Any], human: Callable[[], None]) -> None:
    if args.json:
        from .io import dumps
        (_json_out or sys.stdout).write(dumps(data) + "\n")
    else:
        human()


def _console():
    from rich.console import Console
    c = Console(highlight=False)
    # Piped output has no width; 80 columns would truncate the tables' numbers.
    return c if c.is_terminal else Console(highlight=False, width=160)


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str | None = None):
    from rich.table import Table
    t = Table(title=title)
    for c in columns:
        t.add_column(c, justify="left" if c in ("algorithm", "job", "name") else "right")
    for row in rows:
        t.add_row(*(_cell(row.get(c)) for c in columns))
    _console().print(t)


def _cell(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.6g}"
    return str(x)


def _not_an_input(output: str | None, *inputs: tuple[str, str | None]) -> None:
    """Refuse an output that is one of the command's input files, by any name (a link, a
    relative path): the write would replace the file being read. ``inputs``: ``(what,
    path)`` pairs; only existing regular files count (``/dev/null`` may be both)."""
    if output is None:
        return
    for what, path in inputs:
        try:
            same = path is not None and os.path.isfile(path) and os.path.samefile(output, path)
        except OSError:  # the output does not exist yet
            same = False
        if same:
            raise InputError(str(output), f"cannot write: it is the {what} being read")


def cmd_generate(args: argparse.Namespace) -> int:
    from .generator import demand_ratio, generate
    from .io import check_output, save_instance
    check_output(args.output)
    inst = generate(args.preset, seed=args.seed, jobs=args.jobs, horizon=args.horizon,
                    name=args.name, max_share=args.max_share)
    save_instance(inst, args.output)
    ratio = demand_ratio(inst)
    data = {"output": args.output, "name": inst.name, "jobs": inst.num_jobs,
            "horizon": inst.horizon, "worker_servers": len(inst.worker_names),
            "ps_servers": len(inst.ps_names), "demand_over_capacity": ratio}
    _emit(args, data, lambda: print(
        f"wrote {args.output}: {inst.describe()}; demand/capacity "
        + ", ".join(f"{k} {v:.2f}" for k, v in ratio.items())))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .io import check_file_beside, in_file, load_instance, load_schedule
    from .validate import validate
    with in_file(args.instance, fields=True):
        inst = load_instance(args.instance)
    check_file_beside(args.schedule, "schedule", inst)
    with in_file(args.schedule, fields=True):  # unknown jobs and servers are the schedule's
        sched = load_schedule(args.schedule)
        rep = validate(inst, sched)

    def human() -> None:
        for w in rep.warnings:
            print(f"warning: {w}", file=sys.stderr)
        if rep.feasible:
            print(f"feasible: total utility {rep.total_utility:.10g} "
                  f"({rep.completed} of {inst.num_jobs} jobs completed)")
        else:
            print(f"infeasible: {len(rep.violations)} violation(s)")
            for v in rep.violations:
                print(f"  [{v.rule}] {v}")
    _emit(args, rep.to_dict(), human)
    return 0 if rep.feasible else 1


def _pricing_options(p: argparse.ArgumentParser) -> None:
    """``--workers`` and ``--dask`` of ``solve`` and ``ratio``: where column generation prices
    its jobs at trace scale (docs/offline.md, "A certified bound at trace scale")."""
    p.add_argument("--workers", type=_nonneg_int("--workers"), metavar="N", default=0,
                   help="column generation at trace scale: price jobs on N local processes "
                        "(default 0: in-process; the same bound)")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="column generation at trace scale: price jobs on a Dask cluster "
                        "(tcp://HOST:PORT, or 'local')")


def cmd_solve(args: argparse.Namespace) -> int:
    from .io import check_output, load_instance
    from .offline import solve
    from .tasks import make_executor
    if not 0 <= args.mip_gap < 1:
        raise InputError("--mip-gap", f"must be in [0, 1), got {args.mip_gap}")
    if args.output is not None:
        check_output(args.output)  # before a solve of up to --time-limit seconds
        _not_an_input(args.output, ("instance", args.instance))
    inst = load_instance(args.instance)
    floor = None if args.floor is None else _names(args.floor, "--floor", empty_ok=True)
    progress = _solve_progress() if _progress_wanted(args) else None
    lifeline = None
    if args.time_limit is not None and math.isfinite(args.time_limit) and args.time_limit > 0:
        # the promise holds where a solver does not return (oasis_opt/lifeline.py)
        from .algorithms import builtin_names
        from .lifeline import Lifeline
        lifeline = Lifeline.for_limit(
            args.time_limit, _started, inst, builtin_names() if floor is None else floor,
            lambda s, bound, history: _solve_output(args, inst,
                                                    *_stopped(args, s, bound, history)),
            schedule_file=args.output is not None).start()
        progress = _both(progress, lifeline.on_progress)
    with make_executor(args.workers, args.dask) as ex:
        try:
            sched, report = solve(
                inst, modeler=args.modeler, time_limit=args.time_limit, mip_gap=args.mip_gap,
                method=args.method, solver=args.solver, on_progress=progress, floor=floor,
                executor=ex, on_round=_round_progress() if _progress_wanted(args) else None,
                on_schedule=None if lifeline is None else lifeline.on_schedule)
        finally:  # returned or failed: the lifeline writes nothing
            if lifeline is not None:
                lifeline.close()
    if report.status.value == "error":  # never exit 0 on a solver failure (SPEC §6)
        raise SolverError(f"the solver failed on {inst.name} without a usable result")
    _solve_output(args, inst, sched, report)
    return 0


def _both(first: Callable[..., None] | None, second: Callable[..., None]
          ) -> Callable[..., None]:
    """A progress callback that tells ``first`` (if any) and ``second``."""
    if first is None:
        return second
    told = first

    def both(*point: Any) -> None:
        told(*point)
        second(*point)
    return both


def _stopped(args: argparse.Namespace, schedule: Any, bound: float,
             history: list[tuple[float, float | None, float]]) -> tuple[Any, Any]:
    """The lifeline's answer as ``solve``'s: the floor's best ``schedule`` and the least
    ``bound`` told, status ``time_limit``, route ``lifeline``."""
    from .offline import SolveReport, SolveStatus, relative_gap
    utility = schedule.total_utility
    partial = schedule.extras.get("partial")  # a floor's run stopped by the time limit
    report = SolveReport(SolveStatus.TIME_LIMIT, utility, bound, relative_gap(bound, utility),
                         0.0, 0.0, 0.0, time.perf_counter() - _started, args.modeler,
                         args.method, history=tuple(history), route="lifeline",
                         floor=str(schedule.algorithm),
                         floor_runs={str(schedule.algorithm): f"partial: {partial}"}
                         if partial else {})
    return schedule, report


def _solve_output(args: argparse.Namespace, inst: Any, sched: Any, report: Any) -> None:
    """``solve``'s schedule file and report (the solve's answer or the lifeline's)."""
    from .io import save_schedule
    from .offline.floor import NOT_NEEDED
    if args.output is not None:
        save_schedule(sched, args.output)
    data = {**report.to_dict(), "solver": args.solver}

    def human() -> None:
        gap = "–" if data["gap"] is None else f"{data['gap']:.3%}"
        print(f"{inst.name}: {data['status']} ({args.solver}), total utility "
              f"{data['total_utility']:.10g}, "
              f"bound {data['bound']:.10g}, gap {gap}, {data['seconds']:.2f} s "
              f"({sched.completed} of {inst.num_jobs} jobs completed)")
        # left out because the optimum was proven first: not missing (offline/floor.py)
        missing = {n: v for n, v in data["floor_runs"].items()
                   if isinstance(v, str) and v != NOT_NEEDED}
        if missing:  # the floor is the best of fewer algorithms than a user may assume
            print("  floor without: " + "; ".join(f"{n} ({v})" for n, v in missing.items()))
    _emit(args, data, human)
    if _json_out is not None:
        _json_out.flush()


def _progress_wanted(args: argparse.Namespace) -> bool:
    """Progress on stderr: always without ``--json``; with it only when stderr is a terminal,
    so a long ``--json`` run at a prompt is not silent while pipes, CI logs and the JSON's
    consumers see the one object and no chatter (the JSON carries ``history`` instead)."""
    return not args.json or _isatty(sys.stderr)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or bare stream
        return False


def _solve_progress() -> Callable[[float, float | None, float], None]:
    """One stderr line per improvement of the incumbent, else at most one a second: elapsed
    seconds, incumbent, bound, gap (``progress.solve_lines``)."""
    from .progress import solve_lines
    return solve_lines(lambda seconds, text: print(f"  {seconds:8.1f} s  {text}",
                                                   file=sys.stderr, flush=True))


def _round_progress() -> Callable[[Any], None]:
    """One stderr line per round of column generation's bound phase (``colgen.Round``), and
    every ``ROUND_EVERY`` seconds while a round prices."""

    from .progress import round_text

    def show(r: Any) -> None:
        print(f"  {r.seconds:8.1f} s  {round_text(r)}", file=sys.stderr, flush=True)
    return show


def _json_value(text: str, place: str) -> Any:
    """A ``--param`` value: one JSON value (numbers strict as in SPEC §5: no NaN or infinity)."""
    import json

    def refuse(const: str) -> Any:
        raise ValueError(f"{const} is not a number")
    try:
        value = json.loads(text, parse_constant=refuse)
    except RecursionError:  # deeper than the parser follows from here: surely past the limit
        raise InputError(place, f"nested too deeply (more than {MAX_PARAM_DEPTH} levels)") \
            from None
    except ValueError:
        raise InputError(place, f"{_clip(text)!r} is not a JSON value (quote a string: "
                                f"KEY='\"text\"')") from None
    from .io import nesting
    if nesting(value) > MAX_PARAM_DEPTH:  # _finite, repr and the checks recurse over it
        raise InputError(place, f"nested too deeply (more than {MAX_PARAM_DEPTH} levels)")
    if not _finite(value):  # 1e400 parses to infinity
        raise InputError(place, f"{_clip(text)!r}: numbers must be finite")
    return value


#: The deepest a ``--param`` value may nest (a parameter is a number, a list, a small table)
MAX_PARAM_DEPTH = 100


def _clip(text: str, most: int = 60) -> str:
    """A hostile value shown in a one-line message: its start only."""
    return text if len(text) <= most else text[: most - 1] + "…"


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def _key_value(text: str, place: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE a JSON value."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise InputError(place, f"expected KEY=VALUE with KEY a parameter name, got {text!r}")
    return key, _json_value(value, f"{place} {key}")


def _names(text: str, place: str, *, empty_ok: bool) -> list[str]:
    """A comma-separated list of algorithm names (``--algorithms``, ``--floor``), each resolved
    now, repeats dropped in order. An empty item (``fifo,,drf``) is refused by the option's
    name; so is an empty list unless ``empty_ok`` (``--floor ''``: no floor)."""
    from . import algorithms
    items = [n.strip() for n in text.split(",")]
    if items == [""]:
        if empty_ok:
            return []
        raise InputError(place, "names no algorithm (leave the option out for all of them)")
    if "" in items:
        raise InputError(place, f"an empty name in {text!r}")
    names = list(dict.fromkeys(items))
    for n in names:
        try:
            algorithms.check(n)
        except InputError as err:
            raise InputError(place, err.message) from None
    return names


def _params(pairs: Sequence[str] | None, place: str = "--param") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for text in pairs or ():
        key, value = _key_value(text, place)
        if key in out:
            raise InputError(f"{place} {key}", "given twice")
        out[key] = value
    return out


def cmd_run(args: argparse.Namespace) -> int:
    from . import algorithms
    from .io import check_output, check_schedule_size, load_instance, save_schedule
    algorithms.check(args.algorithm)
    if args.output is not None:
        check_output(args.output)
        _not_an_input(args.output, ("instance", args.instance))
    params = _params(args.param)
    for flag, key, value in (("--u-scale", "u_scale", args.u_scale),
                             ("--l-scale", "l_scale", args.l_scale)):
        if value is None:
            continue
        if args.algorithm not in ("oasis", "oasis-adaptive"):
            raise InputError(flag, "price scales apply to --algorithm oasis and "
                                   "oasis-adaptive only (others take --param KEY=VALUE)")
        if key in params:
            raise InputError(flag, f"given twice (also as --param {key})")
        params[key] = value
    params = algorithms.param_values(args.algorithm, params, place="--param")
    inst = load_instance(args.instance)
    check_schedule_size(inst, algorithms=[args.algorithm])
    sched = algorithms.run(args.algorithm, inst, **params)
    if args.output is not None:
        save_schedule(sched, args.output)
    data = {"algorithm": args.algorithm, "params": params, "total_utility": sched.total_utility,
            "completed": sched.completed}
    # the extras join the validated figures without replacing them: a scheduler's own
    # "total_utility" or "completed" in its extras was reported as the run's
    data.update((k, v) for k, v in sched.extras.items() if k not in data)
    data["seconds"] = sched.extras.get("seconds")
    _emit(args, data, lambda: print(
        f"{inst.name}: {args.algorithm} total utility {sched.total_utility:.10g}, "
        f"{sched.completed} of {inst.num_jobs} jobs completed, {data['seconds']:.3f} s"))
    return 0


def _algorithm_params(names: Sequence[str], pairs: Sequence[Sequence[str]] | None,
                      which: str = "compared") -> dict[str, dict[str, Any]]:
    """``ratio --param NAME KEY=VALUE`` (repeatable; ``bench``'s too) → ``{name: {key:
    value}}`` over ``names``; the name is its own argument, so dotted ``module:function``
    names survive."""
    from . import algorithms
    table: dict[str, dict[str, Any]] = {n: {} for n in names}
    for name, text in pairs or ():
        if name not in table:
            raise InputError(f"--param {name}", f"not one of the algorithms {which} "
                                                f"({', '.join(names) or 'none'})")
        key, value = _key_value(text, f"--param {name}")
        if key in table[name]:
            raise InputError(f"--param {name} {key}", "given twice")
        table[name][key] = value
    return {name: algorithms.param_values(name, params, place=f"--param {name}")
            for name, params in table.items()}


def cmd_ratio(args: argparse.Namespace) -> int:
    from . import algorithms
    from .io import load_instance
    from .ratio import compare
    left_out: list[str] = []
    if args.algorithms is None:  # every named algorithm that loads
        names, left_out = algorithms.loadable_names()
    else:
        names = _names(args.algorithms, "--algorithms", empty_ok=False)
    for line in left_out:  # a third party's broken plug-in: said, not fatal
        print(f"note: {line}", file=sys.stderr)
    table = _algorithm_params(names, args.param)
    if args.plot:
        from .show import format_of
        format_of(args.plot, "--plot")  # refuse a bad suffix before the solve
        from .io import check_output
        check_output(args.plot, "--plot")
        _not_an_input(args.plot, ("instance", args.instance))
    inst = load_instance(args.instance)
    from .tasks import make_executor
    hooks: dict[str, Any] = {}
    lifeline = None
    if args.time_limit is not None and math.isfinite(args.time_limit) and args.time_limit > 0:
        # the promise holds where the algorithms or the solve do not return in time
        # (oasis_opt/lifeline.py): ``on_solve`` tells it, before the algorithms run, how to
        # make the report from what has run by then
        from .lifeline import Lifeline
        lifeline = Lifeline.for_limit(args.time_limit, _started, inst,
                                      algorithms.builtin_names(), None, "ratio").start()
        told = lifeline

        def on_solve(report_of: Callable[[Any], Any]) -> None:
            told.write = lambda s, bound, history: _ratio_output(
                args, inst, report_of(_stopped(args, s, bound, history)[1]))
        hooks = {"on_progress": lifeline.on_progress, "on_schedule": lifeline.on_schedule,
                 "on_solve": on_solve}
    with make_executor(args.workers, args.dask) as ex:
        try:
            report = compare(inst, table, time_limit=args.time_limit, modeler=args.modeler,
                             solver=args.solver, opt_cache=args.opt_cache,
                             method=args.method, executor=ex,
                             default_set=args.algorithms is None, **hooks)
        finally:  # returned or failed: the lifeline writes nothing
            if lifeline is not None:
                lifeline.close()
    _ratio_output(args, inst, report)
    return 0


def _ratio_output(args: argparse.Namespace, inst: Any, report: Any) -> None:
    """``ratio``'s figure and report (the solve's answer or the lifeline's)."""
    data = {**report.to_dict(), "solver": args.solver}
    if args.plot:
        from .show import ratio_figure, save_figure
        save_figure(ratio_figure(report), args.plot, "--plot")
        data["plot"] = args.plot

    def human() -> None:
        print(report.headline())
        _table(data["rows"], report.columns, title=f"{inst.name}")
        for note in report.notes:
            print(note)
    _emit(args, data, human)
    if _json_out is not None:
        _json_out.flush()


def cmd_experiment(args: argparse.Namespace) -> int:
    from .experiments import EXPERIMENTS, run_experiment
    from .tasks import make_executor
    if args.name not in EXPERIMENTS:  # before a pool or a Dask cluster starts
        raise InputError("name", f"unknown experiment {args.name!r}; choose from "
                                 f"{', '.join(EXPERIMENTS)}")
    with make_executor(args.workers, args.dask) as ex:
        result = run_experiment(args.name, seeds=args.seeds, out=args.out, quick=args.quick,
                                progress=_progress_wanted(args), executor=ex,
                                algorithms=args.algorithm, scale=args.scale,
                                time_limit=args.time_limit, method=args.method)
    _emit(args, result, lambda: print(
        f"{args.name}: {result['rows']} rows in {result['csv']} "
        f"({result['new_rows']} new); figure {result['figure']}"))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from .grid import run_sweep_cli
    result = run_sweep_cli(args.config, workers=args.workers, dask=args.dask, out=args.out,
                           progress=_progress_wanted(args), opt_cache=args.opt_cache)
    _emit(args, result, lambda: print(
        f"sweep: {result['done']} rows ({result['new']} new) -> {result['csv']}"))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .io import check_file_beside, check_output, in_file, load_instance, load_schedule
    from .show import format_of, show
    from .validate import check_names
    format_of(args.output)  # a bad suffix is refused before anything is read
    check_output(args.output)
    _not_an_input(args.output, ("instance", args.instance), ("schedule", args.schedule))
    with in_file(args.instance, fields=True):
        inst = load_instance(args.instance)
    check_file_beside(args.schedule, "schedule", inst)
    with in_file(args.schedule, fields=True):
        sched = load_schedule(args.schedule)
        check_names(inst, sched)  # unknown jobs and servers are the schedule's
    data = show(inst, sched, args.output)
    if not data["feasible"]:  # drawn anyway: show is for looking, validate for judging
        print(f"warning: the schedule breaks {len(data['violations'])} rule(s) of the model "
              f"(first: {data['violations'][0]}); drawn as it is", file=sys.stderr)
    _emit(args, data, lambda: print(
        f"wrote {data['output']}: {sched.algorithm} on {inst.name}, {data['completed']} of "
        f"{inst.num_jobs} jobs completed, utility {data['total_utility']:.6g}"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .export import export, format_of
    from .io import check_output, load_instance
    format_of(args.output)  # a bad suffix is refused before anything is read or built
    check_output(args.output)
    _not_an_input(args.output, ("instance", args.instance))
    inst = load_instance(args.instance)
    data = export(inst, args.output)
    _emit(args, data, lambda: print(
        f"wrote {data['output']}: the compact MILP of {inst.name} ({data['variables']} "
        f"variables, {data['constraints']} constraints, {data['format']})"))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from .io import check_output, save_instance
    from .traces import Policy, import_trace
    check_output(args.output)
    _not_an_input(args.output, ("trace", args.trace), ("throughputs file", args.throughputs),
                  ("cluster spec", args.cluster_spec), ("node list", args.nodes))
    policy = Policy(jobs=args.jobs, start=args.start, slot_seconds=args.slot_seconds,
                    horizon=args.horizon, elastic=args.elastic, efficiency=args.efficiency,
                    utility=args.utility, slack=args.slack, urgency=args.urgency,
                    value=args.value, load=args.load, servers=args.servers,
                    skip_bad=args.skip_bad, name=args.name)
    phases = tuple(p.strip() for p in args.phases.split(",")) if args.phases else None
    result = import_trace(args.format, args.trace, policy, cluster=args.cluster,
                          gpus_per_server=args.gpus_per_server, throughputs=args.throughputs,
                          gpu_type=args.gpu_type, cluster_spec=args.cluster_spec,
                          apps=args.apps, nodes=args.nodes, phases=phases)
    # and the files the importer found itself, beside the trace
    read = result.instance.extra["trace"]
    _not_an_input(args.output, ("throughputs file", read.get("throughputs")),
                  ("cluster spec", read.get("cluster_spec")), ("node list", read.get("nodes")))
    save_instance(result.instance, args.output)
    data = {"output": args.output, "name": result.instance.name, **result.report()}
    _emit(args, data, lambda: print(
        f"wrote {args.output}: {result.instance.describe()}; slot {result.slot_seconds:g} s, "
        f"{result.skipped} bad rows skipped"
        f"{f' (first: {result.first_skipped})' if result.first_skipped else ''}, "
        f"{result.filtered} filtered, "
        f"{result.unfinishable} jobs cannot finish within the horizon"))
    return 0


#: ``adversary``'s options of one mode only (argparse dests): the other mode refuses them
#: rather than run without them
SEARCH_ONLY = ("algorithm", "param", "jobs", "horizon", "worker_servers", "ps_servers",
               "max_share", "evaluations", "budget", "seed", "time_limit", "certified",
               "seed_family", "workers", "dask", "trajectory")
FAMILY_ONLY = ("share", "steps")


def _refuse_given(args: argparse.Namespace, dests: Sequence[str], why: str) -> None:
    """An option of ``dests`` given (not at its default) is refused by its flag: ``why``."""
    parser = COMMAND_PARSERS[args.command]
    for action in parser._actions:
        if action.dest in dests and getattr(args, action.dest) != action.default:
            raise InputError(action.option_strings[0], why)


def cmd_adversary(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .adversary_search import SearchSpace, search
    from .io import check_output
    from .tasks import make_executor
    family = args.family is not None
    _refuse_given(args, SEARCH_ONLY if family else FAMILY_ONLY,
                  "applies to a search, not to --family" if family else
                  "applies to --family, not to a search")
    if family:
        return cmd_adversary_family(args)
    if args.algorithm is None:
        raise InputError("--algorithm", "required (or --family NAME)")
    if args.evaluations == 0:
        raise InputError("--evaluations", "must be at least 1, got 0")
    from . import algorithms
    # refused by the flag's name (it was "params.KEY")
    params = algorithms.param_values(args.algorithm, _params(args.param), place="--param")
    out = check_output(args.output)
    prefix = Path(args.trajectory) if args.trajectory else out.with_suffix(".trajectory")
    for suffix in (".csv", ".png"):
        path = check_output(f"{prefix}{suffix}", "--trajectory" if args.trajectory else None)
        if path.resolve() == out.resolve():  # written after the instance: it would replace it
            raise InputError("--trajectory", f"{str(path)!r} is the -o file; choose another "
                                             "prefix")
    space = SearchSpace(jobs=args.jobs, horizon=args.horizon,
                        worker_servers=args.worker_servers, ps_servers=args.ps_servers,
                        max_share=args.max_share)
    space.check(args.certified)
    failed = out.with_name(f"{out.stem}-failed.json")
    watch = resort = None
    if args.budget is not None:
        # the candidates run a user's scheduler in this process, and nothing can stop one
        # that never returns: by the budget's promise the command answers from the
        # evaluations done (``lifeline.LastResort``)
        from .adversary_search import SearchWatch
        from .lifeline import LastResort
        watch = SearchWatch(args.algorithm)
        seen = watch
        resort = LastResort.for_budget(
            args.budget, _started,
            lambda: _adversary_late(args, seen, out, prefix, failed), "adversary").start()
    try:
        with make_executor(args.workers, args.dask) as ex, _keep_failed(failed):
            res = search(args.algorithm, space=space, evaluations=args.evaluations,
                         budget=args.budget, seed=args.seed, executor=ex,
                         progress=_progress_wanted(args), time_limit=args.time_limit,
                         params=params, certified=args.certified,
                         seed_family=args.seed_family, watch=watch)
    finally:  # returned or failed: the last resort answers nothing
        if resort is not None:
            resort.close()
    _adversary_output(args, res, out, prefix)
    return 0


def _adversary_late(args: argparse.Namespace, watch: Any, out: Any, prefix: Any,
                    failed: Any) -> int:
    """``adversary --budget``'s answer where the search has not returned by the promise:
    the result of the evaluations done, with a note naming what still ran (exit 0); none
    done, one line saying so and the instance it ran on kept in ``failed`` (exit 1)."""
    res = watch.snapshot()
    if res is None or res.evaluations == 0:
        kept = ""
        if watch.instance is not None:
            from .io import instance_from_dict, save_instance
            with contextlib.suppress(OSError, InputError):
                save_instance(instance_from_dict(watch.instance), failed)
                kept = f"; the instance it ran on is in {str(failed)!r}"
        kind = {"algorithm": "algorithm error", "solve": "solver error"}.get(watch.doing,
                                                                               "error")
        from .errors import MAX_MESSAGE, elide
        text = f"nothing was evaluated within --budget {args.budget:g}: {watch.running}{kept}"
        print(f"oasis-opt adversary: {kind}: {one_line(elide(text, MAX_MESSAGE))}",
              file=sys.stderr)
        return 1
    _adversary_output(args, res, out, prefix, f"the budget ended while {watch.running}: the "
                                              f"answer is that of the {res.evaluations} "
                                              "evaluations done")
    if _json_out is not None:
        _json_out.flush()
    sys.stdout.flush()
    return 0


def _adversary_output(args: argparse.Namespace, res: Any, out: Any, prefix: Any,
                      late: str | None = None) -> None:
    """``adversary``'s files and report (the search's answer or the last resort's, whose
    note ``late`` says what still ran)."""
    from .adversary_search import describe, trajectory_csv, trajectory_figure
    from .io import instance_from_dict, save_instance, write_text_atomic
    data = res.summary()
    notes = [] if late is None else [late]
    if res.instance is not None:
        save_instance(instance_from_dict(res.instance), out)
        data.update(output=str(out), **describe(res.instance))
    else:
        notes.insert(0, "no candidate had a finite ratio (OPT and ALG both > 0)")
        data.update(output=None)
    if notes:
        data.update(note="; ".join(notes))
    write_text_atomic(f"{prefix}.csv", trajectory_csv(res))
    trajectory_figure(res, f"{prefix}.png")
    data.update(trajectory_csv=f"{prefix}.csv", trajectory_png=f"{prefix}.png")

    def human() -> None:
        if res.ratio is None:
            print(f"adversary {args.algorithm}: {data['note']} in {res.evaluations} evaluations")
            return
        print(f"adversary {args.algorithm}: OPT/ALG = {res.ratio:.6g} (OPT {res.opt:.6g}, "
              f"ALG {res.alg:.6g}) after {res.evaluations} evaluations; random sampling "
              f"with as many: {_cell(res.random_ratio)}; OASiS's 2α on it "
              f"{data['two_alpha']:.4g}; wrote {out}")
        if res.certified:
            print(f"  scored by a certified lower bound on OPT: the worst case is at least "
                  f"{res.ratio:.6g}; the solver's bound/ALG on it {_cell(res.upper_ratio)}")
        zeros = res.counts["search"].get("alg_zero", 0)
        if zeros:
            print(f"  ALG = 0 < OPT (ratio unbounded) on {zeros} search candidates "
                  "(not scored)")
        if late is not None:
            print(f"  note: {late}")
    _emit(args, data, human)


@contextlib.contextmanager
def _keep_failed(path: Any) -> Any:
    """Where the algorithm fails on an instance the command made (a search's candidate, a
    space's member), that instance is written to ``path`` and the message says so: "failed
    on adversary" left nothing to run again."""
    try:
        yield
    except AlgorithmError as err:
        if err.instance is None:
            raise
        from .io import save_instance
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            save_instance(err.instance, path)
        except OSError:
            raise err from None
        raise AlgorithmError(f"{err}; the instance it failed on is in {str(path)!r}") from err


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import run_bench
    params = _algorithm_params(args.algorithm, args.param, "added with -a") \
        if args.param else {}
    result = run_bench(quick=args.quick, progress=_progress_wanted(args), algorithms=args.algorithm,
                       opt_cache=args.opt_cache, params=params)
    _emit(args, result, lambda: _table(result["rows"], result["columns"],
                                       title=f"oasis-opt bench ({result['machine']})"))
    return 0


# --- verify (issue 20): the parser and the command in one block --------------------------


def add_verify_parser(cmd: Callable[[str, str], argparse.ArgumentParser]) -> None:
    v = cmd("verify", "the exact maximum of OPT/ALG over every instance of a finite space "
                      "(oasis-space/1), each OPT proven")
    v.add_argument("space", metavar="SPACE", help="space file (oasis-space/1)")
    from .algorithms import describe
    v.add_argument("--algorithm", "-a", required=True, metavar="NAME",
                   help="the algorithm to verify: " + describe())
    v.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="an algorithm parameter (VALUE is JSON; repeatable)")
    v.add_argument("--max-instances", type=_nonneg_int("--max-instances", 1), default=None,
                   metavar="N", help="refuse a space of more than N instances before anything "
                                     "runs (default 1000000)")
    v.add_argument("--max-share", type=_positive("--max-share"), default=None, metavar="S",
                   help="check OPT/ALG <= 2α on the instances where no job can hold more than "
                        "S (0-1] of a server resource (default: every instance)")
    v.add_argument("--time-limit", type=seconds_type("--time-limit"), default=60.0, metavar="S",
                   help="MILP seconds per instance where the exact DP does not apply; an "
                        "unproven one is counted as unsolved (default 60)")
    v.add_argument("--workers", type=_nonneg_int("--workers"), metavar="N", default=0,
                   help="local worker processes (default 0: in-process)")
    v.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="tcp://HOST:PORT of a Dask scheduler, or 'local' for a local cluster")
    v.add_argument("-o", "--output", metavar="DIR", default=None,
                   help="output folder (default results/verify/SPACE-ALGORITHM); a rerun with "
                        "the same folder resumes")


def cmd_verify(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import algorithms
    from .tasks import make_executor
    from .verifier import (
        DEFAULT_MAX_INSTANCES,
        OUTPUTS,
        check_size,
        load_space,
        verify,
        write_outputs,
    )
    limit = DEFAULT_MAX_INSTANCES if args.max_instances is None else args.max_instances
    params = _params(args.param)
    space = load_space(args.space)
    algorithms.check(args.algorithm)
    params = algorithms.param_values(args.algorithm, params, place="--param")  # not params.KEY
    check_size(space, limit)  # before any folder, process or file exists
    # one folder whatever the space's name holds: a "/" would lead out of results/verify
    default = f"{space.name}-{args.algorithm}".replace("/", "_").replace("\0", "_")
    out = Path(args.output or f"results/verify/{default}")
    for name in ("instances.csv", *OUTPUTS.values()):  # the space file in its own -o folder
        _not_an_input(str(out / name), ("space", args.space))
    with make_executor(args.workers, args.dask) as ex, _keep_failed(out / "failed.json"):
        res = verify(space, args.algorithm, out=out, params=params, max_instances=limit,
                     max_share=args.max_share, executor=ex, progress=_progress_wanted(args),
                     time_limit=args.time_limit)
    files = write_outputs(res, out)
    data = {**res.summary(), "files": files}

    def human() -> None:
        c = res.counts
        print(f"verify {args.algorithm} over {space.name}: {space.size} instances "
              f"({res.evaluated} evaluated now), {c.get('ok', 0)} with a finite ratio, "
              f"ALG = 0 < OPT on {c.get('alg_zero', 0)}, OPT = 0 on {c.get('opt_zero', 0)}"
              + (f", UNSOLVED {c['unsolved']}" if c.get("unsolved") else ""))
        if res.max_ratio is None:
            print("  no instance has a finite ratio")
        else:
            print(f"  max OPT/ALG = {res.max_ratio:.6g} (OPT {res.argmax_opt:.6g}, ALG "
                  f"{res.argmax_alg:.6g}) at instance {res.argmax}, written to "
                  f"{files['argmax']}" + ("" if data["exact"] else " (not exact: some OPT "
                                                                    "unproven)"))
        print(f"  OPT by {', '.join(f'{k} {v}' for k, v in sorted(res.opt_methods.items()))}; "
              f"reductions: {'; '.join(data['reductions'])}")
        b = res.bound_check
        if b is not None:
            where = (f"with job share <= {b['max_share']}" if b["max_share"] is not None
                     else "")
            print(f"  OPT <= 2α·ALG on {b['held']} of {b['instances']} instances {where}"
                  f"; worst OPT/(2α·ALG) {_cell(b['worst_ratio_over_2alpha'])}")
        print(f"  wrote {files['distribution_csv']}, {files['histogram_png']}, "
              f"{files['summary']} in {res.seconds:.1f} s")
    _emit(args, data, human)
    return 0


def add_family_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--family", default=None, metavar="NAME", choices=["threshold"],
                   help="instead of a search: a structured family in the theorem's regime with "
                        "OPT in closed form (threshold); -o is then a folder")
    a.add_argument("--share", type=_positive("--share"), action="append", default=None,
                   metavar="S", help="with --family: the share of a server one job holds "
                                     "(repeatable; default 0.1 0.05 0.02 0.01)")
    a.add_argument("--steps", type=_nonneg_int("--steps", 2), default=None, metavar="K",
                   help="with --family: blocks of rising value (default 12)")
    a.add_argument("--certified", action="store_true",
                   help="score candidates by a certified lower bound on OPT (the best schedule "
                        "found within --time-limit) instead of a proven OPT: up to 80 jobs")
    a.add_argument("--seed-family", default=None, metavar="NAME", choices=["threshold"],
                   help="start the search from members of this family (threshold)")


def cmd_adversary_family(args: argparse.Namespace) -> int:

    from .io import (
        check_output,
        ensure_folder,
        instance_from_dict,
        save_instance,
        write_text_atomic,
    )
    from .tightness import (
        DEFAULT_SHARES,
        DEFAULT_STEPS,
        check,
        figure,
        rows_csv,
        threshold_instance,
        tightness,
    )
    shares = args.share or list(DEFAULT_SHARES)
    steps = DEFAULT_STEPS if args.steps is None else args.steps
    # every bad value refused before anything runs
    capacities = [check(args.family, s, steps) for s in shares]
    out = ensure_folder(args.output, "-o")
    instances = [out / f"{args.family}-c{c}-k{steps}.json" for c in capacities]
    for path in (out / "tightness.csv", out / "tightness.png", *instances):
        check_output(path)  # each of them, before the first is written
    rows = [tightness(args.family, s, steps) for s in shares]
    write_text_atomic(out / "tightness.csv", rows_csv(rows))
    figure(rows, out / "tightness.png")
    for r, path in zip(rows, instances, strict=True):  # the prefixes are the instances
        save_instance(instance_from_dict(threshold_instance(r.share, steps)), path)
    data = {"family": args.family, "steps": steps,
            "rows": [{k: v for k, v in vars(r).items()} for r in rows],
            "files": {"csv": str(out / "tightness.csv"), "png": str(out / "tightness.png")}}

    def human() -> None:
        _table([{k: v for k, v in vars(r).items() if k not in ("ratios", "ratios_fixed")}
                for r in rows],
               ["share", "jobs", "worst_ratio", "alpha", "two_alpha", "online_lower_bound",
                "worst_ratio_fixed", "two_alpha_fixed"],
               title=f"{args.family} family, K = {steps}: worst OPT/OASiS over the prefixes")
        print(f"wrote {out / 'tightness.csv'}, {out / 'tightness.png'}")
    _emit(args, data, human)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "import": cmd_import,
    "generate": cmd_generate, "validate": cmd_validate, "solve": cmd_solve, "run": cmd_run,
    "ratio": cmd_ratio, "experiment": cmd_experiment, "sweep": cmd_sweep, "bench": cmd_bench,
    "export": cmd_export, "show": cmd_show, "adversary": cmd_adversary,
    "verify": cmd_verify,
}


#: command name -> its parser (for ``_as_flag``)
COMMAND_PARSERS: dict[str, argparse.ArgumentParser] = {}


def _as_flag(err: InputError, command: str, params: Sequence[Any] = ()) -> str:
    """Library errors name the parameter (``time_limit: …``); on the command line the same
    message names the option that sets it (``--time-limit: …``), or ``--param KEY`` where
    the key was given so (``params``: the command's ``--param KEY=VALUE`` texts, or
    ``ratio``'s ``(NAME, KEY=VALUE)`` pairs, named ``--param NAME KEY``): an algorithm
    refusing ``u_scale`` a search, the verifier or a comparison passed it."""
    place = err.place
    given = {p.split("=", 1)[0].strip() for p in params if isinstance(p, str)}
    if place and place in given:
        return f"--param {place}: {err.message}"
    for pair in params:  # ratio's --param NAME KEY=VALUE: compare names it algorithms.NAME.KEY
        if not isinstance(pair, str) and len(pair) == 2:
            name, key = pair[0], pair[1].split("=", 1)[0].strip()
            if place == f"algorithms.{name}.{key}":
                return f"--param {name} {key}: {err.message}"
    parser = COMMAND_PARSERS.get(command)
    if parser is None or not place or not place.replace("_", "").isalnum():
        return str(err)
    flag = "--" + place.replace("_", "-")
    if any(flag in action.option_strings for action in parser._actions):
        return f"{flag}: {err.message}"
    return str(err)


#: options where an empty value means something (``--floor ''``: no floor) or that say
#: themselves why it is refused (``--algorithms ''``: names no algorithm)
EMPTY_MEANS = frozenset({"floor", "algorithms"})
#: options that name a file or folder to write: "-" is no standard output there
OUTPUT_DESTS = frozenset({"output", "plot", "trajectory", "out", "opt_cache"})
#: the output options that name a file (or a file's prefix) unless their metavar is DIR
FILE_DESTS = frozenset({"output", "plot", "trajectory"})
#: options and arguments that name a file or folder
PATH_DESTS = OUTPUT_DESTS | {"instance", "schedule", "trace", "config", "space", "throughputs",
                             "cluster_spec", "apps", "nodes"}


def _check_text(place: str, value: Any) -> None:
    """A name from the command line that is no text: the shell passes bytes, and one that is
    not UTF-8 (``--name $'a\\xff'``) reaches Python as a lone surrogate, which no file
    written can hold for the next command to read."""
    if isinstance(value, str) and lone_surrogate(value) is not None:
        raise InputError(place, f"{value!r} is not UTF-8 text")


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse an option or argument given as ``''`` (a path, a name, a list: left out
    silently, or ``.``, the working folder) and ``-`` where a path to write goes (a file
    named ``-``), by the option's name, before anything is read or written."""
    parser = COMMAND_PARSERS.get(args.command)
    for action in parser._actions if parser is not None else ():
        value = getattr(args, action.dest, None)
        place = action.option_strings[0] if action.option_strings else \
            action.metavar or action.dest
        if action.dest not in PATH_DESTS:  # a path may be any bytes; a name is text
            for text in value if isinstance(value, list) else [value]:
                for item in text if isinstance(text, list | tuple) else [text]:
                    _check_text(place, item)
        if not isinstance(value, str) or action.dest in EMPTY_MEANS:
            continue
        if value == "":
            raise InputError(place, "an empty path names no file"
                             if action.dest in PATH_DESTS else "an empty value names nothing")
        if value == "-" and action.dest in OUTPUT_DESTS:
            raise InputError(place, "'-' is not standard output here; name a path (./- for "
                                    "one named '-')")
        if action.dest in FILE_DESTS and action.metavar != "DIR" and \
                getattr(args, "family", None) is None:  # ``adversary --family -o DIR``
            from .io import check_folder
            check_folder(value, place)  # a file's folder is not made: a typo is refused


def main(argv: Sequence[str] | None = None) -> int:
    global _started
    _started = time.perf_counter()
    with _plugin_notes():
        return _main(argv)


@contextlib.contextmanager
def _plugin_notes() -> Any:
    """A ``PluginWarning`` (an installed plug-in ignored: ``algorithms._note_ignored``, which
    says each once per process) as one ``note:`` line on stderr, not Python's warning
    format; other warnings as before."""
    import warnings

    from .errors import PluginWarning
    with warnings.catch_warnings():  # restores the filters and ``showwarning`` after
        shown = warnings.showwarning
        warnings.simplefilter("always", PluginWarning)

        def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if issubclass(category, PluginWarning):
                sys.stderr.write(f"note: {message}\n")
            else:
                shown(message, category, *args, **kwargs)
        warnings.showwarning = show
        yield


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
    except OSError as err:  # --help or --version could not write (``_Parser.print_help``)
        _quiet_stdout()
        print(f"oasis-opt: error: {_cannot_write(err)}", file=sys.stderr)
        return 2
    with _printable_streams():
        return _run(args)


class _Guarded:
    """Standard output whose failed writes (``> /dev/full``, a reader that left: ``| head``)
    are bad usage named "standard output", not an internal error of the command."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as err:
            raise _cannot_write(err) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as err:
            raise _cannot_write(err) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _cannot_write(err: OSError) -> InputError:
    from .io import os_reason
    return InputError(STDOUT, f"cannot write: {os_reason(err)}")


#: The place of an error writing standard output.
STDOUT = "standard output"


def _quiet_stdout() -> None:
    """After a failed write the process's stdout still holds what it could not write, and
    Python tries again at exit ("Exception ignored … BrokenPipeError", a second line): fd 1
    goes to /dev/null so that the last flush succeeds quietly."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if sys.__stdout__ is not None and sys.__stdout__.fileno() == 1:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)


def _run(args: argparse.Namespace) -> int:
    """The command of ``args``, its errors printed (exit status, module docstring)."""
    try:
        _check_paths(args)
        with _stdout_guard(args.json), _memory_limit(getattr(args, "max_memory", None)):
            code = COMMANDS[args.command](args)
        sys.stdout.flush()  # what the command printed reaches its reader, or fails here
        return code
    except InputError as err:
        if err.place == STDOUT:
            _quiet_stdout()
        print(f"oasis-opt {args.command}: error: "
              f"{one_line(_as_flag(err, args.command, getattr(args, 'param', None) or ()))}",
              file=sys.stderr)
        return 2
    except MemoryError:
        # An estimate let something through that did not fit after all: still bad input
        # (too large for this machine), one message, no traceback.
        print(f"oasis-opt {args.command}: error: out of memory; the input is too large for "
              f"this machine (lower --max-memory to have it refused before work starts)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from .limits import end_children
        end_children()  # (a solver another library started: PuLP's cbc)
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a solver failure or a bug: one line and exit 1, never 0
        if os.environ.get("OASIS_DEBUG"):
            raise
        kind = "solver error" if isinstance(err, SolverError) else \
            "algorithm error" if isinstance(err, AlgorithmError) else "internal error"
        # the first line that says something (a message may start with a line break)
        text = next((line.strip() for line in str(err).splitlines() if line.strip()),
                    type(err).__name__)
        from .errors import MAX_MESSAGE, elide  # clipped as InputError's messages are
        print(f"oasis-opt {args.command}: {kind}: {one_line(elide(text, MAX_MESSAGE))} (set "
              "OASIS_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 1


@contextlib.contextmanager
def _printable_streams() -> Any:
    """A path may be any bytes (a file named $'x\\xff'; Python holds it as 'x\\udcff'): where
    standard output is strict UTF-8 (``PYTHONIOENCODING=utf-8``, an en_US.UTF-8 locale)
    printing it ended the command after its work ("surrogates not allowed", exit 1). Such a
    stream shows it escaped for the command, as Python's stderr does."""
    changed = []
    saved = sys.stdout
    if sys.stdout is not None:
        sys.stdout = _Guarded(sys.stdout)
    for stream in (saved, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):  # closed, or not reconfigurable
                stream.reconfigure(errors="backslashreplace")
                changed.append(stream)
    try:
        yield
    finally:
        sys.stdout = saved
        for stream in changed:
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="strict")


@contextlib.contextmanager
def _memory_limit(size: str | None):
    """``--max-memory`` for this command (and the processes it starts), restored afterwards
    so that in-process callers of ``main`` keep their own limit."""
    from .limits import ENV, parse_size, set_max_memory
    saved = os.environ.get(ENV)
    if size is not None:
        set_max_memory(parse_size(size))
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = saved


_json_out: Any = None  # the real stdout while --json redirects everything else
_started = time.perf_counter()  # the command's start (main); the lifeline counts from it


@contextlib.contextmanager
def _stdout_guard(json_mode: bool):
    """With --json, whatever libraries print on stdout (solver banners, from Python or C) goes
    to stderr at the file-descriptor level; only ``_emit`` writes the JSON object to stdout."""
    global _json_out
    if not json_mode:
        yield
        return
    try:  # before any work: a closed stdout (``>&-``) can take no JSON object
        if sys.stdout is None:
            raise OSError
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        raise InputError("--json", "standard output is closed: nowhere to print the JSON "
                                   "object") from None
    out = os.fdopen(os.dup(saved), "w")
    _json_out = _Guarded(out)
    os.dup2(2, 1)
    old = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        try:
            sys.stdout.flush()
            _json_out.flush()  # a full device or a reader that left: InputError, after
        finally:               # the descriptors are put back
            with contextlib.suppress(OSError):
                out.close()
            _json_out = None
            sys.stdout = old
            os.dup2(saved, 1)
            os.close(saved)


if __name__ == "__main__":
    sys.exit(main())
