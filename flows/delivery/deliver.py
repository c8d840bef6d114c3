"""Delivery of a finished report, once per set of figures, by email, to a chat webhook and to a Prometheus
Pushgateway; failure alerts.

A month's figures are identified by their fingerprint: a digest of what the report shows as
figures (metrics.json without the parameters in force, the rebuild command with its config path and
tool version, and where the inputs were read from). A rerun with the same figures sends nothing
(unless `resend`); a month already sent is sent again, as a correction, only when a figure its
message shows changed (flows/delivery/correction.py): the correction names the cause from what
differs in what the figures were made from (an earlier month built, late records, an edited
taxonomy or config), lists the changed figures, old and new, and refers to the earlier message.
Each channel keeps its own sent-log records. A delivery that reaches nobody leaves the sent-log as it was and raises DeliveryError;
the pipeline then keeps the previous report directory (flows/pipeline.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate, make_msgid, parseaddr
from pathlib import Path

from flows.config.cluster import ClusterConfig
from flows.core.escape import escaped_logger
from flows.core.words import counted
from flows.delivery import correction, mailer, pushgateway, webhook
from flows.delivery.fingerprint import Figures
from flows.delivery.mailer import DeliveryError
from flows.delivery.sent_log import DAMAGED, SENDING, SENT, SentLog, SentRecord
from flows.delivery.subject import MonthSubject, StudySubject, Subject
from flows.figures.read import EarlierSchemaError

log = escaped_logger(__name__)
SUBJECT = "Cluster reliability report: {cluster}, {month}"
EMAIL, WEBHOOK, PUSHGATEWAY = "email", "webhook", pushgateway.CHANNEL


def shown_changes(previous: SentRecord, figures: Figures) -> list[tuple[str, str]] | None:
    """The figures shown that changed since `previous` was sent (old text, new text); None when
    `previous` recorded none (a record from before they were kept: any change counts)."""
    if not previous.shown:
        return None
    return correction.changed_figures(previous.shown, figures.shown_by(previous.channel))


def correction_notice(previous: SentRecord, figures: Figures) -> str:
    changes = shown_changes(previous, figures)
    if changes is not None:
        listed = list(dict.fromkeys(correction.describe_change(old, new) for old, new in changes))
    else:  # an older record: its headline figures, then the parts of the report that changed
        listed = [
            f"{label} {previous.figures.get(label)} → {value}"
            for label, value in figures.headline.items()
            if label in previous.figures and previous.figures.get(label) != value
        ]
        listed += [f"changed: {part}" for part in figures.changed_parts(previous.sections)]
    cause = correction.causes(previous.basis, figures.basis)
    return correction.notice(previous.time, cause, listed, basis_known=bool(previous.basis))


@dataclass
class DeliveryOutcome:
    """What delivery did with one report, per channel."""

    done: list[str] = field(default_factory=list)  # one line per channel: what was done
    errors: list[str] = field(default_factory=list)  # what failed
    delivered: bool = False  # some channel handed these figures to somebody

    @property
    def reached_nobody(self) -> bool:
        """Every channel due failed: the report directory and the sent-log stay as they were."""
        return bool(self.errors) and not self.delivered

    def __str__(self) -> str:
        return "; ".join(self.done + [f"FAILED {error}" for error in self.errors])


class PartialDeliveryError(DeliveryError):
    """Delivery reached somebody but a channel or recipient failed: the report is in place and
    its figures count as sent where they went; the run fails so that the failure is seen."""


def channels(config: ClusterConfig) -> list[str]:
    pushes = config.prometheus is not None and bool(config.prometheus.pushgateway_url)
    return (
        ([EMAIL] if config.email is not None and config.email.to else [])
        + ([WEBHOOK] if config.webhook else [])
        + ([PUSHGATEWAY] if pushes else [])
    )


def sent_before(config: ClusterConfig, subject: Subject) -> bool:
    """Whether some channel has handed figures of the month (or study) to somebody (or may have)."""
    sent_log = SentLog.for_cluster(config.data_dir, config.cluster)
    return any(sent_log.last_sent(subject.key, channel) is not None for channel in channels(config))


def delivery_status(config: ClusterConfig, subject: Subject, report_dir: Path) -> tuple[bool, str]:
    """(delivered, in words): whether the month's report exists and every channel has its figures."""
    if not (report_dir / "metrics.json").is_file():
        return False, "no report"
    due = channels(config)
    if not due:
        return True, "report built already (archived; no recipients configured)"
    sent_log = SentLog.for_cluster(config.data_dir, config.cluster)
    last = {channel: sent_log.last_sent(subject.key, channel) for channel in due}
    if damaged := next((r for r in last.values() if r is not None and r.status == DAMAGED), None):
        return True, f"report built; {damaged.error}, so it may have gone out (--resend to send)"
    try:
        figures = Figures.of(report_dir)
    except EarlierSchemaError:  # a report of schema version 2 that was sent is known by its fingerprints
        figures = Figures.as_written(report_dir)
    if all(
        record is not None and (figures.carries(record.figures_hash) or _same_shown(record, figures, channel))
        for channel, record in last.items()
    ):
        when = max(record.time for record in last.values())[:10]
        return True, f"report built and {' and '.join(_past(c) for c in due)} already ({when})"
    return False, "report built already (archived, not sent)"


