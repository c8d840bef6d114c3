"""Email delivery against a real SMTP server (aiosmtpd on 127.0.0.1): retries, permanent refusals,
TLS and logins, the [email] config, and the sent-log that makes a rerun send nothing twice."""

import datetime as dt
import ipaddress
import json
import re
import shutil
import smtplib
import ssl
import time
from dataclasses import replace
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.smtp import AuthResult, LoginPassword
from conftest import smtp_controller
from local_servers import free_port

from flows.config.cluster import EmailConfig, WebhookConfig
from flows.config.file import load_config
from flows.core.errors import ConfigError
from flows.core.months import Month
from flows.delivery import mailer, webhook
from flows.delivery.deliver import PartialDeliveryError, deliver_report, delivery_status
from flows.delivery.sent_log import SENDING, SENT, SentLog, SentRecord
from flows.delivery.subject import MonthSubject
from flows.demo import write_demo_config
from flows.deployments import monthly_report
from flows.report.render import write_report
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

BASE_CONFIG = 'cluster = "m"\n\n[[sources]]\nkind = "sacct_psv"\npath = "x.psv"\n\n'


def email_config(port: int, **overrides) -> EmailConfig:
    values = {
        "sender": "Reports <reports@example.org>",
        "to": ("ops@example.org", "lead@example.org"),
        "smtp_host": "127.0.0.1",
        "smtp_port": port,
        "smtp_security": "plain",
        "send_attempts": 3,
        "retry_wait_seconds": 0.05,
        "smtp_timeout_seconds": 5,
    }
    return EmailConfig(**{**values, **overrides})


def plain_message(subject: str = "hello") -> EmailMessage:
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = subject, "reports@example.org", "ops@example.org"
    message.set_content("figures")
    return message


def test_a_message_arrives(smtp_server):
    refused = mailer.send(plain_message(), email_config(smtp_server.port), ["ops@example.org", "lead@example.org"])
    assert refused == {}
    (received,) = smtp_server.messages
    assert received.rcpt_tos == ["ops@example.org", "lead@example.org"]
    assert smtp_server.parsed()[0]["Subject"] == "hello"


def test_a_temporary_refusal_is_retried(smtp_server, caplog):
    smtp_server.replies = ["451 4.3.0 try again later"]
    mailer.send(plain_message(), email_config(smtp_server.port), ["ops@example.org"])
    assert smtp_server.data_commands == 2 and len(smtp_server.messages) == 1
    assert "attempt 1 of 3 failed (451 4.3.0 try again later); retrying" in caplog.text


def test_a_permanent_refusal_fails_at_once_with_the_reply(smtp_server):
    smtp_server.replies = ["554 5.7.1 message rejected by policy"]
    with pytest.raises(mailer.DeliveryError, match="refused the message: 554 5.7.1 message rejected by policy"):
        mailer.send(plain_message(), email_config(smtp_server.port), ["ops@example.org"])
    assert smtp_server.data_commands == 1 and not smtp_server.messages


def test_a_server_that_stays_temporary_is_given_up_after_the_attempts(smtp_server):
    smtp_server.replies = ["421 4.3.2 shutting down"] * 5
    with pytest.raises(mailer.DeliveryError, match="gave up after 3 attempts: 421 4.3.2 shutting down"):
        mailer.send(plain_message(), email_config(smtp_server.port), ["ops@example.org"])
    assert smtp_server.data_commands == 3


def test_a_server_that_is_down_is_retried_with_back_off_then_fails():
    port = free_port()  # nothing listens there
    started = time.monotonic()
    with pytest.raises(mailer.DeliveryError, match=r"gave up after 3 attempts: ConnectionRefusedError"):
        mailer.send(plain_message(), email_config(port, retry_wait_seconds=0.2), ["ops@example.org"])
    assert time.monotonic() - started >= 0.2 + 0.4  # waited 0.2 s, then 0.4 s


def refusing(prefix: str):
    """An aiosmtpd RCPT hook that refuses addresses starting with `prefix` (a mailbox that is gone)."""

    async def handle_RCPT(server, session, envelope, address, options):
        if address.startswith(prefix):
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    return handle_RCPT


def test_partly_refused_recipients_are_returned():
    with smtp_controller() as handler:
        handler.handle_RCPT = refusing("gone@")
        refused = mailer.send(plain_message(), email_config(handler.port), ["ops@example.org", "gone@example.org"])
        assert handler.messages[0].rcpt_tos == ["ops@example.org"]
    assert refused == {"gone@example.org": "550 5.1.1 no such user"}


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    directory = tmp_path_factory.mktemp("tls")
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return directory / "cert.pem", directory / "key.pem"


