"""An explanation as people read it: text for the terminal (80 columns) and an HTML page for the
archive, both from templates/explain/ through the reports' Jinja environment (they only format).

The archive holds, beside each month's report (`<reports>/<cluster>/<month>/`), a page for every
lemon-node candidate of the month (`nodes/<node>.html`) and for every infrastructure-failed attempt
of a job of at least [paths] archive_attempt_min_gpus GPUs (`jobs/<job id>.html`, an anchor per
attempt): the answers `node` and `explain --job` give over the months up to it, as of its build."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from flows.config.cluster import ClusterConfig
from flows.explain.explanation_types import JobAnswer, NodeAnswer
from flows.explain.job import explain_jobs
from flows.explain.job_ids import JobQuery
from flows.explain.node import node_history
from flows.explain.warehouse import opened
from flows.figures.document import MonthDocument
from flows.report.environment import environment
from flows.report.lemon_export import listed as listed_candidates


def _template(answer: JobAnswer | NodeAnswer, kind: str) -> str:
    return f"explain/{'job' if isinstance(answer, JobAnswer) else 'node'}.{kind}.j2"


def answer_text(answer: JobAnswer | NodeAnswer) -> str:
    return environment().get_template(_template(answer, "txt")).render(answer=answer)


def answer_html(answer: JobAnswer | NodeAnswer, report_link: str | None = None) -> str:
    """The answer's page; `report_link`: the relative link back to its month's report."""
    return environment().get_template(_template(answer, "html")).render(answer=answer, report_link=report_link)


PAGES_INDEX = "explained.html"  # in the month's directory: every page of the month, linked from its report
NODE_PAGES, JOB_PAGES = "nodes", "jobs"


def page_name(name: str) -> str:
    """A file name for a node or a job id: already one (node names and job ids are checked to be)."""
    return quote(name, safe="") + ".html"


def write_month_pages(config: ClusterConfig, document: MonthDocument, out_dir: Path) -> int:
    """The month's explanation pages in `out_dir` (its report directory being written): a page for
    each lemon-node candidate (nodes/<node>.html) and for each job with an infrastructure-failed
    attempt of at least [paths] archive_attempt_min_gpus GPUs in the month (jobs/<job id>.html), as
    of the month (months after it left out), and explained.html listing them. Returns the pages
    written; none on a warehouse explain cannot read (Spark)."""
    month = document.month
    if config.warehouse.engine != "duckdb":
        not_here = "the pages are made from a DuckDB warehouse; this cluster's is Spark's"
        (out_dir / PAGES_INDEX).write_text(_index(document, [], [], config, not_here=not_here))
        return 1
    with opened(config, {month: document}) as wh:
        months = tuple(m for m in wh.months if m <= month)
        nodes = sorted({listed.candidate.node for listed in listed_candidates(document.lemon_nodes)})
        failed = wh.rows("pages__large_failures", {"month": month, "min_gpus": config.archive_attempt_min_gpus})
        jobs = sorted({job for job, *_ in failed})
        # each job as its failed attempt's JobID names it (not as a bare id's array: that is its own page)
        answers = explain_jobs(wh, [JobQuery(job, whole_job=False) for job in jobs], months) if jobs else {}
        for kind, names, answer_of in (
            (NODE_PAGES, nodes, lambda n: node_history(wh, n, months)),
            (JOB_PAGES, jobs, answers.__getitem__),
        ):
            if names:
                (out_dir / kind).mkdir(exist_ok=True)
            for name in names:
                (out_dir / kind / page_name(name)).write_text(answer_html(answer_of(name), "../report.html"))
        unseen = wh.node_sources(month)[1]  # no node source landed: attribution could see no fault
    (out_dir / PAGES_INDEX).write_text(_index(document, nodes, failed, config, unseen=unseen))
    return len(nodes) + len(jobs) + 1


def _index(
    document: MonthDocument,
    nodes: list[str],
    failed: list[tuple],
    config: ClusterConfig,
    not_here: str | None = None,
    unseen: str | None = None,
) -> str:
    return (
        environment()
        .get_template("explain/index.html.j2")
        .render(
            document=document,
            nodes=nodes,
            failed=failed,
            min_gpus=config.archive_attempt_min_gpus,
            page_name=page_name,
            not_here=not_here,
            unseen=unseen,
        )
    )
