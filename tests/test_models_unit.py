"""The dbt models' unit tests (attribution window edges, cause priority, job-run chaining, month
boundaries...): they check the SQL, not a month's data, so they run here, in the quick tier, rather
than in every monthly build (flows/warehouse/build.py build_months leaves them out)."""

import duckdb
import pytest
import yaml

from flows import DBT_PROJECT_DIR
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate

MONTH = Month.parse("2026-10")


@pytest.fixture(scope="module")
def mixed_month(tmp_path_factory, fresh_warehouse) -> dict:
    """One build for the file's three tests (each paid a dbt build of its own, ~40 % of the quick
    tier's dbt time): a mixed month (the simulator's 2 GPU nodes, CPU-only attempts on CPU-only
    nodes, GPU node failures, the CPU-only nodes' DOWN* events), its models, the models' unit tests
    and the month's data tests in one `dbt build`. The tests only read what it built."""
    tmp_path = tmp_path_factory.mktemp("unit")
    config_path = write_demo_config(tmp_path, "unit", tmp_path / "reports")
    warehouse = fresh_warehouse(config_path, "module")
    sim = tmp_path / "sim" / "unit" / str(MONTH)
    simulate(SimParams("unit", MONTH, nodes=2, seed=1), sim)
    cpu_lines = _cpu_only_lines()
    with open(sim / "sacct.psv", "a") as sacct:
        sacct.write("\n".join(cpu_lines + GPU_FAILURES) + "\n")
    with open(sim / "events.psv", "a") as events:
        events.write("\n".join(CPU_NODE_EVENTS) + "\n")
    config = load_config(config_path)
    # in a build: a unit test reads its inputs' columns from them, and the month's intermediate
    # tables exist only during a build (in its in-memory scratch database)
    result = dbt_command(config, {MONTH: land_month(config, MONTH)}, "build")
    return {"result": result, "warehouse": warehouse, "cpu_lines": cpu_lines}


def test_the_models_unit_tests_pass(mixed_month) -> None:
    result = mixed_month["result"]
    declared = sum(
        len(yaml.safe_load(path.read_text()).get("unit_tests", []))
        for path in (DBT_PROJECT_DIR / "models").rglob("*.yml")
    )
    unit = [r for r in result.result.results if r.node.resource_type == "unit_test"]
    assert result.success and declared >= 7
    assert len(unit) == declared and all(str(r.status) == "pass" for r in unit)


def build_passed(mixed_month) -> None:
    """The month's build passed: its models built and its data tests passed (the unit tests' own
    outcomes are test_the_models_unit_tests_pass's)."""
    result = mixed_month["result"]
    failed = [
        r.node.name
        for r in result.result.results
        if r.node.resource_type != "unit_test" and str(r.status) not in ("pass", "success")
    ]
    assert result.success, failed


# --- GPU figures count GPU attempts (issue 42, item 3) ---------------------------------------

CPU_HEADER_TRES = "billing=16,cpu=16,mem=64G,node=1"


def _cpu_only_lines() -> list[str]:
    """CPU-only attempts on CPU nodes (AllocTRES without gres/gpu) of October 2026, under their own
    account and partition: long completed runs (each its own job run, long enough for ETTR), node
    failures (infra_failed, single-node: lemon signals) and a failure with a requeue."""
    lines = []
    for i in range(12):  # 48 h runs: each an ETTR run if CPU-only runs were counted
        start = f"2026-10-{1 + 2 * i:02d}T01:00:00"
        end = f"2026-10-{3 + 2 * i:02d}T01:00:00"
        lines.append(
            f"{900000 + i}|{900000 + i}|cpu_etl_{i}|carol|cpuonly|cpu|normal|COMPLETED|0:0|{start}|{start}|{start}|{end}"
            f"|2-00:00:00|1|cpu{1 + i % 3:04d}|{CPU_HEADER_TRES}|{CPU_HEADER_TRES}|None|0:0|"
        )
    for i in range(4):  # node failures after 20 h
        start, end = f"2026-10-{5 + i:02d}T02:00:00", f"2026-10-{5 + i:02d}T22:00:00"
        lines.append(
            f"{910000 + i}|{910000 + i}|cpu_sim_{i}|carol|cpuonly|cpu|normal|NODE_FAIL|0:0|{start}|{start}|{start}|{end}"
            f"|20:00:00|1|cpu0004|{CPU_HEADER_TRES}|{CPU_HEADER_TRES}|None|0:0|"
        )
    return lines


