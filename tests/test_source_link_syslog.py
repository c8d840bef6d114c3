"""The format `link_syslog` (network links that went down, from syslog), as a format is added: its
module (flows/ingest/sources/link_syslog.py), its declaration (flows/ingest/sources/registry.py), its
taxonomy rows (dbt_project/seeds/failure_taxonomy.csv, source `link`) and this test: its reader on
real lines and on bad ones (hostile-input cases, tests/hostile.py), its rows landed with the declared
source, and its real lines classified by its taxonomy rows. docs/sources.md, "Adding a format"."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hostile import Outcome, hostile

from flows import DBT_PROJECT_DIR
from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.limits import DEFAULT_LIMITS
from flows.ingest.sources.link_syslog import LinkReadStats, read_link_syslog
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.registry import SOURCE_KINDS, landed_source
from flows.ingest.sources.tables import landed_table

UTC = ZoneInfo("UTC")
KIND = SOURCE_KINDS["link_syslog"]


def lenient() -> Quarantine:
    return Quarantine(strict=False)


def where(error: InputFormatError) -> tuple[str, int, str]:
    """The error's file name, line and field."""
    return Path(error.path).name, error.line, error.field


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def real_lines(health_fixtures: Path, tmp_path: Path) -> Path:
    with open(health_fixtures / "link_lines.tsv", newline="") as handle:
        lines = [row["raw_line"] for row in csv.DictReader(handle, delimiter="\t")]
    return write(tmp_path / "links.log", "\n".join(lines) + "\n")


@hostile(Outcome.FIGURE)
def test_real_link_lines_land_one_check_per_physical_link_down(health_fixtures: Path, tmp_path: Path):
    log = real_lines(health_fixtures, tmp_path)
    stats = LinkReadStats()
    rows = read_link_syslog(log, UTC, 2026, stats=stats).to_pylist()
    assert [(r["node"], r["check_name"], r["status"], r["source_line"]) for r in rows] == [
        ("hostname", "eth0", "Lost carrier", 1),
        ("hostname", "eth0.1", "Lost carrier", 2),
        ("str-s6100-acs-4", "eth0", "NIC Link is Down", 5),  # SONiC's severity word is not the host
        ("superserver", "eth11", "NIC Link is Down", 7),
        ("gpu0101", "ens9f0v5", "Link down", 8),
        ("gpu0101", "0000:0b:00.1", "Port module event: module 1, Cable unplugged", 9),
    ]
    assert rows[2]["ts"].isoformat() == "2026-04-09T21:05:38.106121"
    assert (stats.lines, stats.matched, stats.virtual_links, stats.other_lines) == (9, 7, 1, 2)  # tun0; ups


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(
            "Nov  3 10:00:01 gpu 2 kernel: ib0: Link is Down",
            "host",
            id="link-host-with-a-space",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "kernel: ib0: Link is Down", "timestamp", id="link-without-prefix", marks=hostile(Outcome.QUARANTINE)
        ),
    ],
)
def test_a_bad_link_line_is_quarantined_and_the_good_one_lands(tmp_path: Path, bad: str, field: str):
    good = "2026-11-03T10:00:00+00:00 gpu0001 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down"
    log = write(tmp_path / "links.log", f"{good}\n{bad}\n")
    quarantine = lenient()
    rows = read_link_syslog(log, UTC, 2026, quarantine=quarantine).to_pylist()
    assert [(r["node"], r["check_name"]) for r in rows] == [("gpu0001", "ibp59s0")]
    assert [where(e) for e in quarantine.errors] == [("links.log", 2, field)]


def test_its_rows_land_with_the_declared_source(health_fixtures: Path, tmp_path: Path):
    """Read through its declaration, as the landing does: the landed rows carry `link`."""
    path = real_lines(health_fixtures, tmp_path)
    found = KIND.read(lenient(), KIND.new_stats(), path=path, clock=LocalClock(UTC), year=2026, limits=DEFAULT_LIMITS)
    landed = landed_table(KIND.table, "c", KIND.source, found).to_pylist()
    assert len(landed) == 6 and {row["source"] for row in landed} == {"link"} == {landed_source(KIND.kind)}


def first_rule(source: str, signal_text: str) -> tuple[str, str] | None:
    """(category, severity) of the first taxonomy rule of `source` that `signal_text` matches."""
    with open(DBT_PROJECT_DIR / "seeds" / "failure_taxonomy.csv", newline="") as handle:
        rules = sorted((int(r["rule_order"]), r) for r in csv.DictReader(handle) if r["source"] == source)
    return next(((r["category"], r["severity"]) for _, r in rules if re.search(r["pattern"], signal_text)), None)


def test_its_real_lines_are_classified_by_its_taxonomy_rows(health_fixtures: Path, tmp_path: Path):
    """Its rules match `<interface>: <event>` (its declared signal): an ib* interface or a ConnectX
    cable event is an InfiniBand link, any other link Ethernet (the dbt model's unit test checks the
    same in SQL: int_health_events_classified.yml)."""
    assert KIND.signal == "check: status"
    rows = read_link_syslog(real_lines(health_fixtures, tmp_path), UTC, 2026).to_pylist()
    classified = [first_rule(KIND.source, f"{r['check_name']}: {r['status']}") for r in rows]
    assert classified == [("ethernet_link", "critical")] * 5 + [("infiniband_link", "critical")]
    assert first_rule(KIND.source, "ibp59s0: Link down") == ("infiniband_link", "critical")
