"""A report's figures as delivery compares them: the fingerprint of what metrics.json holds as
figures (a rerun with the same fingerprint sends nothing), a digest per part of the report, the
headline, the lines of a chat message, and the figures its message shows with what they were made
from (flows/delivery/correction.py).

Figures are compared, not the names they are kept under: a metrics.json of an earlier schema
version is read through the keys that moved since (flows/figures/moved_keys.py), its schema
version is no figure, and a whole number is the same figure written 3 or 3.0. A sent-log record
written before this rule holds the fingerprint schema version 2 computed (fingerprint_v2): the
report it sent, still in place, stands for it when it shows the same figures (Figures.carries).

The fingerprints are digests of metrics.json's JSON as written (`digests`: whatever its version, a
report that was sent hashes as it did then); what a message says of the figures (the headline, the
lines of a chat message, what they were made from) is read from its typed document
(flows/figures/read.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from flows.delivery import correction
from flows.figures.document import MonthDocument, StudyDocument
from flows.figures.formats import partial_notice
from flows.figures.moved_keys import moved
from flows.figures.read import document_of, metrics_json, version_of
from flows.figures.registry import section_words
from flows.figures.summary import headline_lines

# metrics.json keys that say how the figures were made, not what they are: a change here alone sends nothing.
NOT_FIGURES = (
    "schema_version",  # how metrics.json is laid out: the same figures under new names are the same
    "parameters",  # the parameters in force: one that changes no figure changes nothing shown as a figure
    "reproduce",  # the rebuild command: the config's path, the tool's version
    "quarantine_sample",  # examples of quarantined lines with their file paths (the counts are in `inputs`)
)
NOT_FIGURES_V2 = NOT_FIGURES[1:]  # schema version 2's fingerprint (fingerprint_v2) digested its schema version
# per input: where it was read, its checksum and examples naming its path (its counts stay)
INPUT_PROVENANCE = ("file", "sha256", "conflicts")
SECTION_NAMES = {  # what a correction calls a changed part of the report: each figure's words, then the rest
    **section_words(),
    "job_mix": "job mix",
    "month_over_month": "month-over-month change",
    "history": "trend",
    "change_flags": "changes flagged",
    "health_events": "health events",
    "run_ettr": "ETTR of job runs",
    "expected_ettr": "expected ETTR",
    "month_over_month_by_cause": "causes against last month",
    "causes_compared": "causes against the trailing windows",  # schema version 3 and 4 wrote their join
    "not_measured": "figures not measured",
    # a study's parts
    "clusters": "clusters' figures",
    "side_by_side": "clusters side by side",
    "comparison": "comparison of the clusters",
    "causes": "causes",
    "ettr_buckets": "ETTR size buckets",
    "data_quality": "data quality",
    "inputs": "input record counts",
    "period": "period covered",
}


@dataclass(frozen=True)
class Figures:
    """What a report directory shows as figures: its fingerprint, a digest per part, the headline."""

    fingerprint: str
    sections: dict[str, str]  # metrics.json key -> digest of its figures
    headline: dict[str, object]  # label -> value, for a correction's notice
    lines: list[str]  # the summary sentence, then the headline figures, for a chat message
    shown: dict[str, str] = field(default_factory=dict)  # the figures the message shows (correction.shown_figures)
    basis: dict = field(default_factory=dict)  # what the figures were made from (correction.basis)
    # other fingerprints of the same figures: schema version 2's (fingerprint_v2), the replaced report's
    earlier: frozenset[str] = frozenset()

    @classmethod
    def of(cls, report_dir: Path, in_place: Path | None = None) -> Figures:
        """The figures of the report in `report_dir`; `in_place`: the directory of the report it
        replaces, whose fingerprints stand for these figures too when it shows the same ones.
        flows/figures/read.py DocumentError: a metrics.json that cannot be read as a document."""
        path = report_dir / "metrics.json"
        metrics = metrics_json(path)
        document = document_of(metrics, path)
        before = None
        if in_place is not None and in_place != report_dir and (in_place / "metrics.json").is_file():
            before = metrics_json(in_place / "metrics.json")  # as written, of any version: hashed only
        summary = document.summary
        return cls(
            **digests(metrics, before),
            headline={h.label: h.value for h in summary.headline},
            lines=[summary.text, *_period_notice(document), *headline_lines(summary.headline)],
            shown=correction.read_shown(report_dir),
            basis=correction.basis(document),
        )

    @classmethod
    def as_written(cls, report_dir: Path) -> Figures:
        """The figures of a report as a send of it is recognised, whatever its schema version: its
        fingerprints (of its JSON as written) and the figures its email shows; no headline, lines or
        basis, which are read from a document (for a report too early to read as one:
        flows/figures/read.py EarlierSchemaError)."""
        metrics = metrics_json(report_dir / "metrics.json")
        return cls(**digests(metrics), headline={}, lines=[], shown=correction.read_shown(report_dir))

    def carries(self, figures_hash: str) -> bool:
        """Whether a sent-log record's fingerprint stands for these figures: it is theirs, or that of
        a report of the same figures under an earlier scheme (`earlier`)."""
        return figures_hash == self.fingerprint or figures_hash in self.earlier

    def shown_by(self, channel: str) -> dict[str, str]:
        """The figures a channel's message shows: the email the whole report's; a chat message its
        own lines (the summary and the headline figures; it links the report); the Pushgateway none."""
        if channel == "pushgateway":  # its series are the whole metrics.json: the fingerprint decides
            return {}
        return correction.lines_shown(self.lines) if channel == "webhook" else self.shown

    def changed_parts(self, previous: dict[str, str]) -> list[str]:
        """The parts of the report (as a correction names them) whose figures differ from `previous`'s."""
        if not previous:  # a sent-log record from before per-part digests
            return []
        keys = sorted(set(self.sections) | set(previous))
        changed = [key for key in keys if self.sections.get(key) != previous.get(key)]
        return [SECTION_NAMES.get(key, key.replace("_", " ")) for key in changed]


