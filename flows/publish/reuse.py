"""A month's report copied rather than drawn again, when it would be the same bytes.

A report directory is a function of the month's document (flows/figures/read.py `month_document`), its
tables and the code that renders them. A month refreshed because an earlier month was built (a
re-run of an old month refreshes every later one) mostly has the figures and rows it had: its
charts, pages and exports are then copied from the report in place instead of drawn again.

What proves it the same: the record a run writes once its report is in place (`data/rendered/
<cluster>/<month>.json`: the renderer's fingerprint and each file's digest), the report in place
still holding exactly those files (report.html less the archive's links, which refresh_archive
fills in afterwards), its metrics.json the text the new figures give, and each table's Parquet
the bytes the new rows give. The renderer's fingerprint covers this package's code, the templates
and the versions of the libraries that draw and write: any change to them draws again.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
from importlib.metadata import version
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from flows import TEMPLATES_DIR
from flows.config.cluster import ClusterConfig
from flows.core.months import Month
from flows.figures.document import document_text
from flows.figures.read import month_document
from flows.publish.archive import without_nav

# the libraries whose version changes a report's bytes (charts, pages, metrics.json, exports)
RENDERING_LIBRARIES = ("matplotlib", "pillow", "numpy", "jinja2", "css-inline", "pydantic", "pyarrow", "mlcroissant")


@functools.cache
def renderer() -> str:
    """The fingerprint of what renders a report: this package's code, the templates, the libraries' versions."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(json.dumps([version(name) for name in RENDERING_LIBRARIES]).encode())
    for root, pattern in ((package, "*.py"), (TEMPLATES_DIR, "*")):
        for path in sorted(p for p in root.rglob(pattern) if p.is_file()):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def record_path(config: ClusterConfig, month: Month) -> Path:
    return config.data_dir / "rendered" / config.cluster / f"{month}.json"


def file_digests(report_dir: Path) -> dict[str, str]:
    """Each file of a report directory (relative path) -> its sha256; report.html's without the archive's links."""
    digests = {}
    for path in sorted(p for p in report_dir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "report.html" and path.parent == report_dir:
            data = without_nav(data.decode()).encode()
        digests[path.relative_to(report_dir).as_posix()] = hashlib.sha256(data).hexdigest()
    return digests


def record_rendered(config: ClusterConfig, month: Month) -> None:
    """Note that the month's report in place was rendered by this renderer (once it is in place)."""
    record = {"renderer": renderer(), "files": file_digests(config.report_dir(month))}
    path = record_path(config, month)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)  # as flows/report/exports.py writes it
    return out.getvalue()


def unchanged_report(config: ClusterConfig, month: Month, metrics: dict, tables: dict[str, pa.Table]) -> bool:
    """Whether the month's report in place is what rendering `metrics` (full) and `tables` would write."""
    previous = config.report_dir(month)
    try:
        record = json.loads(record_path(config, month).read_text())
        if record["renderer"] != renderer() or file_digests(previous) != record["files"]:
            return False
        text = document_text(month_document(metrics))
        if (previous / "metrics.json").read_text() != text:
            return False
        return all((previous / f"{name}.parquet").read_bytes() == _parquet(table) for name, table in tables.items())
    except (OSError, ValueError, KeyError, TypeError):  # no record or report, or a damaged one: draw it
        return False
