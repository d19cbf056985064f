"""Reading and writing instance and schedule files (SPEC §5).

Parsing runs in two steps: a pydantic schema checks each field's type and sign, then
``_check_instance`` checks what needs more than one field (vector lengths, arrival before the
horizon, non-increasing utilities, unique names). Every failure is one ``InputError`` naming the
place, e.g. ``jobs[3].worker_demand: expected 3 values, got 2``. Writes are atomic.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError
from pydantic_core import PydanticCustomError

from . import utility as U
from .errors import InputError, expect_path, keywords_checked, lone_surrogate
from .model import (
    MAX_COUNT,
    Allocation,
    Instance,
    Job,
    JobResult,
    Schedule,
    ServerGroup,
    Training,
    check_instance,
    check_schedule,
)

INSTANCE_FORMAT = "oasis-instance/1"
SCHEDULE_FORMAT = "oasis-schedule/1"

#: Range rules (SPEC §5: numbers the arithmetic can schedule at the stated tolerances).
#: Counts (servers, workers, PSs, slots, workloads) stay below ``MAX_COUNT`` (``model``'s) so
#: that sums of them over servers and slots are exact in 64-bit integers and in doubles.
#: Positive capacities and demands lie in [MIN_AMOUNT, MAX_AMOUNT]: ``floor(C/α + 1e-9)`` and
#: the validator's ``1e-9·C`` capacity tolerance need ratios and sums far from over/underflow.
MIN_AMOUNT, MAX_AMOUNT = 1e-9, 1e15
#: Utilities are summed over jobs and handed to MILP solvers, which treat costs from 1e20 up as
#: infinite: every f_i(d) is at most MAX_UTILITY.
MAX_UTILITY = 1e15
#: One PS serves at most this many workers; larger ratios mean the same as max_workers (one
#: PS for any number of workers), so nothing is lost by the limit.
MAX_PS_RATIO = 1e12
#: PSs one job may need in one slot, ``ceil(N_i/γ_i)``: ``ceil(w/γ − 1e-9)`` is exact only
#: while w/γ is small enough for doubles to resolve 1e-9 (2^20 ≈ 1e6 has a 2e-10 spacing).
MAX_PS_PER_SLOT = 10**6


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, str):
        return f"a string ({v[:20]!r})"
    if isinstance(v, (list, tuple)):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, (int, float)):
        return repr(v)
    return f"a {type(v).__name__}"  # a TOML grid's date or time: not Python's repr


def _past_double(v: float) -> str:
    """A JSON number the parser read as ±inf (``1e400``: ``Infinity`` itself is refused)."""
    return f"a {'negative ' if v < 0 else ''}number past a double's range"


def _fail(text: str) -> PydanticCustomError:
    return PydanticCustomError("value_error", text)  # no context: the text is used verbatim


def _int_rule(lo: int, hi: int = MAX_COUNT):
    """A JSON integer in [lo, hi]; an integral float (4.0) counts as 4; strings, booleans,
    null, NaN and infinities are refused (no coercion)."""
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _fail(f"expected an integer, got {_kind(v)}")
        if isinstance(v, float):
            if not math.isfinite(v) or not v.is_integer():
                raise _fail("expected an integer, got " + (
                    repr(v) if math.isnan(v) or math.isfinite(v) else _past_double(v)))
            v = int(v)
        if v < lo:
            raise _fail(f"must be at least {lo}, got {_short(v)}")
        if v > hi:
            raise _fail(f"{_short(v)} is too large (limit {hi:.6g})")
        return v
    return BeforeValidator(check)


def _short(v: int | float) -> str:
    if abs(v) < 1e15:
        return str(v)
    if isinstance(v, float) or abs(v) < 10**308:
        return f"{float(v):.6g}"
    # an integer past a double (10**400): float() would overflow; JSON's are < 4 300 digits
    text, frac = str(abs(v)), str(abs(v))[1:6].rstrip("0")
    return f"{'-' if v < 0 else ''}{text[0]}{'.' + frac if frac else ''}e+{len(text) - 1}"


def _num_rule(lo: float | None = 0.0, hi: float = math.inf, positive: bool = False,
              tiny: float = 0.0):
    """A finite JSON number in [lo, hi] (> 0 with ``positive``; a positive value below
    ``tiny`` is refused as too small); no strings, booleans or null."""
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _fail(f"expected a number, got {_kind(v)}")
        try:
            x = float(v)
        except OverflowError:
            raise _fail("expected a finite number, got a huge integer") from None
        if not math.isfinite(x):
            raise _fail("expected a finite number, got " + (
                repr(v) if math.isnan(x) else _past_double(x)))
        if positive and not x > 0:
            raise _fail(f"must be positive, got {x:g}")
        if lo is not None and x < lo:
            raise _fail(f"must be at least {lo:g}, got {x:g}")
        if x > hi:
            raise _fail(f"{x:g} is too large (limit {hi:g})")
        if 0 < x < tiny:
            raise _fail(f"{x:g} is too small: positive values must be at least {tiny:g} (or 0)")
        return x
    return BeforeValidator(check)


Amount = Annotated[float, _num_rule(0.0, MAX_AMOUNT, tiny=MIN_AMOUNT)]  # capacity, demand
UtilityValue = Annotated[float, _num_rule(0.0, MAX_UTILITY)]
NonNeg = Annotated[float, _num_rule(0.0)]
Pos = Annotated[float, _num_rule(positive=True)]
Real = Annotated[float, _num_rule(None)]
Count = Annotated[int, _int_rule(0)]
PosInt = Annotated[int, _int_rule(1)]
Text = Annotated[str, Strict()]
Name = Annotated[str, Strict(), Field(min_length=1)]
Flag = Annotated[bool, Strict()]
#: Reported utilities in a schedule may be anything finite (the validator recomputes them).
Reported = Real


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SigmoidIn(_Strict):
    kind: Literal["sigmoid"]
    gamma1: UtilityValue
    gamma2: NonNeg
    gamma3: Real


class _TableIn(_Strict):
    kind: Literal["table"]
    values: list[UtilityValue]


class _DeadlineIn(_Strict):
    kind: Literal["deadline"]
    value: UtilityValue
    deadline: PosInt


class _LinearIn(_Strict):
    kind: Literal["linear"]
    value: UtilityValue
    decay: NonNeg


_UtilityIn = Annotated[_SigmoidIn | _TableIn | _DeadlineIn | _LinearIn,
                       Field(discriminator="kind")]
_UTILITY_KINDS = {"sigmoid", "table", "deadline", "linear"}


class _TrainingIn(_Strict):
    epochs: Pos
    chunks: PosInt
    minibatches_per_chunk: Pos
    minibatch_seconds: NonNeg
    gradient_gbit: NonNeg
    bandwidth_gbps: Pos
    slot_seconds: Pos
    model: Text | None = None


class _ServerIn(_Strict):
    name: Name
    capacity: list[Amount]
    count: PosInt | None = None


class _JobIn(_Strict):
    id: Name
    arrival: Count
    workload: PosInt | None = None
    max_workers: PosInt
    ps_ratio: Annotated[float, _num_rule(positive=True, hi=MAX_PS_RATIO)]
    worker_demand: list[Amount]
    ps_demand: list[Amount]
    requested_workers: PosInt | None = None
    utility: _UtilityIn
    training: _TrainingIn | None = None


class _InstanceIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # free-form provenance such as "description"
    format: Text
    name: Text
    horizon: PosInt
    resources: Annotated[list[Name], Field(min_length=1)]
    worker_servers: Annotated[list[_ServerIn], Field(min_length=1)]
    ps_servers: Annotated[list[_ServerIn], Field(min_length=1)]
    jobs: list[_JobIn]


class _AllocationIn(_Strict):
    slot: Count
    workers: dict[str, Count] = Field(default_factory=dict)
    ps: dict[str, Count] = Field(default_factory=dict)


class _JobResultIn(_Strict):
    id: Text
    completed: Flag
    completion_slot: Count | None
    utility: Reported
    allocations: list[_AllocationIn]


class _ScheduleIn(_Strict):
    format: Text
    instance: Text
    algorithm: Text
    total_utility: Reported
    jobs: list[_JobResultIn]
    extras: dict[str, Any] = Field(default_factory=dict)


# --- errors ------------------------------------------------------------------------------


def _place(loc: Sequence[Any]) -> str:
    out = ""
    prev = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif prev == "utility" and part in _UTILITY_KINDS:
            pass  # pydantic's discriminator tag, not a place in the file
        else:
            out += f".{part}" if out else str(part)
        prev = part
    return out


def _first_error(err: ValidationError) -> InputError:
    e = err.errors(include_url=False)[0]
    msg = schema_message(e)
    if e["type"] == "union_tag_not_found":
        msg = f"missing field 'kind'; expected one of {', '.join(sorted(_UTILITY_KINDS))}"
    elif e["type"] == "union_tag_invalid":
        msg = f"unknown utility kind; expected one of {', '.join(sorted(_UTILITY_KINDS))}"
    return InputError(_place(e["loc"]), msg)


def schema_message(e: Mapping[str, Any]) -> str:
    """One of pydantic's errors (``ValidationError.errors()``) in the words of every other
    message of the files' rules ("missing field", "expected a list, got null"), not
    pydantic's own ("List should have at least 1 item after validation, not 0"); the
    instance, schedule and grid files share it."""
    kind = e["type"]
    if kind == "missing":
        return "missing field"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "too_short":
        return "empty list: give at least one value"
    if kind == "string_too_short":
        return "must not be empty"
    if kind in _WRONG_TYPE:
        return f"expected {_WRONG_TYPE[kind]}, got {_kind(e.get('input'))}"
    return str(e["msg"])


#: pydantic's type errors of containers and strings, in the words of the number rules.
_WRONG_TYPE = {"dict_type": "an object", "model_type": "an object", "list_type": "a list",
               "string_type": "a string", "bool_type": "true or false",
               "model_attributes_type": "an object"}


#: Parsed JSON takes several times its text in memory (boxed numbers, dicts): a file is
#: refused when this many times its size exceeds the memory limit.
JSON_MEMORY_FACTOR = 16


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r} in one object")
        out[k] = v
    return out


def is_folder(path: str | Path) -> bool:
    """``Path.is_dir``, False where the system cannot even look: a name too long for it
    (ENAMETOOLONG) raised from the check itself, an internal error of every command."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):  # ValueError: a NUL in a name a file gave ("\u0000")
        return False


