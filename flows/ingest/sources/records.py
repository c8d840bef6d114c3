"""The row objects the Python readers yield, one class per landed table they feed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class HealthCheck:
    """A failed or warning health check on a node (NHC, DCGM, ...): one row of the health-event table
    (its `source` is the one its kind declares, flows/ingest/sources/registry.py, added by the landing)."""

    node: str
    ts: datetime
    check: str  # check_fs_mount, "Memory system", ...
    status: str  # the check's own verdict: ERROR, Failure, Warning
    message: str
    source_file: str
    source_line: int  # line in the file (1 for one-document files)
    uncertainty_seconds: int = 0  # it happened in (ts - this, ts]: a scraped series' step, 0 for a log's own time


@dataclass
class NodeEvent:
    node: str
    started_at: datetime
    ended_at: datetime | None
    state: str
    reason: str
    user: str
    source_line: int


@dataclass
class XidEvent:
    node: str
    ts: datetime
    xid: int
    pci: str
    message: str
    source_line: int
    source_file: str  # relative to the source's path
    uncertainty_seconds: int = 0  # as HealthCheck's
