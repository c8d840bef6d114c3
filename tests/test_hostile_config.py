"""The hostile-input corpus, config part (issue 21): a config or command line that is wrong in one
way is refused before any work with one line per problem naming the config key (or the option),
exit code 2, and nothing is written anywhere."""

from pathlib import Path

import pytest
from hostile import Outcome, hostile

from flows.cli import main
from flows.config.file import load_config
from flows.core.errors import EXIT_INPUT, ConfigError, exit_code
from flows.ingest.probe import check_can_run

SOURCE = '[[sources]]\nkind = "sacct_psv"\npath = "logs/{month}/sacct.psv"\n'
BASE = f'cluster = "rsc1"\n\n{SOURCE}\n'
EMAIL = '[email]\nfrom = "r@example.org"\nto = ["ops@example.org"]\nsmtp_host = "smtp.example.org"\n'


def tree(directory: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in directory.rglob("*")}


# (config text, a line the error must hold: the section and key, and what is wrong)
CASES = {
    "a number as text": (BASE + '[analysis]\ngpus_per_node = "eight"\n', "[analysis] gpus_per_node must be an integer"),
    "a float for an integer": (BASE + "[analysis]\nlemon_window_days = 28.5\n", "[analysis] lemon_window_days must be"),
    "a bool for a number": (BASE + "[ingest]\nmax_bad_rows = true\n", "[ingest] max_bad_rows must be an integer"),
    "a share above 1": (BASE + "[ingest]\nmax_bad_row_share = 2.0\n", "[ingest] max_bad_row_share must be less"),
    "a memory limit that is not a size": (
        BASE + '[warehouse]\nmemory_limit = "lots"\n',
        "[warehouse] memory_limit could not parse value and unit from byte string",
    ),
    "a memory limit too small for DuckDB": (
        BASE + '[warehouse]\nmemory_limit = "64MB"\n',
        "[warehouse] memory_limit must be greater than or equal to 134217728",
    ),
    "a Spark schema that is not a name": (
        BASE + '[warehouse]\nengine = "spark"\nspark_schema = "x; drop table y"\n',
        "[warehouse] spark_schema must be a Spark schema name: letters, digits and '_'",
    ),
    "an unknown top-level key": (BASE.replace("cluster", "clustr = 1\ncluster", 1), "unknown key 'clustr'"),
    "an unknown section": (BASE + "[analyses]\ngpus_per_node = 8\n", "unknown key 'analyses' (did you mean"),
    "the cluster missing": (SOURCE, "cluster is required"),
    "a cluster name with a slash": (BASE.replace('"rsc1"', '"../etc"'), "cluster must be letters, digits"),
    "an unknown time zone": (
        'site_timezone = "Europe/Pariss"\n' + BASE,
        "site_timezone must be an IANA time zone such as 'UTC' or 'America/New_York' (did you mean 'Europe/Paris'?)",
    ),
    "a time zone as a number": ("site_timezone = 1\n" + BASE, "site_timezone must be a string"),
    "an offset for a time zone": ('site_timezone = "+02:00"\n' + BASE, "site_timezone must be an IANA time zone"),
    "a placeholder that is not month or cluster": (
        BASE.replace("{month}", "{year}"),
        '[[sources]] #1 (kind "sacct_psv"): path may contain only the placeholders {month} and {cluster}',
    ),
    "an empty source path": (BASE.replace('"logs/{month}/sacct.psv"', '""'), "path must not be empty"),
    "an unknown source kind": (BASE.replace('"sacct_psv"', '"sacct_xml"'), "kind 'sacct_xml' is not a source kind"),
    "no job records": (
        'cluster = "rsc1"\n[[sources]]\nkind = "xid_syslog"\npath = "x.log"\n',
        "a sacct_psv",
    ),
    "the job records twice": (
        BASE + SOURCE.replace("sacct.psv", "again.psv"),
        "one source only, not from [[sources]] #1 (sacct_psv) and [[sources]] #2 (sacct_psv)",
    ),
    "an SMTP port out of range": (BASE + EMAIL + "smtp_port = 70000\n", "[email] smtp_port must be less than"),
    "an unknown SMTP security": (BASE + EMAIL + 'smtp_security = "tls"\n', "[email] smtp_security must be one of"),
    "a recipient that is no address": (
        BASE + EMAIL.replace("ops@example.org", "ops at example"),
        "[email] to #1 must be an email address",
    ),
    "recipients without an SMTP host": (
        BASE + EMAIL.replace('smtp_host = "smtp.example.org"\n', ""),
        "[email] smtp_host is required to send to ops@example.org",
    ),
    "a password in the config": (BASE + EMAIL + 'password = "hunter2"\n', "[email] 'password': credentials never go"),
    "a login over plain SMTP": (
        BASE + EMAIL + 'smtp_security = "plain"\nsmtp_username_env = "U"\nsmtp_password_env = "P"\n',
        "[email] no login over an unencrypted connection",
    ),
    "a zero SMTP timeout": (
        BASE + EMAIL + "smtp_timeout_seconds = 0\n",
        "[email] smtp_timeout_seconds must be greater",
    ),
    "a webhook URL that is not http": (BASE + '[webhook]\nurl = "ftp://chat.example.org/x"\n', "[webhook] url must be"),
    "a repeat window longer than the lemon window": (
        BASE + "[analysis]\nlemon_repeat_days = 40\n",
        "[analysis] lemon_repeat_days (40) must not exceed lemon_window_days (28)",
    ),
    "no projection sizes": (
        BASE + "[analysis]\nprojection_gpus = []\n",
        "[analysis] projection_gpus must have at least",
    ),
    "not TOML": (BASE + "[analysis\n", "invalid TOML"),
}


