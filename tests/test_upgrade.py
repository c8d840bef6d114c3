"""An upgrade keeps a site's history: a warehouse built by another version of the tool is rebuilt
from the landed months (flows/warehouse/schema_version.py), and a month sent by the version before
is not sent again when its figures did not change, whatever their keys are called now
(flows/delivery/fingerprint.py, flows/figures/moved_keys.py).

The quick tests read the golden month's metrics.json; the slow one builds a history with the code
of the commit before issue 43 (a git worktree of it) and runs this code over it."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from conftest import REPO_ROOT, email_section
from saved_month import saved_metrics

import flows.study
import flows.warehouse.build
from flows.config.file import load_config
from flows.core.months import Month
from flows.delivery.deliver import EMAIL, _kind, _unchanged
from flows.delivery.fingerprint import Figures, digests, fingerprint_v2, same_figures
from flows.delivery.sent_log import SENT, SentLog, SentRecord
from flows.demo import write_demo_config
from flows.figures import moved_keys
from flows.warehouse import schema_version
from flows.warehouse.build import build_months
from simulator import SimParams, simulate

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


def saved_v2() -> dict:
    """The golden month's metrics.json as the version before wrote it (schema version 2)."""
    return {**saved_metrics(), "schema_version": 2}


def compared(metrics: dict, before: dict | None = None) -> Figures:
    """The figures of a metrics.json's JSON as delivery compares them (`before`: the JSON of the report
    in place): their digests, with no message (flows/delivery/fingerprint.py digests)."""
    return Figures(**digests(metrics, before), headline={}, lines=[])


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
    v2 = saved_v2()
    got = moved_keys.moved(v2)
    assert got["figures"]["totals"] == v2["totals"] and "totals" not in got
    assert [row["cause"] for row in got["failures_by_cause"]] == [row["category"] for row in v2["failures_by_cause"]]
    assert saved_v2() == v2  # a copy: the document read is as it was
    assert moved_keys.moved(as_v3(v2)) == as_v3(v2)  # a version 3 document has the new paths already


def test_the_same_figures_under_moved_keys_are_the_same_and_a_changed_number_is_not(moves):
    v2 = saved_v2()
    assert same_figures(v2, as_v3(v2))
    changed = as_v3(v2)
    changed["figures"]["totals"]["infra_failures"] += 1
    assert not same_figures(v2, changed)
    longer = as_v3(v2)
    longer["failures_by_cause"].append(copy.deepcopy(longer["failures_by_cause"][0]))  # a row more
    assert not same_figures(v2, longer)
    assert not same_figures(as_v3(v2), {**as_v3(v2), "node_repair": {"mean_hours": 5.6, "rows": [1, 2]}})


def test_a_month_the_version_before_sent_is_not_sent_again_when_its_figures_did_not_change(moves, tmp_path):
    v2 = saved_v2()
    record = sent_record(v2)  # v2: the report that was sent, in place
    new = compared(as_v3(v2), before=v2)
    assert new.fingerprint != record.figures_hash and new.carries(record.figures_hash)
    assert _unchanged(record, new, EMAIL, resend=False).startswith("not emailed again: these figures went to")
    assert compared(v2).carries(record.figures_hash)  # the report in place is what was sent

    changed = as_v3(v2)
    changed["figures"]["totals"]["infra_failures"] += 1
    figures = compared(changed, before=v2)
    assert not figures.carries(record.figures_hash)
    assert _unchanged(record, figures, EMAIL, resend=False) is None and _kind(record, figures) == "correction"

    other = {**v2, "totals": {**v2["totals"], "attempts": 1}}
    assert not compared(as_v3(v2), before=other).carries(record.figures_hash)


def test_the_fingerprint_ignores_the_schema_version_and_how_a_whole_number_is_written(tmp_path):
    v2 = saved_v2()
    v3 = {**v2, "schema_version": 3, "totals": {k: float(v) if type(v) is int else v for k, v in v2["totals"].items()}}
    assert fingerprint_v2(v2) != fingerprint_v2(v3)
    assert compared(v2).fingerprint == compared(v3).fingerprint


