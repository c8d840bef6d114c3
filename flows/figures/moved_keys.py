"""metrics.json keys that moved in schema version 3 (docs/metrics.md "What moved in schema version
3"): a month's and a study's figures are one period's figures (flows/figures/period.py), so where the
two documents named or placed a figure differently, one name and one place now hold it.

A path is dotted keys; a list's items share the list's path (a move under a list is made in every
item of it), and `*` stands for any key at its level (a study's cluster names). `moved` reads a
document of an earlier schema version in the current shape (version 4 said a cause's rate once,
version 5 each number of a month's causes: docs/metrics.md "What version 4 added", "What version 5
said once"): tests/test_moved_keys.py compares the version-2, -3 and -4 goldens through it number
by number, and flows/delivery/fingerprint.py compares a month sent before the keys moved by its
figures, not by their names.
"""

from __future__ import annotations

import copy

from flows.figures.registry import FIGURES

_STUDY_TOTALS_MOVED = {
    "paper_failures": "node_failure_rate.paper.failures",
    "paper_node_days": "node_failure_rate.paper.node_days",
    "all_failures": "node_failure_rate.all.failures",
    "all_node_days": "node_failure_rate.all.node_days",
    "fleet_faults": "fleet_fault_rate.failures",
    "fleet_nodes": "fleet_fault_rate.nodes",
    "fleet_node_days": "fleet_fault_rate.node_days",
    "lost_gpu_hours": "lost_goodput.lost_gpu_hours",
    "first_order_gpu_hours": "lost_goodput.first_order_gpu_hours",
    "second_order_gpu_hours": "lost_goodput.second_order_gpu_hours",
    "second_order_preemptions": "lost_goodput.second_order_preemptions",
    "lost_share_of_gpu_hours": "lost_goodput.share_of_gpu_hours",
}

# old path -> new path: the figure is the same number under its new name or in its new place
MOVED_KEYS: dict[str, str] = {
    # a cause is `category` in both documents (the study called it `cause_category`)
    "clusters.*.failures_by_cause.cause_category": "clusters.*.failures_by_cause.category",
    # the shown breakdown rows are `rows` in both (the study called them `top`; `top` is their number)
    "clusters.*.breakdowns.account.top": "clusters.*.breakdowns.account.rows",
    "clusters.*.breakdowns.partition.top": "clusters.*.breakdowns.partition.rows",
    # a study's totals held r_f's, the fleet's and lost goodput's counts: they are in those figures,
    # as in a month's; the range is the study's own from_month..to_month
    **{f"clusters.*.totals.{old}": f"clusters.*.{new}" for old, new in _STUDY_TOTALS_MOVED.items()},
    "clusters.*.totals.from_month": "from_month",
    "clusters.*.totals.to_month": "to_month",
}

# paths version 3 leaves out: a study's breakdown rows said their dimension, which the table they
# are in (`breakdowns.account`, `breakdowns.partition`) says
DROPPED_KEYS: frozenset[str] = frozenset(
    {"clusters.*.breakdowns.account.top.dimension", "clusters.*.breakdowns.partition.top.dimension"}
)

# list path -> (column, value): the rows of such a list that version 3 leaves out. A study lists the
# size buckets with attempts, as a month does (it listed every bucket, zeros where nothing ran).
DROPPED_ROWS: dict[str, tuple[str, object]] = {
    "clusters.*.mttf_by_size": ("attempts", 0),
    "clusters.*.job_mix_by_size": ("attempts", 0),
}

