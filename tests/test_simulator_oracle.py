"""The simulator is an independent oracle (issue 36): it shares no code or file with the pipeline it
tests (test_architecture.py), so a wrong rule in the pipeline cannot also be the truth's. Where its
truth needs one of the pipeline's rules it states it itself (simulator/rules.py); these tests state
that the two statements agree."""

from __future__ import annotations

import csv

from flows import DBT_PROJECT_DIR
from flows.config.cluster import AnalysisConfig
from simulator import rules
from simulator.catalog import CAUSE_NAMES
from simulator.failures import DCGM_SYSTEM_CATEGORY


def seed_rows(name: str) -> list[dict[str, str]]:
    with open(DBT_PROJECT_DIR / "seeds" / name, newline="") as handle:
        return list(csv.DictReader(handle))


def test_its_settings_are_the_pipelines_defaults() -> None:
    defaults = AnalysisConfig()
    assert (rules.ATTRIBUTION_BEFORE_MINUTES, rules.ATTRIBUTION_AFTER_MINUTES) == (
        defaults.attr_before_minutes,
        defaults.attr_after_minutes,
    )
    assert rules.PAPER_MIN_GPUS == defaults.paper_min_gpus
    assert rules.CKPT_INTERVAL_MINUTES == defaults.ckpt_interval_minutes
    assert rules.RESTART_OVERHEAD_MINUTES == defaults.restart_overhead_minutes
    assert rules.ETTR_MIN_RUN_HOURS == defaults.ettr_min_run_hours


def test_its_causes_and_their_priority_are_the_seeds() -> None:
    """Every cause the simulator injects (and every category DCGM's health systems name) is an
    infrastructure category of failure_categories.csv, ranked in the seed's order of cause_priority;
    a NODE_FAIL without a signal gets the seed's category for it."""
    categories = {row["category"]: row for row in seed_rows("failure_categories.csv")}
    assert set(rules.CAUSE_PRIORITY) == set(CAUSE_NAMES) >= set(DCGM_SYSTEM_CATEGORY.values())
    assert set(rules.CAUSE_PRIORITY) <= set(categories)
    assert {categories[cause]["failure_domain"] for cause in rules.CAUSE_PRIORITY}.isdisjoint({"user", "none"})
    by_priority = sorted(categories, key=lambda category: int(categories[category]["cause_priority"]))
    assert [category for category in by_priority if category in rules.CAUSE_PRIORITY] == list(rules.CAUSE_PRIORITY)
    assert rules.UNATTRIBUTED_NODE_FAILURE in categories


def test_its_size_buckets_are_the_seeds() -> None:
    rows = sorted(seed_rows("job_size_buckets.csv"), key=lambda row: int(row["bucket_order"]))
    assert rules.SIZE_BUCKETS == tuple((int(r["min_gpus"]), int(r["max_gpus"]), r["size_bucket"]) for r in rows)


def test_its_measurability_rules_are_the_pipelines() -> None:
    """The truth's rules of what a figure needs (simulator/rules.py `failed_rules`) and the
    pipeline's (flows/figures/measured.py RULES) use the same thresholds and give the same reason
    codes; which figure needs which rule is the registry's alone (flows/figures/registry.py)."""
    from flows.figures import measured
    from flows.ingest.sources.registry import NODE_SOURCES, given_input

    defaults = AnalysisConfig()
    assert rules.MIN_GPU_NODE_DAYS == defaults.min_gpu_node_days
    assert rules.LEMON_MIN_INFRA_FAILURES == defaults.lemon_min_infra_failures
    # a jobs_only dump is the sacct source alone; the simulator's other files are node sources
    assert {"sacctmgr_events_psv", "xid_syslog", "nhc_syslog", "dcgm_health_dir"} <= set(NODE_SOURCES)
    cases = [
        (node, gpus, days, paper, failures, ended)
        for node in (True, False)
        for gpus, days, paper in (
            (0, 0.0, 0.0),
            (2, 10.2, 0.0),
            (50, 99.9, 0.0),
            (500, 100.0, 100.0),
            (900, 400.0, 30.0),
        )
        for failures in (0, 9, 10)
        for ended in (0, gpus)  # none ended: every GPU attempt still running at the month's end
    ]
    for node, gpus, days, paper, failures, ended in cases:
        inputs = {"sacct_psv"} | ({"sacctmgr_events_psv"} if node else set())
        exposure = measured.Exposure(
            frozenset(given_input(k) for k in inputs), gpus, days, paper, failures, gpu_ended_attempts=ended
        )
        assert rules.failed_rules(node, gpus, days, paper, failures, ended) == measured.failed_rules(
            exposure, defaults
        ), (node, gpus, days, paper, failures, ended)
