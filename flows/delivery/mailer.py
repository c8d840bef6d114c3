"""Send an EmailMessage over SMTP (stdlib smtplib): STARTTLS, SSL or plain, with a login whose
credentials come from environment variables or a Prefect Secret block.

Temporary trouble (a 4xx reply, a refused or dropped connection, a timeout) is retried with
exponential back-off; a permanent 5xx reply fails at once with the server's reply in the error.
"""

from __future__ import annotations

import os
import smtplib
import socket
import ssl
from collections.abc import Sequence
from email.message import EmailMessage

from flows.config.cluster import EmailConfig
from flows.core.escape import escaped_logger
from flows.core.retry import with_backoff

log = escaped_logger(__name__)


class DeliveryError(RuntimeError):
    """The message was not accepted (permanently refused, or still failing after every retry)."""


def describe(exc: BaseException) -> str:
    """The SMTP reply (code and text) or the network error, for logs and alerts."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return "; ".join(f"{rcpt}: {code} {_text(reply)}" for rcpt, (code, reply) in exc.recipients.items())
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"
    return f"{type(exc).__name__}: {exc}"


def _text(reply: bytes | str) -> str:
    return reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)


def is_temporary(exc: BaseException) -> bool:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(400 <= code < 500 for code, _ in exc.recipients.values())
    if isinstance(exc, smtplib.SMTPResponseException):
        return 400 <= exc.smtp_code < 500
    if isinstance(exc, socket.gaierror):
        return exc.errno == socket.EAI_AGAIN  # a DNS hiccup; an unknown host stays unknown
    # A certificate that does not verify is an ssl.SSLError (an OSError too): permanent.
    return isinstance(exc, ConnectionError | TimeoutError | smtplib.SMTPServerDisconnected)


def credentials(email: EmailConfig) -> tuple[str, str] | None:
    """(username, password) from the environment or a Prefect Secret block; None: no login."""
    if not email.smtp_username_env:
        return None
    username = os.environ.get(email.smtp_username_env)
    if not username:
        raise DeliveryError(f"SMTP login: environment variable {email.smtp_username_env} (smtp_username_env) is unset")
    if email.smtp_password_secret:
        from prefect.blocks.system import Secret

        try:
            password = str(Secret.load(email.smtp_password_secret).get())
        except ValueError as exc:  # Prefect's "Unable to find block document named ..."
            raise DeliveryError(f"SMTP login: Prefect Secret block {email.smtp_password_secret!r}: {exc}") from None
    else:
        password = os.environ.get(email.smtp_password_env, "")
        if not password:
            raise DeliveryError(
                f"SMTP login: environment variable {email.smtp_password_env} (smtp_password_env) is unset"
            )
    return username, password


def send(message: EmailMessage, email: EmailConfig, recipients: Sequence[str]) -> dict[str, str]:
    """Send `message` to `recipients`; returns the recipients the server refused (address -> reply)
    while it accepted the others. Raises DeliveryError if nobody got it."""
    if "Auto-Submitted" not in message:  # RFC 3834: no out-of-office replies or auto-forward loops
        message["Auto-Submitted"] = "auto-generated"
    login = credentials(email)  # a missing secret is not worth retrying
    server = f"{email.smtp_host}:{email.port}"
    retrying = with_backoff(
        f"SMTP {server}", email.send_attempts, email.retry_wait_seconds, is_temporary, describe, log
    )
    try:
        refused = retrying(_send_once, message, email, login, list(recipients))
    except (smtplib.SMTPException, OSError) as exc:
        if is_temporary(exc):
            raise DeliveryError(
                f"SMTP {server}: gave up after {email.send_attempts} attempts: {describe(exc)}"
            ) from exc
        raise DeliveryError(f"SMTP {server} refused the message: {describe(exc)}") from exc
    return {rcpt: f"{code} {_text(reply)}" for rcpt, (code, reply) in refused.items()}


def _send_once(
    message: EmailMessage, email: EmailConfig, login: tuple[str, str] | None, recipients: list[str]
) -> dict[str, tuple[int, bytes]]:
    context = ssl.create_default_context(cafile=email.smtp_ca_file or None)
    timeout = email.smtp_timeout_seconds
    if email.smtp_security == "ssl":
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(email.smtp_host, email.port, timeout=timeout, context=context)
    else:
        smtp = smtplib.SMTP(email.smtp_host, email.port, timeout=timeout)
    with smtp:
        if email.smtp_security == "starttls":
            smtp.starttls(context=context)  # SMTPNotSupportedError if the server does not offer it
        if login:
            smtp.login(*login)
        return smtp.send_message(message, to_addrs=recipients)
