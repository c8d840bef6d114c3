"""What built the warehouse: its schema version, recorded in the warehouse itself (table `meta.built_by`).

The schema version is a digest of the dbt project's models, macros, seeds and dbt_project.yml: what
decides the marts' tables and their columns. A build records it, with the tool's version and the
time, once the build has succeeded (`record`). Before a build, a warehouse that records another
version, or none (written by a version of the tool from before this record), was built by another
version of the tool (`other_version`): flows/warehouse/build.py rebuilds it from the landed months,
the old file kept aside, as it rebuilds a corrupt one. DuckDB only: a Spark warehouse records nothing.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import duckdb

from flows import DBT_PROJECT_DIR

REASON = "built by another version of the tool"
TABLE = "meta.built_by"  # one row: schema_version, tool_version, built_at
PROJECT_PARTS = ("models", "macros", "seeds")  # with dbt_project.yml: what the schema version digests
PROJECT_FILES = (".sql", ".yml", ".yaml", ".csv")  # the files of them dbt reads (not an editor's backup)


def schema_version(project_dir: Path = DBT_PROJECT_DIR) -> str:
    """The digest (12 hex digits) of the dbt project's models, macros, seeds and dbt_project.yml:
    each SQL, YAML and CSV file's path in the project and its bytes."""
    files = [project_dir / "dbt_project.yml"]
    files += sorted(
        p
        for part in PROJECT_PARTS
        for p in (project_dir / part).rglob("*")
        if p.suffix in PROJECT_FILES and p.is_file()
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(project_dir).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def tool_version() -> str:
    try:
        return version("cluster-reliability-report")
    except PackageNotFoundError:  # a checkout run without installing it
        return "unknown"


def recorded(warehouse: Path) -> tuple[str, str, datetime] | None:
    """(schema version, tool version, built at) as the warehouse records them; None if it records none."""
    with duckdb.connect(str(warehouse)) as con:  # as warehouse_problem opens it: one configuration per process
        found = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'meta' AND table_name = 'built_by'"
        ).fetchone()
        if not found or not found[0]:
            return None
        return con.execute(f"SELECT schema_version, tool_version, built_at FROM {TABLE}").fetchone()


def other_version(warehouse: Path) -> str | None:
    """Why an existing warehouse must be rebuilt for this version of the tool (REASON, with what
    built it), or None when this version built it."""
    current = schema_version()
    found = recorded(warehouse)
    if found is None:
        return f"{REASON} (it records no schema version: a version from before they were recorded, or a build that did not finish)"
    built, tool, at = found
    if built == current:
        return None
    return f"{REASON} (schema version {built}, tool {tool}, {at:%Y-%m-%d %H:%M} UTC; this version's is {current})"


def record(warehouse: Path) -> None:
    """Record in the warehouse that this version of the tool built it, now."""
    with duckdb.connect(str(warehouse)) as con:
        con.begin()
        con.execute("CREATE SCHEMA IF NOT EXISTS meta")
        con.execute(
            f"CREATE OR REPLACE TABLE {TABLE} "
            "(schema_version VARCHAR NOT NULL, tool_version VARCHAR NOT NULL, built_at TIMESTAMP NOT NULL)"
        )
        con.execute(
            f"INSERT INTO {TABLE} VALUES (?, ?, ?)",
            [schema_version(), tool_version(), datetime.now(UTC).replace(tzinfo=None)],
        )
        con.commit()
