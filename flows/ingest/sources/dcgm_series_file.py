"""The file `dcgm_series` reads (what `prometheus_dcgm` pulls): its header and its series lines, read
within bounds. flows/ingest/sources/dcgm_series.py says what the file holds and what becomes an event.

Every line is JSON read by `json_input.load_json` (deep nesting, a huge integer, NaN, 1e400 refused)
with strict types: the header's times are JSON integers (a bool is none), a label's value is text
(a host given as the number 12 is no node name), a run is `[first, last, "value"]` with whole epoch
seconds inside the clock's window of valid times, first <= last, the value a number as Prometheus
writes it (text). A series line that is not one is quarantined naming its field; a file whose
header is not one is quarantined whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.ingest.sources.clock import UTC_ZONE, LocalClock, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import LF_ONLY, open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.json_input import JsonRefused, load_json
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine

FORMAT = "dcgm_series"  # the header's key, its value the format's version
Run = tuple[int, int, float]  # first and last evaluation time (epoch seconds), the value
# a sample's value as Prometheus writes it (Go's strconv.FormatFloat, and its NaN and infinities)
_VALUE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN")


@dataclass
class DcgmSeriesReadStats:
    """What became of each line read: `lines` = 1 (the header) + `blank_lines` + `series` + the
    lines quarantined as they are read. A GPU's series read are then one (`per_gpu`); each becomes
    events (`xid_events`, `counter_events`: the rows landed), none (its values never rose), is
    skipped (`superseded_gauges`, `other_metrics`), or is quarantined whole (`series_quarantined`,
    a quarantine entry beyond the lines'). A file that cannot be read as one (its header is none,
    a corrupt .gz) is one quarantine entry (`files_quarantined` 1) and lands nothing, whatever
    `lines` it read first.

    Skip counts: `blank_lines`, `superseded_gauges`, `other_metrics`.
    """

    lines: int = 0
    blank_lines: int = 0  # skip count
    series: int = 0  # lines read as a series
    samples: int = 0  # evaluation times with a value, over every series
    xid_events: int = 0
    counter_events: int = 0
    gpus_counted: int = 0  # GPUs whose Xids were read from DCGM_EXP_XID_ERRORS_COUNT (the others': their gauge)
    superseded_gauges: int = 0  # skip count: a GPU's Xid gauge, when its windowed counts are read instead
    other_metrics: int = 0  # skip count: a GPU's series of a metric that is no Xid nor error counter
    series_quarantined: int = 0  # a GPU's series quarantined whole (a value that is no Xid or no count)
    files_quarantined: int = 0  # the file, when it cannot be read (no header, a corrupt .gz)


@dataclass(frozen=True)
class Series:
    """One series of the file: its metric, node, GPU labels and runs."""

    name: str
    node: str
    labels: dict[str, str]
    runs: list[Run]
    line: int


@dataclass(frozen=True)
class Header:
    """The file's first line: what was pulled."""

    start: int
    end: int
    step_seconds: int
    host_label: str


def header_line(url: str, query: str, start: int, end: int, step_seconds: int, host_label: str) -> str:
    """The first line of a saved-series file."""
    fields = {"url": url, "query": query, "start": start, "end": end}
    return json.dumps({FORMAT: 1, **fields, "step_seconds": step_seconds, "host_label": host_label}) + "\n"


def series_line(metric: dict[str, str], runs: list[tuple[int, int, str]]) -> str:
    """One series of a saved-series file (values as Prometheus writes them, text)."""
    return json.dumps({"metric": metric, "runs": [list(run) for run in runs]}, sort_keys=True) + "\n"


def runs_of(values: list[tuple[int, str]], step: int) -> list[tuple[int, int, str]]:
    """query_range's `values` ([time, "value"], time order) as runs of equal values at consecutive steps."""
    runs: list[tuple[int, int, str]] = []
    for at, value in values:
        if runs and runs[-1][2] == value and runs[-1][1] + step == at:
            runs[-1] = (runs[-1][0], at, value)
        else:
            runs.append((at, at, value))
    return runs


