"""Issue 42, item 2: a month with no job record (a typo of the month, a dump of other months) is
refused before any landing, build or email, with one line naming the month, the file and the span
its records cover; `check --month` counts the month's records; a backfill is refused whole, naming
each empty month; `--no-jobs-ran` builds the month and says so (flows/ingest/month_records.py)."""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import flows.commands
from flows.cli import main
from flows.config.file import load_config
from flows.core.errors import EXIT_INPUT
from flows.core.months import Month
from flows.edge import checked_month
from flows.ingest.land import land_month
from flows.ingest.month_records import NoJobRecordsError, count_month_records, landed_month_records
from flows.ingest.sources.registry import SOURCE_KINDS

DATA = Path(__file__).parent / "data"
XDMOD = DATA / "xdmod" / "accounting-logs.log"  # records 2015-06-26 .. 2016-08-01
SLURM = DATA / "slurm-22.05"  # records of 2026-11-22
EMPTY = Month.parse("2026-09")
HINT = "is the month right? (if no job ran that month, run again with --no-jobs-ran)"


def write_config(tmp_path: Path, source: str) -> Path:
    config = tmp_path / "c.toml"
    config.write_text(
        f'cluster = "ci"\n\n[[sources]]\n{source}\n\n'
        '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "ci.duckdb"\n'
    )
    return config


def gzipped(source: Path, target: Path) -> Path:
    with open(source, "rb") as reading, gzip.open(target, "wb") as writing:
        shutil.copyfileobj(reading, writing)
    return target


@pytest.fixture
def no_start_up(monkeypatch):
    """Prefect (and so any landing, build or delivery) must not start."""

    def never(*args, **kwargs):
        raise AssertionError("Prefect was started for a month without job records")

    monkeypatch.setattr(flows.commands, "start_api", never)


# each job-record kind: its file, and the span of its records
KINDS = {
    "sacct_psv": (SLURM / "sacct_fields_allocations.psv", "are all of 2026-11-22"),
    "sacct_xdmod": (XDMOD, "run 2015-06-26 to 2016-08-01"),
    "sacct_json": (SLURM / "sacct.json", "are all of 2026-11-22"),
    "sacct_psv.gz": (SLURM / "sacct_fields_allocations.psv", "are all of 2026-11-22"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_run_refuses_a_month_with_no_job_record_before_any_work(kind: str, tmp_path: Path, capsys, no_start_up):
    source, span = KINDS[kind]
    if kind.endswith(".gz"):
        path = gzipped(source, tmp_path / "dump.psv.gz")
    else:
        path = tmp_path / source.name
        shutil.copy(source, path)
    config = write_config(tmp_path, f'kind = "{kind.removesuffix(".gz")}"\npath = "{path.name}"')
    started = time.monotonic()
    assert main(["run", "--month", str(EMPTY), "--config", str(config)]) == EXIT_INPUT
    seconds = time.monotonic() - started
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [f"error: {EMPTY}: {path} has no job record in {EMPTY}; its records {span}: {HINT}"]
    assert seconds < 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["c.toml", path.name])  # no data/, reports/


def test_check_counts_the_months_records_and_refuses_a_month_with_none(tmp_path: Path, capsys):
    shutil.copy(XDMOD, tmp_path / "x.log")
    config = write_config(tmp_path, 'kind = "sacct_xdmod"\npath = "x.log"')
    assert main(["check", "--config", str(config), "--month", "2015-07"]) == 0
    out = capsys.readouterr().out
    assert (
        f"3 job records in 2015-07 (sacct_xdmod: {tmp_path / 'x.log'}; its records run 2015-06-26 to 2016-08-01)" in out
    )
    assert main(["check", "--config", str(config), "--month", "2016-08"]) == 0
    assert "1 job record in 2016-08 " in capsys.readouterr().out
    assert main(["check", "--config", str(config), "--month", str(EMPTY)]) == EXIT_INPUT
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {EMPTY}: {tmp_path / 'x.log'} has no job record in {EMPTY}; its records run ")
    assert "every input present and readable" not in line


def test_a_backfill_is_refused_whole_naming_each_empty_month(tmp_path: Path, capsys, no_start_up):
    logs = tmp_path / "logs"
    psv = (SLURM / "sacct_fields_allocations.psv").read_text()
    header = psv.splitlines()[0] + "\n"
    october = psv.replace("2026-11-", "2026-10-")
    for month, text in (("2026-08", header), ("2026-09", psv), ("2026-10", october)):
        (logs / month).mkdir(parents=True)
        (logs / month / "sacct.psv").write_text(text)
    config = write_config(tmp_path, 'kind = "sacct_psv"\npath = "logs/{month}/sacct.psv"')
    assert main(["backfill", "--config", str(config), "--from", "2026-08", "--to", "2026-10"]) == EXIT_INPUT
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "error: nothing built: 2 months have no job records: "
        f"2026-08: {logs / '2026-08' / 'sacct.psv'} has no job record in 2026-08; it holds no job record at all; "
        f"2026-09: {logs / '2026-09' / 'sacct.psv'} has no job record in 2026-09; its records are all of "
        "2026-11-22: is the range right? (if no job ran in those months, run the backfill again with --no-jobs-ran)"
    )
    assert not (tmp_path / "data").exists() and not (tmp_path / "reports").exists()


