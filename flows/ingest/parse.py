"""`reliability-report parse --kind K FILE`: one reader on one file, its typed rows and its quarantine.

The way to debug a site's odd log: no config, Prefect, dbt or GX, just the format's reader from
the registry (flows/ingest/sources/registry.py) with a quarantine that keeps every bad line and why.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, is_dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa

from flows.config.cluster import ClusterConfig
from flows.core.errors import MissingInputError, UsageError
from flows.core.escape import printable
from flows.ingest.probe import input_problem
from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.limits import DEFAULT_LIMITS
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.registry import SOURCE_KINDS, given_input
from flows.ingest.sources.sql import sql_relation
from flows.ingest.sources.tables import (
    SCHEMAS,
    STAGED_FIELDS,
    column_names,
    landed_rows_by_table,
    landed_table,
    without_unused_columns,
)

CELL_WIDTH = 40  # a longer value is cut in the table (never in --json)


@dataclass
class Parsed:
    kind: str
    path: Path
    rows: pa.Table  # the landed table's columns, less cluster
    quarantined: list[InputFormatError]
    stats: dict
    dst_ambiguous: int
    dst_nonexistent: int


def source_timezone(config: ClusterConfig, kind: str) -> str:
    """The zone `config` reads `kind`'s times in (its source's `timezone`, else the site's); a
    UsageError when it has no source of that input."""
    if not any(given_input(s.kind) == given_input(kind) for s in config.sources):
        raise UsageError(f"{config.config_path} has no [[sources]] of kind {kind} (nor another giving its input)")
    return config.timezone_of(kind)


def parse_source(kind: str, path: Path, timezone: str = "UTC", year: int | None = None) -> Parsed:
    """Run `kind`'s reader on `path` as the landing would, keeping every unreadable line."""
    source = SOURCE_KINDS[kind]
    if problem := input_problem(path, directory=source.reads == "directory"):  # as the landing checks it
        raise MissingInputError(f"{kind}: {problem}")
    quarantine, stats = Quarantine(strict=False), source.new_stats()
    clock = LocalClock(ZoneInfo(timezone))
    year = year or datetime.now(UTC).year
    try:
        if source.table == "attempts":
            with duckdb.connect() as con:
                source.read(quarantine, stats, con=con, path=path, clock=clock, limits=DEFAULT_LIMITS)
                columns = column_names(STAGED_FIELDS)
                rows = sql_relation(con, "parse__attempts", columns=columns).to_arrow_table()
        else:
            found = source.read(quarantine, stats, path=path, clock=clock, year=year, limits=DEFAULT_LIMITS)
            if isinstance(found, pa.Table):
                rows = without_unused_columns(source.table, landed_table(source.table, "", source.source, found))
            else:  # a kind whose rows go to several tables: theirs side by side, each with its columns
                found = landed_rows_by_table(source.tables, "", source.source, path, found)
                tables = [
                    without_unused_columns(table, pa.Table.from_pylist(list(r), SCHEMAS[table]))
                    for table, r in found.items()
                ]
                rows = pa.concat_tables(tables, promote_options="default")
            rows = rows.drop_columns(["cluster"])
    except (OSError, EOFError) as exc:  # unreadable, a directory given for a file, a broken .gz
        raise UsageError(f"{kind}: cannot read {path}: {exc}") from None
    return Parsed(
        kind=kind,
        path=path,
        rows=rows,
        quarantined=sorted(quarantine.errors, key=lambda e: (e.path, e.line)),
        stats=asdict(stats) if is_dataclass(stats) else {},
        dst_ambiguous=clock.ambiguous,
        dst_nonexistent=clock.nonexistent,
    )


def _jsonable(value: object) -> object:
    """`json.dumps`'s fallback for the values a reader's rows may hold beyond JSON's own: times as ISO
    8601, a duration as its seconds, a decimal as the number it is, bytes as text (bad UTF-8 as U+FFFD)."""
    if isinstance(value, date | time):  # datetime too
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"a value of type {type(value).__name__} in the rows cannot be written as JSON")


def _cell(value: object) -> str:
    text = "null" if value is None else printable(str(value))
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 3] + "..."


def format_parsed(parsed: Parsed, limit: int | None = None, as_json: bool = False) -> list[str]:
    """The rows (all, or the first `limit`), then the quarantine and the reader's statistics:
    an aligned table, or JSON lines (each row an object, then `{"quarantined": ...}` per bad line
    and one `{"summary": ...}`)."""
    rows = parsed.rows.slice(0, limit).to_pylist() if limit is not None else parsed.rows.to_pylist()
    summary = {
        "kind": parsed.kind,
        "file": str(parsed.path),
        "rows": parsed.rows.num_rows,
        "quarantined": len(parsed.quarantined),
        "dst_ambiguous_times": parsed.dst_ambiguous,
        "dst_nonexistent_times": parsed.dst_nonexistent,
        "reader": parsed.stats,
    }
    if as_json:
        lines = [json.dumps(row, default=_jsonable) for row in rows]
        for e in parsed.quarantined:
            bad = {"file": e.path, "line": e.line, "field": e.field, "value": e.value, "reason": e.reason}
            lines.append(json.dumps({"quarantined": bad}, default=_jsonable))
        return [*lines, json.dumps({"summary": summary}, default=_jsonable)]
    names = parsed.rows.column_names
    cells = [[_cell(row[name]) for name in names] for row in rows]
    widths = [max([len(name)] + [len(line[i]) for line in cells]) for i, name in enumerate(names)]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip()
        for line in [names, ["-" * w for w in widths], *cells]
    ]
    shown = f" (first {len(rows)} shown)" if len(rows) < parsed.rows.num_rows else ""
    lines.append(f"{parsed.rows.num_rows} rows{shown} from {parsed.path} ({parsed.kind})")
    counts = {key: value for key, value in summary.items() if key not in ("kind", "file", "rows", "reader")}
    examples = {key: value for key, value in parsed.stats.items() if isinstance(value, list)}  # conflicts
    details = ", ".join(f"{key} {value}" for key, value in {**parsed.stats, **counts}.items() if key not in examples)
    lines.append(f"reader: {details}")
    for key, items in examples.items():
        if items:
            lines.append(f"{key} (the first {len(items)}):")
            lines += [f"  {item}" for item in items]
    if parsed.quarantined:
        lines.append(f"quarantined ({len(parsed.quarantined)}):")
        lines += [f"  {error}" for error in parsed.quarantined]
    return lines
