"""The commands of `reliability-report` (flows/cli.py parses their arguments): each loads its
configs and checks them and its months at the edge (flows/edge.py) before any work, then starts
Prefect, makes its plan (flows/plan.py) and runs it in the one flow (flows/run_plan.py), printing
its progress and outcome."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from datetime import datetime
from pathlib import Path

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config, starter_config
from flows.core.errors import EXIT_DONE, EXIT_FAILED, EXIT_INPUT, ConfigError, UsageError
from flows.core.prefect_api import server_booting, start_api, wait_for_api
from flows.edge import checked_month, checked_range, checked_study
from flows.ingest.month_records import config_month_records, refuse_empty_months
from flows.ingest.probe import check_can_run, server_probes, source_problems
from flows.ingest.sources.registry import COMMAND_KINDS, JOB_RECORD_SOURCES
from flows.plan import ClustersPlan, StudyPlan, plan_backfill, plan_month


class _StdoutHandler(logging.StreamHandler):
    """A handler writing to sys.stdout as it is when a line is logged (a test's captured output, or
    the console), not to the stream it was when main() first ran in the process."""

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, _) -> None:  # StreamHandler.__init__ sets it
        pass


def show_progress() -> None:
    """Print the runs' progress lines (stage by stage, with counts) and the delivery, lock, warehouse
    rebuild and sent-log repair warnings."""
    handler = _StdoutHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s  %(message)s", "%H:%M:%S"))
    for name in (
        "flows.progress",
        "flows.delivery.deliver",
        "flows.delivery.mailer",
        "flows.core.runlock",
        "flows.warehouse.build",
        "flows.delivery.sent_log",
        "flows.ingest.sources.slurm_live",
    ):
        logger = logging.getLogger(name)
        logger.handlers = [handler]  # once, to the current stdout, however often main() runs in a process
        logger.setLevel(logging.INFO)
        logger.propagate = False


def say(line: str) -> None:
    """A progress line of the command itself, in the format of the stages' lines."""
    print(f"{datetime.now():%H:%M:%S}  {line}", flush=True)


def keep_prefect_off_the_console() -> None:
    """Prefect logs a failed task and flow with full tracebacks to stderr; the command prints one
    `error:` line instead (the Prefect log keeps the traceback; --debug shows it here too)."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrefectConsoleHandler):
            handler.setLevel(logging.CRITICAL + 1)


def prefect_start_up(debug: bool = False, engine: str | None = None) -> None:
    """Return once the command's Prefect API answers. With one running, nothing is imported here:
    each stage imports its own libraries as it starts, and the landing starts at once. While the
    temporary server start_api() spawned boots in its own process, this one would only wait: on the
    DuckDB `engine` it imports what the build and the checks use (dbt, Great Expectations) in a
    thread meanwhile, which the run does not wait for (bench/README.md has the timings). Not on
    Spark: Great Expectations is imported there once the Spark session has imported pyspark."""
    if not debug:
        keep_prefect_off_the_console()
    if engine == "duckdb" and server_booting():
        threading.Thread(target=import_stage_libraries, name="import-stage-libraries", daemon=True).start()
    wait_for_api()


def import_stage_libraries() -> None:
    """dbt's runner and Great Expectations (without pyspark: flows/quality/suites.py import_gx)."""
    from dbt.cli.main import dbtRunner  # noqa: F401

    from flows.quality.suites import import_gx

    import_gx()


def cmd_simulate(args: argparse.Namespace) -> int:
    from simulator import SimParams, simulate

    if args.month:
        if args.to_month:
            raise UsageError("--to goes with --from, not with --month")
        first = last = args.month
    else:
        if not args.to_month:
            raise UsageError("--from needs --to")
        first, last = args.from_month, args.to_month
        if last < first:
            raise UsageError(f"--to {last} is before --from {first}")
    params = SimParams(
        cluster=args.cluster,
        month=first,
        last_month=last,
        nodes=args.nodes,
        seed=args.seed,
        r_f=args.r_f,
        lemon_fraction=args.lemon_fraction,
        duration_scale=args.duration_scale,
        slurm_version=args.slurm_version,
        utilization=args.utilization,
        fault_trace=Path(args.fault_trace) if args.fault_trace else None,
    )
    say(f"simulating {args.nodes} nodes of {args.cluster}, {first}..{last} ...")
    truth = simulate(params, Path(args.out))
    months = truth.get("months", {str(first): truth})
    failures = sum(len(m["infra_failures"]) for m in months.values())
    print(
        f"simulated {args.cluster} {first}..{last}: {args.nodes} nodes, {failures} injected infrastructure "
        f"failures ending in the months, {len(truth['lemon_nodes'])} lemon nodes -> {args.out}"
    )
    return EXIT_DONE


