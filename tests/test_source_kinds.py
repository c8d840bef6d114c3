"""Each source kind is declared once (flows/ingest/sources/registry.py; that no other module lists
kinds: tests/test_architecture.py) and everything else reads it: every kind's reader is a real
import, every landed source name is one the failure taxonomy has rules for, the landed-events suite
allows exactly the declared names, and the seed dbt reads them from is the declarations' (a quick
test: no dbt, no landing)."""

from __future__ import annotations

import csv
from typing import Literal

from flows import DBT_PROJECT_DIR, EXPECTATIONS_DIR
from flows.ingest.sources.registry import (
    LANDED_SOURCES,
    LANDED_SOURCES_SEED,
    SOURCE_KINDS,
    URL_KINDS,
    URL_SETTINGS,
    given_input,
    landed_source,
    landed_sources_csv,
)
from flows.ingest.sources.servers import UrlSource
from flows.ingest.sources.source_kind import SIGNALS
from flows.ingest.sources.tables import TABLES, column_names
from flows.quality.suites import suite_specs

TAXONOMY = DBT_PROJECT_DIR / "seeds" / "failure_taxonomy.csv"


def taxonomy_sources() -> set[str]:
    with TAXONOMY.open() as handle:
        return {row["source"] for row in csv.DictReader(handle)}


def test_each_kind_has_a_reader_that_imports_a_table_and_a_landed_source_the_taxonomy_knows() -> None:
    for kind, k in SOURCE_KINDS.items():
        assert k.kind == kind and k.table in TABLES, kind
        if k.reads in ("command", "url"):  # pulled now, then read by the file kind it provides
            assert callable(k.pull) and k.pulled_file and not k.reader, kind
            provided = SOURCE_KINDS[k.provides]
            assert provided.reads == "file" and provided.table == k.table and not k.source, kind
            assert (k.reads == "url") == callable(k.probe), kind
        else:
            assert callable(k.reader) and k.reader.__module__.startswith("flows.ingest.sources."), kind
            assert not k.pull and (k.provides == "" or SOURCE_KINDS[k.provides].table == k.table), kind
        for part in (k.stats, k.check):
            assert part is None or callable(part), kind
        if k.table == "attempts":
            assert not landed_source(kind) and k.signal is None, kind  # the job records are no node signal
        else:
            assert landed_source(kind) in taxonomy_sources() and SOURCE_KINDS[given_input(kind)].signal in SIGNALS, kind


def test_each_url_kind_declares_its_settings() -> None:
    assert set(URL_SETTINGS) == set(URL_KINDS) == {"prometheus_dcgm", "slurmrestd"}
    for kind, settings in URL_SETTINGS.items():
        assert issubclass(settings, UrlSource) and settings.model_fields["kind"].annotation == Literal[kind]


def test_the_taxonomy_has_rules_for_declared_sources_only() -> None:
    assert taxonomy_sources() == set(LANDED_SOURCES)


def test_the_kinds_of_one_landed_source_agree_and_a_table_without_a_source_column_has_one() -> None:
    for source, landed in LANDED_SOURCES.items():
        declared = {
            (k.table, k.signal, k.gpu_report, k.lemon_signal) for k in SOURCE_KINDS.values() if k.source == source
        }
        assert declared == {tuple(landed)}
    for table in {landed.table for landed in LANDED_SOURCES.values()} - {"health_checks"}:
        assert "source" not in column_names(TABLES[table])  # its rows' source is the one declared for it
        assert len([source for source, landed in LANDED_SOURCES.items() if landed.table == table]) == 1, table


def test_the_seed_of_landed_sources_is_the_declarations() -> None:
    assert LANDED_SOURCES_SEED.read_text() == landed_sources_csv(), (
        "a declaration changed: write the seed again with `.venv/bin/python -m flows.ingest.sources.registry`"
    )


def test_the_landed_events_suite_allows_the_declared_sources() -> None:
    specs = {spec["name"]: spec for _, spec in suite_specs(EXPECTATIONS_DIR, landed=True)}
    (in_set,) = [
        e for e in specs["landed_health_events"]["expectations"] if e["type"] == "expect_column_values_to_be_in_set"
    ]
    assert in_set["kwargs"]["value_set"] == list(LANDED_SOURCES)
    assert "{landed_dir}" in specs["landed_health_events"]["meta"]["query"]
