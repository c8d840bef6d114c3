"""NVIDIA Xid kernel lines from syslog / journal files that carry a timestamp and a host name.

Formats read (all as rsyslog / journalctl print them, see `flows.ingest.sources.syslog`):
- ISO:  `2026-10-03T12:34:56.123456+00:00 gpu0001 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...`
- BSD:  `Oct  3 12:34:56 gpu0001 kernel: NVRM: Xid ...` (no year: the report month gives it)
Lines without `NVRM: Xid` (other kernel messages, multi-line context) are counted and skipped
(`other_lines`); an Xid line without a readable time and host, with a time outside the window of
valid times, with a number that is no Xid (NVIDIA's run from 1 to a few hundred: outside 1..999),
or whose number cannot be read at all (negative, cut after the colon) is quarantined naming the
file and line: a line that names the marker is never passed over as noise.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from flows.ingest.sources.clock import TimeZone
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.syslog import SyslogReadStats, landed_rows, read_syslog_messages

XID_MARKER = "NVRM: Xid"
# Python and RE2 read it alike (ASCII digits; the device's name bounded, so that Python's search stays
# linear however often the marker repeats in a line); the message follows
XID_FIELDS = r"NVRM: Xid \(([^)]{0,128})\): ([0-9]+),\s*"
XID_RE = re.compile(XID_FIELDS + r"(.*)$", re.ASCII | re.DOTALL)
# a line that holds the marker but not a device and a number (negative, cut short): (field, reason)
XID_UNREAD = ("xid", "an Xid line without its device and number ('NVRM: Xid (<device>): <1..999>, ...')")
# NVIDIA's Xids run from 1 to a few hundred; the landing's quality suite checks the same bound
# (expectations/landed_health_events.json), which a landed row can then never fail.
XID_MAX = 999


def xid_number(text: str, path: Path | str, line: int) -> int:
    """The Xid of a line's digits, or the error naming the line when they are no Xid (0, or above XID_MAX)."""
    digits = text.isascii() and text.isdigit()
    number = int(text) if digits and len(text.lstrip("0")) <= len(str(XID_MAX)) else None
    if number is None or not 1 <= number <= XID_MAX:
        raise InputFormatError(path, line, "xid", text, f"not an Xid: NVIDIA's Xids are 1 to {XID_MAX}")
    return number


def read_xid_syslog(
    path: Path,
    tz: TimeZone,
    year: int,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: SyslogReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> pa.Table:
    """One row per Xid line: node, ts (naive UTC), xid, pci, message, source_file, source_line."""
    quarantine = quarantine if quarantine is not None else Quarantine()
    found = read_syslog_messages(
        path, XID_MARKER, XID_FIELDS, ["pci", "xid"], tz, year, stats, quarantine, XID_UNREAD, limits
    )
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
