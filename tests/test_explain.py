"""`explain` and `node` without a warehouse: job ids, node names and the words of each outcome's rule."""

import re
from pathlib import Path

import pytest

from flows.core.errors import UsageError
from flows.explain.job_ids import job_query
from flows.explain.node import checked_node
from flows.explain.rules import outcome_rule

FCT_ATTEMPTS = Path(__file__).resolve().parents[1] / "dbt_project" / "models" / "marts" / "fct_attempts.sql"


@pytest.mark.parametrize(
    ("text", "whole", "names"),
    [
        ("123", True, [("123", "123"), ("123_4", "127"), ("123+1", "124")]),
        ("123_4", False, [("123_4", "127")]),
        ("127", True, [("123_4", "127")]),
        ("123+1", False, [("123+1", "124")]),
    ],
)
def test_a_job_is_named_as_sacct_prints_it(text, whole, names):
    query = job_query(text)
    assert query.whole_job is whole
    assert all(query.names(job_id, raw) for job_id, raw in names)
    assert not query.names("1234", "1234") and not query.names("12_3", "15")


@pytest.mark.parametrize("text", ["", "12a", "-1", "123_", "1_2_3", "123;id", "$(reboot)", "1" * 19, "123\n4"])
def test_a_malformed_job_id_is_refused_before_anything_runs(text):
    with pytest.raises(UsageError, match="not a Slurm job id"):
        job_query(text)


@pytest.mark.parametrize("text", ["gpu[1-2]", "a b", "-x", "$(id)", "@group", "x" * 300])
def test_a_node_name_is_one_host_name(text):
    with pytest.raises(UsageError, match="not a node's name"):
        checked_node(text)


def test_every_outcome_fct_attempts_gives_has_its_rule_in_words():
    """The outcomes of fct_attempts' case (the rule) each have their own words (flows/explain/rules.py)."""
    outcomes = set(re.findall(r"(?:then|else) '([a-z_]+)'", FCT_ATTEMPTS.read_text()))
    assert {"open", "infra_failed", "completed", "failed", "oom", "preempted", "requeued", "timeout", "cancelled",
            "deadline", "unknown"} <= outcomes  # fmt: skip
    said = {o: outcome_rule("X", o, False, None, 10, 5, True) for o in outcomes}
    assert len(set(said.values())) == len(outcomes)
    assert "not one the taxonomy knows" not in "".join(v for o, v in said.items() if o != "unknown")
    marked = outcome_rule("REQUEUED", "requeued", False, "note; requeue=admin", 10, 5, True)
    assert "an admin" in marked and "never the infrastructure's" in marked
    unseen = outcome_rule("FAILED", "failed", False, None, 10, 5, False)
    assert "no health or node source was landed" in unseen and "not measured" in unseen


def test_the_report_links_the_explanations_and_the_email_only_where_the_archive_has_a_url():
    """report.html links explained.html (and each lemon candidate's page) beside it; the email links
    them under [paths] archive_url, and without one names no page (a relative link in an email
    leads nowhere)."""
    import json

    from saved_month import SAVED_MONTH

    from flows.figures.read import month_document
    from flows.report.render import render_pages

    metrics = json.loads((SAVED_MONTH / "metrics.json").read_text())
    document = month_document(metrics)
    html, email, text = render_pages({}, document)
    assert 'href="explained.html"' in html and "explained.html" not in email
    for c in document.lemon_nodes.candidates:
        assert f'href="nodes/{c.node}.html"' in html
    assert "explained.html, beside this report" in text
    _, email, text = render_pages({}, document, "https://reliability.example.org/reports/")
    base = f"https://reliability.example.org/reports/{document.cluster}/{document.month}/"
    assert f'href="{base}explained.html"' in email and f"explained: {base}explained.html" in text


def test_a_log_line_cannot_move_the_terminal_or_break_the_columns():
    """explain's text escapes what a log line holds (an escape sequence, a line break) before it
    wraps it at 80 columns: nothing in an input reaches the terminal as a control character."""
    from flows.report.environment import environment

    wrapped = environment().filters["wrapped"]
    text = str(wrapped("nhc: check_hw_ib: \x1b[2J\x1b[31mport down\r\nfake: line " + "x" * 200, 7, 3))
    assert "\x1b" not in text and "\r" not in text and "\\x1b[2J" in text
    lines = text.split("\n")
    assert len(lines[0]) <= 77 and all(len(line) <= 80 and line.startswith(" " * 7) for line in lines[1:])
