"""Pull a month's inputs and land them: raw copies kept as pulled, normalised Parquet beside them.

Layout under the configured data directory:
  raw/<cluster>/<month>/<file>           the inputs exactly as pulled
  landed/<cluster>/<month>/<table>.parquet plus manifest.json (row counts, skips, file hashes)
A month is written to a temporary directory and swapped in with renames, so a crash leaves the
previous good landing in place. All timestamps are naive UTC.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from flows.atomic import replace_dir_atomically
from flows.config import COMMAND_KINDS, ClusterConfig
from flows.months import Month
from flows.sources import HealthCheck, InputFormatError, LocalClock, Quarantine, sql_quote
from flows.sources.dcgm_health import DcgmReadStats, read_dcgm_health_dir
from flows.sources.job_records import STAGED_COLUMNS
from flows.sources.nhc_log import read_nhc_log
from flows.sources.sacct import XDMOD_FIELDS, SacctReadStats, read_sacct
from flows.sources.sacct_json import SacctJsonReadStats, read_sacct_json
from flows.sources.sacctmgr_events import read_sacctmgr_events
from flows.sources.slurm_live import pull_node_events, pull_sacct
from flows.sources.syslog import SyslogReadStats
from flows.sources.xid_syslog import read_xid_syslog

TS = pa.timestamp("us")
# attempts.parquet (attempt_nodes.parquet is cluster, job_id_raw, submit_at, node), written by DuckDB
ATTEMPT_COLUMNS = ("cluster", *STAGED_COLUMNS[:-1], "source_file", "source_line")
SCHEMAS = {
    "node_events": pa.schema(
        [
            ("cluster", pa.string()),
            ("node", pa.string()),
            ("started_at", TS),
            ("ended_at", TS),
            ("state", pa.string()),
            ("reason", pa.string()),
            ("user_name", pa.string()),
            ("source_file", pa.string()),
            ("source_line", pa.int64()),
        ]
    ),
    "health_checks": pa.schema(
        [
            ("cluster", pa.string()),
            ("node", pa.string()),
            ("ts", TS),
            ("source", pa.string()),
            ("check_name", pa.string()),
            ("status", pa.string()),
            ("message", pa.string()),
            ("source_file", pa.string()),
            ("source_line", pa.int64()),
        ]
    ),
    "xid_events": pa.schema(
        [
            ("cluster", pa.string()),
            ("node", pa.string()),
            ("ts", TS),
            ("xid", pa.int64()),
            ("pci", pa.string()),
            ("message", pa.string()),
            ("source_file", pa.string()),
            ("source_line", pa.int64()),
        ]
    ),
}


def _naive_utc(ts: datetime | None) -> datetime | None:
    return None if ts is None else ts.astimezone(UTC).replace(tzinfo=None)


DIRECTORY_SOURCES = ("dcgm_health_dir",)
PULLERS = {"sacct_command": ("sacct.usv", pull_sacct), "sacctmgr_events_command": ("events.psv", pull_node_events)}
QUARANTINE_SAMPLE = 10


class TooManyBadRowsError(ValueError):
    """A source with more unreadable rows than the configured limit: the run stops instead of reporting on it."""


def _check_quarantines(
    config: ClusterConfig, sources: dict[str, Path], quarantines: dict[str, Quarantine], manifest: dict
) -> list[InputFormatError]:
    """Count each source's quarantined rows into the manifest; fail when one has too many."""
    everything = []
    for kind, quarantine in quarantines.items():
        entry = manifest["sources"][kind]
        bad = len(quarantine.errors)
        entry["quarantined"] = bad
        limit = max(config.ingest.max_bad_rows, config.ingest.max_bad_row_share * (entry["records"] + bad))
        if bad > limit:
            raise TooManyBadRowsError(
                f"{sources[kind]}: {bad} of {entry['records'] + bad} rows could not be read (limit {limit:g}, "
                f"see [ingest] in {config.config_path.name}); first: {quarantine.errors[0]}"
            )
        everything.extend(quarantine.errors)
    return everything


