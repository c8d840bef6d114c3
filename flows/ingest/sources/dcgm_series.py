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
A line that is not such a series is quarantined; the others are read (what a line must be:
flows/ingest/sources/dcgm_series_file.py, which reads the file within bounds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

from flows.ingest.sources.clock import UTC_ZONE, TimeZone, as_clock
from flows.ingest.sources.dcgm_series_file import (
    FORMAT,
    DcgmSeriesReadStats,
    Header,
    Run,
    Series,
    check_header,
    epoch,
    header_line,
    read_series,
    runs_of,
    series_line,
)
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck, XidEvent
from flows.ingest.sources.xid_syslog import xid_number

# the saved file's format (dcgm_series_file), read here
__all__ = ["FORMAT", "DcgmSeriesReadStats", "check_header", "header_line", "read_dcgm_series", "runs_of", "series_line"]

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
# ... and one GPU's count of one Xid rising more over a pull: its rises would be that many rows (a
# line of runs rising 0, 100,000, 0, ... is a few bytes a run), so the rows stay in proportion to the file
MAX_XIDS_PER_SERIES = MAX_XIDS_PER_RISE
GPU_SERIES = ("gpu", "UUID", "xid")  # with the metric and the node: what one GPU's series share


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


def _gpu(labels: dict[str, str]) -> str:
    """The GPU a series is of, as dcgm-exporter labels it (its index and UUID)."""
    return f"GPU {labels.get('gpu', '?')}" + (f" ({labels['UUID']})" if "UUID" in labels else "")


def _xid(series: Series, at: int, value: str, path: Path, step: int) -> XidEvent:
    if not value.isdigit():  # a label or a gauge's value that is no whole number (NaN, 79.5, "abc")
        raise InputFormatError(path.name, series.line, "xid", value, "not an Xid number")
    return XidEvent(
        node=series.node,
        ts=epoch(at),
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
        rises = list(_xid_count_rises(series, header, path))
        if (total := sum(gained for _, gained in rises)) > MAX_XIDS_PER_SERIES:  # never a row per Xid of a flood
            reason = f"{total:,} Xids, more than any GPU's count in one pull ({MAX_XIDS_PER_SERIES:,})"
            raise InputFormatError(path.name, series.line, series.name, str(total), reason)
        return [
            _xid(series, at, series.labels.get("xid", ""), path, step) for at, gained in rises for _ in range(gained)
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
                ts=epoch(at),
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