def os_reason(exc: BaseException) -> str:
    """What a failed file operation says: an ``OSError``'s ``strerror`` ("No such file or
    directory"), else the exception's text (a ``ValueError``'s "embedded null byte")."""
    return getattr(exc, "strerror", None) or str(exc)


def read_input(path: str | Path, what: str, most: int, why: str) -> bytes:
    """The bytes of an input file, at most ``most`` of them (``why``: the limit's reason, for
    the message). Not only regular files: a pipe (``<(…)``) has no size to check before, so
    the read stops one byte past ``most``; opened without blocking, a named pipe no process
    writes reads as empty instead of waiting forever. ``InputError`` naming the file."""
    from .limits import human
    path = Path(path)
    if is_folder(path):
        raise InputError(str(path), f"cannot read {what}: it is a folder")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        with os.fdopen(fd, "rb") as f:
            # in pieces: read(n) allocates n bytes up front, and ``most`` may be huge
            while chunk := f.read(1 << 20):
                total += len(chunk)
                if total > most:
                    raise InputError(str(path), f"{what} larger than {human(most)}, {why}")
                chunks.append(chunk)
    except InputError:  # the size's own message (an InputError is a ValueError)
        raise
    except (OSError, ValueError) as exc:  # ValueError: "embedded null byte"
        raise InputError(str(path), f"cannot read {what}: {os_reason(exc)}") from None
    return b"".join(chunks)


#: What holding a CSV's rows takes per line and per field (each row a dict of strings, then a
#: record: measured 1.0 GB for a million trace rows of 7 fields, 29 MB of text).
CSV_ROW_BYTES = 600
CSV_FIELD_BYTES = 60