def server_tls(tls_files) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*tls_files)
    return context


def check_login(logins: list[str]):
    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (b"bot", b"s3cret")
        logins.append(f"{mechanism} {auth_data.login.decode()} {'ok' if ok else 'refused'}")
        return AuthResult(success=ok, handled=False)  # not handled: the server answers 535

    return authenticator


def test_starttls_with_a_login_from_environment_variables(tls_files, monkeypatch):
    monkeypatch.setenv("TEST_SMTP_USER", "bot")
    monkeypatch.setenv("TEST_SMTP_PASSWORD", "s3cret")
    logins: list[str] = []
    with smtp_controller(
        tls_context=server_tls(tls_files),
        require_starttls=True,
        authenticator=check_login(logins),
        auth_required=True,
    ) as handler:
        config = email_config(
            handler.port,
            smtp_security="starttls",
            smtp_username_env="TEST_SMTP_USER",
            smtp_password_env="TEST_SMTP_PASSWORD",
            smtp_ca_file=str(tls_files[0]),
        )
        mailer.send(plain_message(), config, ["ops@example.org"])
        assert len(handler.messages) == 1 and logins == ["PLAIN bot ok"]

        monkeypatch.setenv("TEST_SMTP_PASSWORD", "wrong")
        with pytest.raises(mailer.DeliveryError, match="refused the message: 535"):
            mailer.send(plain_message(), config, ["ops@example.org"])
        monkeypatch.delenv("TEST_SMTP_PASSWORD")
        with pytest.raises(mailer.DeliveryError, match="TEST_SMTP_PASSWORD .smtp_password_env. is unset"):
            mailer.send(plain_message(), config, ["ops@example.org"])


def test_implicit_tls_checks_the_certificate(tls_files):
    with smtp_controller(ssl_context=server_tls(tls_files)) as handler:
        mailer.send(
            plain_message(),
            email_config(handler.port, smtp_security="ssl", smtp_ca_file=str(tls_files[0])),
            ["ops@example.org"],
        )
        assert len(handler.messages) == 1
        # Without the CA the certificate does not verify: permanent, not retried.
        with pytest.raises(mailer.DeliveryError, match="refused the message: SSLCertVerificationError"):
            mailer.send(plain_message(), email_config(handler.port, smtp_security="ssl"), ["ops@example.org"])


def test_the_password_can_come_from_a_prefect_secret_block(tls_files, monkeypatch):
    from prefect.blocks.system import Secret

    Secret(value="s3cret").save("test-smtp-password", overwrite=True)
    monkeypatch.setenv("TEST_SMTP_USER", "bot")
    logins: list[str] = []
    with smtp_controller(tls_context=server_tls(tls_files), authenticator=check_login(logins)) as handler:
        config = email_config(
            handler.port,
            smtp_security="starttls",
            smtp_username_env="TEST_SMTP_USER",
            smtp_password_secret="test-smtp-password",
            smtp_ca_file=str(tls_files[0]),
        )
        mailer.send(plain_message(), config, ["ops@example.org"])
    assert logins == ["PLAIN bot ok"]
    with pytest.raises(mailer.DeliveryError, match="Secret block 'no-such-block'"):
        # a login only over TLS: EmailConfig checks that even when built in code
        mailer.credentials(
            email_config(
                0, smtp_security="starttls", smtp_username_env="TEST_SMTP_USER", smtp_password_secret="no-such-block"
            )
        )


def test_temporary_and_permanent_errors():
    assert mailer.is_temporary(smtplib.SMTPDataError(452, b"4.3.1 insufficient storage"))
    assert mailer.is_temporary(smtplib.SMTPServerDisconnected("gone"))
    assert mailer.is_temporary(ConnectionResetError())
    assert mailer.is_temporary(TimeoutError())
    assert not mailer.is_temporary(smtplib.SMTPDataError(552, b"5.3.4 message too big"))
    assert not mailer.is_temporary(smtplib.SMTPAuthenticationError(535, b"5.7.8 bad credentials"))
    assert not mailer.is_temporary(smtplib.SMTPRecipientsRefused({"a@x": (450, b"busy"), "b@x": (550, b"unknown")}))


def write_email_config(tmp_path: Path, email: str) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(BASE_CONFIG + "[email]\n" + email)
    return path


