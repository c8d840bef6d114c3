"""The hostile-input corpus's terminal side (issue 35): a string from the logs carrying a terminal
escape sequence or a bidi override reaches the operator's terminal, a log line or an error escaped
the same way as in the report (flows/core/escape.py printable): the quarantine's lines, the one-line
error, a live pull's stderr, the retry warnings and Prefect's run log lines.

Every case starts from a real dump (tests/data/slurm-22.05) with one field made hostile."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import pytest
from hostile import Outcome, hostile

from flows.cli import main
from flows.config.file import load_config
from flows.core.errors import EXIT_INPUT, TooManyBadRowsError
from flows.core.escape import printable
from flows.core.months import Month
from flows.ingest.land import land_month

# ESC (a colour; `(` rather than `[` keeps it out of Slurm's host-list brackets), BEL, and the bidi
# overrides and isolates that reorder what a reader sees (a CR or LF ends a line of a dump or stderr)
HOSTILE = "\x1b(31mRED\x07\u202egpu\u2066x"
SHOWN = "\\x1b(31mRED\\x07\\u202egpu\\u2066x"
# what must never reach a terminal: C0 and C1 controls, DEL, the bidi controls
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
DUMP = "sacct_fields_allocations.psv"
MONTH = Month.parse("2026-11")


def hostile_dump(slurm_fixtures: Path, out: Path) -> Path:
    """The real dump with line 5's NodeList naming a hostile node beside a real one."""
    lines = (slurm_fixtures / DUMP).read_text().splitlines()
    column = lines[0].split("|").index("NodeList")
    fields = lines[4].split("|")
    fields[column] = f"node1,{HOSTILE}"
    lines[4] = "|".join(fields)
    out.write_text("\n".join(lines) + "\n")
    return out


def write_config(tmp_path: Path, sources: str, ingest: str = "") -> Path:
    config = tmp_path / "c.toml"
    config.write_text(f'cluster = "ci"\n\n{sources}\n[paths]\ndata = "data"\n{ingest}')
    return config


def test_escaping_is_the_reports_and_idempotent():
    assert printable(HOSTILE) == SHOWN
    assert printable(SHOWN) == SHOWN  # escaped twice (at the error, then at the terminal) reads the same
    assert printable("gpu0012 é ✓ \\ 'x'") == "gpu0012 é ✓ \\ 'x'"  # printable text is kept as it is
    assert printable("a\rb\nc\u2028") == "a\\x0db\\x0ac\\u2028"  # no forged lines
    assert printable("\U000e0001") == "\\U000e0001"  # a tag character: eight digits, never ambiguous


@hostile(Outcome.QUARANTINE)
def test_a_hostile_node_name_is_quarantined_with_every_part_of_the_line_escaped(
    capsys, slurm_fixtures: Path, tmp_path: Path
):
    dump = hostile_dump(slurm_fixtures, tmp_path / "x.psv")
    assert main(["parse", "--kind", "sacct_psv", str(dump)]) == 0
    out, err = capsys.readouterr()
    assert not RAW.search(out + err)
    # the field and the reason that quotes it, both escaped
    shown = f"  {dump}:5: field NodeList='node1,{SHOWN}': holds U+001B at character 7: a host list is"
    assert any(line.startswith(shown) for line in out.splitlines())
    assert "17 rows from" in out  # the other records are read

    assert main(["parse", "--json", "--kind", "sacct_psv", str(dump)]) == 0
    out = capsys.readouterr().out
    assert not RAW.search(out)
    (bad,) = [json.loads(line)["quarantined"] for line in out.splitlines() if '"quarantined": {' in line]
    assert bad["value"] == f"node1,{HOSTILE}"  # JSON keeps the value itself, escaped by JSON


@hostile(Outcome.ERROR)
def test_the_one_line_error_of_too_many_bad_rows_is_escaped(capsys, monkeypatch, slurm_fixtures: Path, tmp_path: Path):
    hostile_dump(slurm_fixtures, tmp_path / "sacct.psv")
    strict = "\n[ingest]\nmax_bad_rows = 0\nmax_bad_row_share = 0\n"
    config = load_config(write_config(tmp_path, '[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n', strict))
    with pytest.raises(TooManyBadRowsError) as refused:
        land_month(config, MONTH)
    assert not RAW.search(str(refused.value))
    assert f"sacct.psv:5: field NodeList='node1,{SHOWN}': holds U+001B at character 7" in str(refused.value)

    def land(args) -> int:  # the landing as `run` reaches it, without Prefect around it
        land_month(config, MONTH)
        return 0

    monkeypatch.setattr("flows.cli.cmd_parse", land)
    assert main(["parse", "--kind", "sacct_psv", "x"]) == EXIT_INPUT
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and not RAW.search(line) and "holds U+001B at character 7" in line


@hostile(Outcome.ERROR)
def test_a_live_pulls_stderr_is_escaped_in_the_retry_warning_and_the_error(capsys, caplog, monkeypatch, tmp_path: Path):
    """A Slurm command whose stderr carries escapes (a login banner, a mangled message): the retry
    warning and the one-line error show them escaped, each of its lines kept a line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sacct").write_text(f"#!/bin/sh\nprintf 'Connection refused {HOSTILE}\\nsecond line\\n' >&2\nexit 1\n")
    (bin_dir / "sacct").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    config = write_config(
        tmp_path, '[[sources]]\nkind = "sacct_command"\ncommand = ["sacct"]\nattempts = 2\nretry_wait_seconds = 0.01\n'
    )
    monkeypatch.setattr("flows.cli.cmd_parse", lambda args: land_month(load_config(config), MONTH))
    with caplog.at_level(logging.WARNING, logger="flows.ingest.sources.slurm_live"):
        assert main(["parse", "--kind", "sacct_psv", "x"]) == 1
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "flows.ingest.sources.slurm_live"]
    assert not RAW.search(warning) and f"Connection refused {SHOWN} / second line" in warning
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"error: sacct -V exited 1 (gave up after 2 attempts): Connection refused {SHOWN}", "second line"]


def test_prefects_run_log_lines_are_escaped():
    """A line a flow or task run logs (the failure hook's, Prefect's own on a failed task) is
    escaped by the logger, before any handler (the console's, Prefect's API log) sees it."""
    import flows.pipeline  # noqa: F401  (escapes Prefect's run loggers)

    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        record = logger.makeRecord(name, logging.ERROR, __file__, 1, "failed at stage land: %s", (HOSTILE,), None)
        assert logger.filter(record)
        assert record.getMessage() == f"failed at stage land: {SHOWN}"
