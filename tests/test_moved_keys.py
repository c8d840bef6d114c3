"""The figures did not change when the month's and the study's figures became one period's (issue
43): every value of the version-2 goldens (tests/data/golden/v2, as main wrote them before) is in
the goldens this version writes (tests/data/golden/reports, tests/test_study.py), at its path after
the moves of flows/figures/moved_keys.py, and nothing else is new but ADDED_KEYS (the study's
attempt counts issue 51 changed on purpose, COUNTED_ONCE, and its lemon candidates issue 53 did,
OVER_THE_RANGE, aside). Integers and
strings are equal; floats equal to the last bits (RELATIVE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.figures.moved_keys import (
    ADDED_IN_4,
    ADDED_KEYS,
    CAUSE_CHANGE_MOVED_IN_5,
    CAUSE_RATE_DROPPED_IN_4,
    cause_rows,
    matches,
    moved,
)
from flows.figures.read import month_document, study_document

GOLDEN = Path(__file__).parent / "data" / "golden"
DOCUMENTS = ("month", "study")
# a float is the same number to its last bits: version 2 added some of the months' rounded figures
# (GPU-hours, node-days, lost GPU-hours) in the table's order, version 3 adds the months' integer
# seconds exactly, or their figures in another order (at most 3e-16 apart, one or two units in the
# last place of a double)
RELATIVE = 1e-12
# not figures: the layout's version, and the data-quality suites' `table` (where a suite reads: the
# suites of the figures' marts read their month's period by a query, expectations/*.json)
NOT_FIGURES = {("schema_version",), ("data_quality", "table")}
# changed on purpose since: issue 51 counts each attempt of a study once, with its final outcome in
# the range (version 2 summed the months' counts: an attempt across a month end was counted in each
# month, open in the earlier ones), so the study's attempt counts and job mix are the records' own
COUNTED_ONCE = (
    *(f"clusters.*.totals.{key}" for key in ("attempts", "gpu_attempts", "open_attempts")),
    "clusters.*.job_mix",
    "clusters.*.job_mix_by_size.attempts",
    "clusters.*.mttf_by_size.attempts",
    "side_by_side.job_mix_by_size.clusters.*.attempts",
)

# changed on purpose since: issue 53 lists a study's lemon-node candidates over its range (its own
# window, no trailing one), no longer its last month's (docs/metrics.md)
OVER_THE_RANGE = ("clusters.*.lemon_nodes",)
# changed on purpose in version 5: a study says the tool's version (before: none, moved in as null)
CHANGED_IN_5 = ("reproduce.tool_version",)


def differences(
    ours,
    theirs,
    path: tuple[str, ...] = (),
    added=ADDED_KEYS,
    changed: tuple[str, ...] = (*COUNTED_ONCE, *OVER_THE_RANGE, *CHANGED_IN_5),
) -> list[str]:
    """Where `ours` differs from `theirs` (an earlier version's, moved): a value not equal, a key
    missing, or a key new in ours that `added` does not name (`changed`: paths changed on purpose).
    Numbers must be equal."""
    where = ".".join(path) or "metrics"
    if any(matches(path, c) for c in changed):
        return []
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            return [f"{where}: not an object"]
        found = [f"{where}.{k}: missing" for k in theirs if k not in ours]
        found += [
            f"{where}.{k}: new" for k in ours if k not in theirs and not any(matches((*path, k), new) for new in added)
        ]
        for key in theirs.keys() & ours.keys():
            found += differences(ours[key], theirs[key], (*path, key), added, changed)
        return found
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(ours) != len(theirs):
            return [f"{where}: {len(theirs)} items, not {len(ours) if isinstance(ours, list) else ours!r}"]
        return [d for mine, old in zip(ours, theirs, strict=True) for d in differences(mine, old, path, added, changed)]
    if path in NOT_FIGURES:
        return []
    if isinstance(theirs, float) and isinstance(ours, float):
        return [] if ours == pytest.approx(theirs, rel=RELATIVE, abs=0) else [f"{where}: {ours!r} was {theirs!r}"]
    return [] if ours == theirs and type(ours) is type(theirs) else [f"{where}: {ours!r} was {theirs!r}"]


# changed on purpose since: issue 51's node-name check (a row per source, read from the manifest)
# replaced the suite that counted health events on unknown hosts
REPLACED_SUITES = {"health_event_hosts", "node_names"}
# issue 53: the suites of the month's rows of the periods' marts are named for those marts
RENAMED_SUITES = {
    "fct_mttf_by_size_monthly": "fct_period_mttf_by_size",
    "fct_failures_by_cause_monthly": "fct_period_failures_by_cause",
    "fct_job_mix_monthly": "fct_period_job_mix",
}


def suites_by_name(document: dict) -> dict:
    """`document` with its data-quality rows keyed by suite (their order is the suites' order on
    disk, not a figure), the renamed suites by their new names, the replaced suites and where each
    reads (NOT_FIGURES) left out."""
    rows = document.get("data_quality")
    if isinstance(rows, list):
        keyed = {
            RENAMED_SUITES.get(r["suite"], r["suite"]): {k: v for k, v in r.items() if k not in ("table", "suite")}
            for r in rows
        }
        document = {
            **document,
            "data_quality": {suite: r for suite, r in keyed.items() if suite not in REPLACED_SUITES},
        }
    return document


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_figure_of_version_2_is_in_version_3(document: str) -> None:
    theirs = suites_by_name(moved(json.loads((GOLDEN / "v2" / f"{document}.metrics.json").read_text())))
    ours = suites_by_name(json.loads((GOLDEN / "reports" / document / "metrics.json").read_text()))
    assert differences(ours, theirs, added=ADDED_KEYS | ADDED_IN_4) == []


# changed on purpose in version 4 (a figure added is ADDED_IN_4, not a change): a study's lemon-node
# candidates over its range (OVER_THE_RANGE)
CHANGED_IN_4: tuple[str, ...] = (*OVER_THE_RANGE, *CHANGED_IN_5)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_figure_of_version_3_is_in_version_4(document: str) -> None:
    """Issue 53 declared every figure once (flows/figures/registry.py), said a cause's rate once and
    added two figures: every value of the version-3 goldens (tests/data/golden/v3, main af08837) is
    in this version's, at its path after the moves of version 4 (a duplicate dropped was the number
    kept), and nothing is new but the registry's figures of version 4 (moved_keys.ADDED_IN_4)."""
    v3 = json.loads((GOLDEN / "v3" / f"{document}.metrics.json").read_text())
    rows = cause_rows(v3)
    assert rows  # the premise: causes whose rate version 3 said twice
    for row in rows:  # what version 4 drops was the same number as what it keeps
        for dropped, kept in {**CAUSE_RATE_DROPPED_IN_4, "rate_value": "per_1000_node_days"}.items():
            if kept and dropped in row and kept in row:
                assert row[dropped] == pytest.approx(row[kept], rel=RELATIVE, abs=0), (dropped, row)
    theirs = suites_by_name(moved(v3))
    ours = suites_by_name(json.loads((GOLDEN / "reports" / document / "metrics.json").read_text()))
    assert differences(ours, theirs, added=ADDED_IN_4, changed=CHANGED_IN_4) == []


