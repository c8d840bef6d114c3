"""`prometheus_dcgm` against a real Prometheus on 127.0.0.1: the simulator writes a month's
dcgm-exporter Xid series (scraped every STEP seconds, the labels a scrape gives) as OpenMetrics,
Debian's promtool makes blocks of them, Debian's prometheus serves them. The month built from them
alone attributes, counts node faults and finds lemons as the same month built from the simulator's
Xid syslog, up to what the step resolves; its Xids classify as the syslog's; every failure of the
pull is one `error:` line naming the URL, never the token."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import httpx
import pyarrow.parquet as pq
import pytest
from local_servers import free_port, prometheus_of

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.figures.lemons import lemon_candidates
from flows.figures.period import Period
from flows.ingest.land import land_month
from flows.ingest.sources.dcgm_series import DcgmSeriesReadStats, read_dcgm_series
from flows.ingest.sources.http_client import PullError
from flows.ingest.sources.prometheus_dcgm import pull_series
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.servers import PrometheusDcgmSource
from flows.warehouse.build import dbt_command
from flows.warehouse.engines import DuckDBMarts
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
    # one block a month, not one per 2 h (promtool reads the whole file again for each block)
    with prometheus_of(simulated / "dcgm.om", work, "--max-block-duration=768h") as url:
        (simulated / "dcgm.om").unlink()
        yield url


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
    """The month landed and its models run (no report: the figures compared are the marts'): its
    attributed failures, node faults, lemon candidates, Xid classes and landed Xids."""
    config = load_config(path)
    landed = land_month(config, MONTH)
    dbt_command(config, {MONTH: landed}, "build", "--exclude-resource-type", "test", "unit_test")
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        failures = con.execute("select attempt_id, cause_category, cause_node from fct_failures").fetchall()
        faults = con.execute("select node, fault_at, category from fct_node_faults").fetchall()
        classes = con.execute("select distinct code, category, severity from fct_health_events where source = 'xid'")
        xids = set(classes.fetchall())
        lemons = lemon_candidates(DuckDBMarts(con), Period.of_month(MONTH), config.analysis)["candidates"]
    xid_events = pq.read_table(landed / "xid_events.parquet").to_pylist()
    pulled = config.data_dir / "pulled" / "pm" / str(MONTH) / "dcgm_series.jsonl"
    return {
        **{"failures": set(failures), "faults": set(faults), "lemons": lemons, "xids": xids},
        **{"landed": xid_events, "pulled": pulled},
    }


@pytest.fixture(scope="module")
def months(simulated, prometheus, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("pm-months")
    syslog = config(root / "syslog", simulated, f'[[sources]]\nkind = "xid_syslog"\npath = "{simulated}/xid.log"\n')
    pulled = config(root / "prometheus", simulated, prometheus_source(prometheus))
    return {"syslog": built(syslog), "prometheus": built(pulled)}


def test_each_xid_is_seen_at_the_first_scrape_after_its_syslog_line(months):
    """What the step resolves: each Xid of the syslog (its relayed duplicate lines once) is an Xid of
    the series at the first scrape at or after it, known to within the step before; nothing else is."""
    pulled_to = int(MONTH.end.timestamp()) + 3600  # the pull's last evaluation time
    syslog = {
        (e["node"], e["xid"], e["pci"], e["ts"].replace(tzinfo=UTC).timestamp()) for e in months["syslog"]["landed"]
    }
    scraped = Counter((node, xid, -(-int(at) // STEP) * STEP) for node, xid, _, at in syslog if at <= pulled_to)
    pulled = months["prometheus"]["landed"]
    assert scraped == Counter((e["node"], e["xid"], int(e["ts"].replace(tzinfo=UTC).timestamp())) for e in pulled)
    assert {e["ts_uncertainty_seconds"] for e in pulled} == {STEP}
    assert "ts_uncertainty_seconds" not in months["syslog"]["landed"][0]  # a log's month lands as before


def test_the_xid_gauge_alone_sees_a_subset_of_the_windowed_counts_xids(months, tmp_path):
    """A site without DCGM_EXP_XID_ERRORS_COUNT: the gauge (a series per err_code) misses an Xid that
    repeats the GPU's last one, or shares a scrape with another, and sees nothing the count does not."""
    lines = months["prometheus"]["pulled"].read_text().splitlines(keepends=True)
    gauge_only = tmp_path / "gauge.jsonl"
    count = '"__name__": "DCGM_EXP_XID_ERRORS_COUNT"'
    gauge_only.write_text("".join(line for line in lines if count not in line))
    stats = DcgmSeriesReadStats()
    from_gauge = Counter(
        (e.node, e.xid, e.ts) for e in read_dcgm_series(gauge_only, stats=stats, quarantine=Quarantine())
    )
    from_count = Counter((e["node"], e["xid"], e["ts"].replace(tzinfo=UTC)) for e in months["prometheus"]["landed"])
    assert stats.gpus_counted == 0 and from_gauge and not from_gauge - from_count
    assert from_gauge.total() > from_count.total() / 2


def test_the_month_from_prometheus_attributes_counts_faults_and_finds_lemons_as_from_the_syslog(months):
    syslog, pulled = months["syslog"], months["prometheus"]
    assert syslog["failures"] and pulled["failures"] == syslog["failures"]
    # the node faults the fleet's fault rate counts: the same, each at most one step later
    assert syslog["faults"] and len(pulled["faults"]) == len(syslog["faults"])
    for (node, at, category), (node_s, at_s, category_s) in zip(
        sorted(pulled["faults"]), sorted(syslog["faults"]), strict=True
    ):
        assert (node, category) == (node_s, category_s) and 0 <= (at - at_s).total_seconds() < STEP
    assert syslog["lemons"] and pulled["lemons"] == syslog["lemons"]
    assert pulled["xids"] == syslog["xids"]  # an Xid classifies the same whichever source reported it


def _fully_qualified(line: str) -> str:
    """A saved series whose `Hostname` is the node's fully qualified name, as some exporters report it."""
    series = json.loads(line)
    series["metric"]["Hostname"] += ".cluster.local"
    return json.dumps(series, sort_keys=True) + "\n"


def test_fully_qualified_host_labels_are_named_and_with_node_names_attribute_as_the_syslog(months, simulated, tmp_path):
    """Issue 51: a Prometheus whose `Hostname` is a fully qualified name lands its events on nodes
    no job ran on. Landed as it is, data quality counts them and names the domain suffix; with
    `node_names = "strip_domain"` on the source, the month attributes as the syslog's does."""
    header, *lines = months["prometheus"]["pulled"].read_text().splitlines(keepends=True)
    saved = tmp_path / "dcgm_series.jsonl"
    saved.write_text(header + "".join(map(_fully_qualified, lines)))
    source = f'[[sources]]\nkind = "dcgm_series"\npath = "{saved}"\n'
    landed = land_month(load_config(config(tmp_path / "as-is", simulated, source)), MONTH)
    (check,) = json.loads((landed / "manifest.json").read_text())["node_names"]
    assert check["source"] == "dcgm_series" and check["not_in_job_records"] == check["nodes"] > 0
    assert "likely cause: a domain suffix" in check["finding"]
    assert 'set node_names = "strip_domain" on its [[sources]]' in check["finding"]
    mapped = built(config(tmp_path / "mapped", simulated, source + 'node_names = "strip_domain"\n'))
    assert {event["node"] for event in mapped["landed"]} == {event["node"] for event in months["syslog"]["landed"]}
    assert mapped["failures"] and mapped["failures"] == months["syslog"]["failures"]


class _AuthProxy(BaseHTTPRequestHandler):
    """Prometheus behind a bearer token, as a site's reverse proxy puts it: 401 without TOKEN."""

    def do_GET(self) -> None:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            status, body = 401, b'{"status": "error", "error": "unauthorized"}'
        else:
            answer = httpx.get(self.server.upstream + self.path.removeprefix("/prom"), timeout=30)
            status, body = answer.status_code, answer.content
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def auth_proxy(prometheus) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _AuthProxy)
    httpd.upstream = prometheus
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/prom"
    httpd.shutdown()
    httpd.server_close()


