"""LBNL Node Health Check (NHC) results from syslog.

NHC logs `ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted` (two spaces after
each colon) through syslog, so each line carries the syslog timestamp and host. Passed checks
and other lines are counted and skipped; a failed-check line without a readable prefix is an error
naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from flows.sources import HealthCheck, Quarantine, TimeZone
from flows.sources.syslog import SyslogReadStats, read_syslog_matches

FAILED_CHECK_RE = re.compile(r"(ERROR|WARNING):\s+nhc:\s+Health check failed:\s+(\w+):\s*(.*)$")


def read_nhc_log(
    path: Path, tz: TimeZone, year: int, stats: SyslogReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[HealthCheck]:
    found = read_syslog_matches(path, FAILED_CHECK_RE, tz, year, stats or SyslogReadStats(), quarantine or Quarantine())
    for line_no, failed, ts, node in found:
        yield HealthCheck(
            node=node,
            ts=ts,
            source="nhc",
            check=failed.group(2),
            status=failed.group(1),
            message=failed.group(3).strip(),
            source_file=path.name,
            source_line=line_no,
        )