# paths new in version 3 of a month's metrics.json: a figure a study had, or one computed once
# for the templates
MONTH_ADDED_KEYS: frozenset[str] = frozenset(
    {
        "totals.months_built",
        "summary.data_quality.evaluated",
        "summary.data_quality.successful",
        "failures_by_cause.node_days",
        "ettr_vs_expected.all.bucket_order",
        "ettr_vs_expected.priority.bucket_order",
        "node_repairs",  # node repair time and availability: a figure new in version 3
        "history.trailing.node_repairs",
        # each cause joined with its tests and its longest trailing window, for the report and its chart
        "failures_by_cause.month_over_month_test",
        "failures_by_cause.trailing",
        "causes_compared",
        "expected_ettr.by_interval",  # the curves at each interval: the report's table, an interval a row
        # issue 50: every reader counts what it skips and why (a record landed, quarantined or counted)
        *(
            f"inputs.*.{count}"
            for count in ("carriage_return_lines", "joined_lines", "files_quarantined", "files_with_incidents")
        ),
        *(f"inputs.*.{count}" for count in ("rows", "events", "cluster_records", "without_node")),  # sacctmgr's
        # issue 51: the window the figures cover within the calendar month, and each node source's records
        *(f"period.{key}" for key in ("month_start", "month_end", "observed_days", "month_days")),
        *(f"period.{key}" for key in ("late_node_sources", "notice")),
        *(f"inputs.*.{key}" for key in ("first_record", "last_record")),
    }
)
# paths new in version 3 of a study's: a figure a month had, or a join computed once for the templates
STUDY_ADDED_KEYS: frozenset[str] = frozenset(
    {
        "side_by_side.mttf_by_size",
        "side_by_side.projections",
        "side_by_side.lost_goodput_by_size",
        "side_by_side.failures_by_cause",
        "side_by_side.ettr_by_size",
        "side_by_side.expected_ettr",
        "clusters.*.totals.open_attempts",
        "clusters.*.totals.unknown_states",
        "clusters.*.mttf_by_size.ended_attempts",
        "clusters.*.failures_by_cause.node_fail",
        "clusters.*.failures_by_cause.failed",
        "clusters.*.failures_by_cause.requeued",
        "clusters.*.node_failure_rate.paper.definition",
        "clusters.*.node_failure_rate.all.definition",
        "clusters.*.ettr_vs_expected.all.runs_from_earlier_months",
        "clusters.*.ettr_vs_expected.all.formula_valid",
        "clusters.*.ettr_vs_expected.priority.runs_from_earlier_months",
        "clusters.*.ettr_vs_expected.priority.formula_valid",
        "clusters.*.ettr_vs_expected.priority_qos",
        "clusters.*.ettr_vs_expected.priority_partition",
        "clusters.*.ettr_vs_expected.min_run_hours",
        "clusters.*.breakdowns.top",
        "clusters.*.lost_goodput.infra_failures",
        "clusters.*.lost_goodput.estimator",
        "clusters.*.node_repairs",
    }
)
ADDED_KEYS = MONTH_ADDED_KEYS | STUDY_ADDED_KEYS
# paths new in version 4 (docs/metrics.md "What version 4 added"): the figures the registry first
# wrote then, in a month's document and in each cluster of a study's
ADDED_IN_4: frozenset[str] = frozenset(
    path for figure in FIGURES if figure.since == 4 for path in (figure.key, f"clusters.*.{figure.key}")
)
# a cause's rows (failures_by_cause, a month's and a study's clusters') and a study's side-by-side
# cells in version 3 -> 4: its rate's interval renamed and its rate said once (a row held it twice,
# as per_1000_node_days and rate_value; a side-by-side cell only as rate_value), and the numbers it
# repeated dropped (dropped key -> the key of the row holding the same number; None: a word, the
# unit in per_1000_node_days's name)
CAUSE_RATE_MOVED_IN_4 = {
    "rate_lower": "per_1000_node_days_lower",
    "rate_upper": "per_1000_node_days_upper",
    "rate_value": "per_1000_node_days",
}
CAUSE_RATE_DROPPED_IN_4: dict[str, str | None] = {
    "rate_failures": "failures",
    "rate_node_days": "node_days",
    "rate_unit": None,
}


