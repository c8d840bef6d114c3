"""LBNL Node Health Check (NHC) results from syslog.

NHC logs `ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted` (two spaces after
each colon) through syslog, so each line carries the syslog timestamp and host. Passed checks
and other lines are counted and skipped; a failed-check line without a readable prefix is an error
naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from flows.sources import HealthCheck, InputFormatError, Quarantine, open_text
from flows.sources.syslog import syslog_timestamp_and_host

FAILED_CHECK_RE = re.compile(r"(ERROR|WARNING):\s+nhc:\s+Health check failed:\s+(\w+):\s*(.*)$")


@dataclass
class NhcReadStats:
    lines: int = 0
    failed_checks: int = 0
    other_lines: int = 0


def read_nhc_log(
    path: Path, tz: ZoneInfo, year: int, stats: NhcReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[HealthCheck]:
    stats = stats if stats is not None else NhcReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            stats.lines += 1
            failed = FAILED_CHECK_RE.search(line)
            if not failed:
                stats.other_lines += 1
                continue
            stats.failed_checks += 1
            try:
                ts, node = syslog_timestamp_and_host(line, path, line_no, tz, year)
            except InputFormatError as error:
                quarantine.reject(error)
                continue
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
