"""Reading and writing instance and schedule files (SPEC §5).

Parsing runs in two steps: a pydantic schema checks each field's type and sign, then
``_check_instance`` checks what needs more than one field (vector lengths, arrival before the
horizon, non-increasing utilities, unique names). Every failure is one ``InputError`` naming the
place, e.g. ``jobs[3].worker_demand: expected 3 values, got 2``. Writes are atomic.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import utility as U
from .errors import InputError
from .model import Allocation, Instance, Job, JobResult, Schedule, ServerGroup, Training

INSTANCE_FORMAT = "oasis-instance/1"
SCHEDULE_FORMAT = "oasis-schedule/1"

NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Pos = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
PosInt = Annotated[int, Field(ge=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SigmoidIn(_Strict):
    kind: Literal["sigmoid"]
    gamma1: NonNeg
    gamma2: NonNeg
    gamma3: Annotated[float, Field(allow_inf_nan=False)]


class _TableIn(_Strict):
    kind: Literal["table"]
    values: list[NonNeg]


class _DeadlineIn(_Strict):
    kind: Literal["deadline"]
    value: NonNeg
    deadline: PosInt


class _LinearIn(_Strict):
    kind: Literal["linear"]
    value: NonNeg
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
    model: str | None = None


class _ServerIn(_Strict):
    name: Annotated[str, Field(min_length=1)]
    capacity: list[NonNeg]
    count: PosInt | None = None


class _JobIn(_Strict):
    id: Annotated[str, Field(min_length=1)]
    arrival: Count
    workload: PosInt | None = None
    max_workers: PosInt
    ps_ratio: Pos
    worker_demand: list[NonNeg]
    ps_demand: list[NonNeg]
    requested_workers: PosInt | None = None
    utility: _UtilityIn
    training: _TrainingIn | None = None


class _InstanceIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # free-form provenance such as "description"
    format: str
    name: str
    horizon: PosInt
    resources: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    worker_servers: Annotated[list[_ServerIn], Field(min_length=1)]
    ps_servers: Annotated[list[_ServerIn], Field(min_length=1)]
    jobs: list[_JobIn]


class _AllocationIn(BaseModel):
    slot: Count
    workers: dict[str, Count] = Field(default_factory=dict)
    ps: dict[str, Count] = Field(default_factory=dict)


class _JobResultIn(BaseModel):
    id: str
    completed: bool
    completion_slot: Count | None
    utility: Annotated[float, Field(allow_inf_nan=False)]
    allocations: list[_AllocationIn]


class _ScheduleIn(BaseModel):
    format: str
    instance: str
    algorithm: str
    total_utility: Annotated[float, Field(allow_inf_nan=False)]
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
    msg = e["msg"]
    if e["type"] == "missing":
        msg = "missing field"
    elif e["type"] == "extra_forbidden":
        msg = "unknown field"
    elif e["type"] == "union_tag_invalid":
        msg = f"unknown utility kind; expected one of {', '.join(sorted(_UTILITY_KINDS))}"
    return InputError(_place(e["loc"]), msg)


def _read_json(path: str | Path, what: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg} at line {exc.lineno} "
                                    f"column {exc.colno}") from None


# --- instances ---------------------------------------------------------------------------


def instance_from_dict(data: Any) -> Instance:
    """Parse and check an instance given as a JSON-like dict."""
    if not isinstance(data, dict):
        raise InputError("", "an instance must be a JSON object")
    if data.get("format") != INSTANCE_FORMAT:
        raise InputError("format", f"expected {INSTANCE_FORMAT!r}, got {data.get('format')!r}")
    try:
        raw = _InstanceIn.model_validate(data)
    except ValidationError as err:
        raise _first_error(err) from None
    return _check_instance(raw)


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
            derived = training.workload()
            if workload is None:
                workload = derived
            elif workload != derived:
                raise InputError(f"{at}.workload", f"{workload} disagrees with training, which "
                                                   f"gives {derived}")
        if workload is None:
            raise InputError(f"{at}.workload", "missing field (give workload or training)")
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


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    def group(g: ServerGroup) -> dict[str, Any]:
        d: dict[str, Any] = {"name": g.name}
        if g.count is not None:
            d["count"] = g.count
        d["capacity"] = [_num(c) for c in g.capacity]
        return d

    def job(j: Job) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": j.id, "arrival": j.arrival, "workload": j.workload,
            "max_workers": j.max_workers, "ps_ratio": _num(j.ps_ratio),
            "worker_demand": [_num(x) for x in j.worker_demand],
            "ps_demand": [_num(x) for x in j.ps_demand],
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


def _num(x: float) -> float | int:
    """Integral floats are written as ints, so files stay as people write them."""
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def load_instance(path: str | Path) -> Instance:
    return instance_from_dict(_read_json(path, "instance"))


def save_instance(inst: Instance, path: str | Path) -> None:
    write_json_atomic(path, instance_to_dict(inst))


# --- schedules ---------------------------------------------------------------------------


def schedule_from_dict(data: Any) -> Schedule:
    """Parse a schedule; names are checked against an instance by the validator."""
    if not isinstance(data, dict):
        raise InputError("", "a schedule must be a JSON object")
    if data.get("format") != SCHEDULE_FORMAT:
        raise InputError("format", f"expected {SCHEDULE_FORMAT!r}, got {data.get('format')!r}")
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
    return {
        "format": SCHEDULE_FORMAT, "instance": s.instance, "algorithm": s.algorithm,
        "total_utility": s.total_utility,
        "jobs": [
            {"id": j.id, "completed": j.completed, "completion_slot": j.completion_slot,
             "utility": j.utility,
             "allocations": [{"slot": a.slot, "workers": dict(a.workers), "ps": dict(a.ps)}
                             for a in j.allocations]}
            for j in s.jobs
        ],
        "extras": _jsonable(dict(s.extras)),
    }


def load_schedule(path: str | Path) -> Schedule:
    return schedule_from_dict(_read_json(path, "schedule"))


def save_schedule(s: Schedule, path: str | Path) -> None:
    write_json_atomic(path, schedule_to_dict(s))


# --- plumbing ----------------------------------------------------------------------------


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


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(str(path), f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
