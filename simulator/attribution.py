"""What the pipeline's attribution rule must find on the logs written (docs/methodology.md,
"Attribution"), from the simulator's own statement of the rule (simulator/rules.py)."""

from __future__ import annotations

from simulator.history import History
from simulator.records import NEVER, Attempt
from simulator.rules import (
    ATTRIBUTION_AFTER_MINUTES,
    ATTRIBUTION_BEFORE_MINUTES,
    CAUSE_PRIORITY,
    UNATTRIBUTED_NODE_FAILURE,
)

# A cause's rank in the priority: lower wins a tie
CAUSE_RANK = {cause: rank for rank, cause in enumerate(CAUSE_PRIORITY)}


def rule_match(history: History, a: Attempt) -> tuple[str, int] | None:
    """What the attribution rule finds for an attempt that ended, as (cause, node), or None. The
    critical signals on its nodes inside [End - attr_before, End + attr_after] form one incident per
    node: its distance is its signal nearest End, its cause its first signal's (the first signal in a
    second, the cause first in CAUSE_PRIORITY). The incident nearest End wins; at equal distance the
    cause first in the priority, then the earlier incident, then the node's name. Another fault's
    signal counts too."""
    critical, names = history.critical, history.node_names
    lo, hi = a.end - ATTRIBUTION_BEFORE_MINUTES * 60, a.end + ATTRIBUTION_AFTER_MINUTES * 60
    incidents = []
    for n in a.nodes:
        signals = [(t, CAUSE_RANK[cause], cause) for t, cause in critical.get(n, ()) if lo <= t <= hi]
        if signals:
            first_at, first_rank, cause = min(signals)
            distance = min(abs(t - a.end) for t, _, _ in signals)
            incidents.append((distance, first_rank, first_at, names[n], cause, n))
    if not incidents:
        return None
    *_, cause, node = min(incidents)
    return cause, node


def marked_manual_requeues(history: History) -> set[int]:
    """The attempts a user or an admin requeued and the site marked so: never infrastructure failures."""
    return {id(r["attempt"]) for r in history.ctx.manual_requeues if r["marked"]}


def attribute_failures(history: History) -> None:
    """Set each injected failure's `expected_attributed` and `expected_cause` to what the pipeline's
    attribution rule must find on the logs written (NODE_FAIL always; the rule's cause, else
    unattributed_node_failure); `cause` stays the fault's true cause."""
    for f in history.ctx.failures:
        a = f["attempt"]
        found = rule_match(history, a) if a.end < NEVER else None
        f["expected_attributed"] = a.state == "NODE_FAIL" or found is not None
        f["expected_cause"] = found[0] if found else (UNATTRIBUTED_NODE_FAILURE if a.state == "NODE_FAIL" else None)
