"""Ground truth of a simulated history, per month with the pipeline's month rules (docs/simulator.md).

An attempt belongs to month N if Submit < N's end and it had not ended before N's start; its runtime,
queue time and node-days count inside [N start, N end); its outcome belongs to the month its End
falls in. All times are the whole seconds the writers print.
"""

from __future__ import annotations

from collections import defaultdict
from operator import attrgetter

import numpy as np

from simulator.attribution import attribute_failures, marked_manual_requeues, rule_match
from simulator.crash_loops import crash_loop_truth
from simulator.history import History
from simulator.params import Clock, MonthWindow
from simulator.records import HIGH_QOS_MIN_GPUS, NEVER, Attempt
from simulator.repairs import repair_truth
from simulator.rules import ETTR_MIN_RUN_HOURS, PAPER_MIN_GPUS, SIZE_BUCKETS, failed_rules
from simulator.training_truth import month_training_runs, whole_training_runs
from simulator.workload import SIZE_CHOICES, TRAINING_MIN_GPUS

BUCKET_OF = {int(g): label for g in SIZE_CHOICES for lo, hi, label in SIZE_BUCKETS if lo <= g <= hi}
WEEK = 7 * 86400
LONG_RUN_SECONDS = int(ETTR_MIN_RUN_HOURS * 3600)  # training runs this long in a month enter the ETTR figure


class AttemptColumns:
    """The attempts as arrays."""

    def __init__(self, attempts: list[Attempt]):
        n = len(attempts)

        def column(name: str) -> np.ndarray:
            return np.fromiter(map(attrgetter(name), attempts), np.int64, n)

        self.submit, self.eligible = column("submit"), column("eligible")
        self.start, self.end, self.gpus = column("start"), column("end"), column("gpus")
        self.nodes = np.fromiter(map(len, map(attrgetter("nodes"), attempts)), np.int64, n)
        self.run_id = column("run_id")
        self.no_alloc = np.fromiter(map(attrgetter("no_alloc"), attempts), bool, n)

    def in_dump(self, w: MonthWindow) -> np.ndarray:
        return (self.submit < w.end) & (self.end >= w.start)

    def runtime_in(self, w: MonthWindow) -> np.ndarray:
        return np.clip(np.minimum(self.end, w.end) - np.maximum(self.start, w.start), 0, None)

    def queue_in(self, w: MonthWindow) -> np.ndarray:
        return np.clip(np.minimum(self.start, w.end) - np.maximum(self.eligible, w.start), 0, None)


def month_truth(history: History, w: MonthWindow, columns: AttemptColumns, cpu: AttemptColumns | None = None) -> dict:
    """The truth of one month (its files are in the month's directory); `cpu`: the CPU-only attempts'
    columns of a mixed cluster. Every GPU figure counts GPU attempts only."""
    ctx, clock = history.ctx, history.clock
    if not history.attributed:
        attribute_failures(history)
        history.attributed = True
    p = ctx.params
    shown = columns.in_dump(w)
    runtime = np.where(shown, columns.runtime_in(w), 0)
    queue = np.where(shown, columns.queue_in(w), 0)
    node_seconds = runtime * columns.nodes
    failures = [f for f in ctx.failures if w.start <= f["attempt"].end < w.end]
    ended_in_month = shown & (columns.end >= w.start) & (columns.end < w.end)
    false_positives = _window_false_positives(history, w, ended_in_month, {id(f["attempt"]) for f in ctx.failures})
    buckets = _size_buckets(columns, shown, runtime, node_seconds, failures)
    paper = columns.gpus > PAPER_MIN_GPUS
    node_days = {"paper": float(node_seconds[paper].sum()) / 86400, "all": float(node_seconds.sum()) / 86400}
    counted = {
        "all": sum(f["expected_attributed"] for f in failures),
        "paper": sum(f["expected_attributed"] for f in failures if f["attempt"].gpus > PAPER_MIN_GPUS),
    }
    extra = {
        "all": len(false_positives),
        "paper": sum(1 for f in false_positives if f["gpus"] > PAPER_MIN_GPUS),
    }
    days = (w.end - w.start) / 86400
    faults = ctx.faults
    in_month_faults = sum(1 for times in faults.times for t in times if w.start <= t < w.end)
    expected = float(in_month_faults) if faults.replayed else float(faults.factor.sum()) * p.r_f / 1000 * days
    runs = month_training_runs(history, w, shown & (columns.run_id != 0), runtime, queue, false_positives)
    return {
        "cluster": p.cluster,
        "month": str(w.month),
        "month_start": clock.text(w.start),
        "month_end": clock.text(clock.seconds(w.month.end)),
        "as_of": clock.text(w.as_of),
        "parameters": p.as_dict(),
        "fleet": {"node_days": p.nodes * days, "expected_node_failures": expected, "node_failures": in_month_faults},
        "node_repairs": repair_truth(ctx.signals.events, p.nodes, w),
        "lemon_nodes": [history.node_names[n] for n in faults.lemons],
        "node_rate_factor": {history.node_names[n]: round(float(f), 4) for n, f in enumerate(faults.factor)},
        "r_f_per_1000_node_days": {
            k: {
                "failures": counted[k],
                "node_days": node_days[k],
                "value": counted[k] * 1000 / node_days[k] if node_days[k] else None,
                "rule_failures": counted[k] + extra[k],
                "rule_value": (counted[k] + extra[k]) * 1000 / node_days[k] if node_days[k] else None,
            }
            for k in ("paper", "all")
        },
        "size_buckets": buckets,
        "infra_failures": [_failure_row(history, f) for f in failures],
        "window_false_positives": false_positives,
        "manual_requeues_near_critical": _manual_requeues_near_critical(history, w),
        "training_runs": runs,
        "preemptions": [_preemption_row(clock, x) for x in ctx.preemptions if w.start <= x["preempted_at"] < w.end],
        "time_to_failure": _time_to_failure(failures, false_positives),
        "crash_loops": crash_loop_truth(history, w, columns),
        "scheduler": _scheduler_figures(history, columns, w.start, w.end, runs),
        **_coverage(history, w, columns, cpu, node_days, counted["all"] + extra["all"]),
    }


