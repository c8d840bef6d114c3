"""A range of months is built in batches that fit `[warehouse] memory_limit` (flows/warehouse/batches.py):
consecutive months, oldest first, each batch within its share of attempts; the figures are those of
one build; a build that runs out of memory says so in one line with what to do."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import flows.warehouse.batches
from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.delivery.fingerprint import same_figures
from flows.demo import write_demo_config
from flows.figures.read import month_document
from flows.report.render import CHARTS_DIR, render_charts
from flows.warehouse.batches import ATTEMPTS_PER_GIB, build_batches, describe_batches
from flows.warehouse.build import WarehouseBuildError, _statuses
from simulator import SimParams, simulate

GIB = 2**30


def landed(tmp_path: Path, month: str, attempts: int) -> tuple[Month, Path]:
    """A landed month's directory whose attempts file holds `attempts` rows."""
    landed_dir = tmp_path / month
    landed_dir.mkdir()
    pq.write_table(pa.table({"attempt_id": list(range(attempts))}), landed_dir / "attempts.parquet")
    return Month.parse(month), landed_dir


def test_months_are_batched_oldest_first_within_the_limits_share_and_a_large_month_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(flows.warehouse.batches, "ATTEMPTS_PER_GIB", 100)
    sizes = {"2026-03": 120, "2026-01": 100, "2026-02": 150, "2026-04": 500, "2026-05": 10, "2026-06": 5}
    months = dict(landed(tmp_path, month, attempts) for month, attempts in sizes.items())
    batches = build_batches(months, 3 * GIB)  # 300 attempts a build
    assert [[str(m) for m in batch] for batch in batches] == [
        ["2026-01", "2026-02"],
        ["2026-03"],
        ["2026-04"],  # more than a build's share: alone
        ["2026-05", "2026-06"],
    ]
    assert all(batch[m] == months[m] for batch in batches for m in batch)
    assert describe_batches(batches) == (
        "4 builds, each within [warehouse] memory_limit: 2026-01..2026-02, 2026-03, 2026-04, 2026-05..2026-06"
    )
    assert len(build_batches(months, 100 * GIB)) == 1  # a larger limit: one build
    assert describe_batches(build_batches(months, 100 * GIB)).startswith("one build of 2026-01, 2026-02, 2026-03")


def test_a_month_whose_attempts_cannot_be_read_counts_none_and_is_built_for_its_error(tmp_path):
    month, landed_dir = landed(tmp_path, "2026-01", 10)
    (landed_dir / "attempts.parquet").write_text("not parquet")
    assert build_batches({month: landed_dir}, GIB) == [{month: landed_dir}]


def test_a_build_out_of_memory_says_so_in_one_line_with_what_to_do(tmp_path):
    config = load_config(write_demo_config(tmp_path, "oom", tmp_path / "reports"))
    message = (
        "Out of Memory Error: could not allocate block of size 256.0 KiB (3.0 GiB/3.0 GiB used)\n\n"
        "Possible solutions:\n* Reducing the number of threads (SET threads=X)\n..."
    )
    node = SimpleNamespace(unique_id="model.cluster_reliability.fct_job_runs", name="fct_job_runs")
    result = SimpleNamespace(
        success=False,
        result=SimpleNamespace(
            results=[
                SimpleNamespace(status="success", node=node, message="OK"),
                SimpleNamespace(status="error", node=node, message=message),
            ]
        ),
    )
    with pytest.raises(WarehouseBuildError) as raised:
        _statuses(result, config)
    said = str(raised.value)
    assert "\n" not in said
    assert said == (
        "dbt ran out of memory building fct_job_runs within [warehouse] memory_limit = 3.0 GiB: raise "
        f"memory_limit in {config.config_path}, or free memory on this machine, and run again"
    )


@pytest.mark.slow
def test_a_range_built_in_batches_has_the_figures_of_one_build(tmp_path, monkeypatch, capsys):
    """Three continuous months whose jobs cross the month ends: one build against one batch a month."""
    months = ["2026-07", "2026-08", "2026-09"]
    reports = {}
    for name, per_gib in (("one", ATTEMPTS_PER_GIB), ("batched", 1)):  # 1: each month alone
        monkeypatch.setattr(flows.warehouse.batches, "ATTEMPTS_PER_GIB", per_gib)
        work = tmp_path / name
        work.mkdir()
        config = write_demo_config(work, "bb", work / "reports")
        if not (history := tmp_path / "sim").exists():  # one continuous history of the three months
            first, last = Month.parse(months[0]), Month.parse(months[-1])
            simulate(SimParams("bb", first, last_month=last, nodes=16, seed=3), history)
        for month in months:
            shutil.copytree(history / month, work / "sim" / "bb" / month)
        code = main(["backfill", "--config", str(config), "--from", months[0], "--to", months[-1], "--email", "none"])
        out, _ = capsys.readouterr()
        assert code == 0, out
        plan = [line.split("  ", 1)[1] for line in out.splitlines() if "bb: dbt: " in line][0]
        assert plan == (
            "bb: dbt: one build of 2026-07, 2026-08, 2026-09"
            if name == "one"
            else "bb: dbt: 3 builds, each within [warehouse] memory_limit: 2026-07, 2026-08, 2026-09"
        )
        reports[name] = {m: json.loads((work / "reports" / "bb" / m / "metrics.json").read_text()) for m in months}
    for month in months:
        one, batched = reports["one"][month], reports["batched"][month]
        assert same_figures(one, batched) and same_figures(batched, one), month
        assert one["totals"]["attempts"] > 0
        # three months: their charts were drawn in the drawing process, beside the checks, and are
        # those drawn here from the report's figures, checks and all (flows/report/drawing.py)
        drawn = render_charts(month_document(batched))
        charts_dir = tmp_path / "batched" / "reports" / "bb" / month / CHARTS_DIR
        assert drawn and {p.stem: p.read_bytes() for p in charts_dir.glob("*.png")} == {
            name: chart.png for name, chart in drawn.items()
        }