GPU_TRES = "billing=96,cpu=96,gres/gpu=8,mem=960G,node=1"
# two node failures of GPU attempts beside them: the GPU figures' own failures
GPU_FAILURES = [
    f"{920000 + i}|{920000 + i}|gpu_fail_{i}|dave|vision|gpu|normal|NODE_FAIL|0:0|2026-10-{20 + i}T01:00:00"
    f"|2026-10-{20 + i}T01:00:00|2026-10-{20 + i}T01:00:00|2026-10-{20 + i}T03:00:00|02:00:00|1|gpu0002|{GPU_TRES}"
    f"|{GPU_TRES}|None|0:0|"
    for i in range(2)
]


def test_gpu_figures_count_only_gpu_attempts(mixed_month) -> None:
    """A mixed month: the simulator's GPU attempts and CPU-only attempts beside them (long runs,
    node failures). No GPU figure's mart has a 0-GPU bucket or a CPU-only row, r_f counts the GPU
    attempts alone, and the totals count the CPU-only attempts apart (docs/methodology.md "GPU
    attempts"). The month also has the fleet test's CPU-only node events: node faults, no attempt."""
    warehouse, cpu_lines = mixed_month["warehouse"], mixed_month["cpu_lines"]
    build_passed(mixed_month)

    def rows(sql: str) -> list[tuple]:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            return con.execute(sql, [str(MONTH)]).fetchall()

    for mart in ("fct_job_runs", "fct_failures"):
        assert rows(f"select count(*) from {mart} where month = ? and size_bucket = '0'") == [(0,)], mart
    for mart in ("fct_period_mttf_by_size", "fct_period_job_mix", "fct_period_run_ettr", "fct_period_ettr_by_size"):
        assert rows(f"select count(*) from {mart} where period_id = 'month:' || ? and size_bucket = '0'") == [(0,)]
    # no CPU run in ETTR, no CPU row in the breakdowns (the CPU jobs' account and partition)
    assert rows("select count(*) from fct_job_runs where month = ? and (account = 'cpuonly' or gpus = 0)") == [(0,)]
    assert rows("select count(*) from fct_job_run_histories where month = ? and gpus = 0") == [(0,)]
    assert rows(
        "select count(*) from fct_period_breakdowns where period_id = 'month:' || ? and key in ('cpuonly', 'cpu')"
    ) == [(0,)]
    assert rows(
        "select count(*) from fct_period_breakdowns where period_id = 'month:' || ? and gpu_hours = 0 and infra_failures = 0"
    ) == [(0,)]
    # no CPU failure in failures by cause, lemon signals or the nodes' days
    assert rows("select count(*) from fct_failures where month = ? and gpus = 0") == [(0,)]
    assert rows(
        "select count(*) from fct_node_lemon_signals where period_id = 'month:' || ? and node like 'cpu%' and node_fails > 0"
    ) == [(0,)]
    assert rows(
        "select coalesce(sum(single_node_attempts_ended + infra_failures), 0) from fct_node_days where month = ? and node like 'cpu%'"
    ) == [(0,)]
    # the CPU-only attempts are in fct_attempts (bucket 0), not GPU attempts
    assert rows("select count(*) from fct_attempts where month = ? and not is_gpu_attempt") == [(len(cpu_lines),)]
    assert rows("select count(*) from fct_attempts where month = ? and is_gpu_attempt and job_name like 'cpu_%'") == [
        (0,)
    ]
    # r_f: the failures and node-days of the GPU attempts alone
    gpu_alone = rows(
        "select cast(sum(case when is_infra_failure then 1 else 0 end) as bigint), sum(runtime_seconds * n_nodes) / 86400e0 "
        "from fct_attempts where month = ? and job_name not like 'cpu_%'"
    )[0]
    rates = rows(
        "select all_failures, all_node_days from fct_period_node_failure_rate where period_id = 'month:' || ?"
    )[0]
    assert gpu_alone[0] >= len(GPU_FAILURES)
    assert rates[0] == gpu_alone[0] and rates[1] == pytest.approx(gpu_alone[1])
    assert rows("select sum(infra_failures) from fct_period_mttf_by_size where period_id = 'month:' || ?") == [
        (gpu_alone[0],)
    ]
    assert rows(
        "select coalesce(sum(failures), 0) from fct_period_failures_by_cause where period_id = 'month:' || ?"
    ) == [(gpu_alone[0],)]
    # the totals: the CPU-only attempts counted apart, the GPU attempts' node-days and failures
    totals = rows(
        "select attempts, gpu_attempts, cpu_only_attempts, gpu_node_days, infra_failures from fct_period_totals "
        "where period_id = 'month:' || ?"
    )[0]
    gpu_attempts = rows("select count(*) from fct_attempts where month = ? and job_name not like 'cpu_%'")[0][0]
    assert totals[1:3] == (gpu_attempts, len(cpu_lines)) and totals[0] == gpu_attempts + len(cpu_lines)
    assert totals[3] == pytest.approx(gpu_alone[1]) and totals[4] == gpu_alone[0]