def cmd_run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    dumped_at = checked_month(config, args.month, args.partial, args.as_of, args.no_jobs_ran)
    show_progress()
    say(f"{config.cluster} {args.month}: starting Prefect ...")
    start_api()
    from flows.run_plan import flow_of  # Prefect's import alone takes seconds: after the line above

    prefect_start_up(args.debug, config.warehouse.engine)
    plan = plan_month(config, args.month, resend=args.resend, as_of=dumped_at, no_jobs_ran=args.no_jobs_ran)
    summary = flow_of(plan)(plan)
    print(f"{summary.cluster} {summary.month}: {summary.counts}; {summary.delivery}")
    if summary.period_notice:
        print(summary.period_notice)
    print("stages:  " + ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in summary.stage_seconds.items()))
    print(f"report:  {summary.report}")
    print(f"metrics: {summary.metrics}")
    if summary.refreshed:
        print("later months refreshed (their comparisons and job runs include this month):")
        for outcome in summary.refreshed:
            print(f"  {outcome.month}  {outcome.outcome:<9} {outcome.detail}")
        changed = [o.month for o in summary.refreshed if o.changed]
        print(f"reports whose figures changed: {' '.join(changed) if changed else 'none'}")
    if failed := [o for o in summary.refreshed if o.outcome == "failed"]:
        months = " ".join(o.month for o in failed)
        print(
            f"error: {args.month} was built, but {len(failed)} later months were not refreshed ({months}): "
            "their reports are the ones from before; run each again with --month",
            file=sys.stderr,
        )
        return EXIT_INPUT if all(o.input_error for o in failed) else EXIT_FAILED
    return EXIT_DONE


def loaded_clusters(paths: list[str]) -> list[ClusterConfig]:
    """Every config, loaded before any work; two configs of one cluster are a UsageError (one
    backfill at a time builds a cluster's months)."""
    configs = [load_config(path) for path in paths]
    seen: dict[str, str] = {}
    for path, config in zip(paths, configs, strict=True):
        if config.cluster in seen:
            raise UsageError(
                f"{seen[config.cluster]} and {path} are both of cluster {config.cluster}: "
                "give each cluster's config once (its months are built by one backfill, oldest first)"
            )
        seen[config.cluster] = path
    return configs


def cmd_backfill(args: argparse.Namespace) -> int:
    configs = loaded_clusters(args.config)
    checked_range(configs, args.from_month, args.to_month, args.partial, args.no_jobs_ran, args.force)
    if len(configs) > 1:
        return backfill_in_parallel(args, configs)
    (config,) = configs
    show_progress()
    say(f"{config.cluster} {args.from_month}..{args.to_month}: starting Prefect ...")
    start_api()
    from flows.run_plan import flow_of  # Prefect's import alone takes seconds: after the line above

    prefect_start_up(args.debug, config.warehouse.engine)
    plan = plan_backfill(
        config,
        args.from_month,
        args.to_month,
        force=args.force,
        resend=args.resend,
        email=args.email,
        no_jobs_ran=args.no_jobs_ran,
    )
    outcomes = flow_of(plan)(plan)
    print(f"{config.cluster} {args.from_month}..{args.to_month}:")
    for outcome in outcomes:
        print(f"  {outcome.month}  {outcome.outcome:<8} {outcome.detail}")
    return EXIT_DONE


def backfill_in_parallel(args: argparse.Namespace, configs: list[ClusterConfig]) -> int:
    """Each cluster's backfill in its own process, --parallel of them at a time (default: one per
    cluster, at most one per core), their lines prefixed with the cluster."""
    parallel = args.parallel or min(len(configs), os.cpu_count() or 1)
    names = ", ".join(c.cluster for c in configs)
    say(f"{names} {args.from_month}..{args.to_month}: starting {len(configs)} backfills, {parallel} at a time ...")
    start_api()  # the API server the children report to too
    from flows.run_plan import flow_of  # Prefect's import alone takes seconds: after the line above

    prefect_start_up(args.debug)
    plan = ClustersPlan(
        tuple(configs),
        args.from_month,
        args.to_month,
        parallel,
        force=args.force,
        resend=args.resend,
        partial=args.partial,
        email=args.email,
        debug=args.debug,
        no_jobs_ran=args.no_jobs_ran,
    )
    flow_of(plan)(plan)
    say(f"{names} {args.from_month}..{args.to_month}: every cluster's months built or skipped")
    return EXIT_DONE


