"""The command line as people use it: the same exit codes from every command (0 done, 1 the run
failed, 2 usage, config or input), one `error:` line naming what to fix, the traceback only with
--debug, no library noise on the console, and a progress line before the slow start-up."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import flows.cli
import flows.commands
from flows.cli import main
from flows.core.errors import EXIT_FAILED, EXIT_INPUT, exit_code
from flows.core.months import Month
from flows.ingest.sources.sacct import REQUIRED_FIELDS

REPO = Path(__file__).resolve().parents[1]
MONTH = Month.parse("2026-10")
CONFIG = (
    'cluster = "rsc1"\n\n'
    '[[sources]]\nkind = "sacct_psv"\npath = "logs/{month}/sacct.psv"\n\n'
    '[[sources]]\nkind = "sacctmgr_events_psv"\npath = "logs/{month}/events.psv"\n\n'
    '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "rsc1.duckdb"\n'
)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "rsc1.toml"
    path.write_text(CONFIG)
    return path


# one record of a job in MONTH: a month without one is refused before the start-up (flows/ingest/month_records.py)
A_RECORD = (
    "1|1|j|alice|llm|gpu|normal|COMPLETED|0:0|2026-10-01T00:00:00|2026-10-01T00:00:00|2026-10-01T00:00:00|"
    "2026-10-01T01:00:00|01:00:00|1|node1|billing=1,cpu=1,gres/gpu=1,node=1"
)


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--month", "2099-01", "--config", "{config}"],
        ["run", "--month", "2026-10", "--config", "{config}", "--as-of", "yesterday"],
        ["backfill", "--from", "2026-10", "--to", "2026-09", "--config", "{config}"],
        ["backfill", "--from", "2026-10", "--to", "2099-01", "--config", "{config}"],
        ["simulate", "--cluster", "x", "--month", "2026-10", "--to", "2026-11", "--nodes", "4", "--out", "{tmp}"],
        ["simulate", "--cluster", "x", "--from", "2026-10", "--nodes", "4", "--out", "{tmp}"],
        ["run", "--month", "2026-10", "--config", "{tmp}/no-such.toml"],
        ["backfill", "--from", "2026-09", "--to", "2026-10", "--config", "{tmp}/no-such.toml"],
        ["check", "--config", "{tmp}/no-such.toml"],
    ],
    ids=[
        "run-future",
        "run-bad-as-of",
        "backfill-reversed",
        "backfill-future",
        "simulate-month-and-to",
        "simulate-from-without-to",
        "run-no-config",
        "backfill-no-config",
        "check-no-config",
    ],
)
def test_usage_and_config_errors_exit_2_with_one_error_line(argv, config, tmp_path, capsys):
    argv = [arg.format(config=config, tmp=tmp_path) for arg in argv]
    assert main(argv) == EXIT_INPUT
    out, err = capsys.readouterr()
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err + out


def test_run_names_the_missing_job_records_first_and_stops_before_the_start_up(config, tmp_path, capsys, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("Prefect was started for a month without inputs")

    monkeypatch.setattr(flows.commands, "prefect_start_up", never)
    assert main(["run", "--month", str(MONTH), "--config", str(config)]) == EXIT_INPUT
    (line,) = error_lines(capsys.readouterr().err)
    month_dir = tmp_path / "logs" / str(MONTH)
    # the job records, without which there is no month, come first; the optional source after them
    assert line.startswith(f"error: no job records for {MONTH}: {month_dir / 'sacct.psv'} does not exist; "), line
    assert line.endswith(f"source sacctmgr_events_psv: {month_dir / 'events.psv'} does not exist"), line


def test_a_progress_line_comes_before_the_start_up(config, tmp_path, capsys, monkeypatch):
    month_dir = tmp_path / "logs" / str(MONTH)
    month_dir.mkdir(parents=True)
    (month_dir / "sacct.psv").write_text("|".join(REQUIRED_FIELDS) + "\n" + A_RECORD + "\n")
    (month_dir / "events.psv").write_text("")
    printed = []

    def start_up(debug: bool, engine: str | None = None) -> None:
        raise RuntimeError("stopped after the start-up line")

    # the start-up begins with the temporary Prefect API server: not started (the quick tier starts no server)
    monkeypatch.setattr(flows.commands, "start_api", lambda: printed.append(capsys.readouterr().out))
    monkeypatch.setattr(flows.commands, "prefect_start_up", start_up)
    assert main(["run", "--month", str(MONTH), "--config", str(config)]) == EXIT_FAILED
    assert error_lines(capsys.readouterr().err) == ["error: stopped after the start-up line"]
    (out,) = printed
    assert out.strip().endswith("rsc1 2026-10: starting Prefect ..."), out


@pytest.mark.parametrize("command", ["run", "backfill"])
def test_the_first_progress_line_does_not_wait_for_prefects_import(command, config, tmp_path):
    month_dir = tmp_path / "logs" / str(MONTH)
    month_dir.mkdir(parents=True)
    (month_dir / "sacct.psv").write_text("|".join(REQUIRED_FIELDS) + "\n" + A_RECORD + "\n")
    (month_dir / "events.psv").write_text("")
    script = (
        "import sys, flows.cli as cli, flows.commands as commands\n"
        "def say(line):\n"
        "    print('heavy:', sorted({'prefect', 'dbt', 'great_expectations'} & set(sys.modules)), flush=True)\n"
        "    raise SystemExit(0)\n"
        "commands.say = say\n"
        "cli.main(sys.argv[1:])\n"
    )
    months = ["--month", str(MONTH)] if command == "run" else ["--from", str(MONTH), "--to", str(MONTH)]
    done = subprocess.run(
        [sys.executable, "-c", script, command, *months, "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.stdout == "heavy: []\n", done.stdout + done.stderr


def test_an_unexpected_error_is_one_line_and_its_traceback_only_with_debug(config, capsys, monkeypatch):
    def broken(args):
        raise KeyError("month")

    monkeypatch.setattr(flows.cli, "cmd_check", broken)  # the parser is built by each main()

    assert main(["check", "--config", str(config)]) == EXIT_FAILED
    (line,) = error_lines(capsys.readouterr().err)
    assert line == "error: KeyError: 'month' (a bug? --debug shows the traceback)"

    assert main(["check", "--config", str(config), "--debug"]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "KeyError: 'month'" in err
    assert err.splitlines()[-1] == line


def test_a_backfill_exits_2_when_its_months_failed_on_their_inputs_else_1():
    from flows.backfill import BackfillError

    assert exit_code(BackfillError("1 of 1 months failed", inputs_only=True)) == EXIT_INPUT
    assert exit_code(BackfillError("2 of 2 months failed", inputs_only=False)) == EXIT_FAILED


@pytest.mark.slow  # a whole backfill through the installed entry point
def test_the_console_script_prints_no_tracebacks_or_leak_noise(config, tmp_path):
    """A backfill whose month has no logs, through the installed entry point: the progress lines,
    then one error line naming the job records, exit 2 (the same as `run`), nothing else on stderr."""
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "reliability-report")]
        + ["backfill", "--from", str(MONTH), "--to", str(MONTH), "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert done.returncode == EXIT_INPUT, done.stdout + done.stderr
    (line,) = error_lines(done.stderr)
    assert line.startswith(f"error: 1 of 1 months failed: {MONTH}: at stage land: MissingInputError: no job records")
    first = done.stdout.splitlines()[0]
    assert first.endswith(f"rsc1 {MONTH}..{MONTH}: starting Prefect ..."), done.stdout


def test_the_demo_builds_as_far_back_as_its_longest_trailing_window(tmp_path):
    """So its report names no month as not built: the demo's months by default are those of its
    config's longest trailing window (a year)."""
    from flows.config.file import load_config
    from flows.demo import demo_months, write_demo_config
    from flows.figures.compare import history_months

    config = write_demo_config(tmp_path, "demo", tmp_path / "reports")
    assert demo_months(config) == len(history_months(Month.parse("2026-10"), load_config(config).analysis)) == 12