def check_rows_fit(place: str, data: bytes, what: str) -> None:
    """Refuse (``limits.check_allocation``) a CSV whose rows would not fit in the memory
    limit, from its lines and fields, before one is parsed."""
    from .limits import check_allocation
    lines = data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    fields = lines + data.count(b",") + data.count(b"\t")
    check_allocation(place, 2.0 * len(data) + lines * CSV_ROW_BYTES + fields * CSV_FIELD_BYTES,
                     f"reading this {what} ({lines} lines, {fields} fields)")


def read_json(path: str | Path, what: str) -> Any:
    """Read a JSON file strictly: one ``InputError`` naming the file for an unreadable or
    oversized file, bad UTF-8, bad JSON, ``NaN``/``Infinity`` literals, duplicate keys, numbers
    with absurdly many digits, or nesting deeper than the parser can follow."""
    from .limits import check_allocation, human, max_memory
    path = Path(path)
    try:
        size = path.stat().st_size
    except (OSError, ValueError) as exc:  # ValueError: "embedded null byte"
        raise InputError(str(path), f"cannot read {what}: {os_reason(exc)}") from None
    check_allocation(str(path), size * JSON_MEMORY_FACTOR,
                     f"reading this {what} file ({human(size)})")
    raw = read_input(path, what, int(max_memory() // JSON_MEMORY_FACTOR),
                     f"the most the memory limit {human(max_memory())} lets parse (raise "
                     "it with --max-memory)")
    if not raw.strip():
        raise InputError(str(path), f"empty: no JSON {what} in it")
    try:
        # a byte-order mark (Windows editors write one) is not part of the document
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg} at line {exc.lineno} "
                                    f"column {exc.colno}") from None
    except RecursionError:
        raise InputError(str(path), "not valid JSON: nested too deeply") from None
    except ValueError as exc:  # NaN/Infinity, duplicate keys, integers of > 4300 digits
        digits = re.search(r"value has (\d+) digits", str(exc))
        why = f"an integer of {digits.group(1)} digits" if digits else str(exc)
        raise InputError(str(path), f"not valid JSON: {why}") from None
    if _SURROGATE.search(text):  # only then: most files have no \uD800-\uDFFF escape
        check_text(data, str(path))
    return data


