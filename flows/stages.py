"""A month's stages as their Prefect tasks' state hooks see them: the progress lines with counts,
each stage's time, the stage a month failed at, and a month's line in the outcomes of a backfill or
a refresh. flows/pipeline.py's tasks carry STAGE_HOOKS.

The hooks find the month they report on in the context of the flow run (`current_month`, set by
`stages_of` while a month's stages run), not in a registry of runs: each run carries its own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from prefect.exceptions import ParameterTypeError
from prefect.logging.loggers import task_run_logger

from flows.config.cluster import ClusterConfig
from flows.core.errors import is_input_error
from flows.core.escape import escaped_logger, printable_lines
from flows.core.months import Month
from flows.core.outcome import MonthOutcome, MonthSummary
from flows.core.words import counted

# Stage-by-stage progress with counts: the CLI prints this logger; flow runs log it to Prefect too.
progress = escaped_logger("flows.progress")
# Prefect's run loggers (get_run_logger, the failure hook's, Prefect's own lines on a failed task,
# which quote the error) escape what they log too: it reaches a terminal or the Prefect UI.
RUN_LOGGERS = [escaped_logger(name) for name in ("prefect.flow_runs", "prefect.task_runs")]


@dataclass
class MonthRun:
    """A month's stages in a flow run, as their tasks' state hooks saw them (for the progress lines,
    the summary and the failure alert)."""

    config: ClusterConfig
    month: Month
    flow_run_id: str | None  # the flow run the stages run in (none: called outside a flow)
    seconds: dict[str, float] = field(default_factory=dict)  # stage -> time in the Running state
    running: str | None = None  # the stage started and not finished (a crash leaves it set)
    failed: str | None = None  # the stage whose task failed


# The month whose stages run now in this thread's flow run. A month that failed stays set for the
# flow's failure hook, which names its month and stage.
current_month: ContextVar[MonthRun | None] = ContextVar("current_month", default=None)


@contextmanager
def stages_of(run: MonthRun) -> Iterator[MonthRun]:
    """Run a month's stages: their hooks report on `run`; once they are done, on the month before.
    Not reset on an error: the failure hook reads the month that failed."""
    token = current_month.set(run)
    yield run
    current_month.reset(token)


def month_run_of(flow_run_id) -> MonthRun | None:
    """The month whose stages ran last in the flow run `flow_run_id` (none: no month's stage ran)."""
    run = current_month.get()
    return run if run is not None and run.flow_run_id == str(flow_run_id) else None


def _run_of(task_run) -> MonthRun | None:
    """The MonthRun of a stage's task run (none when a task is called outside a month's stages)."""
    return month_run_of(task_run.flow_run_id) if task_run.flow_run_id else None


def stage_running(task, task_run, state) -> None:
    """Task hook: a stage starts."""
    if run := _run_of(task_run):
        run.running = task.name
        progress.info("%s %s: %s ...", run.config.cluster, run.month, task.name)


def stage_completed(task, task_run, state) -> None:
    """Task hook: a stage is done; its time is its task run's time in the Running state."""
    if run := _run_of(task_run):
        run.running = None
        seconds = run.seconds[task.name] = round(task_run.total_run_time.total_seconds(), 2)
        counts = stage_counts(task.name, state.result())
        line = f"{run.config.cluster} {run.month}: {task.name} done in {seconds:.1f} s: {counts}"
        progress.info(line)
        task_run_logger(task_run, task).info(line)


def stage_failed(task, task_run, state) -> None:
    """Task hook: a stage failed (the flow run fails with it)."""
    if run := _run_of(task_run):
        run.running, run.failed = None, task.name


STAGE_HOOKS = {"on_running": [stage_running], "on_completion": [stage_completed], "on_failure": [stage_failed]}


def stage_counts(stage: str, result) -> str:
    """What a stage produced, in a few words with counts, for the progress lines."""
    if stage == "land":
        sources = result.sources  # the landing's Manifest
        return f"{counted(sum(s.records for s in sources.values()), 'record')} from {counted(len(sources), 'source')}"
    if stage == "dbt":
        return f"{sum(result.values())} dbt nodes ({', '.join(f'{n} {s}' for s, n in sorted(result.items()))})"
    if stage == "quality":
        passed = sum(q.successful for q in result)
        return f"{passed}/{sum(q.evaluated for q in result)} expectations met in {counted(len(result), 'suite')}"
    if stage == "metrics":
        return result.counts  # the month's MonthFigures
    if stage == "render":
        return f"{result['report']} (in place once delivery is decided)"
    return str(result)


def failed_stage(run: MonthRun | None, error: BaseException | None) -> str:
    """The stage a month failed at: the stage whose task failed (or was running when the run
    crashed), else `parameters` for parameters Prefect refused, else `start` (before the first)."""
    if run and (run.failed or run.running):
        return run.failed or run.running
    return "parameters" if isinstance(error, ParameterTypeError) else "start"


def described(error: BaseException) -> str:
    """An error in one line of its type and escaped text (it may quote the logs)."""
    return f"{type(error).__name__}: {printable_lines(str(error))}"


def failure(state) -> tuple[str, str]:
    """(stage, error) of a failed flow run's final state, for its alert."""
    error = state.result(raise_on_failure=False)
    run = month_run_of(state.state_details.flow_run_id)
    if not isinstance(error, BaseException):
        return failed_stage(run, None), printable_lines(str(state.message))
    return failed_stage(run, error), described(error)


def month_failed(run: MonthRun, error: Exception) -> MonthOutcome:
    """The failed month's line in a backfill's or a refresh's outcomes (see month_outcome); the
    month is done: the hooks report on the month before again."""
    current_month.set(None)
    return failed_outcome(run.month, failed_stage(run, error), described(error), is_input_error(error))


def month_outcome(summary: MonthSummary, built: str, delivery_note: str | None = None) -> MonthOutcome:
    """A reported month's line in a backfill's or a refresh's outcomes, from its summary: month,
    outcome (`built`, e.g. "built" or "refreshed") and detail; a month built before says which
    parts of its figures `changed` (none: unchanged)."""
    changed = summary.changed  # None: not built before
    changes = "" if changed is None else f"changed: {', '.join(changed)}; " if changed else "figures unchanged; "
    seconds = sum(summary.stage_seconds.values())
    detail = f"{changes}{summary.counts} in {seconds:.0f} s; {delivery_note or summary.delivery}"
    return MonthOutcome(summary.month, built, detail, changed=tuple(changed or ()))


def failed_outcome(month: Month, stage: str, error: str, input_error: bool) -> MonthOutcome:
    """A failed month's line in a backfill's or a refresh's outcomes (see month_outcome)."""
    return MonthOutcome(str(month), "failed", f"at stage {stage}: {error}", stage=stage, input_error=input_error)


@dataclass(frozen=True)
class RunAlert:
    """What the failure alert of the flow run `flow_run_id` says: which run failed (`what`, a month
    or a range), how to run it again, and whose alert_to it goes to."""

    flow_run_id: str | None
    config: ClusterConfig | None  # none: loaded from the run's `config` parameter when the alert is sent
    what: str
    rerun: str


# The alert of the work running now in this thread's flow run (none: a failure sends none). Left
# set on an error: the flow's failure hook reads it.
current_alert: ContextVar[RunAlert | None] = ContextVar("current_alert", default=None)


@contextmanager
def alerted(alert: RunAlert) -> Iterator[None]:
    """Run what `alert` describes: a failure out of it alerts so."""
    token = current_alert.set(alert)
    yield
    current_alert.reset(token)


def alert_of(flow_run_id) -> RunAlert | None:
    """The alert of the work that failed in the flow run `flow_run_id`, if any."""
    alert = current_alert.get()
    return alert if alert is not None and alert.flow_run_id == str(flow_run_id) else None
