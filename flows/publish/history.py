"""`reliability-report export-prometheus`: every built month of a cluster as one OpenMetrics file
with a timestamp per sample (the month's end), for `promtool tsdb create-blocks-from openmetrics`,
so a Prometheus holds the monthly figures as far back as they were built.

The months are read from the report directories (metrics.json, flows/figures/read.py), not
rebuilt; a month of a schema version too early to read as the current one is left out with a
warning (build it again to export it). The file is written atomically and is the same bytes for
the same reports.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.atomic import replace_file_atomically
from flows.core.errors import EXIT_DONE, UsageError
from flows.core.months import MONTH_RE, Month
from flows.figures.document import MonthDocument
from flows.figures.read import DocumentError, read_document
from flows.report.openmetrics import history_exposition

log = logging.getLogger("flows.progress")

HISTORY_FILE = "metrics-history.om"  # beside the cluster's month directories, by default


@dataclass(frozen=True)
class Export:
    path: Path
    months: list[str]
    samples: int
    left_out: list[str]  # the months whose metrics.json could not be read (each with its warning)


def built_months(
    config: ClusterConfig, first: Month | None = None, last: Month | None = None
) -> tuple[list[MonthDocument], list[str]]:
    """The document of every month of the cluster with a report, oldest first, within first..last,
    and the months left out: a metrics.json that cannot be read (damaged, or of a schema version too
    early to read) is left out with a warning naming it and what to do."""
    cluster_dir = config.reports_dir / config.cluster
    months, left_out = [], []
    for month_dir in sorted(cluster_dir.iterdir()) if cluster_dir.is_dir() else []:
        if not (MONTH_RE.fullmatch(month_dir.name) and (month_dir / "metrics.json").is_file()):
            continue
        month = Month.parse(month_dir.name)
        if (first is None or month >= first) and (last is None or month <= last):
            try:
                document = read_document(month_dir / "metrics.json")
            except DocumentError as error:  # the other months are still exported; this one says why not
                log.warning("export-prometheus: %s left out: %s", month_dir.name, error)
                left_out.append(month_dir.name)
                continue
            if isinstance(document, MonthDocument):
                months.append(document)
    return months, left_out


def export_history(config: ClusterConfig, out: Path | None, first: Month | None, last: Month | None) -> Export:
    months, left_out = built_months(config, first, last)
    if left_out and not months:
        raise UsageError(
            f"{config.cluster}: no month's metrics.json could be read ({', '.join(left_out)}: why above); build "
            f"them again: reliability-report backfill --config {config.config_path} --force --from {left_out[0]} "
            f"--to {left_out[-1]}"
        )
    if not months:
        spans = {(True, True): f" in {first}..{last}", (True, False): f" from {first}", (False, True): f" up to {last}"}
        span = spans.get((first is not None, last is not None), "")
        raise UsageError(
            f"{config.cluster}: no month built{span} in {config.reports_dir / config.cluster}; "
            f"build them first: reliability-report backfill --config {config.config_path} --from YYYY-MM --to YYYY-MM"
        )
    path = out or config.reports_dir / config.cluster / HISTORY_FILE
    text = history_exposition(months)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file_atomically(path, text)
    samples = sum(1 for line in text.decode().splitlines() if line and not line.startswith("#"))
    return Export(path, [m.month for m in months], samples, left_out)


def cmd_export_prometheus(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.from_month and args.to_month and args.to_month < args.from_month:
        raise UsageError(f"--from {args.from_month} is after --to {args.to_month}")
    done = export_history(config, Path(args.out) if args.out else None, args.from_month, args.to_month)
    print(
        f"{config.cluster} {done.months[0]}..{done.months[-1]}: {len(done.months)} month{'s' * (len(done.months) > 1)}, "
        f"{done.samples} samples -> {done.path}"
        + (f" ({len(done.left_out)} left out, unreadable: {', '.join(done.left_out)})" if done.left_out else "")
    )
    print(
        f"load it: promtool tsdb create-blocks-from openmetrics {done.path} BLOCKS; move BLOCKS/* into Prometheus's "
        "data directory and run it with --storage.tsdb.retention.time longer than the history (e.g. 10y; "
        "the default 15d deletes all but the newest month)"
    )
    return EXIT_DONE


def add_export_parser(sub, common: argparse.ArgumentParser, month_type) -> None:
    export = sub.add_parser(
        "export-prometheus",
        parents=[common],
        help="write every built month as one OpenMetrics file with timestamps, for promtool's backfill",
    )
    export.add_argument("--config", required=True, help="cluster config (TOML)")
    export.add_argument("--from", dest="from_month", type=month_type, default=None, help="first month (default: all)")
    export.add_argument("--to", dest="to_month", type=month_type, default=None, help="last month (default: all)")
    export.add_argument("--out", default=None, help=f"the file to write (default: <reports>/<cluster>/{HISTORY_FILE})")
    export.set_defaults(func=cmd_export_prometheus)