# --- the fleet's figures count GPU nodes (issue 42, item 3) ---------------------------------------

CPU_TRES = "billing=16,cpu=16,mem=64G"
# CPU-only nodes' faults as sacctmgr shows them (DOWN* "Not responding", the only signal a CPU node
# leaves): three of cpu0004 (which ran CPU jobs) and one of cpu0005, seen by its event alone
CPU_NODE_EVENTS = [
    f"unit||02:00:00|2026-10-{day:02d}T04:00:00|Node|2|{node}|Not responding|2026-10-{day:02d}T02:00:00|DOWN*|2049"
    f"|{CPU_TRES}|root(0)"
    for node, day in (("cpu0004", 10), ("cpu0004", 14), ("cpu0004", 18), ("cpu0005", 12))
]


def test_the_fleet_figures_count_only_gpu_nodes(mixed_month) -> None:
    """A mixed month: the simulator's 2 GPU nodes beside 5 CPU-only nodes that ran CPU-only jobs or
    logged faults (DOWN* Not responding). The fleet's node fault rate counts the GPU nodes' faults
    over the GPU nodes' days, the lemon fleet is the GPU nodes, no CPU-only node has lemon signals,
    and the totals count the CPU-only nodes apart (dim_nodes.is_gpu_node, docs/methodology.md "GPU
    nodes")."""
    warehouse = mixed_month["warehouse"]
    build_passed(mixed_month)

    def rows(sql: str) -> list[tuple]:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            return con.execute(sql, [str(MONTH)] * sql.count("?")).fetchall()

    cpu_nodes = {"cpu0001", "cpu0002", "cpu0003", "cpu0004", "cpu0005"}
    # the premise: the CPU-only nodes are seen, and their faults are node faults
    assert {
        n for (n,) in rows("select distinct node from fct_node_days where month = ? and node like 'cpu%'")
    } == cpu_nodes
    cpu_faults = rows("select node, count(*) from fct_node_faults where month = ? and node like 'cpu%' group by node")
    assert dict(cpu_faults) == {"cpu0004": 3, "cpu0005": 1}
    # the one rule: GPU nodes are those that ran a GPU attempt (or logged an Xid or DCGM report)
    nodes = dict(rows("select node, is_gpu_node from dim_nodes"))
    gpu_nodes = {n for n, is_gpu in nodes.items() if is_gpu}
    assert gpu_nodes == {"gpu0001", "gpu0002"} and set(nodes) - gpu_nodes == cpu_nodes
    # the fleet's fault rate: the GPU nodes' faults over the GPU nodes' days
    gpu_faults = rows("select count(*) from fct_node_faults where month = ? and node like 'gpu%'")[0][0]
    fleet = rows(
        "select fleet_nodes, fleet_faults, fleet_node_days, "
        "datediff('second', (select month_start from run.months), (select period_end from run.months)) / 86400e0 "
        "from fct_period_node_failure_rate where period_id = 'month:' || ?"
    )[0]
    assert fleet[:2] == (len(gpu_nodes), gpu_faults)
    assert fleet[2] == pytest.approx(len(gpu_nodes) * fleet[3])
    # the lemon fleet: GPU nodes only, in every window; no CPU-only node has signals
    for window, fleet_nodes, without in rows(
        "select lemon_window, fleet_nodes, nodes_without_signals from fct_period_lemon_fleet "
        "where period_id = 'month:' || ?"
    ):
        assert fleet_nodes == len(gpu_nodes), window
        with_signals = rows(
            f"select count(*) from fct_node_lemon_signals where period_id = 'month:' || ? and lemon_window = '{window}'"
        )[0][0]
        assert without == fleet_nodes - with_signals
    cpu_nodes_with_signals = (
        "select count(*) from fct_node_lemon_signals where period_id = 'month:' || ? and node like 'cpu%'"
    )
    assert rows(cpu_nodes_with_signals) == [(0,)]
    # each count signal's distribution is over the GPU nodes
    assert {
        n
        for (n,) in rows(
            "select sum(nodes) from fct_period_lemon_signal_distribution "
            "where period_id = 'month:' || ? and signal <> 'single_node_node_failure_rate' group by lemon_window, signal"
        )
    } == {len(gpu_nodes)}
    # the totals: the CPU-only nodes seen, counted apart
    assert rows("select cpu_only_nodes from fct_period_totals where period_id = 'month:' || ?") == [(len(cpu_nodes),)]
