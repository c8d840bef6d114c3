"""`reliability-report`: simulate a cluster month, run the monthly pipeline, backfill months, export them for
Prometheus, or run the demo."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
import traceback

from flows.commands import cmd_backfill, cmd_check, cmd_init, cmd_parse, cmd_run, cmd_simulate, cmd_study
from flows.core.errors import ConfigError, exit_code
from flows.core.escape import printable_lines
from flows.core.months import Month
from flows.demo import cmd_demo, cmd_demo_study
from flows.explain.command import add_explain_parsers
from flows.publish.history import add_export_parser


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
    run.add_argument(
        "--no-jobs-ran",
        action="store_true",
        help="no job ran on the cluster that month: build its report although its job records have none in it (else refused)",
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
    back.add_argument(
        "--no-jobs-ran",
        action="store_true",
        help="no job ran in the range's months that have no job record: build them (else the backfill is refused)",
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
    add_explain_parsers(sub, common, _month)  # explain, node (flows/explain/command.py)

    demo = sub.add_parser(
        "demo", parents=[common], help="simulate a year of a demo cluster, build it and report its last month"
    )
    demo.add_argument("--cluster", default="demo")
    demo.add_argument(
        "--month", type=_month, default=None, help="the month to report, YYYY-MM (default: last full month)"
    )
    demo.add_argument("--nodes", type=int, default=256)
    demo.add_argument(
        "--months",
        type=_positive,
        default=None,
        help="continuous months ending at --month (default: its longest trailing window, 12)",
    )
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
    parse.add_argument(
        "--timezone",
        default=None,
        type=_time_zone,
        help="zone of times without an offset (default: --config's, or UTC)",
    )
    parse.add_argument("--config", default=None, help="a cluster config: the zone of its source of --kind")
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
        # a config's (or a month's inputs') problems: one `error:` line each; a message quoting a
        # command's stderr over several lines keeps them as its own
        lines = message.split("\n")
        if isinstance(exc, ConfigError):
            lines = [f"error: {line}" for line in lines]
        else:
            lines[0] = f"error: {lines[0]}"
        print("\n".join(lines), file=sys.stderr)
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
