"""Publishing without building a month (the quick tier): the OpenMetrics writers against a month's
metrics.json, the [prometheus] config section, the Pushgateway's failure message, the history
export and the archive site's HTML. The real promtool, Prometheus, Pushgateway and Chromium are in
test_publish_prometheus.py and test_publish_archive.py."""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from saved_month import saved_metrics

from flows.config.file import load_config, starter_config
from flows.core.errors import ConfigError, UsageError
from flows.delivery import pushgateway
from flows.delivery.mailer import DeliveryError
from flows.delivery.sent_log import SENT, SentLog, SentRecord
from flows.figures.document import MonthDocument
from flows.publish import archive
from flows.publish.history import export_history
from flows.report import openmetrics

HOSTILE = 'rack"7\\b\n<script>alert(1)</script>'
# a lemon-node candidate, for the series that label a node
CANDIDATE = {
    "node": "pub-n07",
    "rules": ["repeat_offender"],
    "p_value": 2.5e-05,
    "incident_p_value": None,
    "repeat_p_value": 2.5e-05,
    "incident_hours": 7.5,
    "failure_incidents": 4,
    "most_incidents_within_repeat_days": 3,
    "xid_cnt": 2,
    "out_count": 3,
    "tickets": 0,
    "multi_node_node_fails": 1,
    "single_node_node_fails": 3,
    "single_node_node_failure_rate": None,
    "failures": ["2026-09-03T01:00:00"] * 4,
}


@pytest.fixture
def september() -> dict:
    """The saved month's metrics.json (tests/saved_month.py) as September 2026 of cluster `pub`, with
    a lemon-node candidate."""
    metrics = saved_metrics()
    metrics.update(
        cluster="pub",
        month="2026-09",
        period={"start": "2026-09-01T00:00:00", "end": "2026-10-01T00:00:00", "complete": True},
    )
    metrics["lemon_nodes"]["candidates"] = [CANDIDATE]
    return metrics


def document(metrics: dict) -> MonthDocument:
    return MonthDocument.model_validate(metrics)


def utc(*day: int) -> int:
    return int(datetime(*day, tzinfo=UTC).timestamp())


def samples(text: bytes) -> dict[tuple, tuple[float, object]]:
    """(name, sorted labels, timestamp) -> value, parsed with prometheus_client's OpenMetrics parser."""
    found = {}
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            at = None if s.timestamp is None else int(float(s.timestamp))
            key = (s.name, tuple(sorted(s.labels.items())), at)
            assert key not in found, key
            found[key] = s.value
    return found


def test_metrics_prom_holds_each_figure_in_base_units_without_timestamps(september):
    text = openmetrics.month_exposition(document(september))
    assert text.endswith(b"# EOF\n")
    got = samples(text)
    assert all(ts is None for _, _, ts in got)
    one = {(name, labels): value for (name, labels, _), value in got.items()}
    c = ("cluster", "pub")
    rf = september["node_failure_rate"]
    for d in ("paper", "all"):
        assert one[("reliability_node_failure_rate", (c, ("definition", d)))] == rf[d]["value"]
        assert one[("reliability_node_failure_rate_lower", (c, ("definition", d)))] == rf[d]["lower"]
        assert one[("reliability_node_failure_rate_upper", (c, ("definition", d)))] == rf[d]["upper"]
    for b in september["mttf_by_size"]:
        key = (c, ("size_gpus", b["size_bucket"]))
        if b["mttf_hours"] is None:
            assert ("reliability_mttf_seconds", key) not in one  # no failure: only the lower bound
        else:
            assert one[("reliability_mttf_seconds", key)] == pytest.approx(b["mttf_hours"] * 3600, rel=1e-12)
        assert one[("reliability_mttf_lower_seconds", key)] == pytest.approx(b["mttf_lower_hours"] * 3600, rel=1e-12)
    for cause in september["failures_by_cause"]:
        assert one[("reliability_cause_failures", (("cause", cause["category"]), c))] == cause["failures"]
    lost = september["lost_goodput"]
    assert one[("reliability_lost_gpu_seconds", (c, ("order", "first")))] == lost["first_order_gpu_hours"] * 3600
    assert one[("reliability_lost_goodput_ratio", (c,))] == lost["share_of_gpu_hours"]
    assert one[("reliability_lemon_candidates", (c,))] == len(september["lemon_nodes"]["candidates"])
    assert one[("reliability_month_end_timestamp_seconds", (c,))] == utc(2026, 10, 1)
    status = september["summary"]["data_quality"]["status"]
    assert one[("reliability_data_quality_status", (c, ("status", status)))] == 1
    names = {name for name, _ in one}
    assert all(re.fullmatch(r"reliability_[a-z_]+", n) and not n.endswith("_total") for n in names)


