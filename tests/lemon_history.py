"""Lemon candidates of continuous simulated histories, scored against the simulator's truth.

A history of consecutive months is simulated with known lemons, each month landed and built with
dbt (the models the lemon candidates read, and their parents), and flows/figures/lemons.py's candidates of
each month, over its own window and the trailing one, compared with truth.json's `lemon_nodes`.
Used by tests/test_lemons.py and bench/lemon_bench.py.

Counting: over the nodes of the fleet (every node the simulator made), pooled over histories. A
true positive is an injected lemon among a month's candidates, a false positive a candidate that
is not one, a miss an injected lemon that is not a candidate. precision = TP / (TP + FP), recall =
TP / (TP + misses) = TP / lemons.
"""

from __future__ import annotations

import csv
import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
from scipy.stats import nbinom, poisson

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.figures.lemons import lemon_candidates
from flows.figures.period import Period
from flows.ingest.land import land_month
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate
from simulator.catalog import CAUSE_NAMES, CAUSE_SHARES
from simulator.failures import TRACE_HEADER

# the marts the lemon candidates read, and everything they are built from
LEMON_MODELS = ("--select", "+fct_period_lemon_signal_distribution", "+fct_failures", "+fct_period_node_failure_rate")
# the models' tests run in tests/test_pipeline.py; here only the candidates are scored
NO_TESTS = ("--exclude-resource-type", "unit_test", "--exclude-resource-type", "test")
FIRST = Month.parse("2026-08")


@dataclass(frozen=True)
class Setting:
    r_f: float
    lemon_fraction: float
    lemon_factor: float = 25.0
    nodes: int = 300

    def __str__(self) -> str:
        return f"r_f {self.r_f}, lemons {self.lemon_fraction} x{self.lemon_factor:g}, {self.nodes} nodes"


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    lemons: int = 0
    healthy: int = 0  # healthy node-windows scored

    def add(self, flagged: set[str], lemons: set[str], fleet: int) -> None:
        self.tp += len(flagged & lemons)
        self.fp += len(flagged - lemons)
        self.lemons += len(lemons)
        self.healthy += fleet - len(lemons)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.lemons if self.lemons else 1.0

    def row(self) -> str:
        return (
            f"precision {self.tp}/{self.tp + self.fp} = {self.precision:.2f}, "
            f"recall {self.tp}/{self.lemons} = {self.recall:.2f}, "
            f"healthy flagged {self.fp}/{self.healthy} = {self.fp / max(self.healthy, 1):.4f}"
        )


def best_possible_recall(setting: Setting, window_days: int, precision: float = 0.9) -> float:
    """The largest expected recall at which any per-node test keeps `precision`, knowing the
    simulator's distributions exactly: a healthy node's faults over the window are Poisson at r_f x
    its gamma rate factor (negative binomial over the fleet), a lemon's Poisson at r_f x
    lemon_factor. Given its count, a node's fault times, causes and repairs do not depend on which
    it is, so the count is all a test can use, and the likelihood ratio grows with it: the best test
    lists every node above a count k and a share of those at k (Neyman-Pearson)."""
    shape = SimParams.node_rate_shape
    healthy_mean = setting.r_f / 1000 * window_days
    lemons = round(setting.nodes * setting.lemon_fraction)
    healthy = setting.nodes - lemons
    for k in range(1, 200):
        # listing counts >= k, then a share t of the nodes at k - 1: expected true and false positives
        tp, fp = (
            lemons * poisson.sf(k - 1, healthy_mean * setting.lemon_factor),
            healthy * nbinom.sf(k - 1, shape, shape / (shape + healthy_mean)),
        )
        tp_next, fp_next = (
            lemons * poisson.sf(k - 2, healthy_mean * setting.lemon_factor),
            healthy * nbinom.sf(k - 2, shape, shape / (shape + healthy_mean)),
        )
        if tp < precision * (tp + fp):
            continue
        # tp + t dtp >= precision (tp + fp + t (dtp + dfp)), solved for the largest t in [0, 1]
        dtp, dfp = tp_next - tp, fp_next - fp
        slack, cost = (1 - precision) * tp - precision * fp, precision * dfp - (1 - precision) * dtp
        share = 1.0 if cost <= 0 else min(1.0, slack / cost)
        return (tp + share * dtp) / lemons
    return 0.0


