"""IPMI System Event Log entries, `ipmitool sel elist` (or `sel list`) saved per node by a cron.

Layout: `<dir>/<node>/<any name>[.gz]`: the node is the folder, and a node may have any number of
captures; the SEL keeps its entries, so an entry seen in several captures (same record id, time,
sensor and event) is read once. Lines, as ipmitool (lib/ipmi_sel.c) prints them:

    `  3a | 12/14/2022 | 23:09:44 | Critical Interrupt #0x11 | Bus Uncorrectable error | Asserted`
    `  3a | 12/14/22 | 23:09:44 CET | Memory #0x88 | Correctable ECC (CPU0_G1) | Asserted`

record id (hex) | date (ipmitool up to 1.8.18: `%m/%d/%Y`; 1.8.19: the locale's `%x`, `%m/%d/%y` in
the C locale) | time (1.8.19 adds the zone) | sensor type and sensor (`#0x..` or, for `elist`, its
SDR name) | event | Asserted or Deasserted [| reading]. A time with UTC/GMT is UTC; one without a
zone, or with the site zone's own abbreviation, is in the site's time zone; any other zone is
quarantined. Each asserted event is one health check (source `ipmi_sel`, check = the sensor
column, status = the event, message = the rest); deasserted events (an alarm ending) and OEM
records are counted and skipped. Entries without a time (`Pre-Init`: seconds since the BMC started;
`Linux kernel panic` records), a time outside the clock's window of valid times, lines longer than
any field and lines of no known shape are quarantined naming the file and line; so is a file
directly in the directory (not in a node's folder) or in a folder that is no node name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.ingest.sources.clock import LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import LF_ONLY, open_text
from flows.ingest.sources.health_files import READ_ERRORS, loose_file, node_folders, unreadable
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck

_TIME = re.compile(r"^(\d{2}:\d{2}:\d{2})(?: (\S+))?$", re.ASCII)
_RECORD_ID = re.compile(r"[0-9a-fA-F]+")
_UTC_ZONES = ("UTC", "GMT", "Z")


@dataclass
class SelReadStats:
    """What became of each line read: `lines` = rows landed + lines quarantined + the skip counts.

    Skip counts: `blank_lines`, `deasserted`, `oem_records`, `repeated_entries`. The quarantine also
    holds one entry per file set aside whole or from a break on (`files_quarantined`: a loose file, a
    folder that is no node name, a corrupt .gz), which is not a line read.
    """

    files: int = 0
    lines: int = 0
    blank_lines: int = 0  # skip count
    entries: int = 0  # the lines that are not blank: landed, quarantined or skipped below
    deasserted: int = 0  # skip count: an alarm ending, not an event
    oem_records: int = 0  # skip count: OEM-defined bytes ipmitool cannot decode
    repeated_entries: int = 0  # skip count: the same entry in several captures of a node
    files_quarantined: int = 0  # quarantine entries that are a file, not a line


def read_ipmi_sel_dir(
    root: Path,
    tz: TimeZone,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: SelReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> Iterator[HealthCheck]:
    stats = stats if stats is not None else SelReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    seen: set[tuple] = set()
    for path, node_dir in node_folders(root):
        stats.files += 1
        if node_dir is None:
            stats.files_quarantined += 1
            quarantine.reject(loose_file(root, path, "<node>/<capture>"))
            continue
        line_no, source_file = 0, str(path.relative_to(root))
        try:
            node = node_name(node_dir.name, path, 1, "node folder")
        except InputFormatError as error:
            stats.files_quarantined += 1
            quarantine.reject(error)
            continue
        try:
            with open_text(path, LF_ONLY) as handle:
                for line_no, line in enumerate(handle.lines(limits.max_field_chars), start=1):
                    stats.lines += 1
                    if not line.strip():
                        stats.blank_lines += 1
                        continue
                    stats.entries += 1
                    try:
                        entry = _entry(line, path, source_file, line_no, node, clock, stats, limits)
                    except InputFormatError as error:
                        quarantine.reject(error)
                        continue
                    if entry is None:
                        continue
                    key = (node, entry.ts, entry.check, entry.status, entry.message.split(" | ")[0])
                    if key in seen:
                        stats.repeated_entries += 1
                        continue
                    seen.add(key)
                    yield entry
        except READ_ERRORS as exc:
            stats.files_quarantined += 1
            quarantine.reject(unreadable(path, line_no + 1, exc))


def _entry(
    line: str,
    path: Path,
    source_file: str,
    line_no: int,
    node: str,
    clock: LocalClock,
    stats: SelReadStats,
    limits: InputLimits,
) -> HealthCheck | None:
    """One SEL line as a health check; None for one that is counted and skipped."""
    if why := too_long(line, limits):
        raise InputFormatError(path, line_no, "line", line[:200], why)
    fields = [field.strip() for field in line.rstrip("\r\n").split("|")]
    record = fields[0]
    if not _RECORD_ID.fullmatch(record):
        raise InputFormatError(path, line_no, "record id", line.strip(), "not an ipmitool sel list line")
    if len(fields) > 1 and fields[1].startswith("Linux kernel panic"):
        raise InputFormatError(path, line_no, "date", fields[1], "a kernel-panic record carries no time")
    if len(fields) < 5:
        raise InputFormatError(path, line_no, "record", line.strip(), "expected id | date | time | sensor | event")
    if fields[1] == "Pre-Init":
        raise InputFormatError(path, line_no, "date", fields[2], "Pre-Init: seconds since the BMC started, no date")
    if fields[3].startswith("OEM record"):
        stats.oem_records += 1
        return None
    direction = fields[5] if len(fields) > 5 else ""
    if direction == "Deasserted":
        stats.deasserted += 1
        return None
    if direction != "Asserted":
        raise InputFormatError(path, line_no, "direction", direction, "expected Asserted or Deasserted")
    return HealthCheck(
        node=node,
        ts=_time(fields[1], fields[2], path, line_no, clock),
        check=fields[3],
        status=fields[4],
        message=" | ".join([f"record {record}", *fields[6:]]),
        source_file=source_file,  # <node>/<capture>, relative to the directory
        source_line=line_no,
    )


def _time(date: str, clock_time: str, path: Path, line_no: int, clock: LocalClock) -> datetime:
    time = _TIME.match(clock_time)
    if time is None:
        raise InputFormatError(path, line_no, "time", clock_time, "expected HH:MM:SS [zone]")
    for date_format in ("%m/%d/%Y", "%m/%d/%y"):
        try:
            local = datetime.strptime(f"{date} {time.group(1)}", f"{date_format} %H:%M:%S")
            break
        except ValueError:
            continue
    else:
        raise InputFormatError(path, line_no, "date", date, "expected MM/DD/YYYY or MM/DD/YY")
    zone = time.group(2)
    if zone is not None and zone not in _UTC_ZONES and zone != _zone_name(local, clock):
        raise InputFormatError(path, line_no, "time", clock_time, f"zone {zone} is neither UTC nor the site's")
    try:
        return clock.checked(local.replace(tzinfo=UTC) if zone in _UTC_ZONES else clock.to_utc(local))
    except ValueError as exc:
        raise InputFormatError(path, line_no, "date", f"{date} {clock_time}", str(exc)) from None


def _zone_name(local: datetime, clock: LocalClock) -> str | None:
    """The site zone's abbreviation at local time `local` (None where no date can hold it: year 1)."""
    try:
        return local.replace(tzinfo=clock.tz).tzname()
    except (ValueError, OverflowError):
        return None
