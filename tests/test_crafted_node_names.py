"""A crafted node name runs nothing (issue 50): through every reader that takes a node (`parse`),
`check --month`, the two server kinds' pulls, and a month's `run` (tests/test_spark.py builds the
same crafted records on the Spark engine). The names are tests/crafted_inputs.py's: each would run
`touch $CRAFTED_SENTINEL` in a shell. Each test asserts that the sentinel never appears, that
nothing reached the terminal but the product's own lines (no shell or sed error, no control
character), that every crafted record is quarantined naming its node field, and that the good
record beside it lands."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from crafted_inputs import (
    CRAFTED_NAMES,
    GOOD,
    MONTH,
    MONTH_NAMES,
    SENTINEL_VARIABLE,
    add_crafted_records,
    write_crafted_inputs,
)
from hostile import Outcome, hostile

from flows.cli import main
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.sources.registry import FILE_KINDS, SOURCE_KINDS
from simulator import SimParams, simulate

# what a shell, sed or ClusterShell would print; and any control character but the line end
FOREIGN = re.compile(r"sed: |/bin/sh|not found|unterminated|[\x00-\x08\x0b-\x1f\x7f]")
# the field each kind names for a node
NODE_FIELDS = {
    "sacct_psv": {"NodeList"},
    "sacct_xdmod": {"NodeList"},
    "sacct_json": {"nodes", "NodeList"},
    "sacctmgr_events_psv": {"NodeName"},
    "scontrol_nodes": {"NodeName"},
    "xid_syslog": {"host"},
    "nhc_syslog": {"host"},
    "link_syslog": {"host"},
    "xid_dmesg_dir": {"node folder"},
    "dcgm_health_dir": {"node folder"},
    "ipmi_sel_dir": {"node folder"},
    "gcm_health_dir": {"node"},
    "dcgm_series": {"Hostname", "node", "metric.Hostname"},
    "repair_tickets_csv": {"node"},
}


@pytest.fixture(scope="module")
def crafted(tmp_path_factory, slurm_fixtures: Path) -> dict[str, Path]:
    return write_crafted_inputs(slurm_fixtures, tmp_path_factory.mktemp("crafted"))


@pytest.fixture
def sentinel(tmp_path: Path, monkeypatch) -> Path:
    path = tmp_path / "ran"
    monkeypatch.setenv(SENTINEL_VARIABLE, str(path))
    return path


def test_the_inputs_cover_every_file_kind(crafted):
    assert set(crafted) == set(FILE_KINDS) == set(NODE_FIELDS)


@hostile(Outcome.QUARANTINE)
@pytest.mark.parametrize("kind", sorted(NODE_FIELDS))
def test_parse_runs_nothing_and_quarantines_each_crafted_name(kind, crafted, sentinel, capfd):
    code = main(["parse", "--json", "--kind", kind, str(crafted[kind])])
    out, err = capfd.readouterr()
    assert not sentinel.exists(), f"{kind}: a crafted node name ran a command"
    assert code == 0, err
    assert not FOREIGN.search(out + err), (out + err)[:2000]
    assert err == ""
    records = [json.loads(line) for line in out.splitlines()]
    rows = [r for r in records if "quarantined" not in r and "summary" not in r]
    quarantined = [r["quarantined"] for r in records if "quarantined" in r]
    named = {str(row.get("node") or row.get("node_list") or "") for row in rows}
    assert not named & set(CRAFTED_NAMES), f"{kind}: a crafted name landed"
    assert not any(name in str(row) for row in rows for name in ("@x", "touch", "example")), kind
    assert rows, f"{kind}: the good record did not land"
    if kind not in ("sacct_psv", "sacct_json", "sacctmgr_events_psv", "scontrol_nodes"):  # real nodes of tests/data
        assert GOOD in named
    crafted_values = [q for q in quarantined if any(c in q["value"] or c in q["reason"] for c in ("@x", "touch", "*"))]
    assert crafted_values, f"{kind}: no crafted record was quarantined: {quarantined}"
    assert {q["field"] for q in crafted_values} <= NODE_FIELDS[kind] | {"file"}, crafted_values


def test_check_month_runs_nothing(crafted, sentinel, tmp_path, capfd):
    kinds = [kind for kind in NODE_FIELDS if kind not in ("sacct_xdmod", "sacct_json")]  # one job-record kind
    sources = "".join(f'[[sources]]\nkind = "{kind}"\npath = "{crafted[kind]}"\n\n' for kind in kinds)
    config = tmp_path / "crafted.toml"
    config.write_text(f'cluster = "crafted"\n\n{sources}[paths]\ndata = "{tmp_path / "data"}"\n')
    code = main(["check", "--config", str(config), "--month", str(MONTH)])
    out, err = capfd.readouterr()
    assert not sentinel.exists()
    assert code == 0, out + err
    assert not FOREIGN.search(out + err), out + err


class _Answers(BaseHTTPRequestHandler):
    """A slurmrestd and a Prometheus on 127.0.0.1 in one: each GET is answered from `server.answers`
    by its path's first match (the crafted jobs and series)."""

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        body = next(answer for prefix, answer in self.server.answers.items() if path.startswith(prefix))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def crafted_servers(crafted) -> Iterator[str]:
    jobs = json.loads(crafted["sacct_json"].read_text())
    series = [json.loads(line) for line in crafted["dcgm_series"].read_text().splitlines()[1:]]
    matrix = [
        {"metric": s["metric"], "values": [[at, value] for first, last, value in s["runs"] for at in (first, last)]}
        for s in series
    ]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    httpd.answers = {
        "/openapi/v3": {"paths": {"/slurmdb/v0.0.40/jobs": {"get": {"parameters": [{"name": "skip_steps"}]}}}},
        "/slurmdb/v0.0.40/jobs": jobs,
        "/api/v1/query_range": {"status": "success", "data": {"resultType": "matrix", "result": matrix}},
    }
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.slow  # starts a server
@hostile(Outcome.QUARANTINE)
@pytest.mark.parametrize("kind", ["slurmrestd", "prometheus_dcgm"])
def test_a_servers_crafted_names_run_nothing(kind, crafted_servers, sentinel, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("SLURM_JWT", "e30.e30.x")
    source = SOURCE_KINDS[kind]
    chunks = {"chunk_hours": 744} if kind == "prometheus_dcgm" else {}
    settings = source.settings(kind=kind, url=crafted_servers, attempts=1, **chunks)
    pulled = source.pull(settings, MONTH, tmp_path / source.pulled_file)
    code = main(["parse", "--json", "--kind", source.provides, str(pulled)])
    out, err = capfd.readouterr()
    assert not sentinel.exists() and code == 0 and err == ""
    assert not FOREIGN.search(out), out[:2000]
    records = [json.loads(line) for line in out.splitlines()]
    quarantined = [r["quarantined"] for r in records if "quarantined" in r and "summary" not in r]
    assert {q["field"] for q in quarantined if "touch" in q["value"]} <= NODE_FIELDS[source.provides]
    assert len([q for q in quarantined if "touch" in q["value"]]) >= 4


@pytest.mark.slow  # builds a month
def test_a_month_run_with_crafted_names_runs_nothing(tmp_path: Path) -> None:
    """`reliability-report run` on a simulated month whose every file holds crafted records (the
    Spark engine builds the same in tests/test_spark.py): nothing ran, the terminal shows only the
    product's own lines, and the quarantine counts each crafted record."""
    first, last = Month.parse("2026-05"), Month.parse("2026-06")  # a range: one folder a month
    simulate(SimParams("crafted", first, last_month=last, nodes=16, seed=3), tmp_path / "sim" / "crafted")
    added = add_crafted_records(tmp_path / "sim" / "crafted" / str(first))
    config = write_demo_config(tmp_path, "crafted", tmp_path / "reports")
    sentinel = tmp_path / "ran"
    environment = {**os.environ, SENTINEL_VARIABLE: str(sentinel)}
    command = [sys.executable, "-m", "flows.cli", "run", "--config", str(config), "--month", str(first)]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)
    assert not sentinel.exists()
    assert done.returncode == 0, done.stderr[-3000:]
    assert not FOREIGN.search(done.stdout + done.stderr), (done.stdout + done.stderr)[-3000:]
    landed = tmp_path / "data" / "landed" / "crafted" / str(first)
    quarantined = [json.loads(line) for line in (landed / "quarantine.jsonl").read_text().splitlines()]
    assert len([q for q in quarantined if any(name in q["value"] for name in MONTH_NAMES)]) == added
