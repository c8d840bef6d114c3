"""A month's job records counted before any work, and the one rule that refuses a month with none.

A month whose job records are not in the dump (a typo of the month, a dump of other months) would
build as "0 attempts" and be sent; it is refused instead, naming the file and the span its records
cover. A site where truly no job ran says so with `--no-jobs-ran`. Which records are a month's is
the marts' rule (dbt's month scoping of the attempts; sql/month_records__counts.sql): `run`, `backfill`,
`check --month` and the landing (a live pull, which only the landing sees) all ask here.

The count is cheap: DuckDB reads only the dump's JobID, Submit, Start and End fields (no typing of
the rest, no host lists), or the JSON document's times.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa

from flows.config.cluster import ClusterConfig
from flows.core.errors import InputError
from flows.core.months import Month, observed_start
from flows.ingest.probe import input_problem
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.registry import JOB_RECORD_KINDS
from flows.ingest.sources.sql import create_temp_table, run_sql

TIME_FIELDS = ("JobID", "Submit", "Start", "End")  # what the count reads of a sacct dump
NO_JOBS_FLAG = "--no-jobs-ran"
TIMES_SCHEMA = pa.schema(
    [
        ("job_id", pa.string()),
        ("submit_at", pa.timestamp("us")),
        ("start_at", pa.timestamp("us")),
        ("end_at", pa.timestamp("us")),
    ]
)
MONTHS_SCHEMA = pa.schema(
    [("month", pa.string()), ("month_start", pa.timestamp("us")), ("month_end", pa.timestamp("us"))]
)


class NoJobRecordsError(InputError, ValueError):
    """A month (or months) with no job record: refused before any work (exit 2)."""


@dataclass(frozen=True)
class MonthRecords:
    """The job records of one input: how many fall in each month asked about, and all of them."""

    kind: str
    path: Path
    in_month: dict[Month, int]
    records: int  # every record of the file (job steps left out)
    first: datetime | None  # the earliest Submit, in the file's clock
    last: datetime | None  # the latest Submit, Start or End
    # where each month's records begin to observe it (naive UTC; flows/core/months.py observed_start)
    observed_from: dict[Month, datetime]

    def coverage(self, month: Month) -> str:
        """Where the records observe `month` from, in words (nothing when from its start)."""
        start = self.observed_from.get(month)
        if start is None or start == month.start.replace(tzinfo=None) or not self.in_month.get(month):
            return ""
        return f"they observe {month} only from {start:%Y-%m-%d %H:%M} UTC (no job ended before then)"

    def span(self) -> str:
        """Where the file's records lie, in words."""
        if self.first is None or self.last is None:
            return "it holds no job record at all"
        if self.first.date() == self.last.date():
            return f"its records are all of {self.first:%Y-%m-%d}"
        return f"its records run {self.first:%Y-%m-%d} to {self.last:%Y-%m-%d}"


def count_month_records(kind: str, path: Path, months: Iterable[Month], timezone: str = "UTC") -> MonthRecords:
    """Count the job records of `path` (a `kind` of job records: sacct_psv, sacct_xdmod, sacct_json,
    or a live pull's output, read as sacct_psv) that fall in each of `months`. Times without an
    offset are in `timezone` (the source's; a pull's and JSON's are UTC). A header that lacks the
    fields, or a document that is not sacct JSON, is an InputFormatError naming the file."""
    zone = ZoneInfo("UTC" if kind == "sacct_json" else timezone)
    with duckdb.connect() as con:
        if kind == "sacct_json":
            create_temp_table(con, "job_record_times", _json_times(path))
        else:
            _sacct_times(con, kind, path)
        return _counted(con, "job_record_times", kind, path, months, zone)


def landed_month_records(con: duckdb.DuckDBPyConnection, kind: str, path: Path, month: Month) -> MonthRecords:
    """The month's records among the attempts a job-record reader left in `con` (times in UTC):
    the landing's count (for a live pull, which no check before the landing could read) and where
    they begin to observe the month."""
    return _counted(con, "attempts", kind, path, [month], ZoneInfo("UTC"))


