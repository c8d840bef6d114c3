"""Every output of a month's report says the same thing of every figure (issue 51, item 4): the walk
of its typed document (flows/figures/document.py MonthDocument) against each output of a rendered
report directory, used by tests/test_outputs_agree.py on months other tests already build or render.

The figures walked: every figure a rule covers (flows/figures/measured.py FIGURES, metrics.json's
`not_measured` paths), every count of `totals`, and every headline figure (summary.headline, each
the figure HEADLINE_FIGURES names). The outputs: metrics.json, metrics.prom, report.html,
email.html, report.txt, the archive's card of the month (reports/index.html), the chat message
(flows/delivery/deliver.py webhook_text) and the console's line of counts. A figure not measured is
null in metrics.json (its numbers, not its parameters), has no sample in metrics.prom, and every
text output says "not measured" where it names it, never a number; a measured one has the same value
everywhere. Nothing here names a figure one by one beyond HEADLINE_FIGURES and SERIES' own
`figures`: a new figure, series or headline item is walked without a change here.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from flows.config.file import load_config
from flows.delivery.deliver import webhook_text
from flows.delivery.fingerprint import Figures
from flows.delivery.subject import MonthSubject
from flows.figures.document import MonthDocument, StudyDocument, figures_of
from flows.figures.formats import FORMATS, fmt_dec
from flows.figures.measured import FIGURES, KEEP
from flows.figures.period_figures import PeriodFigures
from flows.figures.summary import HEADLINE_FIGURES, counts_line, headline_lines
from flows.publish.archive import render_index, scan
from flows.report.openmetrics import PREFIX, SERIES
from flows.report.render import Report

NOT_MEASURED = re.compile(r"\W*not measured", re.I)


def text_of(html: str) -> str:
    """What a reader reads of a page: no style, no tags, entities decoded, white space collapsed."""
    html = re.sub(r"<(style|title)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def at(figures: dict, path: str):
    """The value at a dotted path of metrics.json (KeyError: no such figure)."""
    value = figures
    for key in path.split("."):
        value = value[key]
    return value


def numbers(value, keep: tuple[str, ...] = ()) -> list:
    """Every number (not a bool) in a figure, the keys of `keep` (its parameters) left out."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, int | float):
        return [value]
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    return [n for k, v in value.items() if k not in keep and k != "trailing" for n in numbers(v)]


def walked_figures(document: PeriodFigures) -> list[str]:
    """The figure paths walked of a period (a month, a study's cluster): those a rule covers, and
    every count of the totals."""
    return [*FIGURES, *(f"totals.{name}" for name in type(document.totals).model_fields)]


def outputs(report_dir: Path, config: Path, console: str | None = None) -> dict[str, str]:
    """Each text output of the month in `report_dir` (<reports>/<cluster>/<month>/ of `config`):
    the page, the email, report.txt, the archive's card, the chat message, the console's counts."""
    metrics = json.loads((report_dir / "metrics.json").read_text())
    cluster_config = load_config(config)
    index = render_index(scan(report_dir.parents[1]))
    cards = re.findall(r"<article>.*?</article>", index, flags=re.S)
    (card,) = [c for c in cards if f'href="{metrics["cluster"]}/{metrics["month"]}/report.html"' in c]
    subject = MonthSubject(metrics["month"])  # type: ignore[arg-type]
    return {
        "report.html": text_of((report_dir / "report.html").read_text()),
        "email.html": text_of((report_dir / "email.html").read_text()),
        "report.txt": re.sub(r"\s+", " ", (report_dir / "report.txt").read_text()),
        "archive card": text_of(card),
        "webhook": webhook_text(cluster_config, subject, Figures.of(report_dir), None),
        "console": console if console is not None else counts_line(metrics),
    }


def prom_samples(report_dir: Path) -> dict[str, list[tuple[dict, float]]]:
    """metrics.prom's samples by series name (without the prefix): (labels, value)."""
    samples: dict[str, list[tuple[dict, float]]] = {}
    for family in text_string_to_metric_families((report_dir / "metrics.prom").read_text()):
        for s in family.samples:
            samples.setdefault(s.name.removeprefix(PREFIX), []).append((s.labels, s.value))
    return samples


def says(text: str, label: str) -> list[str]:
    """What follows each place `text` names a figure by `label` (80 characters)."""
    return [text[m.end() : m.end() + 80] for m in re.finditer(re.escape(label), text)]


