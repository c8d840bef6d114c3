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
from flows.ingest.sources.sql import create_temp_table, run_sql, sql_relation

# RE2 patterns (DuckDB's regexp functions, sql/syslog__read_stamps.sql); each names its groups in the list beside it. RE2 reads
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
    message = {"message": bool(fields)}
    patterns = {
        "iso": _ISO,
        "iso_groups": _ISO_GROUPS,
        "tagged": _TAGGED,
        "remote_kern": _REMOTE_KERN,
        "remote_groups": _REMOTE_GROUPS,
        "bsd": _BSD,
        "bsd_groups": _BSD_GROUPS,
        "node_name": NODE_NAME,
        "year": str(year),
    }
    if fields:
        patterns |= {"fields": fields, "anchored_fields": f"^(?:{fields})", "groups": groups}
    reasons = {"no_prefix": NO_PREFIX, "not_tagged": NOT_TAGGED, "node_name_rule": NODE_NAME_RULE}
    with duckdb.connect() as con:
        create_temp_table(con, "syslog_lines", lines)
        run_sql(con, "syslog__read_stamps", patterns, **message)
        problems = run_sql(con, "syslog__problems", reasons).fetchall()
        to_utc = "local_ts"
        bounds = run_sql(con, "syslog__local_bounds").fetchall()[0]
        if bounds[0] is not None:
            changes = clock.offset_changes(*bounds)
            to_utc = clock.sql_to_utc("local_ts", changes)
            ambiguous, nonexistent = LocalClock.sql_doubtful_counts("CASE WHEN zone = '' THEN local_ts END", changes)
            doubtful = {"ambiguous": ambiguous, "nonexistent": nonexistent}
            clock.count(*run_sql(con, "clock__doubtful_counts", table="syslog_read", **doubtful).fetchall()[0])
        found = sql_relation(con, "syslog__found", to_utc=to_utc, groups=groups or [], **message).to_arrow_table()
    return found, problems
