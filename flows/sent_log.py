"""The sent-log: every report email of a cluster, one JSON record a line (`<data>/delivery/<cluster>.jsonl`).

A send is recorded as `sending` before the SMTP transaction (or the webhook's POST) and `sent`
after it, so only what the server accepted counts as sent, and a send interrupted by a crash is
retried with the same Message-ID (mail systems drop the duplicate if the first copy did arrive). A
send that reached nobody takes its `sending` record back: the log is as it was. The file is
rewritten through a temporary file and a rename: a crash leaves the old or the new log, never half.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

SENDING, SENT = "sending", "sent"  # older logs may also hold "failed" records: never sent


@dataclass(frozen=True)
class SentRecord:
    cluster: str
    month: str
    status: str  # sending | sent
    figures_hash: str  # the fingerprint of the figures it carried (flows/delivery.py, Figures)
    message_id: str
    recipients: tuple[str, ...]
    subject: str
    kind: str  # report | correction | resend
    figures: dict = field(default_factory=dict)  # headline figures, for a correction's notice
    sections: dict = field(default_factory=dict)  # a digest per part of the report: a correction names what changed
    channel: str = "email"  # email | webhook
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    error: str = ""  # sent: the recipients the server refused


class SentLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_cluster(cls, data_dir: Path, cluster: str) -> SentLog:
        return cls(data_dir / "delivery" / f"{cluster}.jsonl")

    def records(self, month: str | None = None) -> list[SentRecord]:
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
        records = [SentRecord(**{**row, "recipients": tuple(row["recipients"])}) for row in rows]
        return [r for r in records if month is None or r.month == month]

    def last_sent(self, month: str, channel: str = "email") -> SentRecord | None:
        sent = [r for r in self.records(month) if r.status == SENT and r.channel == channel]
        return sent[-1] if sent else None

    def interrupted(self, month: str, figures_hash: str, channel: str = "email") -> SentRecord | None:
        """A send of these figures that started and never finished (the process died)."""
        records = [r for r in self.records(month) if r.channel == channel]
        finished = {r.message_id for r in records if r.status != SENDING}
        return next(
            (
                r
                for r in reversed(records)
                if r.status == SENDING and r.figures_hash == figures_hash and r.message_id not in finished
            ),
            None,
        )

    def append(self, record: SentRecord) -> None:
        self._write([*self.records(), record])

    def withdraw(self, record: SentRecord) -> None:
        """Take back a `sending` record whose send reached nobody: the log is as it was before it."""
        self._write([r for r in self.records() if r != record])

    def _write(self, records: list[SentRecord]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(asdict(r), sort_keys=True) for r in records]
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write("\n".join(lines) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