def test_email_config_is_read_and_checked(tmp_path):
    config = load_config(
        write_email_config(
            tmp_path,
            'from = "Reports <r@example.org>"\nto = ["a@example.org"]\nsmtp_host = "mail.example.org"\n'
            'smtp_username_env = "U"\nsmtp_password_env = "P"\nsmtp_ca_file = "ca.pem"\n',
        )
    )
    email = config.email
    assert (email.port, email.smtp_security, email.alert_recipients) == (587, "starttls", ("a@example.org",))
    assert email.smtp_ca_file == str(tmp_path / "ca.pem")
    assert load_config(write_email_config(tmp_path, 'from = "r@example.org"\n')).email is None  # archive only

    bad = {
        'to = ["a@example.org"]\nsmtp_host = "h"\n': "from must be the sender",
        'from = "r@x.org"\nto = ["a@x.org"]\n': "smtp_host is required",
        'from = "r@x.org"\nto = ["not an address"]\nsmtp_host = "h"\n': "to #1 must be an email address, got 'not an address'",
        'from = "r@x.org"\nto = "a@x.org"\nsmtp_host = "h"\n': "to must be a list",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\npassword = "hunter2"\n': "credentials never go in",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_security = "tls"\n': "smtp_security must be",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_username_env = "U"\n': "a login needs",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_security = "plain"\n'
        'smtp_username_env = "U"\nsmtp_password_env = "P"\n': "no login over an unencrypted connection",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_port = "25"\n': "smtp_port must be an integer",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_password_env = "MY-PASS"\n'
        'smtp_username_env = "U"\n': "smtp_password_env must be the name of an environment variable",
        'from = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_hots = "h"\n': "unknown key 'smtp_hots' \\(did you mean 'smtp_host'\\?\\)",
    }
    for text, error in bad.items():
        with pytest.raises(ConfigError, match=error):
            load_config(write_email_config(tmp_path, text))


def test_the_sent_log_keeps_every_attempt_and_finds_an_interrupted_one(tmp_path):
    log = SentLog.for_cluster(tmp_path, "m")
    first = SentRecord("m", "2026-10", SENDING, "h1", "<1@x>", ("a@x",), "s", "report")
    log.append(first)
    assert log.interrupted("2026-10", "h1") == first and log.last_sent("2026-10") is None
    log.append(SentRecord("m", "2026-10", SENT, "h1", "<1@x>", ("a@x",), "s", "report"))
    log.append(SentRecord("m", "2026-09", SENDING, "h0", "<0@x>", ("a@x",), "s", "report"))
    assert log.interrupted("2026-10", "h1") is None and log.last_sent("2026-10").message_id == "<1@x>"
    assert log.interrupted("2026-09", "h0").message_id == "<0@x>" and log.interrupted("2026-09", "h9") is None
    assert [r.status for r in log.records()] == [SENDING, SENT, SENDING]
    assert [p.name for p in log.path.parent.iterdir()] == ["m.jsonl"]  # no temporary file left


MONTH = "2026-10"
SUBJECT = MonthSubject(Month.parse(MONTH))  # what delivery sends


def email_section(port: int) -> str:
    return (
        '\n[email]\nfrom = "Reliability <reports@example.org>"\nto = ["ops@example.org", "lead@example.org"]\n'
        f'alert_to = ["oncall@example.org"]\nsmtp_host = "127.0.0.1"\nsmtp_port = {port}\nsmtp_security = "plain"\n'
        "send_attempts = 3\nretry_wait_seconds = 0.05\n"
    )


@pytest.fixture(scope="module")
def built(smtp_server, tmp_path_factory, fresh_warehouse):
    """One month built and emailed by the flow."""
    work = tmp_path_factory.mktemp("delivery")
    config = write_demo_config(work, "mail", work / "reports")
    config.write_text(config.read_text() + email_section(smtp_server.port))
    fresh_warehouse(config, "module")
    simulate(SimParams("mail", Month.parse(MONTH), nodes=24, seed=3), work / "sim" / "mail" / MONTH)
    summary = monthly_report(cluster="mail", config=str(config), month=MONTH)
    return {
        "config": load_config(config),
        "summary": summary,
        "report_dir": Path(summary.report).parent,
        "messages": smtp_server.parsed(),
    }