def _counted(
    con: duckdb.DuckDBPyConnection,
    source: str,
    kind: str,
    path: Path,
    months: Iterable[Month],
    zone: ZoneInfo,
) -> MonthRecords:
    """Count `source`'s records (job_id, submit_at, start_at, end_at in `zone`) in each of `months`,
    and where they begin to observe each."""
    months = sorted(set(months))
    bounds = pa.table(
        {
            "month": [str(m) for m in months],
            "month_start": [m.start.astimezone(zone).replace(tzinfo=None) for m in months],
            "month_end": [m.end.astimezone(zone).replace(tzinfo=None) for m in months],
        },
        schema=MONTHS_SCHEMA,
    )
    create_temp_table(con, "report_months", bounds)
    rows = {row[0]: row[1:] for row in run_sql(con, "month_records__counts", source=source).fetchall()}
    records, first, last = run_sql(con, "month_records__span", source=source).fetchone()
    in_month = {m: rows[str(m)][0] if str(m) in rows else 0 for m in months}
    observed = {
        m: observed_start(m, rows[str(m)][1], _utc(rows[str(m)][2], zone), _utc(rows[str(m)][3], zone))
        for m in months
        if str(m) in rows
    }
    return MonthRecords(kind, path, in_month, records, first, last, observed)


def _utc(local: datetime | None, zone: ZoneInfo) -> datetime | None:
    """A naive time of `zone`'s clock as naive UTC."""
    return None if local is None else local.replace(tzinfo=zone).astimezone(UTC).replace(tzinfo=None)


def _sacct_times(con: duckdb.DuckDBPyConnection, kind: str, path: Path) -> None:
    """Temp table job_record_times of a sacct dump (a headerless XDMoD one in the layout its records fit)."""
    from flows.ingest.sources.sacct import dump_layout, xdmod_layout  # the readers' module, only when counting

    header = xdmod_layout(path) if kind == "sacct_xdmod" else None
    layout = dump_layout(path, header)  # the fields the reader needs, not only the times: its error
    where = {name: layout.header.index(name) + 1 for name in TIME_FIELDS}
    params = {"path": str(path), "delimiter": layout.delimiter, "skip": layout.first_row_line - 1}
    columns = {"width": layout.width, "job_id": where["JobID"], "submit": where["Submit"]}
    columns |= {"start": where["Start"], "end": where["End"]}
    try:
        run_sql(con, "month_records__sacct_times", params, **columns)
    except duckdb.Error as error:
        raise InputFormatError(path, 1, "file", path.name, f"cannot be read: {error}") from None


def _json_times(path: Path) -> pa.Table:
    """The times of a sacct JSON document's jobs (UTC); a job whose times cannot be read is left out."""
    from flows.ingest.sources.sacct_json import job_times, read_document  # the reader's rules (a time, the bounds)

    document, _ = read_document(path)  # a job too deep or with a huge number is left out, as the reader quarantines it
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if jobs is None:
        raise InputFormatError(path, 1, "document", path.name, "not sacct --json output: no jobs")
    rows = [times for job in (jobs if isinstance(jobs, list) else []) if (times := job_times(job))]
    return pa.Table.from_pylist(rows, schema=TIMES_SCHEMA)


def empty_month_problem(found: MonthRecords) -> str | None:
    """What is wrong with the months `found` has no record in, naming the file and its span (None: none)."""
    empty = [str(month) for month, count in found.in_month.items() if not count]
    if not empty:
        return None
    months = ", ".join(empty)
    which = empty[0] if len(empty) == 1 else "these months"
    return f"{months}: {found.path} has no job record in {which}; {found.span()}"


def refuse_empty_months(found: list[MonthRecords], no_jobs_ran: bool = False, again: str = "run again") -> None:
    """Raise NoJobRecordsError, one line naming the months without a job record (with each file and
    that file's span), unless the operator said with --no-jobs-ran that no job ran then. `again`
    says how to give the flag."""
    problems = [problem for f in found if (problem := empty_month_problem(f))]
    if no_jobs_ran or not problems:
        return
    empty = {month for f in found for month, count in f.in_month.items() if not count}
    which, what = ("that month", "month") if len(empty) == 1 else ("in those months", "range")
    nothing = "" if len(empty) == 1 else f"nothing built: {len(empty)} months have no job records: "
    raise NoJobRecordsError(
        f"{nothing}{'; '.join(problems)}: is the {what} right? (if no job ran {which}, {again} with {NO_JOBS_FLAG})"
    )


def config_month_records(config: ClusterConfig, months: Iterable[Month]) -> list[MonthRecords]:
    """The job records of `config`'s job-record file in each of `months`, each distinct file read
    once (a dump of many months is one read). A file that is not there is left to the input
    checks; a live pull is counted by the landing, once pulled."""
    found = []
    for kind in (k for k in JOB_RECORD_KINDS if any(s.kind == k for s in config.sources)):
        by_path: dict[Path, list[Month]] = {}
        for month in months:
            path = config.source_paths(month)[kind]
            if input_problem(path, directory=False) is None:
                by_path.setdefault(path, []).append(month)
        found += [count_month_records(kind, path, wanted, config.timezone_of(kind)) for path, wanted in by_path.items()]
    return found
