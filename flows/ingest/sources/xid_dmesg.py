"""NVIDIA Xid lines from kernel-ring-buffer captures saved per node (`dmesg` in a job epilog or a cron).

Layout: `<dir>/<node>/<any name>[.gz]`: the node is the folder (node names may contain dots), and
a node may have any number of captures; the same line in two overlapping captures is read once.
Each line's time prefix may be, as the tools print it:
- `dmesg --time-format=iso` (best: it carries the offset), with or without `--decode`'s
  `kern  :warn  : `: `2026-11-22T03:22:04,123456+00:00 NVRM: Xid ...`
- `dmesg -T` / `--ctime`, local time: `[Sun Nov 22 03:22:04 2026] NVRM: Xid ...`
- `journalctl -k` formats, with a host: `short`, `short-precise`, `short-iso`, `short-iso-precise`
- raw `dmesg` or `journalctl -o short-monotonic`, seconds since boot: `[171167.620236] NVRM: Xid ...`.
  These need the boot time, given in the capture by a line `# boot_time: 2026-11-20T08:00:00Z`
  (e.g. `echo "# boot_time: $(date -u -d "$(uptime -s)" +%FT%TZ)"; dmesg`); a later such line
  starts the next boot. Without one, the Xid lines are quarantined, saying so.
Times without an offset are in the site's time zone, a time with one is that instant; a time
outside the clock's window of valid times is quarantined. Non-Xid lines (the rest of the kernel log,
multi-line context) are counted and skipped; a line that holds `NVRM: Xid` but not its device and
number (negative, cut short), or is longer than any field, is quarantined. A folder whose name is
not a node name, a file directly in the directory (not in a node's folder), or a capture that
cannot be read to its end (a corrupt .gz), is quarantined; the other captures are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from flows.ingest.sources.clock import LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import LF_ONLY, open_text
from flows.ingest.sources.health_files import READ_ERRORS, loose_file, node_folders, unreadable
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import XidEvent
from flows.ingest.sources.syslog import LINES_SCHEMA, syslog_prefixes
from flows.ingest.sources.xid_syslog import XID_MARKER, XID_RE, XID_UNREAD, xid_number

_BOOT_TIME = re.compile(r"^#\s*boot_time:\s*(\S+)\s*$", re.ASCII)
_MONOTONIC = re.compile(r"^\[\s*(\d{1,12})\.(\d{1,9})\]\s", re.ASCII)  # a longer uptime is no machine's
_CTIME = re.compile(r"^\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]\s", re.ASCII)
_DMESG_ISO = re.compile(
    r"^(?:\w{1,16}\s*:\s*\w{1,16}\s*:\s+)?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}),(\d{6})([+-]\d{2}:\d{2})\s", re.ASCII
)


@dataclass
class DmesgReadStats:
    """What became of each capture line: `lines` = Xid rows landed + lines quarantined + the skip counts.

    Skip counts: `other_lines`, `boot_time_lines`, `repeated_lines`. The quarantine also holds one
    entry per file set aside whole or from a break on (`files_quarantined`: a loose file, a folder
    that is no node name, a corrupt .gz), which is not a line read.
    """

    files: int = 0
    lines: int = 0
    matched: int = 0  # lines with `NVRM: Xid` (or too long to tell): landed, repeated or quarantined
    other_lines: int = 0  # skip count: the rest of the kernel log
    boot_time_lines: int = 0  # skip count: `# boot_time:` lines (read, not events; a bad one is quarantined)
    repeated_lines: int = 0  # skip count: the same Xid line in overlapping captures of one node
    files_quarantined: int = 0  # quarantine entries that are a file, not a line


def read_xid_dmesg_dir(
    root: Path,
    tz: TimeZone,
    year: int,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: DmesgReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> Iterator[XidEvent]:
    """Xid events of every capture under `root`; `year` dates journal lines that print none.

    Journal-format lines are dated together at the end (`syslog_prefixes`, one DuckDB statement for
    the whole directory); everything else line by line as it is read.
    """
    stats = stats if stats is not None else DmesgReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    found: list[XidEvent | InputFormatError] = []
    journal: list[tuple[int, str]] = []  # (index in `found`, line) of the events to date as syslog lines
    for path, node_dir in node_folders(root):
        stats.files += 1
        if node_dir is None:
            stats.files_quarantined += 1
            found.append(loose_file(root, path, "<node>/<capture>"))
            continue
        try:
            node = node_name(node_dir.name, path, 1, "node folder")
        except InputFormatError as error:
            stats.files_quarantined += 1
            found.append(error)
            continue
        for item, journal_line in _read_capture(path, str(path.relative_to(root)), node, clock, limits, stats):
            if journal_line is not None:
                journal.append((len(found), journal_line))
            found.append(item)
    if journal:
        lines = pa.table([[i for i, _ in journal], [line for _, line in journal]], schema=LINES_SCHEMA)
        dated, problems = syslog_prefixes(lines, clock, year)
        for index, ts in zip(dated["source_line"].to_pylist(), dated["ts"].to_pylist(), strict=True):
            found[index].ts = ts.replace(tzinfo=UTC)
        for index, field, value, reason in problems:
            event = found[index]
            found[index] = InputFormatError(Path(root, event.source_file), event.source_line, field, value, reason)
    seen: set[tuple[str, datetime, str]] = set()
    for item in found:
        if isinstance(item, InputFormatError):
            quarantine.reject(item)
            continue
        key = (item.node, item.ts, f"{item.pci}|{item.xid}|{item.message}")
        if key in seen:
            stats.repeated_lines += 1
            continue
        seen.add(key)
        yield item


def _read_capture(
    path: Path, source_file: str, node: str, clock: LocalClock, limits: InputLimits, stats: DmesgReadStats
) -> Iterator[tuple[XidEvent | InputFormatError, str | None]]:
    """Each Xid line of one capture as an event (or the error that stops it), with the line itself
    when it is in a journal format, whose time is read later with the directory's other such lines."""
    boot: datetime | None = None
    line_no = 0
    try:
        for line_no, line in enumerate(_lines(path, limits.max_field_chars), start=1):
            line = line.rstrip("\r\n")
            stats.lines += 1
            if XID_MARKER not in line and not too_long(line, limits):
                marker = _BOOT_TIME.match(line) if line.startswith("#") else None
                if not marker:
                    stats.other_lines += 1
                    continue
                try:
                    boot = _boot_time(marker.group(1), path, line_no, clock)
                    stats.boot_time_lines += 1
                except InputFormatError as error:  # the lines after it then lack a boot time, each quarantined
                    boot = None
                    yield error, None
                continue
            stats.matched += 1
            if why := too_long(line, limits):
                yield InputFormatError(path, line_no, "line", line[:200], why), None
                continue
            xid = XID_RE.search(line)
            try:
                if not xid:
                    raise InputFormatError(path, line_no, *XID_UNREAD[:1], _from_marker(line), XID_UNREAD[1])
                number = xid_number(xid.group(2), path, line_no)
                ts = _dmesg_time(line, path, line_no, clock, boot)
            except InputFormatError as error:
                yield error, None
                continue
            event = XidEvent(
                node=node,
                ts=ts,
                xid=number,
                pci=xid.group(1),
                message=xid.group(3),
                source_line=line_no,
                source_file=source_file,  # <node>/<capture>, relative to the directory
            )
            yield event, (line if ts is None else None)
    except READ_ERRORS as exc:
        stats.files_quarantined += 1
        yield unreadable(path, line_no + 1, exc), None


