"""NVIDIA Xid kernel lines from syslog / journal files that carry a timestamp and a host name.

Formats read (all as rsyslog / journalctl print them, see `flows.sources.syslog`):
- ISO:  `2026-10-03T12:34:56.123456+00:00 gpu0001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...`
- BSD:  `Oct  3 12:34:56 gpu0001 kernel: NVRM: Xid ...` (no year: the report month gives it)
Lines without `NVRM: Xid` (other kernel messages, multi-line context) are counted and skipped;
an Xid line without a readable time and host is an error naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from flows.sources.clock import TimeZone
from flows.sources.quarantine import Quarantine
from flows.sources.syslog import SyslogReadStats, landed_rows, read_syslog_messages

XID_FIELDS = r"NVRM: Xid \(([^)]*)\): (\d+),\s*"  # Python and RE2 read it alike; the message follows
XID_RE = re.compile(XID_FIELDS + r"(.*)$")


def read_xid_syslog(
    path: Path, tz: TimeZone, year: int, stats: SyslogReadStats | None = None, quarantine: Quarantine | None = None
) -> pa.Table:
    """One row per Xid line: node, ts (naive UTC), xid, pci, message, source_file, source_line."""
    found = read_syslog_messages(path, "NVRM: Xid", XID_FIELDS, ["pci", "xid"], tz, year, stats, quarantine)
    return landed_rows(
        found, path, {"xid": pc.cast(found["xid"], pa.int64()), "pci": found["pci"], "message": found["rest"]}
    )
