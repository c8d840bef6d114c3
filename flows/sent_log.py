"""The sent-log: every report email of a cluster, one JSON record a line (`<data>/delivery/<cluster>.jsonl`).

A send is recorded as `sending` before the SMTP transaction and `sent` (or `failed`) after it, so
only what the server accepted counts as sent, and a send interrupted by a crash is retried with
the same Message-ID (mail systems drop the duplicate if the first copy did arrive). The file is
rewritten through a temporary file and a rename: a crash leaves the old or the new log, never half.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

SENDING, SENT, FAILED = "sending", "sent", "failed"


@dataclass(frozen=True)
class SentRecord:
    cluster: str
    month: str
    status: str  # sending | sent | failed
    figures_hash: str  # sha256 of metrics.json: the figures the email carried
    message_id: str
    recipients: tuple[str, ...]
    subject: str
    kind: str  # report | correction | resend
    figures: dict = field(default_factory=dict)  # headline figures, for a correction's notice
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    error: str = ""  # failed: the SMTP reply; sent: recipients the server refused


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

    def last_sent(self, month: str) -> SentRecord | None:
        sent = [r for r in self.records(month) if r.status == SENT]
        return sent[-1] if sent else None

    def interrupted(self, month: str, figures_hash: str) -> SentRecord | None:
        """A send of these figures that started and never finished (the process died)."""
        finished = {r.message_id for r in self.records(month) if r.status != SENDING}
        return next(
            (
                r
                for r in reversed(self.records(month))
                if r.status == SENDING and r.figures_hash == figures_hash and r.message_id not in finished
            ),
            None,
        )

    def append(self, record: SentRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(asdict(r), sort_keys=True) for r in [*self.records(), record]]
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
