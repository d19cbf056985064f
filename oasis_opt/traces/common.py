"""The mapping shared by every trace importer (docs/traces.md): strict CSV reading with
``FILE:LINE`` messages, slots, workloads, elasticity, utilities, the cluster, the instance.

An importer reads its trace into :class:`TraceJob` records (seconds, GPUs, per-worker demand,
measured throughputs where the trace has them) and a :class:`ClusterSpec`; :func:`build`
turns them into an ``Instance`` with the rules below, for a :class:`Policy`:

- jobs: the usable jobs sorted by (submission time, file line), ``jobs[start : start + n]``;
- slot length ``S`` (``--slot-seconds``, default ``ceil((A + D75) / T)`` with ``A`` the arrival
  span of the slice and ``D75`` the 75th percentile of its trace durations) and horizon ``T``
  (``--horizon``, default 100); a slice of more than ``AUTO_MIN_JOBS`` jobs given neither gets
  both from :func:`auto_slots` (the smallest ladder slot ≥ the median duration whose horizon
  ``⌊(A + D75)/S⌋ + 1`` is at most ``MAX_AUTO_SLOTS``); arrival ``a_i = floor((s_i − s_0) / S)``;
- workload ``V_i = max(1, ceil(d_i · n_i / S))`` worker-slots: the trace duration ``d_i`` (or
  steps ÷ measured throughput) times the requested workers ``n_i``;
- elasticity: ``N_i = floor(e · n_i)`` (``--elastic e``), or, where the trace measured the job's
  throughput ``θ(w)`` at several worker counts, the largest measured ``w ≤ e · n_i`` whose
  per-worker throughput ``θ(w)/w`` is at least ``--efficiency`` times ``θ(n_i)/n_i``;
- utility around the job's own trace duration ``δ_i = ceil(d_i / S)`` slots with target
  ``τ_i = slack · δ_i``: ``sigmoid`` ``γ1 / (1 + exp((urgency / τ_i)·(d − τ_i)))``, ``deadline``
  ``γ1·[d ≤ ceil(τ_i)]`` or ``linear`` ``max(0, γ1 − γ1·(d − 1)/(2τ_i))``; ``γ1 = V_i``
  (``--value work``) or 1 (``--value unit``);
- no parameter servers: the traces are all-reduce or single-worker jobs, so every job gets
  ``ps_ratio = N_i`` and a zero PS demand on one zero-capacity placeholder PS server;
- servers: the fewest nodes of the trace's own shape (or picked evenly through its node list)
  whose GPUs reach ``max(W_gpu / (load · T), max_i n_i·α_i[gpu])``, with ``W_gpu =
  Σ_i min(V_i, N_i·(T − a_i))·α_i[gpu]`` the GPU-slots of work the horizon can hold; at most
  the trace's own cluster size; ``--servers`` sets the count.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, expect_integer, expect_number, expect_type, some
from ..io import (
    CELL_BYTES,
    DECIMAL,
    JOB_BYTES,
    MAX_AMOUNT,
    MIN_AMOUNT,
    SERVER_BYTES,
    check_rows_fit,
    float_text,
    read_input,
)
from ..limits import check_allocation, check_count, human, max_memory
from ..model import Instance, Job, ServerGroup
from ..utility import Deadline, Linear, Sigmoid, Utility

#: Largest file an importer reads (the traces of this field are a few MB).
MAX_TRACE_BYTES = 512 * 1024**2
#: Workloads above this many worker-slots are refused (OASiS's DP tables grow with V).
MAX_WORKLOAD = 10**7
#: The horizon when ``--horizon`` is not given (and the slice has at most AUTO_MIN_JOBS jobs).
DEFAULT_HORIZON = 100
#: Slices of more jobs than this, given neither ``--slot-seconds`` nor ``--horizon``, get both
#: from :func:`auto_slots`: with more jobs than the default has slots, 100 slots over the
#: slice's span make slots far longer than its jobs (the whole Philly trace: a day each).
AUTO_MIN_JOBS = 100
#: The slot lengths :func:`auto_slots` chooses from (seconds): round values a reader can
#: check against the trace's clock, about ×2 apart.
SLOT_LADDER = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
               43200, 86400, 172800, 604800)
#: The most slots :func:`auto_slots` gives: cluster state and every job's utility row and
#: OASiS table grow with T; 3 000 holds the whole Philly trace (109 days) at one-hour slots.
MAX_AUTO_SLOTS = 3000
#: Submission times and run times above this many seconds (32 million years) are refused:
#: sums of them (the slice's span plus its durations) must stay finite floats.
MAX_SECONDS = 1e15
UTILITIES = ("sigmoid", "deadline", "linear")
VALUES = ("work", "unit")


# --- the policy ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """The mapping parameters (the command line's options; defaults give a contended instance
    the exact engine can bound)."""

    jobs: int | None = 40  # None: every usable job from ``start`` on (``--jobs all``)
    start: int = 0
    slot_seconds: float | None = None  # None: ceil((A + D75) / T), or auto_slots
    horizon: int | None = None  # None: 100, or auto_slots for more than AUTO_MIN_JOBS jobs
    elastic: float = 2.0
    efficiency: float = 0.8
    utility: str = "sigmoid"
    slack: float = 2.0
    urgency: float = 4.0
    value: str = "work"
    load: float = 1.5
    servers: int | None = None
    skip_bad: bool = False
    name: str | None = None

    def check(self) -> None:
        """Refuse impossible parameters by name (the parameter's: the command line shows the
        option that sets it, ``cli._as_flag``); a value of the wrong kind first."""
        for place in ("jobs", "start", "horizon", "servers"):
            if getattr(self, place) is not None:
                expect_integer(place, getattr(self, place))
        for place in ("slot_seconds", "elastic", "efficiency", "slack", "urgency", "load"):
            if place != "slot_seconds" or self.slot_seconds is not None:
                expect_number(place, getattr(self, place))
        expect_type("skip_bad", self.skip_bad, bool, "True or False")
        if self.name is not None:
            expect_type("name", self.name, str, "a string")
        if self.jobs is not None and self.jobs < 1:
            raise InputError("jobs", f"must be at least 1, got {self.jobs}")
        if self.start < 0:
            raise InputError("start", f"must be at least 0, got {self.start}")
        if self.horizon is not None and self.horizon < 1:
            raise InputError("horizon", f"must be at least 1, got {self.horizon}")
        for opt, x in (("slot_seconds", self.slot_seconds), ("elastic", self.elastic),
                       ("slack", self.slack), ("load", self.load)):
            if x is not None and not (math.isfinite(x) and x > 0):
                raise InputError(opt, f"must be a positive number, got {x}")
        if self.elastic < 1:
            raise InputError("elastic", f"must be at least 1 (1 = rigid), got {self.elastic}")
        if not (math.isfinite(self.efficiency) and 0 <= self.efficiency <= 1):
            raise InputError("efficiency", f"must be in [0, 1], got {self.efficiency}")
        if not (math.isfinite(self.urgency) and self.urgency >= 0):
            raise InputError("urgency", f"must be a non-negative number, got {self.urgency}")
        if self.utility not in UTILITIES:
            raise InputError("utility", f"unknown policy {self.utility!r}; choose from "
                                          f"{', '.join(UTILITIES)}")
        if self.value not in VALUES:
            raise InputError("value", f"unknown value {self.value!r}; choose from "
                                        f"{', '.join(VALUES)}")
        if self.servers is not None and self.servers < 1:
            raise InputError("servers", f"must be at least 1, got {self.servers}")
        # Every instance holds (T,) arrays per job: refuse an absurd --horizon before reading
        # anything (the sizes that depend on the trace are checked in ``build``).
        if self.horizon is not None:
            check_allocation("horizon", 8.0 * self.horizon, f"{self.horizon} slots")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k not in ("skip_bad", "name")}


# --- what importers produce ---------------------------------------------------------------


@dataclass(frozen=True)
class TraceJob:
    """One usable job of a trace, in the trace's units.

    ``submit`` and ``duration`` in seconds (``duration``: the run time alone at ``workers``
    workers); ``demand``: what one worker holds, one value per resource of the cluster;
    ``throughput``: measured ``(w, θ(w))`` pairs, the job's speed at w workers (empty when the
    trace has none)."""

    id: str
    line: int
    submit: float
    duration: float
    workers: int
    demand: tuple[float, ...]
    throughput: tuple[tuple[int, float], ...] = ()
    model: str | None = None


@dataclass(frozen=True)
class ClusterSpec:
    """Candidate worker servers in the trace's order (``nodes``: name and capacity per
    resource), or one node shape repeated (``nodes`` holds a single entry and ``uniform``);
    ``max_nodes`` is the trace's own cluster size (None: not stated)."""

    resources: tuple[str, ...]
    nodes: tuple[tuple[str, tuple[float, ...]], ...]
    uniform: bool
    max_nodes: int | None
    source: str


