"""Post a message to a chat channel's incoming webhook: Slack-compatible JSON (`{"text": ...}`, which
Slack, Mattermost, Rocket.Chat and Zulip's Slack endpoint accept), over HTTP(S) with the standard
library.

A refused or dropped connection, a timeout, 429 (rate limited) and 5xx are retried with
exponential back-off (tenacity, as for SMTP); any other 4xx (a revoked or mistyped URL) fails at once.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request

from flows.config.cluster import WebhookConfig
from flows.core.escape import escaped_logger
from flows.core.retry import with_backoff
from flows.delivery.mailer import DeliveryError

log = escaped_logger(__name__)


def webhook_url(hook: WebhookConfig) -> str:
    if hook.url:
        return hook.url
    url = os.environ.get(hook.url_env, "")
    if not url:
        raise DeliveryError(f"webhook: environment variable {hook.url_env} (url_env) is unset")
    return url


def is_temporary(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code == 429 or exc.code >= 500
    if isinstance(exc, urllib.error.URLError):
        exc = exc.reason if isinstance(exc.reason, BaseException) else exc
        if isinstance(exc, socket.gaierror):
            return exc.errno == socket.EAI_AGAIN
    return isinstance(exc, ConnectionError | TimeoutError | socket.timeout)


def describe(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        body = exc.read(300).decode(errors="replace").strip()
        return f"HTTP {exc.code} {exc.reason}" + (f": {body}" if body else "")
    if isinstance(exc, urllib.error.URLError):
        return f"{type(exc.reason).__name__}: {exc.reason}"
    return f"{type(exc).__name__}: {exc}"


def post(text: str, hook: WebhookConfig) -> None:
    """POST {"text": text} to the webhook; raises DeliveryError once it was refused or every attempt failed."""
    url = webhook_url(hook)
    where = url.split("?", 1)[0].rsplit("/", 1)[0] + "/…"  # the logs never show the URL's secret part

    def post_once() -> None:
        request = urllib.request.Request(
            url,
            data=json.dumps({"text": text}).encode(),
            headers={"Content-Type": "application/json", "User-Agent": "reliability-report"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=hook.timeout_seconds) as response:
            response.read()

    retrying = with_backoff(
        f"webhook {where}", hook.send_attempts, hook.retry_wait_seconds, is_temporary, describe, log
    )
    try:
        retrying(post_once)
    except OSError as exc:  # URLError and HTTPError are OSErrors
        if is_temporary(exc):
            raise DeliveryError(
                f"webhook {where}: gave up after {hook.send_attempts} attempts: {describe(exc)}"
            ) from exc
        raise DeliveryError(f"webhook {where} refused the message: {describe(exc)}") from exc