def _coverage(
    history: History,
    w: MonthWindow,
    columns: AttemptColumns,
    cpu: AttemptColumns | None,
    node_days: dict[str, float],
    gpu_infra_failures: int,
) -> dict:
    """What the month's records cover: its GPU and CPU-only attempts, the span of its records, the
    CPU nodes' faults, and the rules of what a figure needs that its inputs fail (simulator/rules.py)."""
    p, clock = history.ctx.params, history.clock
    shown = columns.in_dump(w)
    gpu_attempts = int(shown.sum())
    cpu_shown = cpu.in_dump(w) if cpu is not None else np.zeros(0, dtype=bool)
    printed = [(columns, shown)] + ([(cpu, cpu_shown)] if cpu is not None else [])
    known = np.concatenate([_known_times(c, rows, w.as_of) for c, rows in printed])
    first = min((int(c.submit[rows].min(initial=NEVER)) for c, rows in printed), default=NEVER)
    coverage: dict = {
        "gpu_attempts": gpu_attempts,
        "cpu_only_attempts": int(cpu_shown.sum()),
        "records_span": {
            "first": clock.text(first) if first < NEVER else None,
            "last": clock.text(int(known.max())) if len(known) else None,
        },
        "failed_rules": failed_rules(
            p.sources == "all",
            gpu_attempts,
            node_days["all"],
            node_days["paper"],
            gpu_infra_failures,
            int((shown & (columns.end < w.end) & (columns.end <= w.as_of)).sum()),
        ),
    }
    if history.cpu is not None and cpu is not None:
        ended = cpu_shown & (cpu.end >= w.start) & (cpu.end < w.end)
        states = [history.cpu.attempts[i].state for i in np.flatnonzero(ended).tolist()]
        coverage["cpu_nodes"] = {
            "nodes": p.cpu_nodes,
            "node_failures": history.cpu.node_failures(w.start, w.end),
            "node_fail_attempts": states.count("NODE_FAIL"),
            "runtime_hours": float(cpu.runtime_in(w)[cpu_shown].sum()) / 3600,
        }
    return coverage


def _known_times(columns: AttemptColumns, shown: np.ndarray, as_of: int) -> np.ndarray:
    """The Submit, Eligible, Start and End times the dump at `as_of` prints of the attempts shown."""
    values = np.concatenate([columns.submit[shown], columns.eligible[shown], columns.start[shown], columns.end[shown]])
    return values[values < as_of]


def history_truth(history: History, per_month: dict[str, dict], columns: AttemptColumns | None = None) -> dict:
    """The whole history: parameters, lemons, every month's truth and the training runs over their life."""
    ctx, clock = history.ctx, history.clock
    first, last = history.windows[0], history.windows[-1]
    columns = columns or AttemptColumns(ctx.attempts)
    return {
        "cluster": ctx.params.cluster,
        "months": per_month,
        "history_start": clock.text(first.start),
        "history_end": clock.text(last.end),
        "as_of": clock.text(last.as_of),
        "parameters": ctx.params.as_dict(),
        "lemon_nodes": [history.node_names[n] for n in ctx.faults.lemons],
        "node_rate_factor": {history.node_names[n]: round(float(f), 4) for n, f in enumerate(ctx.faults.factor)},
        "training_runs": whole_training_runs(history),
        "scheduler": _scheduler_figures(history, columns, first.start, last.end, None),
    }


