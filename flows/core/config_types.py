"""The config's value types: strict (no "8" for 8, no true for 1), each with its range or pattern.

A check's message completes "<section> <key> ..." in a config error (flows/config/file.py).
"""

from __future__ import annotations

import difflib
import re
import zoneinfo
from email.utils import parseaddr
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, Strict


def fill_placeholders(template: str, **values: str) -> str:
    """`template` with each `{name}` replaced; a plain replace, so nothing in it is evaluated."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def _placeholders(*allowed: str) -> AfterValidator:
    names = " and ".join("{" + name + "}" for name in allowed)

    def check(template: str) -> str:
        stray = re.search(r"\{[^{}]*\}?|\}", fill_placeholders(template, **dict.fromkeys(allowed, "")))
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


def _web_url(url: str) -> str:
    if url and (not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url)):
        raise ValueError("must be an http:// or https:// URL")
    return url


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
Port = Annotated[int, Strict(), Field(ge=0, le=65535)]
HeaderText = Annotated[str, Strict(), AfterValidator(_header_safe)]  # goes in a mail header
CommandPart = Annotated[str, Strict(), Field(min_length=1)]
SparkSchemaName = Annotated[
    str, Strict(), _matching(r"([A-Za-z_][A-Za-z0-9_]*)?", "a Spark schema name: letters, digits and '_'")
]
PrometheusJobName = Annotated[
    str, Strict(), _matching(r"[A-Za-z_][A-Za-z0-9_]*", "a Prometheus job name (letters, digits, '_')")
]
WebUrl = Annotated[str, Strict(), AfterValidator(_web_url)]


def _no_credentials(url: str) -> str:
    if "@" in urlsplit(url).netloc:
        raise ValueError("must not carry credentials (user:password@): give them in the environment (token_env, ...)")
    return url


ServerUrl = Annotated[WebUrl, Field(min_length=1), AfterValidator(_no_credentials)]  # a server a source queries
PrometheusLabelName = Annotated[
    str, Strict(), _matching(r"[A-Za-z_][A-Za-z0-9_]*", "a Prometheus label name (letters, digits, '_')")
]
SlurmApiVersion = Annotated[str, Strict(), _matching(r"(v\d+\.\d+\.\d+)?", "a Slurm REST API version, e.g. v0.0.38")]
ReportUrl = Annotated[WebUrl, _placeholders("month", "cluster")]
