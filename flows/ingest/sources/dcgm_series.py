"""NVIDIA dcgm-exporter series as `prometheus_dcgm` saves them from Prometheus, read as health events.

The file is JSON lines. The first line says what was pulled: `{"dcgm_series": 1, "url": ...,
"query": ..., "start": <epoch s>, "end": <epoch s>, "step_seconds": 30, "host_label": "Hostname"}`.
Each further line is one series: `{"metric": {<its labels, __name__ among them>}, "runs": [[first,
last, "value"], ...]}`: the series' values at the query's evaluation times (every `step_seconds`
from `start`: Prometheus's `query_range` answer), each run being consecutive evaluation times with
one value, a gap between two runs evaluation times without a sample (the exporter or the node was
down). It is the answer without its repetitions: the values at every evaluation time can be written
back from it, so a month rebuilds without the server.

What becomes an event, at the first evaluation time that shows it (the event happened within the
step before: each row's `uncertainty_seconds` is the step, which the attribution widens its window
by, docs/methodology.md "Attribution"):
- `DCGM_FI_DEV_XID_ERRORS` (a gauge: the last Xid of the GPU) changing to a non-zero value: an Xid
  event of that value (an Xid that repeats the last one is not seen: the windowed count below is);
- `DCGM_EXP_XID_ERRORS_COUNT` (dcgm-exporter's count of each Xid, `xid` label, in a sliding window):
  each increase is that many Xid events of its `xid`; a series that appears (or reappears after a
  gap) counts its value whole, as the window was empty before. A GPU with any such series has its
  Xids read from them alone, never from its gauge too (one Xid would be counted twice); a GPU
  without (an exporter without the count enabled, or no Xid in the window) from its gauge;
- an error counter (`ERROR_COUNTERS`) that increased: a health check named by the metric, status
  `increase`; a value that went down is a reset (the driver reloaded): it counts from 0.
A GPU's series are read as one (`GPU_SERIES` labels: a metric of one GPU, and an Xid number):
dcgm-exporter 3.3.6 and later label the gauge with the Xid (`err_code`, `err_msg`), so each new Xid
starts a new series; a MIG GPU repeats its series per instance (`GPU_I_ID`); a driver upgrade
changes `DCGM_FI_DRIVER_VERSION`. The first run of a GPU's series is its state before the pull
(baseline), not an event, except the windowed count's when it appears after the pull's start. Xids land in `xid_events` (so an Xid
classifies by one taxonomy whichever source reported it), the counters' events in `health_checks`.
A line that is not such a series is quarantined; the others are read: bad JSON or JSON beyond the
bounds of `json_input` (deep nesting, a huge integer, NaN, 1e400), a line longer than any field, no
host label, a label that is not text (a host given as the number 12 is no node name), a node that
is no node name, a value that is not a number as Prometheus writes it (text: `"79"`, `"NaN"`), an
evaluation time that is not whole epoch seconds inside the clock's window of valid times, a run
that ends before it starts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.ingest.sources.clock import UTC_ZONE, LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.json_input import JsonRefused, load_json
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck, XidEvent
from flows.ingest.sources.xid_syslog import xid_number

FORMAT = "dcgm_series"  # the header's key, its value the format's version
XID_GAUGE = "DCGM_FI_DEV_XID_ERRORS"
XID_COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
# dcgm-exporter's error counters (etc/default-counters.csv; the NVLink ones per error type), each an
# event of its own kind when it increases: what the taxonomy's `dcgm_exporter` rules classify
ERROR_COUNTERS = (
    r"DCGM_FI_DEV_PCIE_REPLAY_COUNTER|DCGM_FI_DEV_ECC_DBE_VOL_TOTAL|DCGM_FI_DEV_RETIRED_DBE"
    r"|DCGM_FI_DEV_ROW_REMAP_FAILURE|DCGM_FI_DEV_NVLINK_[A-Z_]+_ERROR_COUNT_TOTAL"
)
# every series the pull asks for (a PromQL `__name__=~` regex, which RE2 anchors as Python's fullmatch)
METRICS = f"{XID_GAUGE}|{XID_COUNT}|{ERROR_COUNTERS}"
_ERROR_COUNTER = re.compile(ERROR_COUNTERS)
MAX_XIDS_PER_RISE = 100_000  # a windowed Xid count rising more in one step is no GPU's (the driver rate-limits)
GPU_SERIES = ("gpu", "UUID", "xid")  # with the metric and the node: what one GPU's series share

Run = tuple[int, int, float]  # first and last evaluation time (epoch seconds), the value
# a sample's value as Prometheus writes it (Go's strconv.FormatFloat, and its NaN and infinities)
_VALUE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN")


@dataclass
class DcgmSeriesReadStats:
    """What became of each line read: `lines` = 1 (the header) + `blank_lines` + `series` + lines
    quarantined as they are read (the whole file's, `files_quarantined`, when its header is no
    header). A GPU's series read are then one (`per_gpu`); each becomes events (`xid_events`,
    `counter_events`: the rows landed), none (its values never rose), is skipped
    (`superseded_gauges`, `other_metrics`), or is quarantined whole (`series_quarantined`, an
    entry beyond the lines').

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
    with open_text(path) as handle:
        _header(handle.readline(), path)


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
            why = clock.implausible(_at(at))
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
        with open_text(path) as handle:
            first = handle.readline()
            line_no = 1
            stats.lines += 1
            header = _header(first, path, limits)
            for line_no, line in enumerate(handle, start=2):
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


def per_gpu(found: list[Series]) -> list[Series]:
    """The series of each GPU (GPU_SERIES) as one: their runs in time order, the first's labels and line."""
    grouped: dict[tuple, list[Series]] = {}
    for series in found:
        key = (series.name, series.node, *(series.labels.get(label, "") for label in GPU_SERIES))
        grouped.setdefault(key, []).append(series)
    return [
        Series(group[0].name, group[0].node, group[0].labels, sorted(r for s in group for r in s.runs), group[0].line)
        for group in grouped.values()
    ]


def increases(runs: list[Run], step: int, window: bool = False, baseline: bool = True) -> Iterator[tuple[int, float]]:
    """(time, increase) of a series' runs. A counter's (`window` False): a run's value over the run
    before, a value that went down counting from 0 (a reset: the driver reloaded). A windowed count's:
    its rises (a fall is a count leaving the window), a run after a gap counting whole (the window
    was empty). The first run is the state before the pull (`baseline`) or counts whole."""
    previous: Run | None = None
    for first, last, value in runs:
        if previous is None:
            gained = 0.0 if baseline else value
        elif window and previous[1] + step < first:
            gained = value
        elif value >= previous[2] or window:
            gained = value - previous[2]
        else:
            gained = value
        if gained > 0:
            yield first, gained
        previous = (first, last, value)


def _at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _gpu(labels: dict[str, str]) -> str:
    """The GPU a series is of, as dcgm-exporter labels it (its index and UUID)."""
    return f"GPU {labels.get('gpu', '?')}" + (f" ({labels['UUID']})" if "UUID" in labels else "")


def _xid(series: Series, at: int, value: str, path: Path, step: int) -> XidEvent:
    if not value.isdigit():  # a label or a gauge's value that is no whole number (NaN, 79.5, "abc")
        raise InputFormatError(path.name, series.line, "xid", value, "not an Xid number")
    return XidEvent(
        node=series.node,
        ts=_at(at),
        xid=xid_number(value, path.name, series.line),
        pci=series.labels.get("pci_bus_id", ""),
        message=f"{series.name} {_gpu(series.labels)}",
        source_line=series.line,
        source_file=path.name,
        uncertainty_seconds=step,
    )


def _number(value: float) -> str:
    """A value as text, a whole number without its decimals."""
    return str(int(value)) if math.isfinite(value) and value == int(value) else str(value)


def _counts(series: Series, path: Path) -> list[Run]:
    """A counter's or a count's runs, each value finite and 0 or more (else the error that
    quarantines the series: +Inf, a negative count)."""
    for _, _, value in series.runs:
        if not (math.isfinite(value) and value >= 0):
            raise InputFormatError(path.name, series.line, series.name, _number(value), "not a count (0 or more)")
    return series.runs


def _xid_count_rises(series: Series, header: Header, path: Path) -> Iterator[tuple[int, int]]:
    """(time, Xids) of a windowed Xid count's rises: whole numbers, at most MAX_XIDS_PER_RISE each
    (more is no GPU's count: the series is quarantined rather than turned into that many events)."""
    baseline = bool(series.runs) and series.runs[0][0] <= header.start  # present when the pull began
    for at, gained in increases(_counts(series, path), header.step_seconds, window=True, baseline=baseline):
        if gained != int(gained) or gained > MAX_XIDS_PER_RISE:
            reason = f"not a count of Xids (a whole rise of at most {MAX_XIDS_PER_RISE:,} a step)"
            raise InputFormatError(path.name, series.line, series.name, f"+{_number(gained)}", reason)
        yield at, int(gained)


def _series_xids(series: Series, header: Header, path: Path) -> list[XidEvent]:
    """The Xid events of one series (all or none: a value that is no Xid quarantines the series)."""
    step = header.step_seconds
    if series.name == XID_COUNT:
        return [
            _xid(series, at, series.labels.get("xid", ""), path, step)
            for at, gained in list(_xid_count_rises(series, header, path))
            for _ in range(gained)
        ]
    return [
        _xid(series, run[0], _number(run[2]), path, step)
        for previous, run in zip(series.runs, series.runs[1:], strict=False)
        if run[2] != 0 and run[2] != previous[2]
    ]


def _xid_events(
    found: list[Series], header: Header, path: Path, stats: DcgmSeriesReadStats, quarantine: Quarantine
) -> Iterator[XidEvent]:
    """The Xid events of the file's series: each GPU's from its windowed counts when it has any, else
    from its Xid gauge (a series with a value that is no Xid is quarantined whole)."""
    counted = {_gpu_of(s) for s in found if s.name == XID_COUNT}
    stats.gpus_counted = len(counted)
    for series in found:
        if series.name == XID_GAUGE and _gpu_of(series) in counted:
            stats.superseded_gauges += 1
            continue
        if series.name not in (XID_GAUGE, XID_COUNT):
            stats.other_metrics += not _ERROR_COUNTER.fullmatch(series.name)  # the counters: _counter_events
            continue
        try:
            events = _series_xids(series, header, path)
        except InputFormatError as error:
            stats.series_quarantined += 1
            quarantine.reject(error)
            continue
        stats.xid_events += len(events)
        yield from events


def _gpu_of(series: Series) -> tuple[str, str, str]:
    return series.node, series.labels.get("gpu", ""), series.labels.get("UUID", "")


def _counter_events(
    found: list[Series], header: Header, path: Path, stats: DcgmSeriesReadStats, quarantine: Quarantine
) -> Iterator[HealthCheck]:
    """The error counters' increases, one health check each (a series with a value that is no count
    is quarantined whole)."""
    for series in (s for s in found if _ERROR_COUNTER.fullmatch(s.name)):
        try:
            runs = _counts(series, path)
        except InputFormatError as error:
            stats.series_quarantined += 1
            quarantine.reject(error)
            continue
        for at, gained in increases(runs, header.step_seconds):
            stats.counter_events += 1
            yield HealthCheck(
                node=series.node,
                ts=_at(at),
                check=series.name,
                status="increase",
                message=f"{_gpu(series.labels)}: +{_number(gained)}",
                source_file=path.name,
                source_line=series.line,
                uncertainty_seconds=header.step_seconds,
            )


def read_dcgm_series(
    path: Path,
    tz: TimeZone = UTC_ZONE,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: DcgmSeriesReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> Iterator[XidEvent | HealthCheck]:
    """A saved-series file's events: its Xids (rows of xid_events), then its error counters'
    increases (rows of health_checks)."""
    stats = stats if stats is not None else DcgmSeriesReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    header, found = read_series(path, stats, quarantine, as_clock(tz), limits)
    found = per_gpu(found)
    if header is not None:
        yield from _xid_events(found, header, path, stats, quarantine)
        yield from _counter_events(found, header, path, stats, quarantine)
