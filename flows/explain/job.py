"""`explain --job`: every attempt of a job over the months built, with the outcome the taxonomy gave
it, why, and for an ended failure the events on its nodes in its attribution window."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from flows.core.errors import UsageError
from flows.explain.explanation_types import AttemptAnswer, Evidence, EvidenceWindow, JobAnswer, LemonMark, Preemption
from flows.explain.job_ids import JobQuery
from flows.explain.lemon_marks import lemon_marks
from flows.explain.rules import outcome_rule
from flows.explain.warehouse import Warehouse

# the outcomes of the attempts the attribution looks at (it makes failed and requeued ones
# infra_failed; NODE_FAIL and BOOT_FAIL are infra_failed in any case): theirs is the evidence shown
ATTRIBUTED_OUTCOMES = ("infra_failed", "failed", "requeued")


def explain_job(wh: Warehouse, query: JobQuery, months: tuple[str, ...]) -> JobAnswer:
    """The job's attempts in `months`, oldest first; UsageError (exit 2) when it has none there."""
    answer = explain_jobs(wh, [query], months).get(query.text)
    if answer is None:
        raise UsageError(
            f"job {query.text} is not in the job records of {_months_words(months)} in "
            f"{wh.config.warehouse_path} ({wh.built_span()})"
        )
    return answer


def explain_jobs(wh: Warehouse, queries: list[JobQuery], months: tuple[str, ...]) -> dict[str, JobAnswer]:
    """Each job's answer (by the id asked) that has an attempt in `months`: one pass over the attempts."""
    rows = _attempt_rows(wh, queries, months)
    asked: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        for query in queries:
            if query.names(row["job_id"], row["job_id_raw"]):
                asked[query.text].append(row)
    attempts = _answers(wh, rows)
    return {
        job: JobAnswer(
            cluster=wh.config.cluster,
            job=job,
            months_built=list(wh.months),
            attempts=[attempts[a] for a in dict.fromkeys(r["attempt_id"] for r in job_rows)],
        )
        for job, job_rows in asked.items()
    }


def _answers(wh: Warehouse, rows: list[dict]) -> dict[str, AttemptAnswer]:
    by_attempt: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_attempt[row["attempt_id"]].append(row)
    finals = {a: next((r for r in reversed(rs) if r["outcome"] != "open"), rs[-1]) for a, rs in by_attempt.items()}
    landed = _landed(wh, list(finals.values()))
    nodes = _nodes(wh, landed)
    cap_minutes = wh.parameter("lost_work_cap_minutes")
    attempts = {}
    for attempt_id, month_rows in by_attempt.items():
        final = finals[attempt_id]
        record = landed.get(attempt_id, {})
        its_nodes = nodes.get(attempt_id, [])
        measured_sources, not_measured = wh.node_sources(final["month"])
        evidence = (
            _evidence(wh, final, its_nodes, measured_sources, not_measured)
            if final["outcome"] in ATTRIBUTED_OUTCOMES
            else None
        )
        attempts[attempt_id] = AttemptAnswer(
            attempt_id=attempt_id,
            job_id=final["job_id"],
            job_id_raw=final["job_id_raw"],
            job_name=final["job_name"],
            user_name=final["user_name"],
            partition=final["partition"],
            months=[r["month"] for r in month_rows],
            nodes=its_nodes,
            n_nodes=final["n_nodes"],
            gpus=final["gpus"],
            size_bucket=final["size_bucket"],
            submit_at=final["submit_at"],
            start_at=final["start_at"],
            end_at=None if final["outcome"] == "open" else final["end_at"],
            slurm_state=final["slurm_state"],
            exit_code=record.get("exit_code"),
            exit_signal=record.get("exit_signal"),
            outcome=final["outcome"],
            rule=outcome_rule(
                final["slurm_state"],
                final["outcome"],
                bool(evidence and any(e.chosen for e in evidence.events)),
                record.get("admin_comment"),
                wh.parameter("attr_before_minutes"),
                wh.parameter("attr_after_minutes"),
                not_measured is None,
            ),
            cause_category=final["cause_category"],
            failure_domain=final["failure_domain"],
            evidence=evidence,
            gpu_hours=sum(r["gpu_hours"] for r in month_rows),
            # fct_period_lost_goodput's first order (macro lost_work_gpu_seconds): the month's
            # runtime of the failed attempt, capped at lost_work_cap_minutes, times its GPUs
            lost_gpu_hours=(
                min(final["runtime_seconds"], cap_minutes * 60) * final["gpus"] / 3600
                if final["outcome"] == "infra_failed"
                else None
            ),
            restart_preempted=_restart_preempted(wh, final, cap_minutes),
            preempted_by_restart=_preempted_by(wh, final),
            lemon_candidates=[LemonMark(**m) for m in lemon_marks(wh, final["month"], its_nodes)],
            source=f"{final['source_file']}:{final['source_line']}",
        )
    return attempts


def _months_words(months: tuple[str, ...]) -> str:
    return months[0] if len(months) == 1 else f"the {len(months)} months built"


