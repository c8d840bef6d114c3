"""The months in a real Prometheus: Debian's promtool lints each report's metrics.prom, turns the
history file of `reliability-report export-prometheus` into blocks, and Debian's prometheus serves
them; every sample, and every query of the Grafana dashboard, equals metrics.json month by month.
Debian's prometheus-pushgateway gets a delivered month's figures once (the Makefile installs the
three; all listen on 127.0.0.1 only)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from local_servers import free_port, prometheus_of, running
from publish_history import CLUSTER, MONTHS, built_history, month_metrics

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.delivery.deliver import deliver_report
from flows.delivery.mailer import DeliveryError
from flows.delivery.sent_log import SentLog
from flows.delivery.subject import MonthSubject
from flows.figures.document import MonthDocument
from flows.report.openmetrics import PREFIX, SERIES, epoch_seconds

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

DASHBOARD = Path(__file__).resolve().parents[1] / "flows" / "publish" / "grafana-dashboard.json"
DAY = 86400


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    return built_history(tmp_path_factory)


@pytest.fixture(scope="module")
def prometheus(history, tmp_path_factory) -> Iterator[str]:
    """Prometheus over the blocks promtool made of the exported history; yields its API URL."""
    work = tmp_path_factory.mktemp("prometheus")
    om = work / "history.om"
    assert main(["export-prometheus", "--config", str(history["config"]), "--out", str(om)]) == 0
    with prometheus_of(om, work) as url:
        yield f"{url}/api/v1"


def month_ends(reports: Path) -> dict[int, dict]:
    return {epoch_seconds(m["period"]["end"]): m for m in (month_metrics(reports, month) for month in MONTHS)}


def query_range(api: str, expr: str, start: int, end: int) -> dict[int, dict[frozenset, float]]:
    """Evaluation time -> {labels: value} of a range query with a step of a day."""
    reply = httpx.get(f"{api}/query_range", params={"query": expr, "start": start, "end": end, "step": DAY}, timeout=30)
    assert reply.status_code == 200, reply.text
    found: dict[int, dict[frozenset, float]] = {}
    for series in reply.json()["data"]["result"]:
        for at, value in series["values"]:
            labels = frozenset((k, v) for k, v in series["metric"].items() if k != "__name__")
            found.setdefault(int(at), {})[labels] = float(value)
    return found


def test_each_metrics_prom_and_the_history_pass_promtool(history):
    files = [history["reports"] / CLUSTER / month / "metrics.prom" for month in MONTHS]
    out = history["root"] / "lint-history.om"
    assert main(["export-prometheus", "--config", str(history["config"]), "--out", str(out)]) == 0
    for path in [*files, out]:
        lint = subprocess.run(["promtool", "check", "metrics"], stdin=path.open("rb"), capture_output=True, text=True)
        assert lint.returncode == 0 and lint.stdout + lint.stderr == "", (path, lint.stdout, lint.stderr)


def test_every_sample_of_every_month_is_in_prometheus_as_written(history, prometheus):
    ends = month_ends(history["reports"])
    start, end = min(ends), max(ends)
    for series in SERIES:
        # a plain selector looks back 5 minutes only: each month's value at its end, nothing between
        got = query_range(prometheus, PREFIX + series.name, start, end)
        assert set(got) <= set(ends), series.name
        for at, metrics in ends.items():
            want = {
                frozenset({"cluster": CLUSTER, **dict(zip(series.labels, labels, strict=True))}.items()): float(value)
                for labels, value in series.samples(MonthDocument.model_validate(metrics))
                if value is not None
            }
            assert got.get(at, {}) == want, (series.name, metrics["month"])


def r_f(definition: str, part: str) -> Callable[[dict], dict]:
    return lambda m: {(("definition", definition),): m["node_failure_rate"][definition][part]}


def ettr(field: str) -> Callable[[dict], dict]:
    return lambda m: {
        (("size_gpus", row["size_bucket"]), ("run_set", run_set)): row[field]
        for run_set in ("priority", "all")
        for row in m["ettr_vs_expected"][run_set]
        if row[field] is not None
    }


# What each panel's query shows for a month, read from metrics.json in the report's own units,
# by panel and query (refId): label pairs besides `cluster` -> value. Independent of the writer's table.
PANEL_FIGURES: dict[tuple[int, str], Callable[[dict], dict]] = {
    (1, "A"): r_f("all", "value"),
    (1, "B"): r_f("all", "lower"),
    (1, "C"): r_f("all", "upper"),
    (2, "A"): r_f("paper", "value"),
    (2, "B"): r_f("paper", "lower"),
    (2, "C"): r_f("paper", "upper"),
    (3, "A"): lambda m: {
        (("size_gpus", b["size_bucket"]),): b["mttf_hours"] * 3600 for b in m["mttf_by_size"] if b["mttf_hours"]
    },
    (3, "B"): lambda m: {
        (("size_gpus", b["size_bucket"]), ("definition", "paper")): b["model_mttf_hours"]["paper"] * 3600
        for b in m["mttf_by_size"]
    },
    (4, "A"): lambda m: {(("cause", c["category"]),): c["failures"] for c in m["failures_by_cause"]},
    (5, "A"): ettr("mean_ettr"),
    (5, "B"): ettr("expected_ettr"),
    (6, "A"): lambda m: {(): m["lost_goodput"]["lost_gpu_hours"]},
    (6, "B"): lambda m: {(): m["lost_goodput"]["share_of_gpu_hours"]},
    (7, "A"): lambda m: {(): len(m["lemon_nodes"]["candidates"])},
    (8, "A"): lambda m: {(("status", m["summary"]["data_quality"]["status"]),): 1},
    (9, "A"): lambda m: {
        (("statistic", stat),): m["node_repairs"]["failures"][f"{stat}_hours"]
        for stat in ("mean", "median")
        if m["node_repairs"]["failures"][f"{stat}_hours"] is not None
    },
    (9, "B"): lambda m: {(): m["node_repairs"]["availability"]["value"]},
}


def grafana_expr(expr: str) -> str:
    """A panel's PromQL as Grafana sends it for this cluster at a step of a day."""
    return expr.replace("$cluster", CLUSTER).replace("$__interval", "1d")