MONTH = Month.parse("2026-10")


@pytest.mark.parametrize("recorded", [None, "0123456789ab"], ids=["no schema version", "another schema version"])
def test_a_warehouse_another_version_built_is_kept_aside_and_rebuilt(tmp_path, monkeypatch, caplog, recorded):
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    built: list[str] = []

    # dbt replaced: the slow test builds
    def build(config, months: dict[Month, Path], load_seeds: bool = True) -> dict[str, int]:
        duckdb.connect(str(config.warehouse_path)).close()
        built.extend(str(month) for month in months)
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

    assert build_months(config, {MONTH: tmp_path / "landed"}) == {"success": 1}
    (aside,) = warehouse.parent.glob("c.duckdb.previous-*")
    why = f"schema version {recorded}, tool " if recorded else "it records no schema version"
    assert f"warehouse {warehouse} built by another version of the tool ({why}" in caplog.text
    assert f"kept aside as {aside.name}; rebuilding it" in caplog.text
    with duckdb.connect(str(aside), read_only=True) as con:  # nothing of the old warehouse lost
        assert con.execute("SELECT attempts FROM fct_attempts").fetchall() == [(1,)]
    assert schema_version.recorded(warehouse)[:2] == (schema_version.schema_version(), schema_version.tool_version())

    caplog.clear()
    build_months(config, {MONTH: tmp_path / "landed"})  # built by this version: built, not rebuilt
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
    (project / "models/marts/a.sql~").write_text("select 3")  # an editor's backup
    assert schema_version.schema_version(project) == first
    (project / "seeds/t.csv").write_text("a\n1\n")
    assert schema_version.schema_version(project) != first


VERSION_BEFORE = "3df86e2"  # the commit before issue 43 (bench/README.md: the test command's time at f70f6e9)
FIRST, SENT_MONTH = "2026-09", "2026-10"


@pytest.fixture
def version_before(tmp_path) -> Iterator[Path]:
    """A checkout of the commit before issue 43 (a git worktree of it), removed after the test. A copy
    without that history (an sdist, a shallow clone) skips the test: .ci/run tests a clone."""
    git = ["git", "-C", str(REPO_ROOT)]
    if subprocess.run([*git, "cat-file", "-e", f"{VERSION_BEFORE}^{{commit}}"], capture_output=True).returncode:
        pytest.skip(f"needs the git history back to {VERSION_BEFORE} (this checkout is not a clone of it)")
    checkout = tmp_path / "version-before"
    subprocess.run(
        [*git, "worktree", "add", "--detach", str(checkout), VERSION_BEFORE], check=True, capture_output=True
    )
    try:
        yield checkout
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(checkout)], capture_output=True)
        subprocess.run([*git, "worktree", "prune"], capture_output=True)