@hostile(Outcome.ERROR)
@pytest.mark.parametrize("text, expected", CASES.values(), ids=CASES.keys())
def test_a_bad_config_is_refused_naming_the_key(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "rsc1.toml"
    path.write_text(text)
    before = tree(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    lines = str(raised.value).splitlines()
    assert all(line.startswith(f"{path}: ") for line in lines), lines
    assert any(expected in line for line in lines), lines
    assert exit_code(raised.value) == EXIT_INPUT
    assert tree(tmp_path) == before  # nothing written


@hostile(Outcome.ERROR)
@pytest.mark.parametrize("make", ["missing", "a directory"])
def test_a_config_file_that_cannot_be_read_is_named(tmp_path: Path, make: str) -> None:
    path = tmp_path / "rsc1.toml"
    if make == "a directory":
        path.mkdir()
    with pytest.raises(
        ConfigError, match=rf"^{path}: (config file not found|cannot read the config: .*Is a directory)"
    ):
        load_config(path)
    assert [p.name for p in tmp_path.iterdir()] == (["rsc1.toml"] if make == "a directory" else [])


@hostile(Outcome.ERROR)
@pytest.mark.parametrize(
    "paths, key",
    [
        pytest.param('data = "taken"\n', "[paths] data: {tmp}/taken is a file, not a directory", id="data is a file"),
        pytest.param(
            'reports = "taken/reports"\n',
            "[paths] reports: {tmp}/taken/reports cannot be made: {tmp}/taken is not a directory",
            id="reports under a file",
        ),
        pytest.param(
            'warehouse = "wh"\n', "[paths] warehouse: {tmp}/wh is a directory, not a file", id="warehouse is a dir"
        ),
    ],
)
def test_an_output_path_that_cannot_be_written_names_its_key(tmp_path: Path, paths: str, key: str) -> None:
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "wh").mkdir()
    config = tmp_path / "rsc1.toml"
    config.write_text(BASE + "[paths]\n" + paths)
    before = tree(tmp_path)
    with pytest.raises(ConfigError) as raised:
        check_can_run(load_config(config))
    assert str(raised.value) == f"{config}: " + key.format(tmp=tmp_path)
    assert tree(tmp_path) == before


@hostile(Outcome.ERROR)
@pytest.mark.parametrize(
    "argv, expected",
    [
        pytest.param(["--month", "2026-13"], "argument --month: ", id="month 13"),
        pytest.param(["--month", "26-10"], "argument --month: ", id="two-digit year"),
        pytest.param(["--month", "2026-10-01"], "argument --month: ", id="a day"),
        pytest.param(["--month", "2026-10", "--as-of", "yesterday"], "--as-of", id="as-of not a time"),
    ],
)
def test_a_bad_month_or_time_on_the_command_line_is_one_line_naming_the_option(
    tmp_path: Path, capsys, argv: list[str], expected: str
) -> None:
    config = tmp_path / "rsc1.toml"
    config.write_text(BASE)
    try:
        code = main(["run", "--config", str(config), *argv])
    except SystemExit as exit:  # argparse's own refusal
        code = exit.code
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert expected in err and "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["rsc1.toml"]
