"""`reliability-report`: simulate a cluster month, run the monthly pipeline, backfill months, export them for
Prometheus, or run the demo."""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
import threading
import traceback
import warnings
from datetime import datetime
from pathlib import Path

from flows.core.config import ClusterConfig
from flows.core.config_file import load_config, starter_config
from flows.core.errors import EXIT_DONE, EXIT_FAILED, EXIT_INPUT, ConfigError, UsageError, exit_code
from flows.core.escape import printable_lines
from flows.core.months import Month
from flows.core.prefect_api import start_api, wait_for_api
from flows.edge import checked_month, checked_range, checked_study
from flows.ingest.probe import check_can_run, source_problems
from flows.publish.history import add_export_parser

# pyspark (the optional Spark engine's) warns on import that it does not support pandas 3 yet; the
# tool reads no pandas through it, and the warning would reach every command's stderr
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)


def _month(text: str) -> Month:
    try:
        return Month.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _time_zone(text: str) -> str:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise argparse.ArgumentTypeError(f"not an IANA time zone: {text!r}") from None
    return text


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


def overlap_start_up(debug: bool = False) -> None:
    """Pay the run's fixed start-up costs side by side: the temporary Prefect API server (started by
    start_api() before Prefect was imported) boots in its own process while this process imports dbt
    and Great Expectations; returns when both are done (bench/README.md has the timings)."""
    import threading

    if not debug:
        keep_prefect_off_the_console()

    def import_stage_libraries() -> None:
        import great_expectations  # noqa: F401
        from dbt.cli.main import dbtRunner  # noqa: F401

    # prefect's own imports are done before, in this thread: the two threads never import the same module
    warm = threading.Thread(target=import_stage_libraries, name="import-stage-libraries", daemon=True)
    warm.start()
    wait_for_api()
    warm.join()


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
    dumped_at = checked_month(config, args.month, partial=args.partial, as_of=args.as_of)
    show_progress()
    say(f"{config.cluster} {args.month}: starting (Prefect, dbt, Great Expectations) ...")
    start_api()
    from flows.pipeline import monthly_report  # Prefect's import alone takes seconds: after the line above

    overlap_start_up(args.debug)
    summary = monthly_report(
        cluster=config.cluster, config=config, month=args.month, resend=args.resend, as_of=dumped_at
    )
    print(
        f"{summary['cluster']} {summary['month']}: {summary['attempts']} attempts, "
        f"{summary['infra_failures']} infrastructure failures; {summary['delivery']}"
    )
    print("stages:  " + ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in summary["stage_seconds"].items()))
    print(f"report:  {summary['report']}")
    print(f"metrics: {summary['metrics']}")
    if summary["refreshed"]:
        print("later months refreshed (their comparisons and job runs include this month):")
        for outcome in summary["refreshed"]:
            print(f"  {outcome['month']}  {outcome['outcome']:<9} {outcome['detail']}")
    if failed := [o for o in summary["refreshed"] if o["outcome"] == "failed"]:
        months = " ".join(o["month"] for o in failed)
        print(
            f"error: {args.month} was built, but {len(failed)} later months were not refreshed ({months}): "
            "their reports are the ones from before; run each again with --month",
            file=sys.stderr,
        )
        return EXIT_INPUT if all(o["input_error"] for o in failed) else EXIT_FAILED
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
    checked_range(configs, args.from_month, args.to_month, partial=args.partial)
    if len(configs) > 1:
        return backfill_in_parallel(args, configs)
    (config,) = configs
    show_progress()
    say(f"{config.cluster} {args.from_month}..{args.to_month}: starting (Prefect, dbt, Great Expectations) ...")
    start_api()
    from flows.backfill import backfill  # Prefect's import alone takes seconds: after the line above

    overlap_start_up(args.debug)
    outcomes = backfill(
        cluster=config.cluster,
        config=config,
        from_month=args.from_month,
        to_month=args.to_month,
        force=args.force,
        resend=args.resend,
        partial=args.partial,
        email=args.email,
    )
    print(f"{config.cluster} {args.from_month}..{args.to_month}:")
    for outcome in outcomes:
        print(f"  {outcome['month']}  {outcome['outcome']:<8} {outcome['detail']}")
    return EXIT_DONE