# a month's cause rows in version 4 -> 5: each cause's change against last month moved to
# `month_over_month_by_cause.<category>`; what the rows repeated is dropped: the change's flagged test
# (change_flags.families.month_over_month_by_cause) and the cause's row of the longest trailing window
# (history.trailing[].by_cause, its test in change_flags), both joined when read
# (MonthDocument.causes_compared), as is `causes_compared`, which counted the tests each family has
CAUSE_CHANGE_MOVED_IN_5 = ("failures_by_cause.month_over_month", "month_over_month_by_cause")
DROPPED_IN_5: frozenset[str] = frozenset(
    {
        "failures_by_cause.month_over_month_test",
        "failures_by_cause.trailing",
        "causes_compared",
        # a flagged test's p-value, which is its change's (`month_over_month`, `month_over_month_by_cause`,
        # `history.trailing[].this_month_vs_window` and its causes'): the flag keeps its adjusted p
        "change_flags.families.*.tests.*.p_value",
    }
)
# a study's joins of its clusters' rows, which repeat their numbers: joined when read in version 5
# (flows/figures/side_by_side.py, StudyDocument.side_by_side, causes, ettr_buckets)
STUDY_DROPPED_IN_5 = ("side_by_side", "causes", "ettr_buckets")
# a study's headline in version 4 -> 5: each figure names its key, as a month's does (label's end -> key)
STUDY_HEADLINE_KEYS_IN_5 = {" r_f (all)": "r_f_all", " lost goodput": "lost_goodput"}


# the last schema version that moved or dropped keys (a document of it or later is in the current shape;
# a version a figure adds, its declaration's `since`, moves none: flows/figures/document.py SCHEMA_VERSION)
LAYOUT_VERSION = 5


def matches(path: tuple[str, ...], pattern: str) -> bool:
    """Whether a path of keys is the dotted `pattern` (`*`: any one key)."""
    parts = pattern.split(".")
    return len(parts) == len(path) and all(p in ("*", k) for p, k in zip(parts, path, strict=True))


MOVED_IN = 3  # the schema version the keys moved in: a document of an earlier version has the old paths


class MoveError(ValueError):
    """A document of an earlier schema version whose keys cannot be moved: not of that version's shape."""


def moved(document: dict) -> dict:
    """`document` (a month's or a study's metrics.json) in the current shape when it is of an
    earlier schema version (a copy): before version 3 the DROPPED_KEYS left out, each MOVED_KEYS
    value at its new path, the DROPPED_ROWS left out (ADDED_KEYS are not made up); before version 4
    each cause's rate said once (CAUSE_RATE_MOVED_IN_4, CAUSE_RATE_DROPPED_IN_4); before version 5
    each number of a month's causes said once (`_said_once_in_5`) and a study's joins left out, its
    clusters' partial months and headline keys written (`_study_in_5`); else `document` itself.
    MoveError: a document whose values are not where and what its version writes."""
    version = document.get("schema_version")
    if not isinstance(version, int) or version >= LAYOUT_VERSION:
        return document
    try:
        return _moved(copy.deepcopy(document), version)
    except (KeyError, IndexError, TypeError, AttributeError) as error:
        raise MoveError(
            f"not a metrics.json of schema version {version}: its figures cannot be read in this version's "
            f"shape ({type(error).__name__}: {error})"
        ) from None


def _moved(result: dict, version: int) -> dict:
    """`moved`'s steps over a copy of a document of schema `version`, one per version since."""
    if version < MOVED_IN:
        for dropped in DROPPED_KEYS:
            _drop(result, dropped)
        _move(result, MOVED_KEYS)
        for pattern, (column, value) in DROPPED_ROWS.items():
            for path, rows in list(_found(result, (), pattern.split("."))):
                _put(result, list(path), [row for row in rows if row.get(column) != value])
    for row in cause_rows(result) if version < 4 else []:
        for old, new in CAUSE_RATE_MOVED_IN_4.items():
            if old in row:
                row.setdefault(new, row.pop(old))  # a row with both held the same number twice
        for dropped in CAUSE_RATE_DROPPED_IN_4:
            row.pop(dropped, None)
    if "clusters" in result:
        _study_in_5(result)
    else:
        _said_once_in_5(result)
    return result


