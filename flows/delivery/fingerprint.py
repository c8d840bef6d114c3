"""A report's figures as delivery compares them: the fingerprint of what metrics.json holds as
figures (a rerun with the same fingerprint sends nothing), a digest per part of the report, the
headline, the lines of a chat message, and the figures its message shows with what they were made
from (flows/delivery/correction.py)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from flows.delivery import correction
from flows.figures.summary import headline_lines

# metrics.json keys that say how the figures were made, not what they are: a change here alone sends nothing.
NOT_FIGURES = (
    "parameters",  # the parameters in force: one that changes no figure changes nothing shown as a figure
    "reproduce",  # the rebuild command: the config's path, the tool's version
    "quarantine_sample",  # examples of quarantined lines with their file paths (the counts are in `inputs`)
)
# per input: where it was read, its checksum and examples naming its path (its counts stay)
INPUT_PROVENANCE = ("file", "sha256", "conflicts")
SECTION_NAMES = {  # what a correction calls a changed part of the report
    "totals": "totals",
    "job_mix": "job mix",
    "mttf_by_size": "MTTF by job size",
    "node_failure_rate": "node failure rate",
    "month_over_month": "month-over-month change",
    "history": "trend",
    "change_flags": "changes flagged",
    "ettr_vs_expected": "ETTR against expected",
    "breakdowns": "breakdowns",
    "projections": "projections to large jobs",
    "failures_by_cause": "failures by cause",
    "health_events": "health events",
    "run_ettr": "ETTR of job runs",
    "expected_ettr": "expected ETTR",
    "lost_goodput": "lost goodput",
    "lemon_nodes": "lemon-node candidates",
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

    @classmethod
    def of(cls, report_dir: Path) -> Figures:
        metrics = json.loads((report_dir / "metrics.json").read_text())
        sections = {
            key: _digest(_without_provenance(key, value))
            for key, value in sorted(metrics.items())
            if key not in NOT_FIGURES and key != "summary"  # the summary is made from the others
        }
        return cls(
            fingerprint=_digest(sections),
            sections=sections,
            headline={h["label"]: h["value"] for h in metrics["summary"]["headline"]},
            lines=[metrics["summary"]["text"], *headline_lines(metrics)],
            shown=correction.read_shown(report_dir),
            basis=correction.basis(metrics),
        )

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


def _without_provenance(key: str, value):
    if key == "inputs" and isinstance(value, dict):
        return {
            source: {k: v for k, v in stats.items() if k not in INPUT_PROVENANCE} if isinstance(stats, dict) else stats
            for source, stats in value.items()
        }
    return value


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