def cmd_study(args: argparse.Namespace) -> int:
    configs = [load_config(path) for path in args.config]
    checked_study(configs, args.from_month, args.to_month)
    names = ", ".join(c.cluster for c in configs)
    show_progress()
    say(f"study of {names}, {args.from_month}..{args.to_month}: starting Prefect ...")
    start_api()
    from flows.run_plan import flow_of  # Prefect's import alone takes seconds: after the line above

    prefect_start_up(args.debug)
    plan = StudyPlan(tuple(configs), args.from_month, args.to_month, notify=args.send, resend=args.resend)
    result = flow_of(plan)(plan)
    print(result["summary"])
    print(f"delivery: {result['delivery']}")
    print(f"study:    {result['study']}")
    return EXIT_DONE


def config_summary(config: ClusterConfig) -> str:
    """A one-line summary of a config, for `check`."""
    kinds = ", ".join(f"{s.kind} (times in {config.timezone_of(s.kind)})" for s in config.sources)
    email = config.email
    mail = f"email to {len(email.to)} + alerts to {len(email.alert_recipients)}" if email else "no email"
    hook = "; a webhook" if config.webhook else ""
    push = "; a Pushgateway" if config.prometheus and config.prometheus.pushgateway_url else ""
    return f"cluster {config.cluster}, sources: {kinds}; site time zone {config.site_timezone}; {mail}{hook}{push}"


def cmd_check(args: argparse.Namespace) -> int:
    """Validate a config (and with --month, that month's inputs) in about a second: no Prefect, dbt or GX."""
    config = load_config(args.config)
    check_can_run(config)
    summary = f"OK {args.config}: {config_summary(config)}"
    if args.month is not None:
        problems = source_problems(config, args.month)
        served, server_problems = server_probes(config, args.month)
        problems += server_problems
        if problems:
            raise ConfigError("\n".join(f"{args.config}: {args.month}: {problem}" for problem in problems))
        found = config_month_records(config, [args.month])
        refuse_empty_months(found, again="`run` it")  # as `run` would refuse it
        counts = [
            f"{_records(f.in_month[args.month])} in {args.month} ({f.kind}: {f.path}; {f.span()})"
            + (
                f": {covered}, and the month is reported as a partial month over it"
                if (covered := f.coverage(args.month))
                else ""
            )
            for f in found
        ]
        counts += [
            f"{s.kind}: its records are counted once pulled, by `run`"
            for s in config.live_sources(COMMAND_KINDS)
            if s.kind in JOB_RECORD_SOURCES
        ]
        counts += served
        summary += f"; {args.month}: every input present and readable; " + "; ".join(counts)
    print(summary)
    return EXIT_DONE


def _records(count: int) -> str:
    return f"{count:,} job record{'s' * (count != 1)}"


def cmd_init(args: argparse.Namespace) -> int:
    out = Path(args.out or f"{args.cluster}.toml")
    text = starter_config(args.cluster)
    try:
        with open(out, "x") as handle:  # "x": never overwrite a config
            handle.write(text)
    except FileExistsError:
        raise ConfigError(f"{out} exists; not overwritten (move it away or give another --out)") from None
    print(f"wrote {out}; set its [[sources]] paths, then: reliability-report check --config {out} --month YYYY-MM")
    return EXIT_DONE


def cmd_parse(args: argparse.Namespace) -> int:
    """Run one format's reader on one file: its typed rows and its quarantine, in about a second."""
    from flows.ingest.parse import format_parsed, parse_source, source_timezone

    timezone = args.timezone or (source_timezone(load_config(args.config), args.kind) if args.config else "UTC")
    parsed = parse_source(args.kind, Path(args.file), timezone, args.year)
    for line in format_parsed(parsed, args.limit, args.json):
        print(line)
    return EXIT_DONE
