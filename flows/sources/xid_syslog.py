"""NVIDIA Xid kernel lines from syslog / journal files that carry a timestamp and a host name.

Formats read (all as rsyslog / journalctl print them):
- ISO:  `2026-10-03T12:34:56.123456+00:00 gpu0001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...`
- BSD:  `Oct  3 12:34:56 gpu0001 kernel: NVRM: Xid ...` (no year: the report month gives it)
Lines without `NVRM: Xid` (other kernel messages, multi-line context) are counted and skipped;
a line with an Xid that cannot be read is an error naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from flows.sources import InputFormatError, Quarantine, open_text
from flows.sources.syslog import syslog_timestamp_and_host

XID_RE = re.compile(r"NVRM: Xid \(([^)]*)\): (\d+),\s*(.*)$")


@dataclass
class XidEvent:
    node: str
    ts: datetime
    xid: int
    pci: str
    message: str
    source_line: int


@dataclass
class XidReadStats:
    lines: int = 0
    xid_lines: int = 0
    other_lines: int = 0


def read_xid_syslog(
    path: Path, tz: ZoneInfo, year: int, stats: XidReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[XidEvent]:
    stats = stats if stats is not None else XidReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            stats.lines += 1
            xid = XID_RE.search(line)
            if not xid:
                stats.other_lines += 1
                continue
            stats.xid_lines += 1
            try:
                ts, node = syslog_timestamp_and_host(line, path, line_no, tz, year)
            except InputFormatError as error:
                quarantine.reject(error)
                continue
            yield XidEvent(
                node=node, ts=ts, xid=int(xid.group(2)), pci=xid.group(1), message=xid.group(3), source_line=line_no
            )
