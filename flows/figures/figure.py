"""What declares a figure (flows/figures/registry.py holds the declarations): its key in a period's
figures, its type, how it is read from its marts, what it needs to be measured, its report
section, its Prometheus series and Grafana panel, the words a correction uses for it and its
documentation (flows/figures/derived.py writes the files derived from it).

A figure is one declaration, the way a source kind is (flows/ingest/sources/registry.py): the
document's period classes, the rules of what is measured, the OpenMetrics table, a correction's
names and the pages' sections are derived from the declarations, and tests/test_figure_registry.py
fails where a list of figures is not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from flows.config.cluster import AnalysisConfig
from flows.warehouse.engines import MartReader

Sample = tuple[tuple[str, ...], float | None]  # label values after `cluster`, value (None: no sample)


@dataclass(frozen=True)
class Series:
    """One Prometheus metric of a figure (flows/report/openmetrics.py writes it): `name` without the
    prefix, its help, its labels besides `cluster`, the samples of a month read from its document
    (flows/figures/document.py MonthDocument), and the figures they export (paths of metrics.json,
    as its `not_measured` names them; "{label}" is a label's value): no sample where one is not
    measured."""

    name: str
    help: str
    labels: tuple[str, ...]
    samples: Callable[[Any], Iterable[Sample]]  # of a MonthDocument (whose module imports the registry's)
    figures: tuple[str, ...]

    def measured(self, document: Any, labels: tuple[str, ...]) -> bool:
        """Whether a sample with these label values exports only figures the month (its MonthDocument) measured."""
        gaps = document.not_measured
        named = dict(zip(self.labels, labels, strict=True))
        return not any(figure.format(**named) in gaps for figure in self.figures)


def nulls(value: Any) -> Any:
    """`value` with every number (not a bool) null, its lists empty and its dicts' values so."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return None
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {k: nulls(v) for k, v in value.items()}
    return value


def unmeasured_dict(figure: dict, why: str, keep: Collection[str] = ()) -> dict:
    """A dict figure not measured: its keys with null numbers (lists empty; the keys of `keep` as
    they were: parameters, not figures), and `not_measured`."""
    return {**{k: v if k in keep else nulls(v) for k, v in figure.items()}, "not_measured": why}


# how a figure is written not measured where that is not the rule's (Figure.written_unmeasured):
# (its value, why, every path the period does not measure) -> the value written
Unmeasured = Callable[[Any, str, dict[str, str]], Any]


# the first schema version whose figures were typed and declared: a figure written before the
# registry is declared `since` it (docs/metrics.md's table notes only the figures of later versions)
FIRST_TYPED_VERSION = 3


@dataclass(frozen=True)
class Reading:
    """What a figure is read from: the marts, its period (flows/figures/period.py Period), the
    analysis settings, and what every period reads first: its totals, its r_f (each definition not
    measured already written so) and its MTTF-by-size rows."""

    con: MartReader
    period: Any  # flows.figures.period.Period (imported by the registry, not here: no cycle)
    params: AnalysisConfig
    totals: dict
    r_f: dict
    buckets: list[dict]


@dataclass(frozen=True)
class Figure:
    """One figure of a period, declared once.

    `needs`: the rules of flows/figures/measured.py RULES it needs to be measured, the most basic
    first (the first that fails names why); `parts`: the same for parts of it measured apart
    (`node_failure_rate.paper`); `keep`: the keys of a dict figure kept as they are when it is not
    measured (its parameters and words). `section`: its partials, templates/partials/<section>.html.j2
    (showing its `charts`) and <section>.txt.j2; `panel`: the title of its Grafana panel
    (flows/publish/grafana-dashboard.json)."""

    key: str
    words: str  # what a correction calls it (and a sentence of the report, unless `named` says otherwise)
    type: Any  # its pydantic type (flows/figures/figure_types.py or its own module)
    read: Callable[[Reading], Any]
    doc: str  # what it holds: its row of docs/metrics.md's figures' table and its JSON Schema description
    marts: tuple[str, ...] = ()  # the dbt models it reads (dbt_project/models/marts)
    needs: tuple[str, ...] = ()
    parts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    keep: tuple[str, ...] = ()
    section: str | None = None
    charts: tuple[str, ...] = ()  # the charts its section shows (flows/report/*_charts.py draws them)
    series: tuple[Series, ...] = ()
    panel: str | None = None
    # the metrics.json schema version that first wrote it: a new figure's is the next version, which
    # SCHEMA_VERSION then is (flows/figures/document.py), and an earlier document reads it not measured
    since: int = FIRST_TYPED_VERSION
    named: dict[str, str] = field(default_factory=dict)  # path -> how a sentence names it (or a part)
    unmeasured: Unmeasured | None = None  # how it is written not measured, where not `written_unmeasured`'s rule

    @property
    def is_list(self) -> bool:
        """Whether the figure is a list (written [] when not measured)."""
        return getattr(self.type, "__origin__", None) is list

    def written_unmeasured(self, value: Any, why: str, gaps: dict[str, str]) -> Any:
        """The figure written as not measured (`why`; `gaps`: every path the period does not
        measure): its `unmeasured` where it declares one, else [] for a list, else its numbers null
        and its `keep` kept (`unmeasured_dict`)."""
        if self.unmeasured is not None:
            return self.unmeasured(value, why, gaps)
        return [] if self.is_list else unmeasured_dict(value, why, self.keep)