def test_one_dump_of_many_months_is_read_once_for_a_backfill(tmp_path: Path):
    counted = count_month_records("sacct_xdmod", XDMOD, [Month.parse(m) for m in ("2015-06", "2015-07", "2016-08")])
    # the attempt of 2015-06-26 .. 2015-07-01 is in both months, as dbt scopes it (int_attempts_month_scoped)
    assert [counted.in_month[Month.parse(m)] for m in ("2015-06", "2015-07", "2016-08")] == [3, 3, 1]
    assert counted.records == 4


def test_no_jobs_ran_passes_the_edge(tmp_path: Path):
    shutil.copy(XDMOD, tmp_path / "x.log")
    config = load_config(write_config(tmp_path, 'kind = "sacct_xdmod"\npath = "x.log"'))
    with pytest.raises(NoJobRecordsError):
        checked_month(config, EMPTY)
    assert checked_month(config, EMPTY, no_jobs_ran=True) is None


@pytest.mark.parametrize("kind", ["sacct_psv", "sacct_json"])
def test_the_count_before_any_work_is_the_landings_count(kind: str, tmp_path: Path):
    """One rule: the cheap count of the file's times and the count over the reader's landed attempts agree."""
    import duckdb

    from flows.ingest.sources.clock import LocalClock
    from flows.ingest.sources.limits import DEFAULT_LIMITS
    from flows.ingest.sources.quarantine import Quarantine

    path = KINDS[kind][0]
    month = Month.parse("2026-11")
    with duckdb.connect() as con:
        SOURCE_KINDS[kind].read(
            Quarantine(strict=False),
            SOURCE_KINDS[kind].new_stats(),
            con=con,
            path=path,
            clock=LocalClock(ZoneInfo("UTC")),
            limits=DEFAULT_LIMITS,
        )
        landed = landed_month_records(con, kind, path, month)
    assert count_month_records(kind, path, [month]).in_month == landed.in_month == {month: 18}


def fake_sacct(tmp_path: Path) -> Path:
    """A `sacct` that prints a dump of 2026-11, whatever month it is asked for."""
    fake = tmp_path / "fake_sacct.sh"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-V" ]; then echo "slurm-wlm 22.05.8"; exit 0; fi\n'
        f'cat "{SLURM / "sacct_fields_allocations.psv"}"\n'
    )
    fake.chmod(0o755)
    return fake


def test_a_live_pull_with_no_job_record_in_the_month_is_refused_before_anything_lands(tmp_path: Path):
    config = load_config(write_config(tmp_path, f'kind = "sacct_command"\ncommand = ["{fake_sacct(tmp_path)}"]'))
    with pytest.raises(NoJobRecordsError) as refused:
        land_month(config, EMPTY)
    pulled = tmp_path / "data" / "pulled" / "ci" / str(EMPTY) / "sacct.usv"
    assert str(refused.value).startswith(
        f"{EMPTY}: {pulled} has no job record in {EMPTY}; its records are all of 2026-11-22"
    )
    assert not config.landed_dir(EMPTY).exists() and not config.raw_dir(EMPTY).exists()


def test_no_jobs_ran_lands_the_month_and_says_so_in_its_manifest(tmp_path: Path):
    config = load_config(write_config(tmp_path, f'kind = "sacct_command"\ncommand = ["{fake_sacct(tmp_path)}"]'))
    manifest = json.loads((land_month(config, EMPTY, no_jobs_ran=True) / "manifest.json").read_text())
    assert manifest["no_jobs_declared"] is True and list(manifest["sources"]) == ["sacct_command"]
    # a month with records is no month without jobs, whatever the flag says
    manifest = json.loads((land_month(config, Month.parse("2026-11"), no_jobs_ran=True) / "manifest.json").read_text())
    assert "no_jobs_declared" not in manifest


@pytest.mark.slow  # builds a month (of no attempts)
def test_a_month_declared_without_jobs_builds_with_no_row_count_warnings(tmp_path: Path, fresh_warehouse, capsys):
    shutil.copy(XDMOD, tmp_path / "x.log")
    config = write_config(tmp_path, 'kind = "sacct_xdmod"\npath = "x.log"')
    fresh_warehouse(config)
    assert main(["run", "--month", str(EMPTY), "--config", str(config), "--no-jobs-ran"]) == 0
    metrics = json.loads((load_config(config).report_dir(EMPTY) / "metrics.json").read_text())
    assert metrics["no_jobs_declared"] is True and metrics["totals"]["attempts"] == 0
    warnings = [w["expectation"] for q in metrics["data_quality"] for w in q["warnings"] + q["failures"]]
    assert "expect_table_row_count_to_be_between" not in warnings
    assert list(metrics["inputs"]) == ["sacct_xdmod"]  # the configured kind, not the input it gives
