"""The config is checked when it is loaded, before any work: every key's type and range, unknown keys with
the nearest known one, placeholders filled in without evaluation, safe cluster names; `check` and `init`."""

import dataclasses
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.cli import main
from flows.config.cluster import AnalysisConfig
from flows.config.file import load_config, starter_config
from flows.core.errors import ConfigError
from flows.core.months import Month
from flows.ingest.sources.registry import URL_KINDS, URL_SETTINGS, given_input
from flows.ingest.sources.sacct import REQUIRED_FIELDS

REPO = Path(__file__).resolve().parents[1]
BASE = 'cluster = "rsc1"\n\n[[sources]]\nkind = "sacct_psv"\npath = "logs/{month}/sacct.psv"\n\n'
MONTH = Month.parse("2026-10")


def write(tmp_path: Path, text: str, name: str = "rsc1.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(tmp_path: Path, text: str) -> list[str]:
    """The lines of the ConfigError that loading `text` raises."""
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    lines = str(caught.value).splitlines()
    for line in lines:  # one line per problem, in the file's terms, never pydantic's
        assert line.startswith(str(tmp_path / "rsc1.toml") + ": ")
        assert not re.search(r"pydantic|errors\.pydantic\.dev|Traceback|type=|input_value", line)
    return [line.split(": ", 1)[1] for line in lines]


def test_a_misspelt_top_level_key_is_an_error_naming_the_known_one(tmp_path):
    text = BASE.replace('cluster = "rsc1"\n', 'cluster = "rsc1"\nsite_timzone = "Europe/Paris"\n')
    assert problems(tmp_path, text) == ["unknown key 'site_timzone' (did you mean 'site_timezone'?)"]


def test_a_misspelt_key_in_a_source_is_an_error_with_the_source(tmp_path):
    text = BASE + '[[sources]]\nkind = "xid_syslog"\npth = "logs/{month}/xid.log"\n'
    # only the misspelling: not also "path is required"
    assert problems(tmp_path, text) == [
        "[[sources]] #2 (kind \"xid_syslog\"): unknown key 'pth' (did you mean 'path'?)"
    ]


def test_a_misspelt_key_in_paths_is_an_error(tmp_path):
    text = BASE + '[paths]\ndata = "var/data"\nreprots = "reports"\n'
    assert problems(tmp_path, text) == ["[paths] unknown key 'reprots' (did you mean 'reports'?)"]


def test_a_key_below_the_wrong_header_says_where_it_belongs(tmp_path):
    assert problems(tmp_path, BASE + 'site_timezone = "UTC"\n') == [
        "[[sources]] #1 (kind \"sacct_psv\"): unknown key 'site_timezone' here (it belongs at the top, before the "
        "first [section])"
    ]
    assert problems(tmp_path, "gpus_per_node = 8\n" + BASE) == [
        "unknown key 'gpus_per_node' here (it belongs in [analysis])"
    ]


def test_negative_attribution_windows_are_errors(tmp_path):
    text = BASE + "[analysis]\nattr_before_minutes = -10\nattr_after_minutes = -5\n"
    assert problems(tmp_path, text) == [
        "[analysis] attr_before_minutes must be greater than or equal to 0, got -10",
        "[analysis] attr_after_minutes must be greater than or equal to 0, got -5",
    ]


def test_a_number_given_as_text_is_an_error_at_load_not_at_dbt(tmp_path):
    started = time.perf_counter()
    assert problems(tmp_path, BASE + '[analysis]\ngpus_per_node = "eight"\n') == [
        "[analysis] gpus_per_node must be an integer, got 'eight'"
    ]
    assert time.perf_counter() - started < 1
    # strict: no quiet coercion of "8" or true either
    assert problems(tmp_path, BASE + '[analysis]\ngpus_per_node = "8"\npaper_min_gpus = true\n') == [
        "[analysis] gpus_per_node must be an integer, got '8'",
        "[analysis] paper_min_gpus must be an integer, got True",
    ]


def test_an_unknown_time_zone_is_an_error_at_load(tmp_path):
    text = BASE.replace('cluster = "rsc1"\n', 'cluster = "rsc1"\nsite_timezone = "Europe/Pariss"\n')
    (line,) = problems(tmp_path, text)
    assert line.startswith("site_timezone must be an IANA time zone") and "did you mean 'Europe/Paris'?" in line
    text = BASE.replace('cluster = "rsc1"\n', 'cluster = "rsc1"\nsite_timezone = "../../etc/passwd"\n')
    assert problems(tmp_path, text)[0].startswith("site_timezone must be an IANA time zone")


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ('"ten"', "[ingest] max_bad_rows must be an integer, got 'ten'"),
        ("-5", "[ingest] max_bad_rows must be greater than or equal to 0, got -5"),
        ("10.5", "[ingest] max_bad_rows must be an integer, got 10.5"),
    ],
)
def test_a_bad_max_bad_rows_is_an_error_not_a_crash(tmp_path, value, error):
    assert problems(tmp_path, BASE + f"[ingest]\nmax_bad_rows = {value}\n") == [error]