def _whole(value: object) -> bool:
    """A JSON integer (a bool is none)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _header(line: str, path: Path, limits: InputLimits = DEFAULT_LIMITS) -> Header:
    try:
        if why := too_long(line, limits):
            raise ValueError(why)
        found = load_json(line, limits)
        if not isinstance(found, dict) or found.get(FORMAT) != 1 or isinstance(found.get(FORMAT), bool):
            raise ValueError(f'the first line is not {{"{FORMAT}": 1, ...}}')
        times = [found.get(key) for key in ("start", "end", "step_seconds")]
        if not all(_whole(value) for value in times) or not isinstance(found.get("host_label"), str):
            raise ValueError("start, end and step_seconds are whole numbers, host_label a label's name")
        header = Header(*times, found["host_label"])
    except ValueError as error:  # JsonRefused among them
        raise InputFormatError(
            path, 1, "header", line.strip()[:200], f"not a saved dcgm-exporter series file: {error}"
        ) from None
    if header.step_seconds < 1:
        raise InputFormatError(path, 1, "step_seconds", str(header.step_seconds), "a step is 1 second or more")
    if header.end < header.start:
        raise InputFormatError(path, 1, "end", str(header.end), "the pull ends before it starts")
    return header


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the first line says what was pulled (an InputFormatError when it does not)."""
    with open_text(path, LF_ONLY) as handle:
        _header(handle.readline(DEFAULT_LIMITS.max_field_chars + 1), path)


def _series(line: str, path: Path, line_no: int, header: Header, clock: LocalClock, limits: InputLimits) -> Series:
    def refused(field: str, reason: str) -> InputFormatError:
        return InputFormatError(path, line_no, field, line.strip()[:200], reason)

    if why := too_long(line, limits):
        raise refused("series", why)
    try:
        found = load_json(line, limits)
    except JsonRefused as error:
        raise refused("series", f"not a series: {error}") from None
    metric = found.get("metric") if isinstance(found, dict) else None
    raw_runs = found.get("runs") if isinstance(found, dict) else None
    if not isinstance(metric, dict) or not isinstance(raw_runs, list):
        raise refused("series", 'not a series: {"metric": {labels}, "runs": [[first, last, "value"], ...]}')
    labels: dict[str, str] = {}
    for name, value in metric.items():
        if not isinstance(value, str):  # Prometheus's labels are text: a host 12 is no node name
            raise refused(name, f"a label's value is text, not {json.dumps(value)[:40]}")
        labels[name] = value
    runs = [_run(run, refused, clock) for run in raw_runs]
    if header.host_label not in labels:
        raise refused(header.host_label, "no host label: which node is it?")
    node = node_name(labels[header.host_label], path, line_no, header.host_label)
    return Series(labels.get("__name__", ""), node, labels, runs, line_no)


def _run(run: object, refused: Callable[[str, str], InputFormatError], clock: LocalClock) -> Run:
    """One run `[first, last, "value"]`: whole epoch seconds inside the clock's window, first <= last,
    the value as Prometheus writes it."""
    if not (isinstance(run, list) and len(run) == 3 and _whole(run[0]) and _whole(run[1])):
        raise refused("runs", "a run is [first, last, value], its times whole epoch seconds")
    first, last, value = run
    if last < first:
        raise refused("runs", f"a run ends ({last}) before it starts ({first})")
    for at in (first, last):
        try:
            why = clock.implausible(epoch(at))
        except (ValueError, OverflowError, OSError):
            why = "not an epoch time"
        if why is not None:
            raise refused("runs", f"evaluation time {at}: {why}")
    if not isinstance(value, str) or not _VALUE.fullmatch(value):
        raise refused("runs", f"{value!r} is no sample value (a number as text, as Prometheus writes it)")
    return first, last, float(value)


def read_series(
    path: Path,
    stats: DcgmSeriesReadStats,
    quarantine: Quarantine,
    clock: LocalClock | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
) -> tuple[Header | None, list[Series]]:
    """The file's header and series (None and none when the file cannot be read as one)."""
    clock = clock if clock is not None else as_clock(UTC_ZONE)
    series: list[Series] = []
    line_no = 0
    try:
        with open_text(path, LF_ONLY) as handle:
            first = handle.readline(limits.max_field_chars + 1)
            line_no = 1
            stats.lines += 1
            header = _header(first, path, limits)
            for line_no, line in enumerate(handle.lines(limits.max_field_chars), start=2):
                stats.lines += 1
                if not line.strip():
                    stats.blank_lines += 1
                    continue
                try:
                    series.append(_series(line, path, line_no, header, clock, limits))
                except InputFormatError as error:
                    quarantine.reject(error)
    except InputFormatError as error:
        stats.files_quarantined += 1
        quarantine.reject(error)
        return None, []
    except READ_ERRORS as exc:
        stats.files_quarantined += 1
        quarantine.reject(unreadable(path, line_no + 1, exc))
        return None, []
    stats.series = len(series)
    stats.samples = sum((last - first) // header.step_seconds + 1 for s in series for first, last, _ in s.runs)
    return header, series


def epoch(seconds: int) -> datetime:
    """Epoch seconds as an aware UTC time."""
    return datetime.fromtimestamp(seconds, UTC)
