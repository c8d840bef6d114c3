"""NVIDIA Xid kernel lines from syslog / journal files that carry a timestamp and a host name.

Formats read (all as rsyslog / journalctl print them, see `flows.sources.syslog`):
- ISO:  `2026-10-03T12:34:56.123456+00:00 gpu0001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...`
- BSD:  `Oct  3 12:34:56 gpu0001 kernel: NVRM: Xid ...` (no year: the report month gives it)
Lines without `NVRM: Xid` (other kernel messages, multi-line context) are counted and skipped;
an Xid line without a readable time and host, or with an Xid number too large to be one (beyond
int64), is quarantined naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from flows.sources.clock import TimeZone
from flows.sources.errors import InputFormatError
from flows.sources.quarantine import Quarantine
from flows.sources.syslog import SyslogReadStats, landed_rows, read_syslog_messages

XID_FIELDS = r"NVRM: Xid \(([^)]*)\): (\d+),\s*"  # Python and RE2 read it alike; the message follows
XID_RE = re.compile(XID_FIELDS + r"(.*)$")
_INT64_MAX = 2**63 - 1


def xid_number(text: str, path: Path | str, line: int) -> int:
    """The Xid of a line's digits, or the error naming the line when they do not fit the landed int64."""
    number = int(text)
    if number > _INT64_MAX:
        raise InputFormatError(path, line, "xid", text, "not an Xid: beyond the largest 64-bit integer")
    return number


def read_xid_syslog(
    path: Path, tz: TimeZone, year: int, stats: SyslogReadStats | None = None, quarantine: Quarantine | None = None
) -> pa.Table:
    """One row per Xid line: node, ts (naive UTC), xid, pci, message, source_file, source_line."""
    quarantine = quarantine if quarantine is not None else Quarantine()
    found = read_syslog_messages(path, "NVRM: Xid", XID_FIELDS, ["pci", "xid"], tz, year, stats, quarantine)
    too_long = pc.greater(pc.utf8_length(found["xid"]), len(str(_INT64_MAX)) - 1)  # only these can overflow
    if pc.any(too_long).as_py():
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
