"""What a `[[sources]]` table says of its source (issue 51, items 5-7): the zone of its times
(`timezone`, default `site_timezone`), how its node names map to the scheduler's (`node_names`),
and that a server source which is not there is one line in seconds, not a minute of retries.

Quick tier: no month is built; the landing and the landed-data suites run on the real Slurm
22.05 dump (node1, node2), Open XDMoD's sample dump and a few syslog lines."""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from flows import EXPECTATIONS_DIR
from flows.cli import main
from flows.config.file import load_config
from flows.core.errors import ConfigError
from flows.core.months import Month
from flows.ingest.land import land_month
from flows.ingest.sources.http_client import PullError
from flows.quality.suites import validate_month
from flows.warehouse.engines import DuckDBMarts

XDMOD_DUMP = Path(__file__).resolve().parent / "data" / "xdmod" / "accounting-logs.log"
XID = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
NOVEMBER = Month.parse("2026-11")  # the Slurm 22.05 dump's month
# a JWT whose claims name its user (slurmrestd's X-SLURM-USER-NAME), never sent anywhere
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJyb290In0.c2lnbmF0dXJl"


def write_config(tmp_path: Path, sources: str, top: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'cluster = "ci"\n{top}\n{sources}\n[paths]\ndata = "data"\n')
    return path


# ---- item 5: a time zone per source --------------------------------------------------------------------------