def backfill_in_parallel(args: argparse.Namespace, configs: list[ClusterConfig]) -> int:
    """Each cluster's backfill in its own process, --parallel of them at a time (default: one per
    cluster, at most one per core), their lines prefixed with the cluster."""
    parallel = args.parallel or min(len(configs), os.cpu_count() or 1)
    names = ", ".join(c.cluster for c in configs)
    say(f"{names} {args.from_month}..{args.to_month}: starting {len(configs)} backfills, {parallel} at a time ...")
    start_api()  # the API server the children report to too
    from flows.backfill import backfill_clusters  # Prefect's import alone takes seconds: after the line above

    if not args.debug:
        keep_prefect_off_the_console()
    wait_for_api()
    backfill_clusters(
        configs={c.cluster: str(c.config_path) for c in configs},
        from_month=args.from_month,
        to_month=args.to_month,
        parallel=parallel,
        force=args.force,
        resend=args.resend,
        partial=args.partial,
        email=args.email,
        debug=args.debug,
    )
    say(f"{names} {args.from_month}..{args.to_month}: every cluster's months built or skipped")
    return EXIT_DONE


def cmd_study(args: argparse.Namespace) -> int:
    configs = [load_config(path) for path in args.config]
    checked_study(configs, args.from_month, args.to_month)
    names = ", ".join(c.cluster for c in configs)
    show_progress()
    say(f"study of {names}, {args.from_month}..{args.to_month}: starting (Prefect, dbt, Great Expectations) ...")
    start_api()
    from flows.study import study  # Prefect's import alone takes seconds: after the line above

    overlap_start_up(args.debug)
    result = study(
        configs=configs,
        from_month=args.from_month,
        to_month=args.to_month,
        notify=args.send,
        resend=args.resend,
    )
    print(result["summary"])
    print(f"delivery: {result['delivery']}")
    print(f"study:    {result['study']}")
    return EXIT_DONE


def config_summary(config: ClusterConfig) -> str:
    """A one-line summary of a config, for `check`."""
    kinds = ", ".join(s.kind for s in config.sources)
    email = config.email
    mail = f"email to {len(email.to)} + alerts to {len(email.alert_recipients)}" if email else "no email"
    hook = "; a webhook" if config.webhook else ""
    push = "; a Pushgateway" if config.prometheus and config.prometheus.pushgateway_url else ""
    return f"cluster {config.cluster}, sources: {kinds}; time zone {config.site_timezone}; {mail}{hook}{push}"


def cmd_check(args: argparse.Namespace) -> int:
    """Validate a config (and with --month, that month's inputs) in about a second: no Prefect, dbt or GX."""
    config = load_config(args.config)
    check_can_run(config)
    summary = f"OK {args.config}: {config_summary(config)}"
    if args.month is not None:
        problems = source_problems(config, args.month)
        if problems:
            raise ConfigError("\n".join(f"{args.config}: {args.month}: {problem}" for problem in problems))
        summary += f"; {args.month}: every input present and readable"
    print(summary)
    return EXIT_DONE


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
    from flows.ingest.parse import format_parsed, parse_source

    parsed = parse_source(args.kind, Path(args.file), args.timezone, args.year)
    for line in format_parsed(parsed, args.limit, args.json):
        print(line)
    return EXIT_DONE


def write_demo_config(workdir: Path, cluster: str, reports_dir: Path) -> Path:
    sim = "sim/{cluster}/{month}"
    path = workdir / f"{cluster}.toml"
    path.write_text(
        f'cluster = "{cluster}"\n'
        'site_timezone = "UTC"\n\n'
        f'[[sources]]\nkind = "sacct_psv"\npath = "{sim}/sacct.psv"\n\n'
        f'[[sources]]\nkind = "sacctmgr_events_psv"\npath = "{sim}/events.psv"\n\n'
        f'[[sources]]\nkind = "xid_syslog"\npath = "{sim}/xid.log"\n\n'
        f'[[sources]]\nkind = "nhc_syslog"\npath = "{sim}/nhc.log"\n\n'
        f'[[sources]]\nkind = "dcgm_health_dir"\npath = "{sim}/dcgm"\n\n'
        f'[paths]\ndata = "data"\nreports = "{reports_dir.resolve()}"\nwarehouse = "warehouse/{cluster}.duckdb"\n'
    )
    return path