@dataclass
class Reader:
    """Counts what an importer reads: rows refused as bad (with ``--skip-bad``) and rows left
    out by the mapping's filters (another cluster, a pod that never ran)."""

    path: str
    skip_bad: bool
    skipped: int = 0
    filtered: int = 0
    first_skipped: str | None = None
    notes: list[str] = field(default_factory=list)

    def bad(self, line: int, message: str, path: str | None = None) -> None:
        """A malformed row: raise ``FILE:LINE: message``, or count it with ``--skip-bad``."""
        place = f"{path or self.path}:{line}"
        if not self.skip_bad:
            raise InputError(place, message)
        self.skipped += 1
        if self.first_skipped is None:
            self.first_skipped = f"{place}: {message}"


class RowError(ValueError):
    """A field of one row is malformed; the reader adds the file and line."""


# --- CSV reading --------------------------------------------------------------------------


def read_text(path: str | Path, what: str = "trace") -> str:
    """The file as text; a missing, huge, binary or non-UTF-8 file is one ``InputError``, and
    so is one whose rows would not fit in the memory limit (``check_allocation``, from its
    lines and fields, before a row is parsed)."""
    limit = max_memory() // 2  # the bytes and their text
    most, why = (MAX_TRACE_BYTES, "the most an importer reads") if MAX_TRACE_BYTES <= limit \
        else (int(limit), f"the most the memory limit {human(max_memory())} lets read (raise "
                          "it with --max-memory)")
    data = read_input(path, what, most, why)
    check_rows_fit(str(path), data, what)
    if b"\0" in data:
        raise InputError(str(path), f"not a text file (NUL byte at offset {data.index(0)})")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"not UTF-8 text (bad byte at offset {exc.start})") from None
    if not text.strip():
        raise InputError(str(path), f"empty {what}")
    return text


