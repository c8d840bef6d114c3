"""The prefix syslog daemons put before a message: a timestamp and the sending host.

- ISO (rsyslog RFC 3339, `journalctl -o short-iso`): `2026-10-03T12:34:56.123456+00:00 gpu0001 ...`
- BSD (RFC 3164, `journalctl` short): `Oct  3 12:34:56 gpu0001 ...` (no year: the caller gives the
  report month's), also with microseconds (`journalctl -o short-precise`)
- remote kernel log (host first, bracketed ISO time, nanoseconds):
  `192.168.11.119: kern: warning: [2026-04-22T21:27:51.291912866Z]: NVRM: ...`
A timestamp without an offset is in the configured site time zone, one with an offset is that
instant (an offset no zone has, `+99:99`, is quarantined); fractions past microseconds are cut. A
time outside the clock's window of valid times (before `[ingest] earliest_record`, after the dump)
is quarantined, as the job records' are. The host is one word, then comes the message's tag
(`kernel:`, `nhc[811]:`, after an optional severity word as SONiC's template writes it): a line
whose host is two words, or is not a node name (`flows.ingest.sources.node_names`), is
quarantined, never attributed to its first word. A month of a large cluster's kernel log is
hundreds of thousands of lines, so Python only picks out the lines that carry the wanted message
(a substring test) and DuckDB reads their prefixes and messages. A line longer than any field
(`limits.max_field_chars`: only its head is read) is quarantined before any pattern looks at it;
with `unmatched`, so is a line that holds the marker but not the message's fields (an Xid line
cut after its colon).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from flows.ingest.sources.clock import MAX_UTC_OFFSET, OFFSET_RULE, LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import LF_ONLY, open_text
from flows.ingest.sources.health_files import READ_ERRORS, unreadable
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
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
    """What became of each line read: `lines` = rows landed + lines quarantined + the skip counts.

    Skip counts: `other_lines` (and, in a subclass, every field it documents as one). The
    quarantine also holds one entry per file that cannot be read to its end (`files_quarantined`),
    which is not a line read.
    """

    lines: int = 0
    matched: int = 0  # lines with the reader's marker (or too long to tell): landed or quarantined
    other_lines: int = 0  # skip count: lines without the marker (the rest of the log)
    files_quarantined: int = 0  # entries that are a file, not a line: a corrupt .gz (read up to the break)


# What a reader says of a line that holds its marker but not its fields: (field, reason)
Unmatched = tuple[str, str]


def read_syslog_messages(
    path: Path,
    marker: str | tuple[str, ...],
    fields: str,
    groups: list[str],
    tz: TimeZone,
    year: int,
    stats: SyslogReadStats | None = None,
    quarantine: Quarantine | None = None,
    unmatched: Unmatched | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
) -> pa.Table:
    """(source_line, node, ts, *groups, rest) of each line in which RE2 pattern `fields` is found:
    its capture groups as strings named `groups`, and `rest`, the line's text after the match.
    `marker` is a plain substring of every match, or a tuple of them (Python's prefilter).

    A matching line without a readable prefix or a valid time goes to the quarantine (it names the
    file and line), and so does a file that cannot be read to its end (its lines up to there are
    read), a line longer than `limits.max_field_chars` and, given `unmatched` (the field and
    reason to name), a line with the marker where `fields` is not found.
    """
    stats = stats if stats is not None else SyslogReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    first, *others = (marker,) if isinstance(marker, str) else marker
    numbers, lines, total, refused = [], [], 0, 0
    try:
        with open_text(path, LF_ONLY) as handle:
            for total, line in enumerate(handle.lines(limits.max_field_chars), start=1):
                if why := too_long(line, limits):  # whatever it holds: only its head was read
                    quarantine.reject(InputFormatError(path, total, "line", line[:200], why))
                    refused += 1
                elif first in line or (others and any(m in line for m in others)):
                    numbers.append(total)
                    lines.append(line.rstrip("\r\n"))
    except READ_ERRORS as exc:  # a corrupt or truncated .gz: the lines before it are kept
        stats.files_quarantined += 1
        quarantine.reject(unreadable(path, total + 1, exc))
    table = pa.table([numbers, lines], schema=LINES_SCHEMA)
    found, problems = syslog_prefixes(table, tz, year, fields, groups, unmatched)
    for line_no, field, value, reason in problems:
        quarantine.reject(InputFormatError(path, line_no, field, value, reason))
    matched = found.num_rows + len(problems) + refused
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
    lines: pa.Table,
    tz: TimeZone,
    year: int,
    fields: str | None = None,
    groups: list[str] | None = None,
    unmatched: Unmatched | None = None,
) -> tuple[pa.Table, list[tuple[int, str, str, str]]]:
    """(source_line, node, ts) of `lines` (source_line, line) in line order, `ts` naive UTC, and the
    (source_line, field, value, reason) of each line without a readable syslog prefix (field
    `timestamp`), whose host is not a node name (field `host`) or whose time is outside the clock's
    window of valid times or has an offset no zone has (field `timestamp`).

    With `fields`, only the lines in which it is found, with its groups and the rest of the line
    (see `read_syslog_messages`), and, given `unmatched`, the others as its problem.
    """
    clock = as_clock(tz)
    message = {"message": bool(fields), "unmatched": bool(fields and unmatched)}
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
        "max_offset_seconds": int(MAX_UTC_OFFSET.total_seconds()),
    }
    if fields:
        patterns |= {"fields": fields, "anchored_fields": f"^(?:{fields})", "groups": groups}
    unmatched_field, unmatched_reason = unmatched or ("message", "")
    rules = {
        "no_prefix": NO_PREFIX,
        "not_tagged": NOT_TAGGED,
        "node_name_rule": NODE_NAME_RULE,
        "offset_rule": OFFSET_RULE,
        "unmatched_field": unmatched_field,
        "unmatched_reason": unmatched_reason,
        **clock.sql_window(),
    }
    with duckdb.connect() as con:
        create_temp_table(con, "syslog_lines", lines)
        run_sql(con, "syslog__read_stamps", patterns, **message)
        to_utc = "local_ts"
        bounds = run_sql(con, "syslog__local_bounds").fetchall()[0]
        changes = None
        if bounds[0] is not None:
            changes = clock.offset_changes(*bounds)
            to_utc = clock.sql_to_utc("local_ts", changes)
        run_sql(con, "syslog__dated", rules, to_utc=to_utc)
        if changes is not None:  # the doubtful times of the lines read
            ambiguous, nonexistent = LocalClock.sql_doubtful_counts(
                "CASE WHEN zone = '' AND problem IS NULL THEN local_ts END", changes
            )
            doubtful = {"ambiguous": ambiguous, "nonexistent": nonexistent}
            clock.count(*run_sql(con, "clock__doubtful_counts", table="syslog_dated", **doubtful).fetchall()[0])
        problems = run_sql(con, "syslog__problems", **message).fetchall()
        found = sql_relation(con, "syslog__found", groups=groups or [], **message).to_arrow_table()
    return found, problems
