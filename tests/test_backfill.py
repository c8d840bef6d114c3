"""`reliability-report backfill`: months landed in order, built in one dbt build, then reported one
at a time; a month whose landing failed is reported and the others still build; months already built are skipped unless --force; only the months --email names
are sent (default: the latest), and every month says truthfully whether it was emailed or archived;
changed figures send a correction, and so do the later months whose comparisons they change. Email goes to a real SMTP server on 127.0.0.1. Several clusters
(--config repeated) are built side by side, each in its own process; a failed one stops no other."""

import json
import re
import shutil

import pytest
from conftest import email_section
from hostile import Outcome, hostile

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`


@pytest.fixture(scope="module")
def cluster(smtp_server, tmp_path_factory, fresh_warehouse):
    work = tmp_path_factory.mktemp("backfill")
    config = write_demo_config(work, "bf", work / "reports")
    config.write_text(config.read_text() + email_section(smtp_server.port))
    fresh_warehouse(config, "module")
    return {"work": work, "config": config}


def sim(cluster: dict, month: str, seed: int) -> None:
    simulate(SimParams("bf", Month.parse(month), nodes=16, seed=seed), cluster["work"] / "sim" / "bf" / month)


def backfill(cluster: dict, capsys, *flags: str) -> tuple[int, str, str]:
    code = main(["backfill", "--config", str(cluster["config"]), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_failed_month_is_reported_and_the_rest_still_built(cluster, smtp_server, capsys):
    sim(cluster, "2026-08", 1)  # 2026-09's logs are missing
    code, out, err = backfill(cluster, capsys, "--from", "2026-08", "--to", "2026-09", "--email", "all")
    assert code == 2  # its only failure is a missing input, as `run` says it
    lines = [line.split("  ", 1)[1] for line in out.splitlines() if re.match(r"\d\d:\d\d:\d\d  ", line)]
    assert lines[:2] == ["bf 2026-08..2026-09: starting Prefect ...", "[1/2] bf 2026-08"]
    stages = ("land", "metrics", "quality", "render", "deliver")  # its dbt build is the range's one
    assert [line for line in lines if line.startswith("bf 2026-08: ") and line.endswith(" ...")] == [
        f"bf 2026-08: {stage} ..." for stage in stages
    ]
    assert [line for line in lines if line.startswith("bf: dbt: ")][0] == "bf: dbt: one build of 2026-08"
    assert re.search(r"^bf 2026-08: land done in [\d.]+ s: [\d,]+ records from 5 sources$", "\n".join(lines), re.M)
    assert any(line.startswith("[1/2] bf 2026-08: built: ") for line in lines)
    assert any(
        line.startswith("[2/2] bf 2026-09: failed: at stage land: MissingInputError: no job records for 2026-09: ")
        for line in lines
    )
    assert "error: 1 of 2 months failed: 2026-09: at stage land" in err
    subjects = sorted(m["Subject"].strip() for m in smtp_server.parsed())  # (a folded header keeps a space)
    assert subjects == [
        "Cluster reliability report: bf, 2026-08",
        "FAILED: reliability report bf 2026-08..2026-09, stage 2026-09 land",
        "FAILED: reliability report bf 2026-09, stage land",
    ]
    alert = next(m for m in smtp_server.parsed() if m["Subject"].endswith("2026-09, stage land"))
    assert alert["To"] == "oncall@example.org"
    body = alert.get_content().replace("\r\n", "\n")
    assert "stage: land\nerror: MissingInputError: no job records for 2026-09: " in body
    assert f"reliability-report run --config {cluster['config']} --month 2026-09\n" in body


def test_done_months_are_skipped_and_the_missing_one_built(cluster, smtp_server, capsys):
    sim(cluster, "2026-09", 2)
    code, out, _ = backfill(cluster, capsys, "--from", "2026-08", "--to", "2026-09")
    assert code == 0
    table = out[out.index("bf 2026-08..2026-09:\n") :].splitlines()[1:]
    assert table[0].split()[:2] == ["2026-08", "skipped"] and table[1].split()[:2] == ["2026-09", "built"]
    assert "report built and emailed already" in table[0] and "report emailed to ops@example.org" in table[1]
    assert [m["Subject"] for m in smtp_server.parsed()] == ["Cluster reliability report: bf, 2026-09"]


def test_force_rebuilds_and_changed_figures_go_out_as_a_correction_as_do_the_later_months_they_change(
    cluster, smtp_server, capsys
):
    sim(cluster, "2026-08", 3)  # late records: 2026-08's logs changed
    code, out, _ = backfill(cluster, capsys, "--from", "2026-08", "--to", "2026-08", "--force")
    assert code == 0 and "2026-08  built" in out and "correction emailed to ops@example.org" in out
    # 2026-09 compares itself with 2026-08: refreshed, and corrected where it was sent
    assert re.search(r"^  2026-09  refreshed changed: .*month-over-month change.*; correction emailed to ", out, re.M)
    subjects = [m["Subject"] for m in smtp_server.parsed()]
    assert subjects == [f"Correction: Cluster reliability report: bf, 2026-{m}" for m in ("08", "09")]
    for message in smtp_server.parsed():
        assert message.get_body(("plain",)).get_content().startswith("Correction: this report replaces the one sent on")
    # each names its own cause, not a stock sentence, and the figures that changed, old → new
    august, september = (m.get_body(("plain",)).get_content().splitlines()[0] for m in smtp_server.parsed())
    assert ", because the landed " in august and "the landed sacct_psv records changed (" in august
    assert "Changed figures: " in august
    assert ", because 2026-08 was rebuilt with changed figures. Changed figures: " in september
    assert "Late accounting records or an edited failure taxonomy" not in august + september

    smtp_server.reset()  # the same again: the same figures, so nothing is sent
    code, out, _ = backfill(cluster, capsys, "--from", "2026-08", "--to", "2026-08", "--force")
    assert code == 0 and smtp_server.messages == []
    assert re.search(r"^  2026-09  refreshed figures unchanged; .*not emailed again", out, re.M)


def test_only_the_latest_month_is_emailed_by_default_and_each_month_says_what_happened(cluster, smtp_server, capsys):
    """An 11-month backfill used to send 11 emails and call an archived month "delivered". A month
    built before months that went out changes their comparisons: they go out as corrections."""
    sim(cluster, "2026-07", 4)
    code, out, _ = backfill(cluster, capsys, "--from", "2026-07", "--to", "2026-08")
    assert code == 0
    table = out[out.index("bf 2026-07..2026-08:\n") :].splitlines()[1:]
    assert table[0].split()[:2] == ["2026-07", "built"] and table[0].endswith("; archived, not sent (--email latest)")
    assert table[1].split()[:2] == ["2026-08", "refreshed"] and "month-over-month change" in table[1]
    assert table[2].split()[:2] == ["2026-09", "refreshed"] and "trend" in table[2]
    subjects = [m["Subject"] for m in smtp_server.parsed()]
    assert subjects == [f"Correction: Cluster reliability report: bf, 2026-{m}" for m in ("08", "09")]
    for message in smtp_server.parsed():  # the cause: an earlier month built for the first time
        notice = message.get_body(("plain",)).get_content().splitlines()[0]
        assert ", because 2026-07 was built for the first time. Changed figures: " in notice and " → " in notice

    smtp_server.reset()
    code, out, _ = backfill(cluster, capsys, "--from", "2026-07", "--to", "2026-07", "--email", "none")
    assert code == 0 and smtp_server.messages == []
    assert "2026-07  skipped  report built already (archived, not sent)" in out


def test_a_range_must_be_in_order_and_not_in_the_future(cluster, capsys):
    assert backfill(cluster, capsys, "--from", "2026-09", "--to", "2026-08")[0] == 2
    code, _, err = backfill(cluster, capsys, "--from", "2026-08", "--to", "2999-01")
    assert code == 2 and "error: month 2999-01 is in the future" in err


def test_several_clusters_are_built_side_by_side_and_a_failed_one_stops_no_other(tmp_path, fresh_warehouse, capsys):
    """Each cluster's backfill in its own process at the same time; pc has no logs."""
    truths, configs = {}, []
    for cluster, seed, slot in (("pa", 5, "test"), ("pb", 6, "second"), ("pc", None, None)):
        config = write_demo_config(tmp_path, cluster, tmp_path / "reports")
        configs += ["--config", str(config)]
        if seed is not None:
            fresh_warehouse(config, slot)  # "test": the parse other tests' warehouses share
            params = SimParams(cluster, Month.parse("2026-08"), nodes=16, seed=seed, r_f=20.0)
            truths[cluster] = simulate(params, tmp_path / "sim" / cluster / "2026-08")
    code = main(["backfill", *configs, "--from", "2026-08", "--to", "2026-08"])
    out, err = capsys.readouterr()
    assert code == 2, out + err  # the only failure is pc's missing input
    assert "error: 1 of 3 clusters failed: pc (exit 2)" in err
    assert "[pc] error: 1 of 1 months failed: 2026-08: at stage land: MissingInputError: no job records" in err
    for cluster, truth in truths.items():
        assert re.search(rf"^\[{cluster}\]   2026-08  built ", out, re.M), out
        metrics = json.loads((tmp_path / "reports" / cluster / "2026-08" / "metrics.json").read_text())
        false_positives = truth["window_false_positives"]
        extra = {"all": len(false_positives), "paper": sum(f["gpus"] > 128 for f in false_positives)}
        for definition in ("paper", "all"):
            reported, injected = metrics["node_failure_rate"][definition], truth["r_f_per_1000_node_days"][definition]
            assert reported["failures"] == injected["failures"] + extra[definition]
            assert reported["node_days"] == pytest.approx(injected["node_days"], rel=1e-6)


def test_two_configs_of_one_cluster_are_refused_before_any_work(cluster, tmp_path, capsys):
    first, again = cluster["config"], tmp_path / "again.toml"
    again.write_text(first.read_text())
    code = main(["backfill", "--config", str(first), "--config", str(again), "--from", "2026-08", "--to", "2026-08"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""  # before the first progress line
    assert err == (
        f"error: {first} and {again} are both of cluster bf: "
        "give each cluster's config once (its months are built by one backfill, oldest first)\n"
    )


@hostile(Outcome.ERROR)
def test_a_later_month_that_cannot_be_refreshed_keeps_its_report_and_the_run_says_so(cluster, smtp_server, capsys):
    """Its landed records and its logs are gone: the earlier month is built, the later one's
    report stays as it was, and the command exits 2 naming it."""
    config = load_config(cluster["config"])
    before = (config.report_dir(Month.parse("2026-09")) / "metrics.json").read_bytes()
    shutil.rmtree(config.landed_dir(Month.parse("2026-09")))
    shutil.rmtree(cluster["work"] / "sim" / "bf" / "2026-09")
    code = main(["run", "--config", str(cluster["config"]), "--month", "2026-08"])
    out, err = capsys.readouterr()
    assert code == 2
    assert re.search(r"^  2026-09  failed    at stage land: MissingInputError: no job records for 2026-09", out, re.M)
    assert "error: 2026-08 was built, but 1 later months were not refreshed (2026-09)" in err
    assert (config.report_dir(Month.parse("2026-09")) / "metrics.json").read_bytes() == before
    assert [m["Subject"] for m in smtp_server.parsed()] == ["FAILED: reliability report bf 2026-09, stage land"]
