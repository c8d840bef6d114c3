"""Slurm job records as JSON: `sacct --json` or slurmrestd's `/slurmdb/v0.0.XX/jobs`.

Both shapes seen in the wild are read: 22.05's openapi/dbv0.0.38 (state a string, times plain
epoch seconds) and the data_parser v0.0.39+ (state a list, times `{"set", "infinite", "number"}`).
JobID is rebuilt as sacct prints it (`12_2` for array tasks, `40+1` for het components) and
`job_id` is JobIDRaw. 22.05's JSON reports non-zero exit codes as 0 (tests/data/slurm-22.05/sacct.json:
`exit 3` shows as 0): the stats say so, and signals are kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.job_records import finish_attempts
from flows.ingest.sources.json_input import JsonRefused, load_json, nesting_depth
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sql import create_temp_table
from flows.ingest.sources.tables import STAGED_FIELDS, arrow_schema


@dataclass
class SacctJsonReadStats:
    jobs: int = 0
    attempts: int = 0
    duplicate_records: int = 0
    conflicting_attempts: int = 0  # attempts whose records disagree on outcome or times (job_records)
    conflicts: list[str] = field(default_factory=list)  # the first of them, with the file and both lines
    node_counts_from_node_list: int = 0  # NNodes 0 beside a host list: the list's size landed
    exit_codes_unreliable: bool = False  # Slurm 22.05's JSON loses non-zero exit codes


STAGED_SCHEMA = arrow_schema(STAGED_FIELDS)


class _BadField(ValueError):
    """A field of a job that cannot be read: its path in the job, its value and why."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.value, self.reason = field, value, reason


def _number(value: Any, field: str) -> int | None:
    """A count or time: plain (v0.0.38) or {"set", "infinite", "number"} (v0.0.39+); None when not
    set. Anything but a whole number is an error (a float or a string is never rounded or read)."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise _BadField(field, value, "expected a whole number")
    if value is not None and not -(2**63) <= value < 2**63:
        raise _BadField(field, value, "out of range (a 64-bit integer)")
    return value


def _time(value: Any, field: str) -> datetime | None:
    seconds = _number(value, field)
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None) if seconds else None  # 0: not (yet)
    except (OverflowError, OSError, ValueError) as exc:
        raise _BadField(field, seconds, f"not a time: {exc}") from None


def _text(value: Any, field: str) -> str:
    """A text field ('' when absent): anything but a string is an error, never turned into one."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _BadField(field, value, "expected a string")
    return value


def _gpus(tres: list[dict], field: str) -> int:
    """The GPUs of a TRES list: its untyped `gpu` entry, else the sum of the typed ones (`gpu:h100`)."""
    untyped = [t["count"] for t in tres if t.get("type") == "gres" and t.get("name") == "gpu"]
    if untyped:
        return _number(untyped[0], field) or 0
    return sum(
        _number(t["count"], field) or 0
        for t in tres
        if t.get("type") == "gres" and str(t.get("name")).startswith("gpu:")
    )


