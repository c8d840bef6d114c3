"""Repair tickets, as a CSV exported from the site's ticket system (optional source).

Columns, found by name: `node` and `opened_at` are required; `ticket_id`, `closed_at`, `category`
and `summary` are read when present. Times are ISO 8601; without an offset they are in the site's
time zone. Each ticket becomes one health event at `opened_at` (source `ticket`, check = the
category or `repair`, status CLOSED when it has a `closed_at`, else OPEN): a lemon-node signal,
never the cause of a failure. A row that cannot be read (a node that is not one node name, an
`opened_at` or a `closed_at` that is not an ISO 8601 time, a time outside the clock's window of
valid times, a ticket closed before it was opened, a carriage return outside a quoted field) goes to
the quarantine, naming the file, line and field; a file that cannot be read on (a corrupt .gz) is
quarantined from there. A record is numbered by its first line, lines ending at LF (`sed -n Np`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from flows.ingest.sources.clock import LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import LF_ONLY, open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck

REQUIRED_COLUMNS = ("node", "opened_at")


@dataclass
class TicketReadStats:
    """What became of each CSV record (a blank line is none): `rows` = tickets landed + rows
    quarantined. No row is skipped. A record is landed or quarantined at its first line; the lines
    after it that a quoted field holding a newline takes in (a summary over lines, or a quote never
    closed, which takes the lines up to the next quote) are counted in `joined_lines`. The quarantine
    also holds one entry when the file cannot be read to its end (`files_quarantined`), which is not a row."""

    rows: int = 0
    tickets: int = 0
    files_quarantined: int = 0  # quarantine entries that are the file, not a row
    joined_lines: int = 0  # lines read as part of the record before them (a quoted field holding a newline)


def read_repair_tickets(
    path: Path,
    tz: TimeZone,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: TicketReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> Iterator[HealthCheck]:
    """The tickets of the export, one per record (see the module docstring). Lines end at LF alone
    (a CRLF export's lines at their CRLF), as `sed -n Np` numbers them: a carriage return inside a
    quoted field is the field's own, one outside quotes quarantines its record."""
    stats = stats if stats is not None else TicketReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    with open_text(path, newline=LF_ONLY) as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, [])
        except (csv.Error, *READ_ERRORS) as exc:
            raise unreadable(path, 1, exc) from None
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise InputFormatError(path, 1, "header", ",".join(header), f"missing columns {', '.join(missing)}")
        while True:
            line_no = reader.line_num + 1  # the record's first line
            try:
                values = next(reader, None)
            except csv.Error as exc:  # e.g. a field past csv's size limit: the record is set aside
                stats.rows += 1
                stats.joined_lines += reader.line_num - line_no
                quarantine.reject(InputFormatError(path, line_no, "row", "", _not_a_row(exc)))
                continue
            except READ_ERRORS as exc:  # the rows before it are kept
                stats.files_quarantined += 1
                quarantine.reject(unreadable(path, line_no, exc))
                return
            if values is None:
                return
            if not values:  # a blank line
                continue
            stats.rows += 1
            stats.joined_lines += reader.line_num - line_no
            try:
                ticket = _ticket(_columns(header, values), path, line_no, clock, limits)
            except InputFormatError as error:
                quarantine.reject(error)
                continue
            stats.tickets += 1
            yield ticket


def _columns(header: list[str], values: list[str]) -> dict[str | None, object]:
    """A record as {column: value}, as csv.DictReader gives it: the columns it lacks None, the values
    past the header's under None."""
    row: dict[str | None, object] = dict(zip(header, values, strict=False))
    row.update(dict.fromkeys(header[len(values) :]))
    if len(values) > len(header):
        row[None] = values[len(header) :]
    return row


def _not_a_row(error: csv.Error) -> str:
    if "new-line character" in str(error):  # csv's advice to read universal newlines is not the operator's
        return "not a CSV row: a carriage return outside a quoted field"
    return f"not a CSV row: {error}"


def _ticket(row: dict, path: Path, line_no: int, clock: LocalClock, limits: InputLimits) -> HealthCheck:
    if None in row:  # more fields than the header
        raise InputFormatError(path, line_no, "row", ",".join(row[None]), "more fields than the header")
    for column, value in row.items():
        if value is not None and (why := too_long(value, limits)):
            raise InputFormatError(path, line_no, column, value[:200], why)
    node = (row.get("node") or "").strip()
    if not node:
        raise InputFormatError(path, line_no, "node", "", "every ticket names a node")
    node_name(node, path, line_no)
    ts = _time(row, "opened_at", path, line_no, clock)
    closed = _time(row, "closed_at", path, line_no, clock) if (row.get("closed_at") or "").strip() else None
    if closed is not None and closed < ts:
        raise InputFormatError(path, line_no, "closed_at", row["closed_at"].strip(), "before the ticket's opened_at")
    summary = (row.get("summary") or "").strip()
    ticket_id = (row.get("ticket_id") or "").strip()
    return HealthCheck(
        node=node,
        ts=ts,
        check=(row.get("category") or "").strip() or "repair",
        status="CLOSED" if closed is not None else "OPEN",
        message=": ".join(part for part in (ticket_id, summary) if part),
        source_file=path.name,
        source_line=line_no,
    )


def _time(row: dict, column: str, path: Path, line_no: int, clock: LocalClock) -> datetime:
    """Column `column` of the row as UTC: an ISO 8601 time (the site's local time without an offset)
    inside the clock's window of valid times, else the error naming it."""
    text = (row.get(column) or "").strip()
    try:
        written = datetime.fromisoformat(text)
    except ValueError:
        raise InputFormatError(path, line_no, column, text, "expected an ISO 8601 time") from None
    try:
        return clock.checked(clock.to_utc(written))
    except ValueError as exc:
        raise InputFormatError(path, line_no, column, text, str(exc)) from None


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the header is checked on the first row read."""
    next(read_repair_tickets(path, ZoneInfo(site_timezone), quarantine=Quarantine(strict=False)), None)
