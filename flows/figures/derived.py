"""The files derived from the figures' declarations (flows/figures/registry.py) and the document's
classes, written by `python -m flows.figures.derived` and never by hand (tests/test_metrics_schema.py
fails when one is stale):

- docs/metrics.schema.json, the JSON Schema of metrics.json (flows/figures/document.py);
- docs/metrics.md's table of the figures of a period (each figure's key, its declared `doc`, its
  marts and what it needs to be measured) and its title's schema version;
- dbt_project/models/exposures.yml, dbt's exposure of the report: the marts the figures read and
  those the rest of the document reads (`DOCUMENT_MARTS`).

A new figure's documentation and lineage are its declaration's: it touches none of these files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from pydantic.json_schema import models_json_schema

from flows.figures.document import SCHEMA_VERSION, MonthDocument, StudyDocument
from flows.figures.figure import FIRST_TYPED_VERSION
from flows.figures.registry import FIGURES, needs

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "docs" / "metrics.schema.json"
METRICS_DOC_PATH = ROOT / "docs" / "metrics.md"
EXPOSURES_PATH = ROOT / "dbt_project" / "models" / "exposures.yml"

TABLE_START = (
    "<!-- the figures' table: written by `python -m flows.figures.derived` from each figure's declaration "
    "(flows/figures/registry.py `doc`); edit the declaration, not the table -->"
)
TABLE_END = "<!-- end of the figures' table -->"

# what the document reads beside its figures' marts: the periods, the job mix, run ETTR, lost
# goodput by size and the health events (flows/figures/month_metrics.py, study_metrics.py), the
# months built (flows/figures/coverage.py) and the detail tables written beside it as Parquet
DOCUMENT_MARTS = (
    "dim_periods",
    "fct_period_outcomes",
    "fct_period_job_mix",
    "fct_period_run_ettr",
    "fct_period_lost_goodput_by_size",
    "fct_period_health_events_by_category",
    "fct_months_built",
    "fct_failures",
    "fct_node_days",
    "fct_job_runs",
)
EXPOSURE_DESCRIPTION = (
    "The monthly MTTF/ETTR report and the study of a range of months, one page for any period "
    "(templates/page.html.j2, emailed and archived with metrics.json and the detail tables as Parquet). "
    "flows/figures/ reads these marts only, a period's rows `where period_id = ?` (dim_periods), one "
    "declared figure at a time (flows/figures/registry.py), and adds the exact Poisson intervals, the "
    "tests of change, the paper's MTTF and E[ETTR] models and the lemon nodes' negative-binomial fit."
)


class _IndentedLists(yaml.SafeDumper):
    """A YAML dumper that indents a list under its key, as dbt's docs write a yml."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def metrics_schema() -> dict:
    """The JSON Schema of metrics.json: a month's or a study's document (docs/metrics.schema.json)."""
    _, schema = models_json_schema([(MonthDocument, "validation"), (StudyDocument, "validation")])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"metrics.json, schema_version {SCHEMA_VERSION}",
        "description": "A month's or a study's metrics.json (docs/metrics.md); flows/figures/document.py declares it.",
        "anyOf": [{"$ref": "#/$defs/MonthDocument"}, {"$ref": "#/$defs/StudyDocument"}],
        **schema,
    }


def schema_text() -> str:
    """docs/metrics.schema.json."""
    return json.dumps(metrics_schema(), indent=1, sort_keys=True) + "\n"


def figures_table() -> str:
    """docs/metrics.md's table of the figures, between its markers: a row per figure, in the pages'
    order: its key, its `doc`, the marts it reads and the rules it needs to be measured
    (flows/figures/measured.py RULES)."""
    needed = needs()
    rows = [
        f"| `{f.key}{'[]' if f.is_list else ''}` | {' '.join(f.doc.split())}{_since(f.since)} | "
        f"{', '.join(f'`{mart}`' for mart in f.marts) or '-'} | {_needs(f.key, needed)} |"
        for f in FIGURES
    ]
    header = ["| key | content | marts | needs |", "| --- | --- | --- | --- |"]
    return "\n".join([TABLE_START, *header, *rows, TABLE_END])


def _needs(key: str, needed: dict[str, tuple[str, ...]]) -> str:
    """The rules a figure (`key`) or each of its parts needs, first the most basic; "-" for none."""
    parts = [
        (path.removeprefix(key), rules) for path, rules in needed.items() if path == key or path.startswith(f"{key}.")
    ]
    said = [f"{f'`{part}`: ' if part else ''}{', '.join(f'`{rule}`' for rule in rules)}" for part, rules in parts]
    return "; ".join(said) or "-"


def _since(version: int) -> str:
    """A figure's note of the schema version that first wrote it, after version 3's (the first typed)."""
    return f" (since schema version {version})" if version > FIRST_TYPED_VERSION else ""


def metrics_doc_text(current: str) -> str:
    """docs/metrics.md (`current`) with its title's schema version and its figures' table written again."""
    table = re.compile(re.escape(TABLE_START) + ".*?" + re.escape(TABLE_END), re.S)
    if not table.search(current):
        raise ValueError(f"{METRICS_DOC_PATH}: the figures' table's markers are missing")
    titled = re.sub(
        r"\A# metrics\.json \(schema_version \d+\)", f"# metrics.json (schema_version {SCHEMA_VERSION})", current
    )
    return table.sub(lambda _: figures_table(), titled)


def exposures_text() -> str:
    """dbt_project/models/exposures.yml: the report's exposure over every mart the document reads."""
    figure_marts = [mart for figure in FIGURES for mart in figure.marts]
    marts = list(dict.fromkeys([*DOCUMENT_MARTS, *figure_marts]))
    exposure = {
        "name": "reliability_report",
        "label": "Reliability report of a period (a month or a study)",
        "type": "analysis",
        "maturity": "high",
        "description": EXPOSURE_DESCRIPTION,
        "depends_on": [f"ref('{mart}')" for mart in marts],
        "owner": {"name": "Cluster reliability maintainers"},
    }
    header = "# Written by `python -m flows.figures.derived` (flows/figures/derived.py): edit the declarations.\n"
    document = {"version": 2, "exposures": [exposure]}
    return header + yaml.dump(document, Dumper=_IndentedLists, sort_keys=False, width=100)


def derived_files() -> dict[Path, str]:
    """Each derived file -> its text as the declarations give it."""
    return {
        SCHEMA_PATH: schema_text(),
        METRICS_DOC_PATH: metrics_doc_text(METRICS_DOC_PATH.read_text()),
        EXPOSURES_PATH: exposures_text(),
    }


if __name__ == "__main__":  # python -m flows.figures.derived
    for path, text in derived_files().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