def test_each_source_reads_its_times_without_an_offset_in_its_own_zone(tmp_path, capsys):
    """A site whose syslog is local (America/New_York) and whose XDMoD dump is `TZ=UTC sacct` output:
    the dump's times land as written, the syslog's 4 h later (EDT); `check` prints each source's zone,
    and `parse --config` reads the file in its source's zone."""
    shutil.copy(XDMOD_DUMP, tmp_path / "x.log")
    (tmp_path / "xid.log").write_text(f"Jul  1 02:00:00 d07n07s02 {XID}\n")
    config = write_config(
        tmp_path,
        '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\ntimezone = "UTC"\n\n'
        '[[sources]]\nkind = "xid_syslog"\npath = "xid.log"\n',
        top='site_timezone = "America/New_York"\n',
    )
    landed = land_month(load_config(config), Month.parse("2015-07"))
    ends = {row["job_id"]: row["end_at"] for row in pq.read_table(landed / "attempts.parquet").to_pylist()}
    assert ends["4103947"] == datetime(2015, 7, 1, 2, 55, 50)  # as dumped: UTC, not shifted by 4 h
    assert pq.read_table(landed / "xid_events.parquet")["ts"].to_pylist() == [datetime(2015, 7, 1, 6, 0, 0)]

    assert main(["check", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "sources: sacct_xdmod (times in UTC), xid_syslog (times in America/New_York)" in out

    assert main(["parse", "--kind", "sacct_xdmod", str(tmp_path / "x.log"), "--config", str(config), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert next(r for r in rows if r.get("job_id") == "4103947")["end_at"] == "2015-07-01T02:55:50"


@pytest.mark.parametrize(
    ("table", "said"),
    [
        (
            '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\ntimezone = "Europe/Pariss"\n',
            "[[sources]] #1 (kind \"sacct_xdmod\"): timezone must be an IANA time zone such as 'UTC' or "
            "'America/New_York' (did you mean 'Europe/Paris'?), got 'Europe/Pariss'",
        ),
        (
            '[[sources]]\nkind = "sacct_command"\ncommand = ["sacct"]\ntimezone = "UTC"\n',
            "[[sources]] #1 (kind \"sacct_command\"): timezone is a file source's: a pull's times are UTC",
        ),
    ],
)
def test_a_source_zone_that_is_no_zone_is_one_line_naming_the_key(tmp_path, table, said):
    with pytest.raises(ConfigError) as raised:
        load_config(write_config(tmp_path, table))
    assert said in str(raised.value) and "\n" not in str(raised.value)


# ---- item 6: a server that is not there fails fast -----------------------------------------------------------


def _server_config(tmp_path: Path, slurm_fixtures: Path, kind: str, url: str) -> Path:
    """A config whose `kind` server source is at `url`, with the source's default attempts (4) and
    waits (10 s, 20 s, 40 s): a retried refusal would take 70 s."""
    jobs = f'[[sources]]\nkind = "sacct_psv"\npath = "{slurm_fixtures}/sacct_fields_allocations.psv"\n\n'
    return write_config(
        tmp_path, ("" if kind == "slurmrestd" else jobs) + f'[[sources]]\nkind = "{kind}"\nurl = "{url}"\n'
    )


@pytest.mark.parametrize("kind", ["slurmrestd", "prometheus_dcgm"])
@pytest.mark.parametrize("where", ["a closed port", "a name that does not resolve"])
def test_a_server_that_is_not_there_is_one_line_within_seconds_at_check_and_at_the_pull(
    tmp_path, capsys, monkeypatch, slurm_fixtures, unused_port, kind, where
):
    monkeypatch.setenv("SLURM_JWT", JWT)
    url = f"http://127.0.0.1:{unused_port}" if where == "a closed port" else "http://head.example.invalid:6820"
    config = _server_config(tmp_path, slurm_fixtures, kind, url)
    started = time.monotonic()
    assert main(["check", "--config", str(config), "--month", str(NOVEMBER)]) == 2
    assert time.monotonic() - started < 5
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and f"source {kind}: {url}/" in line and ": cannot connect (" in line
    assert ("does not resolve" if "invalid" in url else "refused") in line and "gave up" not in line

    started = time.monotonic()
    with pytest.raises(PullError, match=r"cannot connect \(.*\): is the server up and `url` right\?$"):
        land_month(load_config(config), NOVEMBER)
    assert time.monotonic() - started < 5


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- item 7: node names reconciled across sources ------------------------------------------------------------


def _landed_with_fqdn_syslog(tmp_path: Path, slurm_fixtures: Path, node_names: str = "") -> Path:
    """The Slurm dump (node1, node2) and an Xid syslog naming the nodes by fully qualified names."""
    shutil.copy(slurm_fixtures / "sacct_fields_allocations.psv", tmp_path / "sacct.psv")
    lines = [f"2026-11-22T03:22:0{i}+00:00 node{i}.cluster.local {XID}" for i in (1, 2)]
    (tmp_path / "xid.log").write_text("\n".join(lines) + "\n")
    sources = (
        '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n\n[[sources]]\nkind = "xid_syslog"\npath = "xid.log"\n'
    )
    return land_month(load_config(write_config(tmp_path, sources + node_names)), NOVEMBER)


def _node_names_warnings(tmp_path: Path, landed: Path) -> list[dict]:
    suites = tmp_path / "suites"
    suites.mkdir(exist_ok=True)
    (suites / "node_names.json").write_bytes((EXPECTATIONS_DIR / "node_names.json").read_bytes())
    results = validate_month(
        tmp_path / "none.duckdb", NOVEMBER, suites_dir=suites, landed_dir=landed, marts=DuckDBMarts(duckdb.connect())
    )
    (checked,) = [r for r in results if r.suite == "node_names"]
    assert checked.rows == 1 and not checked.failures  # one source checked; a warning at most
    return checked.warnings


def test_a_health_source_naming_nodes_by_fqdn_is_counted_with_the_domain_suffix_named(tmp_path, slurm_fixtures):
    landed = _landed_with_fqdn_syslog(tmp_path, slurm_fixtures)
    (check,) = json.loads((landed / "manifest.json").read_text())["node_names"]
    assert (check["source"], check["nodes"], check["not_in_job_records"]) == ("xid_syslog", 2, 2)
    (warning,) = _node_names_warnings(tmp_path, landed)
    assert warning["unexpected_count"] == 1
    assert warning["sample"] == [
        "xid_syslog: 2 of the 2 nodes it names are in no job record or Slurm node event (e.g. node1.cluster.local "
        "(xid.log:1), node2.cluster.local (xid.log:2)), so their events attribute to no job; likely cause: a domain "
        'suffix (node1.cluster.local is node1 there; it maps 2 of the 2): set node_names = "strip_domain" on its '
        "[[sources]] (docs/sources.md)"
    ]


def test_a_declared_node_name_mapping_lands_the_events_on_the_jobs_nodes(tmp_path, slurm_fixtures):
    landed = _landed_with_fqdn_syslog(tmp_path, slurm_fixtures, node_names='node_names = "strip_domain"\n')
    assert pq.read_table(landed / "xid_events.parquet")["node"].to_pylist() == ["node1", "node2"]
    job_nodes = set(pq.read_table(landed / "host_list_members.parquet")["node"].to_pylist())
    assert job_nodes >= {"node1", "node2"}
    (check,) = json.loads((landed / "manifest.json").read_text())["node_names"]
    assert (check["nodes"], check["not_in_job_records"], check["finding"]) == (2, 0, None)
    assert _node_names_warnings(tmp_path, landed) == []


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('node_names = "strip_domains"', 'node_names #1 must be one of "strip_domain", "lowercase"'),
        ('node_names = ["lowercase", "strip_prefix:"]', "not 'strip_prefix:'"),
    ],
)
def test_a_node_name_mapping_is_checked_as_the_config_loads(tmp_path, setting, said):
    sources = f'[[sources]]\nkind = "sacct_psv"\npath = "s.psv"\n\n[[sources]]\nkind = "xid_syslog"\npath = "x.log"\n{setting}\n'
    with pytest.raises(ConfigError, match=r"\[\[sources\]\] #2 \(kind \"xid_syslog\"\): ") as raised:
        load_config(write_config(tmp_path, sources))
    assert said in str(raised.value)


def test_the_job_records_take_no_node_name_mapping(tmp_path):
    with pytest.raises(ConfigError, match="node_names maps a health source's node names to the scheduler's"):
        load_config(
            write_config(tmp_path, '[[sources]]\nkind = "sacct_psv"\npath = "s.psv"\nnode_names = "lowercase"\n')
        )