#: A JSON escape of a UTF-16 surrogate: a pair of them is one character, one alone is none.
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def check_text(data: Any, file: str) -> None:
    """Refuse a string (or key) of parsed JSON holding a lone surrogate (``"\\ud800"``,
    valid JSON): Python reads it as a string that no UTF-8 file, hash or terminal can take,
    and every later use of it fails. ``InputError`` at ``FILE: PLACE`` (``jobs[2].id``)."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        x, place = stack.pop()
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) \
            else ()
        for k, v in items:
            inner = f"{place}[{k}]" if isinstance(k, int) else f"{place}.{k}" if place else k
            for piece, where in ((k, place), (v, inner)):
                bad = lone_surrogate(piece) if isinstance(piece, str) else None
                if bad is not None:
                    raise InputError(f"{file}: {where or '(top)'}",
                                     f"a lone surrogate {bad} is no character (a "
                                     "\\uD800-\\uDFFF escape must be one of a pair)")
            if isinstance(v, dict | list):
                stack.append((v, inner))


# --- instances ---------------------------------------------------------------------------


def check_format(data: dict[str, Any], fmt: str, place: str = "format") -> None:
    """Refuse a file whose format tag is not ``fmt``, or that has none ("missing field", as
    every other field says: not "got None")."""
    if "format" not in data:
        raise InputError(place, f"missing field (expected {fmt!r})")
    if data["format"] != fmt:
        raise InputError(place, f"expected {fmt!r}, got {data['format']!r}")


def parse_model(schema: type[BaseModel], data: Any, fmt: str, what: str) -> Any:
    """``data`` checked against a strict schema after its format tag: one ``InputError``
    naming the place of the first problem (``what``: e.g. "an instance")."""
    if not isinstance(data, dict):
        raise InputError("", f"{what} must be a JSON object, got {_kind(data)}")
    check_format(data, fmt)
    try:
        return schema.model_validate(data)
    except ValidationError as err:
        raise _first_error(err) from None


def instance_from_dict(data: Any) -> Instance:
    """Parse and check an instance given as a JSON-like dict."""
    return _check_instance(parse_model(_InstanceIn, data, INSTANCE_FORMAT, "an instance"))


def _check_len(place: str, vec: Sequence[float], r: int) -> None:
    if len(vec) != r:
        raise InputError(place, f"expected {r} values, got {len(vec)}")


def _groups(raw: list[_ServerIn], pool: str, r: int) -> tuple[ServerGroup, ...]:
    groups, seen = [], {}
    for g, s in enumerate(raw):
        _check_len(f"{pool}[{g}].capacity", s.capacity, r)
        group = ServerGroup(s.name, tuple(s.capacity), s.count)
        for name in group.names:
            if name in seen:
                raise InputError(f"{pool}[{g}].name",
                                 f"duplicate server name {name!r} (also in {pool}[{seen[name]}])")
            seen[name] = g
        groups.append(group)
    return tuple(groups)


def _utility(raw: Any, place: str) -> U.Utility:
    if isinstance(raw, _SigmoidIn):
        return U.Sigmoid(raw.gamma1, raw.gamma2, raw.gamma3)
    if isinstance(raw, _DeadlineIn):
        return U.Deadline(raw.value, raw.deadline)
    if isinstance(raw, _LinearIn):
        return U.Linear(raw.value, raw.decay)
    for d in range(1, len(raw.values)):
        if raw.values[d] > raw.values[d - 1]:
            raise InputError(f"{place}.values[{d}]",
                             f"{raw.values[d]:g} is greater than values[{d - 1}] = "
                             f"{raw.values[d - 1]:g}: utility must not increase with duration")
    return U.Table(tuple(raw.values))


def _check_instance(raw: _InstanceIn) -> Instance:
    r = len(raw.resources)
    seen_res: set[str] = set()
    for k, name in enumerate(raw.resources):
        if name in seen_res:
            raise InputError(f"resources[{k}]", f"duplicate resource name {name!r}")
        seen_res.add(name)
    check_instance_size(raw.horizon, len(raw.jobs), r, raw.worker_servers, raw.ps_servers)
    workers = _groups(raw.worker_servers, "worker_servers", r)
    pss = _groups(raw.ps_servers, "ps_servers", r)
    jobs, ids = [], {}
    for i, j in enumerate(raw.jobs):
        at = f"jobs[{i}]"
        if j.id in ids:
            raise InputError(f"{at}.id", f"duplicate job id {j.id!r} (also jobs[{ids[j.id]}])")
        ids[j.id] = i
        if j.arrival >= raw.horizon:
            raise InputError(f"{at}.arrival",
                             f"{j.arrival} is not before the horizon {raw.horizon}")
        _check_len(f"{at}.worker_demand", j.worker_demand, r)
        _check_len(f"{at}.ps_demand", j.ps_demand, r)
        training = Training(**j.training.model_dump()) if j.training else None
        workload = j.workload
        if training is not None:
            derived = _training_workload(training, f"{at}.training")
            if workload is None:
                workload = derived
            elif workload != derived:
                raise InputError(f"{at}.workload", f"{workload} disagrees with training, which "
                                                   f"gives {derived}")
        if workload is None:
            raise InputError(f"{at}.workload", "missing field (give workload or training)")
        quotient = j.max_workers / j.ps_ratio  # inf for a ratio near 1e-308 (ceil raised)
        most_ps = math.ceil(quotient - 1e-9) if math.isfinite(quotient) else math.inf
        if most_ps > MAX_PS_PER_SLOT:
            raise InputError(f"{at}.ps_ratio",
                             f"{j.ps_ratio:g} means {most_ps:.6g} PSs in a slot for max_workers "
                             f"{j.max_workers}; at most {MAX_PS_PER_SLOT:g} PSs per job and slot")
        requested = j.requested_workers if j.requested_workers is not None else j.max_workers
        if requested > j.max_workers:
            raise InputError(f"{at}.requested_workers",
                             f"{requested} exceeds max_workers {j.max_workers}")
        jobs.append(Job(
            id=j.id, arrival=j.arrival, workload=workload, max_workers=j.max_workers,
            ps_ratio=j.ps_ratio, worker_demand=np.array(j.worker_demand, dtype=float),
            ps_demand=np.array(j.ps_demand, dtype=float),
            utility=_utility(j.utility, f"{at}.utility"),
            requested_workers=requested, training=training,
        ))
    return Instance(raw.name, raw.horizon, tuple(raw.resources), workers, pss, tuple(jobs),
                    dict(raw.model_extra or {}))


#: Bytes per (slot, server, resource) cell that the algorithms keep (used and free capacity,
#: prices, the validator's usage), and per server for its name and index entries.
CELL_BYTES = 8 * 6
SERVER_BYTES = 400
#: Bytes per job once loaded and run: its record, demand vectors and utility and its entries
#: in the instance's per-job arrays (measured: 3.5 KB per job on the whole Philly trace), and
#: as much again for an algorithm's per-job state and schedule entry. Allocations are held
#: sparsely, so nothing per job grows with the horizon or the servers.
JOB_BYTES = 8000


def check_instance_size(horizon: int, jobs: int, resources: int, worker_servers: Sequence[Any],
                        ps_servers: Sequence[Any]) -> None:
    """Refuse an instance whose per-slot server state (T × servers × R) or per-job state
    (J × ``JOB_BYTES``) would not fit in the memory limit (``oasis_opt.limits``), naming the
    field that makes it large: the largest server ``count``, else ``horizon``; ``jobs``.

    Nothing the online algorithms, the simulator or the validator build grows as J × T or
    J × T × servers: schedules are sparse and utilities are read one job's row at a time
    (``Instance.utility_row``). The dense (J, T) ``Instance.utility_table`` checks its own size
    when a caller builds it."""
    from .limits import check_allocation
    counts = [(s.count or 1, f"{pool}[{g}].count")
              for pool, group in (("worker_servers", worker_servers), ("ps_servers", ps_servers))
              for g, s in enumerate(group)]
    servers = sum(c for c, _ in counts)
    biggest, where = max(counts)
    place = where if biggest > 1 and biggest >= horizon else "horizon"
    check_allocation(place, servers * SERVER_BYTES + horizon * servers * resources * CELL_BYTES,
                     f"{servers} servers × {horizon} slots × {resources} resources")
    check_allocation("jobs", float(JOB_BYTES) * jobs, f"{jobs} jobs")


def instance_bytes(inst: Instance) -> float:
    """What a loaded instance holds, as ``check_instance_size`` estimates it: the per-slot
    server state and ``JOB_BYTES`` a job."""
    servers = len(inst.worker_names) + len(inst.ps_names)
    return (servers * SERVER_BYTES + inst.horizon * servers * len(inst.resources) * CELL_BYTES
            + float(JOB_BYTES) * inst.num_jobs)


def check_file_beside(path: str | Path, what: str, inst: Instance) -> None:
    """Refuse (``InputError`` naming ``path``) a JSON file whose parsing (``JSON_MEMORY_FACTOR``
    times its size, as ``read_json`` counts it) would pass the memory limit beside the loaded
    instance ``inst`` (``instance_bytes``): the commands that read a schedule after its
    instance (``validate``, ``show``). An outside audit had ``validate`` of 20 000 Philly
    jobs and DRF's 22 MB schedule hold 478 MiB at ``--max-memory 360M``, the file's 357 MiB
    estimated alone (round 41). A file that cannot be read is ``read_json``'s to say."""
    from .limits import check_allocation, human
    try:
        size = Path(path).stat().st_size
    except (OSError, ValueError):
        return
    held = instance_bytes(inst)
    check_allocation(str(path), size * JSON_MEMORY_FACTOR + held,
                     f"reading this {what} file ({human(size)}) beside its instance "
                     f"({human(held)})")