def _size_buckets(
    columns: AttemptColumns, shown: np.ndarray, runtime: np.ndarray, node_seconds: np.ndarray, failures: list[dict]
) -> dict:
    """Runtime hours and node-days of the started attempts shown, per size bucket (in the order the
    attempts first show each bucket; each sum added up in attempt order, as a loop would), and the
    injected failures per bucket."""
    started = np.flatnonzero(shown & (columns.start < NEVER) & ~columns.no_alloc)
    gpus = columns.gpus[started]
    positions: dict[str, list[np.ndarray]] = defaultdict(list)
    for size in np.unique(gpus).tolist():
        positions[BUCKET_OF[size]].append(np.flatnonzero(gpus == size))
    per_bucket: dict[str, dict] = {}
    for label, parts in sorted(positions.items(), key=lambda item: min(int(p[0]) for p in item[1])):
        rows = started[np.sort(np.concatenate(parts))]
        per_bucket[label] = {
            "runtime_hours": _sum_in_order(runtime[rows] / 3600),
            "node_days": _sum_in_order(node_seconds[rows] / 86400),
            "infra_failures": 0,
            "expected_attributed": 0,
        }
    for f in failures:
        bucket = per_bucket[BUCKET_OF[f["attempt"].gpus]]
        bucket["infra_failures"] += 1
        bucket["expected_attributed"] += int(f["expected_attributed"])
    return per_bucket