def test_every_dashboard_panel_returns_the_months_figures(history, prometheus):
    dashboard = json.loads(DASHBOARD.read_text())
    ends = month_ends(history["reports"])
    queries = [(panel, target) for panel in dashboard["panels"] for target in panel["targets"]]
    assert {(panel["id"], target["refId"]) for panel, target in queries} == set(PANEL_FIGURES)
    for panel, target in queries:
        assert target["datasource"]["uid"] == "${datasource}"
        figures = PANEL_FIGURES[panel["id"], target["refId"]]
        got = query_range(prometheus, grafana_expr(target["expr"]), min(ends), max(ends))
        assert got, panel["title"]  # every query draws something
        # a month's point at its end, and (Prometheus 2's ranges include their start) the same a step later:
        # never a month's figure carried into a month that lacks it
        for at, shown in got.items():
            assert at in ends or (at - DAY in ends and got.get(at - DAY) == shown), (panel["title"], at)
        for at, metrics in ends.items():
            want = {frozenset({("cluster", CLUSTER), *labels}): value for labels, value in figures(metrics).items()}
            shown = got.get(at, {})
            assert shown.keys() == want.keys(), (panel["title"], target["refId"], metrics["month"])
            assert all(shown[k] == pytest.approx(v, rel=1e-9) for k, v in want.items()), (
                panel["title"],
                metrics["month"],
            )