#: What a schedule holds (``model.Schedule``), measured with tracemalloc (round 42): per
#: allocation (job and slot) its ``Allocation`` (104 B), two dicts of up to five servers
#: (184 B each), the slot's int and its place in the job's tuple: 512 B; per server entry of
#: an allocation, room for its dicts past five entries (at most 38 B an entry up to 10^4
#: entries) and what the algorithm and the validator hold of it while the schedule is made
#: and checked (the simulator's entries and their sorted copy, the validator's lists and
#: arrays): 160 B; per job its ``JobResult`` and tuple, and its two ``SlotCounts`` of three
#: array views while the schedule is made: 1 000 B.
ALLOCATION_BYTES = 512
ENTRY_BYTES = 160
RESULT_BYTES = 1000
#: Room for the allocator's arenas that a run's freed small objects keep: the process's RSS
#: grew by at most 1.1 times the traced peak over the runs measured in round 42 (DRF on
#: 5 000 Philly jobs: 80 MiB against 74 MiB traced), 1.5 leaves a margin.
HEAP_FACTOR = 1.5


def schedule_counts(inst: Instance) -> tuple[float, float]:
    """Upper bounds on the allocations (a job in a slot) and the server entries (a job on a
    server in a slot, workers and PSs) of any schedule of ``inst`` that the validator
    accepts and whose allocations each hold a worker (every built-in algorithm's).

    A job holds at most ``n_i = min(V_i, T - a_i)`` allocations (one worker or more in each,
    none before its arrival or after its workload is done), each on at most
    ``min(M_i, H)`` worker servers and ``min(ceil(M_i/γ_i), K)`` PS servers. In one slot the
    jobs that have arrived hold at most ``W`` allocations and worker entries, ``W`` the
    most workers the cluster holds at once (per server, the most of any job's demand that
    fit), and at most ``P`` PS entries: each bound is the smaller of the jobs' sum and the
    slots' sum."""
    t = inst.horizon
    a, v, m = (np.asarray(x, dtype=float) for x in (inst.arrival, inst.workload,
                                                    inst.max_workers))
    gamma = inst.ps_ratio
    h, k = len(inst.worker_names), len(inst.ps_names)
    n = np.minimum(v, t - a)
    # (per slot, per job in all, capacity and demand of the pool that caps a slot):
    # an entry holds one unit or more, and a job does at most V_i + M_i worker-slots
    rows = ((np.ones_like(n), n, inst.worker_capacity, inst.worker_demand),
            (np.minimum(m, h), v + m, inst.worker_capacity, inst.worker_demand),
            (np.minimum(np.ceil(m / gamma), k), (v + m) / gamma + n, inst.ps_capacity,
             inst.ps_demand))
    bounds = []
    worker_most = _most_units(inst.worker_capacity, inst.worker_demand)  # (rows 0 and 1)
    for per_slot, per_job, capacity, demand in rows:
        jobs_sum = float(np.minimum(n * per_slot, per_job).sum())
        most = worker_most if capacity is inst.worker_capacity else \
            _most_units(capacity, demand)
        if most is None:
            bounds.append(jobs_sum)
            continue
        arrived = np.cumsum(np.bincount(inst.arrival, weights=per_slot, minlength=t))[:t]
        bounds.append(min(jobs_sum, float(np.minimum(arrived, most).sum())))
    return bounds[0], bounds[1] + bounds[2]


def _most_units(capacity: np.ndarray, demand: np.ndarray) -> float | None:
    """The most units of one demand vector of ``demand`` (J, R) that servers of ``capacity``
    (S, R) hold at once, summed over servers, each server taking the vector that fits most
    often on it; None when a vector is zero (no bound) or there are too many classes
    (``online.subroutine.fit_table``)."""
    from .online.subroutine import fit_table
    table = fit_table(capacity, demand)
    return None if table is None else float(table[0].max(axis=0, initial=0.0).sum())


def schedule_bytes(inst: Instance) -> float:
    """About the most memory one online algorithm's schedule of ``inst`` takes while it is
    made, checked and held (``schedule_counts``, the per-object sizes above, ``HEAP_FACTOR``
    for the heap it leaves)."""
    return _schedule_bytes(inst.num_jobs, *schedule_counts(inst))


def _schedule_bytes(jobs: int, allocations: float, entries: float) -> float:
    """``schedule_bytes`` of ``schedule_counts``' figures."""
    return _held_bytes(jobs, allocations) + HEAP_FACTOR * ENTRY_BYTES * entries


def _held_bytes(jobs: int, allocations: float) -> float:
    """``held_schedule_bytes`` of ``schedule_counts``' figures."""
    return HEAP_FACTOR * (RESULT_BYTES * jobs + ALLOCATION_BYTES * allocations)


def held_schedule_bytes(inst: Instance) -> float:
    """About the most memory one finished schedule of ``inst`` keeps while it is held: its
    allocations and job results (``schedule_bytes`` without the server entries, which the
    algorithm and the validator hold only while it is made and checked). Measured on the
    whole Philly trace (82 247 jobs; round 45), FIFO, DRF and RRH kept 66, 317 and 75 MiB
    against 562 MiB estimated."""
    return _held_bytes(inst.num_jobs, schedule_counts(inst)[0])