def _check_row(cluster: str, check: HealthCheck) -> dict:
    return {
        "cluster": cluster,
        "node": check.node,
        "ts": _naive_utc(check.ts),
        "source": check.source,
        "check_name": check.check,
        "status": check.status,
        "message": check.message,
        "source_file": check.source_file,
        "source_line": check.source_line,
    }


def _sha256(path: Path) -> str:
    """Content hash of a file, or of every file under a directory (with their relative paths)."""
    digest = hashlib.sha256()
    for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if file.is_file():
            digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def land_month(config: ClusterConfig, month: Month) -> Path:
    """Read every configured source for `month`, keep raw copies, write Parquet; return the landed dir."""
    with duckdb.connect() as jobs:  # in memory: millions of job records are read and typed in SQL
        return _land_month(config, month, jobs)


def _land_month(config: ClusterConfig, month: Month, jobs: duckdb.DuckDBPyConnection) -> Path:
    sources = config.source_paths(month)
    pulled_dir = config.data_dir / "pulled" / config.cluster / str(month)
    for live in config.command_sources():  # run sacct / sacctmgr now; their output lands like a file
        pulled_dir.mkdir(parents=True, exist_ok=True)
        file_name, pull = PULLERS[live.kind]
        sources[COMMAND_KINDS[live.kind]] = pull(list(live.command), month, pulled_dir / file_name)
    # The job records come as a sacct dump (or pull), Open XDMoD's headerless dump, or JSON.
    sacct_format = next((kind for kind in ("sacct_xdmod", "sacct_json") if kind in sources), "sacct_psv")
    sources["sacct_psv"] = sources.pop(sacct_format)
    # Local times are in the site's zone, except what we pulled ourselves with TZ=UTC.
    pulled_kinds = {COMMAND_KINDS[live.kind] for live in config.command_sources()}
    clocks = {kind: LocalClock(ZoneInfo("UTC" if kind in pulled_kinds else config.site_timezone)) for kind in sources}
    for kind, path in sources.items():
        if not (path.is_dir() if kind in DIRECTORY_SOURCES else path.is_file()):
            raise FileNotFoundError(f"source {kind}: {path} does not exist")

    tables: dict[str, list[dict]] = {name: [] for name in SCHEMAS}
    manifest: dict = {"cluster": config.cluster, "month": str(month), "sources": {}}

    sacct_path = sources["sacct_psv"]
    quarantines = {kind: Quarantine(strict=False) for kind in sources}
    if sacct_format == "sacct_json":
        stats = SacctJsonReadStats()
        read_sacct_json(jobs, sacct_path, quarantines["sacct_psv"], stats)
    else:
        stats = SacctReadStats()
        header = XDMOD_FIELDS if sacct_format == "sacct_xdmod" else None
        read_sacct(jobs, sacct_path, clocks["sacct_psv"], quarantines["sacct_psv"], header, stats)
    manifest["sources"]["sacct_psv"] = {
        "file": str(sacct_path),
        "format": sacct_format,
        "records": stats.attempts,
        **asdict(stats),
    }

    if "sacctmgr_events_psv" in sources:
        path = sources["sacctmgr_events_psv"]
        for e in read_sacctmgr_events(path, clocks["sacctmgr_events_psv"], quarantines["sacctmgr_events_psv"]):
            tables["node_events"].append(
                {
                    "cluster": config.cluster,
                    "node": e.node,
                    "started_at": _naive_utc(e.started_at),
                    "ended_at": _naive_utc(e.ended_at),
                    "state": e.state,
                    "reason": e.reason,
                    "user_name": e.user,
                    "source_file": path.name,
                    "source_line": e.source_line,
                }
            )
        manifest["sources"]["sacctmgr_events_psv"] = {"file": str(path), "records": len(tables["node_events"])}

    if "xid_syslog" in sources:
        path = sources["xid_syslog"]
        xstats = SyslogReadStats()
        for x in read_xid_syslog(path, clocks["xid_syslog"], month.year, xstats, quarantines["xid_syslog"]):
            tables["xid_events"].append(
                {
                    "cluster": config.cluster,
                    "node": x.node,
                    "ts": _naive_utc(x.ts),
                    "xid": x.xid,
                    "pci": x.pci,
                    "message": x.message,
                    "source_file": path.name,
                    "source_line": x.source_line,
                }
            )
        manifest["sources"]["xid_syslog"] = {"file": str(path), "records": xstats.matched, **asdict(xstats)}

    checks = tables["health_checks"]
    if "nhc_syslog" in sources:
        path = sources["nhc_syslog"]
        nstats = SyslogReadStats()
        checks.extend(
            _check_row(config.cluster, c)
            for c in read_nhc_log(path, clocks["nhc_syslog"], month.year, nstats, quarantines["nhc_syslog"])
        )
        manifest["sources"]["nhc_syslog"] = {"file": str(path), "records": nstats.matched, **asdict(nstats)}
    if "dcgm_health_dir" in sources:
        path = sources["dcgm_health_dir"]
        dstats = DcgmReadStats()
        checks.extend(
            _check_row(config.cluster, c) for c in read_dcgm_health_dir(path, dstats, quarantines["dcgm_health_dir"])
        )
        manifest["sources"]["dcgm_health_dir"] = {"file": str(path), "records": dstats.incidents, **asdict(dstats)}

    for kind, path in sources.items():
        manifest["sources"][kind]["sha256"] = _sha256(path)
    for kind, clock in clocks.items():
        manifest["sources"][kind]["dst_ambiguous_times"] = clock.ambiguous
        manifest["sources"][kind]["dst_nonexistent_times"] = clock.nonexistent
    quarantined = _check_quarantines(config, sources, quarantines, manifest)
    manifest["quarantine_sample"] = [str(e) for e in quarantined[:QUARANTINE_SAMPLE]]
    manifest["landed_at"] = datetime.now(UTC).isoformat(timespec="seconds")

    raw_dir = config.data_dir / "raw" / config.cluster / str(month)
    landed_dir = config.data_dir / "landed" / config.cluster / str(month)

    def write_raw(tmp: Path) -> None:
        for path in sources.values():
            if path.is_dir():
                shutil.copytree(path, tmp / path.name)
            else:
                shutil.copy2(path, tmp / path.name)

    def write_landed(tmp: Path) -> None:
        with open(tmp / "quarantine.jsonl", "w") as out:
            for e in quarantined:
                out.write(
                    json.dumps({"file": e.path, "line": e.line, "field": e.field, "value": e.value, "reason": e.reason})
                    + "\n"
                )
        write_job_tables(jobs, config.cluster, sacct_path.name, tmp)
        for name, rows in tables.items():
            pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMAS[name]), tmp / f"{name}.parquet")
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))

    replace_dir_atomically(raw_dir, write_raw)
    replace_dir_atomically(landed_dir, write_landed)
    return landed_dir


def write_job_tables(jobs: duckdb.DuckDBPyConnection, cluster: str, source_file: str, out: Path) -> None:
    """attempts.parquet and attempt_nodes.parquet from the job-record reader's `attempts` table."""
    columns = [
        {"cluster": f"{sql_quote(cluster)} AS cluster", "source_file": f"{sql_quote(source_file)} AS source_file"}.get(
            name, name
        )
        for name in ATTEMPT_COLUMNS
    ]
    jobs.execute(
        f"COPY (SELECT {', '.join(columns)} FROM attempts) "
        f"TO {sql_quote(str(out / 'attempts.parquet'))} (FORMAT parquet)"
    )
    jobs.execute(
        f"""COPY (SELECT {sql_quote(cluster)} AS cluster, a.job_id_raw, a.submit_at, m.node
                  FROM attempts a JOIN host_list_members m USING (list_id))
            TO {sql_quote(str(out / "attempt_nodes.parquet"))} (FORMAT parquet)"""
    )