def test_the_cluster_variable_lists_the_cluster(prometheus):
    dashboard = json.loads(DASHBOARD.read_text())
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "cluster")
    metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["query"]["query"]).groups()
    reply = httpx.get(f"{prometheus}/label/{label}/values", params={"match[]": metric}, timeout=30)
    assert reply.json()["data"] == [CLUSTER]
    assert {v["name"] for v in dashboard["templating"]["list"]} == {"datasource", "cluster"}


def own_config(history: dict, work: Path, data: str, pushgateway_url: str) -> Path:
    """The history's config with its own data and reports directories and a copy of its warehouse
    (the run rebuilds 2026-09 with the same figures), and a [prometheus] section."""
    text = history["config"].read_text().replace('"sim/', f'"{history["root"]}/sim/')
    warehouse = work / "warehouse.duckdb"
    if not warehouse.exists():
        shutil.copyfile(history["root"] / "warehouse" / f"{CLUSTER}.duckdb", warehouse)
    text = re.sub(r'^data = ".*"$', f'data = "{work / data}"', text, flags=re.M)
    text = re.sub(r'^reports = ".*"$', f'reports = "{work / "reports"}"', text, flags=re.M)
    text = re.sub(r'^warehouse = ".*"$', f'warehouse = "{warehouse}"', text, flags=re.M)
    config = work / f"{data}.toml"
    config.write_text(f'{text}\n[prometheus]\npushgateway_url = "{pushgateway_url}"\nsend_attempts = 1\n')
    return config


def pushed_groups(url: str) -> list[dict]:
    return httpx.get(f"{url}/api/v1/metrics", timeout=10).json()["data"]


def test_a_delivered_month_is_pushed_once_and_an_unreachable_pushgateway_is_one_line(history, tmp_path, capsys):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = ["prometheus-pushgateway", f"--web.listen-address=127.0.0.1:{port}"]
    month = MONTHS[-1]
    config = own_config(history, tmp_path, "data", url)
    report = tmp_path / "reports" / CLUSTER / month
    with running(command, f"{url}/-/ready", tmp_path / "pushgateway.log"):
        assert main(["run", "--month", month, "--config", str(config)]) == 0
        assert "report pushed to the Pushgateway" in capsys.readouterr().out
        (group,) = pushed_groups(url)
        assert group["labels"] == {"job": "reliability_report", "cluster": CLUSTER}
        metrics = json.loads((report / "metrics.json").read_text())
        assert metrics == month_metrics(history["reports"], month) | {"reproduce": metrics["reproduce"]}
        rates = {
            m["labels"]["definition"]: float(m["value"]) for m in group["reliability_node_failure_rate"]["metrics"]
        }
        assert rates == {d: metrics["node_failure_rate"][d]["value"] for d in ("paper", "all")}
        pushed_at = group["push_time_seconds"]["metrics"][0]["value"]

        assert main(["run", "--month", month, "--config", str(config)]) == 0  # the same figures again
        assert "not pushed again: these figures went to the pushgateway" in capsys.readouterr().out
        (again,) = pushed_groups(url)
        assert again["push_time_seconds"]["metrics"][0]["value"] == pushed_at  # no second push

    # The Pushgateway gone, a month whose push is due (a sent-log without it): delivery, the run's last
    # stage, reaches nobody; one line naming the key, and the sent-log and the report as they were.
    unreachable = load_config(own_config(history, tmp_path, "data-unreachable", url))
    log = SentLog.for_cluster(unreachable.data_dir, CLUSTER)
    before = {p: p.read_bytes() for p in report.rglob("*") if p.is_file()}
    with pytest.raises(DeliveryError) as error:
        deliver_report(unreachable, MonthSubject(Month.parse(month)), report)
    assert str(error.value).startswith(f"pushgateway: [prometheus] pushgateway_url {url}: no answer after 1 attempt (")
    assert "\n" not in str(error.value) and log.records() == []
    assert {p: p.read_bytes() for p in report.rglob("*") if p.is_file()} == before
