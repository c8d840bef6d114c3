"""Repair tickets, as a CSV exported from the site's ticket system (optional source).

Columns, found by name: `node` and `opened_at` are required; `ticket_id`, `closed_at`, `category`
and `summary` are read when present. Times are ISO 8601; without an offset they are in the site's
time zone. Each ticket becomes one health event at `opened_at` (source `ticket`, check = the
category or `repair`): a lemon-node signal, never the cause of a failure. A row that cannot be
read (a node that is not one node name, a time that is not ISO 8601) goes to the quarantine, naming
the file, line and field; a file that cannot be read on (a corrupt .gz) is quarantined from there.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from flows.ingest.sources.clock import TimeZone, to_utc
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck

REQUIRED_COLUMNS = ("node", "opened_at")


@dataclass
class TicketReadStats:
    rows: int = 0
    tickets: int = 0


def read_repair_tickets(
    path: Path, tz: TimeZone, stats: TicketReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[HealthCheck]:
    stats = stats if stats is not None else TicketReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    with open_text(path) as handle:
        reader = csv.DictReader(handle)
        try:
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
        except (csv.Error, *READ_ERRORS) as exc:
            raise unreadable(path, 1, exc) from None
        if missing:
            header = ",".join(reader.fieldnames or ())
            raise InputFormatError(path, 1, "header", header, f"missing columns {', '.join(missing)}")
        rows, line_no = iter(reader), 1
        while True:
            try:
                row = next(rows, None)
            except csv.Error as exc:  # e.g. a field past csv's size limit: the row is set aside
                line_no += 1
                stats.rows += 1
                quarantine.reject(InputFormatError(path, line_no, "row", "", f"not a CSV row: {exc}"))
                continue
            except READ_ERRORS as exc:  # the rows before it are kept
                quarantine.reject(unreadable(path, line_no + 1, exc))
                return
            if row is None:
                return
            stats.rows += 1
            line_no = reader.line_num
            try:
                ticket = _ticket(row, path, line_no, tz)
            except InputFormatError as error:
                quarantine.reject(error)
                continue
            stats.tickets += 1
            yield ticket


def _ticket(row: dict, path: Path, line_no: int, tz: TimeZone) -> HealthCheck:
    if None in row:  # more fields than the header
        raise InputFormatError(path, line_no, "row", ",".join(row[None]), "more fields than the header")
    node = (row.get("node") or "").strip()
    if not node:
        raise InputFormatError(path, line_no, "node", "", "every ticket names a node")
    node_name(node, path, line_no)
    opened = (row.get("opened_at") or "").strip()
    try:
        ts = datetime.fromisoformat(opened)
        ts = ts.astimezone(UTC) if ts.tzinfo else to_utc(ts, tz)
    except (ValueError, OverflowError):
        raise InputFormatError(path, line_no, "opened_at", opened, "expected an ISO 8601 time") from None
    closed = (row.get("closed_at") or "").strip()
    summary = (row.get("summary") or "").strip()
    ticket_id = (row.get("ticket_id") or "").strip()
    return HealthCheck(
        node=node,
        ts=ts,
        check=(row.get("category") or "").strip() or "repair",
        status="CLOSED" if closed else "OPEN",
        message=": ".join(part for part in (ticket_id, summary) if part),
        source_file=path.name,
        source_line=line_no,
    )


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the header is checked on the first row read."""
    next(read_repair_tickets(path, ZoneInfo(site_timezone), quarantine=Quarantine(strict=False)), None)