def test_ranges_of_the_analysis_keys(tmp_path):
    text = BASE + (
        "[analysis]\nprojection_gpus = [1024, 0]\nettr_curve_minutes = []\nlemon_p_value = 1.5\n"
        "ckpt_interval_minutes = 0\nlost_work_cap_minutes = inf\ntrailing_months = [3, -6]\n"
    )
    assert problems(tmp_path, text) == [
        "[analysis] projection_gpus #2 must be greater than 0, got 0",
        "[analysis] ckpt_interval_minutes must be greater than 0, got 0",
        "[analysis] ettr_curve_minutes must have at least 1 item",
        "[analysis] lost_work_cap_minutes must be a finite number, got inf",
        "[analysis] trailing_months #2 must be greater than 0, got -6",
        "[analysis] lemon_p_value must be less than 1, got 1.5",
    ]
    assert problems(tmp_path, BASE + "[analysis]\nlemon_repeat_days = 30\n") == [
        "[analysis] lemon_repeat_days (30) must not exceed lemon_window_days (28)"
    ]


@pytest.mark.parametrize("path", ["inputs/{0}.psv", "inputs/{month.__class__.__init__.__globals__}", "in/{mnth}"])
def test_a_path_with_another_placeholder_is_an_error_and_never_evaluated(tmp_path, path):
    (line,) = problems(tmp_path, BASE.replace("logs/{month}/sacct.psv", path))
    placeholder = re.search(r"\{.*\}", path).group()
    assert line == (
        f'[[sources]] #1 (kind "sacct_psv"): path may contain only the placeholders {{month}} and {{cluster}}, '
        f"not {placeholder!r}, got {path!r}"
    )
    assert "__builtins__" not in line  # no globals dumped


def test_month_and_cluster_are_filled_in_by_replacement(tmp_path):
    text = BASE.replace("logs/{month}/sacct.psv", "logs/{cluster}/{month}/{cluster}.psv") + (
        '[paths]\ndata = "var/{cluster}"\n'
    )
    config = load_config(write(tmp_path, text))
    assert config.source_paths(MONTH)["sacct_psv"] == tmp_path / "logs" / "rsc1" / "2026-10" / "rsc1.psv"
    assert config.data_dir == tmp_path / "var" / "rsc1"
    assert config.warehouse_path == tmp_path / "warehouse" / "rsc1.duckdb"  # the default
    (line,) = problems(tmp_path, BASE + '[paths]\nwarehouse = "w/{month}.duckdb"\n')
    assert line.startswith("[paths] warehouse may contain only the placeholders {cluster}, not '{month}'")


@pytest.mark.parametrize("name", ["../../escaped", "a/b", "..", ".", "", "rsc1\\r\\nBcc: x@example.org", "rsc1\\n"])
def test_a_cluster_name_cannot_escape_the_data_dir_or_reach_a_header(tmp_path, name):
    (line,) = problems(tmp_path, BASE.replace('"rsc1"', f'"{name}"'))
    assert line.startswith("cluster must be")


def test_unknown_source_kind_and_email_credentials(tmp_path):
    assert problems(tmp_path, BASE + '[[sources]]\nkind = "xid_syslgo"\npath = "x.log"\n') == [
        "[[sources]] #2: kind 'xid_syslgo' is not a source kind (did you mean 'xid_syslog'?)"
    ]
    email = '[email]\nfrom = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\n'
    (line,) = problems(tmp_path, BASE + email + 'smtp_password = "hunter2"\n')
    assert line.startswith("[email] 'smtp_password': credentials never go in the config")
    assert problems(tmp_path, BASE + email + "smtp_port = 70000\n") == [
        "[email] smtp_port must be less than or equal to 65535, got 70000"
    ]
    assert problems(tmp_path, BASE + email.replace('"r@x.org"', '"r@x.org\\r\\nBcc: e@x.org"')) == [
        "[email] from must be on one line, got 'r@x.org\\r\\nBcc: e@x.org'"
    ]


