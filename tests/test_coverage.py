"""Issue 51, items 1-2: a month is reported over the window its job records observe.

A dump windowed by end time (Open XDMoD's, many sites') holds no job that ended before its window:
a dump of a month's last two days used to be reported as the whole month, with no word. Now the
records' own evidence (flows/core/months.py observed_start) gives where they begin; every
exposure figure is computed over that window, and every output says it (flows/figures/coverage.py).
The oracle is the simulator's truth over the same window (`dump_starts`), over several seeds; the
real case is Open XDMoD's reference dump of phillips (tests/data/xdmod/phillips.log)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flows.cli import main
from flows.core.months import LATE_START_ENDS, Month, observed_start
from flows.delivery.fingerprint import Figures
from flows.figures.coverage import observed_period
from flows.ingest.manifest import Manifest
from flows.ingest.month_records import count_month_records
from simulator.dumps import simulate
from simulator.params import SimParams

DATA = Path(__file__).parent / "data"
PHILLIPS = DATA / "xdmod" / "phillips.log"  # every job ended 2016-12-30..2017-01-01 (or is open)
OCTOBER = Month.parse("2026-10")
CUT = datetime(2026, 10, 30)  # the simulated dumps begin here (naive UTC, as the marts' times)


def hours(n: float) -> timedelta:
    return timedelta(hours=n)


# --- the rule, on its own


def test_records_whose_ends_begin_late_at_a_busy_rate_begin_at_the_hour_of_their_first_end() -> None:
    start = OCTOBER.start.replace(tzinfo=None)
    first = CUT + timedelta(minutes=7, seconds=3)
    # 200 ends over the last two days: 100 an hour... none in the 29 days before
    assert observed_start(OCTOBER, 200, first, first + hours(47)) == CUT
    # an activity window: jobs end from its first minutes
    assert observed_start(OCTOBER, 5000, start + timedelta(minutes=3), start + hours(740)) == start
    # a quiet cluster: 4 ends in the month say nothing of where its records begin
    assert observed_start(OCTOBER, 4, start + hours(60), start + hours(700)) == start
    # nothing ended, or one End: no rate to judge by
    assert observed_start(OCTOBER, 0, None, None) == start
    assert observed_start(OCTOBER, 1, first, first) == start


def test_the_threshold_is_the_ends_the_rate_expects_before_the_first() -> None:
    """At one End an hour, a first End LATE_START_ENDS hours in is late; one hour less is not."""
    start = OCTOBER.start.replace(tzinfo=None)
    ends = 600
    rate_hours = ends - 1  # first..last spans ends - 1 hours: one End an hour
    late = start + hours(LATE_START_ENDS)
    assert observed_start(OCTOBER, ends, late, late + hours(rate_hours)) == late
    early = start + hours(LATE_START_ENDS - 1)
    assert observed_start(OCTOBER, ends, early, early + hours(rate_hours)) == start


# --- the count before any work (`check --month`), on the real dump and on simulated ones


def test_the_real_end_windowed_dump_observes_december_from_its_30th(tmp_path: Path, capsys) -> None:
    """phillips.log: `check --month 2016-12` used to say "its records run 2016-12-22 to 2017-01-01"
    (the earliest Start) and nothing of where they begin; `run` reported the whole month."""
    months = [Month.parse("2016-12"), Month.parse("2017-01")]
    found = count_month_records("sacct_xdmod", PHILLIPS, months)
    assert found.observed_from[months[0]] == datetime(2016, 12, 30)
    assert found.observed_from[months[1]] == datetime(2017, 1, 1)
    config = tmp_path / "phillips.toml"
    config.write_text(
        f'cluster = "phillips"\n\n[[sources]]\nkind = "sacct_xdmod"\npath = "{PHILLIPS}"\n\n'
        '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "w.duckdb"\n'
    )
    assert main(["check", "--config", str(config), "--month", "2016-12"]) == 0
    out = capsys.readouterr().out
    assert "they observe 2016-12 only from 2016-12-30 00:00 UTC" in out and "partial month" in out
    assert main(["check", "--config", str(config), "--month", "2017-01"]) == 0
    assert "they observe" not in capsys.readouterr().out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_simulated_dump_of_the_last_two_days_observes_them(tmp_path: Path, seed: int) -> None:
    simulate(SimParams("cut", OCTOBER, nodes=16, seed=seed, dump_starts=30), tmp_path)
    found = count_month_records("sacct_psv", tmp_path / "sacct.psv", [OCTOBER])
    assert found.observed_from[OCTOBER] == CUT
    whole = tmp_path / "whole"
    simulate(SimParams("cut", OCTOBER, nodes=16, seed=seed), whole)
    assert count_month_records("sacct_psv", whole / "sacct.psv", [OCTOBER]).observed_from[OCTOBER] == datetime(
        2026, 10, 1
    )


# --- the period every output shows


def manifest(
    observed: datetime | None, as_of: datetime, node_first: datetime | None = None, node_records: int = 500
) -> Manifest:
    """A landed month's manifest; with `node_first`, an NHC log of `node_records` records from then to the month's end."""
    entry = {"file": "x", "records": 1, "sha256": "0", "quarantined": 0, "dst_ambiguous_times": 0}
    entry |= {"dst_nonexistent_times": 0}
    sources = {"sacct_psv": entry}
    if node_first is not None:
        last = datetime(2026, 10, 31, 23)
        sources["nhc_syslog"] = {**entry, "records": node_records, "first_record": node_first, "last_record": last}
    return Manifest.model_validate(
        {"sources": sources, "quarantine_sample": [], "as_of": {"time": as_of}, "observed_start": observed}
    )


def test_the_period_names_the_window_and_why() -> None:
    after = datetime(2026, 11, 1, 6)
    whole = observed_period(OCTOBER, manifest(None, after))
    assert whole["complete"] and whole["notice"] is None and whole["start"] == "2026-10-01T00:00:00"
    cut = observed_period(OCTOBER, manifest(CUT, after))
    assert (cut["start"], cut["end"], cut["complete"]) == ("2026-10-30T00:00:00", "2026-11-01T00:00:00", False)
    assert (cut["month_start"], cut["month_end"], cut["observed_days"]) == (
        "2026-10-01T00:00:00",
        "2026-11-01T00:00:00",
        2.0,
    )
    assert cut["notice"] == (
        "Partial month: the figures cover 2026-10-30 00:00 to 2026-11-01 00:00 UTC, 2.0 of its 31 days: "
        "its job records begin 2026-10-30 00:00 UTC (no job ended before then)."
    )
    both = observed_period(OCTOBER, manifest(CUT, datetime(2026, 10, 31, 12)))
    assert both["notice"].endswith("(no job ended before then); its records were taken 2026-10-31 12:00 UTC.")


def test_a_node_source_that_begins_a_week_late_is_named_but_does_not_shorten_the_window() -> None:
    late = observed_period(OCTOBER, manifest(None, datetime(2026, 11, 1, 6), node_first=datetime(2026, 10, 8, 6)))
    assert late["complete"] and late["start"] == "2026-10-01T00:00:00"
    assert late["late_node_sources"] == {"nhc_syslog": "2026-10-08T06:00:00"}
    assert late["notice"] == (
        "nhc_syslog's first record is of 2026-10-08 06:00 UTC: faults before then are missing from the attribution, "
        "the failures by cause, the fleet's fault rate and the lemon signals."
    )
    # a log of failures only, five a month, whose first is on the 8th: nothing says it began late
    sparse = observed_period(
        OCTOBER, manifest(None, datetime(2026, 11, 1, 6), datetime(2026, 10, 8, 6), node_records=5)
    )
    assert sparse["late_node_sources"] == {} and sparse["notice"] is None
    # within the job records' window (they begin on the 30th): nothing to say of it
    inside = observed_period(OCTOBER, manifest(CUT, datetime(2026, 11, 1, 6), node_first=datetime(2026, 10, 8, 6)))
    assert inside["late_node_sources"] == {} and "nhc_syslog" not in inside["notice"]


# --- whole months built: the figures over the window equal the truth's, and every output says so


def as_read(page: Path) -> str:
    """A page's text with its no-break spaces (a number kept with its unit) read as spaces."""
    return page.read_text().replace("&nbsp;", " ").replace("\u00a0", " ")


