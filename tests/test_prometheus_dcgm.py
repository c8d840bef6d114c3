"""`prometheus_dcgm` against a real Prometheus on 127.0.0.1: the simulator writes a month's
dcgm-exporter Xid series (scraped every STEP seconds, the labels a scrape gives) as OpenMetrics,
Debian's promtool makes blocks of them, Debian's prometheus serves them. The month built from them
alone attributes, counts node faults and finds lemons as the same month built from the simulator's
Xid syslog, up to what the step resolves; its Xids classify as the syslog's; every failure of the
pull is one `error:` line naming the URL, never the token."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import httpx
import pytest
from conftest import free_port
from test_publish_prometheus import server

from flows.cli import main
from flows.core.months import Month
from simulator import SimParams, simulate
from simulator.history import run_history
from simulator.writers.dcgm_exporter import exporter_series, write_openmetrics

pytestmark = pytest.mark.slow  # builds months and starts servers: `make test`, not `make test-fast`

MONTH = Month.parse("2026-10")
STEP = 60
PARAMS = SimParams("pm", MONTH, nodes=3, seed=11, r_f=120.0, lemon_fraction=0.34)
TOKEN = "pm-s3cret-token"


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    """The month's logs (sacct.psv, xid.log, truth.json) and its dcgm-exporter series as OpenMetrics."""
    sim = tmp_path_factory.mktemp("pm-sim")
    simulate(PARAMS, sim)
    history = run_history(PARAMS)
    write_openmetrics(sim / "dcgm.om", exporter_series(history, history.windows[0], STEP), STEP)
    return sim


@pytest.fixture(scope="module")
def prometheus(simulated, tmp_path_factory) -> Iterator[str]:
    """Prometheus over the blocks promtool made of the series; yields its base URL."""
    work = tmp_path_factory.mktemp("pm-prometheus")
    data = work / "data"
    # one block a month, not one per 2 h (promtool reads the whole file again for each block)
    promtool = ["promtool", "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=768h"]
    subprocess.run([*promtool, str(simulated / "dcgm.om"), str(data)], check=True, capture_output=True)
    (simulated / "dcgm.om").unlink()
    (work / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    command = [
        "prometheus",
        f"--config.file={work / 'prometheus.yml'}",
        f"--storage.tsdb.path={data}",
        "--storage.tsdb.retention.time=100y",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    with server(command, f"http://127.0.0.1:{port}/-/ready", work / "prometheus.log"):
        yield f"http://127.0.0.1:{port}"


def config(root: Path, sim: Path, source: str) -> Path:
    """A config of the month's job records and one health source (a TOML [[sources]] table)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "pm.toml"
    path.write_text(
        'cluster = "pm"\nsite_timezone = "UTC"\n\n'
        f'[[sources]]\nkind = "sacct_psv"\npath = "{sim}/sacct.psv"\n\n{source}\n'
        f'[paths]\ndata = "{root}/data"\nreports = "{root}/reports"\nwarehouse = "{root}/pm.duckdb"\n'
    )
    return path


def prometheus_source(url: str, **settings: object) -> str:
    keys = {"step_seconds": STEP, "attempts": 1, "retry_wait_seconds": 0, **settings}
    return f'[[sources]]\nkind = "prometheus_dcgm"\nurl = "{url}"\n' + "".join(
        f"{key} = {json.dumps(value)}\n" for key, value in keys.items()
    )


def built(path: Path) -> dict:
    """The month built from the config: its metrics.json, attributed failures and Xid classes."""
    assert main(["run", "--month", str(MONTH), "--config", str(path)]) == 0
    root = path.parent
    metrics = json.loads((root / "reports" / "pm" / str(MONTH) / "metrics.json").read_text())
    with duckdb.connect(str(root / "pm.duckdb"), read_only=True) as con:
        failures = con.execute("select attempt_id, cause_category, cause_node from fct_failures").fetchall()
        classes = con.execute("select distinct code, category, severity from fct_health_events where source = 'xid'")
        xids = set(classes.fetchall())
    return {"metrics": metrics, "failures": set(failures), "xids": xids}


@pytest.fixture(scope="module")
def months(simulated, prometheus, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("pm-months")
    syslog = config(root / "syslog", simulated, f'[[sources]]\nkind = "xid_syslog"\npath = "{simulated}/xid.log"\n')
    pulled = config(root / "prometheus", simulated, prometheus_source(prometheus))
    return {"syslog": built(syslog), "prometheus": built(pulled), "pulled_config": pulled}


def test_the_month_from_prometheus_attributes_counts_faults_and_finds_lemons_as_from_the_syslog(months):
    syslog, pulled = months["syslog"], months["prometheus"]
    assert syslog["failures"] and pulled["failures"] == syslog["failures"]
    for key in ("fleet_fault_rate", "failures_by_cause"):
        assert pulled["metrics"][key] == syslog["metrics"][key], key
    lemons = [months[m]["metrics"]["lemon_nodes"]["candidates"] for m in ("syslog", "prometheus")]
    assert lemons[0] == lemons[1]
    assert pulled["xids"] == syslog["xids"]  # an Xid classifies the same whichever source reported it