DEMO_MONTHS = 3  # the demo reports the last of three continuous months, so its trend has a history


def months_before(month: Month, count: int) -> Month:
    """The month `count` months before `month`."""
    for _ in range(count):
        month = month.previous()
    return month


def cmd_demo(args: argparse.Namespace) -> int:
    from simulator import SimParams, simulate

    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    last = args.month or Month.last_full()
    first = months_before(last, DEMO_MONTHS - 1)
    config_path = write_demo_config(workdir, args.cluster, Path(args.reports))
    sim_dir = workdir / "sim" / args.cluster
    say(f"simulating {args.nodes} nodes of {args.cluster}, {first}..{last} ...")
    params = SimParams(cluster=args.cluster, month=first, last_month=last, nodes=args.nodes, seed=args.seed)
    truth = simulate(params, sim_dir)
    failures = sum(len(m["infra_failures"]) for m in truth["months"].values())
    print(
        f"simulated {args.cluster} {first}..{last} without a break: {args.nodes} nodes, {failures} injected "
        f"infrastructure failures; logs in {sim_dir}/<month>/"
    )
    code = cmd_backfill(
        argparse.Namespace(
            config=[str(config_path)],
            from_month=first,
            to_month=last,
            force=True,
            resend=False,
            partial=False,
            email="latest",
            debug=args.debug,
        )
    )
    report_dir = load_config(config_path).report_dir(last)
    print(f"report:  {report_dir / 'report.html'}")
    print(f"metrics: {report_dir / 'metrics.json'}")
    print(f"archive: {report_dir.parent.parent / 'index.html'}")  # every month built (flows/publish/archive.py)
    return code


# The demo study: two clusters a year long, as the paper's two (their r_f per 1000 node-days)
DEMO_STUDY_CLUSTERS = {"demo-rsc1": 6.5, "demo-rsc2": 2.34}
DEMO_STUDY_MONTHS = 12


def cmd_demo_study(args: argparse.Namespace) -> int:
    """Simulate the demo study's two clusters over the last DEMO_STUDY_MONTHS months and build their study."""
    from simulator import SimParams, simulate

    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    last = args.month or Month.last_full()
    first = months_before(last, DEMO_STUDY_MONTHS - 1)
    configs = []
    for i, (cluster, r_f) in enumerate(DEMO_STUDY_CLUSTERS.items()):
        configs.append(str(write_demo_config(workdir, cluster, Path(args.reports))))
        say(f"simulating {args.nodes} nodes of {cluster} (r_f {r_f} per 1000 node-days), {first}..{last} ...")
        params = SimParams(cluster=cluster, month=first, last_month=last, nodes=args.nodes, seed=args.seed + i, r_f=r_f)
        simulate(params, workdir / "sim" / cluster)
    return cmd_study(
        argparse.Namespace(config=configs, from_month=first, to_month=last, send=False, resend=False, debug=args.debug)
    )


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cluster-reliability-report")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def add_simulate_parser(sub, common: argparse.ArgumentParser) -> None:
    sim = sub.add_parser(
        "simulate", parents=[common], help="write simulated months of Slurm and health logs (one history)"
    )
    sim.add_argument("--cluster", required=True)
    span = sim.add_mutually_exclusive_group(required=True)
    span.add_argument("--month", type=_month, help="YYYY-MM: one month, its files directly in --out")
    span.add_argument("--from", dest="from_month", type=_month, help="YYYY-MM: first month of a history")
    sim.add_argument("--to", dest="to_month", type=_month, help="YYYY-MM: last month (with --from)")
    sim.add_argument("--nodes", required=True, type=int)
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--r-f", type=float, default=6.5, help="node failure rate per 1000 node-days")
    sim.add_argument("--lemon-fraction", type=float, default=0.005, help="share of nodes that are lemons")
    sim.add_argument("--duration-scale", type=float, default=1.0, help="scale runtimes (more, shorter jobs)")
    sim.add_argument("--slurm-version", choices=("22.05", "24.11"), default="22.05", help="sacct field set")
    sim.add_argument("--utilization", type=float, default=0.83, help="offered GPU-hours over capacity")
    sim.add_argument("--fault-trace", help="CSV node,failed_at,repaired_at,category to replay (docs/simulator.md)")
    sim.add_argument("--out", required=True, help="output directory")
    sim.set_defaults(func=cmd_simulate)