def _said_once_in_5(month: dict) -> None:
    """A month's causes as version 5 writes them (CAUSE_CHANGE_MOVED_IN_5, DROPPED_IN_5)."""
    old, new = CAUSE_CHANGE_MOVED_IN_5
    rows, key = month.get("failures_by_cause") or [], old.rsplit(".", 1)[1]
    month.setdefault(new, {row["category"]: row[key] for row in rows if key in row})
    for dropped in (old, *DROPPED_IN_5):
        _drop(month, dropped)


def _study_in_5(study: dict) -> None:
    """A study as version 5 writes it: its clusters' joins left out (STUDY_DROPPED_IN_5), each
    cluster's partial months listed ([]: none), each headline figure with its key
    (STUDY_HEADLINE_KEYS_IN_5) and the tool's version in `reproduce` (null: the file does not say it)."""
    for dropped in STUDY_DROPPED_IN_5:
        study.pop(dropped, None)
    for figures in study["clusters"].values():
        figures.setdefault("partial_months", [])
    for item in (study.get("summary") or {}).get("headline") or []:
        key = next((key for end, key in STUDY_HEADLINE_KEYS_IN_5.items() if item.get("label", "").endswith(end)), None)
        if key is not None:
            item.setdefault("key", key)
    if isinstance(study.get("reproduce"), dict):
        study["reproduce"].setdefault("tool_version", None)


def cause_rows(document: dict) -> list[dict]:
    """Every row or cell with a cause's rate: a month's failures_by_cause, a study's clusters' and
    the cells of its side-by-side table (a cluster's null cell has none)."""
    rows = list(document.get("failures_by_cause") or [])
    for figures in (document.get("clusters") or {}).values():
        rows += figures.get("failures_by_cause") or []
    for row in (document.get("side_by_side") or {}).get("failures_by_cause") or []:
        rows += [cell for cell in row["clusters"].values() if cell]
    return rows


def _drop(document: dict, pattern: str) -> None:
    for path, _ in list(_found(document, (), pattern.split("."))):
        _pop(document, path)


def _move(document: dict, moves: dict[str, str]) -> None:
    for old, new in moves.items():
        for path, value in list(_found(document, (), old.split("."))):
            _pop(document, path)
            target = [path[i] if part == "*" else part for i, part in enumerate(new.split("."))]
            _put(document, target, value)


def _found(node, path: tuple[str, ...], parts: list[str]):
    """(path, value) of each value at the dotted parts below `node`; a list's items share its path
    (their values are gathered into a list, in order)."""
    if not parts:
        yield path, node
        return
    if isinstance(node, list):
        items = [list(_found(item, path, parts)) for item in node]
        if any(items):
            yield path + tuple(parts), [value for found in items for _, value in found]
        return
    if isinstance(node, dict):
        for key in list(node) if parts[0] == "*" else [parts[0]] if parts[0] in node else []:
            yield from _found(node[key], (*path, key), parts[1:])


def _pop(node, path: tuple[str, ...]) -> None:
    """Remove the key at `path` (from every item of a list on the way)."""
    if isinstance(node, list):
        for item in node:
            _pop(item, path)
    elif len(path) == 1:
        node.pop(path[0], None)
    elif path[0] in node:
        _pop(node[path[0]], path[1:])


def _put(node, path: list[str], value) -> None:
    """Set the key at `path` (a list's items each get their value of `value`, in order)."""
    if isinstance(node, list):
        for item, item_value in zip(node, value, strict=True):
            _put(item, path, item_value)
    elif len(path) == 1:
        node[path[0]] = value
    else:
        _put(node.setdefault(path[0], {}), path[1:], value)
