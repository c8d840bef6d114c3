"""The settings of the sources that are servers (`url` kinds): the keys a `[[sources]]` table of
such a kind takes, checked as the config is loaded (flows/config/cluster.py builds the config's source
union from each url kind's declared `settings`, flows/ingest/sources/registry.py). Credentials are
never keys: only the names of the environment variables that hold them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, model_validator

from flows.core.config_types import (
    EnvVarName,
    HeaderText,
    NonNegativeNumber,
    PositiveInt,
    PositiveNumber,
    PrometheusLabelName,
    ServerUrl,
    SlurmApiVersion,
)
from flows.ingest.sources.node_names import NodeNameSteps

SECTION = ConfigDict(extra="forbid", frozen=True)  # as the config's other sections


class UrlSource(BaseModel):
    """A server the landing queries for the month (docs/sources.md): what every url kind takes."""

    model_config = SECTION
    url: ServerUrl = Field(description="the server's base URL, e.g. http://prometheus:9090")
    token_env: EnvVarName = Field("", description="environment variable holding a bearer token ('': none)")
    timeout_seconds: PositiveNumber = Field(30.0, description="each request's read timeout (connecting: at most 5 s)")
    attempts: PositiveInt = Field(
        4, description="a timeout, an answer broken off, 429 or 5xx is retried (a refused connection is not) ..."
    )
    retry_wait_seconds: NonNegativeNumber = Field(10.0, description="... after 10 s, 20 s, 40 s, ... (at most 10 min)")


class PrometheusDcgmSource(UrlSource):
    """NVIDIA dcgm-exporter's series in a Prometheus (flows/ingest/sources/prometheus_dcgm.py)."""

    kind: Literal["prometheus_dcgm"]
    username_env: EnvVarName = Field("", description="or basic auth: environment variables holding the user ...")
    password_env: EnvVarName = Field("", description="... and the password (both or neither)")
    host_label: PrometheusLabelName = Field("Hostname", description="the series' label naming the node")
    matchers: HeaderText = Field("", description='label matchers added to every selector, e.g. job="dcgm"')
    step_seconds: Annotated[int, Strict(), Field(ge=1, le=3600)] = Field(
        30, description="the query step: an event's time is known to within it"
    )
    chunk_hours: Annotated[int, Strict(), Field(ge=1, le=744)] = Field(24, description="hours each query covers")
    node_names: NodeNameSteps = Field(
        (), description="how host_label's values map to Slurm's names, e.g. \"strip_domain\""
    )

    @model_validator(mode="after")
    def _basic_auth_pairs(self) -> PrometheusDcgmSource:
        if bool(self.username_env) != bool(self.password_env):
            raise ValueError("give username_env and password_env together, or neither")
        if self.username_env and self.token_env:
            raise ValueError("give token_env or username_env and password_env, not both")
        return self


class SlurmrestdSource(UrlSource):
    """Slurm's REST API (slurmrestd) for the month's job records (flows/ingest/sources/slurmrestd.py)."""

    kind: Literal["slurmrestd"]
    token_env: EnvVarName = Field("SLURM_JWT", description="environment variable holding the JWT (scontrol token)")
    user_name: HeaderText = Field("", description="X-SLURM-USER-NAME ('': the user the token was minted for)")
    api_version: SlurmApiVersion = Field("", description="e.g. v0.0.38 ('': the newest the server offers)")
