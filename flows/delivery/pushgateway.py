"""Push a month's figures to a Prometheus Pushgateway ([prometheus] pushgateway_url).

The group is `job/<job>/cluster/<cluster>`: each push replaces the cluster's group, so the
Pushgateway serves the latest month delivered (without timestamps, which it refuses: Prometheus
records them at scrape time). The history goes to Prometheus as backfilled blocks instead
(`reliability-report export-prometheus`). When a month is pushed is delivery's rule, as for email:
once per set of figures (flows/delivery/deliver.py, channel "pushgateway"); here is only the transport,
through prometheus_client's push_to_gateway, retried like the webhook.
"""

from __future__ import annotations

import logging
import socket
import urllib.error
from pathlib import Path

from prometheus_client.exposition import push_to_gateway

from flows.config.cluster import PrometheusConfig
from flows.core.retry import with_backoff
from flows.delivery.mailer import DeliveryError
from flows.delivery.sent_log import SENT, SentLog
from flows.delivery.webhook import describe  # the same urllib errors, told the same way
from flows.figures.document import MonthDocument
from flows.figures.read import DocumentError, read_document
from flows.report.openmetrics import month_collector

log = logging.getLogger(__name__)
CHANNEL = "pushgateway"


def is_temporary(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code >= 500
    return isinstance(exc, urllib.error.URLError | ConnectionError | TimeoutError | socket.timeout)


def push(report_dir: Path, settings: PrometheusConfig) -> None:
    """PUT the month's figures (those of metrics.prom) as the cluster's group; DeliveryError, naming
    the config key and what to do, once the Pushgateway refused them or every attempt failed."""
    document = read_document(report_dir / "metrics.json")
    if not isinstance(document, MonthDocument):  # delivery pushes a month's only (MonthSubject)
        raise DocumentError(f"{report_dir / 'metrics.json'}: a study's figures, not a month's, for the Pushgateway")
    url = settings.pushgateway_url
    retrying = with_backoff(
        f"Pushgateway {url}", settings.send_attempts, settings.retry_wait_seconds, is_temporary, describe, log
    )
    try:
        retrying(
            push_to_gateway,
            url,
            job=settings.job,
            registry=month_collector(document),
            grouping_key={"cluster": document.cluster},
            timeout=settings.timeout_seconds,
        )
    except OSError as exc:  # URLError and HTTPError are OSErrors
        if is_temporary(exc):
            raise DeliveryError(
                f"[prometheus] pushgateway_url {url}: no answer after {settings.send_attempts} "
                f"attempt{'s' if settings.send_attempts > 1 else ''} "
                f"({describe(exc)}); start the Pushgateway or correct the URL, then run the month again "
                "(it is pushed once it gets through)"
            ) from exc
        raise DeliveryError(
            f"[prometheus] pushgateway_url {url} refused the figures ({describe(exc)}); "
            "check that the URL is the Pushgateway's, then run the month again"
        ) from exc


def later_month_pushed(sent_log: SentLog, month: str) -> str | None:
    """The latest month after `month` whose figures the cluster's group got, if any: the group
    holds one month, and an older month's figures must not replace a newer one's."""
    later = [r.month for r in sent_log.records() if r.channel == CHANNEL and r.status == SENT and r.month > month]
    return max(later, default=None)
