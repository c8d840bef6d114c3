"""LBNL Node Health Check (NHC) results from syslog.

NHC logs `ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted` (two spaces after
each colon) through syslog, so each line carries the syslog timestamp and host. Passed checks
and other lines are counted and skipped (`other_lines`); a `Health check failed` line without a
readable prefix, with a time outside the window of valid times, or whose status and check cannot
be read is quarantined naming the file and line: it is never passed over as noise.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from flows.ingest.sources.clock import TimeZone
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.syslog import SyslogReadStats, landed_rows, read_syslog_messages

FAILED_CHECK_MARKER = "Health check failed"
FAILED_CHECK_FIELDS = r"(ERROR|WARNING):\s+nhc:\s+Health check failed:\s+(\w+):\s*"  # the message follows
FAILED_CHECK_UNREAD = (
    "check",
    "a failed check without its status and name ('ERROR:  nhc:  Health check failed:  <check>:')",
)


def read_nhc_log(
    path: Path,
    tz: TimeZone,
    year: int,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: SyslogReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> pa.Table:
    """One row per failed check, as the health-check table has them (less its cluster and source):
    node, ts (naive UTC), check_name, status, message, source_file, source_line."""
    fields, groups = FAILED_CHECK_FIELDS, ["status", "check_name"]
    found = read_syslog_messages(
        path, FAILED_CHECK_MARKER, fields, groups, tz, year, stats, quarantine, FAILED_CHECK_UNREAD, limits
    )
    checks = {
        "check_name": found["check_name"],
        "status": found["status"],
        "message": pc.utf8_trim_whitespace(found["rest"]),
    }
    return landed_rows(found, path, checks)