def check_schedule_size(inst: Instance, schedules: int = 1,
                        algorithms: Sequence[Any] = (), *, held: int = 0) -> None:
    """Refuse (``InputError`` at ``jobs``, SPEC §5) running online algorithms on ``inst``
    when ``schedules`` of their schedules (those a command holds at once: ``ratio`` keeps
    every algorithm's) beside the loaded instance (``instance_bytes``) would pass the memory
    limit, before any of them runs; where ``algorithms`` names OASiS, its largest dynamic
    programme (``online.subroutine.largest_tables``) is counted beside them too, and ``held``
    finished schedules kept meanwhile (``held_schedule_bytes``: a solve's floor). An outside
    audit had ``run -a drf`` on 20 000 Philly jobs hold 728 MiB at ``--max-memory 200M``
    (round 41): nothing counted the schedule."""
    from .limits import check_allocation, human
    allocations, entries = schedule_counts(inst)  # (once: it reads every job)
    one = _schedule_bytes(inst.num_jobs, allocations, entries)
    what = f"a schedule of about {human(one)}" if schedules == 1 else \
        f"{schedules} schedules of about {human(one)} each"
    kept, loaded = held * _held_bytes(inst.num_jobs, allocations), instance_bytes(inst)
    beside = f"the instance ({human(loaded)})"
    if held:
        beside += f", {held} finished schedule{'s' if held > 1 else ''} ({human(kept)})"
    dp = 0.0
    if any(a in ("oasis", "oasis-adaptive") for a in algorithms):
        from .online.subroutine import largest_tables
        dp, i, slots, workers = largest_tables(inst)
        if dp > 0:
            # alone, as the subroutine would say it at the job's decision (``_check_size``)
            check_allocation(f"jobs[{i}].workload", dp,
                             f"OASiS's dynamic programme for a workload of "
                             f"{inst.jobs[i].workload} over {slots} slots with up to "
                             f"{workers} workers a slot")
            beside += f" and OASiS's dynamic programme for jobs[{i}] ({human(dp)})"
    check_allocation("jobs", schedules * one + loaded + kept + dp,
                     f"{what} ({inst.num_jobs} jobs, up to {allocations:.0f} job-slots) "
                     f"beside {beside}")


def _training_workload(training: Training, place: str) -> int:
    """``V = ceil(E·chunks·M·(τ + 2g/b)/slot_seconds)``, refused past ``MAX_COUNT``."""
    seconds = (training.epochs * training.chunks * training.minibatches_per_chunk
               * (training.minibatch_seconds
                  + 2.0 * training.gradient_gbit / training.bandwidth_gbps))
    slots = seconds / training.slot_seconds
    if not slots <= MAX_COUNT:  # also catches inf and NaN
        raise InputError(place, f"gives a workload of {slots:.6g} worker-slots, too large "
                                f"(limit {MAX_COUNT:g})")
    return training.workload()


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    def group(g: ServerGroup) -> dict[str, Any]:
        d: dict[str, Any] = {"name": g.name}
        if g.count is not None:
            d["count"] = g.count
        d["capacity"] = [plain_number(c) for c in g.capacity]
        return d

    def job(j: Job) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": j.id, "arrival": j.arrival, "workload": j.workload,
            "max_workers": j.max_workers, "ps_ratio": plain_number(j.ps_ratio),
            "worker_demand": [plain_number(x) for x in j.worker_demand],
            "ps_demand": [plain_number(x) for x in j.ps_demand],
            "requested_workers": j.requested_workers,
            "utility": j.utility.to_dict(),
        }
        if j.training is not None:
            d["training"] = {k: v for k, v in vars(j.training).items() if v is not None}
        return d

    return {
        "format": INSTANCE_FORMAT, "name": inst.name, **inst.extra, "horizon": inst.horizon,
        "resources": list(inst.resources),
        "worker_servers": [group(g) for g in inst.worker_groups],
        "ps_servers": [group(g) for g in inst.ps_groups],
        "jobs": [job(j) for j in inst.jobs],
    }


def plain_number(x: float) -> float | int:
    """An integral float below 2⁵³ as the int it stands for (``60`` for 60.0), else the float:
    files and names stay as people write them."""
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


@keywords_checked
def load_instance(path: str | Path) -> Instance:
    """Read and check an instance file (SPEC §5); ``InputError`` naming the place if bad."""
    expect_path("path", path)
    with in_file(path):
        return instance_from_dict(read_json(path, "instance"))


@contextlib.contextmanager
def in_file(path: str | Path, fields: bool = False) -> Iterator[None]:
    """Errors of the block name the file ``path``: one about the whole document (no field to
    name: not an object) by the file alone; with ``fields``, one about a field too
    (``sched.json: jobs[0].id``: for commands that read two files whose fields share names)."""
    try:
        yield
    except InputError as err:
        if not err.place:
            raise InputError(str(path), err.message) from None
        if not fields or err.place.startswith(str(path)):
            raise
        raise InputError(f"{path}: {err.place}", err.message) from None


@keywords_checked
def save_instance(inst: Instance, path: str | Path) -> None:
    """Write an instance file atomically (a reader never sees half a file)."""
    check_instance(inst)
    expect_path("path", path)
    write_json_atomic(path, instance_to_dict(inst))


# --- schedules ---------------------------------------------------------------------------


def schedule_from_dict(data: Any) -> Schedule:
    """Parse a schedule; names are checked against an instance by the validator."""
    if not isinstance(data, dict):
        raise InputError("", "a schedule must be a JSON object")
    check_format(data, SCHEDULE_FORMAT)
    try:
        raw = _ScheduleIn.model_validate(data)
    except ValidationError as err:
        raise _first_error(err) from None
    seen: dict[str, int] = {}
    jobs = []
    for n, j in enumerate(raw.jobs):
        if j.id in seen:
            raise InputError(f"jobs[{n}].id",
                             f"duplicate job id {j.id!r} (also jobs[{seen[j.id]}])")
        seen[j.id] = n
        allocs = tuple(Allocation(a.slot, dict(a.workers), dict(a.ps)) for a in j.allocations)
        jobs.append(JobResult(j.id, j.completed, j.completion_slot, j.utility, allocs))
    return Schedule(raw.instance, raw.algorithm, raw.total_utility, tuple(jobs), raw.extras)


def schedule_to_dict(s: Schedule) -> dict[str, Any]:
    return _schedule_head(s, [_job_to_dict(j) for j in s.jobs])


def _schedule_head(s: Schedule, jobs: list[Any]) -> dict[str, Any]:
    return {"format": SCHEDULE_FORMAT, "instance": s.instance, "algorithm": s.algorithm,
            "total_utility": s.total_utility, "jobs": jobs,
            "extras": _jsonable(dict(s.extras))}


def _job_to_dict(j: Any) -> dict[str, Any]:
    return {"id": j.id, "completed": j.completed, "completion_slot": j.completion_slot,
            "utility": j.utility,
            "allocations": [{"slot": a.slot, "workers": dict(a.workers), "ps": dict(a.ps)}
                            for a in j.allocations]}


