"""A monthly-report run's stages as its Prefect tasks' state hooks see them: the progress lines
with counts, each stage's time, the stage a run failed at, and a month's line in the outcomes of a
backfill or a refresh. flows/pipeline.py's tasks carry STAGE_HOOKS."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefect.exceptions import ParameterTypeError
from prefect.logging.loggers import task_run_logger

from flows.core.config import ClusterConfig
from flows.core.errors import is_input_error
from flows.core.escape import escaped_logger, printable_lines
from flows.core.months import Month
from flows.core.words import counted
from flows.figures.summary import counts_line

# Stage-by-stage progress with counts: the CLI prints this logger; flow runs log it to Prefect too.
progress = escaped_logger("flows.progress")
# Prefect's run loggers (get_run_logger, the failure hook's, Prefect's own lines on a failed task,
# which quote the error) escape what they log too: it reaches a terminal or the Prefect UI.
RUN_LOGGERS = [escaped_logger(name) for name in ("prefect.flow_runs", "prefect.task_runs")]


@dataclass
class MonthRun:
    """A monthly-report flow run: its config and month, parsed once at its start, and its stages as
    their tasks' state hooks saw them (for the progress lines, the summary and the failure alert)."""

    config: ClusterConfig
    month: Month
    seconds: dict[str, float] = field(default_factory=dict)  # stage -> time in the Running state
    running: str | None = None  # the stage started and not finished (a crash leaves it set)
    failed: str | None = None  # the stage whose task failed


# Flow run id -> its MonthRun. A failed run's record stays for its readers (the failure hook, and a
# backfill reading its month's state); a completed run's is removed when the flow returns.
month_runs: dict[str, MonthRun] = {}


def _run_of(task_run) -> MonthRun | None:
    """The MonthRun of a stage's task run (none when a task is called outside the flow)."""
    return month_runs.get(str(task_run.flow_run_id))


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
        return counts_line(result.metrics)
    if stage == "render":
        return f"{result['report']} (in place once delivery is decided)"
    return str(result)


def failed_stage(flow_run_id, error: BaseException | None) -> str:
    """The stage a flow run failed at: the stage whose task failed (or was running when the run
    crashed), else `parameters` for parameters Prefect refused, else `start` (before the first)."""
    run = month_runs.get(str(flow_run_id))
    if run and (run.failed or run.running):
        return run.failed or run.running
    return "parameters" if isinstance(error, ParameterTypeError) else "start"


def failure(state) -> tuple[str, str]:
    """(stage, error) of a failed monthly-report run's final state; the error's text escaped (it
    may quote the logs), for the alert, the backfill's outcomes and their log lines."""
    error = state.result(raise_on_failure=False)
    if not isinstance(error, BaseException):
        return failed_stage(state.state_details.flow_run_id, None), printable_lines(str(state.message))
    stage = failed_stage(state.state_details.flow_run_id, error)
    return stage, f"{type(error).__name__}: {printable_lines(str(error))}"


def month_outcome(config: ClusterConfig, month: Month, state, built: str, delivery_note: str | None = None) -> dict:
    """A month's line in a backfill's or a refresh's outcomes, from its monthly-report run's `state`:
    month, outcome (`built`, e.g. "built" or "refreshed"; or "failed") and detail; a month built
    before says which parts of its figures `changed` (none: unchanged)."""
    if not state.is_completed():
        stage, error = failure(state)
        return failed_outcome(month, stage, error, is_input_error(state.result(raise_on_failure=False)))
    summary = state.result()
    changed = summary["changed"]  # None: not built before
    changes = "" if changed is None else f"changed: {', '.join(changed)}; " if changed else "figures unchanged; "
    counts = summary["counts"]
    seconds = sum(summary["stage_seconds"].values())
    return {
        "month": str(month),
        "outcome": built,
        "detail": f"{changes}{counts} in {seconds:.0f} s; {delivery_note or summary['delivery']}",
        "changed": changed or [],
    }


def failed_outcome(month: Month, stage: str, error: str, input_error: bool) -> dict:
    """A failed month's line in a backfill's or a refresh's outcomes (see month_outcome)."""
    return {
        "month": str(month),
        "outcome": "failed",
        "stage": stage,
        "detail": f"at stage {stage}: {error}",
        "input_error": input_error,
    }
