"""An explanation as people read it: text for the terminal (80 columns) and an HTML page for the
archive, both from templates/explain/ through the reports' Jinja environment (they only format).

The archive holds, beside each month's report (`<reports>/<cluster>/<month>/`), a page for every
lemon-node candidate of the month (`nodes/<node>.html`) and for every infrastructure-failed attempt
of a job of at least [analysis] explained_min_gpus GPUs (`attempts/<job id>-<attempt>.html`): the
answers `node` and `explain --job` give, as of the month's build."""

from __future__ import annotations

from flows.explain.explanation_types import JobAnswer, NodeAnswer
from flows.report.environment import environment


def _template(answer: JobAnswer | NodeAnswer, kind: str) -> str:
    return f"explain/{'job' if isinstance(answer, JobAnswer) else 'node'}.{kind}.j2"


def answer_text(answer: JobAnswer | NodeAnswer) -> str:
    return environment().get_template(_template(answer, "txt")).render(answer=answer)


def answer_html(answer: JobAnswer | NodeAnswer, report_link: str | None = None) -> str:
    """The answer's page; `report_link`: the relative link back to its month's report."""
    return environment().get_template(_template(answer, "html")).render(answer=answer, report_link=report_link)
