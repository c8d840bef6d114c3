"""The study of two clusters over a continuous year (the paper's two r_f, 6.5 and 2.34 per 1000
node-days), built by one `reliability-report study` from nothing: each cluster's r_f interval
contains the rate its nodes failed at, the clusters are found to differ, the exports are a
Croissant dataset that validates, and running the study again sends nothing new."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import email_section
from lemon_history import NO_TESTS
from test_study_report import assert_reads_well, shown_pages

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month, month_range
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.publish.archive import without_nav
from flows.report.study_report import render_study
from flows.study import study_dir
from flows.warehouse import schema_version
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

FIRST, LAST = Month.parse("2025-11"), Month.parse("2026-10")
CLUSTERS = {"rsc1": (6.5, 61), "rsc2": (2.34, 62)}  # r_f per 1000 node-days, seed
NODES = 64


@pytest.fixture(scope="module")
def built(tmp_path_factory, smtp_server, webhook_server, fresh_warehouse) -> dict:
    """Both clusters' months landed and built in one dbt build each, as a backfill's land and dbt
    stages build them (the study reads nothing else; the models' data tests run in every other
    month build of the suite), but for the second cluster's last month, which the study must build
    itself, with the whole monthly pipeline; then the study, sent by email and (rsc1's config has a
    chat webhook) to the webhook, and the same study again."""
    work = tmp_path_factory.mktemp("study")
    truths, configs = {}, []
    for i, (cluster, (r_f, seed)) in enumerate(CLUSTERS.items()):
        params = SimParams(cluster, FIRST, last_month=LAST, nodes=NODES, seed=seed, r_f=r_f)
        truths[cluster] = simulate(params, work / "sim" / cluster)
        path = write_demo_config(work, cluster, work / "reports")
        path.write_text(
            path.read_text() + email_section(smtp_server.port) + (webhook_section(webhook_server) if i == 0 else "")
        )
        # two slots whose dbt parse other files' tests share (nothing else in this module empties them)
        fresh_warehouse(path, ("module", "test")[i])
        config = load_config(path)
        months = [m for m in month_range(FIRST, LAST) if (i, m) != (len(CLUSTERS) - 1, LAST)]
        done = dbt_command(config, {m: land_month(config, m) for m in months}, "build", *NO_TESTS)  # one build
        assert done.success, [r.message for r in done.result.results if str(r.status) != "success"]
        # as build_months records it: a warehouse without it is another version's to the study, which
        # then rebuilt the months just built, both clusters' (~9 of the file's ~107 CPU-s)
        schema_version.record(config.warehouse_path)
        configs.append(path)
    args = ["study", "--from", str(FIRST), "--to", str(LAST), "--send"]
    for config in configs:
        args += ["--config", str(config)]
    assert main(args) == 0
    first_send, first_posts = len(smtp_server.messages), list(webhook_server.posts)
    directory = study_dir(load_config(configs[0]), list(CLUSTERS), FIRST, LAST)
    first_metrics = (directory / "metrics.json").read_text()
    assert main(args) == 0  # again: the months and the study are built already, the figures sent
    return {
        "work": work,
        "truths": truths,
        "configs": dict(zip(CLUSTERS, configs, strict=True)),
        "dir": directory,
        "first_metrics": first_metrics,
        "sent": [first_send, len(smtp_server.messages)],
        "posts": [first_posts, list(webhook_server.posts)],
        "subjects": [m["Subject"] for m in smtp_server.parsed()],
    }


def webhook_section(webhook_server) -> str:
    """A `[webhook]` config section posting to the test's chat webhook on 127.0.0.1, retrying fast."""
    return f'\n[webhook]\nurl = "{webhook_server.url}"\nretry_wait_seconds = 0.01\n'


def study(built) -> dict:
    return json.loads((built["dir"] / "metrics.json").read_text())


