"""DCGM health checks, diagnostics and NVLink state, saved one file per run, as a job epilog does.

Layout: `<dir>/<node>/<YYYYmmddTHHMMSSZ>.<ext>` (the node from the folder, the UTC time of the
run from the file name). A `.json` file holds one or more dcgmi JSON documents (e.g. one
`dcgmi nvlink -e -g <gpu> -j` per GPU, one after the other); any other file is the text of
`dcgmi nvlink -s`. What each becomes:

- `dcgmi health -c -j`: `{"header": ["Health Monitor Report"], "body": {"Overall Health": {"value":
  ...}, "<entity group>" ("GPU", "Switch", ...): {"children": {"<id>": {"children": {"Errors":
  {"children": {"<system>": {"value": "Warning|Failure", "overflow": [message lines]}}}}}}}}}`.
  Each system that is not healthy becomes one health check.
- `dcgmi diag -r <level> -j`: `{"DCGM GPU Diagnostic": {"test_categories": [{"category": ...,
  "tests": [{"name": "GPU Memory", "results": [{"gpu_id" (or "gpu_ids"): "0", "status":
  "Pass|Fail|Warn|Skip" (any case), "warnings": [...], "info": [...]}]}]}]}}`; each failed or
  warning result becomes a check named `diag <test>` with the health report's words for its status
  (Failure, Warning), so one set of taxonomy rules reads both.
- `dcgmi nvlink -e -g <gpu> -j`: `{"header": ["NVLINK Error Counts", "GPU <id>"], "body": {"Link
  <n>" (or Blackwell's "Error Detail"): {"children": {"<counter>": {"value": "<count>"}}}}}`. The
  counters are totals since the driver loaded, so each file is compared with the node's previous
  one (the first, or a count that went down after a reset, counts whole), against DCGM's own health
  thresholds (`DCGM_LIMIT_MAX_NVLINK_ERROR`, modules/health/DcgmHealthWatch.cpp): any new replay or
  recovery error (and, on Blackwell, any other error counter) is an `NVLINK system` Failure, new
  CRC errors a Warning. The BER ratios are not counters and are not compared.
- `dcgmi nvlink -s`: the `NvLink Link Status` table; a GPU with links Down (`D`) is an `NVLINK
  system` Failure, an NvSwitch with ports Down a Warning (unused trunk ports can be down).

A file that is none of these, or that cannot be read, is quarantined naming it (and the field of a
JSON document that has an unexpected shape); the other files are read. So is an empty `.json`
capture (dcgmi wrote nothing: never a passed check), a count that is not a whole number of 0 or
more (`-5` would become the next capture's baseline), JSON beyond the bounds of `json_input`
(deep nesting, a huge integer, NaN), a file directly in the directory, and a file whose time is
outside the clock's window of valid times.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from flows.ingest.sources.clock import UTC_ZONE, LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.health_files import READ_ERRORS, invalid, unreadable
from flows.ingest.sources.json_input import JsonRefused, load_json, nesting_depth
from flows.ingest.sources.limits import DEFAULT_LIMITS, MAX_FIELD_CHARS, MAX_INTEGER_DIGITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck


@dataclass
class DcgmReadStats:
    """What became of each file (the unit read: a file lands whole or not at all): `files` =
    `healthy_files` + `files_with_incidents` + `files_quarantined` (one quarantine entry each).

    Skip count: `healthy_files`.
    """

    files: int = 0
    healthy_files: int = 0  # skip count: read whole, nothing unhealthy in it
    files_with_incidents: int = 0  # read whole, its `incidents` landed
    files_quarantined: int = 0
    incidents: int = 0  # the health checks landed


class _Box(BaseModel):
    """A node of dcgmi's output tree (DcgmiOutputBoxer): a value, overflow lines, named children.
    Strict, as every model here: dcgmi writes text, so `true` or `2.0` is no verdict nor count."""

    model_config = ConfigDict(strict=True)

    value: str | None = None
    overflow: list[str] = []
    children: dict[str, _Box] = {}


class _Output(BaseModel):
    """`dcgmi health -j` and `dcgmi nvlink -e -j` (DcgmiOutputJson)."""

    model_config = ConfigDict(strict=True)

    header: list[str] = []
    body: dict[str, _Box]


class _DiagWarning(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    warning: str = ""


class _DiagResult(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    status: str = ""
    gpu_id: str | int | None = None
    gpu_ids: str | int | list[str | int] | None = None
    warnings: list[_DiagWarning | str] = []
    info: list[str | int | float] = []


class _DiagTest(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    name: str
    results: list[_DiagResult] = []


class _DiagCategory(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    tests: list[_DiagTest]


class _Diag(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    test_categories: list[_DiagCategory] = []


_Model = TypeVar("_Model", bound=BaseModel)
# One run of dcgmi writes kilobytes (a diag of 8 GPUs, nvlink -e of every link: well under 1 MB)
MAX_CAPTURE_CHARS = 64 * MAX_FIELD_CHARS


def read_dcgm_health_dir(
    root: Path,
    tz: TimeZone = UTC_ZONE,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: DcgmReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> Iterator[HealthCheck]:
    """The health checks of every file under `root`, each file's whole or none (a file that cannot
    be read is quarantined); files in path order, so a node's nvlink -e counts in time order."""
    stats = stats if stats is not None else DcgmReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    counters: dict[tuple, int] = {}  # (node, GPU, link, counter) -> the node's last nvlink -e count
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stats.files += 1
        try:
            found = list(_read_one(root, path, counters, clock, limits))
        except InputFormatError as error:
            stats.files_quarantined += 1
            quarantine.reject(error)
            continue
        stats.incidents += len(found)
        stats.healthy_files += not found
        stats.files_with_incidents += bool(found)
        yield from found


