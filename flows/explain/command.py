"""The `explain` and `node` commands: open the cluster's warehouse read only, answer, print the
answer as text (80 columns) or, with --json, as one JSON document."""

from __future__ import annotations

import argparse
import sys

from flows.config.file import load_config
from flows.core.errors import EXIT_DONE
from flows.explain.explanation_types import JobAnswer, NodeAnswer
from flows.explain.job import explain_job
from flows.explain.job_ids import job_query
from flows.explain.node import checked_node, node_history
from flows.explain.warehouse import opened


def cmd_explain(args: argparse.Namespace) -> int:
    query = job_query(args.job)  # a malformed id is refused before the config is read
    config = load_config(args.config)
    with opened(config) as wh:
        answer = explain_job(wh, query, wh.checked_months(args.month))
    return _print(answer, args.json)


def cmd_node(args: argparse.Namespace) -> int:
    node = checked_node(args.name)
    config = load_config(args.config)
    with opened(config) as wh:
        answer = node_history(wh, node, wh.checked_months(args.month))
    return _print(answer, args.json)


def _print(answer: JobAnswer | NodeAnswer, as_json: bool) -> int:
    if as_json:
        print(answer.model_dump_json(indent=1))
    else:
        from flows.explain.pages import answer_text

        sys.stdout.write(answer_text(answer))
    return EXIT_DONE


def add_explain_parsers(sub, common: argparse.ArgumentParser, month_type) -> None:
    """`explain --job ID` and `node NAME`."""
    explain = sub.add_parser(
        "explain",
        parents=[common],
        help="why did a job fail: its attempts, outcomes and the evidence, from the built warehouse",
    )
    explain.add_argument(
        "--job", required=True, help="a job id (123), array task (123_4), het component (123+1) or JobIDRaw"
    )
    explain.add_argument("--config", required=True, help="cluster config (TOML)")
    explain.add_argument(
        "--month", type=month_type, default=None, help="YYYY-MM: only this month (default: every month built)"
    )
    explain.add_argument("--json", action="store_true", help="one JSON document instead of text")
    explain.set_defaults(func=cmd_explain)
    node = sub.add_parser(
        "node", parents=[common], help="a node's faults, outages, the failures it caused and its lemon signals"
    )
    node.add_argument("name", help="the node's name as the job records give it")
    node.add_argument("--config", required=True, help="cluster config (TOML)")
    node.add_argument(
        "--month", type=month_type, default=None, help="YYYY-MM: only this month (default: every month built)"
    )
    node.add_argument("--json", action="store_true", help="one JSON document instead of text")
    node.set_defaults(func=cmd_node)