def test_the_report_is_sent_once_and_a_rerun_sends_nothing(built, smtp_server):
    (message,) = built["messages"]
    assert message["Subject"] == "Cluster reliability report: mail, 2026-10"
    assert message["To"] == "ops@example.org, lead@example.org"
    assert message.get_content_type() == "multipart/alternative"
    text, related = message.get_payload()
    assert text.get_content_type() == "text/plain"
    assert [p.get_content_type() for p in related.get_payload()][:2] == ["text/html", "image/png"]
    log = SentLog.for_cluster(built["config"].data_dir, "mail")
    assert [(r.status, r.kind) for r in log.records()] == [(SENDING, "report"), (SENT, "report")]
    assert log.last_sent(MONTH).message_id == message["Message-ID"]
    assert built["summary"].delivery.startswith("report emailed to ops@example.org, lead@example.org")
    assert message["Auto-Submitted"] == "auto-generated"

    summary = monthly_report(cluster="mail", config=str(built["config"].config_path), month=MONTH)
    assert summary.delivery.startswith("not emailed again: these figures went to 2 recipients")
    assert smtp_server.messages == [] and len(log.records()) == 2
    assert delivery_status(built["config"], SUBJECT, built["report_dir"])[0]


def test_resend_sends_the_same_figures_again_after_a_temporary_refusal(built, smtp_server):
    smtp_server.replies = ["451 4.7.1 greylisted, try again"]
    done = str(deliver_report(built["config"], SUBJECT, built["report_dir"], resend=True))
    assert done.startswith("resend emailed to") and smtp_server.data_commands == 2
    (message,) = smtp_server.parsed()
    assert message["Subject"] == "Cluster reliability report: mail, 2026-10"  # same figures: no correction
    assert message["Message-ID"] != built["messages"][0]["Message-ID"]


def test_a_permanent_refusal_fails_and_leaves_the_sent_log_as_it_was(built, smtp_server):
    log = SentLog.for_cluster(built["config"].data_dir, "mail")
    before = log.path.read_bytes()
    smtp_server.replies = ["550 5.1.1 <ops@example.org>: mailbox unavailable"]
    with pytest.raises(mailer.DeliveryError, match="refused the message: 550 5.1.1 <ops@example.org>: mailbox"):
        deliver_report(built["config"], SUBJECT, built["report_dir"], resend=True)
    assert smtp_server.messages == [] and smtp_server.data_commands == 1
    assert log.path.read_bytes() == before


def test_a_server_that_is_down_marks_nothing_sent(built):
    config = replace(built["config"], email=replace(built["config"].email, smtp_port=free_port()))
    log = SentLog.for_cluster(config.data_dir, "mail")
    sent_before = log.last_sent(MONTH)
    with pytest.raises(mailer.DeliveryError, match="gave up after 3 attempts: ConnectionRefusedError"):
        deliver_report(config, SUBJECT, built["report_dir"], resend=True)
    assert log.records()[-1].status == SENT and log.last_sent(MONTH) == sent_before


def test_a_refused_recipient_is_named_and_the_others_count_as_sent(built):
    with smtp_controller() as handler:
        handler.handle_RCPT = refusing("lead@")
        config = replace(built["config"], email=replace(built["config"].email, smtp_port=handler.port))
        outcome = deliver_report(config, SUBJECT, built["report_dir"], resend=True)
        assert outcome.delivered and len(outcome.errors) == 1
        assert re.fullmatch(
            r"email: resend <.*> refused for lead@example.org: 550 5.1.1 no such user", outcome.errors[0]
        )
        assert [m.rcpt_tos for m in handler.messages] == [["ops@example.org"]]
    last = SentLog.for_cluster(config.data_dir, "mail").last_sent(MONTH)
    assert last.kind == "resend" and last.error == "lead@example.org: 550 5.1.1 no such user"


def test_a_partial_delivery_puts_the_built_report_in_place_and_fails_at_stage_deliver(built, smtp_server):
    """A recipient refused, the others reached: the new report is in place (it went out), and the
    run fails at stage deliver (its task failed) with an alert, so that the refusal is seen."""
    report_dir = built["report_dir"]
    with smtp_controller() as handler:
        handler.handle_RCPT = refusing("lead@")
        port = f"smtp_port = {built['config'].email.smtp_port}"
        copy = config_copy(built, "mail-partial.toml")
        copy.write_text(copy.read_text().replace(port, f"smtp_port = {handler.port}"))
        with pytest.raises(PartialDeliveryError, match=r"2026-10: the report is in place but email: resend <"):
            monthly_report(cluster="mail", config=str(copy), month=MONTH, resend=True)
        report, alert = handler.parsed()
    assert report["To"] == "ops@example.org, lead@example.org"
    assert alert["Subject"] == "FAILED: reliability report mail 2026-10, stage deliver"
    assert str(copy) in json.loads((report_dir / "metrics.json").read_text())["reproduce"]["command"]
    assert sorted(p.name for p in report_dir.parent.iterdir()) == [MONTH]  # no staged copy left behind


