"""A config file read into a ClusterConfig (flows/config/cluster.py), and what the commands say about it.

Every key is checked when the file is loaded, before any work. Problems become one ConfigError
naming the file and the key path, one line each, an unknown key with the nearest known one (or
the section it belongs in); `init`'s starter config lists every key with its default.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from flows.config.cluster import (
    AnalysisConfig,
    ClusterConfig,
    ConfigFile,
    EmailConfig,
    IngestConfig,
    PathsSection,
    PrometheusConfig,
    WarehouseConfig,
    WebhookConfig,
)
from flows.core.config_types import fill_placeholders
from flows.core.errors import ConfigError
from flows.ingest.sources.registry import COMMAND_KINDS, SOURCE_KINDS, URL_SETTINGS, given_input
from flows.ingest.sources.source_config import CommandSource, FileSource, source_config

SOURCE_KIND_NAMES = tuple(SOURCE_KINDS)
CREDENTIAL_KEYS = {"password", "smtp_password", "username", "smtp_username", "user", "login"}


def load_config(path: str | Path) -> ClusterConfig:
    """The config file at `path`, every key checked, its paths resolved against its directory; a
    ConfigError naming the file and each problem, one line each."""
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
        return (base / fill_placeholders(template, cluster=parsed.cluster)).resolve()

    email = parsed.email
    if email is not None and email.smtp_ca_file:
        email = replace(email, smtp_ca_file=str((base / email.smtp_ca_file).resolve()))
    return ClusterConfig(
        cluster=parsed.cluster,
        config_path=path,
        sources=tuple(source_config(s) for s in parsed.sources),
        data_dir=output_path(parsed.paths.data),
        reports_dir=output_path(parsed.paths.reports),
        warehouse_path=output_path(parsed.paths.warehouse),
        archive_url=parsed.paths.archive_url,
        archive_attempt_min_gpus=parsed.paths.archive_attempt_min_gpus,
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
    if kind in URL_SETTINGS:
        return URL_SETTINGS[kind]
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
            near = difflib.get_close_matches(str(tag), SOURCE_KIND_NAMES, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else f" (one of {', '.join(SOURCE_KIND_NAMES)})"
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
    if key == "timezone" and model is not FileSource:  # a command's or a server's source
        return "timezone is a file source's: a pull's times are UTC (commands run with TZ=UTC, servers answer in UTC)"
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


# ---- `reliability-report init`: a commented starter config with every key and its default ---------------------

# `init` lists the kinds by the input they give: each file kind, then the other ways to give the same.
SOURCE_EXAMPLES = {  # kind: (path or command, one line of explanation)
    kind: (list(k.example) if isinstance(k.example, tuple) else k.example, k.explanation)
    for given in dict.fromkeys(map(given_input, SOURCE_KINDS))
    for kind, k in SOURCE_KINDS.items()
    if given_input(kind) == given
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
        key = "command" if kind in COMMAND_KINDS else "url" if kind in URL_SETTINGS else "path"
        lines += ["", f"{on}[[sources]]".ljust(40) + f"  # {explanation}", f'{on}kind = "{kind}"']
        lines.append(f"{on}{key} = {_toml_value(where)}")
        if kind == "sacct_xdmod":  # XDMoD's documented dump is `TZ=UTC sacct ...` (docs/sources.md)
            lines.append(f'{on}timezone = "UTC"'.ljust(40) + "  # its times' zone (default: site_timezone)")
        if kind in COMMAND_KINDS:
            lines += _key_lines(CommandSource, prefix=on, keys=("attempts", "retry_wait_seconds"))
        if kind in URL_SETTINGS:  # every key but kind and url, with its default
            model = URL_SETTINGS[kind]
            lines += _key_lines(model, prefix=on, keys=tuple(k for k in _keys(model) if k not in ("kind", "url")))
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