def command(checkout: Path, *args: str) -> str:
    """A command of the tool checked out in `checkout`, run with this project's Python; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli", *args],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout), "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    return out


def test_a_count_a_reader_added_is_no_changed_figure_but_a_changed_count_is():
    """Issue 50's readers count what they skip (files_quarantined, joined_lines...): a month built
    before and run again shows the same figures, so it is not emailed again."""
    before = json.loads((Path(__file__).parent / "data" / "golden" / "reports" / "month" / "metrics.json").read_text())
    after = copy.deepcopy(before)
    for stats in after["inputs"].values():
        stats["files_quarantined"] = 0
    assert same_figures(before, after)
    recounted = copy.deepcopy(after)
    next(iter(recounted["inputs"].values()))["records"] += 1
    assert not same_figures(before, recounted)
    assert not same_figures(after, before)  # a count gone is a change


@pytest.mark.slow
def test_a_history_the_version_before_built_and_sent_is_taken_over(version_before, smtp_server, tmp_path):
    work = tmp_path / "site"
    work.mkdir()
    config = write_demo_config(work, "up", work / "reports")
    config.write_text(config.read_text() + email_section(smtp_server.port))
    simulate(
        SimParams("up", Month.parse(FIRST), last_month=Month.parse(SENT_MONTH), nodes=24, seed=5), work / "sim" / "up"
    )
    command(version_before, "backfill", "--from", FIRST, "--to", SENT_MONTH, "--config", str(config))
    (sent,) = smtp_server.parsed()  # the backfill emails its last month
    assert sent["Subject"] == f"Cluster reliability report: up, {SENT_MONTH}"
    reports = {m: json.loads((work / "reports" / "up" / m / "metrics.json").read_text()) for m in (FIRST, SENT_MONTH)}
    sent_log = work / "data" / "delivery" / "up.jsonl"
    records = SentLog(sent_log).records()
    warehouse = work / "warehouse" / "up.duckdb"

    shutil.rmtree(work / "sim" / "up" / FIRST)  # the raw logs of a month built before are not needed again
    out = command(REPO_ROOT, "run", "--month", SENT_MONTH, "--config", str(config))
    (aside,) = warehouse.parent.glob("up.duckdb.previous-*")
    assert f"warehouse {warehouse} built by another version of the tool (it records no schema version" in out
    assert f"kept aside as {aside.name}; rebuilding it from the 2 landed months" in out
    # nothing the message showed changed (the figures it did not show may have: the version before
    # counted some of them otherwise), so it is not sent again
    assert "not emailed again: every figure it shows is as sent to 1 recipient" in out, out[-4000:]
    assert len(smtp_server.messages) == 1  # nothing sent again
    assert SentLog(sent_log).records() == records  # the sent-log as it was
    new = json.loads((work / "reports" / "up" / SENT_MONTH / "metrics.json").read_text())
    headline = [(h["key"], h["value"]) for h in new["summary"]["headline"]]  # the figures the message opens with
    assert headline == [(h["key"], h["value"]) for h in reports[SENT_MONTH]["summary"]["headline"]]
    for month in (FIRST, SENT_MONTH):  # every report still there
        assert (work / "reports" / "up" / month / "report.html").is_file()
    assert (work / "reports" / "index.html").is_file()
    built = schema_version.recorded(warehouse)
    assert built is not None and built[0] == schema_version.schema_version()
    with duckdb.connect(str(warehouse), read_only=True) as con:  # both months rebuilt from their landed Parquet
        months = con.execute("SELECT DISTINCT month FROM fct_attempts ORDER BY month").fetchall()
    assert [m for (m,) in months] == [FIRST, SENT_MONTH]


def test_a_study_of_a_warehouse_another_version_built_rebuilds_it_first(tmp_path, monkeypatch, caplog):
    """A study builds no month: what it reads of a warehouse another version built is rebuilt first
    from the landed months (flows/warehouse/build.py upgrade), the old file kept aside."""
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    built: list[str] = []

    # dbt replaced: the slow test builds
    def build(config, months: dict[Month, Path], load_seeds: bool = True) -> dict[str, int]:
        with duckdb.connect(str(config.warehouse_path)) as con:
            con.execute("CREATE TABLE fct_months_built AS SELECT ? AS month", [str(MONTH)])
        built.extend(str(month) for month in months)
        return {"success": 1}

    monkeypatch.setattr(flows.warehouse.build, "_build", build)
    monkeypatch.setattr(flows.warehouse.build, "check_landed", lambda landed_dir, tables: None)
    (config.data_dir / "landed" / "c" / str(MONTH)).mkdir(parents=True)
    warehouse = config.warehouse_path
    warehouse.parent.mkdir(parents=True)
    with duckdb.connect(str(warehouse)) as con:  # the version before's, recording no schema version
        con.execute("CREATE TABLE fct_attempts AS SELECT 1 AS attempts")

    assert flows.study.built_months(config, MONTH, MONTH) == {MONTH}
    assert built == [str(MONTH)] and len(list(warehouse.parent.glob("c.duckdb.previous-*"))) == 1
    assert schema_version.recorded(warehouse)[0] == schema_version.schema_version()
    assert flows.study.built_months(config, MONTH, MONTH) == {MONTH} and built == [str(MONTH)]  # now current
