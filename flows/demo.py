"""`reliability-report demo` and `demo-study`: simulated clusters, their configs, and their reports."""

from __future__ import annotations

import argparse
from pathlib import Path

from flows.commands import cmd_backfill, cmd_study, say
from flows.config.file import load_config
from flows.core.months import Month


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


def demo_months(config_path: Path) -> int:
    """How many continuous months the demo builds by default: as far back as its config's longest
    trailing window reaches (12), so its trend and every window are filled in and its report names
    no month as not built."""
    return max(load_config(config_path).analysis.trailing_months, default=1)


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
    config_path = write_demo_config(workdir, args.cluster, Path(args.reports))
    first = months_before(last, (args.months or demo_months(config_path)) - 1)
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
            no_jobs_ran=False,
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
