"""Read job records the way landing does (into DuckDB) and hand them to tests as plain objects."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import duckdb

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sacct import SacctReadStats, read_sacct, read_sacct_xdmod
from flows.ingest.sources.sacct_json import SacctJsonReadStats, read_sacct_json


def _objects(con: duckdb.DuckDBPyConnection) -> list[SimpleNamespace]:
    members: dict[str, list[str]] = {}
    for node_list, node in con.execute(
        "SELECT node_list, node FROM host_list_members JOIN host_lists USING (list_id) ORDER BY node"
    ).fetchall():
        members.setdefault(node_list, []).append(node)
    rows = con.sql("SELECT * FROM attempts ORDER BY source_line").to_arrow_table().to_pylist()
    return [SimpleNamespace(**row, nodes=members.get(row["node_list"], [])) for row in rows]


def sacct_attempts(
    path: Path,
    tz: ZoneInfo | LocalClock,
    stats: SacctReadStats | None = None,
    quarantine: Quarantine | None = None,
    header: tuple[str, ...] | None = None,
) -> list[SimpleNamespace]:
    clock = tz if isinstance(tz, LocalClock) else LocalClock(tz)
    with duckdb.connect() as con:
        read_sacct(con, path, clock, quarantine=quarantine, header=header, stats=stats)
        return _objects(con)


def xdmod_attempts(
    path: Path, tz: ZoneInfo | LocalClock, stats: SacctReadStats | None = None, quarantine: Quarantine | None = None
) -> list[SimpleNamespace]:
    """As the landing reads an Open XDMoD dump: its layout found from its records."""
    clock = tz if isinstance(tz, LocalClock) else LocalClock(tz)
    with duckdb.connect() as con:
        read_sacct_xdmod(con, path, clock, quarantine=quarantine, stats=stats)
        return _objects(con)


def json_attempts(
    path: Path,
    stats: SacctJsonReadStats | None = None,
    quarantine: Quarantine | None = None,
    clock: LocalClock | None = None,
) -> list[SimpleNamespace]:
    with duckdb.connect() as con:
        read_sacct_json(con, path, clock or LocalClock(ZoneInfo("UTC")), quarantine=quarantine, stats=stats)
        return _objects(con)


def sacct_with_bad_elapsed(fixture: Path, out_dir: Path) -> Path:
    """A copy of a real sacct dump whose fourth line has an unreadable Elapsed (`12:xx:00`)."""
    lines = fixture.read_text().splitlines()
    fields = lines[3].split("|")
    fields[13] = "12:xx:00"  # Elapsed
    lines[3] = "|".join(fields)
    bad = out_dir / "sacct.psv"
    bad.write_text("\n".join(lines) + "\n")
    return bad