def test_the_interface_the_rest_of_the_code_uses_is_kept(tmp_path):
    defaults = AnalysisConfig()
    assert (defaults.attr_before_minutes, defaults.attr_after_minutes, defaults.ckpt_interval_minutes) == (10, 5, 60.0)
    assert dataclasses.replace(defaults, gpus_per_node=4).gpus_per_node == 4
    email = '[email]\nfrom = "r@x.org"\nto = ["a@x.org"]\nsmtp_host = "h"\nsmtp_security = "ssl"\n'
    config = load_config(write(tmp_path, BASE + "[analysis]\nrestart_overhead_minutes = 5\n" + email))
    assert config.analysis.restart_overhead_minutes == 5.0 and config.email.port == 465
    assert dataclasses.replace(config.email, smtp_port=2525).port == 2525
    assert dataclasses.replace(config, warehouse_path=tmp_path / "w.duckdb").warehouse_path == tmp_path / "w.duckdb"


def test_the_documented_example_config_loads(tmp_path):
    """docs/configuration.md's full example (README's short one: tests/test_docs.py)."""
    guide = (REPO / "docs" / "configuration.md").read_text()
    section = guide.split("## The keys, by example", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    config = load_config(write(tmp_path, example))
    assert config.cluster == "rsc1" and len(config.sources) == 9 and config.email is not None
    assert config.webhook is not None and config.webhook.url_env == "REPORT_WEBHOOK_URL"


def write_month(tmp_path: Path) -> None:
    month_dir = tmp_path / "logs" / str(MONTH)
    month_dir.mkdir(parents=True)
    record = "1|1|j|u|a|p|q|COMPLETED|0:0|2026-10-01T00:00:00|Unknown|2026-10-01T00:00:00|Unknown|00:01:00|1|n1|cpu=1"
    (month_dir / "sacct.psv").write_text("|".join(REQUIRED_FIELDS) + "\n" + record + "\n")
    (month_dir / "dcgm" / "node1").mkdir(parents=True)


def test_init_writes_a_config_that_check_accepts_and_never_overwrites(tmp_path, capsys):
    out = tmp_path / "rsc1.toml"
    assert main(["init", "--cluster", "rsc1", "--out", str(out)]) == 0
    text = out.read_text()
    for key in ("site_timezone", "max_bad_row_share", "lemon_p_value", "warehouse", "retry_wait_seconds"):
        assert re.search(rf"^(# )?{key} = .+  # \S", text, re.M), key  # every key, with its default and meaning
    assert main(["check", "--config", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"OK {out}: cluster rsc1")
    write_month(tmp_path)
    assert main(["check", "--config", str(out), "--month", str(MONTH)]) == 0
    assert main(["init", "--cluster", "other", "--out", str(out)]) == 2
    assert "exists; not overwritten" in capsys.readouterr().err and out.read_text() == text
    assert main(["init", "--cluster", "../x", "--out", str(tmp_path / "x.toml")]) == 2
    assert not (tmp_path / "x.toml").exists()


def test_check_of_a_month_loads_no_prefect_dbt_or_gx(tmp_path):
    """`check` is quick because it imports none of the heavy libraries (what it takes is measured
    in bench/README.md, not timed here on a shared machine)."""
    write_month(tmp_path)
    config = write(tmp_path, BASE + '[[sources]]\nkind = "dcgm_health_dir"\npath = "logs/{month}/dcgm"\n')
    script = (
        "import sys; from flows.cli import main; code = main(sys.argv[1:]); "
        "heavy = {'prefect', 'dbt', 'great_expectations'} & {m.split('.')[0] for m in sys.modules}; "
        "print('heavy:', sorted(heavy)); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "check", "--config", str(config), "--month", str(MONTH)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "every input present and readable" in done.stdout and "heavy: []" in done.stdout


def test_check_names_missing_and_unreadable_inputs(tmp_path, capsys):
    text = BASE + (
        '[[sources]]\nkind = "sacctmgr_events_psv"\npath = "logs/{month}/events.psv"\n\n'
        '[[sources]]\nkind = "dcgm_health_dir"\npath = "logs/{month}/dcgm"\n\n'
        '[[sources]]\nkind = "scontrol_nodes_command"\ncommand = ["no-such-scontrol-here"]\n'
    )
    config = write(tmp_path, text)
    assert main(["check", "--config", str(config), "--month", str(MONTH)]) == 2
    err = capsys.readouterr().err
    month_dir = tmp_path / "logs" / str(MONTH)
    assert f"source sacct_psv: {month_dir / 'sacct.psv'} does not exist" in err
    assert f"source sacctmgr_events_psv: {month_dir / 'events.psv'} does not exist" in err
    assert f"source dcgm_health_dir: directory {month_dir / 'dcgm'} does not exist" in err
    assert "source scontrol_nodes_command: command 'no-such-scontrol-here' is not on PATH" in err

    month_dir.mkdir(parents=True)
    (month_dir / "sacct.psv").write_text("JobID|State\n1|COMPLETED\n")
    assert main(["check", "--config", str(write(tmp_path, BASE)), "--month", str(MONTH)]) == 2
    assert "source sacct_psv: " in (err := capsys.readouterr().err) and "missing columns JobIDRaw, JobName" in err


def test_a_config_error_on_the_command_line_is_one_line_each_and_exit_2(tmp_path, capsys):
    text = BASE.replace('cluster = "rsc1"\n', 'cluster = "rsc1"\nsite_timzone = "UTC"\n') + (
        '[analysis]\ngpus_per_node = "eight"\n'
    )
    assert main(["check", "--config", str(write(tmp_path, text))]) == 2
    err = capsys.readouterr().err.splitlines()
    # each problem on a line of its own, each line an `error:` (issue 42: the second lacked it)
    assert len(err) == 2 and all(line.startswith("error: ") for line in err), err
    assert "pydantic" not in "".join(err)


def test_a_command_sources_retries_are_checked_and_default_to_four_attempts(tmp_path):
    live = 'cluster = "rsc1"\n\n[[sources]]\nkind = "sacct_command"\ncommand = ["ssh", "head", "sacct"]\n'
    (source,) = load_config(write(tmp_path, live)).sources
    assert (source.attempts, source.retry_wait_seconds) == (4, 10.0)
    (source,) = load_config(write(tmp_path, live + "attempts = 1\nretry_wait_seconds = 0.5\n")).sources
    assert (source.attempts, source.retry_wait_seconds) == (1, 0.5)
    assert problems(tmp_path, live + 'attempts = 0\nretry_wait_seconds = "10"\n') == [
        '[[sources]] #1 (kind "sacct_command"): attempts must be greater than 0, got 0',
        "[[sources]] #1 (kind \"sacct_command\"): retry_wait_seconds must be a number, got '10'",
    ]
    assert problems(tmp_path, BASE.replace('sacct.psv"\n', 'sacct.psv"\nattempts = 3\n')) == [
        "[[sources]] #1 (kind \"sacct_psv\"): unknown key 'attempts' (known: kind, path, timezone, node_names)"
    ]


def test_the_starter_and_documented_configs_show_a_command_sources_retries(tmp_path):
    """Uncommented, the live sources of `init`'s config and of docs/configuration.md's example load, with their retry keys."""
    starter = subprocess.run(
        [sys.executable, "-c", "from flows.config.file import starter_config; print(starter_config('rsc1'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    guide = (REPO / "docs" / "configuration.md").read_text().split("## The keys, by example", 1)[1]
    for text in (starter, re.search(r"```toml\n(.*?)```", guide, re.S).group(1)):
        block = re.search(r'# \[\[sources\]\][^\n]*\n# kind = "sacct_command".*?(?=\n#? ?\[|\n\n)', text, re.S)
        assert block, "no sacct_command example"
        live = "\n".join(line.removeprefix("# ") for line in block.group(0).splitlines())
        assert re.search(r"^attempts = 4\b", live, re.M) and re.search(r"^retry_wait_seconds = 10", live, re.M)
        (source,) = load_config(write(tmp_path, f'cluster = "rsc1"\n\n{live}\n')).sources
        assert source.kind == "sacct_command" and source.attempts == 4


@pytest.mark.parametrize(
    "section, error",
    [
        ("", "[webhook] give url_env (the environment variable holding the URL) or url, one of them"),
        ('url = "http://x/h"\nurl_env = "HOOK"\n', "give url_env"),
        ('url = "ftp://x/h"\n', "[webhook] url must be an http:// or https:// URL"),
        ('url_env = "HOOK"\nreport_url = "https://r/{month}/{host}"\n', "may contain only the placeholders"),
        ('url_env = "HOOK"\nsend_attempts = 0\n', "[webhook] send_attempts"),
        ('url_env = "HOOK"\nurll = "x"\n', "unknown key 'urll'"),
    ],
)
def test_the_webhook_section_is_checked_at_load(tmp_path, section, error):
    (problem,) = problems(tmp_path, BASE + "[webhook]\n" + section)
    assert error in problem, problem


@pytest.mark.parametrize("command", ["check", "run"])
def test_the_spark_engine_without_its_packages_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command):
    """An installation without the Spark extras (`make setup` installs none) and a config asking for
    Spark: one error naming the key and how to install them, exit 2, before the landing."""
    import importlib.util

    real = importlib.util.find_spec
    # neither package, whether this venv has them (`make test`) or not (`make test-fast` after `make setup`)
    spark = {"pyspark", "dbt.adapters.spark"}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in spark else real(name, *a))
    config = write(tmp_path, BASE + '[warehouse]\nengine = "spark"\n')
    write_month(tmp_path)
    argv = [command, "--config", str(config)] + (["--month", str(MONTH)] if command == "run" else [])
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f'error: {config}: [warehouse] engine = "spark" needs pyspark and dbt-spark, which this')
    assert "make setup-spark" in line and "(a bug?" not in line
    assert not (tmp_path / "data").exists()  # nothing landed


def test_a_server_source_takes_its_credentials_from_the_environment_only(tmp_path):
    prom = BASE + '\n[[sources]]\nkind = "prometheus_dcgm"\nurl = "http://prom:9090"\n'
    (_, source) = load_config(write(tmp_path, prom)).sources
    assert source.server.url == "http://prom:9090" and (source.server.step_seconds, source.server.attempts) == (30, 4)
    where = '[[sources]] #2 (kind "prometheus_dcgm"): '
    assert problems(tmp_path, prom.replace("http://prom", "http://admin:pw@prom")) == [
        f"{where}url must not carry credentials (user:password@): give them in the environment (token_env, ...), "
        "got 'http://admin:pw@prom:9090'"
    ]
    assert problems(tmp_path, prom + 'token = "abc"\n') == [f"{where}unknown key 'token' (did you mean 'token_env'?)"]
    assert problems(tmp_path, prom + 'username_env = "PROM_USER"\n') == [
        f"{where}give username_env and password_env together, or neither"
    ]
    rest = 'cluster = "rsc1"\n\n[[sources]]\nkind = "slurmrestd"\nurl = "http://head:6820"\napi_version = "0.0.38"\n'
    assert problems(tmp_path, rest + 'password_env = "PW"\n') == [
        "[[sources]] #1 (kind \"slurmrestd\"): unknown key 'password_env' (known: url, token_env, timeout_seconds, "
        "attempts, retry_wait_seconds, kind, user_name, api_version)",
        "[[sources]] #1 (kind \"slurmrestd\"): api_version must be a Slurm REST API version, e.g. v0.0.38, got '0.0.38'",
    ]
    (source,) = load_config(write(tmp_path, rest.replace('"0.0.38"', '"v0.0.38"'))).sources
    assert source.server.token_env == "SLURM_JWT" and source.server.api_version == "v0.0.38"


def test_init_lists_each_server_source_with_every_key_and_uncommented_it_loads(tmp_path):
    starter = starter_config("rsc1")
    for kind in URL_KINDS:
        block = re.search(rf'# \[\[sources\]\][^\n]*\n# kind = "{kind}"\n.*?(?=\n\n)', starter, re.S)
        assert block, f"init lists no {kind}"
        live = "\n".join(line.removeprefix("# ") for line in block.group(0).splitlines())
        text = f'cluster = "rsc1"\n\n{live}\n' if given_input(kind) == "sacct_psv" else f"{BASE}{live}\n"
        sources = load_config(write(tmp_path, text)).sources
        assert sources[-1].server.kind == kind
        assert set(re.findall(r"^(\w+) =", live, re.M)) == set(URL_SETTINGS[kind].model_fields)