def test_changed_figures_send_a_correction(built, smtp_server, tmp_path):
    """A copy of the report whose metrics.json changed (what a rebuild with late records gives)."""
    report_dir = tmp_path / MONTH
    shutil.copytree(built["report_dir"], report_dir)
    metrics = json.loads((report_dir / "metrics.json").read_text())
    metrics["totals"]["infra_failures"] += 2
    write_report(report_dir, metrics)  # the report shows the changed figure
    first = SentLog.for_cluster(built["config"].data_dir, "mail").last_sent(MONTH)  # what the correction replaces

    assert not delivery_status(built["config"], SUBJECT, report_dir)[0]
    done = str(deliver_report(built["config"], SUBJECT, report_dir))
    assert done.startswith("correction emailed")
    (message,) = smtp_server.parsed()
    assert message["Subject"] == "Correction: Cluster reliability report: mail, 2026-10"
    assert message["In-Reply-To"] == message["References"] == first.message_id
    failures = metrics["totals"]["infra_failures"]
    notice = f"Changed figures: Infrastructure failures {failures - 2} → {failures} of "  # old → new, as shown
    text = message.get_body(("plain",)).get_content()
    assert text.startswith(f"Correction: this report replaces the one sent on {first.time[:10]}, rebuilt from the same")
    assert notice in text
    assert notice in message.get_body(("html",)).get_content()
    assert str(deliver_report(built["config"], SUBJECT, report_dir)).startswith("not emailed again")


def config_copy(built: dict, name: str, extra: str = "") -> Path:
    """The built month's config under another name beside it (same inputs and outputs), plus `extra`."""
    original = built["config"].config_path
    copy = original.with_name(name)
    copy.write_text(original.read_text() + extra)
    return copy


def test_a_new_config_path_or_a_parameter_that_changes_no_figure_sends_nothing(built, smtp_server):
    deliver_report(built["config"], SUBJECT, built["report_dir"], resend=True)  # the month's own figures went last
    smtp_server.reset()
    copy = config_copy(built, "mail-copy.toml")
    summary = monthly_report(cluster="mail", config=str(copy), month=MONTH)
    assert summary.delivery.startswith("not emailed again: these figures went to 2 recipients")

    copy = config_copy(built, "mail-copy.toml", "\n[analysis]\nlemon_p_value = 0.00099\n")
    summary = monthly_report(cluster="mail", config=str(copy), month=MONTH)
    assert summary.delivery.startswith("not emailed again") and smtp_server.messages == []
    metrics = json.loads(Path(summary.metrics).read_text())  # the report in place shows what was used
    assert metrics["parameters"]["lemon_p_value"] == 0.00099 and str(copy) in metrics["reproduce"]["command"]


def test_a_delivery_that_reaches_nobody_keeps_the_previous_report_and_sent_log(built, smtp_server):
    report_dir = built["report_dir"]
    before = {p.relative_to(report_dir): p.read_bytes() for p in report_dir.rglob("*") if p.is_file()}
    log = SentLog.for_cluster(built["config"].data_dir, "mail")
    log_before = log.path.read_bytes()
    # a longer lost-work cap changes the lost goodput: a correction is due, and the server rejects it
    copy = config_copy(built, "mail-cap.toml", "\n[analysis]\nlost_work_cap_minutes = 240\n")
    smtp_server.replies = ["554 5.7.1 rejected by policy"]
    with pytest.raises(mailer.DeliveryError, match="554 5.7.1 rejected by policy"):
        monthly_report(cluster="mail", config=str(copy), month=MONTH)
    assert smtp_server.data_commands >= 1
    (alert,) = smtp_server.parsed()
    assert alert["Subject"] == "FAILED: reliability report mail 2026-10, stage deliver"
    assert alert["Auto-Submitted"] == "auto-generated"
    after = {p.relative_to(report_dir): p.read_bytes() for p in report_dir.rglob("*") if p.is_file()}
    assert after == before and log.path.read_bytes() == log_before
    assert sorted(p.name for p in report_dir.parent.iterdir()) == [MONTH]  # no staged copy left behind


def hook(url: str = "", **overrides) -> WebhookConfig:
    values = {"url": url, "send_attempts": 3, "retry_wait_seconds": 0.01, "timeout_seconds": 5}
    return WebhookConfig(**{**values, **overrides})