def digests(metrics: dict, before: dict | None = None) -> dict:
    """The `fingerprint`, the `sections`' digests and the `earlier` fingerprints of a metrics.json's
    JSON (`before`: that of the report it replaces, whose fingerprints stand for the same figures)."""
    sections = _sections(written_figures(metrics))
    earlier = {fingerprint_v2(metrics)}
    if before is not None and same_figures(before, metrics):
        earlier |= {fingerprint_v2(before), _digest(_sections(written_figures(before)))}
    return {"fingerprint": _digest(sections), "sections": sections, "earlier": frozenset(earlier)}


def _period_notice(document: MonthDocument | StudyDocument) -> list[str]:
    """A month's partial-month notice, as a chat message's line (none for a month covered whole, or a study)."""
    if isinstance(document, StudyDocument):
        return []
    return [notice] if (notice := partial_notice(document.period)) else []


def written_figures(metrics: dict) -> dict:
    """What metrics.json holds as figures, by their names in the current schema: the keys moved
    since its version at their new paths, without NOT_FIGURES, the summary (it is made from the
    others) and the inputs' provenance, each whole number written as an integer."""
    current = moved(metrics)
    return {
        key: _whole(_without_provenance(key, value))
        for key, value in current.items()
        if key not in NOT_FIGURES and key != "summary"
    }


def same_figures(before: dict, after: dict) -> bool:
    """Whether metrics.json `after` shows every figure `before` showed, with the same value: equal
    figures; when `before` is of an earlier schema version, `after` may show figures it did not
    (a figure new in this version; a list keeps its length, so a row more is a change). A count an
    input's reader keeps that `before` lacks is a count this version's reader added (issue 50's
    `files_quarantined`, say), and a detail of the period covered that it lacks one this version
    added (issue 51's calendar month and notice: the window itself, `start`..`end`, was there);
    neither is a changed figure."""
    old, new = _leaves(written_figures(before)), _leaves(written_figures(after))
    if version_of(before) == version_of(after):
        added_details = (".inputs.", ".period.")
        return old == {path: value for path, value in new.items() if path in old or not path.startswith(added_details)}
    return all(path in new and new[path] == value for path, value in old.items())


def fingerprint_v2(metrics: dict) -> str:
    """The fingerprint schema version 2's tool recorded in the sent-log for a metrics.json: the
    digest of its keys' digests, as written (names, schema version and number formats included)."""
    return _digest(
        {
            key: _digest(_without_provenance(key, value))
            for key, value in sorted(metrics.items())
            if key not in NOT_FIGURES_V2 and key != "summary"
        }
    )


def _sections(figures: dict) -> dict[str, str]:
    return {key: _digest(value) for key, value in sorted(figures.items())}


def _leaves(value, path: str = "") -> dict[str, object]:
    """Every value of a document by its path ("a.b.0.c"); a list's length at "<path>.#"."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{path}.{key}").items()}
    if isinstance(value, list):
        found = {f"{path}.#": len(value)}
        for i, item in enumerate(value):
            found |= _leaves(item, f"{path}.{i}")
        return found
    return {path: value}


def _whole(value):
    """`value` with each float that is a whole number as an integer (3.0 and 3: the same figure)."""
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole(item) for item in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _without_provenance(key: str, value):
    if key == "inputs" and isinstance(value, dict):
        return {
            source: {k: v for k, v in stats.items() if k not in INPUT_PROVENANCE} if isinstance(stats, dict) else stats
            for source, stats in value.items()
        }
    return value


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
