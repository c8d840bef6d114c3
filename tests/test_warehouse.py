"""dbt in the warehouse: a new month or another cluster re-uses dbt's parse of the project, and
each checkout of the project keeps its own dbt working files."""

import shutil
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

import flows.warehouse.build
from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import build_months, dbt_work_dir
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

MONTHS = (Month.parse("2026-09"), Month.parse("2026-10"))


@pytest.fixture(scope="module")
def landed(tmp_path_factory) -> dict[str, tuple[ClusterConfig, dict[Month, Path]]]:
    """Two small clusters with two landed months each; their warehouses share one directory."""
    workdir = tmp_path_factory.mktemp("warehouse")
    clusters = {}
    for seed, cluster in enumerate(("east", "west")):
        config = load_config(write_demo_config(workdir, cluster, workdir / "reports"))
        for month in MONTHS:
            simulate(SimParams(cluster, month, nodes=8, seed=seed), workdir / "sim" / cluster / str(month))
        clusters[cluster] = (config, {month: land_month(config, month) for month in MONTHS})
    return clusters


def saved_parse(config: ClusterConfig) -> bytes:
    """dbt's partial_parse.msgpack for the warehouse. dbt writes it after every parse that read
    files (a full parse, or a partial one that found changes) and it records when and by which
    invocation: while it stays the same, dbt parsed nothing."""
    work_dir = dbt_work_dir(config.warehouse_path, flows.warehouse.build.DBT_PROJECT_DIR)
    return (work_dir / "target" / "partial_parse.msgpack").read_bytes()


def clusters_and_months_built(config: ClusterConfig) -> list[tuple[str, str]]:
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        return con.execute("select distinct cluster, month from fct_node_days order by month").fetchall()


def test_new_months_and_alternating_clusters_reuse_the_parse(landed):
    """The month, the cluster and the warehouse file differ from one build to the next, and dbt
    still parses the project only once per warehouse: the run's values reach it as data."""
    first, second = MONTHS
    parses = {}
    for cluster, (config, months) in landed.items():
        build_months(config, {first: months[first]})
        parses[cluster] = saved_parse(config)
    for cluster, (config, months) in landed.items():
        build_months(config, {second: months[second]})
        assert saved_parse(config) == parses[cluster], f"{cluster} {second}: dbt parsed the project again"
        assert clusters_and_months_built(config) == [(cluster, str(first)), (cluster, str(second))]


def test_a_build_from_a_removed_checkout_does_not_break_this_ones(landed, tmp_path, monkeypatch):
    """Another checkout of the project (an older install, a git worktree) builds the warehouse and
    is then removed. dbt's saved parse records the project's absolute paths (seeds are read from
    there): were it shared, this checkout's build would look for the seeds in the removed one."""
    config, months = landed["east"]
    # a new warehouse over data of its own: no other landed month to rebuild into it (flows/warehouse/build.py rebuild)
    config = replace(config, warehouse_path=tmp_path / "warehouse" / "east.duckdb", data_dir=tmp_path / "data")
    month = MONTHS[0]
    other_checkout = tmp_path / "other-checkout" / "dbt_project"
    shutil.copytree(
        flows.warehouse.build.DBT_PROJECT_DIR, other_checkout, ignore=shutil.ignore_patterns("target", "logs")
    )
    with monkeypatch.context() as patch:
        patch.setattr(flows.warehouse.build, "DBT_PROJECT_DIR", other_checkout)
        build_months(config, {month: months[month]})
    shutil.rmtree(other_checkout)

    build_months(config, {month: months[month]})
    assert clusters_and_months_built(config) == [("east", str(month))]
