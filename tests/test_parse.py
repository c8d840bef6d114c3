"""`reliability-report parse --kind K FILE`: one reader on one real file, its typed rows and its
quarantine (tests/data/). The declarations of the kinds: tests/test_source_kinds.py."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from job_records import sacct_with_bad_elapsed

from flows.cli import main
from flows.core.errors import EXIT_INPUT
from flows.ingest.sources.registry import SOURCE_KINDS
from flows.ingest.sources.tables import STAGED_FIELDS, TABLES, column_names

REPO = Path(__file__).resolve().parents[1]


def parse(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["parse", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def json_lines(out: str) -> tuple[list[dict], list[dict], dict]:
    records = [json.loads(line) for line in out.splitlines()]
    rows = [r for r in records if "quarantined" not in r and "summary" not in r]
    return rows, [r["quarantined"] for r in records if "quarantined" in r], records[-1]["summary"]


def test_sacct_dump_prints_typed_attempts(capsys, slurm_fixtures: Path):
    code, out, err = parse(capsys, "--kind", "sacct_psv", str(slurm_fixtures / "sacct_fields_allocations.psv"))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["job_id", "job_id_raw", "job_name"]
    timeout = next(line for line in lines if "t_timeout" in line)
    assert "TIMEOUT" in timeout and "2026-11-22 03:21:55" in timeout and " 87 " in timeout  # Elapsed 00:01:27
    assert "quarantined (" not in out and "quarantined 0," in out
    assert any(line.startswith("reader: rows ") and "steps_skipped" in line for line in lines)


def test_conflicting_records_show_with_both_lines(capsys, slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join([*lines, lines[3].replace("|COMPLETED|", "|NODE_FAIL|")]) + "\n")
    code, out, _ = parse(capsys, "--kind", "sacct_psv", str(dump))
    assert code == 0 and "conflicting_attempts 1," in out
    assert (
        f"  {dump}: lines 4 and 20 record one attempt of job 3 differently: State COMPLETED / NODE_FAIL; "
        "line 20 kept (the later line)" in out.splitlines()
    )


def test_a_bad_line_shows_in_the_quarantine_with_its_reason(capsys, slurm_fixtures: Path, tmp_path: Path):
    bad = sacct_with_bad_elapsed(slurm_fixtures / "sacct_fields_allocations.psv", tmp_path)
    good = str(slurm_fixtures / "sacct_fields_allocations.psv")
    good_rows = json_lines(parse(capsys, "--json", "--kind", "sacct_psv", good)[1])[0]

    code, out, _ = parse(capsys, "--kind", "sacct_psv", str(bad))
    assert code == 0
    assert "quarantined (1):" in out
    assert f"  {bad}:4: field Elapsed='12:xx:00': expected [D-]HH:MM:SS" in out.splitlines()

    rows, quarantined, summary = json_lines(parse(capsys, "--json", "--kind", "sacct_psv", str(bad))[1])
    assert quarantined == [
        {"file": str(bad), "line": 4, "field": "Elapsed", "value": "12:xx:00", "reason": "expected [D-]HH:MM:SS"}
    ]
    assert len(rows) == len(good_rows) - 1 and summary["rows"] == len(rows) and summary["quarantined"] == 1
    assert 4 not in [row["source_line"] for row in rows]


def test_json_rows_are_typed_and_the_time_zone_applies(capsys, slurm_fixtures: Path):
    dump = str(slurm_fixtures / "sacct_fields_allocations.psv")
    rows, _, summary = json_lines(parse(capsys, "--json", "--kind", "sacct_psv", dump)[1])
    timeout = next(row for row in rows if row["job_name"] == "t_timeout")
    assert list(timeout) == list(column_names(STAGED_FIELDS))
    assert (timeout["elapsed_seconds"], timeout["gpus"], timeout["submit_at"]) == (87, 1, "2026-11-22T03:21:55")
    assert summary["kind"] == "sacct_psv" and summary["reader"]["attempts"] == len(rows)
    berlin = json_lines(parse(capsys, "--json", "--timezone", "Europe/Berlin", "--kind", "sacct_psv", dump)[1])[0]
    assert next(r for r in berlin if r["job_name"] == "t_timeout")["submit_at"] == "2026-11-22T02:21:55"


def test_limit_shows_the_first_rows(capsys, slurm_fixtures: Path):
    _, out, _ = parse(
        capsys, "--limit", "2", "--kind", "sacct_psv", str(slurm_fixtures / "sacct_fields_allocations.psv")
    )
    lines = out.splitlines()
    assert set(lines[1]) == {"-", " "} and lines[4].startswith("18 rows (first 2 shown) from ")
    assert lines[2].startswith("1 ") and lines[3].startswith("2 ")


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        ("sacct_json", "sacct.json", {"job_name": "t_timeout", "elapsed_seconds": 87}),
        ("sacctmgr_events_psv", "sacctmgr_event.final.psv", {"node": "node3", "reason": "xid 79 gpu fell off bus"}),
        ("scontrol_nodes", "scontrol_show_node.drain.txt", {"node": "node4", "state": "DRAIN"}),
    ],
)
def test_every_kind_of_real_slurm_output(capsys, slurm_fixtures: Path, kind: str, name: str, expected: dict):
    code, out, _ = parse(capsys, "--json", "--kind", kind, str(slurm_fixtures / name))
    rows, quarantined, summary = json_lines(out)
    assert code == 0 and quarantined == [] and summary["rows"] == len(rows) > 0
    assert any(expected.items() <= row.items() for row in rows), rows
    table = SOURCE_KINDS[kind].table
    assert list(rows[0]) == [name for name in column_names(TABLES[table]) if name != "cluster"] or table == "attempts"


def test_a_capture_directory_with_its_quarantine(capsys, health_fixtures: Path, tmp_path: Path):
    import csv

    with open(health_fixtures / "xid_lines.tsv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["xid"] and r["raw_line"].startswith("[")]
    capture = tmp_path / "dmesg" / "n1" / "dmesg"
    capture.parent.mkdir(parents=True)
    monotonic = [r["raw_line"] for r in rows if r["raw_line"][1:2].isspace() or r["raw_line"][1:2].isdigit()]
    capture.write_text(
        "\n".join(r["raw_line"] for r in rows) + "\n"
    )  # no boot_time: seconds since boot cannot be dated
    code, out, _ = parse(capsys, "--year", "2024", "--json", "--kind", "xid_dmesg_dir", str(tmp_path / "dmesg"))
    found, quarantined, summary = json_lines(out)
    assert code == 0 and len(found) + len(quarantined) == len(rows) and len(quarantined) == len(monotonic) > 0
    assert all(q["file"].endswith("n1/dmesg") and "boot" in q["reason"] for q in quarantined)
    assert summary["reader"]["files"] == 1


def test_syslog_lines(capsys, tmp_path: Path):
    log = tmp_path / "nhc.log"
    log.write_text(
        "2026-11-03T04:05:06+00:00 gpu7 nhc[123]: ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n"
        "garbage without a prefix: ERROR:  nhc:  Health check failed:  check_hw:  x\n"
    )
    rows, quarantined, _ = json_lines(parse(capsys, "--json", "--kind", "nhc_syslog", str(log))[1])
    assert [(r["node"], r["check_name"], r["ts"]) for r in rows] == [("gpu7", "check_fs_mount", "2026-11-03T04:05:06")]
    assert [(q["line"], q["field"]) for q in quarantined] == [(2, "timestamp")]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kind", "sacct_psv", "{tmp}/nope.psv"], "error: sacct_psv: {tmp}/nope.psv does not exist"),
        (["--kind", "sacct_psv", "{tmp}"], "error: sacct_psv: {tmp} is a directory, not a file"),
        (
            ["--kind", "dcgm_health_dir", "{tmp}/x.psv"],
            "error: dcgm_health_dir: {tmp}/x.psv is a file, not a directory",
        ),
        (["--kind", "sacct_psv", "{tmp}/x.psv"], "error: {tmp}/x.psv:1: field header="),
    ],
)
def test_an_unreadable_input_is_one_error_line(capsys, tmp_path: Path, argv: list[str], message: str):
    (tmp_path / "x.psv").write_text("not|a|sacct|header\n")
    code, out, err = parse(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv))
    assert code == EXIT_INPUT and out == ""
    (line,) = err.splitlines()
    assert line.startswith(message.replace("{tmp}", str(tmp_path)))


def test_unknown_kind_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["parse", "--kind", "sacct_csv", "x"])
    assert exit_.value.code == 2 and "invalid choice: 'sacct_csv'" in capsys.readouterr().err


def test_parse_runs_in_a_few_seconds_without_the_pipeline(slurm_fixtures: Path):
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from flows.cli import main; code = main(sys.argv[1:]);"
         " sys.stdout.flush(); print('heavy:', sorted(m for m in sys.modules if m.split('.')[0] in ('prefect', 'dbt', 'great_expectations')), file=sys.stderr); sys.exit(code)",
         "parse", "--kind", "sacct_psv", str(slurm_fixtures / "sacct_fields_allocations.psv")],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 0 and "t_timeout" in done.stdout
    assert "heavy: []" in done.stderr.splitlines()  # no Prefect, dbt or GX imported
    assert elapsed < 10  # about a second on an idle machine (the CI runners are shared)


def test_each_staged_attempt_column_is_read_from_one_sacct_field():
    from flows.ingest.sources.sacct import SACCT_FIELDS

    given = [column for field in SACCT_FIELDS for column in field.gives]
    assert sorted(given) == sorted(name for name in column_names(STAGED_FIELDS) if name != "source_line")


def test_the_landed_attempts_suite_checks_registry_columns():
    """The GX suite on landed attempts names only columns the registry gives the table."""
    from flows import EXPECTATIONS_DIR

    spec = json.loads((EXPECTATIONS_DIR / "landed_attempts.json").read_text())
    named = set()
    for expectation in spec["expectations"]:
        kwargs = expectation["kwargs"]
        named |= {kwargs[key] for key in ("column", "column_A", "column_B") if key in kwargs}
        named |= set(kwargs.get("column_list", ()))
    assert named and named <= set(column_names(TABLES["attempts"]))


def test_the_landed_schema_is_checked_from_the_registry_and_not_restated():
    """Each landed column's presence and type, and each required field's values, are checked by a
    suite made from the registry; the JSON suites in expectations/ do not restate them."""
    from flows import EXPECTATIONS_DIR
    from flows.quality.suites import suite_specs

    specs = {spec["name"]: spec for _, spec in suite_specs(EXPECTATIONS_DIR, landed=True)}
    schema = specs["landed_schema"]["expectations"][0]["kwargs"]["value_set"]
    assert len(schema) == sum(len(fields) for fields in TABLES.values())
    not_null = [
        (spec["meta"].get("landed_table") or name.removeprefix("landed_"), e["kwargs"]["column"])
        for name, spec in specs.items()
        for e in spec["expectations"]
        if e["type"] == "expect_column_values_to_not_be_null" and name.startswith("landed_")
    ]
    required = [(table, f.name) for table, fields in TABLES.items() for f in fields if f.required]
    assert sorted(not_null) == sorted(required)
    for path in EXPECTATIONS_DIR.glob("landed_*.json"):
        assert "expect_column_values_to_not_be_null" not in path.read_text(), path.name


def test_json_of_an_xdmod_dump_with_a_repaired_node_count(capsys):
    """Issue 42: `parse --kind sacct_xdmod ... --json` ended in "TypeError: Object of type Decimal is
    not JSON serializable" (the NNodes 0 record's count, repaired from its host list)."""
    code, out, err = parse(
        capsys, "--kind", "sacct_xdmod", str(REPO / "tests/data/xdmod/accounting-logs.log"), "--json"
    )
    assert (code, err) == (0, "")
    rows, quarantined, summary = json_lines(out)
    assert quarantined == [] and summary["reader"]["node_counts_from_node_list"] == 1
    assert next(r for r in rows if r["job_id"] == "5692623")["n_nodes"] == 2