#: Stands for the jobs in the text of a schedule's other fields (``schedule_text``): JSON
#: writes the NUL as ``\u0000``, and only this list's one entry sits alone on a line at its
#: depth before ``extras``.
_JOBS_MARK = "\0jobs"


def schedule_text(s: Schedule) -> Iterator[str]:
    """``dumps(schedule_to_dict(s)) + "\n"``, the file ``save_schedule`` writes, in pieces
    of one job each: the whole text, its copies (``dumps``' pass over number lists, the
    final newline, the encoding) and the dict of every allocation it is made from held
    about 180 MiB beside a 13 MB schedule of 5 000 Philly jobs (round 42). Each job is
    written alone and indented by the two levels it sits at in the file; a job's text
    holds no line break of its own (JSON escapes them), so the text is the same."""
    if not s.jobs:
        yield dumps(schedule_to_dict(s)) + "\n"
        return
    text = dumps(_schedule_head(s, [_JOBS_MARK]))
    mark = "\n  " + json.dumps(_JOBS_MARK) + "\n"
    cut = text.index(mark)  # the first: the jobs come before the extras
    yield text[:cut + 1]
    for n, j in enumerate(s.jobs):
        yield ("" if n == 0 else ",\n") + "  " + dumps(_job_to_dict(j)).replace("\n", "\n  ")
    yield text[cut + len(mark) - 1:] + "\n"


@keywords_checked
def load_schedule(path: str | Path) -> Schedule:
    """Read a schedule file (SPEC §5); check it against its instance with ``validate``."""
    expect_path("path", path)
    with in_file(path):
        return schedule_from_dict(read_json(path, "schedule"))


@keywords_checked
def save_schedule(s: Schedule, path: str | Path) -> None:
    """Write a schedule file atomically; one that ``load_schedule`` would refuse (a job id
    that is no string, a utility of NaN written as null) or that is no schedule (``jobs``
    None, ``extras`` a set) is refused naming the place, and nothing is written."""
    from .validate import check_names
    check_schedule(s)
    expect_path("path", path)
    check_names(None, s)
    for place, u in [("total_utility", s.total_utility)] + [
            (f"jobs[{n}].utility", j.utility) for n, j in enumerate(s.jobs)]:
        if not math.isfinite(u):
            raise InputError(place, f"expected a finite number, got {u!r}")
    if not isinstance(s.extras, Mapping):
        raise InputError("extras", f"expected a dict, got {type(s.extras).__name__}")
    try:
        dumps(dict(s.extras))
    except (TypeError, ValueError, RecursionError) as err:
        raise InputError("extras", f"not JSON values ({err})") from None
    with atomic_output(path) as tmp, tmp.open("w", encoding="utf-8") as f:
        for piece in schedule_text(s):
            f.write(piece)


# --- plumbing ----------------------------------------------------------------------------


#: A number as people and traces write it: ASCII decimal digits, an optional sign, point and
#: exponent. ``float()`` also takes '1_000', '١٢', '１２', ' 5 ', 'nan' and 'inf' (``int()``
#: all but the last two): a file's cell or a flag is checked against this first.
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def decimal_value(text: str) -> float:
    """``text``'s value where it is ``DECIMAL`` (finite or, past the float range, ±inf), else
    nan: one test of the number, then the caller's range check."""
    return float(text) if DECIMAL.fullmatch(text) else math.nan


def float_text(text: str) -> bool:
    """Whether ``text`` is a number as this code writes one in a CSV cell: ``DECIMAL``, or
    ``repr``'s "inf", "-inf" and "nan" (not ``float()``'s '1_0', ' 5' or '٧')."""
    return DECIMAL.fullmatch(text) is not None or text in ("inf", "-inf", "nan")


