"""Landing through a config: raw copies, Parquet tables, manifest; each way of getting the job records."""

import csv
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from saved_month import saved_metrics

from flows.config.file import load_config
from flows.core.errors import ConfigError, TooManyBadRowsError
from flows.core.months import Month
from flows.ingest.land import land_month
from flows.ingest.sources.sacct import XDMOD_FIELDS


def write_config(tmp_path: Path, sources: str) -> Path:
    config = tmp_path / "c.toml"
    config.write_text(f'cluster = "ci"\n\n{sources}\n[paths]\ndata = "data"\n')
    return config


def test_xdmod_dump_lands_like_a_sacct_dump(slurm_fixtures: Path, tmp_path: Path):
    with open(slurm_fixtures / "sacct_fields_allocations.psv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="|"))
    filler = {
        "Cluster": "ci",
        "Group": "g",
        "GID": "0",
        "UID": "0",
        "NCPUS": "1",
        "ReqCPUS": "1",
        "ReqMem": "1G",
        "Timelimit": "UNLIMITED",
    }
    (tmp_path / "xdmod.log").write_text(
        "".join("|".join({**filler, **r}[f] for f in XDMOD_FIELDS) + "\n" for r in rows)
    )
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_xdmod"\npath = "xdmod.log"\n'))
    landed = land_month(config, Month.parse("2026-11"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 18
    manifest = json.loads((landed / "manifest.json").read_text())
    assert manifest["sources"]["sacct_xdmod"]["records"] == 18
    assert (tmp_path / "data" / "raw" / "ci" / "2026-11" / "xdmod.log").is_file()


def test_array_records_with_compressed_ids_pass_the_landed_checks(tmp_path: Path):
    """Issue 35: array records `4103947_[1-3]`, `_[9-11,20]` (XDMoD's sample, tests/data/README.md) share
    a JobIDRaw and a Submit. They land as one attempt each, and the landed data's checks key them as
    the reader and dbt do (macro attempt_id), so the month is not stopped at data quality."""
    import shutil

    import duckdb

    from flows import EXPECTATIONS_DIR
    from flows.quality.suites import validate_month
    from flows.warehouse.engines import DuckDBMarts

    shutil.copy(Path(__file__).parent / "data" / "xdmod" / "accounting-logs-with-job-arrays.log", tmp_path / "x.log")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\n'))
    landed = land_month(config, Month.parse("2015-07"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 6
    suites = tmp_path / "landed_suites"  # the suites that read the landed Parquet; the others read marts
    suites.mkdir()
    for path in EXPECTATIONS_DIR.glob("*.json"):
        if "landed_table" in (meta := json.loads(path.read_text())["meta"]) or "{landed_dir}" in meta.get("query", ""):
            shutil.copy(path, suites / path.name)
    with duckdb.connect() as con:
        results = validate_month(
            tmp_path / "none.duckdb", Month.parse("2015-07"), suites, landed, marts=DuckDBMarts(con)
        )
    assert "landed_attempts" in [r.suite for r in results] and all(r.success for r in results)


def test_nnodes_0_with_a_host_list_lands_as_a_counted_repair(tmp_path: Path):
    """XDMoD's sample job 5692623: NNodes 0, NodeList of two nodes (tests/data/README.md)."""
    import shutil

    shutil.copy(Path(__file__).parent / "data" / "xdmod" / "accounting-logs.log", tmp_path / "x.log")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\n'))
    landed = land_month(config, Month.parse("2016-08"))
    entry = json.loads((landed / "manifest.json").read_text())["sources"]["sacct_xdmod"]
    assert (entry["records"], entry["quarantined"], entry["node_counts_from_node_list"]) == (4, 0, 1)
    job = next(a for a in pq.read_table(landed / "attempts.parquet").to_pylist() if a["job_id"] == "5692623")
    assert (job["n_nodes"], job["node_list"]) == (2, "cpn-k16-35-01,cpn-k16-37-01")


@pytest.mark.slow  # a dbt build (of a 6-record month)
def test_a_month_of_array_records_with_compressed_ids_builds(tmp_path: Path):
    """dbt keys the attempts as the reader does (macro attempt_id): the month builds and every
    data-quality check, on the landed data and on the marts, passes."""
    import shutil

    import duckdb

    from flows.quality.suites import validate_month
    from flows.warehouse.build import build_months

    shutil.copy(Path(__file__).parent / "data" / "xdmod" / "accounting-logs-with-job-arrays.log", tmp_path / "x.log")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\n'))
    month = Month.parse("2015-07")
    landed = land_month(config, month)
    build_months(config, {month: landed})
    assert all(r.success for r in validate_month(config.warehouse_path, month, landed_dir=landed))
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        ended = con.execute("SELECT job_id FROM fct_attempts WHERE month = '2015-07' ORDER BY job_id").fetchall()
    assert len(ended) == 6 and ended[0] == ("4103947_100",)


def test_one_source_per_input(tmp_path: Path):
    both = '[[sources]]\nkind = "sacct_xdmod"\npath = "a"\n\n[[sources]]\nkind = "sacct_psv"\npath = "b"\n'
    with pytest.raises(ConfigError, match="one source only"):
        load_config(write_config(tmp_path, both))
    with pytest.raises(ConfigError, match="job records"):
        load_config(write_config(tmp_path, '[[sources]]\nkind = "xid_syslog"\npath = "x"\n'))


def test_sacct_json_lands_and_says_its_exit_codes_are_unreliable(slurm_fixtures: Path, tmp_path: Path):
    import shutil

    shutil.copy(slurm_fixtures / "sacct.json", tmp_path / "jobs.json")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_json"\npath = "jobs.json"\n'))
    landed = land_month(config, Month.parse("2026-11"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 18
    entry = json.loads((landed / "manifest.json").read_text())["sources"]["sacct_json"]
    assert entry["format"] == "sacct_json" and entry["exit_codes_unreliable"] is True


def test_sacct_text_and_json_land_the_same_column_types(slurm_fixtures: Path, tmp_path: Path):
    import shutil

    shutil.copy(slurm_fixtures / "sacct.json", tmp_path / "jobs.json")
    shutil.copy(slurm_fixtures / "sacct_fields_allocations.psv", tmp_path / "jobs.psv")
    types = {}
    for kind, file in (("sacct_json", "jobs.json"), ("sacct_psv", "jobs.psv")):
        (tmp_path / kind).mkdir()
        config = load_config(write_config(tmp_path / kind, f'[[sources]]\nkind = "{kind}"\npath = "../{file}"\n'))
        schema = pq.read_schema(land_month(config, Month.parse("2026-11")) / "attempts.parquet")
        types[kind] = [(field.name, str(field.type)) for field in schema]
    assert types["sacct_psv"] == types["sacct_json"]
    assert ("gpus", "int64") in types["sacct_psv"]  # a GPU count, not a DOUBLE


def test_duplicate_records_are_landed_once_and_counted(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    # Two overlapping dumps concatenated; in the later one the running job has ended.
    later = [
        line.replace("|RUNNING|0:0|", "|COMPLETED|0:0|").replace("|Unknown|00:01:29|", "|2026-11-22T03:30:00|00:08:02|")
        for line in lines[1:]
    ]
    (tmp_path / "sacct.psv").write_text("\n".join(lines + later) + "\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n'))
    landed = land_month(config, Month.parse("2026-11"))
    attempts = pq.read_table(landed / "attempts.parquet").to_pylist()
    assert len(attempts) == 18
    assert next(a for a in attempts if a["job_name"] == "t_still_running")["state"] == "COMPLETED"
    entry = json.loads((landed / "manifest.json").read_text())["sources"]["sacct_psv"]
    assert entry["duplicate_records"] == 18 and entry["records"] == 18
    assert entry["conflicting_attempts"] == 0  # a running job that ended since: an update, not a conflict


def conflicting_dump(slurm_fixtures: Path, tmp_path: Path) -> Path:
    """Issue 35: t_ok's line (line 4) again at the end with State NODE_FAIL, every other field equal."""
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    (tmp_path / "sacct.psv").write_text("\n".join([*lines, lines[3].replace("|COMPLETED|", "|NODE_FAIL|")]) + "\n")
    return tmp_path / "sacct.psv"


def test_conflicting_records_are_counted_with_both_lines(slurm_fixtures: Path, tmp_path: Path):
    conflicting_dump(slurm_fixtures, tmp_path)
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n'))
    landed = land_month(config, Month.parse("2026-11"))
    entry = json.loads((landed / "manifest.json").read_text())["sources"]["sacct_psv"]
    assert (entry["records"], entry["duplicate_records"], entry["conflicting_attempts"]) == (18, 1, 1)
    (conflict,) = entry["conflicts"]
    assert "sacct.psv: lines 4 and 20 record one attempt of job 3 differently: State COMPLETED / NODE_FAIL" in conflict
    kept = next(a for a in pq.read_table(landed / "attempts.parquet").to_pylist() if a["job_id"] == "3")
    assert (kept["state"], kept["source_line"]) == ("NODE_FAIL", 20)


def data_quality_of(inputs: dict, open_attempts: int) -> dict:
    """The saved month's figures with these inputs landed, no suite run and `open_attempts` still open."""
    metrics = saved_metrics() | {"inputs": inputs, "data_quality": [], "quarantine_sample": []}
    metrics["totals"] |= {"open_attempts": open_attempts, "unknown_states": 0}
    return metrics


def test_conflicts_are_shown_in_the_data_quality_section_and_its_banner(slurm_fixtures: Path, tmp_path: Path):
    from flows.figures.read import month_document
    from flows.figures.summary import data_quality
    from flows.report.environment import environment

    conflicting_dump(slurm_fixtures, tmp_path)
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n'))
    inputs = json.loads((land_month(config, Month.parse("2026-11")) / "manifest.json").read_text())["sources"]
    metrics = data_quality_of(inputs, open_attempts=1)
    html = environment().get_template("partials/data_quality.html.j2").render(metrics=month_document(metrics))
    assert "1 attempt recorded twice with a different outcome or times" in html
    assert "sacct.psv: lines 4 and 20 record one attempt of job 3 differently" in html
    assert "conflicting attempts: 1" in html  # the reader's count beside the input
    (reason,) = data_quality(metrics | {"node_failure_rate": {"all": {"node_days": 1}}})["reasons"]
    assert reason.startswith("1 attempt was recorded twice with a different outcome or times")


def test_more_conflicting_records_than_ingest_allows_stop_the_run(slurm_fixtures: Path, tmp_path: Path):
    conflicting_dump(slurm_fixtures, tmp_path)
    sources = (
        '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n\n[ingest]\nmax_bad_rows = 0\nmax_bad_row_share = 0\n'
    )
    config = load_config(write_config(tmp_path, sources))
    with pytest.raises(TooManyBadRowsError) as stopped:
        land_month(config, Month.parse("2026-11"))
    message = str(stopped.value)
    assert message.startswith(f"{tmp_path / 'sacct.psv'}: 1 of 18 attempts have conflicting records (limit 0, ")
    assert "[ingest] in c.toml" in message and "lines 4 and 20" in message
    assert not (tmp_path / "data" / "landed" / "ci" / "2026-11").exists()


def test_records_in_the_future_are_quarantined(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    fields = lines[3].split("|")  # t_ok
    fields[12] = "2099-11-22T03:22:00"  # End
    lines[3] = "|".join(fields)
    (tmp_path / "sacct.psv").write_text("\n".join(lines) + "\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n'))
    landed = land_month(config, Month.parse("2026-11"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 17
    (quarantined,) = [json.loads(line) for line in (landed / "quarantine.jsonl").read_text().splitlines()]
    assert (quarantined["line"], quarantined["field"]) == (4, "End")
    assert quarantined["reason"].startswith("after the dump time")


def test_command_sources_are_pulled_then_landed(slurm_fixtures: Path, tmp_path: Path):
    """The live path without a cluster: a stand-in `sacct` that checks its arguments and prints a real dump."""
    fake = tmp_path / "fake_sacct.sh"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-V" ]; then echo "slurm-wlm 22.05.8"; exit 0; fi\n'
        'case "$*" in *"--allusers --duplicates --allocations"*"-S 2026-11-01T00:00:00 -E 2026-12-01T00:00:00"*) ;;\n'
        '  *) echo "unexpected arguments: $*" >&2; exit 2;; esac\n'
        f'[ "$TZ" = "UTC" ] || exit 3\ncat "{slurm_fixtures / "sacct_fields_allocations.psv"}"\n'
    )
    fake.chmod(0o755)
    config = load_config(write_config(tmp_path, f'[[sources]]\nkind = "sacct_command"\ncommand = ["{fake}"]\n'))
    landed = land_month(config, Month.parse("2026-11"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 18
    assert (tmp_path / "data" / "pulled" / "ci" / "2026-11" / "sacct.usv").is_file()


def test_every_node_signal_source_lands(slurm_fixtures: Path, tmp_path: Path):
    """Snapshot, kernel captures, GCM and tickets land beside the accounting data, each counted."""
    import shutil

    for name in ("sacct_fields_allocations.psv", "sacctmgr_event.final.psv", "scontrol_show_node.drain.txt"):
        shutil.copy(slurm_fixtures / name, tmp_path / name)
    (tmp_path / "dmesg" / "node3").mkdir(parents=True)
    (tmp_path / "dmesg" / "node3" / "epilog.log").write_text(
        "2026-11-22T03:22:03,500000+00:00 NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
    )
    (tmp_path / "gcm").mkdir()
    (tmp_path / "gcm" / "health.log").write_text(
        json.dumps(
            [
                {
                    "node": "node4",
                    "health_check": "nvidia smi ecc_uncorrected",
                    "result": 2,
                    "_msg": "uncorrected ECC errors on GPU 3",
                    "end_time": 1795404100,
                }
            ]
        )
        + "\n"
    )
    (tmp_path / "tickets.csv").write_text("ticket_id,node,opened_at,category\nT-9,node4,2026-11-22T04:00:00,gpu\n")
    sources = "".join(
        f'[[sources]]\nkind = "{kind}"\npath = "{path}"\n\n'
        for kind, path in [
            ("sacct_psv", "sacct_fields_allocations.psv"),
            ("sacctmgr_events_psv", "sacctmgr_event.final.psv"),
            ("scontrol_nodes", "scontrol_show_node.drain.txt"),
            ("xid_dmesg_dir", "dmesg"),
            ("gcm_health_dir", "gcm"),
            ("repair_tickets_csv", "tickets.csv"),
        ]
    )
    landed = land_month(load_config(write_config(tmp_path, sources)), Month.parse("2026-11"))
    manifest = json.loads((landed / "manifest.json").read_text())["sources"]
    # both drains of the snapshot are in the accounting events (node2's only since its job ended)
    assert manifest["scontrol_nodes"]["out_of_service"] == 2 and manifest["scontrol_nodes"]["records"] == 0
    events = pq.read_table(landed / "node_events.parquet").to_pylist()
    assert len(events) == manifest["sacctmgr_events_psv"]["records"] == 4
    (xid,) = pq.read_table(landed / "xid_events.parquet").to_pylist()
    assert (xid["node"], xid["xid"], xid["source_file"]) == ("node3", 79, "node3/epilog.log")
    checks = pq.read_table(landed / "health_checks.parquet").to_pylist()
    assert sorted((c["source"], c["node"], c["check_name"], c["status"]) for c in checks) == [
        ("gcm", "node4", "nvidia smi ecc_uncorrected", "CRITICAL"),
        ("ticket", "node4", "gpu", "OPEN"),
    ]
    assert (tmp_path / "data" / "raw" / "ci" / "2026-11" / "dmesg" / "node3" / "epilog.log").is_file()


def test_a_drain_missing_from_accounting_lands_from_the_snapshot(slurm_fixtures: Path, tmp_path: Path):
    import shutil

    shutil.copy(slurm_fixtures / "sacct_fields_allocations.psv", tmp_path / "sacct.psv")
    shutil.copy(slurm_fixtures / "sacctmgr_event.down.psv", tmp_path / "events.psv")  # taken before the drains
    shutil.copy(slurm_fixtures / "scontrol_show_node.drain.txt", tmp_path / "nodes.txt")
    sources = (
        '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n\n'
        '[[sources]]\nkind = "sacctmgr_events_psv"\npath = "events.psv"\n\n'
        '[[sources]]\nkind = "scontrol_nodes"\npath = "nodes.txt"\n'
    )
    landed = land_month(load_config(write_config(tmp_path, sources)), Month.parse("2026-11"))
    events = pq.read_table(landed / "node_events.parquet").to_pylist()
    from_snapshot = [(e["node"], e["state"], e["reason"]) for e in events if e["source_file"] == "nodes.txt"]
    assert from_snapshot == [
        ("node2", "DRAIN", "nvlink errors, drain after job"),
        ("node4", "DRAIN", "ecc: uncorrectable errors on gpu 3"),
    ]


def test_the_documented_config_example_loads(tmp_path: Path):
    """The full config of docs/configuration.md is valid: every source kind and key in it is known."""
    import re

    guide = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    (tmp_path / "c.toml").write_text(re.search(r"```toml\n(.*?)```", guide, re.S).group(1))
    config = load_config(tmp_path / "c.toml")
    assert len(config.sources) >= 9 and config.analysis.run_link_gap_minutes == 120


def fake_ssh_and_sacct(tmp_path: Path, slurm_fixtures: Path, failures: int, sacct_exit: int = 0) -> Path:
    """`ssh` and `sacct` stand-ins in a bin/ directory to put on PATH: ssh fails like an unreachable
    host (exit 255) on its first `failures` calls, then runs the command here; sacct prints its
    version or a real dump (or a usage error with exit `sacct_exit`). ssh counts its calls in `calls`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "ssh").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{calls}"\n'
        f'if [ "$(wc -l < "{calls}")" -le {failures} ]; then\n'
        '  echo "ssh: connect to host $1 port 22: Connection refused" >&2; exit 255\nfi\n'
        'shift\nexec "$@"\n'
    )
    (bin_dir / "sacct").write_text(
        "#!/bin/sh\n"
        f"if [ {sacct_exit} -ne 0 ]; then echo \"sacct: invalid option -- 'x'\" >&2; exit {sacct_exit}; fi\n"
        'if [ "$1" = "-V" ]; then echo "slurm-wlm 22.05.8"; exit 0; fi\n'
        f'cat "{slurm_fixtures / "sacct_fields_allocations.psv"}"\n'
    )
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    return calls


def ssh_config(tmp_path: Path, attempts: int) -> Path:
    return write_config(
        tmp_path,
        '[[sources]]\nkind = "sacct_command"\ncommand = ["ssh", "head", "sacct"]\n'
        f"attempts = {attempts}\nretry_wait_seconds = 0.01\n",
    )


@pytest.fixture
def retry_log():
    """The warnings the live pull logs (its logger may not propagate: the CLI prints it directly)."""
    import logging

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("flows.ingest.sources.slurm_live")
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def test_a_pull_over_ssh_is_retried_with_back_off_until_it_answers(
    slurm_fixtures: Path, tmp_path: Path, monkeypatch, retry_log
):
    calls = fake_ssh_and_sacct(tmp_path, slurm_fixtures, failures=2)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    landed = land_month(load_config(ssh_config(tmp_path, attempts=4)), Month.parse("2026-11"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 18
    assert len(calls.read_text().splitlines()) == 4  # `sacct -V` twice refused, then it and the pull
    lines = [r.getMessage() for r in retry_log]
    assert len(lines) == 2 and all(r.levelname == "WARNING" for r in retry_log)
    assert lines[0].startswith("ssh head sacct -V: attempt 1 of 4 failed (exit 255: ssh: connect to host head")
    assert "attempt 2 of 4" in lines[1] and "retrying in 0.02 s" in lines[1]  # the wait doubles


def test_a_pull_that_keeps_failing_gives_up_naming_the_command_status_and_stderr(
    slurm_fixtures: Path, tmp_path: Path, monkeypatch
):
    from flows.ingest.sources.slurm_live import SlurmCommandError

    calls = fake_ssh_and_sacct(tmp_path, slurm_fixtures, failures=99)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(SlurmCommandError) as failed:
        land_month(load_config(ssh_config(tmp_path, attempts=3)), Month.parse("2026-11"))
    assert str(failed.value) == (
        "ssh head sacct -V exited 255 (gave up after 3 attempts): ssh: connect to host head port 22: Connection refused"
    )
    assert len(calls.read_text().splitlines()) == 3


def test_a_usage_error_is_not_retried(slurm_fixtures: Path, tmp_path: Path, monkeypatch, retry_log):
    from flows.ingest.sources.slurm_live import SlurmCommandError

    calls = fake_ssh_and_sacct(tmp_path, slurm_fixtures, failures=0, sacct_exit=1)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(SlurmCommandError, match=r"^ssh head sacct -V exited 1: sacct: invalid option -- 'x'$"):
        land_month(load_config(ssh_config(tmp_path, attempts=3)), Month.parse("2026-11"))
    assert len(calls.read_text().splitlines()) == 1 and not retry_log


def test_a_command_that_does_not_answer_in_time_is_retried(slurm_fixtures: Path, tmp_path: Path, monkeypatch):
    from flows.ingest.sources import slurm_live

    calls = fake_ssh_and_sacct(tmp_path, slurm_fixtures, failures=0)
    ssh = tmp_path / "bin" / "ssh"  # the first call hangs (a dead connection) until the timeout
    ssh.write_text(ssh.read_text().replace("shift\n", f'[ "$(wc -l < "{calls}")" -eq 1 ] && exec sleep 30\nshift\n'))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setattr(slurm_live, "COMMAND_TIMEOUT_S", 0.5)
    landed = land_month(load_config(ssh_config(tmp_path, attempts=2)), Month.parse("2026-11"))
    assert pq.read_table(landed / "attempts.parquet").num_rows == 18
    assert len(calls.read_text().splitlines()) == 3


@pytest.mark.parametrize(
    ("status", "stderr", "transient"),
    [
        (255, "ssh: connect to host head port 22: Connection refused", True),
        (255, "Connection to head closed by remote host.", True),
        (None, "", True),  # no answer in time
        (1, "sacct: error: Problem talking to the database: Connection refused", True),
        (1, "slurm_load_node error: Unable to contact slurm controller (connect failure)", True),
        (1, "sacct: error: Socket timed out on send/recv operation", True),
        (1, "sacct: invalid option -- 'x'", False),
        (1, "sacctmgr: error: Unknown option: formt=Cluster", False),
        (127, "bash: line 1: sacct: command not found", False),
    ],
)
def test_which_command_failures_are_retried(status, stderr, transient):
    from flows.ingest.sources.slurm_live import is_transient

    assert is_transient(status, stderr) is transient


def test_a_repaired_node_count_lands_with_the_type_of_every_count(tmp_path: Path):
    """Issue 42: NNodes 0 repaired from the host list landed attempts.n_nodes as a DOUBLE (a HUGEINT
    before ClusterShell), and the month stopped at the landed-schema suite. Every landed column has
    the registry's type, as that suite checks it (flows/quality/suites.py SQL_TYPES)."""
    import shutil

    import duckdb

    from flows.ingest.sources.tables import TABLES
    from flows.quality.suites import SQL_TYPES

    shutil.copy(Path(__file__).parent / "data" / "xdmod" / "accounting-logs.log", tmp_path / "x.log")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\n'))
    landed = land_month(config, Month.parse("2016-08"))
    with duckdb.connect() as con:
        types = dict(
            con.execute(f"select column_name, column_type from (describe '{landed / 'attempts.parquet'}')").fetchall()
        )
    assert types == {f.name: SQL_TYPES[f.type] for f in TABLES["attempts"]}


def test_the_data_quality_table_names_the_configured_job_record_kind(tmp_path: Path):
    """Issue 42: a sacct_xdmod input was labelled "sacct_psv" (the input it gives) in the report."""
    import shutil

    from flows.figures.read import month_document
    from flows.report.environment import environment

    shutil.copy(Path(__file__).parent / "data" / "xdmod" / "accounting-logs.log", tmp_path / "x.log")
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_xdmod"\npath = "x.log"\n'))
    inputs = json.loads((land_month(config, Month.parse("2016-08")) / "manifest.json").read_text())["sources"]
    metrics = data_quality_of(inputs, open_attempts=0)
    html = environment().get_template("partials/data_quality.html.j2").render(metrics=month_document(metrics))
    assert '<td class="name">sacct_xdmod</td>' in html and "sacct_psv" not in html