def assert_outputs_agree(report_dir: Path, config: Path, console: str | None = None) -> list[str]:
    """Walk every figure of the month's typed document against every output; returns the figure paths
    not measured (for the caller to check its premise)."""
    figures = json.loads((report_dir / "metrics.json").read_text())
    document = MonthDocument.model_validate(figures)
    assert figures_of(document) == figures  # metrics.json is the document, as written
    gaps = document.not_measured
    texts = outputs(report_dir, config, console)
    prom = prom_samples(report_dir)

    # metrics.json: a figure not measured keeps no number but its parameters, and says why
    for path in walked_figures(document):
        value = at(figures, path)
        if path in gaps:
            assert numbers(value, KEEP.get(path.split(".")[0], ())) == [], (path, value)
            assert gaps[path], path
        else:  # a count measured is a number, never a null read as "–"
            assert value is not None, path
            if isinstance(value, dict) and value.get("value") is not None:  # a rate: the pages show its value
                for name in ("report.html", "email.html", "report.txt"):
                    assert fmt_dec(value["value"]) in texts[name], (name, path, value["value"])

    # metrics.prom: each series' figures are figures of the document; a sample of one not measured is
    # absent, every other is the document's value
    period_fields = set(PeriodFigures.model_fields) | set(MonthDocument.model_fields)
    for series in SERIES:
        assert series.figures, f"{series.name} names no figure it exports"
        assert all(f.split(".")[0] in period_fields for f in series.figures), series.name
        expected = {
            tuple(labels): float(value)
            for labels, value in series.samples(document)
            if value is not None and series.measured(document, labels)
        }
        written = {tuple(labels[name] for name in series.labels): value for labels, value in prom.get(series.name, [])}
        assert written == expected, series.name
        for labels in written:
            named = dict(zip(series.labels, labels, strict=True))
            assert not any(f.format(**named) in gaps for f in series.figures), (series.name, labels)

    # the texts: each headline figure is its figure (measured exactly where it is), and every output
    # that names it says its value, or "not measured" and no number
    for item in document.summary.headline:
        path = HEADLINE_FIGURES[item.key]
        assert item.not_measured == gaps.get(path), (item.key, path)
        figure = at(figures, path)
        if isinstance(figure, dict) and "value" in figure:  # a rate: the headline shows its value
            figure = figure["value"]
        if figure is None or isinstance(figure, int | float):  # a number of metrics.json, shown as it is
            assert item.value == figure, (item.key, path, item.value, figure)
        for name in ("report.html", "email.html", "report.txt", "archive card", "webhook"):
            shown = says(texts[name], item.label)
            assert shown, (name, item.label)
            if item.not_measured:
                assert item.value is None, item.key
                assert any(NOT_MEASURED.match(s) for s in shown), (name, item.label, shown)
                assert not any(re.match(r"\W*\d", s) for s in shown), (name, item.label, shown)
            else:
                assert item.value is not None, (item.key, "a figure measured has a value")
                value = FORMATS[item.format](item.value)
                assert any(re.match(r"\W*" + re.escape(value), s) for s in shown), (name, item.label, value, shown)

    # each figure not measured is said so, with why, in the page, the email and report.txt
    for path, why in gaps.items():
        for name in ("report.html", "email.html", "report.txt"):
            assert why in texts[name], (name, path, why)

    # the console: the attempts, and each headline figure it names (by its label) as the pages show it
    console_text = texts["console"].lower()
    assert f"{document.totals.attempts:,} attempt" in console_text
    named = [item for item in document.summary.headline if item.label.lower().rstrip("s") in console_text]
    assert named, f"the console names no headline figure: {console_text}"
    for item in named:
        stem = re.escape(item.label.lower().rstrip("s")) + "s?"
        if item.not_measured:
            said = re.search(stem + r" not measured: " + re.escape(item.not_measured.lower()), console_text)
            assert said, (item.label, console_text)
            assert not re.search(r"\d " + stem, console_text), (item.label, console_text)
        else:
            value = re.escape(FORMATS[item.format](item.value))
            assert re.search(value + " " + stem, console_text), (item.label, console_text)
    return sorted(gaps)


def assert_study_agrees(report: Report) -> None:
    """The walk of a study (flows/report/study_report.py render_study): each cluster's figures not
    measured are null in metrics.json and said, with why, in the page, the email and the text; each
    headline figure of a cluster is not measured exactly with one of its reasons, with no value,
    and the page, the email, the text and the chat message's lines say so or show its value."""
    document = report.document
    assert isinstance(document, StudyDocument)
    figures = figures_of(document)
    texts = {
        "study.html": text_of(report.html),
        "email.html": text_of(report.email_html),
        "study.txt": re.sub(r"\s+", " ", report.text),
        "webhook": " ".join(headline_lines(document.summary.headline)),
    }
    for name, cluster in document.clusters.items():
        gaps = cluster.not_measured
        for path in walked_figures(cluster):
            value = at(figures["clusters"][name], path)
            if path in gaps:
                assert numbers(value, KEEP.get(path.split(".")[0], ())) == [], (name, path, value)
                for output in ("study.html", "email.html", "study.txt"):
                    assert gaps[path] in texts[output], (output, name, path)
            else:
                assert value is not None, (name, path)
        for item in document.summary.headline:
            if not item.label.startswith(f"{name} "):
                continue
            assert (item.not_measured is None) == (item.value is not None), item.label
            assert item.not_measured is None or item.not_measured in gaps.values(), item.label
            for output in texts:
                shown = says(texts[output], item.label)
                if item.not_measured:
                    assert any(NOT_MEASURED.match(s) for s in shown), (output, item.label, shown)
                    assert not any(re.match(r"\W*\d", s) for s in shown), (output, item.label, shown)
                else:
                    value = FORMATS[item.format](item.value)
                    assert any(re.match(r"\W*" + re.escape(value), s) for s in shown), (output, item.label, shown)
