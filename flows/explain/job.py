"""`explain --job`: every attempt of a job over the months built, with the outcome the taxonomy gave
it, why, and for an ended failure the events on its nodes in its attribution window."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
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
    by_text = {q.text: q for q in queries}
    asked: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        # the ids a row can be asked by: its JobID, its JobIDRaw, its array's or het job's bare id
        for text in dict.fromkeys((row["job_id"], row["job_id_raw"], re.split("[_+]", row["job_id"])[0])):
            if text in by_text and by_text[text].names(row["job_id"], row["job_id_raw"]):
                asked[text].append(row)
    attempts = _answers(wh, rows)
    return {
        job: JobAnswer(
            cluster=wh.config.cluster,
            job=job,
            months_searched=list(months),
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
    by_month: dict[str, list[dict]] = defaultdict(list)
    for final in finals.values():
        by_month[final["month"]].append(final)
    found = [_month_findings(wh, month, attempts, nodes) for month, attempts in by_month.items()]
    evidence = {a: e for f in found for a, e in f.evidence.items()}
    preempted = {a: p for f in found for a, p in f.restart_preempted.items()}
    preempted_by = {a: p for f in found for a, p in f.preempted_by.items()}
    return {
        attempt_id: _answer(
            wh,
            month_rows,
            finals[attempt_id],
            landed.get(attempt_id, {}),
            nodes.get(attempt_id, []),
            evidence.get(attempt_id),
            preempted.get(attempt_id, []),
            preempted_by.get(attempt_id),
        )
        for attempt_id, month_rows in by_attempt.items()
    }


def _answer(
    wh: Warehouse,
    month_rows: list[dict],
    final: dict,
    record: dict,
    nodes: list[str],
    evidence: EvidenceWindow | None,
    restart_preempted: list[Preemption],
    preempted_by: str | None,
) -> AttemptAnswer:
    """One attempt's answer: `final`, its row of the month it ended in (or its latest), `record` its
    landed record, `evidence` the events in its attribution window (None: its outcome has none)."""
    parameters = wh.parameters
    return AttemptAnswer(
        attempt_id=final["attempt_id"],
        job_id=final["job_id"],
        job_id_raw=final["job_id_raw"],
        job_name=final["job_name"],
        user_name=final["user_name"],
        partition=final["partition"],
        months=[r["month"] for r in month_rows],
        nodes=nodes,
        host_list=record.get("node_list"),
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
            parameters["attr_before_minutes"],
            parameters["attr_after_minutes"],
            wh.node_sources(final["month"])[1] is None,
        ),
        cause_category=final["cause_category"],
        failure_domain=final["failure_domain"],
        evidence=evidence,
        gpu_hours=sum(r["gpu_hours"] for r in month_rows),
        # fct_period_lost_goodput's first order (macro lost_work_gpu_seconds): the month's
        # runtime of the failed attempt, capped at lost_work_cap_minutes, times its GPUs
        lost_gpu_hours=(
            _lost_gpu_hours(wh, final["runtime_seconds"], final["gpus"]) if final["outcome"] == "infra_failed" else None
        ),
        restart_preempted=restart_preempted,
        preempted_by_restart=preempted_by,
        lemon_candidates=[LemonMark(**m) for m in lemon_marks(wh, final["month"], nodes)],
        source=f"{final['source_file']}:{final['source_line']}",
    )


def _lost_gpu_hours(wh: Warehouse, runtime_seconds: int, gpus: int) -> float:
    return min(runtime_seconds, wh.parameters["lost_work_cap_minutes"] * 60) * gpus / 3600


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
        if wh.landing_gone(month):
            continue  # the attempts keep what the marts hold; their evidence says why the rest is unknown
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


@dataclass(frozen=True)
class MonthFindings:
    """What the marts say of a month's attempts asked, by attempt id."""

    evidence: dict[str, EvidenceWindow]
    restart_preempted: dict[str, list[Preemption]]
    preempted_by: dict[str, str]