def in_place(config: ClusterConfig, subject: Subject) -> Path:
    """Where the subject's report is once in place (the report a new one replaces)."""
    return subject.directory if isinstance(subject, StudySubject) else config.report_dir(subject.month)


def deliver_report(
    config: ClusterConfig,
    subject: Subject,
    report_dir: Path,
    *,
    resend: bool = False,
    held: str | None = None,
) -> DeliveryOutcome:
    """Send the report of `subject` (a month or a study) in `report_dir` (staged: the webhook's link is
    where the subject's report will be once in place) by email and to the webhook (whichever are
    configured) unless these figures went out already; `held` (a reason) archives it without sending.
    Raises DeliveryError when every channel due failed; a partial failure is in the outcome's `errors`."""
    due = channels(config)
    if not due:
        return DeliveryOutcome(done=["archived only (no email recipients or webhook configured)"])
    if held:
        return DeliveryOutcome(done=[f"archived, not sent ({held})"])
    # the report it replaces (what was sent, if anything was) stands for the same figures under earlier names
    figures = Figures.of(report_dir, in_place=in_place(config, subject))
    sent_log = SentLog.for_cluster(config.data_dir, config.cluster)
    outcome = DeliveryOutcome()
    for channel in due:
        send = {EMAIL: _send_email, WEBHOOK: _post_webhook, PUSHGATEWAY: _push_to_gateway}[channel]
        try:
            line, sent, refused = send(config, subject, report_dir, figures, sent_log, resend)
        except DeliveryError as exc:
            outcome.errors.append(f"{channel}: {exc}")
            continue
        outcome.done.append(line)
        outcome.delivered |= sent
        if refused:
            outcome.errors.append(f"{channel}: {refused}")
    if outcome.reached_nobody:
        raise DeliveryError("; ".join(outcome.errors))
    return outcome


def _kind(last: SentRecord | None, figures: Figures) -> str:
    if last is None:
        return "report"
    changed = not figures.carries(last.figures_hash) and shown_changes(last, figures) != []
    return "correction" if changed and last.status != DAMAGED else "resend"


def _same_shown(last: SentRecord | None, figures: Figures, channel: str) -> bool:
    """A message went out and every figure it showed is as it was (a channel that shows figures:
    the Pushgateway's series are the whole metrics.json)."""
    return (
        channel != PUSHGATEWAY
        and last is not None
        and last.status == SENT
        and not figures.carries(last.figures_hash)
        and shown_changes(last, figures) == []
    )


def _unchanged(last: SentRecord | None, figures: Figures, channel: str, resend: bool) -> str | None:
    if last and last.status == DAMAGED and not resend:  # it may have gone out: never a second one unasked
        return f"not {_past(channel)} again: {last.error}, so it may have gone out (--resend to send)"
    to = counted(len(last.recipients), "recipient") if last and channel == EMAIL else f"the {channel}"
    if last and figures.carries(last.figures_hash) and not resend:
        return f"not {_past(channel)} again: these figures went to {to} on {last.time} (--resend to send)"
    if _same_shown(last, figures, channel) and not resend:
        parts = ", ".join(figures.changed_parts(last.sections)) or "none"
        return (
            f"not {_past(channel)} again: every figure it shows is as sent to {to} on {last.time} "
            f"(changed, not shown: {parts}; --resend to send)"
        )
    return None


def _past(channel: str) -> str:
    return {EMAIL: "emailed", WEBHOOK: "posted", PUSHGATEWAY: "pushed"}[channel]


def _send_email(
    config: ClusterConfig, subject: Subject, report_dir: Path, figures: Figures, sent_log: SentLog, resend: bool
) -> tuple[str, bool, str]:
    """(what was done, whether it was sent, the recipients the server refused)."""
    # the report's renderer (Jinja, the chart modules) comes with the message: only when one is sent
    from flows.report.message import build_message

    email = config.email
    last = sent_log.last_sent(subject.key, EMAIL)
    if unchanged := _unchanged(last, figures, EMAIL, resend):
        return unchanged, False, ""
    kind = _kind(last, figures)
    title = SUBJECT.format(cluster=config.cluster, month=subject.key)
    notice = None
    if kind == "correction":
        title, notice = f"Correction: {title}", correction_notice(last, figures)
    message = build_message(report_dir, sender=email.sender, recipients=email.to, subject=title, notice=notice)
    interrupted = sent_log.interrupted(subject.key, figures.fingerprint, EMAIL)
    if interrupted:
        log.warning("an earlier send of %s %s was interrupted; sending it again", config.cluster, subject)
    message_id = interrupted.message_id if interrupted else make_msgid(domain=_domain(email.sender))
    message["Message-ID"] = message_id
    message["Date"] = formatdate(usegmt=True)
    if kind == "correction":
        message["In-Reply-To"] = message["References"] = last.message_id

    record = _record(config, subject, figures, kind, message_id, email.to, title, EMAIL)
    sent_log.append(record)
    try:
        refused = mailer.send(message, email, email.to)
    except DeliveryError:
        sent_log.withdraw(record)  # nobody got it: the log is as it was
        raise
    refusals = "; ".join(f"{rcpt}: {reply}" for rcpt, reply in refused.items())
    sent_log.append(replace(record, status=SENT, error=refusals, time=_now()))
    # the others have it, so it counts as sent; the refused addresses need fixing and --resend
    refused_note = f"{kind} {message_id} refused for {refusals}" if refused else ""
    return f"{kind} emailed to {', '.join(email.to)} ({message_id})", True, refused_note


