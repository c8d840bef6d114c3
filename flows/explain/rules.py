"""Why an attempt has its outcome, in words: the rule of fct_attempts' outcome (docs/methodology.md
"Attempt outcomes") and of the attribution model (its "Attribution"), said for one attempt.
tests/test_explain.py checks that every outcome fct_attempts can give has its words here."""

from __future__ import annotations

import re

STATE_OUTCOMES = {
    "completed": "the job's own end",
    "oom": "the job ran out of memory: the job's own failure",
    "preempted": "the scheduler preempted it: not a failure",
    "timeout": "it reached its time limit: the job's own end",
    "cancelled": "a user or an admin cancelled it",
    "deadline": "it reached its deadline: the job's own end",
}
MANUAL_REQUEUE = re.compile(r"(^|[\s,;])requeue=(user|admin)([\s,;]|$)")


def window_words(before: int, after: int) -> str:
    return f"[End - {before} min, End + {after} min]"


def outcome_rule(
    state: str, outcome: str, attributed: bool, admin_comment: str | None, before: int, after: int, measured: bool
) -> str:
    """The rule that gave an attempt of Slurm `state` its `outcome`; `attributed`: a critical event
    on its nodes matched; `measured`: a health or node source was landed for its month."""
    window = window_words(before, after)
    if outcome == "open":
        return f"Slurm state {state}: it had not ended when the records were dumped, so it has no outcome yet"
    if outcome == "infra_failed" and state in ("NODE_FAIL", "BOOT_FAIL"):
        cause = (
            "its cause is the critical incident on its nodes nearest its End"
            if attributed
            else f"no critical event on its nodes in {window}, so its cause is unattributed_node_failure"
        )
        return f"Slurm ended it {state}: always an infrastructure failure; {cause}"
    if outcome == "infra_failed":
        return (
            f"it ended {state} with a critical health event on one of its nodes in {window}: an "
            "infrastructure failure, caused by the incident nearest its End"
        )
    marked = MANUAL_REQUEUE.search(admin_comment or "") if outcome == "requeued" else None
    if marked:
        by = "a user" if marked.group(2) == "user" else "an admin"
        return f"requeued by {by} (AdminComment {marked.group(0).strip(' ,;')}): never the infrastructure's"
    if outcome in ("failed", "requeued") and not measured:
        counted = "the job's own failure" if outcome == "failed" else "a requeue, not the infrastructure's"
        return (
            f"it ended {state}, and no health or node source was landed for its month: whether a fault on its "
            f"nodes caused it is not measured, so it counts as {counted}"
        )
    if outcome == "failed":
        return f"it ended FAILED with no critical health event on its nodes in {window}: the job's own failure"
    if outcome == "requeued":
        return f"requeued with no critical health event on its nodes in {window}: not the infrastructure's"
    if outcome in STATE_OUTCOMES:
        return f"Slurm state {state}: {STATE_OUTCOMES[outcome]}"
    return f"Slurm state {state!r} is not one the taxonomy knows: kept and counted as unknown"
