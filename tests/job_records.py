"""Read job records the way landing does (into DuckDB) and hand them to tests as plain objects."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import duckdb

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
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


# ---- the real dump the hostile job-record tests change one field of (test_hostile_*.py) -----------
DUMP_ZONE = ZoneInfo("UTC")
AS_OF = datetime(2026, 11, 22, 3, 24, tzinfo=UTC)  # tests/data/slurm-22.05 was dumped at about 03:23:30 UTC
DUMP = "sacct_fields_allocations.psv"
T_OK = 2  # rows[T_OK] is job 3 (`t_ok`, COMPLETED on node1 with 3 GPUs): line 4 of the dump


XDMOD_FILLER = {"Cluster": "ci", "Group": "g", "GID": "0", "UID": "0", "NCPUS": "1", "ReqCPUS": "1"}
XDMOD_FILLER |= {"ReqMem": "100M", "Timelimit": "UNLIMITED"}  # the XDMoD fields a sacct dump lacks


def dump_clock(tz: ZoneInfo = DUMP_ZONE, **window) -> LocalClock:
    """The clock of the dump: UTC (or `tz`), its window ending at the dump's time."""
    return LocalClock(tz, as_of=AS_OF, **window)


def dump_rows(slurm_fixtures: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The dump's columns and its rows, each a dict of its fields."""
    header, *lines = (slurm_fixtures / DUMP).read_text().splitlines()
    columns = header.split("|")
    return columns, [dict(zip(columns, line.split("|"), strict=True)) for line in lines]


def changed(rows: list[dict[str, str]], index: int, **fields: str) -> list[dict[str, str]]:
    return [{**row, **fields} if i == index else row for i, row in enumerate(rows)]


def without_line(attempts: list[SimpleNamespace], line: int) -> list[SimpleNamespace]:
    return [a for a in attempts if a.source_line != line]


def assert_quarantined(errors: list[InputFormatError], path: Path, line: int, field: str, reason: str = "") -> None:
    (error,) = errors
    assert (error.path, error.line, error.field) == (str(path), line, field), error
    assert reason in error.reason, error.reason