def _month_findings(wh: Warehouse, month: str, finals: list[dict], nodes: dict[str, list[str]]) -> MonthFindings:
    """The evidence of the month's attempts whose outcome the attribution decided, and the
    preemptions around each: one query of each kind for the month."""
    ids = [f["attempt_id"] for f in finals]
    preempted: dict[str, list[Preemption]] = defaultdict(list)
    for restart, job, gpus, at, runtime in wh.rows("job__restart_preempted", {"month": month, "attempts": ids}):
        preempted[restart].append(
            Preemption(job_id_raw=job, gpus=gpus, preempted_at=at, lost_gpu_hours=_lost_gpu_hours(wh, runtime, gpus))
        )
    preempted_by = dict(wh.rows("job__preempted_by", {"month": month, "attempts": ids}))
    decided = [f for f in finals if f["outcome"] in ATTRIBUTED_OUTCOMES]
    evidence = _evidence(wh, month, decided, nodes) if decided else {}
    return MonthFindings(evidence, dict(preempted), preempted_by)


def _evidence(
    wh: Warehouse, month: str, attempts: list[dict], nodes: dict[str, list[str]]
) -> dict[str, EvidenceWindow]:
    """Each attempt's attribution window with the events on its nodes in it (and its chosen cause's)."""
    before, after = wh.parameters["attr_before_minutes"], wh.parameters["attr_after_minutes"]
    sources, not_measured = wh.node_sources(month)
    gone = wh.landing_gone(month)
    ids = [a["attempt_id"] for a in attempts]
    chosen = {
        a: (node, at, category)
        for a, node, at, category in wh.rows("job__chosen_cause", {"month": month, "attempts": ids})
    }
    windows = {
        a["attempt_id"]: (a["end_at"], a["end_at"] - timedelta(minutes=before), a["end_at"] + timedelta(minutes=after))
        for a in attempts
    }
    pairs = [(a, node) for a in ids for node in nodes.get(a, [])]
    params = {
        "month": month,
        "attempts": [a for a, _ in pairs],
        "nodes": [node for _, node in pairs],
        "window_starts": [windows[a][1] for a, _ in pairs],
        "window_ends": [windows[a][2] for a, _ in pairs],
        "cause_ats": [chosen[a][1] if a in chosen and chosen[a][0] == node else None for a, node in pairs],
    }
    events: dict[str, list[Evidence]] = defaultdict(list)
    rows = (
        []
        if gone
        else wh.rows(
            "job__evidence",
            params,
            node_events=wh.landed(month, "node_events"),
            health_checks=wh.landed(month, "health_checks"),
        )
    )
    for attempt_id, node, at, source, check, code, category, severity, reason, message in rows:
        end, start_at, end_at = windows[attempt_id]
        already = any(e.chosen for e in events[attempt_id])
        events[attempt_id].append(
            Evidence(
                node=node,
                at=at,
                source=source,
                what=_what(source, check, code, reason, message),
                category=category,
                severity=severity,
                seconds_before_end=int((end - at).total_seconds()),
                in_window=start_at <= at <= end_at,
                chosen=not already and chosen.get(attempt_id) == (node, at, category),
            )
        )
    return {
        a: EvidenceWindow(
            window_start=windows[a][1],
            window_end=windows[a][2],
            minutes_before=before,
            minutes_after=after,
            node_sources=sources,
            not_measured=gone or not_measured,
            events=events.get(a, []),
        )
        for a in ids
    }


def _what(source: str, check: str, code: str, reason: str | None, message: str | None) -> str:
    """The event as its log gave it."""
    if source == "xid":
        return f"Xid {code}"
    if source == "slurm_event":
        return f"{check}: {reason}" if reason else check
    said = f"{check}: {code}" if code and code != check else check
    return f"{said}: {message}" if message else said