def _read_one(
    root: Path, path: Path, counters: dict[tuple, int], clock: LocalClock, limits: InputLimits
) -> Iterator[HealthCheck]:
    if path.parent.parent != root:
        raise InputFormatError(path, 1, "file name", str(path.relative_to(root)), "expected <node>/<time>.json")
    node = node_name(path.parent.name, path, 1, "node folder")
    try:
        ts = datetime.strptime(path.name.split(".")[0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise InputFormatError(path, 1, "file name", path.name, "expected <YYYYmmddTHHMMSSZ>.json") from None
    if (why := clock.implausible(ts)) is not None:
        raise InputFormatError(path, 1, "file name", path.name, why)
    try:
        with open_text(path) as handle:
            text = handle.read(MAX_CAPTURE_CHARS + 1)  # never the whole of a .gz that inflates without end
    except READ_ERRORS as exc:
        raise unreadable(path, 1, exc) from None
    if len(text) > MAX_CAPTURE_CHARS:
        raise InputFormatError(
            path, 1, "file", path.name, f"larger than any dcgmi capture ({MAX_CAPTURE_CHARS:,} characters)"
        )
    check = _Checks(node, ts, f"{node}/{path.name}", path, limits)
    if ".json" not in path.suffixes:
        yield from _link_status(text, path, check, limits)
        return
    documents = list(_documents(text, path, limits))
    if not documents:
        raise InputFormatError(path, 1, "document", path.name, "an empty capture: dcgmi wrote nothing (did it fail?)")
    for document in documents:
        if isinstance(document, dict) and "DCGM GPU Diagnostic" in document:
            yield from _diag_checks(_parse(_Diag, document["DCGM GPU Diagnostic"], path), check)
            continue
        output = _parse(_Output, document, path)
        if output.header[:1] == ["NVLINK Error Counts"]:
            yield from _nvlink_counters(output, path, check, counters)
        elif "Overall Health" in output.body:
            yield from _health_checks(output, check)
        else:
            raise InputFormatError(
                path, 1, "document", str(output.header), "not a dcgmi health report, diag or nvlink -e output"
            )


@dataclass
class _Checks:
    """The health checks of one file: its node, time and name (and its path and the bounds, for the
    error of a field longer than any dcgmi writes)."""

    node: str
    ts: datetime
    source_file: str
    path: Path
    limits: InputLimits

    def __call__(self, check: str, status: str, message: str, line: int = 1) -> HealthCheck:
        for field, value in (("check", check), ("status", status), ("message", message)):
            if why := too_long(value, self.limits):
                raise InputFormatError(self.path, line, field, value[:200], why)
        return HealthCheck(self.node, self.ts, check, status, message, self.source_file, line)


# Finds where each document of a file ends, numbers kept as text: each is then read by load_json
_BOUNDS = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)
_SPACE = re.compile(r"[ \t\n\r]*")  # what JSON allows between documents


def _documents(text: str, path: Path, limits: InputLimits) -> Iterator[object]:
    """The JSON documents of a file, one after the other, each read within `json_input`'s bounds
    (the file's nesting checked before any parser recurses into it)."""
    if (depth := nesting_depth(text)) > limits.max_json_depth:
        reason = f"nested {depth:,} deep, deeper than any dcgmi document ({limits.max_json_depth})"
        raise InputFormatError(path, 1, "document", path.name, reason)
    at = 0
    while (at := _SPACE.match(text, at).end()) < len(text):  # a match, not a copy of the rest: linear
        try:
            _, end = _BOUNDS.raw_decode(text, at)
            document = load_json(text[at:end], limits)
        except json.JSONDecodeError as exc:
            raise InputFormatError(path, exc.lineno, "document", path.name, f"not JSON: {exc.msg}") from None
        except JsonRefused as exc:
            raise InputFormatError(path, text.count("\n", 0, at) + 1, "document", path.name, str(exc)) from None
        at = end
        yield document


def _parse(model: type[_Model], document: object, path: Path) -> _Model:
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise invalid(path, 1, exc, repr(exc.errors()[0]["input"]), "dcgmi JSON of a known shape") from None


def _health_checks(output: _Output, check: _Checks) -> Iterator[HealthCheck]:
    if output.body["Overall Health"].value == "Healthy":
        return
    for group, entities in output.body.items():
        for entity, box in entities.children.items():
            for system, result in box.children.get("Errors", _Box()).children.items():
                prefix = f"{group} {entity}: "
                yield check(system, result.value or "", prefix + " ".join(result.overflow))


# DCGM's health watch: replay and recovery errors fail at the first one, CRC errors warn
# (they fail only above 100 a second, a rate one count cannot give); Blackwell's counters fail.
_CRC_COUNTERS = ("CRC FLIT Error", "CRC Data Error")
_NOT_COUNTERS = ("Symbol BER", "Effective BER")


def _nvlink_counters(output: _Output, path: Path, check: _Checks, counters: dict[tuple, int]) -> Iterator[HealthCheck]:
    gpu = output.header[1] if len(output.header) > 1 else "GPU ?"
    for link, box in output.body.items():
        for counter, count in box.children.items():
            if counter in _NOT_COUNTERS:
                continue
            total = _count(count.value, path, f"{link}.{counter}")
            key = (check.node, gpu, link, counter)
            previous = counters.get(key, 0)
            counters[key] = total
            new = total - previous if total >= previous else total
            if new >= 1:
                status = "Warning" if counter in _CRC_COUNTERS else "Failure"
                yield check("NVLINK system", status, f"{gpu} {link}: {new} new {counter} (total {total})")


_COUNT = re.compile(rf"[0-9]{{1,{MAX_INTEGER_DIGITS}}}")


def _count(value: str | None, path: Path, field: str) -> int:
    """An NVLink counter's value: a whole number of 0 or more (a negative count would become the
    next capture's baseline), else the error that quarantines the file."""
    if value is None or not _COUNT.fullmatch(value):
        raise InputFormatError(path, 1, field, str(value)[:200], "not a count (a whole number, 0 or more)")
    return int(value)


_STATUS_TITLE = "NvLink Link Status"
_ENTITY = re.compile(r"^\s+(gpuId|physicalId) (\d+):$", re.ASCII)
_STATES = re.compile(r"^\s+([UDX_](?: [UDX_])*)$", re.ASCII)
_LINK_ENTITIES = re.compile(r"^\s+\d+:\d+(?:\s+\d+:\d+)*$", re.ASCII)  # `nvlink -s -e`'s wrapped entity ids
_ENTITY_NAMES = {"gpuId": ("GPU", "Failure"), "physicalId": ("NvSwitch", "Warning")}


def _link_status(text: str, path: Path, check: _Checks, limits: InputLimits) -> Iterator[HealthCheck]:
    lines = [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")]  # as editors count lines
    for line_no, line in enumerate(lines, start=1):
        if why := too_long(line, limits):
            raise InputFormatError(path, line_no, "link status", line[:200], why)
    if not any(_STATUS_TITLE in line for line in lines[:3]):
        raise InputFormatError(path, 1, "document", lines[0] if lines else "", "not JSON nor dcgmi nvlink -s output")
    entity = None
    for line_no, line in enumerate(lines, start=1):
        if found := _ENTITY.match(line):
            entity = found.groups()
        elif (states := _STATES.match(line)) and entity:
            down = [str(link) for link, state in enumerate(states.group(1).split()) if state == "D"]
            if down:
                name, status = _ENTITY_NAMES[entity[0]]
                message = f"{name} {entity[1]}: NvLink links {', '.join(down)} Down"
                yield check("NVLINK system", status, message, line_no)
            entity = None
        elif (
            line.strip()
            and not line.lstrip().startswith(("+", "|", "GPUs:", "NvSwitches:", "No ", "Key:", "Link Entities:"))
            and not _LINK_ENTITIES.match(line)
        ):
            raise InputFormatError(path, line_no, "link status", line.strip(), "not a line of dcgmi nvlink -s")
    if not any(line.startswith("Key:") for line in lines):  # dcgmi's last line: the output was cut short
        raise InputFormatError(path, len(lines), "link status", lines[-1], "cut short: no closing Key line")


DIAG_STATUS = {"fail": "Failure", "warn": "Warning"}


def _diag_checks(diag: _Diag, check: _Checks) -> Iterator[HealthCheck]:
    for test in (test for category in diag.test_categories for test in category.tests):
        for result in test.results:
            status = DIAG_STATUS.get(result.status.lower())
            if status is None:  # Pass, Skip
                continue
            gpu = result.gpu_id if result.gpu_id is not None else result.gpu_ids
            gpu = "all" if gpu is None else gpu
            notes = [w.warning if isinstance(w, _DiagWarning) else w for w in result.warnings]
            yield check(f"diag {test.name}", status, f"GPU {gpu}: " + " ".join(notes + [str(i) for i in result.info]))
