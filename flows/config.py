"""Cluster configuration (TOML): where the month's logs come from and where results go.

Relative paths resolve against the directory of the config file, and `{month}` / `{cluster}`
in a source path are replaced with the report month and cluster name.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from email.utils import parseaddr
from pathlib import Path

from flows.months import Month

FILE_KINDS = (
    "sacct_psv",
    "sacct_xdmod",
    "sacct_json",
    "sacctmgr_events_psv",
    "scontrol_nodes",
    "xid_syslog",
    "xid_dmesg_dir",
    "nhc_syslog",
    "dcgm_health_dir",
    "gcm_health_dir",
    "repair_tickets_csv",
)
# Kinds that are another way to get the same input.
SAME_INPUT = {"sacct_xdmod": "sacct_psv", "sacct_json": "sacct_psv"}
# Live sources run a command (e.g. ["sacct"] or ["ssh", "slurm-head", "sacct"]) and stand for a file kind.
COMMAND_KINDS = {
    "sacct_command": "sacct_psv",
    "sacctmgr_events_command": "sacctmgr_events_psv",
    "scontrol_nodes_command": "scontrol_nodes",
}
SOURCE_KINDS = FILE_KINDS + tuple(COMMAND_KINDS)


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class SourceConfig:
    kind: str
    path: str = ""  # file kinds: template with {month} and {cluster}
    command: tuple[str, ...] = ()  # command kinds: the program and its prefix

    def resolve(self, base: Path, cluster: str, month: Month) -> Path:
        return (base / self.path.format(month=month, cluster=cluster)).resolve()


@dataclass(frozen=True)
class IngestConfig:
    # A source may have up to max(max_bad_rows, max_bad_row_share x its rows) unreadable rows; they are
    # quarantined and reported. More than that fails the run.
    max_bad_rows: int = 10
    max_bad_row_share: float = 0.001


@dataclass(frozen=True)
class AnalysisConfig:
    gpus_per_node: int = 8
    attr_before_minutes: int = 10
    attr_after_minutes: int = 5
    paper_min_gpus: int = 128  # the paper's r_f uses jobs with more than this many GPUs
    # A job submitted within this gap after a same-named job of the same user and account ended
    # other than COMPLETED continues its job run (domain.md); 0 switches chaining off.
    run_link_gap_minutes: int = 120
    projection_gpus: tuple[int, ...] = (1024, 4096, 16384, 131072)
    # ETTR (domain.md "ETTR of a job run", "Expected ETTR"), all in minutes
    restart_overhead_minutes: float = 5.0  # u0
    ckpt_interval_minutes: float = 60.0
    ckpt_write_minutes: float = 0.0  # w_cp
    queue_after_failure_minutes: float = 0.0  # q
    ettr_curve_minutes: tuple[float, ...] = (2, 5, 10, 15, 30, 60, 120)
    ettr_min_run_hours: float = 24.0  # runs shorter than this are left out of the ETTR summary
    lost_work_cap_minutes: float = 30.0  # lost goodput per infra failure: min(runtime, cap) x GPUs
    trailing_months: tuple[int, ...] = (3, 6, 12)  # trailing windows for r_f and its trend
    # Lemon nodes (domain.md): signals over a trailing window ending at the month's end
    lemon_window_days: int = 28
    lemon_repeat_failures: int = 2  # the repeat-offender rule: this many infra failures naming a node ...
    lemon_repeat_days: int = 14  # ... within this many days
    lemon_min_incidents: int = 3  # outlier rule: hours with a critical event on the node, at least this many ...
    lemon_p_value: float = 0.001  # ... and more than the fleet's rate explains (Poisson upper tail)


SMTP_SECURITY = {"starttls": 587, "ssl": 465, "plain": 25}  # with the default port of each
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class EmailConfig:
    """[email]: who gets the report and the failure alerts, and the SMTP server that sends them.

    Credentials never sit in the config: it names the environment variables (or the Prefect Secret
    block) that hold them.
    """

    sender: str  # the `from` key
    to: tuple[str, ...] = ()
    alert_to: tuple[str, ...] = ()
    smtp_host: str = ""
    smtp_port: int = 0  # 0: the default port of smtp_security
    smtp_security: str = "starttls"
    smtp_username_env: str = ""
    smtp_password_env: str = ""
    smtp_password_secret: str = ""  # name of a Prefect Secret block
    smtp_ca_file: str = ""  # CA bundle for a private CA (default: the system's)
    smtp_timeout_seconds: float = 60.0
    send_attempts: int = 6  # temporary errors (4xx, refused connections, timeouts) are retried ...
    retry_wait_seconds: float = 30.0  # ... after 30 s, 60 s, 120 s, ... (capped at 10 min)

    @property
    def port(self) -> int:
        return self.smtp_port or SMTP_SECURITY[self.smtp_security]

    @property
    def alert_recipients(self) -> tuple[str, ...]:
        return self.alert_to or self.to  # nobody left out of a failure by default


@dataclass(frozen=True)
class ClusterConfig:
    cluster: str
    config_path: Path
    sources: tuple[SourceConfig, ...]
    data_dir: Path
    reports_dir: Path
    warehouse_path: Path
    site_timezone: str = "UTC"
    analysis: AnalysisConfig = field(default_factory=AnalysisConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    email: EmailConfig | None = None  # None: reports are archived only, failures only logged

    def source_paths(self, month: Month) -> dict[str, Path]:
        """The file sources' paths for `month` (command sources are pulled by the landing)."""
        base = self.config_path.parent
        return {s.kind: s.resolve(base, self.cluster, month) for s in self.sources if s.kind in FILE_KINDS}

    def command_sources(self) -> list[SourceConfig]:
        return [s for s in self.sources if s.kind in COMMAND_KINDS]

    def report_dir(self, month: Month) -> Path:
        return self.reports_dir / self.cluster / str(month)


