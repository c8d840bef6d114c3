"""Fact tables exported as Parquet and CSV with a Croissant description (flows/report/exports.py)."""

import csv
import hashlib
import json
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import mlcroissant as mlc
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.report.exports import CROISSANT_FILE, neutralise_formulas, write_exports

PUBLISHED = date(2026, 11, 1)

# the shapes of the report's tables: text (some hostile), times, days, counts, rates, flags, nulls
FAILURES = pa.table(
    {
        "attempt_id": ["a1", "a2", "a3", "a4"],
        "user_name": ['=HYPERLINK("http://x","y")', "+1", "-2+3", "alice"],
        "job_name": ["@SUM(A1)", "\tcmd", "\r=1", None],
        "failed_at": pa.array([datetime(2026, 10, d, 3, 4, 5) for d in (1, 2, 3, 4)], pa.timestamp("us")),
        "day": pa.array([date(2026, 10, d) for d in (1, 2, 3, 4)], pa.date32()),
        "gpus": pa.array([8, -1, 0, None], pa.int64()),
        "gpu_hours": [1.5, -0.25, None, 3.0],
        "is_open": [True, False, None, True],
    }
)


def test_csv_cells_a_spreadsheet_would_run_are_neutralised():
    out = neutralise_formulas(FAILURES)
    assert out.column("user_name").to_pylist() == ['\'=HYPERLINK("http://x","y")', "'+1", "'-2+3", "alice"]
    assert out.column("job_name").to_pylist() == ["'@SUM(A1)", "'\tcmd", "'\r=1", None]
    # numbers (negative ones too), times and flags are not text: unchanged, as are plain names and nulls
    for name in ("attempt_id", "failed_at", "day", "gpus", "gpu_hours", "is_open"):
        assert out.column(name).equals(FAILURES.column(name)), name
    assert out.schema == FAILURES.schema


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exports")
    write_exports({"failures": FAILURES, "job_runs_ettr": pa.table({})}, out, "c1 2026-10", "facts", PUBLISHED)
    return out


def test_croissant_describes_every_file_with_its_checksum_and_validates(exported):
    """`mlcroissant validate` accepts the file; every file written is in it with its SHA-256 and
    size, and every column of each table with its type."""
    validate = Path(sys.executable).with_name("mlcroissant")
    done = subprocess.run(
        [str(validate), "validate", "--jsonld", str(exported / CROISSANT_FILE)], capture_output=True, text=True
    )
    assert done.returncode == 0 and "error" not in done.stderr.lower(), done.stderr
    described = json.loads((exported / CROISSANT_FILE).read_text())
    files = {f["name"]: f for f in described["distribution"]}
    written = {p.name for p in exported.iterdir()} - {CROISSANT_FILE}
    assert set(files) == written == {"failures.parquet", "failures.csv", "job_runs_ettr.parquet", "job_runs_ettr.csv"}
    for name, entry in files.items():
        data = (exported / name).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["contentSize"] == f"{len(data)} B"
    (failures,) = [r for r in described["recordSet"] if r["name"] == "failures"]
    types = {f["name"]: f["dataType"] for f in failures["field"]}
    assert types == {
        "attempt_id": "sc:Text",
        "user_name": "sc:Text",
        "job_name": "sc:Text",
        "failed_at": "sc:DateTime",
        "day": "sc:Date",
        "gpus": "sc:Integer",
        "gpu_hours": "sc:Float",
        "is_open": "sc:Boolean",
    }
    assert described["datePublished"].startswith(PUBLISHED.isoformat())


def test_the_described_records_are_the_tables(exported):
    """A Croissant reader gets the Parquet rows back; the CSV holds the same rows, text neutralised."""
    records = list(mlc.Dataset(jsonld=exported / CROISSANT_FILE).records("failures"))
    assert [r["failures/attempt_id"].decode() for r in records] == FAILURES.column("attempt_id").to_pylist()
    assert [r["failures/gpus"] for r in records][:3] == [8, -1, 0]
    assert pq.read_table(exported / "failures.parquet").equals(FAILURES)
    with open(exported / "failures.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["user_name"] for r in rows] == neutralise_formulas(FAILURES).column("user_name").to_pylist()
    assert [r["gpus"] for r in rows] == ["8", "-1", "0", ""]


def test_the_same_tables_give_the_same_bytes(exported, tmp_path):
    write_exports({"failures": FAILURES, "job_runs_ettr": pa.table({})}, tmp_path, "c1 2026-10", "facts", PUBLISHED)
    for path in exported.iterdir():
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
