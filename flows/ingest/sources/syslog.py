"""The prefix syslog daemons put before a message: a timestamp and the sending host.

- ISO (rsyslog RFC 3339, `journalctl -o short-iso`): `2026-10-03T12:34:56.123456+00:00 gpu0001 ...`
- BSD (RFC 3164, `journalctl` short): `Oct  3 12:34:56 gpu0001 ...` (no year: the caller gives the
  report month's), also with microseconds (`journalctl -o short-precise`)
- remote kernel log (host first, bracketed ISO time, nanoseconds):
  `192.168.11.119: kern: warning: [2026-04-22T21:27:51.291912866Z]: NVRM: ...`
A timestamp without an offset is in the configured site time zone; fractions past microseconds
are cut. The host is one word, then comes the message's tag (`kernel:`, `nhc[811]:`, after an
optional severity word as SONiC's template writes it): a line whose host is two words, or is not a
node name (`flows.ingest.sources.node_names`), is quarantined, never attributed to its first word. A month of a large cluster's kernel log is hundreds of thousands of lines, so Python only
picks out the lines that carry the wanted message (a substring test) and DuckDB reads their
prefixes and messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from flows.ingest.sources.clock import LocalClock, TimeZone
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.node_names import NODE_NAME, NODE_NAME_RULE
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sql import create_temp_table, sql_quote

# RE2 patterns (DuckDB's regexp functions); each names its groups in the list beside it. RE2 reads
# an anchored pattern of at most four groups in one pass, several times faster than with a fifth.
_ISO = r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\s+(\S+)\s+"
_ISO_GROUPS = ["stamp", "fraction", "zone", "host"]
_REMOTE_KERN = r"^(\S+): kern: \w+: \[(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\]: "
_REMOTE_GROUPS = ["host", "stamp", "fraction", "zone"]
_BSD = r"^([A-Z][a-z]{2})\s+(\d{1,2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)\s+(\S+)\s+"
# The host is one word, followed by the message's tag (`kernel:`, `nhc[811]:`, after an optional
# severity word as SONiC writes it): a line where a second word comes first has a host of two
# words, never attributed to the first. Without groups RE2 tests it in one fast pass.
_TAGGED = (
    r"^(?:(?:\d{4}-\d{2}-\d{2}T\S+\s+\S+|[A-Z][a-z]{2}\s+\d{1,2} \S+\s+\S+)\s+"
    r"(?:(?:EMERG|ALERT|CRIT|ERR|ERROR|WARNING|WARN|NOTICE|INFO|DEBUG)\s+)?[^\s:\[]*(?:\[\d+\])?:|\S+: kern: )"
)
NOT_TAGGED = "the word after the host is not the message's tag (`kernel:`, `nhc[811]:`): a host of two words?"
_BSD_GROUPS = ["month", "day", "clock", "host"]
NO_PREFIX = "a syslog line needs a timestamp and a host (ISO or BSD format)"
LINES_SCHEMA = pa.schema([("source_line", pa.int64()), ("line", pa.string())])


@dataclass
class SyslogReadStats:
    lines: int = 0
    matched: int = 0  # lines with the message the reader looks for
    other_lines: int = 0  # every other line: counted and skipped


def read_syslog_messages(
    path: Path,
    marker: str | tuple[str, ...],
    fields: str,
    groups: list[str],
    tz: TimeZone,
    year: int,
    stats: SyslogReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> pa.Table:
    """(source_line, node, ts, *groups, rest) of each line in which RE2 pattern `fields` is found:
    its capture groups as strings named `groups`, and `rest`, the line's text after the match.
    `marker` is a plain substring of every match, or a tuple of them (Python's prefilter).

    A matching line without a readable prefix goes to the quarantine (it names the file and line),
    and so does a file that cannot be read to its end (its lines up to there are read).
    """
    stats = stats if stats is not None else SyslogReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    first, *others = (marker,) if isinstance(marker, str) else marker
    numbers, lines, total = [], [], 0
    try:
        with open_text(path) as handle:
            for total, line in enumerate(handle, start=1):
                if first in line or (others and any(m in line for m in others)):
                    numbers.append(total)
                    lines.append(line.rstrip("\r\n"))
    except READ_ERRORS as exc:  # a corrupt or truncated .gz: the lines before it are kept
        quarantine.reject(unreadable(path, total + 1, exc))
    found, problems = syslog_prefixes(pa.table([numbers, lines], schema=LINES_SCHEMA), tz, year, fields, groups)
    for line_no, field, value, reason in problems:
        quarantine.reject(InputFormatError(path, line_no, field, value, reason))
    matched = found.num_rows + len(problems)
    stats.lines += total
    stats.matched += matched
    stats.other_lines += total - matched
    return found


def landed_rows(found: pa.Table, path: Path, columns: dict[str, pa.Array | pa.ChunkedArray]) -> pa.Table:
    """A syslog reader's rows as they land: node, ts, the reader's own `columns`, then where each
    row came from (source_file, source_line)."""
    source_file = pa.array([path.name] * found.num_rows, pa.string())
    return pa.table(
        {
            "node": found["node"],
            "ts": found["ts"],
            **columns,
            "source_file": source_file,
            "source_line": found["source_line"],
        }
    )


def syslog_prefixes(
    lines: pa.Table, tz: TimeZone, year: int, fields: str | None = None, groups: list[str] | None = None
) -> tuple[pa.Table, list[tuple[int, str, str, str]]]:
    """(source_line, node, ts) of `lines` (source_line, line) in line order, `ts` naive UTC, and the
    (source_line, field, value, reason) of each line without a readable syslog prefix (field
    `timestamp`) or whose host is not a node name (field `host`).

    With `fields`, only the lines in which it is found, with its groups and the rest of the line
    (see `read_syslog_messages`).
    """
    clock = tz if isinstance(tz, LocalClock) else LocalClock(tz)
    message, source, carried, wanted = "", "syslog_lines", "", ""
    if fields:
        # RE2 finds the whole match fastest without groups; the groups are then read from the match
        # alone and the free text after it is cut off by position (the match's text first occurs
        # where it matched: an earlier copy would have been the leftmost match).
        message = (
            f"whole, regexp_extract(whole, {sql_quote(f'^(?:{fields})')}, {groups!r}) AS m, "
            "substr(line, strpos(line, whole) + length(whole)) AS rest,"
        )
        # (filtered after the CTE below: a filter right on the match would make DuckDB find it twice)
        source = f"(SELECT *, regexp_extract(line, {sql_quote(fields)}) AS whole FROM syslog_lines)"
        carried, wanted = "whole, m, rest,", "whole <> '' AND"
    with duckdb.connect() as con:
        create_temp_table(con, "syslog_lines", lines)
        con.execute(_read_stamps_sql(source, message, carried, wanted, year))
        # a line is read when it has a node (a valid name) and a time; any other is a problem
        valid_node = "node_ok"
        problems = con.execute(
            f"""SELECT source_line,
                       CASE WHEN node IS NOT NULL AND NOT {valid_node} THEN 'host' ELSE 'timestamp' END,
                       CASE WHEN node IS NULL THEN left(undated_line, 40)
                            WHEN NOT {valid_node} THEN node
                            WHEN dated IS NOT NULL THEN dated.stamp || dated.fraction || dated.zone
                            ELSE bsd.month || ' ' || bsd.day || ' ' || split_part(bsd.clock, '.', 1) END,
                       CASE WHEN node IS NULL THEN {sql_quote(NO_PREFIX)}
                            WHEN NOT tagged THEN {sql_quote(NOT_TAGGED)}
                            WHEN NOT {valid_node} THEN {sql_quote(NODE_NAME_RULE)}
                            ELSE 'not a valid date and time' END
                FROM syslog_read WHERE node IS NULL OR local_ts IS NULL OR NOT {valid_node} ORDER BY source_line"""
        ).fetchall()
        local = "local_ts"
        bounds = con.execute("SELECT min(local_ts), max(local_ts) FROM syslog_read WHERE zone = ''").fetchall()[0]
        if bounds[0] is not None:
            changes = clock.offset_changes(*bounds)
            local = clock.sql_to_utc("local_ts", changes)
            counts = LocalClock.sql_doubtful_counts("CASE WHEN zone = '' THEN local_ts END", changes)
            clock.count(*con.execute(f"SELECT {', '.join(counts)} FROM syslog_read").fetchall()[0])
        offset = (
            "if(zone = 'Z', 0, if(left(zone, 1) = '-', -1, 1)"
            " * (CAST(substr(zone, 2, 2) AS BIGINT) * 3600 + CAST(right(zone, 2) AS BIGINT) * 60))"
        )
        extracted = "".join(f", m.{name} AS {name}" for name in groups or []) + (", rest" if fields else "")
        found = con.sql(
            f"""SELECT source_line, node,
                       CASE WHEN zone = '' THEN {local} ELSE local_ts - to_seconds({offset}) END AS ts {extracted}
                FROM syslog_read WHERE node IS NOT NULL AND local_ts IS NOT NULL AND {valid_node}
                ORDER BY source_line"""
        ).to_arrow_table()
    return found, problems


def _read_stamps_sql(source: str, message: str, carried: str, wanted: str, year: int) -> str:
    """CREATE TEMP TABLE syslog_read: each line of `source` with its node and its local time (and
    its zone, when the stamp has one). ISO stamps (nearly every line of an rsyslog file) are read
    in one pass; only the lines they do not fit are tried as remote-kernel (year, maybe an offset)
    and BSD (neither) stamps. `message`, `carried` and `wanted` add the message match (see
    `syslog_prefixes`); BSD stamps have no year, so they get `year`."""
    return f"""CREATE TEMP TABLE syslog_read AS
        WITH matched AS (
            SELECT source_line, {carried} iso, CASE WHEN iso.host = '' THEN line END AS undated_line, tagged
            FROM (SELECT source_line, line, {message}
                         regexp_extract(line, {sql_quote(_ISO)}, {_ISO_GROUPS!r}) AS iso,
                         regexp_matches(line, {sql_quote(_TAGGED)}) AS tagged
                  FROM {source})
        ), stamped AS (
            SELECT source_line, {carried} iso AS dated, NULL AS bsd, NULL AS undated_line, tagged
            FROM matched WHERE {wanted} undated_line IS NULL
            UNION ALL
            SELECT source_line, {carried}
                   CASE WHEN remote.host <> '' THEN {{'stamp': remote.stamp, 'fraction': remote.fraction,
                        'zone': remote.zone, 'host': remote.host}} END,
                   CASE WHEN remote.host = '' THEN regexp_extract(undated_line, {sql_quote(_BSD)},
                                                                  {_BSD_GROUPS!r}) END,
                   undated_line, tagged
            FROM (SELECT *, regexp_extract(undated_line, {sql_quote(_REMOTE_KERN)}, {_REMOTE_GROUPS!r}) AS remote
                  FROM matched WHERE {wanted} undated_line IS NOT NULL)
        )
        SELECT *, tagged AND regexp_full_match(node, {sql_quote(NODE_NAME)}) AS node_ok
        FROM (SELECT *,
               coalesce(dated.host, nullif(bsd.host, '')) AS node,
               CASE WHEN dated IS NOT NULL THEN try_strptime(dated.stamp, '%Y-%m-%dT%H:%M:%S')
                    ELSE try_strptime('{year} ' || bsd.month || ' ' || bsd.day || ' ' || split_part(bsd.clock, '.', 1),
                                      '%Y %b %d %H:%M:%S') END
                 + to_microseconds(CAST(rpad(left(coalesce(substr(dated.fraction, 2), split_part(bsd.clock, '.', 2)),
                                                  6), 6, '0') AS BIGINT))
                 AS local_ts,
               coalesce(dated.zone, '') AS zone
        FROM stamped)"""
