"""The simulator's parameters, its calendar months and the simulated clock (whole seconds since the
warm-up starts)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import numpy as np

SOURCES = ("all", "jobs_only")  # what a month's dump holds: every log, or only the job records (sacct)


class YearMonth(Protocol):
    """What the simulator needs of a month its caller names: any value with these two (the
    pipeline's Month is one), so that the simulator depends on no caller's type."""

    @property
    def year(self) -> int: ...

    @property
    def month(self) -> int: ...


@dataclass(frozen=True, order=True)
class CalendarMonth:
    """A calendar month, its window [first day 00:00 UTC, next month's first day 00:00 UTC)."""

    year: int
    month: int

    @classmethod
    def of(cls, value: YearMonth) -> CalendarMonth:
        return cls(value.year, value.month)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        return self.next().start

    def next(self) -> CalendarMonth:
        return CalendarMonth(self.year + self.month // 12, self.month % 12 + 1)


@dataclass
class SimParams:
    cluster: str
    month: YearMonth
    nodes: int
    seed: int
    gpus_per_node: int = 8
    r_f: float = 6.5  # failures per 1000 node-days, fleet mean of the healthy nodes
    node_rate_shape: float = 2.0  # gamma shape of the per-node rate factor (mean 1); larger = more uniform
    lemon_fraction: float = 0.005
    lemon_factor: float = 25.0
    utilization: float = 0.83  # offered GPU-hours (all work submitted) over the cluster's capacity
    warmup_days: float = 7.0  # simulated before the first month so it starts busy, with a queue
    repair_hours: tuple[float, float] = (2.0, 48.0)
    resubmit_delay_min: tuple[float, float] = (2.0, 30.0)
    outside_window_share: float = 0.05  # FAILED-by-infra attempts whose evidence lands outside the window
    # Requeues by a user or an admin (the workload's REQUEUED outcome): the share the site marks in
    # AdminComment (`requeue=user` / `requeue=admin`), and the share followed by an unrelated
    # critical drain of one of their nodes inside the attribution window (an epilog health check).
    # Off by default, so a seed's history stays what it was; the attribution tests use 0.5 and 0.02.
    marked_requeue_share: float = 0.0
    requeue_drain_share: float = 0.0
    # The share of jobs that end on their own and fall into a crash loop instead: requeued 3-40
    # times (REQUEUED, RequeueExit), 1-20 minutes a round, the last round ending as the job would
    # have (simulator/crash_loops.py; the paper's worst was requeued 35 times). Off by default, so
    # a seed's history stays what it was; the crash-loop tests use 0.01.
    crash_loop_share: float = 0.0
    slurm_version: str = "22.05"  # or "24.11": adds Restarts and FailedNode
    node_prefix: str = "gpu"
    duration_scale: float = 1.0  # scales every runtime; more, shorter jobs at the same utilization
    array_share: float = 0.02  # share of 1-GPU submissions that start an array of 2-10 tasks
    watch_xids_per_node: float = 0.25  # watch-only Xid 63/92 lines (warnings) per node and 30 days
    last_month: YearMonth | None = None  # the history runs from `month` to this one (default: `month`)
    dump_delay_hours: float = 30.0  # a month's logs are taken this long after its end (06:00 on the 2nd)
    fault_trace: Path | None = None  # CSV of node faults to replay instead of drawing them
    # A real site's shapes (docs/simulator.md "A real site's first month"). CPU-only nodes in a `cpu`
    # partition beside the GPU ones, running CPU-only jobs (no gres/gpu), simulated from a random
    # stream of their own: the GPU history is the one the same seed gives without them.
    cpu_nodes: int = 0
    cpus_per_node: int = 64
    cpu_utilization: float = 0.6  # offered core-hours over the CPU nodes' capacity
    cpu_r_f: float = 5.0  # CPU node faults per 1000 node-days; each ends the node's jobs NODE_FAIL
    cpu_node_prefix: str = "cpu"
    sources: str = "all"  # "all": every log; "jobs_only": only sacct.psv (no node events, no health logs)
    # The last month's records end here, mid-month (a datetime, or a day of the last month at 00:00
    # UTC): the history stops, and the dump is taken, at that time.
    dump_ends: datetime | int | None = None
    # The first month's job records begin here (a dump windowed by end time, as Open XDMoD's: no
    # attempt that ended before it), and so does its truth's window; `health_starts`: its node events
    # and health logs begin here. A datetime, or a day of the first month at 00:00 UTC.
    dump_starts: datetime | int | None = None
    health_starts: datetime | int | None = None

    @property
    def first(self) -> CalendarMonth:
        return CalendarMonth.of(self.month)

    @property
    def last(self) -> CalendarMonth:
        return CalendarMonth.of(self.last_month or self.month)

    @property
    def months(self) -> list[CalendarMonth]:
        months, last = [self.first], self.last
        while months[-1] < last:
            months.append(months[-1].next())
        return months

    def validate(self) -> None:
        if self.nodes < 1:
            raise ValueError("a cluster needs at least one node")
        if self.slurm_version not in ("22.05", "24.11"):
            raise ValueError(f"slurm_version must be 22.05 or 24.11, got {self.slurm_version!r}")
        if self.last < self.first:
            raise ValueError(f"last_month {self.last} is before month {self.first}")
        if not 0 < self.utilization <= 1.5:
            raise ValueError(f"utilization must be in (0, 1.5], got {self.utilization}")
        if self.sources not in SOURCES:
            raise ValueError(f"sources must be one of {', '.join(SOURCES)}, got {self.sources!r}")
        if self.cpu_nodes < 0 or self.cpus_per_node < 1:
            raise ValueError("cpu_nodes must be >= 0 and cpus_per_node >= 1")
        if self.cpu_nodes and self.cpu_node_prefix == self.node_prefix:
            raise ValueError("cpu_node_prefix must differ from node_prefix")
        if self.cpu_nodes and not 0 < self.cpu_utilization <= 1.5:
            raise ValueError(f"cpu_utilization must be in (0, 1.5], got {self.cpu_utilization}")
        for name, time in (("dump_starts", self.dump_start_time), ("health_starts", self.health_start_time)):
            if time is not None and not self.first.start <= time < self.first.end:
                raise ValueError(f"{name} {time} is not inside the first month {self.first}")
        ends = self.dump_end_time
        if ends is not None and not self.last.start < ends < self.last.end:
            raise ValueError(f"dump_ends {ends} is not inside the last month {self.last}")
        if (
            ends is not None
            and self.last > self.first
            and ends < self.last.start + timedelta(hours=self.dump_delay_hours)
        ):
            raise ValueError(
                f"dump_ends {ends} is before the previous month's dump (dump_delay_hours after {self.last})"
            )

    @property
    def dump_end_time(self) -> datetime | None:
        """`dump_ends` as a UTC time (None: every month's dump is taken after its end)."""
        return _utc_time(self.dump_ends, self.last)

    @property
    def dump_start_time(self) -> datetime | None:
        """`dump_starts` as a UTC time (None: the first month's records begin before it)."""
        return _utc_time(self.dump_starts, self.first)

    @property
    def health_start_time(self) -> datetime | None:
        """`health_starts` as a UTC time (None: the logs begin before the first month)."""
        return _utc_time(self.health_starts, self.first)

    def as_dict(self) -> dict:
        params = asdict(self)
        params["month"] = str(self.first)
        params["last_month"] = str(self.last)
        params["fault_trace"] = str(self.fault_trace) if self.fault_trace else None
        for name, time in (
            ("dump_ends", self.dump_end_time),
            ("dump_starts", self.dump_start_time),
            ("health_starts", self.health_start_time),
        ):
            params[name] = time.strftime("%Y-%m-%dT%H:%M:%S") if time else None
        return params


def _utc_time(value: datetime | int | None, month: CalendarMonth) -> datetime | None:
    """A time given as a datetime (UTC unless it says) or as a day of `month` at 00:00 UTC."""
    if value is None:
        return None
    if isinstance(value, int):
        return month.start.replace(day=value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class Clock:
    """Simulated time is whole seconds since `t0`, the start of the warm-up: the writers print the
    same integers the truth is computed from."""

    t0: datetime

    def seconds(self, ts: datetime) -> int:
        return int((ts - self.t0).total_seconds())

    def datetime(self, seconds: int) -> datetime:
        return self.t0 + timedelta(seconds=int(seconds))

    def text(self, seconds: int) -> str:
        """sacct's time format, e.g. 2026-10-03T12:34:56."""
        return self.datetime(seconds).strftime("%Y-%m-%dT%H:%M:%S")

    def texts(self, seconds: np.ndarray) -> list[str]:
        """Vectorised `text`."""
        base = np.datetime64(self.t0.replace(tzinfo=None), "s")
        return np.datetime_as_string(base + seconds.astype("timedelta64[s]"), unit="s").tolist()


@dataclass(frozen=True)
class MonthWindow:
    """One month of the history in simulated seconds, and the dump time of its logs."""

    month: CalendarMonth
    start: int
    end: int
    as_of: int

    @classmethod
    def of(cls, month: CalendarMonth, clock: Clock, dump_delay_hours: float) -> MonthWindow:
        end = clock.seconds(month.end)
        return cls(month, clock.seconds(month.start), end, end + int(dump_delay_hours * 3600))
