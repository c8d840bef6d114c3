"""Cluster configuration (TOML), as a typed schema: where the month's logs come from and where results go.

Relative paths resolve against the directory of the config file, and `{month}` / `{cluster}` in a
source path (`{cluster}` in [paths]) are replaced with the report month and cluster name; nothing
else in braces is allowed, and nothing is ever evaluated (str.replace, never str.format).

Every key is checked for type and range: pydantic models with `extra="forbid"`, strict types
(`gpus_per_node = "eight"` is an error, not coerced; the types are flows/core/config_types.py).
AnalysisConfig, IngestConfig and EmailConfig are (pydantic) dataclasses, so `AnalysisConfig()`
gives the defaults and `dataclasses.replace` works as before. The [[sources]] tables are
flows/ingest/sources/source_config.py's. Reading a file into a ClusterConfig, and a failed check's wording
(file, key, what to do), are flows/config/file.py's.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from datetime import date
from email.utils import parseaddr
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ByteSize, ConfigDict, Field, Strict, model_validator
from pydantic.dataclasses import dataclass as checked_dataclass

from flows.core.config_types import (
    BlockName,
    ClusterName,
    EmailAddress,
    EnvVarName,
    HeaderText,
    HostName,
    NonNegativeInt,
    NonNegativeNumber,
    OutputPath,
    Port,
    PositiveInt,
    PositiveNumber,
    Probability,
    PrometheusJobName,
    ReportUrl,
    Share,
    SparkSchemaName,
    TimeZoneName,
    WebUrl,
)
from flows.core.months import Month
from flows.ingest.sources import clock, limits
from flows.ingest.sources.registry import FILE_KINDS, JOB_RECORD_SOURCES, PULLED_KINDS, URL_SETTINGS, given_input
from flows.ingest.sources.source_config import CommandSource, FileSource, SourceConfig

SMTP_SECURITY = {"starttls": 587, "ssl": 465, "plain": 25}  # with the default port of each


# ---- the sections ---------------------------------------------------------------------------------------------

SECTION = ConfigDict(extra="forbid", frozen=True)
DATACLASS_SECTION = ConfigDict(extra="forbid")  # frozen is the dataclass decorator's


Source = Annotated[Union[FileSource, CommandSource, *URL_SETTINGS.values()], Field(discriminator="kind")]  # noqa: UP007


class PathsSection(BaseModel):
    model_config = SECTION
    data: OutputPath = Field("data", description="raw copies and normalised Parquet, per cluster and month")
    reports: OutputPath = Field("reports", description="reports/<cluster>/<month>/report.html + metrics.json")
    warehouse: OutputPath = Field("warehouse/{cluster}.duckdb", description="the DuckDB warehouse dbt builds")
    archive_url: WebUrl = Field(
        "", description="where readers open the reports directory (https://.../reports/): the email links its pages"
    )
    archive_attempt_min_gpus: PositiveInt = Field(
        128, description="the archive explains every infrastructure failure of an attempt of this many GPUs or more"
    )


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class IngestConfig:
    # A source may have up to max(max_bad_rows, max_bad_row_share x its rows) unreadable rows; they are
    # quarantined and reported. More than that fails the run. The job records may have as many attempts
    # whose records conflict (flows/ingest/sources/job_records.py), counted and reported.
    max_bad_rows: NonNegativeInt = Field(10, description="unreadable rows a source may have (quarantined) ...")
    max_bad_row_share: Share = Field(0.001, description="... or this share of its rows, whichever is more")
    earliest_record: date = Field(clock.EARLIEST_RECORD, description="a record dated before this day is quarantined")
    max_host_list_nodes: PositiveInt = Field(limits.MAX_HOST_LIST_NODES, description="a host list of more: quarantined")

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
    spark_schema: SparkSchemaName = Field(
        "", description="Spark: the schema of the cluster's marts (empty: reliability_<cluster>)"
    )
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
    # What a figure needs to be shown (flows/figures/measured.py; docs/configuration.md says why these
    # defaults): at zero failures over 100 GPU node-days r_f's 95% upper bound is 36.9 per 1000
    # node-days, ~5x the paper's fleet rates; below that a month without failures bounds nothing useful
    min_gpu_node_days: NonNegativeNumber = Field(
        100.0, description="r_f, MTTF by size, ETTR, lost goodput and breakdowns need this many GPU node-days"
    )
    lemon_min_infra_failures: NonNegativeInt = Field(
        10, description="lemon nodes without a node-event or health source need this many infrastructure failures"
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

    sender: HeaderText = Field("", alias="from", description="the sender's address")
    to: tuple[EmailAddress, ...] = Field((), description="the report's recipients")
    alert_to: tuple[EmailAddress, ...] = Field((), description="failure alerts (default: to)")
    smtp_host: HostName = Field("", description="the SMTP server")
    smtp_port: Port = Field(0, description="0: the default port of smtp_security")
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


@checked_dataclass(frozen=True, config=DATACLASS_SECTION)
class WebhookConfig:
    """[webhook]: a chat channel (Slack, Mattermost, Rocket.Chat, ... incoming webhooks) told of each
    month's figures once, like the email. The URL is a secret: give the environment variable holding it."""

    url_env: EnvVarName = Field("", description="environment variable holding the webhook's URL")
    url: WebUrl = Field("", description="or the URL itself (a test server; a real one is a secret)")
    report_url: ReportUrl = Field(
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
    job: PrometheusJobName = Field(
        "reliability_report", description="the job label of the pushed group (grouping key: job and cluster)"
    )
    timeout_seconds: PositiveNumber = Field(30.0, description="HTTP timeout of one attempt")
    send_attempts: PositiveInt = Field(4, description="a refused connection, timeout or 5xx is retried ...")
    retry_wait_seconds: NonNegativeNumber = Field(10.0, description="... after 10 s, 20 s, 40 s, ... (at most 10 min)")


class ConfigFile(BaseModel):
    """The file as written; flows/config/file.py `load_config` turns it into a ClusterConfig."""

    model_config = SECTION
    cluster: ClusterName = Field(description="the cluster's name: letters, digits, '-', '_' and '.'")
    site_timezone: TimeZoneName = Field(
        "UTC", description="the zone of log times without an offset (a source's `timezone` overrides it)"
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
        inputs = [given_input(s.kind) for s in self.sources]
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
    archive_url: str = ""  # [paths] archive_url: the reports directory's URL ("": links are not given)
    archive_attempt_min_gpus: int = 128
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

    def source_of(self, kind: str) -> SourceConfig:
        """The configured source of `kind`'s input (`kind`: a configured kind, or the kind a pull
        or another format provides: each input comes from one source)."""
        return next(s for s in self.sources if given_input(s.kind) == given_input(kind))

    def timezone_of(self, kind: str) -> str:
        """The zone of `kind`'s times without an offset: a pull's are UTC, a file's its `timezone`,
        else `site_timezone`."""
        source = self.source_of(kind)
        return "UTC" if source.kind in PULLED_KINDS else source.timezone or self.site_timezone

    def live_sources(self, kinds: Container[str] = PULLED_KINDS) -> list[SourceConfig]:
        """The sources the landing pulls now (of `kinds`): commands it runs, servers it queries."""
        return [s for s in self.sources if s.kind in kinds]

    def report_dir(self, month: Month) -> Path:
        return self.reports_dir / self.cluster / str(month)

    def landed_dir(self, month: Month) -> Path:
        """Where the month's records are landed (Parquet and manifest.json), and kept for rebuilds."""
        return self.data_dir / "landed" / self.cluster / str(month)

    def raw_dir(self, month: Month) -> Path:
        """Where the month's inputs are copied as they were pulled."""
        return self.data_dir / "raw" / self.cluster / str(month)
