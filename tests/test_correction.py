"""A month already sent goes out again only when a figure its message shows changed, and the
correction names the real cause (from what the figures were made from) and lists each changed figure
with its old and new value (flows/delivery/correction.py). Rendered from the golden month's
metrics.json: no month is built, no server started."""

import copy
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from saved_month import SAVED_MONTH, saved_metrics

from flows.delivery import correction
from flows.delivery.deliver import EMAIL, WEBHOOK, _kind, _unchanged, correction_notice
from flows.delivery.fingerprint import SECTION_NAMES, Figures, written_figures
from flows.delivery.sent_log import SENT, SentRecord
from flows.report.render import write_report

GOLDEN = Path(__file__).parent / "data" / "golden" / "reports"

pytestmark = pytest.mark.usefixtures("without_charts")


def rendered(directory: Path, metrics: dict) -> Figures:
    directory.mkdir(parents=True)
    write_report(directory, metrics)
    return Figures.of(directory)


@pytest.fixture(scope="module")
def sent(tmp_path_factory) -> SentRecord:
    """The golden month as it was sent: its sent-log record."""
    figures = rendered(tmp_path_factory.mktemp("sent") / "2026-10", saved_metrics())
    return SentRecord(
        cluster="rsc2",
        month="2026-10",
        status=SENT,
        figures_hash=figures.fingerprint,
        message_id="<1@example.org>",
        recipients=("ops@example.org",),
        subject="Cluster reliability report: rsc2, 2026-10",
        kind="report",
        figures=figures.headline,
        sections=figures.sections,
        shown=figures.shown,
        basis=figures.basis,
        time="2026-11-02T06:00:00+00:00",
    )


def test_the_sent_log_keeps_the_figures_the_message_shows(sent):
    shown = list(sent.shown.values())
    assert "Infrastructure failures 4 of 6,752 GPU attempts" in shown
    assert any(text.startswith("MTTF by job size: 64 | 1,300 | 2 | 27.1 d 7.5 d – 223.6 d") for text in shown)  # a row
    assert not any("--config" in text or "lemon_p_value" in text for text in shown)  # how it was made: not figures
    assert sent.basis["inputs"]["sacct_psv"]["records"] == 6752 and sent.basis["taxonomy"]
    assert sorted(sent.basis["months_built"]) == [m["month"] for m in saved_metrics()["history"]["monthly"][:-1]]


def test_a_change_no_figure_of_the_message_shows_sends_nothing(sent, tmp_path):
    """What re-sent a month as a "Correction" with the same visible figures: metrics that differ
    only where the message shows nothing (here an earlier month's node-days, drawn in no text)."""
    metrics = saved_metrics()
    metrics["history"]["monthly"][0]["all"]["node_days"] += 0.001
    figures = rendered(tmp_path / "2026-10", metrics)
    assert figures.fingerprint != sent.figures_hash  # the figures differ ...
    skipped = _unchanged(sent, figures, EMAIL, resend=False)  # ... but not what the message shows
    assert skipped and skipped.startswith("not emailed again: every figure it shows is as sent to 1 recipient on")
    assert _kind(sent, figures) == "resend"  # --resend sends it as it is, not as a correction


def test_a_reworded_report_is_no_change():
    old = {"s § Lost goodput # GPU-hours": "Lost goodput 260 GPU-hours"}
    new = {"s § Goodput lost: # GPU-hours": "Goodput lost: 260 GPU-hours"}
    assert correction.changed_figures(old, new) == []
    assert correction.changed_figures(old, {"s § Lost goodput # GPU-hours": "Lost goodput 300 GPU-hours"}) == [
        ("Lost goodput 260 GPU-hours", "Lost goodput 300 GPU-hours")
    ]


def test_late_records_name_their_input_and_list_the_figures_old_and_new(sent, tmp_path):
    metrics = saved_metrics()
    metrics["inputs"]["sacct_psv"].update(records=6800, sha256="0" * 64)
    metrics["lost_goodput"]["lost_gpu_hours"] = 300.0
    next(h for h in metrics["summary"]["headline"] if h["key"] == "lost_goodput")["value"] = 300.0
    figures = rendered(tmp_path / "2026-10", metrics)
    assert _unchanged(sent, figures, EMAIL, resend=False) is None and _kind(sent, figures) == "correction"
    notice = correction_notice(sent, figures)
    assert notice.startswith(
        "Correction: this report replaces the one sent on 2026-11-02, because the landed sacct_psv records "
        "changed (6,752 records → 6,800 records: late records?). Changed figures: "
    )
    assert "Lost goodput 260 → 300 GPU-hours" in notice
    assert "Late accounting records or an edited failure taxonomy" not in notice  # no stock reason