def _sum_in_order(values: np.ndarray) -> float:
    """0.0 + values[0] + values[1] + ...: cumsum adds one at a time (np.sum adds pairwise, with other roundings)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def _window_false_positives(
    history: History, w: MonthWindow, ended_in_month: np.ndarray, failed: set[int]
) -> list[dict]:
    """Attempts that ended FAILED or REQUEUED in the month for their own reasons, yet have a critical
    signal on one of their nodes inside the attribution window: the rule attributes them too, unless
    a user's or an admin's requeue is marked as such."""
    ctx, clock = history.ctx, history.clock
    skip = failed | marked_manual_requeues(history)
    critical = history.critical
    found = []
    for i in np.flatnonzero(ended_in_month).tolist():
        a = ctx.attempts[i]
        if a.state not in ("FAILED", "REQUEUED") or not w.start <= a.end < w.end or id(a) in skip:
            continue
        if not any(n in critical for n in a.nodes):  # no critical signal on its nodes at all
            continue
        match = rule_match(history, a)
        if match is not None:
            cause, node = match
            found.append(
                {
                    "job_id_raw": str(a.job_id_raw),
                    "submit": clock.text(a.submit),
                    "end": clock.text(a.end),
                    "state": a.state,
                    "node": history.node_names[node],
                    "gpus": a.gpus,
                    "cause": cause,
                    "ran_seconds": a.end - a.start,
                }
            )
    return found


def _manual_requeues_near_critical(history: History, w: MonthWindow) -> list[dict]:
    """Requeues by a user or an admin that ended in the month with a critical signal in their window:
    an infrastructure failure to the rule only when the records do not mark them."""
    clock, found = history.clock, []
    for r in history.ctx.manual_requeues:
        a = r["attempt"]
        match = rule_match(history, a) if w.start <= a.end < w.end else None
        if match is not None:
            found.append(
                {
                    "job_id_raw": str(a.job_id_raw),
                    "submit": clock.text(a.submit),
                    "end": clock.text(a.end),
                    "requeued_by": r["by"],
                    "marked": r["marked"],
                    "drain_injected": r["drain_injected"],
                    "cause": match[0],
                    "expected_attributed": not r["marked"],
                }
            )
    return found


def _time_to_failure(failures: list[dict], false_positives: list[dict]) -> dict:
    """The month's infrastructure failures the rule counts (those injected that it attributes, and
    its false positives) by how long their attempt had run: `all` (every cause) and `by_cause`
    (cause ->), each `failures`, `within_10_minutes`, `within_1_hour` (the first 10 minutes
    included), `later` and `median_hours` (null: no failure)."""
    counted = [
        (f["expected_cause"], f["attempt"].end - f["attempt"].start) for f in failures if f["expected_attributed"]
    ]
    counted += [(f["cause"], f["ran_seconds"]) for f in false_positives]

    def strike_times(seconds: list[int]) -> dict:
        return {
            "failures": len(seconds),
            "within_10_minutes": sum(1 for s in seconds if s < 600),
            "within_1_hour": sum(1 for s in seconds if s < 3600),
            "later": sum(1 for s in seconds if s >= 3600),
            "median_hours": float(np.median(seconds)) / 3600 if seconds else None,
        }

    causes = sorted({cause for cause, _ in counted})
    return {
        "all": strike_times([s for _, s in counted]),
        "by_cause": {c: strike_times([s for cause, s in counted if cause == c]) for c in causes},
    }


def _failure_row(history: History, f: dict) -> dict:
    a, clock = f["attempt"], history.clock
    return {
        "job_id": a.job_id,
        "job_id_raw": str(a.job_id_raw),
        "submit": clock.text(a.submit),
        "end": clock.text(a.end),
        "state": a.state,
        "cause": f["cause"],
        "node": history.node_names[f["node"]],
        "failure_at": clock.text(f["failure_at"]),
        "gpus": a.gpus,
        "nodes": len(a.nodes),
        "in_attribution_window": f["in_attribution_window"],
        "expected_attributed": f["expected_attributed"],
        "expected_cause": f["expected_cause"],
    }


def _preemption_row(clock: Clock, x: dict) -> dict:
    victim, by = x["victim"], x["by"]
    return {
        "job_id_raw": str(victim.job_id_raw),
        "submit": clock.text(victim.submit),
        "preempted_at": clock.text(x["preempted_at"]),
        "gpus": victim.gpus,
        "by_job_id_raw": str(by.job_id_raw),
        "by_submit": clock.text(by.submit),
        "by_start": clock.text(by.start),
        "by_gpus": by.gpus,
        "by_restart_after_failure": x["by_restart_after_failure"],
    }


def _scheduler_figures(
    history: History, columns: AttemptColumns, start: int, end: int, runs: list[dict] | None
) -> dict:
    """How well the scheduler ran [start, end): weekly median waits of 64+ GPU attempts, the waits of
    high-QOS jobs, idle whole nodes while a pending job would fit in them, utilisation, and (for a
    month) the ETTR of long high-priority training runs. A wait not over at the horizon counts in full."""
    ctx, clock = history.ctx, history.clock
    horizon = ctx.horizon
    wait = np.minimum(columns.start, horizon) - columns.eligible
    started_any = columns.eligible < horizon
    weeks = []
    large = (columns.gpus >= TRAINING_MIN_GPUS) & started_any
    for week_start in range(start, end, WEEK):
        week_end = min(week_start + WEEK, end)
        chosen = large & (columns.eligible >= week_start) & (columns.eligible < week_end)
        weeks.append(
            {
                "week_start": clock.text(week_start),
                "days": (week_end - week_start) / 86400,
                "attempts": int(chosen.sum()),
                "median_wait_hours": float(np.median(wait[chosen])) / 3600 if chosen.any() else None,
            }
        )
    in_span = (columns.eligible >= start) & (columns.eligible < end)
    high = in_span & (columns.gpus >= HIGH_QOS_MIN_GPUS)
    whole_node = columns.gpus >= ctx.params.gpus_per_node
    runtime = np.clip(np.minimum(columns.end, end) - np.maximum(columns.start, start), 0, None)
    figures = {
        "weekly_wait_64_plus_gpus": weeks,
        "high_qos_attempts": int(high.sum()),
        "high_qos_median_wait_hours": float(np.median(wait[high])) / 3600 if high.any() else None,
        "gpu_pool_nodes": history.gpu_pool_nodes,
        "gpu_pool_busy_share": float((runtime * columns.nodes)[whole_node].sum())
        / max(1, history.gpu_pool_nodes * (end - start)),
        "gpu_pool_idle_while_fit_share": _idle_fit_share(history, start, end),
    }
    if runs is not None:
        long_runs = [r for r in runs if r["gpus"] >= HIGH_QOS_MIN_GPUS and r["runtime_seconds"] >= LONG_RUN_SECONDS]
        figures["long_high_qos_runs"] = len(long_runs)
        figures["long_high_qos_runs_mean_ettr"] = (
            sum(r["ettr"] for r in long_runs) / len(long_runs) if long_runs else None
        )
    return figures


def _idle_fit_share(history: History, start: int, end: int) -> float:
    """Idle gpu-pool node-seconds in [start, end) while some pending job's node count was at most the
    idle healthy nodes, over the pool's node-seconds."""
    steps = history.idle_fit
    if not history.gpu_pool_nodes or not steps:
        return 0.0
    times = np.array([t for t, _ in steps] + [history.ctx.horizon], dtype=np.int64)
    values = np.array([v for _, v in steps], dtype=np.int64)
    lo, hi = np.clip(times[:-1], start, end), np.clip(times[1:], start, end)
    return float((values * (hi - lo)).sum()) / (history.gpu_pool_nodes * (end - start))
