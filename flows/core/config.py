"""Cluster configuration (TOML): where the month's logs come from and where results go.

Relative paths resolve against the directory of the config file, and `{month}` / `{cluster}` in a
source path (`{cluster}` in [paths]) are replaced with the report month and cluster name; nothing
else in braces is allowed, and nothing is ever evaluated (str.replace, never str.format).

Every key is checked for type and range when the file is loaded, before any work: pydantic models
with `extra="forbid"`, strict types (`gpus_per_node = "eight"` is an error, not coerced). Problems
become one ConfigError naming the file and the key path, one line each, an unknown key with the
nearest known one. AnalysisConfig, IngestConfig and EmailConfig are (pydantic) dataclasses, so
`AnalysisConfig()` gives the defaults and `dataclasses.replace` works as before.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
import zoneinfo
from dataclasses import dataclass, field, replace
from datetime import date
from email.utils import parseaddr
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ByteSize, ConfigDict, Field, Strict, ValidationError, model_validator
from pydantic.dataclasses import dataclass as checked_dataclass

from flows.core.months import Month
from flows.ingest.sources.clock import EARLIEST_RECORD
from flows.ingest.sources.registry import COMMAND_KINDS, DIRECTORY_KINDS, FILE_KINDS, FORMATS

# The source kinds and what each gives come from the registry of formats (flows/ingest/sources/registry.py).
FileKind = Literal[FILE_KINDS]  # a file or a directory
CommandKind = Literal[tuple(COMMAND_KINDS)]  # live sources run a command (["sacct"], ["ssh", "head", "sacct"])
SOURCE_KINDS = FILE_KINDS + tuple(COMMAND_KINDS)
# the ways to give the job records (without them there is no month), for the message that asks for one
JOB_RECORD_SOURCES = tuple(kind for kind, f in FORMATS.items() if f.input == "sacct_psv")
SMTP_SECURITY = {"starttls": 587, "ssl": 465, "plain": 25}  # with the default port of each
CREDENTIAL_KEYS = {"password", "smtp_password", "username", "smtp_username", "user", "login"}


class ConfigError(ValueError):
    pass


# ---- value types: strict (no "8" for 8, no true for 1), with their ranges ----------------------------------


def _fill(template: str, **values: str) -> str:
    """`template` with each `{name}` replaced; a plain replace, so nothing in it is evaluated."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def _placeholders(*allowed: str) -> AfterValidator:
    names = " and ".join("{" + name + "}" for name in allowed)

    def check(template: str) -> str:
        stray = re.search(r"\{[^{}]*\}?|\}", _fill(template, **dict.fromkeys(allowed, "")))
        if stray:
            raise ValueError(f"may contain only the placeholders {names}, not {stray.group()!r}")
        if "\x00" in template:
            raise ValueError("must not contain a NUL character")
        return template

    return AfterValidator(check)


def _matching(pattern: str, what: str) -> AfterValidator:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):  # fullmatch: `$` would let a trailing newline through
            raise ValueError(f"must be {what}")
        return value

    return AfterValidator(check)


def _cluster_name(name: str) -> str:
    if name in (".", ".."):
        raise ValueError("must be a name, not '.' or '..'")
    return name


def _time_zone(name: str) -> str:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        near = difflib.get_close_matches(name, zoneinfo.available_timezones(), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"must be an IANA time zone such as 'UTC' or 'America/New_York'{hint}") from None
    return name


def _email_address(address: str) -> str:
    if any(c in address for c in "\r\n\x00") or "@" not in parseaddr(address)[1]:
        raise ValueError("must be an email address")
    return address


def _header_safe(text: str) -> str:
    if any(c in text for c in "\r\n\x00"):
        raise ValueError("must be on one line")
    return text


StrictStr = Annotated[str, Strict()]
PositiveInt = Annotated[int, Strict(), Field(gt=0)]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0)]
PositiveNumber = Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]  # an int is taken too
NonNegativeNumber = Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)]
Probability = Annotated[float, Strict(), Field(gt=0, lt=1)]
Share = Annotated[float, Strict(), Field(ge=0, le=1)]
# Letters, digits, -, _ and .: it names directories (no path escapes) and goes in mail subjects (no CR/LF).
ClusterName = Annotated[
    str,
    Strict(),
    _matching(r"[A-Za-z0-9._-]+", "letters, digits, '-', '_' and '.' only"),
    AfterValidator(_cluster_name),
]
TimeZoneName = Annotated[str, Strict(), AfterValidator(_time_zone)]
SourcePath = Annotated[str, Strict(), Field(min_length=1), _placeholders("month", "cluster")]
OutputPath = Annotated[str, Strict(), Field(min_length=1), _placeholders("cluster")]
EmailAddress = Annotated[str, Strict(), AfterValidator(_email_address)]
EnvVarName = Annotated[str, Strict(), _matching(r"([A-Za-z_][A-Za-z0-9_]*)?", "the name of an environment variable")]
BlockName = Annotated[str, Strict(), _matching(r"[a-z0-9-]*", "a Prefect block name (a-z, 0-9 and '-')")]
HostName = Annotated[str, Strict(), _matching(r"[A-Za-z0-9._:\[\]-]*", "a host name or IP address")]