@dataclass
class LemonHistory:
    """A simulated history built month by month into one warehouse (the lemon marts and their
    parents), with the simulator's truth."""

    lemons: set[str]  # the injected lemons
    truth: dict
    config: ClusterConfig
    months: list[Month]

    def lemon_nodes(self, month: Month, **analysis) -> dict:
        """flows/figures/lemons.py's lemon_nodes of `month` (its own window, and `trailing`), with any of the
        [analysis] keys that act after the build (the p-values, the rules' thresholds) replaced."""
        params = dataclasses.replace(self.config.analysis, **analysis)
        with duckdb.connect(str(self.config.warehouse_path), read_only=True) as con:
            return lemon_candidates(con, Period.of_month(month), params)


def build_history(
    work: Path,
    setting: Setting,
    seed: int,
    months: int = 3,
    fault_trace: Path | None = None,
    first: Month = FIRST,
) -> LemonHistory:
    """Simulate `months` continuous months of `setting` (seed), or replay `fault_trace`, and land and
    build each in order with the default [analysis] (a 28-day window and a 92-day trailing one)."""
    cluster = f"lem{seed}"
    history = [first]
    for _ in range(months - 1):
        history.append(history[-1].next())
    truth = simulate(
        SimParams(
            cluster,
            first,
            last_month=history[-1],
            nodes=setting.nodes,
            seed=seed,
            r_f=setting.r_f,
            lemon_fraction=setting.lemon_fraction,
            lemon_factor=setting.lemon_factor,
            fault_trace=fault_trace,
        ),
        work / "sim" / cluster,
    )
    config = load_config(write_demo_config(work, cluster, work / "reports"))
    landed = {month: land_month(config, month) for month in history}
    built = dbt_command(config, landed, "build", *LEMON_MODELS, *NO_TESTS)  # the history in one build
    assert built.success, [r.message for r in built.result.results if str(r.status) not in ("success", "pass")]
    return LemonHistory(set(truth["lemon_nodes"]), truth, config, history)


# The repeat offender of issue 35's replay: a node with a few faults in each of four consecutive
# months (days of each month), never more than two within 14 days, among a fleet whose faults are
# overdispersed (nodes differ, and a node's faults come in bursts).
REPEAT_NODE = "gpu0007"
REPEAT_DAYS = ((4, 13, 22), (2, 12, 22), (1, 10, 19), (3, 12, 21))


def repeat_offender_trace(
    path: Path, first: Month, nodes: int, seed: int, r_f: float = 4.0, shape: float = 1.0, burst: float = 0.5
) -> Path:
    """A fault trace (docs/simulator.md "Fault traces") over the four months from `first`: every node
    has bursts of faults as a Poisson process, at r_f per 1000 node-days of faults times a gamma
    factor of `shape`, each burst 1 + Poisson(`burst`) faults within two days; REPEAT_NODE fails
    only at REPEAT_DAYS of each month. Repairs take 2-12 h."""
    rng = np.random.default_rng(seed)
    start = datetime(first.year, first.month, 1, tzinfo=UTC)
    months = [first]
    for _ in range(len(REPEAT_DAYS) - 1):
        months.append(months[-1].next())
    end_month = months[-1].next()
    days = (datetime(end_month.year, end_month.month, 1, tzinfo=UTC) - start).days
    rows = []
    factor = rng.gamma(shape, 1 / shape, nodes)
    for n in range(nodes):
        if f"gpu{n:04d}" == REPEAT_NODE:  # its faults are the repeats alone
            continue
        for day in rng.uniform(0, days, rng.poisson(r_f / 1000 * days * factor[n] / (1 + burst))):
            for offset in rng.uniform(0, 2, 1 + rng.poisson(burst)):
                if day + offset < days:
                    rows.append((f"gpu{n:04d}", start + timedelta(days=float(day + offset))))
    for month, month_days in zip(months, REPEAT_DAYS, strict=True):
        for day in month_days:
            rows.append((REPEAT_NODE, datetime(month.year, month.month, day, 9, 17, tzinfo=UTC)))
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(TRACE_HEADER)
        for node, failed in sorted(rows):
            failed = failed.replace(microsecond=0)
            repaired = failed + timedelta(hours=float(rng.uniform(2, 12)))
            category = CAUSE_NAMES[int(rng.choice(len(CAUSE_NAMES), p=CAUSE_SHARES))]
            writer.writerow((node, failed.isoformat(), repaired.isoformat(), category))
    return path