def report_link(config: ClusterConfig, subject: Subject) -> str:
    """Where the report is: `report_url` with {cluster} and {month}, else its path. A study (its
    directory under <reports>/studies/) is under the same base URL as the months: report_url's
    "{cluster}/{month}/" part is replaced by its path under the reports directory."""
    location = in_place(config, subject)
    url = config.webhook.report_url if config.webhook else ""
    if not url:
        return str(location / "report.html")
    if isinstance(subject, MonthSubject):
        return url.replace("{cluster}", config.cluster).replace("{month}", subject.key)
    relative = location.relative_to(config.reports_dir).as_posix()
    base, found, rest = url.partition("{cluster}/{month}")
    return f"{base}{relative}{rest}" if found else str(location / "report.html")


def webhook_text(config: ClusterConfig, subject: Subject, figures: Figures, notice: str | None) -> str:
    """The chat message: title, notice, summary, headline figures and the report's link."""
    title = SUBJECT.format(cluster=config.cluster, month=subject.key)
    lines = [f"*{title}*", *([notice] if notice else []), figures.lines[0]]
    lines += [f"• {line}" for line in figures.lines[1:]]
    return "\n".join([*lines, f"Report: {report_link(config, subject)}"])


def _post_webhook(
    config: ClusterConfig, subject: Subject, report_dir: Path, figures: Figures, sent_log: SentLog, resend: bool
) -> tuple[str, bool, str]:
    last = sent_log.last_sent(subject.key, WEBHOOK)
    if unchanged := _unchanged(last, figures, WEBHOOK, resend):
        return unchanged, False, ""
    kind = _kind(last, figures)
    notice = correction_notice(last, figures) if kind == "correction" else None
    title = SUBJECT.format(cluster=config.cluster, month=subject.key)
    record = _record(config, subject, figures, kind, "", (), title, WEBHOOK)
    sent_log.append(record)
    try:
        webhook.post(webhook_text(config, subject, figures, notice), config.webhook)
    except DeliveryError:
        sent_log.withdraw(record)
        raise
    sent_log.append(replace(record, status=SENT, time=_now()))
    return f"{kind} posted to the webhook", True, ""


def _push_to_gateway(
    config: ClusterConfig, subject: Subject, report_dir: Path, figures: Figures, sent_log: SentLog, resend: bool
) -> tuple[str, bool, str]:
    if isinstance(subject, StudySubject):  # the cluster's group holds its latest month
        return "not pushed (the Pushgateway gets months, not studies)", False, ""
    last = sent_log.last_sent(subject.key, PUSHGATEWAY)
    if unchanged := _unchanged(last, figures, PUSHGATEWAY, resend):
        return unchanged, False, ""
    if later := pushgateway.later_month_pushed(sent_log, subject.key):
        return f"not pushed: the Pushgateway holds the figures of {later}, a later month", False, ""
    kind = _kind(last, figures)
    record = _record(config, subject, figures, kind, "", (), "", PUSHGATEWAY)
    sent_log.append(record)
    try:
        pushgateway.push(report_dir, config.prometheus)
    except DeliveryError:
        sent_log.withdraw(record)
        raise
    sent_log.append(replace(record, status=SENT, time=_now()))
    return f"{kind} pushed to the Pushgateway", True, ""


def _record(
    config: ClusterConfig,
    subject: Subject,
    figures: Figures,
    kind: str,
    message_id: str,
    recipients: tuple[str, ...],
    title: str,
    channel: str,
) -> SentRecord:
    """The sent-log's record of sending `subject` (keyed by its key) with its message's subject line `title`."""
    return SentRecord(
        cluster=config.cluster,
        month=subject.key,
        status=SENDING,
        figures_hash=figures.fingerprint,
        message_id=message_id,
        recipients=recipients,
        subject=title,
        kind=kind,
        figures=figures.headline,
        sections=figures.sections,
        shown=figures.shown_by(channel),
        basis=figures.basis,
        channel=channel,
    )


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
