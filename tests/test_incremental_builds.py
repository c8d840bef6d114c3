"""A build replaces only the rows its months change (dbt_project/macros/materializations.sql: the
marts by month, fct_range_attempts by job): after months built as runs build them, in any order, and
after a month whose records lost a job that ran across its start, every mart holds what one build
of the same landed months holds."""

import duckdb
import pyarrow.parquet as pq
import pytest

from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import build_months, landed_months
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months: `make test`, not `make test-fast`

MONTHS = [Month.parse(m) for m in ("2026-07", "2026-08", "2026-09")]


def marts(warehouse) -> dict[str, list[tuple]]:
    """Every mart's rows (fct_* and dim_*), in one order."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        names = [
            name
            for (name,) in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'main' "
                "and (table_name like 'fct_%' or table_name like 'dim_%') order by table_name"
            ).fetchall()
        ]
        return {name: con.execute(f"select * from {name} order by all").fetchall() for name in names}


def build(config, month: Month, built: set[Month]) -> None:
    """`month`'s build as a run makes it: with the months built after it (flows/pipeline.py
    landed_later_months: their trailing windows hold it)."""
    built.add(month)
    build_months(config, {m: config.landed_dir(m) for m in sorted(built) if m >= month})


def one_build(config) -> dict[str, list[tuple]]:
    """The marts of one build of every landed month, into a new warehouse (the other kept aside)."""
    incremental = config.warehouse_path.with_name("incremental.duckdb")
    config.warehouse_path.rename(incremental)
    build_months(config, landed_months(config))  # a missing warehouse: every landed month in one build
    whole = marts(config.warehouse_path)
    config.warehouse_path.unlink()
    incremental.rename(config.warehouse_path)
    return whole


def test_months_built_out_of_order_and_a_month_that_lost_a_job_equal_one_build(tmp_path, fresh_warehouse):
    simulate(SimParams("ib", MONTHS[0], last_month=MONTHS[-1], nodes=4, seed=7), tmp_path / "sim" / "ib")
    config_path = write_demo_config(tmp_path, "ib", tmp_path / "reports")
    fresh_warehouse(config_path)
    config = load_config(config_path)
    landed = {month: land_month(config, month) for month in MONTHS}
    months_built: set[Month] = set()
    for month in (MONTHS[0], MONTHS[2], MONTHS[1]):  # the middle month late: earlier rows gain later ones
        build(config, month, months_built)
    built = marts(config.warehouse_path)
    assert len(built["fct_range_attempts"]) > sum(1 for _ in built["fct_attempts"])  # pairs across month ends
    assert built == one_build(config)

    # August's records lose a job that ran across July's end: its July rows are final again
    attempts = landed[MONTHS[1]] / "attempts.parquet"
    july, august = (pq.read_table(landed[m] / "attempts.parquet") for m in MONTHS[:2])
    across = sorted(set(july.column("job_id_raw").to_pylist()) & set(august.column("job_id_raw").to_pylist()))
    assert across
    kept = [job != across[0] for job in august.column("job_id_raw").to_pylist()]
    pq.write_table(august.filter(kept), attempts)
    build(config, MONTHS[1], months_built)
    changed = marts(config.warehouse_path)
    assert changed["fct_range_attempts"] != built["fct_range_attempts"]
    assert changed == one_build(config)