def fleet_rate(built, cluster: str) -> float:
    """The rate the cluster's nodes failed at over the year (the simulator's faults over its
    fleet's node-days, per 1000): what the year's r_f estimates. (How often the interval contains
    the rate the faults were drawn at, over 20 seeds: bench/study_coverage.py.)"""
    months = built["truths"][cluster]["months"].values()
    return sum(m["fleet"]["node_failures"] for m in months) * 1000 / sum(m["fleet"]["node_days"] for m in months)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_each_clusters_r_f_interval_contains_its_truth(built, cluster):
    figures = study(built)["clusters"][cluster]
    assert figures["totals"]["months_built"] == 12
    r_f = figures["node_failure_rate"]["all"]
    truth = fleet_rate(built, cluster)
    assert r_f["lower"] <= truth <= r_f["upper"], (r_f, truth)
    assert r_f["failures"] >= 30  # a year gives the interval something to stand on


def test_the_clusters_are_found_to_differ(built):
    (pair,) = study(built)["comparison"]
    ratios = {r["measure"]: r for r in pair["ratios"]}
    assert pair["differ"] and ratios["r_f (all)"]["flagged"]
    truth = fleet_rate(built, pair["a"]) / fleet_rate(built, pair["b"])
    assert ratios["r_f (all)"]["lower"] <= truth <= ratios["r_f (all)"]["upper"]
    assert f"{pair['a']} and {pair['b']} differ" in study(built)["summary"]["text"]


def test_the_study_counts_the_years_failures_and_node_days(built):
    """The study's r_f counts are the year's: the simulator's rule failures and node-days summed
    over the twelve months, under both definitions."""
    for cluster, truth in built["truths"].items():
        for definition in ("paper", "all"):
            counted = study(built)["clusters"][cluster]["node_failure_rate"][definition]
            months = [m["r_f_per_1000_node_days"][definition] for m in truth["months"].values()]
            assert counted["failures"] == sum(m["rule_failures"] for m in months)
            assert counted["node_days"] == pytest.approx(sum(m["node_days"] for m in months), rel=1e-9)


def test_the_exports_are_a_croissant_dataset_that_validates(built):
    exports = built["dir"] / "exports"
    validate = Path(sys.executable).with_name("mlcroissant")
    done = subprocess.run(
        [str(validate), "validate", "--jsonld", str(exports / "croissant.json")], capture_output=True, text=True
    )
    assert done.returncode == 0 and "error" not in done.stderr.lower(), done.stderr
    described = json.loads((exports / "croissant.json").read_text())
    assert {r["name"] for r in described["recordSet"]} == {
        f"{c}_{t}" for c in CLUSTERS for t in ("failures", "node_days", "job_runs_ettr")
    }
    for cluster in CLUSTERS:
        failures = pq.read_table(exports / f"{cluster}_failures.parquet")
        assert failures.num_rows == study(built)["clusters"][cluster]["totals"]["infra_failures"]
        assert set(failures.column("month").to_pylist()) <= {str(m) for m in month_range(FIRST, LAST)}


def test_running_the_study_again_gives_the_same_study_and_sends_nothing(built):
    assert built["sent"] == [1, 1]
    assert built["subjects"] == ["Cluster reliability report: rsc1, study rsc1+rsc2 2025-11..2026-10"]
    assert (built["dir"] / "metrics.json").read_text() == built["first_metrics"]


