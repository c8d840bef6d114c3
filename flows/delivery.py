"""Delivery of a finished report by email, once per set of figures, and failure alerts.

A month's figures are identified by the hash of its metrics.json. A rerun with the same figures
sends nothing (unless `resend`); changed figures (late accounting records, an edited taxonomy)
send a correction that says what changed and refers to the earlier email.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate, make_msgid, parseaddr
from pathlib import Path

from flows import mailer
from flows.config import ClusterConfig
from flows.message import build_message
from flows.sent_log import FAILED, SENDING, SENT, SentLog, SentRecord

log = logging.getLogger(__name__)
SUBJECT = "Cluster reliability report: {cluster}, {month}"
HEADLINE = {  # label: path in metrics.json
    "job attempts": ("totals", "attempts"),
    "infrastructure failures": ("totals", "infra_failures"),
    "r_f per 1000 node-days (paper)": ("node_failure_rate", "paper", "value"),
    "r_f per 1000 node-days (all jobs)": ("node_failure_rate", "all", "value"),
}


def figures_hash(report_dir: Path) -> str:
    return hashlib.sha256((report_dir / "metrics.json").read_bytes()).hexdigest()


def headline(report_dir: Path) -> dict:
    metrics = json.loads((report_dir / "metrics.json").read_text())
    figures = {}
    for label, keys in HEADLINE.items():
        value = metrics
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        figures[label] = value
    return figures


def correction_notice(previous: SentRecord, figures: dict) -> str:
    def show(value) -> str:
        return f"{value:,.2f}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else "–"

    changes = [
        f"{label} {show(previous.figures.get(label))} → {show(value)}"
        for label, value in figures.items()
        if previous.figures.get(label) != value
    ]
    return (
        f"Correction: this report replaces the one sent on {previous.time[:10]}; its figures changed"
        + (f" ({'; '.join(changes)})." if changes else " (not the headline ones).")
        + " Late accounting records or an edited failure taxonomy change a month's figures."
    )


def is_delivered(config: ClusterConfig, month: str, report_dir: Path) -> bool:
    """The month's report exists and, if it goes by email, these figures were sent."""
    if not (report_dir / "metrics.json").is_file():
        return False
    if config.email is None or not config.email.to:
        return True
    last = SentLog.for_cluster(config.data_dir, config.cluster).last_sent(month)
    return last is not None and last.figures_hash == figures_hash(report_dir)


def deliver_report(config: ClusterConfig, month: str, report_dir: Path, *, resend: bool = False) -> str:
    """Email the report in `report_dir` to the cluster's recipients unless these figures went out
    already. Returns what was done, for the run summary; raises mailer.DeliveryError if the server
    did not accept it (nothing is then recorded as sent)."""
    email = config.email
    if email is None or not email.to:
        return "archived only (no recipients configured)"
    sent_log = SentLog.for_cluster(config.data_dir, config.cluster)
    digest = figures_hash(report_dir)
    last = sent_log.last_sent(month)
    if last and last.figures_hash == digest and not resend:
        return (
            f"not sent again: these figures went to {len(last.recipients)} recipients on {last.time} (--resend to send)"
        )

    figures = headline(report_dir)
    subject = SUBJECT.format(cluster=config.cluster, month=month)
    kind, notice = "report", None
    if last and last.figures_hash != digest:
        kind, subject, notice = "correction", f"Correction: {subject}", correction_notice(last, figures)
    elif last:
        kind = "resend"
    message = build_message(report_dir, sender=email.sender, recipients=email.to, subject=subject, notice=notice)
    interrupted = sent_log.interrupted(month, digest)
    if interrupted:
        log.warning("an earlier send of %s %s was interrupted; sending it again", config.cluster, month)
    message_id = interrupted.message_id if interrupted else make_msgid(domain=_domain(email.sender))
    message["Message-ID"] = message_id
    message["Date"] = formatdate(usegmt=True)
    if kind == "correction":
        message["In-Reply-To"] = message["References"] = last.message_id

    record = SentRecord(
        cluster=config.cluster,
        month=month,
        status=SENDING,
        figures_hash=digest,
        message_id=message_id,
        recipients=email.to,
        subject=subject,
        kind=kind,
        figures=figures,
    )
    sent_log.append(record)
    try:
        refused = mailer.send(message, email, email.to)
    except mailer.DeliveryError as exc:
        sent_log.append(replace(record, status=FAILED, error=str(exc), time=_now()))
        raise
    refusals = "; ".join(f"{rcpt}: {reply}" for rcpt, reply in refused.items())
    sent_log.append(replace(record, status=SENT, error=refusals, time=_now()))
    if refused:  # the others have it, so it counts as sent; these addresses need fixing and --resend
        raise mailer.DeliveryError(f"{kind} {message_id} refused for {refusals}")
    return f"{kind} sent to {', '.join(email.to)} ({message_id})"


def send_alert(config: ClusterConfig, what: str, stage: str, error: str, rerun: str) -> str:
    """A short plain-text email: which run failed, at which stage, with what error, how to rerun it."""
    email = config.email
    if email is None or not email.alert_recipients:
        return "no alert recipients configured"
    message = EmailMessage(policy=SMTP)
    message["Subject"] = f"FAILED: reliability report {config.cluster} {what}, stage {stage}"
    message["From"] = email.sender
    message["To"] = ", ".join(email.alert_recipients)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = make_msgid(domain=_domain(email.sender))
    message.set_content(
        f"The reliability report of cluster {config.cluster} for {what} failed.\n\n"
        f"stage: {stage}\nerror: {error}\n\n"
        "No report was sent for it and the previous outputs are unchanged. Fix the cause, then run it again:\n"
        f"  {rerun}\n"
    )
    mailer.send(message, email, email.alert_recipients)
    return f"alert sent to {', '.join(email.alert_recipients)}"


def _domain(address: str) -> str:
    return parseaddr(address)[1].rpartition("@")[2]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
