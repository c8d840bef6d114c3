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
Times without an offset are in the site's time zone. Non-Xid lines (the rest of the kernel log,
multi-line context) are counted and skipped. A folder whose name is not a node name, or a capture
that cannot be read to its end (a corrupt .gz), is quarantined; the other captures are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

from flows.ingest.sources.clock import TimeZone, to_utc
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import XidEvent
from flows.ingest.sources.syslog import LINES_SCHEMA, syslog_prefixes
from flows.ingest.sources.xid_syslog import XID_RE, xid_number

_BOOT_TIME = re.compile(r"^#\s*boot_time:\s*(\S+)\s*$")
_MONOTONIC = re.compile(r"^\[\s*(\d+)\.(\d{1,9})\]\s")
_CTIME = re.compile(r"^\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]\s")
_DMESG_ISO = re.compile(r"^(?:\w+\s*:\s*\w+\s*:\s+)?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}),(\d{6})([+-]\d{2}:\d{2})\s")


@dataclass
class DmesgReadStats:
    files: int = 0
    lines: int = 0
    matched: int = 0
    other_lines: int = 0
    repeated_lines: int = 0  # the same Xid line in overlapping captures of one node


def read_xid_dmesg_dir(
    root: Path, tz: TimeZone, year: int, stats: DmesgReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[XidEvent]:
    """Xid events of every capture under `root`; `year` dates journal lines that print none.

    Journal-format lines are dated together at the end (`syslog_prefixes`, one DuckDB statement for
    the whole directory); everything else line by line as it is read.
    """
    stats = stats if stats is not None else DmesgReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    found: list[XidEvent | InputFormatError] = []
    journal: list[tuple[int, str]] = []  # (index in `found`, line) of the events to date as syslog lines
    for node_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(p for p in node_dir.rglob("*") if p.is_file()):
            stats.files += 1
            try:
                node = node_name(node_dir.name, path, 1, "node folder")
            except InputFormatError as error:
                found.append(error)
                continue
            for item, journal_line in _read_capture(path, node, tz, stats):
                if journal_line is not None:
                    journal.append((len(found), journal_line))
                found.append(item)
    if journal:
        lines = pa.table([[i for i, _ in journal], [line for _, line in journal]], schema=LINES_SCHEMA)
        dated, problems = syslog_prefixes(lines, tz, year)
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
    path: Path, node: str, tz: TimeZone, stats: DmesgReadStats
) -> Iterator[tuple[XidEvent | InputFormatError, str | None]]:
    """Each Xid line of one capture as an event (or the error that stops it), with the line itself
    when it is in a journal format, whose time is read later with the directory's other such lines."""
    boot: datetime | None = None
    line_no = 0
    try:
        for line_no, line in enumerate(_lines(path), start=1):
            line = line.rstrip("\r\n")
            stats.lines += 1
            marker = _BOOT_TIME.match(line)
            if marker:
                try:
                    boot = _boot_time(marker.group(1), path, line_no, tz)
                except InputFormatError as error:  # the lines after it then lack a boot time, each quarantined
                    boot = None
                    yield error, None
                continue
            xid = XID_RE.search(line)
            if not xid:
                stats.other_lines += 1
                continue
            stats.matched += 1
            try:
                ts = _dmesg_time(line, path, line_no, tz, boot)
                number = xid_number(xid.group(2), path, line_no)
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
                source_file=str(path.relative_to(path.parents[1])),
            )
            yield event, (line if ts is None else None)
    except READ_ERRORS as exc:
        yield unreadable(path, line_no + 1, exc), None


def _lines(path: Path) -> Iterator[str]:
    with open_text(path) as handle:
        yield from handle


def _boot_time(text: str, path: Path, line_no: int, tz: TimeZone) -> datetime:
    try:
        boot = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InputFormatError(path, line_no, "boot_time", text, str(exc)) from None
    return boot.astimezone(UTC) if boot.tzinfo else to_utc(boot, tz)


def _dmesg_time(line: str, path: Path, line_no: int, tz: TimeZone, boot: datetime | None) -> datetime | None:
    """The time of a line in one of dmesg's own formats; None for a journal (syslog) line."""
    iso = _DMESG_ISO.match(line)
    if iso:
        try:
            return datetime.fromisoformat(f"{iso.group(1)}.{iso.group(2)}{iso.group(3)}").astimezone(UTC)
        except ValueError as exc:
            raise InputFormatError(path, line_no, "timestamp", iso.group(1), str(exc)) from None
    ctime = _CTIME.match(line)
    if ctime:
        try:
            return to_utc(datetime.strptime(ctime.group(1), "%a %b %d %H:%M:%S %Y"), tz)
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
            return boot + timedelta(seconds=int(seconds), microseconds=int(fraction.ljust(6, "0")[:6]))
        except OverflowError:
            raise InputFormatError(path, line_no, "timestamp", line[:40], "seconds since boot out of range") from None
    return None