def test_the_history_has_every_month_at_its_end_each_series_in_time_order(september):
    august = copy.deepcopy(september)
    august.update(
        month="2026-08", period={**september["period"], "start": "2026-08-01T00:00:00", "end": "2026-09-01T00:00:00"}
    )
    august["node_failure_rate"]["all"]["value"] = 1.5
    text = openmetrics.history_exposition([document(september), document(august)])  # any order in, time order out
    got = samples(text)
    rf = {
        ts: v
        for (n, labels, ts), v in got.items()
        if n == "reliability_node_failure_rate" and ("definition", "all") in labels
    }
    assert rf == {utc(2026, 9, 1): 1.5, utc(2026, 10, 1): september["node_failure_rate"]["all"]["value"]}
    lines = [line for line in text.decode().splitlines() if line.startswith("reliability_node_failure_rate{")]
    series = [(line.split("}")[0], int(line.rsplit(" ", 1)[1])) for line in lines]
    assert series == sorted(series)  # grouped by series, each in time order


def test_hostile_names_stay_label_values(september):
    september["cluster"] = HOSTILE
    september["lemon_nodes"]["candidates"][0]["node"] = HOSTILE
    got = samples(openmetrics.month_exposition(document(september)))
    assert any(dict(labels).get("node") == HOSTILE and dict(labels)["cluster"] == HOSTILE for _, labels, _ in got)


def write_config(tmp_path: Path, extra: str = "") -> Path:
    config = tmp_path / "c.toml"
    config.write_text(
        'cluster = "pub"\n[[sources]]\nkind = "sacct_psv"\npath = "x/{month}.psv"\n'
        f'[paths]\nreports = "reports"\ndata = "data"\nwarehouse = "w.duckdb"\n{extra}'
    )
    return config


@pytest.mark.parametrize(
    "section, message",
    [
        (
            '[prometheus]\npushgateway_ur = "http://pg:9091"\n',
            "[prometheus] unknown key 'pushgateway_ur' (did you mean 'pushgateway_url'?)",
        ),
        (
            '[prometheus]\npushgateway_url = "pg:9091"\n',
            "[prometheus] pushgateway_url must be an http:// or https:// URL, got 'pg:9091'",
        ),
        (
            '[prometheus]\npushgateway_url = "http://pg:9091"\njob = "a b"\n',
            "[prometheus] job must be a Prometheus job name",
        ),
    ],
)
def test_a_bad_prometheus_key_is_one_line_naming_it(tmp_path, section, message):
    with pytest.raises(ConfigError) as error:
        load_config(write_config(tmp_path, section))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_the_starter_config_documents_the_prometheus_section(tmp_path):
    text = starter_config("pub")
    assert "# [prometheus]" in text and "# pushgateway_url = " in text
    section = "\n".join(line[2:] for line in text.split("# [prometheus]\n", 1)[1].splitlines() if line.startswith("# "))
    config = load_config(write_config(tmp_path, "[prometheus]\n" + section + "\n"))
    assert config.prometheus.pushgateway_url == "http://pushgateway:9091"


def test_an_unreachable_pushgateway_is_one_line_naming_the_key(tmp_path, september):
    from local_servers import free_port

    config = load_config(
        write_config(tmp_path, f'[prometheus]\npushgateway_url = "http://127.0.0.1:{free_port()}"\nsend_attempts = 1\n')
    )
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "metrics.json").write_text(json.dumps(september))
    with pytest.raises(DeliveryError) as error:
        pushgateway.push(tmp_path / "m", config.prometheus)
    message = str(error.value)
    assert message.startswith("[prometheus] pushgateway_url http://127.0.0.1:") and "start the Pushgateway" in message
    assert "\n" not in message


def test_an_older_month_never_replaces_a_newer_one_on_the_pushgateway(tmp_path):
    log = SentLog(tmp_path / "log.jsonl")
    log.append(SentRecord("pub", "2026-09", SENT, "f", "", (), "", "report", channel=pushgateway.CHANNEL))
    log.append(SentRecord("pub", "2026-10", SENT, "f", "", (), "", "report", channel="email"))
    assert pushgateway.later_month_pushed(log, "2026-08") == "2026-09"
    assert pushgateway.later_month_pushed(log, "2026-09") is None


def built_reports(tmp_path: Path, september: dict, clusters: tuple[str, ...] = ("pub",)) -> Path:
    """A reports directory with August and September of each cluster: metrics.json and a report.html
    with the archive's empty markers, as the pipeline writes them."""
    reports = tmp_path / "reports"
    for cluster in clusters:
        for month in ("2026-08", "2026-09"):
            month_dir = reports / cluster / month
            month_dir.mkdir(parents=True)
            metrics = {**copy.deepcopy(september), "cluster": cluster, "month": month}
            (month_dir / "metrics.json").write_text(json.dumps(metrics))
            (month_dir / "report.html").write_text(f"<html><body>{archive.NAV_START}{archive.NAV_END}<h1>{month}</h1>")
            (month_dir / "report.txt").write_text("text")
    return reports