def nesting(data: Any) -> int:
    """How deeply ``data`` nests (lists and dicts; a scalar is 0), without recursion: a value
    the JSON parser read (it follows about 1000 levels) may be too deep for code that
    recurses over it (``repr``, checks of every number)."""
    most, stack = 0, [(data, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, dict | list):
            most = max(most, d)
            stack.extend((v, d + 1) for v in (x.values() if isinstance(x, dict) else x))
    return most


def _jsonable(x: Any) -> Any:
    """numpy scalars/arrays to Python; non-finite floats to null (JSON has no inf)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


_NUMBER_LIST = re.compile(r"\[\s*((?:-?[\d.eE+-]+|null)(?:,\s*(?:-?[\d.eE+-]+|null))*)\s*\]")


def dumps(data: Any) -> str:
    """Indented JSON with lists of numbers kept on one line, as people write vectors."""
    text = json.dumps(_jsonable(data), indent=1, allow_nan=False)
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(re.split(r",\s*", m.group(1))) + "]",
                            text)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file in the same folder, then rename: never half-written."""
    write_text_atomic(path, dumps(data) + "\n")


def write_text_atomic(path: str | Path, text: str, place: str | None = None) -> None:
    """``text`` to ``path`` through :func:`atomic_output`."""
    with atomic_output(path, place) as tmp:
        tmp.write_text(text, encoding="utf-8")


def check_output(path: str | Path, place: str | None = None) -> Path:
    """Refuse an output path that can never be written, before any work starts: an empty
    name, a folder, a path under a file, or a folder where no file can be made (a temporary
    file is made and removed in the nearest existing one). ``InputError(place or path, …)``;
    the write itself (:func:`atomic_output`) still reports what only writing shows (a full
    disk)."""
    path = Path(path)
    if not path.name or path.name in (".", ".."):
        raise InputError(place or str(path), f"{str(path)!r} names no file")
    if "\0" in str(path):  # a file's "\u0000": pathlib's checks say False, open() fails later
        raise _cannot_write(path, place, "a path cannot hold a NUL character")
    try:  # a name too long for the system (ENAMETOOLONG) fails the queries themselves,
        path = _through_links(path, place)  # and a NUL from a file's string ("\u0000")
        _check_output_place(path, place)
    except InputError:  # already the place's own message (an InputError is a ValueError)
        raise
    except (OSError, ValueError) as exc:
        raise _cannot_write(path, place, os_reason(exc)) from None
    return path


def check_folder(path: str | Path, place: str | None = None) -> None:
    """Refuse an output file whose folder does not exist (``InputError(place or path, "cannot
    write …: the folder '…' does not exist")``), as the shell's ``>`` does: the command
    line's ``-o FILE`` options, where a typo made a new tree of folders without a word.
    (:func:`atomic_output` makes missing folders: the package's own writers, a results
    folder's files, rely on it.) What else is wrong with the path (a file where a folder
    goes, a name the system refuses) is :func:`check_output`'s to say."""
    try:
        path = Path(path)
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        folder = target.parent
        if folder.exists():
            return
        nearest = next((p for p in folder.parents if p.exists()), None)
    except (OSError, ValueError):
        return
    if nearest is not None and nearest.is_dir():
        raise _cannot_write(path, place, f"the folder {str(folder)!r} does not exist")


def _through_links(path: Path, place: str | None) -> Path:
    """Where a symbolic link leads (made where it dangles), as the shell's ``>`` writes:
    the rename of an atomic write replaced the link itself, and a loop of links too
    ("Too many levels of symbolic links" is refused here)."""
    if not path.is_symlink():
        return path
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _cannot_write(path, place, os_reason(exc)) from None
    return Path(os.path.realpath(path))


def _check_output_place(path: Path, place: str | None) -> None:
    if path.is_dir():
        raise _cannot_write(path, place, "it is a folder")
    if path.is_socket():  # opening one for writing fails as a pipe nobody reads does
        raise _cannot_write(path, place, "it is a socket, not a file")
    for parent in path.parents:  # the nearest existing ancestor must be a writable folder
        if parent.exists():
            if not parent.is_dir():
                raise _cannot_write(path, place, f"{str(parent)!r} is a file, not a folder")
            try:  # permissions alone do not tell (root, read-only mounts, /proc): try it
                # resolved: tempfile's names drop "link/.." lexically, the system does not
                fd, probe = tempfile.mkstemp(dir=parent.resolve(), prefix=".oasis-probe-")
                os.close(fd)
                os.unlink(probe)
            except OSError as exc:
                raise _cannot_write(path, place, os_reason(exc)) from None
            break


def append_text(path: str | Path, text: str, place: str | None = None) -> None:
    """Append ``text`` to ``path`` (made with its folders when absent) in one write, flushed
    to disk before returning: the append-only results files, whose rows of one task land
    together or not at all. Every ``OSError`` is ``InputError(place or path, "cannot
    write: …")``, as :func:`atomic_output` says it."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except (OSError, ValueError) as exc:  # ValueError: "embedded null byte"
        raise _cannot_write(path, place, os_reason(exc)) from None


def _cannot_write(path: Path, place: str | None, why: str) -> InputError:
    """The place is the option when given (``--plot``: then the message names the path)."""
    if place is None:
        return InputError(str(path), f"cannot write: {why}")
    return InputError(place, f"cannot write {str(path)!r}: {why}")


@contextlib.contextmanager
def atomic_output(path: str | Path, place: str | None = None, suffix: str = ".tmp",
                  prefix: str | None = None) -> Iterator[Path]:
    """The one way files are written: the block writes the temporary path it is given (in
    ``path``'s folder, ``prefix`` + random + ``suffix``: writers that choose the format by the
    name get a name without other dots);
    when it ends without error the file is renamed onto ``path``, otherwise removed — an
    output is whole or absent. A target that exists but is not a regular file (``/dev/null``,
    a named pipe) is written in place instead: a rename would replace the device node.
    Every ``OSError`` is ``InputError(place or path, "cannot write: …")``."""
    path = check_output(path, place)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent.resolve(), suffix=suffix,
                                    prefix=f".{path.name}." if prefix is None else prefix)
        os.close(fd)
    except OSError as exc:
        raise _cannot_write(path, place, os_reason(exc)) from None
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        if path.exists() and not path.is_file():
            # non-blocking open: a named pipe no process reads fails (ENXIO), never hangs
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(fd, True)
            with tmp.open("rb") as src, os.fdopen(fd, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            os.replace(tmp, path)
    except OSError as exc:
        why = "a named pipe that no process reads" if exc.errno == errno.ENXIO else \
            os_reason(exc)
        raise _cannot_write(path, place, why) from None
    finally:
        tmp.unlink(missing_ok=True)


#: Where the repository's ``instances/`` live in an installed package (package data).
DATA_FOLDER = Path(__file__).resolve().parent / "data" / "instances"
#: The same folder in a source checkout or an editable install.
SOURCE_FOLDER = Path(__file__).resolve().parent.parent / "instances"


@keywords_checked
def shipped_folder() -> Path:
    """The folder of the shipped instances (``small-s0.json`` …, ``manifest.json``): package
    data when installed, the repository's ``instances/`` in a checkout."""
    for folder in (DATA_FOLDER, SOURCE_FOLDER):
        if (folder / "manifest.json").is_file():
            return folder
    raise FileNotFoundError("the shipped instances are not installed with this copy of "
                            f"oasis-opt (looked in {DATA_FOLDER} and {SOURCE_FOLDER})")


def ensure_folder(path: str | Path, place: str) -> Path:
    """``path`` as a folder, created if missing; ``InputError(place, …)`` when it cannot be
    (a file is there, no permission): checked before work starts, not when the first result
    is written."""
    folder = Path(path)
    try:  # the checks themselves raise for a name too long for the system
        if folder.exists() and not folder.is_dir():
            raise InputError(place, f"cannot use {str(folder)!r} as a folder: it is a file")
        folder.mkdir(parents=True, exist_ok=True)
    except InputError:  # "it is a file" (an InputError is a ValueError)
        raise
    except (OSError, ValueError) as exc:  # ValueError: a NUL from a file's string
        raise InputError(place, f"cannot use {str(folder)!r} as a folder: {os_reason(exc)}") \
            from None
    return folder


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
