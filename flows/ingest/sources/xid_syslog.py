"""NVIDIA Xid kernel lines from syslog / journal files that carry a timestamp and a host name.

Formats read (all as rsyslog / journalctl print them, see `flows.ingest.sources.syslog`):
- ISO:  `2026-10-03T12:34:56.123456+00:00 gpu0001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...`
- BSD:  `Oct  3 12:34:56 gpu0001 kernel: NVRM: Xid ...` (no year: the report month gives it)
Lines without `NVRM: Xid` (other kernel messages, multi-line context) are counted and skipped;
an Xid line without a readable time and host, or with a number that is no Xid (NVIDIA's run from
1 to a few hundred: outside 1..999), is quarantined naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from flows.ingest.sources.clock import TimeZone
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.syslog import SyslogReadStats, landed_rows, read_syslog_messages

XID_FIELDS = r"NVRM: Xid \(([^)]*)\): (\d+),\s*"  # Python and RE2 read it alike; the message follows
XID_RE = re.compile(XID_FIELDS + r"(.*)$")
# NVIDIA's Xids run from 1 to a few hundred; the landing's quality suite checks the same bound
# (expectations/landed_health_events.json), which a landed row can then never fail.
XID_MAX = 999


def xid_number(text: str, path: Path | str, line: int) -> int:
    """The Xid of a line's digits, or the error naming the line when they are no Xid (0, or above XID_MAX)."""
    number = int(text)
    if not 1 <= number <= XID_MAX:
        raise InputFormatError(path, line, "xid", text, f"not an Xid: NVIDIA's Xids are 1 to {XID_MAX}")
    return number


def read_xid_syslog(
    path: Path, tz: TimeZone, year: int, stats: SyslogReadStats | None = None, quarantine: Quarantine | None = None
) -> pa.Table:
    """One row per Xid line: node, ts (naive UTC), xid, pci, message, source_file, source_line."""
    quarantine = quarantine if quarantine is not None else Quarantine()
    found = read_syslog_messages(path, "NVRM: Xid", XID_FIELDS, ["pci", "xid"], tz, year, stats, quarantine)
    # only these can be out of range: more digits than XID_MAX, or zeros
    suspect = pc.or_(
        pc.greater(pc.utf8_length(found["xid"]), len(str(XID_MAX))), pc.match_substring_regex(found["xid"], "^0+$")
    )
    if pc.any(suspect).as_py():
        fits = []
        for text, line in zip(found["xid"].to_pylist(), found["source_line"].to_pylist(), strict=True):
            try:
                fits.append(xid_number(text, path, line) >= 0)
            except InputFormatError as error:
                quarantine.reject(error)
                fits.append(False)
        found = found.filter(pa.array(fits))
    return landed_rows(
        found, path, {"xid": pc.cast(found["xid"], pa.int64()), "pci": found["pci"], "message": found["rest"]}
    )