# ---- the sections ---------------------------------------------------------------------------------------------

SECTION = ConfigDict(extra="forbid", frozen=True)
DATACLASS_SECTION = ConfigDict(extra="forbid")  # frozen is the dataclass decorator's


@dataclass(frozen=True)
class SourceConfig:
    kind: str
    path: str = ""  # file kinds: template with {month} and {cluster}
    command: tuple[str, ...] = ()  # command kinds: the program and its prefix
    attempts: int = 1  # command kinds: tries of a command failing transiently (CommandSource has the defaults)
    retry_wait_seconds: float = 0.0  # ... the first wait between them, doubling

    def resolve(self, base: Path, cluster: str, month: Month) -> Path:
        path = base / _fill(self.path, month=str(month), cluster=cluster)
        try:
            return path.resolve()
        except RuntimeError:  # a symlink loop: input_problem names it
            return path


class FileSource(BaseModel):
    model_config = SECTION
    kind: FileKind
    path: SourcePath = Field(description="the month's file (a directory for *_dir kinds)")


class CommandSource(BaseModel):
    model_config = SECTION
    kind: CommandKind
    command: tuple[Annotated[str, Strict(), Field(min_length=1)], ...] = Field(
        min_length=1, description='the program and its prefix, e.g. ["ssh", "slurm-head", "sacct"]'
    )
    attempts: PositiveInt = Field(4, description="a transient failure (ssh exit 255, refused, timeout) is retried ...")
    retry_wait_seconds: NonNegativeNumber = Field(10.0, description="... after 10 s, 20 s, 40 s, ... (at most 10 min)")


Source = Annotated[FileSource | CommandSource, Field(discriminator="kind")]


