"""Pull a month's NVIDIA dcgm-exporter series from Prometheus (`prometheus_dcgm`) into a saved-series
file, which lands as the `dcgm_series` kind reads it (flows/ingest/sources/dcgm_series.py).

One selector asks for every series the reader reads: `{__name__=~"<dcgm_series.METRICS>", <matchers>}`.
The month, from the hour before it (as the health logs start: attempts that end at its start) to
the hour after it (the attribution window after an End), capped at now, is asked with
`/api/v1/query_range` at `step_seconds`, `chunk_hours` at a time (and never more than Prometheus's
11,000 points a series per query), evaluation times on multiples of the step. Each chunk's answer
is folded into runs of equal values as it arrives (dcgm_series.runs_of), so memory holds runs, not
samples; the file is the answer without its repetitions. A month with no such series at all is a
PullError (a wrong URL, matchers or host label gives an empty answer, not a failure).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flows.core.escape import printable
from flows.core.months import Month
from flows.ingest.sources.dcgm_series import METRICS, header_line, runs_of, series_line
from flows.ingest.sources.http_client import HttpClient, PullError, authorization
from flows.ingest.sources.node_names import map_node
from flows.ingest.sources.servers import PrometheusDcgmSource

LEAD_SECONDS = 3600  # before the month ...
TAIL_SECONDS = 3600  # ... and after it
MAX_POINTS = 11_000  # Prometheus refuses a range query of more points per series
Key = tuple[tuple[str, str], ...]  # a series' labels, sorted


def selector(server: PrometheusDcgmSource) -> str:
    """The PromQL selector of every dcgm-exporter series the reader reads, with the configured matchers."""
    extra = f", {server.matchers}" if server.matchers.strip() else ""
    return f'{{__name__=~"{METRICS}"{extra}}}'


def client(server: PrometheusDcgmSource, attempts: int | None = None) -> HttpClient:
    """The HTTP client of the server, passing Prometheus's own error text (`error`) into PullErrors;
    each request tried `attempts` times (default: the source's)."""
    return HttpClient(server, authorization(server), error_text=_said, attempts=attempts)


def _said(body: Any) -> str | None:
    """Prometheus's words in an error answer (`{"status": "error", "error": ...}`)."""
    return str(body.get("error")) if isinstance(body, dict) and body.get("error") else None


def month_range(server: PrometheusDcgmSource, month: Month, now: datetime | None = None) -> tuple[int, int]:
    """The first and last evaluation time (epoch seconds, multiples of the step) of the month's pull."""
    step = server.step_seconds
    now = now or datetime.now(UTC)
    start = int(month.start.timestamp()) - LEAD_SECONDS
    end = min(int(month.end.timestamp()) + TAIL_SECONDS, int(now.timestamp()))
    return math.ceil(start / step) * step, end // step * step


def chunks(start: int, end: int, step: int, chunk_hours: int) -> Iterator[tuple[int, int]]:
    """[first, last] evaluation times of each query: consecutive, none longer than chunk_hours or MAX_POINTS."""
    points = max(1, min(chunk_hours * 3600 // step, MAX_POINTS))
    at = start
    while at <= end:
        last = min(at + (points - 1) * step, end)
        yield at, last
        at = last + step


def _query(http: HttpClient, query: str, first: int, last: int, step: int) -> list[dict]:
    body = http.get_json("/api/v1/query_range", {"query": query, "start": first, "end": last, "step": step})
    data = body.get("data") if isinstance(body, dict) and body.get("status") == "success" else None
    result = data.get("result") if isinstance(data, dict) else None
    # a matrix: each series its labels and its [time, "value"] pairs
    if not isinstance(result, list) or not all(
        isinstance(s, dict) and isinstance(s.get("metric"), dict) and isinstance(s.get("values"), list) for s in result
    ):
        raise PullError(f"source prometheus_dcgm: {http.shown_url('/api/v1/query_range')}: not a Prometheus answer")
    return result


def pull_series(server: PrometheusDcgmSource, month: Month, out: Path) -> Path:
    """Query the month chunk by chunk and write the saved-series file `out`."""
    http, query, step = client(server), selector(server), server.step_seconds
    start, end = month_range(server, month)
    runs: dict[Key, list[tuple[int, int, str]]] = {}
    for first, last in chunks(start, end, step, server.chunk_hours):
        for series in _query(http, query, first, last, step):
            if not all(isinstance(value, str) for value in series["metric"].values()):  # a host 12 is no node name
                raise PullError(f"source prometheus_dcgm: {http.shown_url()}: a series' labels are not text")
            key = tuple(sorted((str(name), value) for name, value in series["metric"].items()))
            try:
                found = runs_of([(int(at), str(value)) for at, value in series["values"]], step)
            except (TypeError, ValueError, OverflowError):  # a pair that is no [time, "value"] (an infinite time)
                raise PullError(
                    f"source prometheus_dcgm: {http.shown_url()}: a series' values are no samples"
                ) from None
            have = runs.setdefault(key, [])
            if have and found and have[-1][1] + step == found[0][0] and have[-1][2] == found[0][2]:
                have[-1] = (have[-1][0], found[0][1], found[0][2])  # a run across the chunks' boundary
                found = found[1:]
            have.extend(found)
    if not runs:
        raise PullError(_nothing(http, query, month))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as saved:
        saved.write(header_line(http.shown_url(), query, start, end, step, server.host_label))
        for key in sorted(runs):
            saved.write(series_line(dict(key), runs[key]))
    return out


def _nothing(http: HttpClient, query: str, month: Month) -> str:
    return (
        f"source prometheus_dcgm: {http.shown_url()} has no dcgm-exporter series {query} in {month}: "
        "is dcgm-exporter scraped into this Prometheus, and do `matchers` select it?"
    )


def probe(server: PrometheusDcgmSource, month: Month) -> str:
    """What the server holds for the month (its series index, one request): series, hosts (the first
    two named as the landing will name them, by `node_names`: a fully qualified name shows here), metrics.
    A PullError when it cannot be asked, holds none, or none with the host label. Asked once, as
    every server source's probe (`check --month` takes seconds: the pull retries)."""
    http, query = client(server, attempts=1), selector(server)
    start, end = month_range(server, month)
    body = http.get_json("/api/v1/series", [("match[]", query), ("start", start), ("end", end)])
    found = body.get("data") if isinstance(body, dict) else None
    found = [labels for labels in found if isinstance(labels, dict)] if isinstance(found, list) else None
    if not found:
        raise PullError(_nothing(http, query, month))
    hosts = {labels[server.host_label] for labels in found if server.host_label in labels}
    if not hosts:
        raise PullError(
            f"source prometheus_dcgm: {http.shown_url()}: its {len(found)} dcgm-exporter series in {month} have no "
            f"label {server.host_label}: set host_label to the label naming the node"
        )
    metrics = sorted({labels.get("__name__", "") for labels in found})
    named = sorted({map_node(host, server.node_names) for host in hosts})  # as the landing will name them
    shown = ", ".join(named[:2]) + (f" and {len(named) - 2:,} more" if len(named) > 2 else "")
    return (
        f"prometheus_dcgm at {http.shown_url()}: {len(found)} series of {len(hosts)} hosts ({printable(shown)}) "
        f"in {month} ({', '.join(metrics)})"
    )