def test_json_writes_every_type_a_reader_may_give():
    """Decimals, dates, times of day, durations and bytes are written as JSON (never a TypeError)."""
    from datetime import date, datetime, time, timedelta
    from decimal import Decimal

    import pyarrow as pa

    from flows.ingest.parse import Parsed, format_parsed

    rows = pa.table(
        {
            "count": pa.array([Decimal(2), Decimal("2.5")], pa.decimal128(38, 1)),
            "day": pa.array([date(2026, 9, 1), None], pa.date32()),
            "at": pa.array([time(3, 4, 5), None], pa.time64("us")),
            "stamp": pa.array([datetime(2026, 9, 1, 3, 4, 5), None], pa.timestamp("us")),
            "span": pa.array([timedelta(seconds=90), None], pa.duration("us")),
            "raw": pa.array([b"node\xff1", None], pa.binary()),
        }
    )
    parsed = Parsed("sacct_psv", Path("x"), rows, [], {"rows": 2}, 0, 0)
    first, second, summary = (json.loads(line) for line in format_parsed(parsed, as_json=True))
    assert first == {
        "count": 2,
        "day": "2026-09-01",
        "at": "03:04:05",
        "stamp": "2026-09-01T03:04:05",
        "span": 90.0,
        "raw": "node\ufffd1",
    }
    assert second["count"] == 2.5 and summary["summary"]["rows"] == 2


def test_a_headerless_xdmod_dump_given_as_sacct_psv_suggests_sacct_xdmod(capsys):
    code, out, err = parse(capsys, "--kind", "sacct_psv", str(REPO / "tests/data/xdmod/accounting-logs.log"))
    (line,) = err.splitlines()
    assert code == EXIT_INPUT and "missing columns JobID, JobIDRaw" in line
    assert line.endswith('its first line is a record in Open XDMoD\'s layout; give it as kind = "sacct_xdmod"')


def test_a_sacct_dump_with_a_header_given_as_sacct_xdmod_suggests_sacct_psv(capsys, slurm_fixtures: Path):
    code, out, err = parse(capsys, "--kind", "sacct_xdmod", str(slurm_fixtures / "sacct_fields_allocations.psv"))
    (line,) = err.splitlines()
    assert code == EXIT_INPUT and ":1: field header='JobID|JobIDRaw|" in line
    assert line.endswith('give the file as kind = "sacct_psv"')