class PathsSection(BaseModel):
    model_config = SECTION
    data: OutputPath = Field("data", description="raw copies and normalised Parquet, per cluster and month")
    reports: OutputPath = Field("reports", description="reports/<cluster>/<month>/report.html + metrics.json")
    warehouse: OutputPath = Field("warehouse/{cluster}.duckdb", description="the DuckDB warehouse dbt builds")


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class IngestConfig:
    # A source may have up to max(max_bad_rows, max_bad_row_share x its rows) unreadable rows; they are
    # quarantined and reported. More than that fails the run. The job records may have as many attempts
    # whose records conflict (flows/ingest/sources/job_records.py), counted and reported.
    max_bad_rows: NonNegativeInt = Field(10, description="unreadable rows a source may have (quarantined) ...")
    max_bad_row_share: Share = Field(0.001, description="... or this share of its rows, whichever is more")
    earliest_record: date = Field(EARLIEST_RECORD, description="a record dated before this day is quarantined")

    def bad_row_limit(self, rows: int) -> float:
        """The unreadable rows (or conflicting attempts) a source of `rows` rows may have."""
        return max(self.max_bad_rows, self.max_bad_row_share * rows)


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class WarehouseConfig:
    # DuckDB's own default is 80% of the machine's memory: a 5M-attempt month then takes 6 GiB. Under
    # the limit DuckDB spills to <warehouse>.tmp instead (bench/README.md has the measurements).
    memory_limit: ByteSize = Field(
        ByteSize(3 * 2**30),
        ge=2**27,
        description='memory DuckDB may use for the landing and the build, e.g. "3GiB", "64GB" (at least 128MiB)',
    )

    # The engine dbt builds the marts on (docs/engines.md). DuckDB: [paths] warehouse is its file.
    # Spark: [paths] warehouse is the local session's directory (metastore, tables), unused with
    # Spark Connect ("spark.remote" in [warehouse.spark]).
    engine: Literal["duckdb", "spark"] = Field("duckdb", description='"duckdb" (one file per cluster) or "spark"')
    spark_schema: Annotated[
        str, Strict(), _matching(r"([A-Za-z_][A-Za-z0-9_]*)?", "a Spark schema name: letters, digits and '_'")
    ] = Field("", description="Spark: the schema of the cluster's marts (empty: reliability_<cluster>)")
    spark: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description='Spark: the session\'s settings, e.g. "spark.remote" = "sc://host:15002"'
    )

    def duckdb_settings(self, warehouse_path: Path) -> dict[str, str]:
        """DuckDB settings for a connection of the landing or the build of `warehouse_path`: the
        memory limit, and where to spill beyond it: <warehouse>.tmp, DuckDB's default for the
        warehouse file (an in-memory connection's default would be ./.tmp)."""
        return {
            "memory_limit": f"{int(self.memory_limit)}B",
            "temp_directory": str(warehouse_path.with_name(warehouse_path.name + ".tmp")),
        }


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class AnalysisConfig:
    gpus_per_node: PositiveInt = Field(8, description="GPUs of a node (for jobs that do not say)")
    attr_before_minutes: NonNegativeInt = Field(10, description="attribution window: minutes before a job's end")
    attr_after_minutes: NonNegativeInt = Field(5, description="... and after it")
    paper_min_gpus: NonNegativeInt = Field(128, description="the paper's r_f uses jobs with more than this many GPUs")
    # A job submitted within this gap after a same-named job of the same user and account ended
    # other than COMPLETED continues its job run (docs/methodology.md); 0 switches chaining off.
    run_link_gap_minutes: NonNegativeInt = Field(
        120, description="a job resubmitted within this gap after a failure continues its job run (0: off)"
    )
    projection_gpus: tuple[PositiveInt, ...] = Field(
        (1024, 4096, 16384, 131072), min_length=1, description="job sizes (GPUs) of the MTTF / E[ETTR] projections"
    )
    # ETTR (docs/methodology.md "ETTR", "Expected ETTR"), all in minutes
    restart_overhead_minutes: NonNegativeNumber = Field(
        5.0, description="ETTR: u0, lost per interruption besides the work since the last checkpoint"
    )
    ckpt_interval_minutes: PositiveNumber = Field(60.0, description="ETTR: checkpoint interval of the training jobs")
    ckpt_write_minutes: NonNegativeNumber = Field(
        0.0, description="ETTR: w_cp, time to write one checkpoint (> 0 gives a Young-Daly optimum)"
    )
    queue_after_failure_minutes: NonNegativeNumber = Field(
        0.0, description="E[ETTR]: q, queue wait after an interruption"
    )
    ettr_curve_minutes: tuple[PositiveNumber, ...] = Field(
        (2, 5, 10, 15, 30, 60, 120), min_length=1, description="checkpoint intervals of the E[ETTR] curves"
    )
    ettr_min_run_hours: NonNegativeNumber = Field(
        24.0, description="job runs shorter than this are left out of the ETTR summary"
    )
    # The paper's measured ETTR (its Fig. 9) is of runs at the highest priority: empty selects the
    # QOS of the month's largest job runs (decided in the dbt DAG, fct_job_run_histories)
    ettr_priority_qos: str = Field(
        "", description="ETTR: QOS of the highest-priority runs (empty: that of the largest)"
    )
    ettr_priority_partition: str = Field("", description="ETTR: ... or their partition (empty: any)")
    ettr_model_min_gpus: NonNegativeInt = Field(
        64, description="E[ETTR] is compared with runs of at least this many GPUs (smaller ones diverge)"
    )
    lost_work_cap_minutes: NonNegativeNumber = Field(
        30.0, description="lost goodput: min(runtime, cap) x GPUs per infrastructure failure"
    )
    trailing_months: tuple[PositiveInt, ...] = Field(
        (3, 6, 12), description="trailing windows (months) for r_f and its trend"
    )
    breakdown_top: PositiveInt = Field(
        10, description="breakdowns: accounts and partitions shown, most lost GPU-hours first"
    )
    # Lemon nodes (docs/methodology.md): signals over a trailing window ending at the month's end
    lemon_window_days: PositiveInt = Field(28, description="lemon nodes: signals over this many days before month end")
    lemon_repeat_failures: PositiveInt = Field(
        2, description="repeat offender: at least this many failure incidents naming the node ..."
    )
    lemon_repeat_days: PositiveInt = Field(14, description="... within this many days")
    lemon_min_incidents: PositiveInt = Field(3, description="outlier: at least this many hours with a critical event")
    lemon_p_value: Probability = Field(
        0.001, description="either rule: more than the fleet's bulk explains at this p (a quarter: 1e-4)"
    )
    # A repeat offender with a few faults a month never stands out in one month: the rules are also
    # evaluated over a trailing window (the months built, if fewer), at the p that keeps a healthy
    # node's chance of being listed by either window under 2 x (0.001 + 0.004) = 1% a month
    # (docs/methodology.md "Lemon nodes")
    lemon_trailing_days: NonNegativeInt = Field(
        92, description="lemon nodes: also over this many days before month end (0: off)"
    )
    lemon_trailing_p_value: Probability = Field(
        0.004, description="... at this p (a healthy node listed under 2 x (0.001 + 0.004) = 1% a month)"
    )

    @model_validator(mode="after")
    def _repeat_window_inside_lemon_window(self) -> AnalysisConfig:
        for key in ("lemon_window_days", "lemon_trailing_days"):
            if 0 < getattr(self, key) < self.lemon_repeat_days:
                raise ValueError(
                    f"lemon_repeat_days ({self.lemon_repeat_days}) must not exceed {key} ({getattr(self, key)})"
                )
        return self


