"""The sent-log: every report email of a cluster, one JSON record a line (`<data>/delivery/<cluster>.jsonl`).

A send is recorded as `sending` before the SMTP transaction (or the webhook's POST) and `sent`
after it, so only what the server accepted counts as sent, and a send interrupted by a crash is
retried with the same Message-ID (mail systems drop the duplicate if the first copy did arrive). A
send that reached nobody takes its `sending` record back: the log is as it was. The file is
rewritten through a temporary file and a rename: a crash leaves the old or the new log, never half.

A line that cannot be read (the file was cut short, or edited) is set aside in `<log>.damaged`
and the log repaired from the rest, the line replaced by a `damaged` record of the month it was
about. Read safely, a damaged record may have been a `sent` one: its month is not sent again
without --resend (flows/delivery/deliver.py). The month and channel lead each line, so a line cut short
still names them; a line cut before its month is taken as the `sent` record of the latest send
left unfinished before it (a `sent` record always follows its own `sending` one).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

from flows.core.escape import escaped_logger

log = escaped_logger(__name__)
SENDING, SENT = "sending", "sent"  # older logs may also hold "failed" records: never sent
DAMAGED = "damaged"  # a line that could not be read: maybe sent (its channel "" if unknown: any channel)
LEADING = ("month", "channel", "status", "message_id", "kind", "figures_hash", "cluster", "time")
TEXT_FIELD = re.compile(r'"(' + "|".join(LEADING) + r')": "((?:[^"\\]|\\.)*)"')


class SentLogError(RuntimeError):
    """The sent-log cannot be read or written (a directory in its place, no permission): no report
    is sent without it, since it says which were."""


@dataclass(frozen=True)
class SentRecord:
    cluster: str
    month: str
    status: str  # sending | sent | damaged
    figures_hash: str  # the fingerprint of the figures it carried (flows/delivery/deliver.py, Figures)
    message_id: str
    recipients: tuple[str, ...]
    subject: str
    kind: str  # report | correction | resend
    figures: dict = field(default_factory=dict)  # headline figures, for a correction's notice
    sections: dict = field(default_factory=dict)  # a digest per part of the report: a correction names what changed
    shown: dict = field(default_factory=dict)  # the figures the message showed (flows/delivery/correction.py)
    basis: dict = field(default_factory=dict)  # what they were made from: months built, inputs, taxonomy, parameters
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
        """The log's records (of `month`), a damaged line read as a `damaged` record; the first
        read that meets one repairs the file (_repair)."""
        if not self.path.exists():
            return []
        records: list[SentRecord] = []
        damaged: list[tuple[int, bytes, SentRecord]] = []
        try:
            content = self.path.read_bytes()
        except OSError as exc:
            raise SentLogError(
                f"{self.path}: the sent-log, which records the reports sent, cannot be read ({exc.strerror}); "
                "put it back as a file this user can read and run again"
            ) from None
        for number, line in enumerate(content.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode())
                records.append(SentRecord(**{**row, "recipients": tuple(row["recipients"])}))
            except (ValueError, TypeError, KeyError):  # cut short, not JSON, not a record
                records.append(self._damaged_record(line, number, records))
                damaged.append((number, line, records[-1]))
        if damaged:
            self._repair(records, damaged)
        return [r for r in records if month is None or r.month == month]

    def _damaged_record(self, line: bytes, number: int, before: list[SentRecord]) -> SentRecord:
        """What can be told of a damaged line: its leading fields as far as they were written; the
        ones cut off from the latest unfinished send before it that agrees with them."""
        found = dict(TEXT_FIELD.findall(line.decode(errors="replace")))
        finished = {(r.channel, r.message_id) for r in before if r.status != SENDING}
        unfinished = [
            r
            for r in before
            if r.status == SENDING
            and (r.channel, r.message_id) not in finished
            and all(found.get(key, getattr(r, key)) == getattr(r, key) for key in ("month", "channel", "message_id"))
        ]
        if unfinished:  # the `sent` record of that send, as far as its fields were written
            send = unfinished[-1]
            found = {"month": send.month, "channel": send.channel, "message_id": send.message_id, **found}
        return SentRecord(
            cluster=found.get("cluster", self.path.stem),
            month=found.get("month", ""),
            status=DAMAGED,
            figures_hash="",
            message_id=found.get("message_id", ""),
            recipients=(),
            subject="",
            kind=found.get("kind", ""),
            channel=found.get("channel", ""),
            time=found.get("time", ""),
            error=f"line {number} of {self.path.name} could not be read (set aside in {self.path.name}.damaged)",
        )

    def _repair(self, records: list[SentRecord], damaged: list[tuple[int, bytes, SentRecord]]) -> None:
        """Keep the damaged lines in `<log>.damaged`, then rewrite the log from `records`."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with open(self.path.with_name(self.path.name + ".damaged"), "ab") as aside:
            for number, line, _ in damaged:
                aside.write(f"# {now}: line {number} of {self.path.name}\n".encode() + line + b"\n")
        self._write(records)
        for number, _, record in damaged:
            about = (
                f"it was a record of {record.month}, which is not sent again without --resend"
                if record.month
                else "it names no month and follows no unfinished send, so it is taken for no send that went out"
            )
            log.warning(
                "sent-log %s line %d could not be read (cut short?): set aside in %s.damaged, the log repaired "
                "from the other lines; %s",
                self.path,
                number,
                self.path.name,
                about,
            )

    def last_sent(self, month: str, channel: str = "email") -> SentRecord | None:
        """The month's last record sent through `channel`, or a damaged one that may have been."""
        sent = [
            r
            for r in self.records(month)
            if (r.status == SENT and r.channel == channel) or (r.status == DAMAGED and r.channel in (channel, ""))
        ]
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
        for stale in self.path.parent.glob(f".{self.path.name}.*"):  # a killed run's (runs hold the cluster's lock)
            stale.unlink(missing_ok=True)
        order = LEADING + tuple(f.name for f in fields(SentRecord) if f.name not in LEADING)
        lines = [json.dumps({key: asdict(r)[key] for key in order}) for r in records]
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