def add_run_parser(sub, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser("run", parents=[common], help="build the monthly report of one cluster")
    run.add_argument("--month", required=True, type=_month, help="YYYY-MM")
    run.add_argument("--config", required=True, help="cluster config (TOML)")
    run.add_argument("--resend", action="store_true", help="email the report again although its figures were sent")
    run.add_argument(
        "--partial", action="store_true", help="report a month that has not ended, up to when its records were taken"
    )
    run.add_argument(
        "--as-of",
        help="when the records were dumped (ISO 8601, UTC unless an offset is given); default: the pull time "
        "of a live pull, else the latest time in the records",
    )
    run.set_defaults(func=cmd_run)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of at least 1: {text!r}")
    return int(text)


def add_backfill_parser(sub, common: argparse.ArgumentParser) -> None:
    back = sub.add_parser(
        "backfill",
        parents=[common],
        help="build a range of past months, oldest first; several clusters side by side, each in its own process",
    )
    back.add_argument("--from", dest="from_month", required=True, type=_month, help="first month, YYYY-MM")
    back.add_argument("--to", dest="to_month", required=True, type=_month, help="last month, YYYY-MM")
    back.add_argument(
        "--config", required=True, action="append", help="a cluster's config (TOML); repeat for each cluster"
    )
    back.add_argument(
        "--parallel",
        type=_positive,
        default=None,
        metavar="N",
        help="with several --config: backfill N clusters at a time (default: each cluster, at most one per core)",
    )
    back.add_argument(
        "--force", action="store_true", help="rebuild months whose report exists (sending follows --email)"
    )
    back.add_argument("--resend", action="store_true", help="email reports again although their figures were sent")
    back.add_argument("--partial", action="store_true", help="allow --to to be the current, unfinished month")
    back.add_argument(
        "--email",
        choices=("none", "latest", "all"),
        default="latest",
        help="which months' reports are sent, by email and to the webhook (default: latest, the --to month); "
        "the others are archived",
    )
    back.set_defaults(func=cmd_backfill)


def add_study_parser(sub, common: argparse.ArgumentParser) -> None:
    study = sub.add_parser(
        "study",
        parents=[common],
        help="the paper's study over a range of months, one or more clusters side by side (builds missing months)",
    )
    study.add_argument("--from", dest="from_month", required=True, type=_month, help="first month, YYYY-MM")
    study.add_argument("--to", dest="to_month", required=True, type=_month, help="last month, YYYY-MM")
    study.add_argument(
        "--config", required=True, action="append", help="a cluster's config (TOML); repeat for each cluster"
    )
    study.add_argument(
        "--send", action="store_true", help="email the study (the first config's [email] and webhook); else archived"
    )
    study.add_argument("--resend", action="store_true", help="with --send: again although these figures were sent")
    study.set_defaults(func=cmd_study)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reliability-report", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="print tracebacks and Prefect's log on the console")
    sub = parser.add_subparsers(dest="command", required=True)
    add_simulate_parser(sub, common)

    add_run_parser(sub, common)
    add_backfill_parser(sub, common)
    add_study_parser(sub, common)
    add_export_parser(sub, common, _month)  # export-prometheus (flows/publish/history.py)

    demo = sub.add_parser(
        "demo", parents=[common], help="simulate three continuous months of a demo cluster and report the last"
    )
    demo.add_argument("--cluster", default="demo")
    demo.add_argument(
        "--month", type=_month, default=None, help="the month to report, YYYY-MM (default: last full month)"
    )
    demo.add_argument("--nodes", type=int, default=256)
    demo.add_argument("--seed", type=int, default=2025)
    demo.add_argument("--workdir", default="var/demo", help="where the simulated logs, landing and warehouse go")
    demo.add_argument("--reports", default="reports", help="where reports/<cluster>/<month>/ go")
    demo.set_defaults(func=cmd_demo)

    demo_study = sub.add_parser(
        "demo-study",
        parents=[common],
        help="simulate two clusters a year long (r_f 6.5 and 2.34) and build their study",
    )
    demo_study.add_argument("--month", type=_month, default=None, help="the study's last month (default: last full)")
    demo_study.add_argument("--nodes", type=int, default=128)
    demo_study.add_argument("--seed", type=int, default=2025)
    demo_study.add_argument("--workdir", default="var/demo-study", help="where the logs, landing and warehouses go")
    demo_study.add_argument("--reports", default="reports", help="reports/<cluster>/<month>/ and reports/studies/")
    demo_study.set_defaults(func=cmd_demo_study)

    check = sub.add_parser(
        "check", parents=[common], help="validate a config, and with --month that month's inputs, in seconds"
    )
    check.add_argument("--config", required=True, help="cluster config (TOML)")
    check.add_argument("--month", type=_month, default=None, help="YYYY-MM: also check its inputs exist and read")
    check.set_defaults(func=cmd_check)

    init = sub.add_parser(
        "init", parents=[common], help="write a commented starter config with every key and its default"
    )
    init.add_argument("--cluster", default="mycluster", help="the cluster's name (default: mycluster)")
    init.add_argument("--out", default=None, help="where to write it (default: <cluster>.toml); never overwritten")
    init.set_defaults(func=cmd_init)

    from flows.ingest.sources.registry import FILE_KINDS

    parse = sub.add_parser(
        "parse", parents=[common], help="run one format's reader on one file: its typed rows and quarantined lines"
    )
    parse.add_argument("--kind", required=True, choices=FILE_KINDS, help="the source kind (a pull: the kind it gives)")
    parse.add_argument("file", help="the file (a directory for *_dir kinds)")
    parse.add_argument("--timezone", default="UTC", type=_time_zone, help="zone of times without an offset (UTC)")
    parse.add_argument("--year", type=int, default=None, help="year of syslog lines that print none (this year)")
    parse.add_argument("--limit", type=int, default=None, help="show only the first N rows")
    parse.add_argument("--json", action="store_true", help="JSON lines: the rows, the quarantine, a summary")
    parse.set_defaults(func=cmd_parse)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; every failure becomes one `error:` line and an exit code (flows/core/errors.py)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("error: interrupted; outputs of earlier runs are unchanged", file=sys.stderr)
        return 130
    except Exception as exc:  # the one place a failure becomes an exit code
        code = exit_code(exc)
        if args.debug:
            traceback.print_exc()
        # escaped here whatever raised it: a message may quote the logs (a node name, a reason)
        message = printable_lines(str(exc).strip()) or type(exc).__name__
        if code == 1 and not isinstance(exc, RuntimeError):  # not an error we raise: say what it was
            message = f"{type(exc).__name__}: {message} (a bug? --debug shows the traceback)"
        print(f"error: {message}", file=sys.stderr)
        return code


def exit_without_teardown(code: int) -> None:
    """Exit once the run's threads and exit handlers (the temporary Prefect API server's shutdown,
    log flushes) are done, skipping the interpreter's module teardown: it spends seconds collecting
    the libraries' millions of objects, and DuckDB's bindings print a page of "leaked" warnings
    over the objects still referenced then. Memory is the operating system's to reclaim."""
    # What Py_FinalizeEx does first, in its order: threading's exit hooks (Prefect drains its log
    # queue to the API there) and the joining of non-daemon threads, then the atexit handlers.
    threading._shutdown()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def console_script() -> None:
    """`reliability-report`."""
    exit_without_teardown(main())


if __name__ == "__main__":
    console_script()