@checked_dataclass(frozen=True, config=ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True))
class EmailConfig:
    """[email]: who gets the report and the failure alerts, and the SMTP server that sends them.

    Credentials never sit in the config: it names the environment variables (or the Prefect Secret
    block) that hold them. The file's key is `from`; the attribute is `sender`.
    """

    sender: Annotated[str, Strict(), AfterValidator(_header_safe)] = Field(
        "", alias="from", description="the sender's address"
    )
    to: tuple[EmailAddress, ...] = Field((), description="the report's recipients")
    alert_to: tuple[EmailAddress, ...] = Field((), description="failure alerts (default: to)")
    smtp_host: HostName = Field("", description="the SMTP server")
    smtp_port: Annotated[int, Strict(), Field(ge=0, le=65535)] = Field(
        0, description="0: the default port of smtp_security"
    )
    smtp_security: Literal["starttls", "ssl", "plain"] = Field(
        "starttls", description="starttls (port 587), ssl (465) or plain (25; no login over it)"
    )
    smtp_username_env: EnvVarName = Field("", description="environment variable holding the login's user name")
    smtp_password_env: EnvVarName = Field("", description="environment variable holding the password")
    smtp_password_secret: BlockName = Field("", description="or the name of a Prefect Secret block with the password")
    smtp_ca_file: Annotated[str, Strict()] = Field("", description="CA bundle of a private CA (default: the system's)")
    smtp_timeout_seconds: PositiveNumber = Field(60.0, description="SMTP connection and command timeout")
    send_attempts: PositiveInt = Field(6, description="temporary errors (4xx, refused, timeout) are retried ...")
    retry_wait_seconds: NonNegativeNumber = Field(30.0, description="... after 30 s, 60 s, 120 s, ... (at most 10 min)")

    @model_validator(mode="after")
    def _consistent(self) -> EmailConfig:
        recipients = self.to + self.alert_to
        if recipients and "@" not in parseaddr(self.sender)[1]:
            raise ValueError('from must be the sender\'s address, e.g. "Reliability <reports@example.org>"')
        if recipients and not self.smtp_host:
            raise ValueError(f"smtp_host is required to send to {', '.join(recipients)}")
        if self.smtp_password_env and self.smtp_password_secret:
            raise ValueError("give smtp_password_env or smtp_password_secret, not both")
        if bool(self.smtp_username_env) != bool(self.smtp_password_env or self.smtp_password_secret):
            raise ValueError("a login needs smtp_username_env and a password (env or secret)")
        if self.smtp_username_env and self.smtp_security == "plain":
            raise ValueError("no login over an unencrypted connection; use starttls or ssl")
        return self

    @property
    def port(self) -> int:
        return self.smtp_port or SMTP_SECURITY[self.smtp_security]

    @property
    def alert_recipients(self) -> tuple[str, ...]:
        return self.alert_to or self.to  # nobody left out of a failure by default


def _web_url(url: str) -> str:
    if url and (not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url)):
        raise ValueError("must be an http:// or https:// URL")
    return url


WebUrl = Annotated[str, Strict(), AfterValidator(_web_url)]


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class WebhookConfig:
    """[webhook]: a chat channel (Slack, Mattermost, Rocket.Chat, ... incoming webhooks) told of each
    month's figures once, like the email. The URL is a secret: give the environment variable holding it."""

    url_env: EnvVarName = Field("", description="environment variable holding the webhook's URL")
    url: WebUrl = Field("", description="or the URL itself (a test server; a real one is a secret)")
    report_url: Annotated[WebUrl, _placeholders("month", "cluster")] = Field(
        "", description="where readers open the report, {cluster} and {month} filled in (default: its path)"
    )
    timeout_seconds: PositiveNumber = Field(30.0, description="HTTP timeout of one attempt")
    send_attempts: PositiveInt = Field(4, description="a refused connection, timeout, 429 or 5xx is retried ...")
    retry_wait_seconds: NonNegativeNumber = Field(10.0, description="... after 10 s, 20 s, 40 s, ... (at most 10 min)")

    @model_validator(mode="after")
    def _one_url(self) -> WebhookConfig:
        if bool(self.url_env) == bool(self.url):
            raise ValueError("give url_env (the environment variable holding the URL) or url, one of them")
        return self


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class PrometheusConfig:
    """[prometheus]: a Pushgateway that gets each delivered month's figures once (flows/delivery/pushgateway.py)."""

    pushgateway_url: WebUrl = Field("", description="the Pushgateway, e.g. http://pushgateway:9091 (empty: no push)")
    job: Annotated[
        str, Strict(), _matching(r"[A-Za-z_][A-Za-z0-9_]*", "a Prometheus job name (letters, digits, '_')")
    ] = Field("reliability_report", description="the job label of the pushed group (grouping key: job and cluster)")
    timeout_seconds: PositiveNumber = Field(30.0, description="HTTP timeout of one attempt")
    send_attempts: PositiveInt = Field(4, description="a refused connection, timeout or 5xx is retried ...")
    retry_wait_seconds: NonNegativeNumber = Field(10.0, description="... after 10 s, 20 s, 40 s, ... (at most 10 min)")