def test_the_moves_keep_their_values() -> None:
    """A moved key's value arrives at its new path, in a list's every item; dropped rows go; a
    version-3 document is read as it is."""
    study = {
        "schema_version": 2,
        "from_month": "2026-01",
        "clusters": {
            "a": {
                "totals": {"attempts": 3, "paper_failures": 2, "from_month": "2026-01"},
                "failures_by_cause": [{"cause_category": "gpu", "failures": 2}],
                "breakdowns": {"account": {"top": [{"key": "x"}], "not_shown": 0}},
                "mttf_by_size": [{"size_bucket": "1", "attempts": 3}, {"size_bucket": "2", "attempts": 0}],
            }
        },
    }
    v3 = moved(study)
    cluster = v3["clusters"]["a"]
    assert cluster["totals"] == {"attempts": 3}
    assert cluster["node_failure_rate"] == {"paper": {"failures": 2}}
    assert cluster["failures_by_cause"] == [{"failures": 2, "category": "gpu"}]
    assert cluster["breakdowns"]["account"] == {"rows": [{"key": "x"}], "not_shown": 0}
    assert cluster["mttf_by_size"] == [{"size_bucket": "1", "attempts": 3}]
    assert study["clusters"]["a"]["totals"]["paper_failures"] == 2  # a copy: the document read is as it was
    assert moved({**v3, "schema_version": 4}) == {**v3, "schema_version": 4}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_figure_of_version_4_is_in_version_5(document: str) -> None:
    """Version 5 says each number of a month's causes once: every value of the version-4 goldens
    (tests/data/golden/v4, main 0f44e83) is in this version's at its path after the moves, and
    nothing is new (a study's partial months, [] where none, and its headline's keys are moved in)."""
    theirs = suites_by_name(moved(json.loads((GOLDEN / "v4" / f"{document}.metrics.json").read_text())))
    ours = suites_by_name(json.loads((GOLDEN / "reports" / document / "metrics.json").read_text()))
    assert differences(ours, theirs, added=frozenset(), changed=CHANGED_IN_5) == []


def test_what_version_5_no_longer_writes_is_what_the_month_joins_when_read() -> None:
    """A cause's test against last month and its row of the trailing window, which version 4 wrote
    in each row of failures_by_cause, are what MonthDocument.causes_compared joins from the numbers
    version 5 writes once (and `causes_compared`'s counts too)."""
    v4 = json.loads((GOLDEN / "v4" / "month.metrics.json").read_text())
    ours = json.loads((GOLDEN / "reports" / "month" / "metrics.json").read_text())
    del ours["summary"]
    compared = month_document(ours).causes_compared.model_dump(mode="json", exclude_unset=True)
    assert v4["failures_by_cause"] and any(row["trailing"] for row in v4["failures_by_cause"])  # the premise
    moved_change = CAUSE_CHANGE_MOVED_IN_5[0].rsplit(".", 1)[1]
    window = max(ours["history"]["trailing"], key=lambda w: w["months"])
    against_window = {c["category"]: c["this_month_vs_window"] for c in window["by_cause"]}
    for row in v4["failures_by_cause"]:
        joined, category = compared["by_cause"][row["category"]], row["category"]
        # a flagged test's p-value, dropped, was its change's
        assert row["month_over_month_test"].pop("p_value") == row[moved_change]["p_value"]
        if row["trailing"]:
            assert row["trailing"]["test"].pop("p_value") == against_window[category]["p_value"]
        for key in (moved_change, "month_over_month_test", "trailing"):
            assert joined[key] == row[key], (category, key)
    assert {k: v for k, v in compared.items() if k != "by_cause"} == v4["causes_compared"]


def test_what_version_5_no_longer_writes_is_what_the_study_joins_when_read() -> None:
    """A study's clusters side by side, the causes any had and the sizes with an ETTR, which version 4
    wrote beside the clusters' figures, are what StudyDocument joins from those figures."""
    v4 = json.loads((GOLDEN / "v4" / "study.metrics.json").read_text())
    document = study_document(json.loads((GOLDEN / "reports" / "study" / "metrics.json").read_text()))
    assert document.side_by_side.model_dump(mode="json", exclude_unset=True) == v4["side_by_side"]
    assert (document.causes, document.ettr_buckets) == (v4["causes"], v4["ettr_buckets"])
