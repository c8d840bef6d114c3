"""Delivery of a finished report. The seam for email (a later issue): today reports are archived only."""

from __future__ import annotations

import logging
from pathlib import Path

from flows.config import ClusterConfig

log = logging.getLogger(__name__)


def deliver_report(config: ClusterConfig, month: str, paths: dict[str, Path]) -> str:
    """Send the report to the cluster's recipients. Returns what was done, for the run summary.

    Email sending is not implemented yet; the report stays archived under reports/.
    """
    if config.email_to:
        log.warning(
            "email delivery is not implemented yet; %s for %s not sent to %s",
            paths["report"],
            month,
            ", ".join(config.email_to),
        )
        return "email not implemented: archived only"
    return "archived only (no recipients configured)"