def error_line(capsys) -> str:
    """The one line a failed command wrote to stderr (an `error:` line)."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_a_refused_token_is_one_error_line_naming_the_url_and_the_variable_never_the_token(
    simulated, auth_proxy, tmp_path, monkeypatch, capsys
):
    wrong = "pm-wrong-token-value"
    monkeypatch.setenv("PM_TOKEN", wrong)
    path = config(tmp_path, simulated, prometheus_source(auth_proxy, token_env="PM_TOKEN"))
    assert main(["check", "--month", str(MONTH), "--config", str(path)]) == 2  # the probe
    line = error_line(capsys)
    assert f"{auth_proxy}/api/v1/series answered 401" in line and "$PM_TOKEN" in line and wrong not in line
    with pytest.raises(PullError) as raised:  # the pull, as `run` lands the month
        land_month(load_config(path), MONTH)
    assert f"{auth_proxy}/api/v1/query_range answered 401" in str(raised.value)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(wrong.encode() in p.read_bytes() for p in written)
    monkeypatch.setenv("PM_TOKEN", TOKEN)  # the right one: check --month probes the month through the proxy
    assert main(["check", "--month", str(MONTH), "--config", str(path)]) == 0
    said = capsys.readouterr()
    assert (
        f"prometheus_dcgm at {auth_proxy}: 153 series of 3 hosts (gpu0001, gpu0002 and 1 more) in {MONTH} "
        "(DCGM_EXP_XID_ERRORS_COUNT, DCGM_FI_DEV_XID_ERRORS)" in said.out
    )
    assert TOKEN not in said.out + said.err


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"matchers": 'job=~"("'}, "/api/v1/series answered 400 Bad Request: "),
        ({"matchers": 'job="not-dcgm"'}, "has no dcgm-exporter series"),
        ({"host_label": "node"}, "have no label node: set host_label to the label naming the node"),
    ],
)
def test_check_month_says_in_one_line_what_the_server_lacks(simulated, prometheus, tmp_path, capsys, settings, said):
    path = config(tmp_path, simulated, prometheus_source(prometheus, **settings))
    assert main(["check", "--month", str(MONTH), "--config", str(path)]) == 2
    line = error_line(capsys)
    assert f"source prometheus_dcgm: {prometheus}" in line and said in line


def test_an_unreachable_server_and_a_rejected_query_stop_the_pull_in_one_line(prometheus, tmp_path):
    unreachable = f"http://127.0.0.1:{free_port()}"
    for url, matchers, said in [
        (unreachable, "", f"{unreachable}/api/v1/query_range: cannot connect ("),
        (prometheus, 'gpu=~"+"', f"{prometheus}/api/v1/query_range answered 400 Bad Request: "),
    ]:
        server = PrometheusDcgmSource(kind="prometheus_dcgm", url=url, matchers=matchers, attempts=1)
        with pytest.raises(PullError) as raised:
            pull_series(server, MONTH, tmp_path / "dcgm_series.jsonl")
        assert said in str(raised.value) and "\n" not in str(raised.value)
    assert "parse error" in str(raised.value)  # Prometheus's own words


def test_the_pull_is_kept_like_a_file_and_lands_again_without_the_server(months, simulated, tmp_path):
    """The raw copy of the pull carries the manifest's SHA-256; given as a `dcgm_series` file (no
    server), it lands the same Xid events."""
    pulled = months["prometheus"]["pulled"]
    data_dir = pulled.parents[3]
    raw = data_dir / "raw" / "pm" / str(MONTH) / pulled.name
    entry = json.loads((data_dir / "landed" / "pm" / str(MONTH) / "manifest.json").read_text())["sources"][
        "dcgm_series"
    ]
    assert entry["sha256"] == hashlib.sha256(raw.read_bytes()).hexdigest() and raw.read_bytes() == pulled.read_bytes()
    again = config(tmp_path, simulated, f'[[sources]]\nkind = "dcgm_series"\npath = "{raw}"\n')
    landed = land_month(load_config(again), MONTH)
    assert pq.read_table(landed / "xid_events.parquet").to_pylist() == months["prometheus"]["landed"]
