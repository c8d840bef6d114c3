"""The prefix syslog daemons put before a message: a timestamp and the sending host.

- ISO (rsyslog RFC 3339, `journalctl -o short-iso`): `2026-10-03T12:34:56.123456+00:00 gpu0001 ...`
- BSD (RFC 3164, `journalctl` short): `Oct  3 12:34:56 gpu0001 ...` (no year: the caller gives the
  report month's), also with microseconds (`journalctl -o short-precise`)
- remote kernel log (host first, bracketed ISO time, nanoseconds):
  `192.168.11.119: kern: warning: [2026-04-22T21:27:51.291912866Z]: NVRM: ...`
A timestamp without an offset is in the configured site time zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.sources import InputFormatError, Quarantine, TimeZone, open_text, to_utc

_ISO_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s+(\S+)\s+")
_BSD_PREFIX = re.compile(r"^([A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\s+(\S+)\s+")
_REMOTE_KERN_PREFIX = re.compile(
    r"^(\S+): kern: \w+: \[(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?\]: "
)


def syslog_timestamp_and_host(line: str, path: Path, line_no: int, tz: TimeZone, year: int) -> tuple[datetime, str]:
    """UTC time and host of a syslog line; an error naming the file and line when there is neither."""
    iso = _ISO_PREFIX.match(line)
    if iso:
        try:
            ts = datetime.fromisoformat(iso.group(1))
        except ValueError as exc:
            raise InputFormatError(path, line_no, "timestamp", iso.group(1), str(exc)) from None
        return (ts.astimezone(UTC) if ts.tzinfo else to_utc(ts, tz)), iso.group(2)
    remote = _REMOTE_KERN_PREFIX.match(line)
    if remote:
        host, seconds, fraction, offset = remote.groups()
        text = seconds + (f".{fraction[:6]}" if fraction else "") + (offset or "")  # Python keeps microseconds
        ts = datetime.fromisoformat(text)
        return (ts.astimezone(UTC) if ts.tzinfo else to_utc(ts, tz)), host
    bsd = _BSD_PREFIX.match(line)
    if bsd:
        stamp, fraction, host = bsd.groups()
        try:
            ts = datetime.strptime(f"{year} {stamp}.{fraction or 0}", "%Y %b %d %H:%M:%S.%f")
        except ValueError as exc:
            raise InputFormatError(path, line_no, "timestamp", stamp, str(exc)) from None
        return to_utc(ts, tz), host
    raise InputFormatError(
        path, line_no, "timestamp", line[:40], "a syslog line needs a timestamp and a host (ISO or BSD format)"
    )


@dataclass
class SyslogReadStats:
    lines: int = 0
    matched: int = 0  # lines with the message the reader looks for
    other_lines: int = 0  # every other line: counted and skipped


def read_syslog_matches(
    path: Path, message: re.Pattern, tz: TimeZone, year: int, stats: SyslogReadStats, quarantine: Quarantine
) -> Iterator[tuple[int, re.Match, datetime, str]]:
    """(line number, match, UTC time, host) of each line whose message matches `message`.

    A matching line without a readable prefix goes to the quarantine (it names the file and line).
    """
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            stats.lines += 1
            match = message.search(line)
            if not match:
                stats.other_lines += 1
                continue
            stats.matched += 1
            try:
                ts, host = syslog_timestamp_and_host(line, path, line_no, tz, year)
            except InputFormatError as error:
                quarantine.reject(error)
                continue
            yield line_no, match, ts, host