def _from_marker(line: str) -> str:
    """The line from its Xid marker on (what the quarantine shows of a line it cannot read)."""
    return line[line.index(XID_MARKER) :][:200]


def _lines(path: Path, max_chars: int) -> Iterator[str]:
    with open_text(path, LF_ONLY) as handle:
        yield from handle.lines(max_chars)


def _boot_time(text: str, path: Path, line_no: int, clock: LocalClock) -> datetime:
    try:
        return clock.checked(clock.to_utc(datetime.fromisoformat(text)))
    except ValueError as exc:
        raise InputFormatError(path, line_no, "boot_time", text, str(exc)) from None


def _dmesg_time(line: str, path: Path, line_no: int, clock: LocalClock, boot: datetime | None) -> datetime | None:
    """The time of a line in one of dmesg's own formats (checked against the clock's window of valid
    times); None for a journal (syslog) line."""
    iso = _DMESG_ISO.match(line)
    if iso:
        written = f"{iso.group(1)}.{iso.group(2)}{iso.group(3)}"
        try:
            return clock.checked(clock.to_utc(datetime.fromisoformat(written)))
        except ValueError as exc:
            raise InputFormatError(path, line_no, "timestamp", written, str(exc)) from None
    ctime = _CTIME.match(line)
    if ctime:
        try:
            return clock.checked(clock.to_utc(datetime.strptime(ctime.group(1), "%a %b %d %H:%M:%S %Y")))
        except ValueError as exc:
            raise InputFormatError(path, line_no, "timestamp", ctime.group(1), str(exc)) from None
    monotonic = _MONOTONIC.match(line)
    if monotonic:
        if boot is None:
            raise InputFormatError(
                path,
                line_no,
                "timestamp",
                line[:40],
                "seconds since boot need the boot time: add a '# boot_time: <ISO time>' line before them",
            )
        seconds, fraction = monotonic.groups()
        try:
            return clock.checked(boot + timedelta(seconds=int(seconds), microseconds=int(fraction.ljust(6, "0")[:6])))
        except (ValueError, OverflowError) as exc:
            raise InputFormatError(path, line_no, "timestamp", line[:40], f"seconds since boot: {exc}") from None
    return None