class ConfigFile(BaseModel):
    """The file as written; load_config turns it into a ClusterConfig."""

    model_config = SECTION
    cluster: ClusterName = Field(description="the cluster's name: letters, digits, '-', '_' and '.'")
    site_timezone: TimeZoneName = Field(
        "UTC", description="the zone of log times without an offset (DST-ambiguous ones are counted)"
    )
    sources: list[Source] = Field(min_length=1)
    paths: PathsSection = Field(default_factory=PathsSection)
    analysis: AnalysisConfig = Field(default_factory=AnalysisConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    warehouse: WarehouseConfig = Field(default_factory=WarehouseConfig)
    email: EmailConfig | None = None
    webhook: WebhookConfig | None = None
    prometheus: PrometheusConfig | None = None

    @model_validator(mode="after")
    def _one_source_per_input(self) -> ConfigFile:
        inputs = [FORMATS[s.kind].input for s in self.sources]
        if "sacct_psv" not in inputs:
            kinds = ", ".join(JOB_RECORD_SOURCES[:-1]) + f" or {JOB_RECORD_SOURCES[-1]}"
            raise ValueError(f"a {kinds} source (the job records) is required")
        twice = [
            f"[[sources]] #{n} ({s.kind})"
            for n, (s, i) in enumerate(zip(self.sources, inputs, strict=True), 1)
            if inputs.count(i) > 1
        ]
        if twice:
            raise ValueError(f"each kind of input may come from one source only, not from {' and '.join(twice)}")
        return self


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
    warehouse: WarehouseConfig = field(default_factory=WarehouseConfig)
    email: EmailConfig | None = None  # None: reports are archived only, failures only logged
    webhook: WebhookConfig | None = None
    prometheus: PrometheusConfig | None = None  # None or no pushgateway_url: nothing pushed

    def source_paths(self, month: Month) -> dict[str, Path]:
        """The file sources' paths for `month` (command sources are pulled by the landing)."""
        base = self.config_path.parent
        return {s.kind: s.resolve(base, self.cluster, month) for s in self.sources if s.kind in FILE_KINDS}

    def command_sources(self) -> list[SourceConfig]:
        return [s for s in self.sources if s.kind in COMMAND_KINDS]

    def report_dir(self, month: Month) -> Path:
        return self.reports_dir / self.cluster / str(month)

    def landed_dir(self, month: Month) -> Path:
        """Where the month's records are landed (Parquet and manifest.json), and kept for rebuilds."""
        return self.data_dir / "landed" / self.cluster / str(month)

    def raw_dir(self, month: Month) -> Path:
        """Where the month's inputs are copied as they were pulled."""
        return self.data_dir / "raw" / self.cluster / str(month)


def load_config(path: str | Path) -> ClusterConfig:
    shown = str(path)  # as the user gave it, in every message
    path = Path(path).resolve()
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{shown}: config file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: invalid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:  # a directory, no permission, not text
        raise ConfigError(f"{shown}: cannot read the config: {exc}") from None
    try:
        # by_name=False: the file says `from`, never `sender`
        parsed = ConfigFile.model_validate(raw, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise ConfigError("\n".join(f"{shown}: {problem}" for problem in describe_errors(exc, raw))) from None

    base = path.parent

    def output_path(template: str) -> Path:
        return (base / _fill(template, cluster=parsed.cluster)).resolve()

    email = parsed.email
    if email is not None and email.smtp_ca_file:
        email = replace(email, smtp_ca_file=str((base / email.smtp_ca_file).resolve()))
    return ClusterConfig(
        cluster=parsed.cluster,
        config_path=path,
        sources=tuple(
            SourceConfig(s.kind, command=s.command, attempts=s.attempts, retry_wait_seconds=s.retry_wait_seconds)
            if isinstance(s, CommandSource)
            else SourceConfig(s.kind, s.path)
            for s in parsed.sources
        ),
        data_dir=output_path(parsed.paths.data),
        reports_dir=output_path(parsed.paths.reports),
        warehouse_path=output_path(parsed.paths.warehouse),
        site_timezone=parsed.site_timezone,
        analysis=parsed.analysis,
        ingest=parsed.ingest,
        warehouse=parsed.warehouse,
        email=email if email is not None and (email.to or email.alert_to) else None,
        webhook=parsed.webhook,
        prometheus=parsed.prometheus,
    )


# ---- pydantic's errors as one line per problem, in the file's terms ----------------------------------------------

SECTIONS: dict[str, type] = {
    "paths": PathsSection,
    "analysis": AnalysisConfig,
    "ingest": IngestConfig,
    "warehouse": WarehouseConfig,
    "email": EmailConfig,
    "webhook": WebhookConfig,
    "prometheus": PrometheusConfig,
}
EXTRA_KEY = ("extra_forbidden", "unexpected_keyword_argument")
MISSING = ("missing", "missing_keyword_argument", "missing_argument")
PLAIN_MESSAGES = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "string_type": "must be a string (in quotes)",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "dict_type": "must be a table",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "dataclass_type": "must be a table",
    "string_too_short": "must not be empty",
}


def _keys(model: type) -> list[str]:
    return [info.alias or name for name, info in model.__pydantic_fields__.items()]


def _source_model(kind: object) -> type:
    return CommandSource if kind in COMMAND_KINDS else FileSource


def _home_of(key: str) -> str | None:
    """Where a known key belongs: '' for the top level, '[analysis]', ..."""
    if key in _keys(ConfigFile):
        return ""
    return next((f"[{name}]" for name, model in SECTIONS.items() if key in _keys(model)), None)


def describe_errors(exc: ValidationError, raw: dict[str, Any]) -> list[str]:
    """One line per problem: the section, the key and what is wrong, never pydantic's own wording or URLs."""
    errors = exc.errors(include_url=False)
    lines: list[str] = []
    suggested: set[tuple] = set()  # (section loc, key) an unknown key was taken for: not reported missing too
    for error in errors:
        if error["type"] in EXTRA_KEY:
            where, key, model = _locate(error["loc"], raw)
            near = difflib.get_close_matches(key, _keys(model), n=1)
            lines.append(where + _unknown_key(key, near, where, model))
            if near:
                suggested.add((error["loc"][:-1], near[0]))
    for error in errors:
        loc, kind = error["loc"], error["type"]
        if kind in EXTRA_KEY or (kind in MISSING and (loc[:-1], loc[-1]) in suggested):
            continue
        if kind in ("union_tag_invalid", "union_tag_not_found"):  # a source's kind
            tag = error["input"].get("kind")
            near = difflib.get_close_matches(str(tag), SOURCE_KINDS, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else f" (one of {', '.join(SOURCE_KINDS)})"
            problem = "kind is required" if tag is None else f"kind {tag!r} is not a source kind{hint}"
            lines.append(f"[[sources]] #{loc[1] + 1}: {problem}")
            continue
        where, key, _ = _locate(loc, raw)
        message = _message(error)
        if kind == "value_error" and len(loc) == 1 and loc[0] in SECTIONS:  # a rule across the section's keys
            where, key = f"[{loc[0]}] ", ""
        lines.append(where + (f"{key} {message}" if key else message))
    return list(dict.fromkeys(lines))


def _unknown_key(key: str, near: list[str], where: str, model: type) -> str:
    if key in CREDENTIAL_KEYS and model is EmailConfig:
        return (
            f"{key!r}: credentials never go in the config; name the environment variables that hold them "
            "(smtp_username_env, smtp_password_env) or a Prefect Secret block (smtp_password_secret)"
        )
    home = _home_of(key)
    if home is not None and home != where.rstrip(": "):
        # a TOML key below a [section] header belongs to that section: the usual way to misplace one
        place = "at the top, before the first [section]" if home == "" else f"in {home}"
        return f"unknown key {key!r} here (it belongs {place})"
    if near:
        return f"unknown key {key!r} (did you mean {near[0]!r}?)"
    return f"unknown key {key!r} (known: {', '.join(_keys(model))})"


def _locate(loc: tuple, raw: dict[str, Any]) -> tuple[str, str, type]:
    """The section label ('' at the top level), the key path inside it, and the section's model."""
    if len(loc) > 1 and loc[0] in SECTIONS:
        where, rest, model = f"[{loc[0]}] ", loc[1:], SECTIONS[loc[0]]
    elif loc[:1] == ("sources",) and len(loc) > 1:
        entry = raw["sources"][loc[1]]
        kind = entry.get("kind") if isinstance(entry, dict) else None
        rest, model = loc[2:], _source_model(kind)
        if rest and rest[0] == kind:  # the discriminator's tag, not a key
            rest = rest[1:]
        where = f"[[sources]] #{loc[1] + 1}" + (f' (kind "{kind}"): ' if isinstance(kind, str) else ": ")
    else:
        where, rest, model = "", loc, ConfigFile
    key = "".join(f" #{part + 1}" if isinstance(part, int) else f".{part}" for part in rest).lstrip(".")
    return where, key, model


def _message(error: dict[str, Any]) -> str:
    kind, value = error["type"], error.get("input")
    if kind in MISSING:
        return "is required"
    if kind == "value_error":
        message = str(error["ctx"]["error"])
    elif kind == "literal_error":
        message = f"must be one of {error['ctx']['expected']}"
    elif kind == "too_short":
        message = f"must have at least {error['ctx']['min_length']} item"
    else:
        message = PLAIN_MESSAGES.get(kind) or error["msg"].replace("Input should be", "must be")
    if isinstance(value, str | int | float | bool):
        message += f", got {value!r}"
    return message


# ---- `reliability-report check --month`: the month's inputs are there and their headers read ------------------


def source_problems(config: ClusterConfig, month: Month) -> list[str]:
    """What stops `month` from landing before any work: missing files or directories, headers the readers
    reject, commands not on PATH, a missing CA file. Reads only the first line of each file."""
    import shutil

    from flows.ingest.sources.errors import InputFormatError

    problems = []
    for kind, path in config.source_paths(month).items():
        if problem := input_problem(path, kind in DIRECTORY_KINDS):
            problems.append(f"source {kind}: {problem}")
            continue
        try:
            if kind not in DIRECTORY_KINDS:
                _check_header(kind, path, config.site_timezone)
        except InputFormatError as error:
            problems.append(f"source {kind}: {error}")
        except (OSError, EOFError) as error:  # unreadable, or a broken .gz
            problems.append(f"source {kind}: {path}: {error}")
    for live in config.command_sources():
        if shutil.which(live.command[0]) is None:
            problems.append(f"source {live.kind}: command {live.command[0]!r} is not on PATH")
    if config.email is not None and config.email.smtp_ca_file and not Path(config.email.smtp_ca_file).is_file():
        problems.append(f"[email] smtp_ca_file {config.email.smtp_ca_file} does not exist")
    return problems


# The Spark engine's packages (requirements-spark.lock.txt), not installed by `make setup`
SPARK_MODULES = {"pyspark": "pyspark", "dbt.adapters.spark": "dbt-spark"}


def check_can_run(config: ClusterConfig) -> None:
    """A ConfigError naming each thing a run of `config` lacks, before any work: a [paths] entry it
    cannot write to (a file where a directory goes, or the reverse for the warehouse, or a file on
    the way to one), and the Spark engine's packages when [warehouse] engine is "spark". Touches nothing."""
    import importlib.util

    problems = []
    if config.warehouse.engine == "spark":
        missing = [package for module, package in SPARK_MODULES.items() if importlib.util.find_spec(module) is None]
        if missing:
            problems.append(
                f'[warehouse] engine = "spark" needs {" and ".join(missing)}, which this installation lacks: '
                "install the Spark extras (`make setup-spark` in a checkout, or "
                '`uv pip install -r requirements-spark.lock.txt`; Java 17 too), or set engine = "duckdb"'
            )
    for key, path, directory in (
        ("data", config.data_dir, True),
        ("reports", config.reports_dir, True),
        ("warehouse", config.warehouse_path, config.warehouse.engine == "spark"),  # Spark: its local directory
    ):
        existing = next(p for p in (path, *path.parents) if p.exists() or p.is_symlink())
        if existing == path and path.is_dir() != directory:
            kind = "directory" if path.is_dir() else "file"
            problems.append(f"[paths] {key}: {path} is a {kind}, not a {'directory' if directory else 'file'}")
        elif existing != path and not existing.is_dir():
            problems.append(f"[paths] {key}: {path} cannot be made: {existing} is not a directory")
    if problems:
        raise ConfigError("\n".join(f"{config.config_path}: {problem}" for problem in problems))


def input_problem(path: Path, directory: bool) -> str | None:
    """Why the input `path` cannot be read as a file (or a directory), or None: it does not exist,
    is a directory where a file is read (or the reverse), a symlink loop, unreadable, or (a
    directory) holds an entry that is no file or directory."""
    import os
    import stat

    try:
        mode = path.stat().st_mode
        if directory and not stat.S_ISDIR(mode):
            return f"{path} is a file, not a directory"
        if not directory and stat.S_ISDIR(mode):
            return f"{path} is a directory, not a file"
        if not (directory or stat.S_ISREG(mode)):
            return f"{path} is not a regular file"  # a FIFO or device would block or never end
        os.close(os.open(path, os.O_RDONLY))  # a directory opens read-only too
        if directory:  # the readers and the raw copy would pass over an entry that is no file unseen
            unreadable = (entry for entry in path.rglob("*") if not (entry.is_dir() or entry.is_file()))
            if entry := next(unreadable, None):
                return input_problem(entry, directory=False)
    except FileNotFoundError:
        return (
            f"{path} is a broken symlink" if path.is_symlink() else f"{'directory ' * directory}{path} does not exist"
        )
    except PermissionError:
        return f"{path} cannot be read: permission denied"
    except OSError as error:  # a symlink loop (ELOOP), a path through a file (ENOTDIR), ...
        return f"{path}: {error.strerror}"
    return None


def _check_header(kind: str, path: Path, site_timezone: str) -> None:
    """The file opens and reads (a broken .gz fails here), then the format's own header check."""
    from flows.ingest.sources.files import open_text

    with open_text(path) as handle:
        handle.read(4096)
    FORMATS[kind].check_header(path, site_timezone)


def config_summary(config: ClusterConfig) -> str:
    """A one-line summary of a config, for `check`."""
    kinds = ", ".join(s.kind for s in config.sources)
    email = config.email
    mail = f"email to {len(email.to)} + alerts to {len(email.alert_recipients)}" if email else "no email"
    hook = "; a webhook" if config.webhook else ""
    push = "; a Pushgateway" if config.prometheus and config.prometheus.pushgateway_url else ""
    return f"cluster {config.cluster}, sources: {kinds}; time zone {config.site_timezone}; {mail}{hook}{push}"


# ---- `reliability-report init`: a commented starter config with every key and its default ---------------------

# `init` lists the kinds by the input they give: each file kind, then the other ways to give the same.
SOURCE_EXAMPLES = {  # kind: (path or command, one line of explanation)
    f.kind: (list(f.example) if isinstance(f.example, tuple) else f.example, f.explanation)
    for given in dict.fromkeys(f.input for f in FORMATS.values())
    for f in FORMATS.values()
    if f.input == given
}
EMAIL_EXAMPLES = {
    "from": "Reliability reports <reliability@example.org>",
    "to": ("hpc-ops@example.org",),
    "smtp_host": "smtp.example.org",
}


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, date):
        return value.isoformat()  # a TOML local date
    return repr(value)


def _key_lines(
    model: type, values: dict[str, object] | None = None, prefix: str = "", keys: tuple[str, ...] | None = None
) -> list[str]:
    """`key = default  # description` for each key of a section (or the given keys)."""
    lines = []
    for name, info in model.__pydantic_fields__.items():
        key = info.alias or name
        if keys is not None and key not in keys:
            continue
        value = (values or {}).get(key, info.get_default(call_default_factory=True))
        lines.append(f"{prefix}{key} = {_toml_value(value)}".ljust(40) + f"  # {info.description}")
    return lines


def starter_config(cluster: str) -> str:
    """A config for `cluster` with every key, its default and what it means; load_config accepts it."""
    lines = [
        f"# Reliability report config of cluster {cluster} (reliability-report init). Relative paths are",
        "# relative to this file; {month} (YYYY-MM) and {cluster} are filled in, nothing else in braces.",
        "# Check it, and a month's inputs: reliability-report check --config <this file> --month YYYY-MM",
        "",
        *_key_lines(ConfigFile, {"cluster": cluster}, keys=("cluster", "site_timezone")),
        "",
        "# Sources: one [[sources]] table each; every kind of input from one source only.",
    ]
    for kind, (where, explanation) in SOURCE_EXAMPLES.items():
        on = "" if kind == "sacct_psv" else "# "
        key = "command" if kind in COMMAND_KINDS else "path"
        lines += ["", f"{on}[[sources]]".ljust(40) + f"  # {explanation}", f'{on}kind = "{kind}"']
        lines.append(f"{on}{key} = {_toml_value(where)}")
        if kind in COMMAND_KINDS:
            lines += _key_lines(CommandSource, prefix=on, keys=("attempts", "retry_wait_seconds"))
    for name, model in SECTIONS.items():
        if name == "email":
            lines += ["", "# [email]: without it (or without `to`) reports are archived only, failures only logged."]
            lines += ["# [email]", *_key_lines(model, EMAIL_EXAMPLES, prefix="# ")]
        elif name == "webhook":
            lines += ["", "# [webhook]: a chat channel's incoming webhook, told of each month's figures once."]
            lines += ["# [webhook]", *_key_lines(model, {"url_env": "REPORT_WEBHOOK_URL"}, prefix="# ")]
        elif name == "prometheus":
            lines += [
                "",
                "# [prometheus]: a Pushgateway told each delivered month's figures once (grouping key: cluster).",
            ]
            lines += ["# [prometheus]", *_key_lines(model, {"pushgateway_url": "http://pushgateway:9091"}, prefix="# ")]
        else:
            lines += ["", f"[{name}]", *_key_lines(model)]
    text = "\n".join(lines) + "\n"
    try:
        ConfigFile.model_validate(tomllib.loads(text), by_alias=True, by_name=False)
    except ValidationError as exc:
        raise ConfigError("\n".join(f"init: {p}" for p in describe_errors(exc, tomllib.loads(text)))) from None
    return text