def load_config(path: str | Path) -> ClusterConfig:
    path = Path(path).resolve()
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None

    def need(table: dict, key: str, where: str):
        if key not in table:
            raise ConfigError(f"{path}: missing required key {where}{key}")
        return table[key]

    cluster = str(need(raw, "cluster", ""))
    sources = []
    for i, src in enumerate(need(raw, "sources", "")):
        kind = need(src, "kind", f"sources[{i}].")
        if kind not in SOURCE_KINDS:
            raise ConfigError(f"{path}: sources[{i}].kind={kind!r} is not one of {', '.join(SOURCE_KINDS)}")
        if kind in COMMAND_KINDS:
            command = need(src, "command", f"sources[{i}].")
            if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
                raise ConfigError(f'{path}: sources[{i}].command must be a list of strings, e.g. ["sacct"]')
            sources.append(SourceConfig(kind=kind, command=tuple(command)))
        else:
            sources.append(SourceConfig(kind=kind, path=str(need(src, "path", f"sources[{i}]."))))
    logical = {COMMAND_KINDS.get(s.kind, SAME_INPUT.get(s.kind, s.kind)) for s in sources}
    if "sacct_psv" not in logical:
        raise ConfigError(
            f"{path}: a sacct_psv, sacct_xdmod, sacct_json or sacct_command source (the job records) is required"
        )
    if len(logical) != len(sources):
        raise ConfigError(f"{path}: each kind of input may come from one source only")

    base = path.parent
    paths = raw.get("paths", {})
    analysis_raw = raw.get("analysis", {})
    known = set(AnalysisConfig.__dataclass_fields__)
    unknown = set(analysis_raw) - known
    if unknown:
        raise ConfigError(f"{path}: unknown [analysis] keys: {', '.join(sorted(unknown))}")
    if "projection_gpus" in analysis_raw:
        analysis_raw["projection_gpus"] = tuple(int(n) for n in analysis_raw["projection_gpus"])
    if "trailing_months" in analysis_raw:
        analysis_raw["trailing_months"] = tuple(int(n) for n in analysis_raw["trailing_months"])
    if "ettr_curve_minutes" in analysis_raw:
        analysis_raw["ettr_curve_minutes"] = tuple(float(n) for n in analysis_raw["ettr_curve_minutes"])
    return ClusterConfig(
        cluster=cluster,
        config_path=path,
        sources=tuple(sources),
        data_dir=(base / paths.get("data", "data")).resolve(),
        reports_dir=(base / paths.get("reports", "reports")).resolve(),
        warehouse_path=(base / paths.get("warehouse", f"warehouse/{cluster}.duckdb")).resolve(),
        site_timezone=str(raw.get("site_timezone", "UTC")),
        analysis=AnalysisConfig(**analysis_raw),
        ingest=_section(path, raw, "ingest", IngestConfig),
        email=_email(path, raw.get("email")),
    )