def epoch(naive_utc: str) -> float:
    return datetime.fromisoformat(naive_utc).replace(tzinfo=UTC).timestamp()


def built_cut_month(root: Path, seed: int, fresh_warehouse, health: bool) -> tuple[dict, Path]:
    """A simulated October whose job records begin on the 30th (with `health`, beside an NHC log and
    a kernel log that begin on the 8th), built by `run`: its truth and its report directory."""
    logs = root / "logs"
    params = SimParams("cut", OCTOBER, nodes=16, seed=seed, dump_starts=30, r_f=40.0, duration_scale=0.5)
    params = replace(params, health_starts=8) if health else replace(params, sources="jobs_only")
    truth = simulate(params, logs)
    sources = '[[sources]]\nkind = "sacct_psv"\npath = "logs/sacct.psv"\n'
    if health:
        sources += '\n[[sources]]\nkind = "nhc_syslog"\npath = "logs/nhc.log"\n'
        sources += '\n[[sources]]\nkind = "xid_syslog"\npath = "logs/xid.log"\n'
    config = root / "cut.toml"
    config.write_text(
        f'cluster = "cut"\n\n{sources}\n[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "w.duckdb"\n'
    )
    fresh_warehouse(config)
    assert main(["run", "--config", str(config), "--month", str(OCTOBER)]) == 0
    return truth, root / "reports" / "cut" / str(OCTOBER)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "health"), [(1, False), (2, False), (3, True)], ids=["1", "2", "3-with-health"])
