"""`check --month` (and `run`'s count before any work, flows/ingest/month_records.py) on job records
that hold a byte or a value that once stopped the count (issue 50): a lone carriage return in a
sacct dump (DuckDB's CSV reader failed the file, blamed on line 1, with its own advice), a CRLF
dump, a sacct --json document with a 5,000-digit number (a traceback) or nested 100,000 deep (a
RecursionError). Each is counted or refused in one line naming the file, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import Outcome, hostile

from flows.cli import main


def check(tmp_path: Path, kind: str, dump: Path, capsys) -> tuple[int, str]:
    config = tmp_path / "c.toml"
    config.write_text(f'cluster = "c"\n\n[[sources]]\nkind = "{kind}"\npath = "{dump}"\n')
    code = main(["check", "--config", str(config), "--month", "2026-11"])
    out, err = capsys.readouterr()
    return code, out + err


@hostile(Outcome.FIGURE)
@pytest.mark.parametrize(
    ("name", "cut", "records"),
    [
        ("lone CR", lambda text: text.replace("|COMPLETED|", "|COMPL\rETED|", 1), 17),
        ("CRLF", lambda t: t.replace("\n", "\r\n"), 18),
    ],
)
def test_a_carriage_return_in_a_sacct_dump_is_counted_not_fatal(tmp_path, capsys, slurm_fixtures, name, cut, records):
    dump = tmp_path / "sacct.psv"
    dump.write_text(cut((slurm_fixtures / "sacct_fields_allocations.psv").read_text()), newline="")
    code, said = check(tmp_path, "sacct_psv", dump, capsys)
    assert code == 0, said
    assert f"{records} job records in 2026-11" in said and "state machine" not in said


@hostile(Outcome.FIGURE)
def test_a_huge_number_in_one_json_job_leaves_that_job_out_of_the_count(tmp_path, capsys, slurm_fixtures):
    document = json.loads((slurm_fixtures / "sacct.json").read_text())
    dump = tmp_path / "jobs.json"
    text = json.dumps(document)
    first_id = document["jobs"][0]["job_id"]
    dump.write_text(text.replace(f'"job_id": {first_id},', f'"job_id": {"9" * 5000},', 1))
    code, said = check(tmp_path, "sacct_json", dump, capsys)
    assert code == 0, said
    assert f"{len(document['jobs']) - 1} job records in 2026-11" in said


@hostile(Outcome.ERROR)
def test_a_json_document_nested_too_deep_is_one_line_naming_the_file(tmp_path, capsys, slurm_fixtures):
    dump = tmp_path / "jobs.json"
    text = (slurm_fixtures / "sacct.json").read_text().rstrip()
    dump.write_text(text[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, said = check(tmp_path, "sacct_json", dump, capsys)
    assert code == 2
    assert said.startswith(f"error: {dump}:1: field document=") and "nested 100,001 deep" in said
    assert len(said.splitlines()) == 1 and "Traceback" not in said
