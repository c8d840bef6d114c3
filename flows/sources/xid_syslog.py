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

from flows.sources import Quarantine, TimeZone
from flows.sources.syslog import SyslogReadStats, read_syslog_matches

XID_RE = re.compile(r"NVRM: Xid \(([^)]*)\): (\d+),\s*(.*)$")


@dataclass
class XidEvent:
    node: str
    ts: datetime
    xid: int
    pci: str
    message: str
    source_line: int
    source_file: str  # relative to the source's path


def read_xid_syslog(
    path: Path, tz: TimeZone, year: int, stats: SyslogReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[XidEvent]:
    found = read_syslog_matches(path, XID_RE, tz, year, stats or SyslogReadStats(), quarantine or Quarantine())
    for line_no, xid, ts, node in found:
        yield XidEvent(
            node=node,
            ts=ts,
            xid=int(xid.group(2)),
            pci=xid.group(1),
            message=xid.group(3),
            source_line=line_no,
            source_file=path.name,
        )