def test_a_month_cut_to_its_last_two_days_is_reported_over_them(
    tmp_path, fresh_warehouse, capsys, seed, health
) -> None:
    truth, report = built_cut_month(tmp_path, seed, fresh_warehouse, health)
    console = capsys.readouterr().out
    metrics = json.loads((report / "metrics.json").read_text())
    period = metrics["period"]
    assert (period["start"], period["end"], period["complete"]) == ("2026-10-30T00:00:00", "2026-11-01T00:00:00", False)
    assert period["late_node_sources"] == {}  # the health logs begin before the job records' window
    # exposure over the window, as the truth has it over the same window
    rate, true_rate = metrics["node_failure_rate"]["all"], truth["r_f_per_1000_node_days"]["all"]
    assert rate["node_days"] == pytest.approx(true_rate["node_days"], rel=1e-9)
    assert metrics["totals"]["gpu_node_days"] == pytest.approx(true_rate["node_days"], rel=1e-9)
    assert metrics["fleet_fault_rate"]["node_days"] == pytest.approx(truth["fleet"]["node_days"], rel=1e-9)
    for row in metrics["mttf_by_size"]:
        assert row["runtime_hours"] == pytest.approx(truth["size_buckets"][row["size_bucket"]]["runtime_hours"])
    assert metrics["totals"]["gpu_attempts"] == truth["gpu_attempts"]
    if health:  # attribution needs the health logs: every injected failure of the window found
        assert rate["failures"] == true_rate["failures"] == len(truth["infra_failures"]) > 0
    # every output says the window
    notice = period["notice"]
    assert notice.startswith("Partial month: the figures cover 2026-10-30 00:00 to 2026-11-01 00:00 UTC")
    for page in ("report.html", "email.html", "report.txt"):
        assert notice in as_read(report / page), page
    assert notice in as_read(report.parents[1] / "index.html")  # the archive's card
    assert notice in console.splitlines()
    assert notice in Figures.of(report).lines  # the chat message's lines
    prom = (report / "metrics.prom").read_text()
    assert f'reliability_period_start_timestamp_seconds{{cluster="cut"}} {epoch(period["start"]):.7e}' in prom


@pytest.mark.slow
def test_the_real_dump_of_two_days_is_a_partial_december(tmp_path: Path, fresh_warehouse) -> None:
    """phillips.log, job records only: December used to be reported whole, `complete: true`."""
    config = tmp_path / "phillips.toml"
    config.write_text(
        f'cluster = "phillips"\n\n[[sources]]\nkind = "sacct_xdmod"\npath = "{PHILLIPS}"\n\n'
        '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "w.duckdb"\n'
    )
    fresh_warehouse(config)
    assert main(["run", "--config", str(config), "--month", "2016-12"]) == 0
    report = tmp_path / "reports" / "phillips" / "2016-12"
    period = json.loads((report / "metrics.json").read_text())["period"]
    assert (period["start"], period["end"], period["complete"]) == ("2016-12-30T00:00:00", "2017-01-01T00:00:00", False)
    assert period["notice"] in as_read(report / "report.html")