def _section(path: Path, raw: dict, name: str, cls):
    values = raw.get(name, {})
    unknown = set(values) - set(cls.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"{path}: unknown [{name}] keys: {', '.join(sorted(unknown))}")
    return cls(**values)


def _email(path: Path, raw: dict | None) -> EmailConfig | None:
    if raw is None:
        return None
    where = f"{path}: [email]"
    keys = {("from" if name == "sender" else name) for name in EmailConfig.__dataclass_fields__}
    unknown = set(raw) - keys
    if unknown & {"password", "smtp_password", "username", "smtp_username"}:
        raise ConfigError(
            f"{where}: credentials never go in the config; name the environment variables that hold them "
            "(smtp_username_env, smtp_password_env) or a Prefect Secret block (smtp_password_secret)"
        )
    if unknown:
        raise ConfigError(f"{where}: unknown keys: {', '.join(sorted(unknown))}")

    def addresses(key: str) -> tuple[str, ...]:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
            raise ConfigError(f'{where}: {key} must be a list of addresses, e.g. ["ops@example.org"]')
        for address in value:
            if "@" not in parseaddr(address)[1]:
                raise ConfigError(f"{where}: {key}: {address!r} is not an email address")
        return tuple(value)

    to, alert_to = addresses("to"), addresses("alert_to")
    values = {k: v for k, v in raw.items() if k not in ("from", "to", "alert_to")}
    try:
        email = EmailConfig(sender=str(raw.get("from", "")), to=to, alert_to=alert_to, **values)
    except TypeError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if not (to or alert_to):
        return None
    if "@" not in parseaddr(email.sender)[1]:
        raise ConfigError(f'{where}: from must be the sender\'s address, e.g. "Reliability <reports@example.org>"')
    if not email.smtp_host:
        raise ConfigError(f"{where}: smtp_host is required to send to {', '.join(to + alert_to)}")
    if email.smtp_security not in SMTP_SECURITY:
        raise ConfigError(f"{where}: smtp_security must be one of {', '.join(SMTP_SECURITY)}")
    for key in ("smtp_username_env", "smtp_password_env"):
        if getattr(email, key) and not _ENV_NAME.match(getattr(email, key)):
            raise ConfigError(f"{where}: {key} must be the name of an environment variable")
    has_password = bool(email.smtp_password_env) + bool(email.smtp_password_secret)
    if has_password > 1:
        raise ConfigError(f"{where}: give smtp_password_env or smtp_password_secret, not both")
    if bool(email.smtp_username_env) != bool(has_password):
        raise ConfigError(f"{where}: a login needs smtp_username_env and a password (env or secret)")
    if email.smtp_username_env and email.smtp_security == "plain":
        raise ConfigError(f"{where}: no login over an unencrypted connection; use starttls or ssl")
    numbers = {
        "smtp_port": (email.smtp_port, int, 0),
        "send_attempts": (email.send_attempts, int, 1),
        "retry_wait_seconds": (email.retry_wait_seconds, (int, float), 0),
        "smtp_timeout_seconds": (email.smtp_timeout_seconds, (int, float), 0.001),
    }
    for key, (value, kind, least) in numbers.items():
        if isinstance(value, bool) or not isinstance(value, kind) or value < least:
            raise ConfigError(f"{where}: {key} must be a number >= {least}, got {value!r}")
    if email.smtp_ca_file:
        email = replace(email, smtp_ca_file=str((path.parent / email.smtp_ca_file).resolve()))
    return email