def _attempt_rows(wh: Warehouse, queries: list[JobQuery], months: tuple[str, ...]) -> list[dict]:
    """The fct_attempts rows any of `queries` names in `months`, oldest first."""
    prefixes = [prefix for q in queries for prefix in q.task_prefixes]  # a bare id's tasks and components
    params = {"months": list(months), "ids": [q.text for q in queries]}
    params |= {f"prefix_{i}": prefix for i, prefix in enumerate(prefixes)}
    return wh.records("job__attempt_rows", params, prefixes=len(prefixes))


def _landed(wh: Warehouse, finals: list[dict]) -> dict[str, dict]:
    """What fct_attempts leaves out of each attempt's record, from its month's landing: exit code and
    signal, host list, AdminComment."""
    found: dict[str, dict] = {}
    by_month: dict[str, list[dict]] = defaultdict(list)
    for row in finals:
        by_month[row["month"]].append(row)
    for month, rows in by_month.items():
        ids = {f"{r['source_file']}|{r['source_line']}": r["attempt_id"] for r in rows}
        for record in wh.records(
            "job__landed_records",
            {"lines": sorted({r["source_line"] for r in rows}), "records": list(ids)},
            attempts=wh.landed(month, "attempts"),
        ):
            found[ids[record["record"]]] = {**record, "month": month}
    return found


def _nodes(wh: Warehouse, landed: dict[str, dict]) -> dict[str, list[str]]:
    """Each attempt's nodes, from its month's landed host lists (as the build expands them)."""
    members: dict[tuple[str, str], list[str]] = defaultdict(list)
    for month in sorted({r["month"] for r in landed.values()}):
        lists = sorted({r["node_list"] for r in landed.values() if r["month"] == month and r["node_list"]})
        for node_list, node in wh.rows(
            "job__host_list_nodes",
            {"lists": lists},
            host_lists=wh.landed(month, "host_lists"),
            host_list_members=wh.landed(month, "host_list_members"),
        ):
            members[(month, node_list)].append(node)
    return {a: members.get((r["month"], r["node_list"]), []) for a, r in landed.items()}


def _evidence(
    wh: Warehouse, attempt: dict, nodes: list[str], sources: list[str], not_measured: str | None
) -> EvidenceWindow:
    """The events on the attempt's nodes in its attribution window (and the chosen cause's, wherever it is)."""
    before, after = wh.parameter("attr_before_minutes"), wh.parameter("attr_after_minutes")
    end = attempt["end_at"]
    start_at, end_at = end - timedelta(minutes=before), end + timedelta(minutes=after)
    params = {"month": attempt["month"], "attempt_id": attempt["attempt_id"]}
    chosen = next(iter(wh.rows("job__chosen_cause", params)), None)
    rows = wh.rows(
        "job__evidence",
        {
            "month": attempt["month"],
            "nodes": nodes,
            "window_start": start_at,
            "window_end": end_at,
            "cause_node": chosen[0] if chosen else None,
            "cause_at": chosen[1] if chosen else None,
        },
        node_events=wh.landed(attempt["month"], "node_events"),
        health_checks=wh.landed(attempt["month"], "health_checks"),
    )
    events, picked = [], False
    for node, at, source, check, code, category, severity, reason, message in rows:
        is_chosen = bool(chosen) and not picked and (node, at, category) == tuple(chosen)
        picked = picked or is_chosen
        events.append(
            Evidence(
                node=node,
                at=at,
                source=source,
                what=_what(source, check, code, reason, message),
                category=category,
                severity=severity,
                seconds_before_end=int((end - at).total_seconds()),
                in_window=start_at <= at <= end_at,
                chosen=is_chosen,
            )
        )
    return EvidenceWindow(
        window_start=start_at,
        window_end=end_at,
        minutes_before=before,
        minutes_after=after,
        node_sources=sources,
        not_measured=not_measured,
        events=events,
    )


def _what(source: str, check: str, code: str, reason: str | None, message: str | None) -> str:
    """The event as its log gave it."""
    if source == "xid":
        return f"Xid {code}"
    if source == "slurm_event":
        return f"{check}: {reason}" if reason else check
    said = f"{check}: {code}" if code and code != check else check
    return f"{said}: {message}" if message else said


def _restart_preempted(wh: Warehouse, attempt: dict, cap_minutes: float) -> list[Preemption]:
    """Attempts preempted to make room for this attempt, a restart after an infrastructure failure."""
    rows = wh.rows("job__restart_preempted", {"month": attempt["month"], "attempt_id": attempt["attempt_id"]})
    return [
        Preemption(
            job_id_raw=job, gpus=gpus, preempted_at=at, lost_gpu_hours=min(runtime, cap_minutes * 60) * gpus / 3600
        )
        for job, gpus, at, runtime in rows
    ]


def _preempted_by(wh: Warehouse, attempt: dict) -> str | None:
    found = next(
        iter(wh.rows("job__preempted_by", {"month": attempt["month"], "attempt_id": attempt["attempt_id"]})), None
    )
    return found[0] if found else None
