"""Render the monthly report (Jinja, autoescaped; templates only format) and write it with metrics.json."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from flows import TEMPLATES_DIR
from flows.atomic import replace_dir_atomically


def _num(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.0f}"


def _dec(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def _pct(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _duration(hours) -> str:
    if hours is None or (isinstance(hours, float) and (math.isnan(hours) or math.isinf(hours))):
        return "–"
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{hours / 24:.1f} d"


def environment(templates_dir: Path = TEMPLATES_DIR) -> Environment:
    env = Environment(
        loader=FileSystemLoader(templates_dir),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=_num, dec=_dec, pct=_pct, duration=_duration)
    return env


def render_report(context: dict) -> str:
    return environment().get_template("report.html.j2").render(**context)


def write_report(report_dir: Path, html: str, metrics: dict, tables: dict | None = None) -> dict[str, Path]:
    """Write report.html, metrics.json and the detail tables (`<name>.parquet`) together; a failure
    leaves the previous set untouched."""

    def fill(tmp: Path) -> None:
        (tmp / "report.html").write_text(html)
        (tmp / "metrics.json").write_text(json.dumps(metrics, indent=1, sort_keys=True, default=str) + "\n")
        for name, table in (tables or {}).items():
            pq.write_table(table, tmp / f"{name}.parquet")

    replace_dir_atomically(report_dir, fill)
    return {"report": report_dir / "report.html", "metrics": report_dir / "metrics.json"}
