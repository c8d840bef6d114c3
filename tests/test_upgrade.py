"""An upgrade keeps a site's history: a warehouse built by another version of the tool is rebuilt
from the landed months (flows/warehouse/schema_version.py), and a month sent by the version before
is not sent again when its figures did not change, whatever their keys are called now
(flows/delivery/fingerprint.py, flows/figures/moved_keys.py).

The quick tests read the golden month's metrics.json; the slow one builds a history with the code
of the commit before issue 43 (a git worktree of it) and runs this code over it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import duckdb
import pytest
from saved_month import saved_metrics

import flows.warehouse.build
from flows.core.config_file import load_config
from flows.core.months import Month
from flows.delivery.deliver import EMAIL, _kind, _unchanged
from flows.delivery.fingerprint import Figures, fingerprint_v2, same_figures
from flows.delivery.sent_log import SENT, SentRecord
from flows.demo import write_demo_config
from flows.figures import moved_keys
from flows.warehouse import schema_version
from flows.warehouse.build import build_month

# what the quick tests move: a top-level key into an object, and a key of every row of a list
MOVES = {"totals": "figures.totals", "failures_by_cause.category": "failures_by_cause.cause"}


def as_v3(metrics: dict) -> dict:
    """`metrics` (schema version 2) as a version 3 tool would write the same figures under MOVES:
    the keys moved, the schema version bumped, whole numbers written as floats, a new figure."""
    v3 = copy.deepcopy(metrics)
    v3["figures"] = {"totals": {k: float(v) if type(v) is int else v for k, v in v3.pop("totals").items()}}
    for row in v3["failures_by_cause"]:
        row["cause"] = row.pop("category")
    v3["schema_version"] = 3
    v3["node_repair"] = {"mean_hours": 5.5, "rows": [1, 2]}  # a figure the version before did not have
    return v3


def report(directory: Path, metrics: dict) -> Path:
    directory.mkdir(parents=True)
    (directory / "metrics.json").write_text(json.dumps(metrics))
    return directory


def sent_record(metrics: dict) -> SentRecord:
    """The sent-log record the version before wrote when it emailed `metrics` (its fingerprint scheme)."""
    return SentRecord(
        cluster="rsc2",
        month="2026-10",
        status=SENT,
        figures_hash=fingerprint_v2(metrics),
        message_id="<1@example.org>",
        recipients=("ops@example.org",),
        subject="Cluster reliability report: rsc2, 2026-10",
        kind="report",
        time="2026-11-02T06:00:00+00:00",
    )


@pytest.fixture
def moves(monkeypatch) -> None:
    monkeypatch.setattr(moved_keys, "MOVED_KEYS", MOVES)


def test_moved_keys_move_a_key_and_the_key_of_every_row(moves):
    v2 = saved_metrics()
    got = moved_keys.moved(v2)
    assert got["figures"]["totals"] == v2["totals"] and "totals" not in got
    assert [row["cause"] for row in got["failures_by_cause"]] == [row["category"] for row in v2["failures_by_cause"]]
    assert saved_metrics() == v2  # a copy: the document read is as it was
    assert moved_keys.moved(as_v3(v2)) == as_v3(v2)  # a version 3 document has the new paths already


def test_the_same_figures_under_moved_keys_are_the_same_and_a_changed_number_is_not(moves):
    v2 = saved_metrics()
    assert same_figures(v2, as_v3(v2))
    changed = as_v3(v2)
    changed["figures"]["totals"]["infra_failures"] += 1
    assert not same_figures(v2, changed)
    longer = as_v3(v2)
    longer["failures_by_cause"].append(copy.deepcopy(longer["failures_by_cause"][0]))  # a row more
    assert not same_figures(v2, longer)
    assert not same_figures(as_v3(v2), {**as_v3(v2), "node_repair": {"mean_hours": 5.6, "rows": [1, 2]}})


def test_a_month_the_version_before_sent_is_not_sent_again_when_its_figures_did_not_change(moves, tmp_path):
    v2 = saved_metrics()
    record = sent_record(v2)
    in_place = report(tmp_path / "reports" / "rsc2" / "2026-10", v2)  # the report that was sent
    new = Figures.of(report(tmp_path / "staged", as_v3(v2)), in_place=in_place)
    assert new.fingerprint != record.figures_hash and new.carries(record.figures_hash)
    assert _unchanged(record, new, EMAIL, resend=False).startswith("not emailed again: these figures went to")
    assert Figures.of(in_place).carries(record.figures_hash)  # the report in place is what was sent

    changed = as_v3(v2)
    changed["figures"]["totals"]["infra_failures"] += 1
    figures = Figures.of(report(tmp_path / "changed", changed), in_place=in_place)
    assert not figures.carries(record.figures_hash)
    assert _unchanged(record, figures, EMAIL, resend=False) is None and _kind(record, figures) == "correction"

    other = report(tmp_path / "rebuilt" / "2026-10", {**v2, "totals": {**v2["totals"], "attempts": 1}})
    assert not Figures.of(report(tmp_path / "again", as_v3(v2)), in_place=other).carries(record.figures_hash)


def test_the_fingerprint_ignores_the_schema_version_and_how_a_whole_number_is_written(tmp_path):
    v2 = saved_metrics()
    v3 = {**v2, "schema_version": 3, "totals": {k: float(v) if type(v) is int else v for k, v in v2["totals"].items()}}
    assert fingerprint_v2(v2) != fingerprint_v2(v3)
    assert Figures.of(report(tmp_path / "v2", v2)).fingerprint == Figures.of(report(tmp_path / "v3", v3)).fingerprint


MONTH = Month.parse("2026-10")


@pytest.mark.parametrize("recorded", [None, "0123456789ab"], ids=["no schema version", "another schema version"])
def test_a_warehouse_another_version_built_is_kept_aside_and_rebuilt(tmp_path, monkeypatch, caplog, recorded):
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    built: list[str] = []

    def build(config, month: Month, landed_dir: Path) -> dict[str, int]:  # dbt replaced: the slow test builds
        duckdb.connect(str(config.warehouse_path)).close()
        built.append(str(month))
        return {"success": 1}

    monkeypatch.setattr(flows.warehouse.build, "_build", build)
    warehouse = config.warehouse_path
    warehouse.parent.mkdir(parents=True)
    with duckdb.connect(str(warehouse)) as con:  # as the version before left it, with a mart
        con.execute("CREATE TABLE fct_attempts AS SELECT 1 AS attempts")
    if recorded:
        schema_version.record(warehouse)
        with duckdb.connect(str(warehouse)) as con:
            con.execute(f"UPDATE {schema_version.TABLE} SET schema_version = ?", [recorded])

    assert build_month(config, MONTH, tmp_path / "landed") == {"success": 1}
    (aside,) = warehouse.parent.glob("c.duckdb.previous-*")
    why = f"schema version {recorded}, tool " if recorded else "it records no schema version"
    assert f"warehouse {warehouse} built by another version of the tool ({why}" in caplog.text
    assert f"kept aside as {aside.name}; rebuilding it" in caplog.text
    with duckdb.connect(str(aside), read_only=True) as con:  # nothing of the old warehouse lost
        assert con.execute("SELECT attempts FROM fct_attempts").fetchall() == [(1,)]
    assert schema_version.recorded(warehouse)[:2] == (schema_version.schema_version(), schema_version.tool_version())

    caplog.clear()
    build_month(config, MONTH, tmp_path / "landed")  # built by this version: built, not rebuilt
    assert built == [str(MONTH)] * 2 and "rebuilding" not in caplog.text
    assert len(list(warehouse.parent.glob("c.duckdb.*"))) == 1


def test_the_schema_version_is_a_digest_of_the_dbt_project(tmp_path):
    project = tmp_path / "dbt_project"
    for part in ("models/marts", "macros", "seeds"):
        (project / part).mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: x\n")
    (project / "models/marts/a.sql").write_text("select 1")
    first = schema_version.schema_version(project)
    (project / "analyses").mkdir()
    (project / "analyses/b.sql").write_text("select 2")  # not part of the warehouse's schema
    assert schema_version.schema_version(project) == first
    (project / "seeds/t.csv").write_text("a\n1\n")
    assert schema_version.schema_version(project) != first