def test_an_earlier_month_built_for_the_first_time_is_the_cause_it_names(sent, tmp_path):
    metrics = saved_metrics()
    earlier = copy.deepcopy(metrics["history"]["monthly"][0])
    earlier["month"] = "2025-10"
    metrics["history"]["monthly"].insert(0, earlier)
    metrics["history"]["earlier_months_missing"] = []
    metrics["totals"]["attempts"] += 0  # nothing else changed
    figures = rendered(tmp_path / "2026-10", metrics)
    cause = correction.causes(sent.basis, figures.basis)
    assert cause == ["2025-10 was built for the first time"]


def test_a_taxonomy_or_config_edit_is_named(sent, monkeypatch):
    basis = copy.deepcopy(sent.basis)
    basis["parameters"]["lost_work_cap_minutes"] = 240.0
    basis["taxonomy"] = "another"
    assert correction.causes(sent.basis, basis) == [
        "the failure taxonomy was edited",
        "the config's [analysis] changed (lost_work_cap_minutes 30.0 → 240.0)",
    ]


def test_a_record_sent_before_the_shown_figures_were_kept_still_gets_a_correction(sent, tmp_path):
    old = SentRecord(**{**sent.__dict__, "shown": {}, "basis": {}})
    shutil.copytree(SAVED_MONTH, tmp_path / "copy")
    metrics = saved_metrics()
    metrics["totals"]["infra_failures"] += 2
    next(h for h in metrics["summary"]["headline"] if h["key"] == "infra_failures")["value"] += 2
    figures = rendered(tmp_path / "2026-10", metrics)
    assert _kind(old, figures) == "correction"
    notice = correction_notice(old, figures)
    assert "Infrastructure failures 4 → 6" in notice and "changed: totals" in notice
    assert "was not recorded when it was sent" in notice


def test_a_chat_message_is_corrected_only_when_its_own_figures_change(sent, tmp_path):
    """The chat message shows the summary and the headline figures (and links the report): a
    changed job-mix row corrects the email, not the chat message."""
    figures = rendered(tmp_path / "a" / "2026-10", saved_metrics())
    posted = replace(sent, channel=WEBHOOK, recipients=(), shown=figures.shown_by(WEBHOOK))
    assert "Infrastructure failures: 4 of 6,752 GPU attempts" in posted.shown.values()
    metrics = saved_metrics()
    metrics["job_mix"][0]["attempts"] += 1
    figures = rendered(tmp_path / "b" / "2026-10", metrics)
    assert _unchanged(sent, figures, EMAIL, resend=False) is None  # the email's table row changed
    assert _unchanged(posted, figures, WEBHOOK, resend=False).startswith("not posted again: every figure it shows")


def test_a_paragraph_that_says_how_figures_are_made_shows_no_figure():
    """A note of class `method` (the paper's figure a table reproduces) is no figure: a version that
    adds or rewords one sends no correction; a note with a figure is one."""
    html = (
        "<h2>MTTF by job size</h2><p class='note method'>As the paper's Fig. 7: exact 95% intervals.</p>"
        "<p class='note'>Health events this month: 12.</p>"
    )
    assert list(correction.shown_figures(html).values()) == ["Health events this month: 12."]


def test_a_table_row_that_says_more_is_no_change_but_one_that_says_otherwise_is():
    """Issue 50's readers count more (files_quarantined, joined_lines...): an input's row of the
    data-quality table gains notes, each figure it showed still there, and sends nothing."""
    row = "<h2>Data quality</h2><table><tr><td>dcgm_health_dir</td><td>{rows}</td><td>{notes}</td></tr>{more}</table>"
    sent = row.format(
        rows=4, notes="files: 12; healthy files: 8; incidents: 4", more="<tr><td>events</td><td>8</td></tr>"
    )
    more = "files: 12; files with incidents: 4; healthy files: 8; incidents: 4"
    events = "<tr><td>events</td><td>8</td><td>cluster records: 1; events: 8; rows: 9</td></tr>"
    says_more = row.format(rows=4, notes=more, more=events)
    assert correction.changed_figures(correction.shown_figures(sent), correction.shown_figures(says_more)) == []
    otherwise = row.format(rows=5, notes=more, more=events)
    assert correction.changed_figures(correction.shown_figures(sent), correction.shown_figures(otherwise)) != []


@pytest.mark.parametrize("kind", ["month", "study"])
def test_a_correction_has_a_name_for_every_part_of_a_report(kind):
    """Every part of a golden month's and study's metrics.json that a correction can name as changed
    (fingerprint.SECTION_NAMES), but what says which report it is."""
    metrics = json.loads((GOLDEN / kind / "metrics.json").read_text())
    identity = {"cluster", "month", "from_month", "to_month", "months"}
    assert sorted(set(written_figures(metrics)) - identity - set(SECTION_NAMES)) == []