def read_sacct_json(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock,
    limits: InputLimits = DEFAULT_LIMITS,
    quarantine: Quarantine | None = None,
    stats: SacctJsonReadStats | None = None,
) -> duckdb.DuckDBPyRelation:
    """Attempts of a sacct JSON document as temp table `attempts` (see `job_records`). A job is
    located by its index in `jobs` (reported as the line). Its times are UTC epochs: `clock` only
    bounds them."""
    stats = stats if stats is not None else SacctJsonReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    document, refused = read_document(path, limits)
    try:
        jobs = document["jobs"]
    except (KeyError, TypeError) as exc:
        raise InputFormatError(path, 1, "document", path.name, f"not sacct --json output: no jobs ({exc})") from None
    meta = document.get("meta")
    slurm = meta.get("Slurm") if isinstance(meta, dict) else None
    release = slurm.get("release") if isinstance(slurm, dict) else None
    stats.exit_codes_unreliable = isinstance(release, str) and release.startswith("22.05")
    rows: list[dict] = []
    problems: list[InputFormatError] = []
    if not isinstance(jobs, list):
        raise InputFormatError(path, 1, "jobs", type(jobs).__name__, "not sacct --json output: jobs is not a list")
    for index, job in enumerate(jobs):
        stats.jobs += 1
        if index in refused:
            field, value, why = refused[index]
            problems.append(InputFormatError(path, index + 1, f"jobs[{index}]{'.' * bool(field)}{field}", value, why))
            continue
        try:
            rows.append(_attempt(job, index))
        except _BadField as exc:
            problems.append(
                InputFormatError(path, index + 1, f"jobs[{index}].{exc.field}", repr(exc.value), exc.reason)
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            job_id = str(job.get("job_id", "?")) if isinstance(job, dict) else repr(job)[:40]
            problems.append(InputFormatError(path, index + 1, f"jobs[{index}]", job_id, _why(exc)))
    try:
        staged = pa.Table.from_pylist(rows, schema=STAGED_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:  # a value of the wrong type got through
        raise InputFormatError(path, 1, "jobs", path.name, f"a job field has the wrong type: {exc}") from None
    create_temp_table(con, "attempts_staged", staged)
    return finish_attempts(con, path, clock, quarantine, stats, problems, local_times=False, limits=limits)


# A JSON string (an unterminated one runs to the end: the scan stays linear; possessive, so a long
# string is one run, not a step a character) or a structural character
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\(?:.|\Z))*+(?:"|\Z)|[\[\]{},:]', re.DOTALL)
_REFUSED = object()  # the place of a job that is not read (its reason in `refused`)


def read_document(path: Path, limits: InputLimits = DEFAULT_LIMITS) -> tuple[Any, dict[int, tuple[str, str, str]]]:
    """The JSON document of `path` read within `limits`, and its jobs that are not read (see
    `_document`: their places in `jobs` hold a marker no job field can be read from)."""
    with open_text(path) as handle:
        return _document(handle.read(), path, limits)


def _document(text: str, path: Path, limits: InputLimits) -> tuple[Any, dict[int, tuple[str, str, str]]]:
    """The JSON document, read within `limits` (json_input.load_json). When it is refused, its jobs
    are read one by one: a job nested too deep or holding a number beyond any field's is quarantined
    alone (its index: (field, value shown, reason) in the second item), never the whole month. A document
    whose refusal is not inside one job is refused whole, naming the file."""
    try:
        return load_json(text, limits), {}
    except JsonRefused as exc:
        whole = exc
    spans = _job_spans(text)
    if spans is None:
        raise InputFormatError(path, 1, "document", path.name, f"not sacct --json output: {whole}") from None
    start, end, elements = spans
    jobs: list[Any] = []
    refused: dict[int, tuple[str, str, str]] = {}
    for index, element in enumerate(elements):
        try:
            jobs.append(load_json(element, limits))
        except JsonRefused as exc:
            field, value = _refused_value(element, limits) or ("", element.strip()[:60])
            refused[index] = (field, value, str(exc))
            jobs.append(_REFUSED)
    try:
        document = load_json(text[:start] + "[]" + text[end:], limits)
    except JsonRefused as exc:
        raise InputFormatError(path, 1, "document", path.name, f"not sacct --json output: {exc}") from None
    if not isinstance(document, dict):
        raise InputFormatError(path, 1, "document", path.name, "not sacct --json output: not a JSON object")
    document["jobs"] = jobs
    return document, refused


class _Number(str):
    """A number's text, kept as written while a refused job is searched for it."""


def _refused_value(element: str, limits: InputLimits) -> tuple[str, str] | None:
    """The path in a refused job (`time.end`) and the text of its first number JSON reading refuses
    (too many digits, beyond a float, NaN or Infinity); None when that is not why (too deep)."""
    if nesting_depth(element) > limits.max_json_depth:
        return None
    try:
        job = json.loads(element, parse_int=_Number, parse_float=_Number, parse_constant=_Number)
    except ValueError:
        return None
    stack: list[tuple[str, Any]] = [("", job)]
    while stack:
        at, value = stack.pop()
        if isinstance(value, _Number):
            try:
                load_json(value, limits)
            except JsonRefused:
                return at.lstrip("."), value[:60]
        elif isinstance(value, dict):
            stack.extend((f"{at}.{key}", v) for key, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{at}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None


def _job_spans(text: str) -> tuple[int, int, list[str]] | None:
    """Where the top-level `jobs` array is (its text from `[` to `]`) and its elements' texts, found by
    one linear scan of its strings and brackets (no parse); None when there is no such array."""
    depth, key, last, start, element_start = 0, None, None, None, 0
    elements: list[str] = []
    for token in _JSON_TOKEN.finditer(text):
        value = token.group()
        if value[0] == '"':
            last = value
        elif value == ":" and depth == 1:
            key = last
        elif value in "[{":
            depth += 1
            if depth == 2 and value == "[" and key == '"jobs"' and start is None:
                start, element_start = token.start(), token.end()
        elif value in "]}":
            if start is not None and depth == 2:
                if value != "]":
                    return None
                if elements or text[element_start : token.start()].strip():
                    elements.append(text[element_start : token.start()])
                return start, token.end(), elements
            depth -= 1
        elif value == "," and start is not None and depth == 2:
            elements.append(text[element_start : token.start()])
            element_start = token.end()
    return None


def _why(exc: Exception) -> str:
    """What is wrong with a job, in words: a missing key is named as such."""
    return f"no {exc.args[0]!r} field" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"


def job_times(job: Any) -> dict | None:
    """A job's id and times (naive UTC) as the reader reads them, for counting a month's records
    (flows/ingest/month_records.py); None when they cannot be read (the landing says why)."""
    try:
        times = job["time"]
        return {
            "job_id": str(_number(job["job_id"], "job_id")),
            "submit_at": _time(times["submission"], "time.submission"),
            "start_at": _time(times.get("start"), "time.start"),
            "end_at": _time(times.get("end"), "time.end"),
        }
    except (KeyError, TypeError, AttributeError, ValueError):  # _BadField is a ValueError
        return None


def _attempt(job: dict, index: int) -> dict:
    if not isinstance(job, dict):
        raise TypeError("a job is not a JSON object")
    raw = _number(job["job_id"], "job_id")
    if raw is None:
        raise ValueError("no job_id")
    array, het = job.get("array") or {}, job.get("het") or {}
    task, offset = _number(array.get("task_id"), "array.task_id"), _number(het.get("job_offset"), "het.job_offset")
    if task is not None:
        job_id = f"{_number(array['job_id'], 'array.job_id')}_{task}"
    elif offset is not None:
        job_id = f"{_number(het['job_id'], 'het.job_id')}+{offset}"
    else:
        job_id = str(raw)
    state = job["state"]["current"]
    state = _text(state[0] if isinstance(state, list) and state else state, "state.current")
    if not state:
        raise _BadField("state.current", state, "every attempt has a state")
    exit_code = job.get("exit_code") or {}
    signal = (exit_code.get("signal") or {}).get("signal_id")
    times = job["time"]
    submit = _time(times["submission"], "time.submission")
    if submit is None:
        raise ValueError("every attempt has a submit time")
    cancelled_by = job.get("kill_request_user")
    return {
        "job_id": job_id,
        "job_id_raw": str(raw),
        "job_name": _text(job.get("name"), "name"),
        "user_name": _text(job.get("user"), "user"),
        "account": _text(job.get("account"), "account"),
        "partition": _text(job.get("partition"), "partition"),
        "qos": _text(job.get("qos"), "qos"),
        "state": state,
        "cancelled_by_uid": 0 if state == "CANCELLED" and cancelled_by == "root" else None,
        "exit_code": _number(exit_code.get("return_code"), "exit_code.return_code"),
        "exit_signal": _number(signal, "exit_code.signal.signal_id") if signal is not None else 0,
        "submit_at": submit,
        "eligible_at": _time(times.get("eligible"), "time.eligible"),
        "start_at": _time(times.get("start"), "time.start"),
        "end_at": _time(times.get("end"), "time.end"),
        "elapsed_seconds": _number(times.get("elapsed"), "time.elapsed") or 0,
        "n_nodes": _number(job.get("allocation_nodes"), "allocation_nodes"),
        "node_list": _text(job.get("nodes"), "nodes"),
        "gpus": _gpus(job.get("tres", {}).get("allocated", []), "tres.allocated"),
        "req_gpus": _gpus(job.get("tres", {}).get("requested", []), "tres.requested"),
        "reason": _text(job["state"].get("reason"), "state.reason"),
        "failed_node": _text(job.get("failed_node"), "failed_node") or None,
        "restarts": _number(job.get("restart_cnt"), "restart_cnt"),
        "sluid": _text(job.get("sluid"), "sluid") or None,
        "admin_comment": _text((job.get("comment") or {}).get("administrator"), "comment.administrator") or None,
        "source_line": index + 1,
    }


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the file starts as a JSON object."""
    with open_text(path) as handle:
        start = handle.read(4096)
    if not start.lstrip().startswith("{"):
        first_line = start.split("\n", 1)[0].rstrip("\r")
        raise InputFormatError(path, 1, "document", first_line, "not sacct --json output (no JSON object)")