class Elements(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_the_archive_escapes_hostile_names_and_links_every_report(tmp_path, september):
    name = '<img src=x onerror=alert(1)> "q" #?%'
    september["summary"]["text"] = "Lemon: <script>alert(2)</script>"
    reports = built_reports(tmp_path, september, clusters=("pub", name))
    archive.refresh_archive(reports)
    html = (reports / "index.html").read_text()
    page = Elements(html)
    assert all(tag != "script" and not any(a.startswith("on") for a in attrs) for tag, attrs in page.elements)
    assert name in "".join(page.text) and "<script>alert(2)</script>" in "".join(page.text)
    links = {attrs["href"] for tag, attrs in page.elements if tag == "a" and not attrs["href"].startswith("#")}
    from urllib.parse import unquote

    assert all((reports / unquote(link)).is_file() for link in links), links
    assert {f"{c}/{m}/report.html" for c in ("pub", name) for m in ("2026-08", "2026-09")} <= {
        unquote(x) for x in links
    }


def test_each_report_links_to_the_index_and_its_neighbours_and_a_rerun_is_identical(tmp_path, september):
    reports = built_reports(tmp_path, september)
    study = reports / "studies" / "pub_2026-08_2026-09"
    study.mkdir(parents=True)
    (study / "report.html").write_text(f"<html><body>{archive.NAV_START}{archive.NAV_END}")
    archive.refresh_archive(reports, "pub")
    study_html = (study / "report.html").read_text()
    assert 'href="../../index.html"' in study_html and "rel=" not in study_html  # the index only
    august = (reports / "pub" / "2026-08" / "report.html").read_text()
    sept = (reports / "pub" / "2026-09" / "report.html").read_text()
    assert 'href="../../index.html"' in august and 'href="../2026-09/report.html"' in august
    assert 'href="../2026-08/report.html"' in sept and "2026-10" not in sept
    before = {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    archive.refresh_archive(reports, "pub")
    assert {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()} == before
    assert archive.without_nav(sept) == f"<html><body>{archive.NAV_START}{archive.NAV_END}<h1>2026-09</h1>"


def test_export_needs_a_built_month_and_writes_each_month_once(tmp_path, september):
    config = load_config(write_config(tmp_path))
    with pytest.raises(UsageError, match="no month built in 2026-01..2026-02"):
        from flows.core.months import Month

        export_history(config, None, Month.parse("2026-01"), Month.parse("2026-02"))
    built_reports(tmp_path, september)
    done = export_history(config, None, None, None)
    assert done.months == ["2026-08", "2026-09"] and done.path == tmp_path / "reports" / "pub" / "metrics-history.om"
    assert done.path.read_bytes().endswith(b"# EOF\n") and done.samples > 0


def test_the_export_leaves_out_a_month_it_cannot_read_and_says_so(tmp_path, september, caplog):
    """A damaged metrics.json (a run killed mid-write, a hand edit) is left out with a warning naming
    it, and counted; the other months are exported. None readable: one error with the rebuild command."""
    from flows.core.months import Month

    config = load_config(write_config(tmp_path))
    reports = built_reports(tmp_path, september)
    (reports / "pub" / "2026-08" / "metrics.json").write_text('{"schema_version": 4, "mon')
    done = export_history(config, None, None, None)
    assert done.months == ["2026-09"] and done.left_out == ["2026-08"] and done.samples > 0
    assert "2026-08 left out" in caplog.text and "not a readable metrics.json" in caplog.text
    broken = json.loads((reports / "pub" / "2026-09" / "metrics.json").read_text())
    broken["totals"]["attempts"] = "many"
    (reports / "pub" / "2026-09" / "metrics.json").write_text(json.dumps(broken))
    with pytest.raises(UsageError, match=r"no month's metrics.json could be read \(2026-08, 2026-09: .*--force"):
        export_history(config, None, Month.parse("2026-08"), None)


def test_the_export_command_says_where_it_wrote_and_how_to_load_it(tmp_path, september, capsys):
    from flows.cli import main

    config = write_config(tmp_path)
    assert main(["export-prometheus", "--config", str(config)]) == 2
    assert capsys.readouterr().err.startswith("error: pub: no month built in ")
    assert main(["export-prometheus", "--config", str(config), "--from", "2026-09", "--to", "2026-08"]) == 2
    assert capsys.readouterr().err == "error: --from 2026-09 is after --to 2026-08\n"
    built_reports(tmp_path, september)
    assert main(["export-prometheus", "--config", str(config), "--from", "2026-09"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pub 2026-09..2026-09: 1 month, ") and out[0].endswith("reports/pub/metrics-history.om")
    assert out[1].startswith("load it: promtool tsdb create-blocks-from openmetrics ") and "retention" in out[1]
