"""Which nodes a month's report listed as lemon-node candidates, and the thresholds it judged them
by: read from the month's metrics.json (flows/figures/read.py), where the fleet's fits decided them
(flows/figures/lemons.py); the warehouse holds the signals, not the decision."""

from __future__ import annotations

from pathlib import Path

from flows.core.months import Month
from flows.explain.warehouse import Warehouse
from flows.figures.document import MonthDocument
from flows.figures.figure_types import LemonNodes, LemonWindow
from flows.figures.read import DocumentError, read_document


def _month_document(path: Path) -> MonthDocument | None:
    try:
        document = read_document(path)
    except (DocumentError, OSError):
        return None
    return document if isinstance(document, MonthDocument) else None


def month_report(wh: Warehouse, month: str) -> MonthDocument | None:
    """The month's document as its report wrote it (read once per opened warehouse: a later run in
    the same process may have rewritten it); None when no readable report is there."""
    if month not in wh.documents:
        wh.documents[month] = _month_document(wh.config.report_dir(Month.parse(month)) / "metrics.json")
    return wh.documents[month]


def month_lemons(wh: Warehouse, month: str) -> LemonNodes | None:
    """The month's lemon-node figure as its report wrote it; None when no readable report is there."""
    document = month_report(wh, month)
    return None if document is None else document.lemon_nodes


def windows(lemons: LemonNodes) -> list[tuple[str, LemonWindow]]:
    """The month's own lemon window ("own", fct_node_lemon_signals.lemon_window), then its trailing one."""
    return [("own", lemons)] + ([("trailing", lemons.trailing)] if lemons.trailing is not None else [])


def lemon_marks(wh: Warehouse, month: str, nodes: list[str]) -> list[dict]:
    """The candidates of `month`'s report among `nodes`, each window's."""
    lemons = month_lemons(wh, month)
    if lemons is None:
        return []
    on = set(nodes)
    return [
        {"node": c.node, "window": name, "rules": c.rules, "p_value": c.p_value}
        for name, window in windows(lemons)
        for c in window.candidates
        if c.node in on
    ]
