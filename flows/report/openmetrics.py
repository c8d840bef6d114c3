"""A month's figures (metrics.json) as Prometheus series, in the OpenMetrics text format.

One table, SERIES, says which figure becomes which series: its name, help, labels and the value
read from the month's document (flows/figures/document.py MonthDocument); each figure declares its
own (flows/figures/registry.py), the period's and the data quality's are here. Every writer uses it: `metrics.prom` in each report directory (no
timestamps: what node_exporter's textfile collector and the Pushgateway accept, both refusing
client-side timestamps), the Pushgateway push, and the history file of every built month with one
timestamp per sample, the month's end, which `promtool tsdb create-blocks-from openmetrics` turns
into blocks.

Conventions (Prometheus naming, checked by `promtool check metrics`): base units (hours become
`_seconds`, GPU-hours `gpu_seconds`), `_ratio` for shares, `_timestamp_seconds` for times. A
month's counts are gauges without `_total`: they do not accumulate from month to month, so they
are not counters (and promtool rejects `_total` on anything else). The node failure rate r_f keeps
the paper's unit, failures per 1000 node-days, which the help text says (promtool refuses `days`
in a name; a rate per node-second would no longer read as the report's figure). A figure that is
null in metrics.json (no exposure, no failures) has no sample, nor has a figure the month's inputs
did not measure (metrics.json `not_measured`: each series names the figures it exports, and a
sample of one named there is left out): never a 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import generate_latest

from flows.figures.document import MonthDocument
from flows.figures.figure import Series
from flows.figures.registry import figure_series

HOUR = 3600.0
PREFIX = "reliability_"
QUALITY_STATES = ("ok", "warning", "failed")


def _month_end(m: MonthDocument) -> float:
    return epoch_seconds(m.period.end)


# the document's own series: the period the figures cover, and the data's quality
PERIOD_SERIES = (
    Series(
        "period_start_timestamp_seconds",
        "Start of the period the figures cover (the month's start, or where a partial month's job records begin)",
        (),
        lambda m: [((), epoch_seconds(m.period.start))],
        ("period.start",),
    ),
    Series(
        "month_end_timestamp_seconds",
        "End of the period the figures cover (the month's end, or when a partial month's records were taken)",
        (),
        lambda m: [((), _month_end(m))],
        ("period.end",),
    ),
)
QUALITY_SERIES = Series(
    "data_quality_status",
    "The month's data-quality status: 1 for the status it has (ok, warning or failed), 0 for the others",
    ("status",),
    lambda m: [((s,), float(m.summary.data_quality.status == s)) for s in QUALITY_STATES],
    ("summary.data_quality",),
)
# every series: the period's, each figure's (flows/figures/registry.py), the data's quality
SERIES: tuple[Series, ...] = (*PERIOD_SERIES, *figure_series(), QUALITY_SERIES)


def epoch_seconds(naive_utc: str) -> int:
    """A metrics.json time (ISO 8601, naive UTC) as Unix seconds."""
    return int(datetime.fromisoformat(naive_utc).replace(tzinfo=UTC).timestamp())


def _families(months: list[MonthDocument], timestamps: bool) -> Iterator[Metric]:
    """Each series as one family holding every month's samples, grouped by label set and in time
    order within one (OpenMetrics wants a family's samples together, a series' in time order)."""
    for series in SERIES:
        family = GaugeMetricFamily(PREFIX + series.name, series.help, labels=("cluster", *series.labels))
        rows = []
        for month in months:
            at = _month_end(month) if timestamps else None
            for labels, value in series.samples(month):
                if value is not None and series.measured(month, labels):
                    rows.append(((month.cluster, *labels), at or 0, float(value), at))
        for labels, _, value, at in sorted(rows, key=lambda row: row[:2]):
            family.add_metric(list(labels), value, timestamp=at)
        yield family


class _Months:
    """A prometheus_client collector over some months' documents."""

    def __init__(self, months: list[MonthDocument], timestamps: bool) -> None:
        self.months, self.timestamps = months, timestamps

    def collect(self) -> Iterator[Metric]:
        return _families(self.months, self.timestamps)


def month_exposition(document: MonthDocument) -> bytes:
    """`metrics.prom`: the month's figures, no timestamps (the textfile collector and the
    Pushgateway refuse them; the month's end is the value of reliability_month_end_timestamp_seconds)."""
    return generate_latest(_Months([document], timestamps=False))


def history_exposition(months: list[MonthDocument]) -> bytes:
    """Every given month (of one or more clusters) with its samples at the month's end, for
    `promtool tsdb create-blocks-from openmetrics`."""
    return generate_latest(_Months(months, timestamps=True))


def month_collector(document: MonthDocument) -> _Months:
    """A collector of the month's figures (no timestamps), for prometheus_client's push_to_gateway."""
    return _Months([document], timestamps=False)