def test_a_webhook_post_is_retried_when_busy_and_fails_at_once_when_refused(webhook_server, caplog):
    webhook_server.statuses = [503]
    webhook.post("hello", hook(webhook_server.url))
    assert webhook_server.requests == 2 and webhook_server.posts == [{"text": "hello"}]
    assert "webhook http://127.0.0.1" in caplog.text and "attempt 1 of 3 failed (HTTP 503" in caplog.text
    assert "secret" not in caplog.text  # a webhook URL's path is its credential

    webhook_server.reset()
    webhook_server.statuses = [404]
    with pytest.raises(mailer.DeliveryError, match=r"refused the message: HTTP 404 Not Found: no_service") as caught:
        webhook.post("hello", hook(webhook_server.url))
    assert webhook_server.requests == 1 and "secret" not in str(caught.value)

    with pytest.raises(mailer.DeliveryError, match="gave up after 3 attempts: ConnectionRefusedError"):
        webhook.post("hello", hook(f"http://127.0.0.1:{free_port()}/hook"))


def test_the_webhook_url_comes_from_the_environment(webhook_server, monkeypatch):
    monkeypatch.delenv("REPORT_WEBHOOK_URL", raising=False)
    with pytest.raises(mailer.DeliveryError, match=r"environment variable REPORT_WEBHOOK_URL \(url_env\) is unset"):
        webhook.post("hello", hook(url_env="REPORT_WEBHOOK_URL"))
    monkeypatch.setenv("REPORT_WEBHOOK_URL", webhook_server.url)
    webhook.post("hello", hook(url_env="REPORT_WEBHOOK_URL"))
    assert webhook_server.posts == [{"text": "hello"}]


def test_the_webhook_hears_of_each_set_of_figures_once(built, webhook_server, tmp_path):
    config = replace(
        built["config"],
        email=None,
        webhook=hook(webhook_server.url, report_url="https://reports.example.org/{cluster}/{month}/"),
    )
    report_dir = tmp_path / MONTH
    shutil.copytree(built["report_dir"], report_dir)
    metrics = json.loads((report_dir / "metrics.json").read_text())

    assert str(deliver_report(config, SUBJECT, report_dir)) == "report posted to the webhook"
    (post,) = webhook_server.posts
    lines = post["text"].splitlines()
    assert lines[:2] == ["*Cluster reliability report: mail, 2026-10*", metrics["summary"]["text"]]
    infra = next(h for h in metrics["summary"]["headline"] if h["key"] == "infra_failures")
    assert f"• Infrastructure failures: {infra['value']} {infra['unit']}" in lines
    assert lines[-1] == "Report: https://reports.example.org/mail/2026-10/"

    assert str(deliver_report(config, SUBJECT, report_dir)).startswith("not posted again: these figures went to")
    assert len(webhook_server.posts) == 1

    metrics["lost_goodput"]["lost_gpu_hours"] += 10
    (report_dir / "metrics.json").write_text(json.dumps(metrics))  # a figure the message does not show
    assert str(deliver_report(config, SUBJECT, report_dir)).startswith("not posted again: every figure it shows is as")
    write_report(report_dir, metrics)  # now it shows it
    assert str(deliver_report(config, SUBJECT, report_dir)) == "correction posted to the webhook"
    correction = webhook_server.posts[-1]["text"].splitlines()[1]
    lost = metrics["lost_goodput"]["lost_gpu_hours"]
    assert correction.startswith("Correction: this report replaces the one sent on")
    assert f"Lost goodput: {lost - 10:,.0f} → {lost:,.0f} GPU-hours" in correction


def test_a_failing_webhook_leaves_the_sent_log_as_it_was(built, webhook_server, tmp_path):
    config = replace(built["config"], email=None, webhook=hook(webhook_server.url))
    log = SentLog.for_cluster(config.data_dir, "mail")
    log_before = log.path.read_bytes()
    report_dir = tmp_path / MONTH
    shutil.copytree(built["report_dir"], report_dir)
    metrics = json.loads((report_dir / "metrics.json").read_text())
    metrics["totals"]["attempts"] += 1
    (report_dir / "metrics.json").write_text(json.dumps(metrics))
    webhook_server.statuses = [500, 500, 500]
    with pytest.raises(mailer.DeliveryError, match="webhook: webhook http://127.0.0.1:.*gave up after 3 attempts"):
        deliver_report(config, SUBJECT, report_dir, resend=True)
    assert log.path.read_bytes() == log_before and webhook_server.posts == []