def test_a_study_sent_to_a_webhook_links_its_own_report(built, webhook_server):
    """The chat message of a study linked `<reports>/<cluster>/<subject>/report.html`, a path that
    does not exist: studies are in `<reports>/studies/<name>/`. The fixture's study posted once (its
    run again posted nothing); resent with a report_url, the link is that base and the study's path.
    rsc1's config gets its own text back after the test, so the study's outputs stay those the
    other tests read."""
    rsc1, rsc2 = built["configs"]["rsc1"], built["configs"]["rsc2"]
    first, again = built["posts"]
    assert again == first
    (post,) = first
    link = post["text"].splitlines()[-1].removeprefix("Report: ")
    assert Path(link) == built["dir"] / "report.html" and Path(link).is_file()

    original = rsc1.read_text()
    args = ["study", "--from", str(FIRST), "--to", str(LAST), "--send", "--config", str(rsc1), "--config", str(rsc2)]
    try:
        rsc1.write_text(original + 'report_url = "https://r.example.org/{cluster}/{month}/"\n')
        assert main([*args, "--resend"]) == 0
        link = webhook_server.posts[-1]["text"].splitlines()[-1].removeprefix("Report: ")
        assert link == f"https://r.example.org/studies/{built['dir'].name}/"
    finally:
        rsc1.write_text(original)


def test_the_study_built_the_month_its_warehouse_lacked_and_archived_its_report(built):
    """rsc2's last month was not built: the study built it with the monthly pipeline (its report
    archived, not sent); the months already built got no report (nothing rebuilt them)."""
    reports = load_config(built["configs"]["rsc2"]).reports_dir / "rsc2"
    assert sorted(p.name for p in reports.iterdir()) == [str(LAST)]
    assert json.loads((reports / str(LAST) / "metrics.json").read_text())["month"] == str(LAST)


def test_a_range_that_is_empty_or_not_over_is_refused(built, capsys):
    config = str(built["configs"]["rsc1"])
    assert main(["study", "--from", "2026-10", "--to", "2026-09", "--config", config]) == 2
    assert "--from 2026-10 is after --to 2026-09" in capsys.readouterr().err
    future = Month.last_full().next().next()
    assert main(["study", "--from", "2026-10", "--to", str(future), "--config", config]) == 2


@pytest.mark.parametrize("width", [600, 375])
def test_the_years_study_reads_well_in_a_browser(built, browser, width, capsys):
    """The study as archived (rendered again from its metrics.json: the same bytes), and its email
    as a mail client shows it, in Chromium at a mail pane's and a phone's width."""
    report = render_study(json.loads((built["dir"] / "metrics.json").read_text()))
    assert report.html == without_nav((built["dir"] / "report.html").read_text())  # before its link to the index
    for name, path in shown_pages(report, built["work"] / "shown").items():
        assert_reads_well(browser, path, report, width, f"year-{name}-{width}px.png", capsys)


GOLDEN = Path(__file__).resolve().parent / "data" / "golden" / "reports"  # the outputs before issue 36's restructure


def golden_outputs(built) -> dict[str, str]:
    """The outputs a reader sees: the study's and the month the study built with the monthly
    pipeline, with the test's temporary directory written as <work>."""
    month_dir = load_config(built["configs"]["rsc2"]).reports_dir / "rsc2" / str(LAST)
    files = {f"study/{p.name}": p for p in sorted(built["dir"].iterdir()) if p.is_file()}
    files |= {f"month/{p.name}": p for p in sorted(month_dir.iterdir()) if p.is_file()}
    return {
        name: path.read_text().replace(str(built["work"]), "<work>")
        for name, path in files.items()
        if path.suffix in {".json", ".html", ".txt", ".prom", ".csv"}
    }


def test_the_reports_are_byte_identical_to_the_golden_outputs(built):
    """metrics.json, report.html, email.html and report.txt of the study and of a month are the
    bytes they were before issue 36's restructure (`UPDATE_GOLDEN=1` writes them again, for a
    deliberate change that the commit then names)."""
    outputs = golden_outputs(built)
    if os.environ.get("UPDATE_GOLDEN"):
        for name, text in outputs.items():
            (GOLDEN / name).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / name).write_text(text)
    expected = {str(p.relative_to(GOLDEN)): p.read_text() for p in sorted(GOLDEN.rglob("*")) if p.is_file()}
    assert sorted(outputs) == sorted(expected)
    changed = [name for name in outputs if outputs[name] != expected[name]]
    assert not changed
