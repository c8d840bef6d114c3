"""The edge: where a command's arguments or a deployment run's parameters become a checked config
and months, once, before any work. Past it, the flows pass the ClusterConfig on typed, and the months
as the text each flow's parameter validation makes a Month (flows/core/months.py says why).

The CLI calls these before Prefect's start-up (a mistake costs a second, not a flow run and an
alert); a deployment's run, whose parameters arrive as JSON (a config file's path, YYYY-MM), calls
them at its flow's start. A flow that gets a ClusterConfig was called past the edge (by the CLI,
or by a backfill or study for each month) and checks nothing again. No Prefect here.
"""

from __future__ import annotations

from datetime import datetime

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.errors import ConfigError, UsageError
from flows.core.months import Month, month_range, parse_as_of, reportable
from flows.ingest.month_records import config_month_records, refuse_empty_months
from flows.ingest.probe import check_can_run, missing_inputs


def deployment_config(path: str, cluster: str) -> ClusterConfig:
    """A deployment run's config: loaded from its path, and describing the run's `cluster`."""
    config = load_config(path)
    if config.cluster != cluster:
        raise ConfigError(f"{config.config_path}: describes cluster {config.cluster!r}, not {cluster!r}")
    return config


def checked_month(
    config: ClusterConfig, month: Month, partial: bool = False, as_of: str | None = None, no_jobs_ran: bool = False
) -> datetime | None:
    """Refuse, before any work, a month in the future or not ended (without `partial`), an `as_of`
    that is not a time, lies in the future or before the month, [paths] that cannot be written,
    inputs that are not there and job records with none in the month (unless `no_jobs_ran`):
    UsageError, ConfigError, MissingInputError or NoJobRecordsError, exit 2. Returns when the
    records were dumped (`as_of`), if given."""
    reportable(month, partial=partial)
    dumped_at = parse_as_of(as_of)
    if dumped_at is not None and dumped_at <= month.start:
        raise UsageError(f"--as-of {as_of} is not after the start of {month}: nothing of the month was recorded")
    check_can_run(config)
    # the landing checks its inputs again as it reads them: a backfill's months pass only their range's checks
    missing_inputs(month, config.source_paths(month))
    refuse_empty_months(config_month_records(config, [month]), no_jobs_ran)
    return dumped_at


def checked_range(
    configs: list[ClusterConfig],
    first: Month,
    last: Month,
    partial: bool = False,
    no_jobs_ran: bool = False,
    force: bool = False,
    again: str = "run the backfill again",
) -> None:
    """Refuse, before any work, a range backwards, a month in it in the future or not ended (the
    last, unless `partial`), a config whose [paths] cannot be written, and (unless `no_jobs_ran`)
    the whole range when a month it would land (one without a report, or any with `force`) has
    no job record: one error naming each such month (`again`: how to give --no-jobs-ran)."""
    if last < first:
        raise UsageError(f"--from {first} is after --to {last}")
    for month in (first, last):
        reportable(month, partial=partial)
    for config in configs:
        check_can_run(config)
    if no_jobs_ran:
        return
    found = []
    for config in configs:
        months = [m for m in month_range(first, last) if force or not (config.report_dir(m) / "metrics.json").is_file()]
        found += config_month_records(config, months)
    refuse_empty_months(found, again=again)


def checked_study(configs: list[ClusterConfig], first: Month, last: Month) -> None:
    """A study's `checked_range` of full months, of clusters named once each."""
    checked_range(configs, first, last, again="build them first with `reliability-report backfill`")
    names = [c.cluster for c in configs]
    if len(set(names)) != len(names):
        raise ConfigError(f"a study names each cluster once; got {', '.join(names)}")