def rows(text: str, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) for each row; CRLF and a missing final newline are fine. The
    line is where the row starts: a quoted field may hold line breaks, and messages name the
    line a reader finds the row by (``csv.reader.line_num`` is where it ends).

    A blank line — empty, or only whitespace (spaces, tabs) — is no row and is skipped. Any
    other line is a row even when all its fields are empty: ``""`` (how a CSV writer puts an
    empty value in a one-column file, Tiresias's ``duration`` layout) or ``,,,``, so the
    importer refuses it or counts it as bad like any other."""
    raw: list[str] = []  # the text of the record being read: csv.reader reads no further

    def lines() -> Iterator[str]:
        for line in io.StringIO(text, newline=""):
            raw.append(line)
            yield line

    reader = csv.reader(lines(), delimiter=delimiter, strict=True)
    while True:
        raw.clear()
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            end = reader.line_num
            where = f" (at line {end} of the row starting here)" if end > start else ""
            raise InputError(f"?:{start}", f"not CSV: {exc}{where}") from None
        if all(not f.strip() for f in fields) and not "".join(raw).strip():
            continue
        yield start, [f.strip() for f in fields]


def header(path: str, line: int, fields: list[str], layouts: Sequence[Sequence[str]]
           ) -> tuple[int, list[str]]:
    """Which of ``layouts`` the header row names (index), in any order, and the columns in the
    file's order; else one message: a duplicate column, or what the nearest layout misses
    and what it does not have."""
    names = [f for f in fields if not float_text(f)]
    if len(names) == len(fields):  # a header row, not data: say what is wrong with it
        seen: set[str] = set()
        for f in fields:
            if f in seen:
                raise InputError(f"{path}:{line}", f"duplicate column {f!r} in the header")
            seen.add(f)
    for k, cols in enumerate(layouts):
        if sorted(fields) == sorted(cols):
            return k, list(fields)
    want = " or ".join(",".join(c) for c in layouts)
    got = ",".join(fields)
    if len(got) > 120:
        got = got[:117] + "..."
    why = ""
    if len(names) == len(fields):
        near = max(layouts, key=lambda cols: len(set(cols) & set(fields)))
        if set(near) & set(fields):
            missing = [c for c in near if c not in fields]
            extra = [f for f in fields if f not in near]
            why = "; ".join(part for part in (
                f"missing {some(missing)}" if missing else "",
                f"unexpected {some(extra)}" if extra else "") if part)
            why = f" ({why})"
    raise InputError(f"{path}:{line}", f"missing or unexpected header{why}: expected {want} "
                                       f"(in any order), got {got!r}")


def table(path: str | Path, layouts: Sequence[Sequence[str]], reader: Reader | None = None,
          what: str = "trace") -> tuple[int, list[tuple[int, dict[str, str]]]]:
    """A headed CSV file: (layout index, [(line, {column: text})]). A row with the wrong number
    of fields is bad (``reader`` decides: refuse or count); without ``reader`` it is refused."""
    p = str(path)
    it = rows(read_text(path, what))
    try:
        first = next(it)
    except StopIteration:
        raise InputError(p, f"empty {what}") from None
    except InputError as err:
        raise InputError(p + err.place[1:], err.message) from None
    layout, cols = header(p, first[0], first[1], layouts)
    out = []
    try:
        for line, fields in it:
            if len(fields) != len(cols):
                msg = f"expected {len(cols)} columns ({','.join(cols)}), got {len(fields)}"
                if reader is None:
                    raise InputError(f"{p}:{line}", msg)
                reader.bad(line, msg, p)
                continue
            out.append((line, dict(zip(cols, fields, strict=True))))
    except InputError as err:
        if err.place.startswith("?:"):
            raise InputError(p + err.place[1:], err.message) from None
        raise
    return layout, out


def number(row: dict[str, str], col: str, *, minimum: float | None = 0.0,
           positive: bool = False, integer: bool = False) -> float:
    """A strict number: ASCII decimal, finite, not empty, ≥ ``minimum`` (> 0 with
    ``positive``); with ``integer`` an integral value (``4.0`` counts as 4)."""
    text = row[col]
    try:
        x = float(text)
    except ValueError:
        raise RowError(f"column {col}: expected a number, got {text!r}") from None
    if not math.isfinite(x):
        raise RowError(f"column {col}: expected a finite number, got {text!r}")
    if not DECIMAL.fullmatch(text):  # float() also takes '1_000', '١٢' and '１２'
        raise RowError(f"column {col}: expected a number, got {text!r}")
    if positive and not x > 0:
        raise RowError(f"column {col}: must be positive, got {text!r}")
    if minimum is not None and x < minimum:
        raise RowError(f"column {col}: must be at least {minimum:g}, got {text!r}")
    if integer:
        if not x.is_integer():
            raise RowError(f"column {col}: expected an integer, got {text!r}")
        if abs(x) > 2**53:
            raise RowError(f"column {col}: {text} is too large")
        return int(x)
    return x


ISO_SECONDS = "%Y-%m-%d %H:%M:%S"
_ISO = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
_EPOCH = datetime(1970, 1, 1)


def timestamp(row: dict[str, str], col: str, fmt: str = ISO_SECONDS) -> float:
    """Seconds since the epoch of a naive timestamp (the trace's own clock)."""
    text = row[col]
    try:
        # fromisoformat is fast but lenient; the pattern keeps it to exactly ``fmt``'s shape
        if fmt != ISO_SECONDS or not _ISO.fullmatch(text):
            when = datetime.strptime(text, fmt)
            # strptime is lenient too: any whitespace (a quoted line break) for a space,
            # unpadded numbers; exactly means the date written back is the text
            if when.strftime(fmt) != text:
                raise ValueError(text)
        else:
            when = datetime.fromisoformat(text)
        return (when - _EPOCH).total_seconds()
    except ValueError:
        raise RowError(f"column {col}: expected a date as {fmt.replace('%', '')}, "
                       f"got {text!r}") from None


def parse_rows(reader: Reader, rows_: Sequence[tuple[int, dict[str, str]]],
               parse: Callable[[int, dict[str, str]], TraceJob | None],
               path: str | None = None,
               resources: Sequence[str] | None = None) -> list[TraceJob]:
    """Apply ``parse`` to every row; a ``RowError`` becomes ``FILE:LINE: message`` (or a skip);
    ``None`` means filtered out by the mapping. Job ids must be unique. With ``resources``
    (the cluster's, one per value of ``TraceJob.demand``), a worker's demand an instance
    cannot hold (:func:`_check_amounts`) is a bad row too: checked in every row, not only the
    slice's, and skipped with ``--skip-bad`` like any other."""
    out: list[TraceJob] = []
    ids: dict[str, int] = {}
    for line, row in rows_:
        try:
            job = parse(line, row)
        except RowError as err:
            reader.bad(line, str(err), path)
            continue
        if job is None:
            reader.filtered += 1
            continue
        # a finite column can still give an infinite run time (steps ÷ a tiny throughput)
        worst = next((f"{what} {x:g} s" for what, x in (("run time", job.duration),
                                                         ("submission time", job.submit))
                      if not (math.isfinite(x) and abs(x) <= MAX_SECONDS)), None)
        if worst is not None:
            reader.bad(line, f"{worst} is too large (limit {MAX_SECONDS:g} s)", path)
            continue
        if resources is not None:
            try:
                _check_amounts("", job.demand, resources, "a worker's")
            except InputError as err:
                reader.bad(line, err.message, path)
                continue
        if job.id in ids:
            reader.bad(line, f"duplicate job id {job.id!r} (also line {ids[job.id]})", path)
            continue
        ids[job.id] = line
        out.append(job)
    return out


def find_near(path: str | Path, name: str, levels: int = 3) -> Path | None:
    """``name`` in the trace's folder or up to ``levels`` folders above (the layout of the
    source repositories: gavel's ``simulation_throughputs.json``, adaptdl's ``apps/``)."""
    d = Path(path).resolve().parent
    for _ in range(levels + 1):
        if (d / name).exists():
            return d / name
        if d.parent == d:
            break
        d = d.parent
    return None


def sha256(path: str | Path) -> str | None:
    """The file's SHA-256; None for a pipe (``<(…)``), which the import has already read:
    opening it again would hash nothing or wait for a writer."""
    if not Path(path).is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- the mapping --------------------------------------------------------------------------


def slot_seconds(jobs: Sequence[TraceJob], horizon: int) -> float:
    """``ceil((A + D75) / T)``, at least 1: the slice's arrivals and three quarters of its
    durations fit in the horizon. Where ``D75`` is 0 (or below a rounding step) and ``A / T``
    a whole number, that puts the last arrival in slot ``⌊A/S⌋ = T``, past the horizon: ``S``
    is then the least whole number of seconds that keeps it inside (slot ``T − 1``)."""
    span = jobs[-1].submit - jobs[0].submit
    d75 = float(np.percentile([j.duration for j in jobs], 75, method="lower"))
    S = max(1, math.ceil((span + d75) / horizon - 1e-9))
    if math.floor(span / S + 1e-9) >= horizon:  # the arrival rule of ``build``
        # inside once span/S + 1e-9 < T; a million steps of one second at a span of 1e15 s
        S = max(S + 1, math.floor(span / (horizon - 1e-9)) + 1)
        while math.floor(span / S + 1e-9) >= horizon:  # float rounding at the edge
            S += 1
    return float(S)


def _span_and_tail(jobs: Sequence[TraceJob]) -> tuple[float, float, float]:
    """``(A, D50, D75)``: the arrival span and the median and 75th-percentile durations
    (lower values, so each is some job's duration)."""
    durations = [j.duration for j in jobs]
    d50, d75 = (float(x) for x in np.percentile(durations, [50, 75], method="lower"))
    return jobs[-1].submit - jobs[0].submit, d50, d75


def auto_slots(jobs: Sequence[TraceJob]) -> tuple[float, int]:
    """``(S, T)`` for a large slice (docs/traces.md, "Slot length and horizon"): ``S`` the
    smallest ``SLOT_LADDER`` value with ``S ≥ D50`` (the median job is at most one slot long
    at its requested workers, so slots resolve the typical job rather than the span) and
    ``⌊(A + D75)/S⌋ + 1 ≤ MAX_AUTO_SLOTS``; ``T = max(DEFAULT_HORIZON, ⌊(A + D75)/S⌋ + 1)``
    (every arrival, plus three quarters of the durations after the last one, fits; the
    ``+ 1`` keeps the last arrival's slot ``⌊A/S⌋`` inside the horizon). Past the ladder's end
    ``S = ⌈(A + D75)/(MAX_AUTO_SLOTS − 1)⌉``."""
    span, d50, d75 = _span_and_tail(jobs)

    def horizon(S: float) -> int:
        return math.floor((span + d75) / S + 1e-9) + 1

    S = next((float(x) for x in SLOT_LADDER if x >= d50 and horizon(x) <= MAX_AUTO_SLOTS),
             None)
    if S is None:
        S = float(max(SLOT_LADDER[-1], math.ceil((span + d75) / (MAX_AUTO_SLOTS - 1))))
    return S, max(DEFAULT_HORIZON, horizon(S))


def slots_for(jobs: Sequence[TraceJob], policy: Policy) -> tuple[float, int, bool]:
    """``(S, T, automatic)``: what the policy gives, else the defaults. A flag given always
    wins; a slice of at most ``AUTO_MIN_JOBS`` jobs keeps the 100-slot default (its ``S`` from
    :func:`slot_seconds`); a larger one given only ``S`` gets ``T = max(100, ⌊(A + D75)/S⌋ +
    1)``, given neither :func:`auto_slots` (``automatic`` True)."""
    S, T = policy.slot_seconds, policy.horizon
    large = len(jobs) > AUTO_MIN_JOBS
    if T is None and S is None and large:
        S, T = auto_slots(jobs)
        return S, T, True
    if T is None:
        if large:
            span, _, d75 = _span_and_tail(jobs)
            assert S is not None
            slots = (span + d75) / S + 1e-9  # infinite for a vanishing --slot-seconds
            check_allocation("slot_seconds", 8.0 * (slots + 1), f"{slots:.3g} slots of {S:g} s")
            T = max(DEFAULT_HORIZON, math.floor(slots) + 1)
        else:
            T = DEFAULT_HORIZON
    # the horizon is known now: the same size check Policy.check makes of a given one
    check_allocation("horizon", 8.0 * T, f"{T} slots")
    return S or slot_seconds(jobs, T), T, False


def max_workers(job: TraceJob, policy: Policy) -> int:
    """``N_i``: ``floor(e·n)``, or with measured throughputs the largest measured
    ``w ≤ e·n`` with ``θ(w)/w ≥ efficiency · θ(n)/n`` (never below n)."""
    n = job.workers
    cap = max(n, math.floor(policy.elastic * n + 1e-9))
    if not job.throughput:
        return cap
    thr = dict(job.throughput)
    base = thr.get(n)
    if base is None or base <= 0:
        return n
    best = n
    for w, t in job.throughput:
        if n < w <= cap and t > 0 and t / w >= policy.efficiency * base / n - 1e-12:
            best = max(best, w)
    return best


def utility(policy: Policy, value: float, trace_slots: int) -> Utility:
    """The utility policy around the job's own trace duration (module docstring)."""
    tau = policy.slack * trace_slots
    if policy.utility == "sigmoid":
        return Sigmoid(float(value), policy.urgency / tau, tau)
    if policy.utility == "deadline":
        return Deadline(float(value), max(1, math.ceil(tau - 1e-9)))
    return Linear(float(value), value / (2.0 * tau))


def peak_gpus(jobs: Sequence[TraceJob], gpu: int) -> float:
    """The most GPUs the jobs held at once in the trace: each holds ``n_i · α_i[gpu]`` from its
    submission for its duration (as if it had started at once)."""
    events = sorted([(j.submit, 1, j.workers * j.demand[gpu]) for j in jobs]
                    + [(j.submit + j.duration, 0, -j.workers * j.demand[gpu]) for j in jobs])
    held = peak = 0.0
    for _, _, delta in events:  # ends (0) before starts (1) at equal times
        held += delta
        peak = max(peak, held)
    return peak


def choose_servers(spec: ClusterSpec, count: int) -> tuple[ServerGroup, ...]:
    """``count`` nodes: the uniform shape repeated, or ``count`` nodes evenly spaced through
    the trace's node list (node ``floor(k · M / count)``, k = 0 … count−1), so the mix of node
    types is kept."""
    if spec.uniform:
        name, cap = spec.nodes[0]
        return (ServerGroup(name, cap, count),)
    m = len(spec.nodes)
    picked = [spec.nodes[(k * m) // count] for k in range(count)]
    return tuple(ServerGroup(n, c) for n, c in picked)


def server_count(spec: ClusterSpec, gpus: float) -> int:
    """The fewest servers (at least 1, at most the trace's cluster) whose GPUs, as
    :func:`choose_servers` picks them, add up to ``gpus``."""
    gpu = spec.resources.index("gpu")
    limit = spec.max_nodes
    if spec.uniform:
        need = gpus / spec.nodes[0][1][gpu]
        if not math.isfinite(need):  # a vanishing --load asks for unboundedly many
            if limit is None:
                raise InputError("load", f"asks for {need:g} servers; give --servers or a "
                                         "larger --load")
            return limit
        h = max(1, math.ceil(need - 1e-9))
        return h if limit is None else min(h, limit)
    for h in range(1, (limit or len(spec.nodes)) + 1):
        if sum(g.capacity[gpu] for g in choose_servers(spec, h)) >= gpus - 1e-9:
            return h
    return limit or len(spec.nodes)


@dataclass(frozen=True)
class Imported:
    """An importer's result: the instance and what the command line reports."""

    instance: Instance
    skipped: int
    filtered: int
    usable: int
    slot_seconds: float
    unfinishable: int
    peak_gpus: float = 0.0
    notes: tuple[str, ...] = ()
    first_skipped: str | None = None  # ``FILE:LINE: message`` of the first bad row skipped

    def report(self) -> dict[str, Any]:
        inst = self.instance
        return {"jobs": inst.num_jobs, "horizon": inst.horizon, "skipped": self.skipped,
                "first_skipped": self.first_skipped,
                "filtered": self.filtered, "usable": self.usable,
                "slot_seconds": self.slot_seconds, "worker_servers": len(inst.worker_names),
                "unfinishable": self.unfinishable, "peak_gpus": self.peak_gpus,
                "gpus": float(inst.worker_capacity[:, inst.resources.index("gpu")].sum())}


def _check_amounts(place: str, values: Sequence[float], resources: Sequence[str],
                   whose: str) -> None:
    """Demands and capacities as an instance file allows them (0, or in [MIN_AMOUNT,
    MAX_AMOUNT]: docs/model.md): an imported instance must load again."""
    for r, x in zip(resources, values, strict=True):
        if x != 0 and not MIN_AMOUNT <= x <= MAX_AMOUNT:
            raise InputError(place, f"{whose} {r} {x:g} is outside what an instance holds "
                                    f"(0, or {MIN_AMOUNT:g} to {MAX_AMOUNT:g})")


def build(fmt: str, trace: str | Path, reader: Reader, usable: Sequence[TraceJob],
          spec: ClusterSpec, policy: Policy, sources: dict[str, str] | None = None,
          what: str = "") -> Imported:
    """The instance for ``policy`` from the usable jobs (any order) and the cluster spec."""
    policy.check()
    trace = str(trace)
    if not usable:
        extra = f" ({reader.skipped} bad rows skipped)" if reader.skipped else ""
        raise InputError(trace, f"no usable job{what and ' ' + what}{extra}")
    ordered = sorted(usable, key=lambda j: (j.submit, j.line))
    if policy.start >= len(ordered):
        raise InputError("start", f"{policy.start} is past the {len(ordered)} usable jobs "
                                    f"of {trace}")
    jobs = ordered[policy.start:] if policy.jobs is None else \
        ordered[policy.start: policy.start + policy.jobs]
    # what loading the instance keeps per job (sparse schedules: nothing per job × slot)
    check_allocation("jobs", float(JOB_BYTES) * len(jobs), f"{len(jobs)} jobs")
    S, T, automatic = slots_for(jobs, policy)
    t0 = jobs[0].submit
    gpu = spec.resources.index("gpu")
    built: list[Job] = []
    unfinishable = 0
    total_gpu_work = 0.0
    biggest_gang = 0.0
    for j in jobs:
        slot = (j.submit - t0) / S + 1e-9  # infinite for a vanishing --slot-seconds
        if slot >= T:
            at = math.floor(slot) if slot < 1e15 else f"{slot:.3g}"
            raise InputError("horizon", f"{trace}:{j.line} arrives in slot {at}, past the "
                                          f"horizon {T}; raise --horizon or --slot-seconds, or "
                                          f"lower --jobs")
        a = math.floor(slot)
        work = j.duration * j.workers / S
        # the float itself (ceil(w) <= L iff w <= L for an integer L): a vanishing
        # --slot-seconds makes it infinite, which has no ceiling
        check_count(f"{trace}:{j.line}", work, MAX_WORKLOAD,
                    "workload (worker-slots; raise --slot-seconds)")
        V = max(1, math.ceil(work - 1e-9))
        N = max_workers(j, policy)
        # OASiS's dynamic programme holds about T × (V + N) numbers for this job; named by
        # what makes it large: the horizon, the work (--slot-seconds), or the job's own
        # workers (a gang of 10¹⁰ GPUs was blamed on --slot-seconds, which nobody gave)
        check_allocation("horizon" if T >= V + N else "slot_seconds" if V >= N else
                         f"{trace}:{j.line}", 8.0 * T * (V + N),
                         f"{trace}:{j.line}: a workload of {V} worker-slots × {T} slots"
                         if V >= N else f"a job of up to {N} workers × {T} slots")
        slots = max(1, math.ceil(j.duration / S - 1e-9))
        value = V if policy.value == "work" else 1
        if a + math.ceil(V / N) > T:
            unfinishable += 1
        # demand the horizon can hold: a job runs at most N workers from its arrival on
        total_gpu_work += min(V, N * (T - a)) * j.demand[gpu]
        biggest_gang = max(biggest_gang, j.workers * j.demand[gpu])
        _check_amounts(f"{trace}:{j.line}", j.demand, spec.resources, "a worker's")
        built.append(Job(
            id=j.id, arrival=a, workload=V, max_workers=N, ps_ratio=float(N),
            worker_demand=np.array(j.demand, dtype=float),
            ps_demand=np.zeros(len(spec.resources)),
            utility=utility(policy, value, slots), requested_workers=j.workers))
    if policy.servers is not None:
        H = policy.servers
        if spec.max_nodes is not None and H > spec.max_nodes:
            raise InputError("servers", f"{H} is more than the {spec.max_nodes} nodes of "
                                          f"{spec.source}")
    else:
        H = server_count(spec, max(total_gpu_work / (policy.load * T), biggest_gang))
    # the per-(slot, server, resource) state the algorithms keep, as loading checks it
    check_allocation("servers", H * SERVER_BYTES + T * H * len(spec.resources) * CELL_BYTES,
                     f"{H} servers × {T} slots × {len(spec.resources)} resources")
    servers = choose_servers(spec, H)
    for g in servers:
        _check_amounts(spec.source, g.capacity, spec.resources, f"node {g.name}'s")
    lines = [j.line for j in jobs]
    peak = peak_gpus(jobs, gpu)
    src = {"format": fmt, "file": trace, "file_name": os.path.basename(trace),
           "sha256": sha256(trace), **(sources or {})}
    description = (
        f"Imported from the {fmt} trace {os.path.basename(trace)}: jobs {policy.start}–"
        f"{policy.start + len(jobs) - 1} of its {len(ordered)} usable jobs{what and ' ' + what} "
        f"in submission order (file lines {min(lines)}–{max(lines)}; {reader.skipped} bad rows "
        f"skipped, {reader.filtered} rows filtered out). Slot = {S:g} s; workload = "
        f"duration × workers / slot; max_workers up to ×{policy.elastic:g} of the trace's "
        f"request{' (measured scalability)' if any(j.throughput for j in jobs) else ''}; "
        f"{policy.utility} utility around slack {policy.slack:g} × the trace duration, value "
        f"{policy.value}; {H} servers from {spec.source}; no parameter servers "
        f"(ps_ratio = max_workers, zero PS demand). Mapping: docs/traces.md.")
    name = policy.name or f"{fmt}-{Path(trace).stem}-{policy.start}-{len(jobs)}"
    extra = {
        "description": description,
        "trace": {**src, "jobs": len(jobs), "usable_jobs": len(ordered),
                  "skipped_rows": reader.skipped, "filtered_rows": reader.filtered,
                  "lines": lines, "slot_seconds": S, "first_submit_seconds": t0,
                  "peak_gpus": peak,
                  "servers_from": spec.source,
                  "mapping": {**policy.to_dict(), "horizon": T,
                              **({"auto_slots": "ladder"} if automatic else {})}},
    }
    inst = Instance(name=name, horizon=T, resources=spec.resources, worker_groups=servers,
                    ps_groups=(ServerGroup("ps", tuple(0.0 for _ in spec.resources)),),
                    jobs=tuple(built), extra=extra)
    return Imported(inst, reader.skipped, reader.filtered, len(ordered), S, unfinishable,
                    peak, tuple(reader.notes), reader.first_skipped)
