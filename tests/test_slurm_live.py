"""A real Slurm 22.05 (slurmctld, 4 slurmd, slurmdbd, MariaDB, munge; all on 127.0.0.1), started here
from Debian's packages by tests/slurm/slurm_up.sh, runs the job scenario of tests/slurm/slurm_jobs.sh.
The pipeline then pulls the month live with `sacct` / `sacctmgr` and reports it.

The same scripts made the real fixtures in tests/data/slurm-22.05/ (its README lists the scenario's
jobs and the commands). The daemons are stopped by PID at the end, even when a test fails.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.cli import main
from flows.config.file import load_config
from flows.core.errors import EXIT_INPUT
from flows.core.months import Month
from flows.deployments import monthly_report
from flows.ingest.land import land_month

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

SCRIPTS = Path(__file__).resolve().parent / "slurm"
PORT_BASE = "17800"  # away from the scripts' default, so a developer's own test cluster is not touched


@pytest.fixture(scope="module")
def slurm():
    # Not pytest's tmp_path: that is mode 700, and the scenario submits a job as `nobody`.
    cluster_dir = Path(tempfile.mkdtemp(prefix="slurm-ci-", dir="/tmp"))
    cluster_dir.chmod(0o755)
    env = {**os.environ, "SLURM_CI_DIR": str(cluster_dir), "SLURM_CI_PORT_BASE": PORT_BASE}
    try:
        up = subprocess.run(
            ["bash", str(SCRIPTS / "slurm_up.sh"), "up"], env=env, capture_output=True, text=True, timeout=600
        )
        if up.returncode != 0:
            pytest.fail(f"slurm_up.sh failed:\n{up.stdout[-4000:]}\n{up.stderr[-2000:]}")
        out = cluster_dir / "scenario"
        jobs = subprocess.run(
            ["bash", str(SCRIPTS / "slurm_jobs.sh"), str(out)],
            env={**env, "SLURM_JOBS_FAST": "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if jobs.returncode != 0:
            pytest.fail(f"slurm_jobs.sh failed:\n{jobs.stdout[-4000:]}\n{jobs.stderr[-2000:]}")
        job_ids = dict(line.split() for line in (out / "job_ids.txt").read_text().splitlines())
        yield {"dir": cluster_dir, "job_ids": job_ids}
    finally:
        subprocess.run(["bash", str(SCRIPTS / "slurm_up.sh"), "down"], env=env, capture_output=True, timeout=180)
        shutil.rmtree(cluster_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def pulled(slurm, tmp_path_factory):
    os.environ["SLURM_CONF"] = str(slurm["dir"] / "etc" / "slurm.conf")
    work = tmp_path_factory.mktemp("live")
    config = work / "ci.toml"
    config.write_text(
        'cluster = "ci"\n\n'
        '[[sources]]\nkind = "sacct_command"\ncommand = ["sacct"]\n\n'
        '[[sources]]\nkind = "sacctmgr_events_command"\ncommand = ["sacctmgr"]\n\n'
        '[[sources]]\nkind = "scontrol_nodes_command"\ncommand = ["scontrol"]\n\n'
        '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "warehouse/ci.duckdb"\n'
    )
    now = datetime.now(UTC)
    month = Month(now.year, now.month)
    # the month so far: a live pull of the current month is a partial report, up to the pull
    summary = monthly_report(cluster="ci", config=str(config), month=str(month), partial=True)
    landed = work / "data" / "landed" / "ci" / str(month)
    return {
        "summary": summary,
        "attempts": pq.read_table(landed / "attempts.parquet").to_pylist(),
        "events": pq.read_table(landed / "node_events.parquet").to_pylist(),
        "raw": work / "data" / "raw" / "ci" / str(month),
        "manifest": json.loads((landed / "manifest.json").read_text()),
        "ids": slurm["job_ids"],
    }


def records(pulled, name: str) -> list[dict]:
    raw_id = pulled["ids"][name]
    return sorted((a for a in pulled["attempts"] if a["job_id_raw"] == raw_id), key=lambda a: a["submit_at"])


def test_states_exit_codes_and_gpus(pulled):
    (ok,) = records(pulled, "ok")
    assert (ok["state"], ok["gpus"], ok["exit_code"]) == ("COMPLETED", 3, 0)
    (exit3,) = records(pulled, "exit3")
    assert (exit3["state"], exit3["exit_code"], exit3["gpus"]) == ("FAILED", 3, 2)  # typed + untyped TRES once
    (sigkill,) = records(pulled, "sigkill")
    assert (sigkill["state"], sigkill["exit_signal"]) == ("FAILED", 9)
    (cancelled,) = records(pulled, "cancel_running")
    assert cancelled["state"] == "CANCELLED" and cancelled["cancelled_by_uid"] == 0
    (multinode,) = records(pulled, "multinode")
    assert multinode["n_nodes"] == 2 and multinode["gpus"] == 4
    (other,) = records(pulled, "other_user")
    assert other["user_name"] == "nobody"
    (pipe,) = records(pulled, "pipe")
    assert pipe["state"] == "COMPLETED"  # a `|` in the command line breaks nothing


def test_requeues_are_separate_attempts_of_one_job(pulled):
    assert [a["state"] for a in records(pulled, "requeue")] == ["REQUEUED", "COMPLETED"]
    # the AdminComment set before `scontrol requeue` is on the REQUEUED record
    assert records(pulled, "requeue")[0]["admin_comment"] == "requeue=admin"
    assert [a["state"] for a in records(pulled, "nodefail_requeue")] == ["NODE_FAIL", "COMPLETED"]
    later = records(pulled, "nodefail_requeue")[1]
    assert later["reason"] == "BeginTime"


def test_node_failures_and_arrays(pulled):
    (admin,) = records(pulled, "nodefail_admin")
    (lost,) = records(pulled, "node_lost")
    assert (admin["state"], admin["node_list"]) == ("NODE_FAIL", "node3")
    assert (lost["state"], lost["node_list"], lost["gpus"]) == ("NODE_FAIL", "node4", 8)
    array_master = pulled["ids"]["array"]
    tasks = sorted(a["job_id"] for a in pulled["attempts"] if a["job_id"].startswith(f"{array_master}_"))
    assert tasks == [f"{array_master}_0", f"{array_master}_1", f"{array_master}_2"]


def test_node_events_with_reasons(pulled):
    events = {(e["node"], e["state"]): e["reason"] for e in pulled["events"]}
    assert events[("node3", "DOWN")] == "xid 79 gpu fell off bus"
    assert events[("node4", "DOWN*")] == "Not responding"
    assert any(state == "DRAIN" for _, state in events)
    # the live `scontrol show node -o` snapshot: every node read, all back in service at pull time
    snapshot = pulled["manifest"]["sources"]["scontrol_nodes"]
    assert (snapshot["nodes"], snapshot["out_of_service"], snapshot["records"]) == (4, 0, 0)


def test_the_warehouse_attributes_the_node_failures(pulled):
    import duckdb

    warehouse = Path(pulled["summary"].report).parents[3] / "warehouse" / "ci.duckdb"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select job_id_raw, slurm_state, outcome, cause_category, matched_categories from fct_attempts"
        ).fetchall()
    by_id = {}
    for job_id_raw, state, outcome, cause, matched in rows:
        by_id.setdefault(job_id_raw, []).append((state, outcome, cause, matched))
    ids = pulled["ids"]
    # node3 was set DOWN with reason "xid 79 gpu fell off bus" under both jobs
    assert ("NODE_FAIL", "infra_failed", "gpu_unavailable", "gpu_unavailable") in by_id[ids["nodefail_admin"]]
    assert ("NODE_FAIL", "infra_failed", "gpu_unavailable", "gpu_unavailable") in by_id[ids["nodefail_requeue"]]
    # node4 stopped answering (DOWN*) at the job's end, then was drained for ECC errors inside the
    # same window: the incident's first event, nearest the end, is the cause; the ECC co-occurs
    ((state, outcome, cause, matched),) = by_id[ids["node_lost"]]
    assert (state, outcome, cause) == ("NODE_FAIL", "infra_failed", "node_unresponsive")
    assert matched.split(",") == ["gpu_memory", "node_unresponsive"]
    # a requeue marked as an admin's is not attributed
    assert ("REQUEUED", "requeued", None, None) in by_id[ids["requeue"]]
    assert (pulled["raw"] / "sacct.usv").is_file() and (pulled["raw"] / "events.psv").is_file()


def test_explain_shows_the_node_taken_down_under_the_job(pulled, capsys):
    """`scontrol update nodename=node3 state=down reason="xid 79 gpu fell off bus"` under a running
    job: `explain --job` names that event, on node3, as the cause of the job's NODE_FAIL."""
    config = Path(pulled["summary"].report).parents[3] / "ci.toml"
    job = pulled["ids"]["nodefail_admin"]
    assert main(["explain", "--job", job, "--config", str(config), "--json"]) == 0
    (attempt,) = json.loads(capsys.readouterr().out)["attempts"]
    assert (attempt["slurm_state"], attempt["outcome"], attempt["nodes"]) == ("NODE_FAIL", "infra_failed", ["node3"])
    (chosen,) = [e for e in attempt["evidence"]["events"] if e["chosen"]]
    assert (chosen["node"], chosen["source"], chosen["category"]) == ("node3", "slurm_event", "gpu_unavailable")
    assert chosen["what"] == "DOWN: xid 79 gpu fell off bus" and chosen["in_window"]
    assert main(["explain", "--job", job, "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "DOWN: xid 79 gpu fell off bus" in text and "<- the cause" in text
    assert max(map(len, text.splitlines())) <= 80


def test_a_live_pull_is_dumped_at_the_pull_time(pulled):
    as_of = datetime.fromisoformat(pulled["manifest"]["as_of"]["time"])
    assert pulled["manifest"]["as_of"]["basis"] == "pull"
    latest = max(t for a in pulled["attempts"] for t in (a["submit_at"], a["start_at"], a["end_at"]) if t is not None)
    assert latest <= as_of <= datetime.now(UTC).replace(tzinfo=None)
    metrics = json.loads(Path(pulled["summary"].metrics).read_text())
    assert metrics["period"] == {**metrics["period"], "end": as_of.isoformat(), "complete": False}


# slurmrestd (auth/jwt) of the same cluster: tests/slurm/slurm_up.sh starts it on base+20
REST_URL = f"http://127.0.0.1:{int(PORT_BASE) + 20}"


def this_month() -> Month:
    now = datetime.now(UTC)
    return Month(now.year, now.month)


def one_source_config(work: Path, source: str) -> Path:
    work.mkdir(exist_ok=True)
    config = work / "c.toml"
    config.write_text(
        f'cluster = "ci"\n\n[[sources]]\n{source}\n\n'
        '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "ci.duckdb"\n'
    )
    return config


def minted(key: bytes, expires_in: int) -> str:
    """A JWT for root (HS256) as `scontrol token` mints it, signed with `key`."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    exp = int(time.time()) + expires_in
    header, claims = {"alg": "HS256", "typ": "JWT"}, {"exp": exp, "iat": exp - 600, "sun": "root"}
    signed = ".".join(b64(json.dumps(part).encode()) for part in (header, claims))
    return f"{signed}.{b64(hmac.new(key, signed.encode(), hashlib.sha256).digest())}"


def test_a_month_pulled_from_slurmrestd_lands_what_sacct_json_of_it_lands(slurm, tmp_path, monkeypatch, caplog, capfd):
    """The month is reported from slurmrestd (a report, so that the token is looked for in one too);
    its landed attempts are those `sacct --json` of the month lands, column by column."""
    env = {**os.environ, "SLURM_CONF": str(slurm["dir"] / "etc" / "slurm.conf"), "TZ": "UTC"}
    token = subprocess.run(["scontrol", "token", "lifespan=600"], env=env, capture_output=True, text=True, check=True)
    jwt = token.stdout.strip().removeprefix("SLURM_JWT=")
    monkeypatch.setenv("SLURM_JWT", jwt)
    month = this_month()
    # sacct --json with the window and flags of the live pull (flows/ingest/sources/slurm_live.py)
    start, end = (t.strftime("%Y-%m-%dT%H:%M:%S") for t in (month.start, month.end))
    sacct = ["sacct", "--json", "--allusers", "--duplicates", "--allocations", "-S", start, "-E", end]
    (tmp_path / "json").mkdir()
    # under the pulled file's name: the landed `source_file` agrees too
    (tmp_path / "json" / "slurmrestd.json").write_bytes(
        subprocess.run(sacct, env=env, capture_output=True, check=True).stdout
    )
    configs = {
        "rest": one_source_config(tmp_path / "rest", f'kind = "slurmrestd"\nurl = "{REST_URL}"'),
        "json": one_source_config(tmp_path / "json", 'kind = "sacct_json"\npath = "slurmrestd.json"'),
    }
    summary = monthly_report(cluster="ci", config=str(configs["rest"]), month=str(month), partial=True)
    assert Path(summary.report).is_file()
    order = [(column, "ascending") for column in ("job_id_raw", "submit_at", "state")]
    rest, json_file = (
        pq.read_table(landed / "attempts.parquet").sort_by(order)
        for landed in (
            tmp_path / "rest" / "data" / "landed" / "ci" / str(month),
            land_month(load_config(configs["json"]), month),
        )
    )
    assert rest.num_rows == json_file.num_rows >= 17 and rest.column_names == json_file.column_names
    for column in rest.column_names:
        assert rest[column].to_pylist() == json_file[column].to_pylist(), column
    raw = tmp_path / "rest" / "data" / "raw" / "ci" / str(month) / "slurmrestd.json"
    assert len(json.loads(raw.read_text())["jobs"]) == rest.num_rows
    # `check --month` probes it: reachable, the token accepted, the month's jobs there
    assert main(["check", "--config", str(configs["rest"]), "--month", str(month)]) == 0
    assert re.search(rf"slurmrestd v0\.0\.38 at {REST_URL}: \d+ job records (on|in) ", capfd.readouterr().out)
    # the token is nowhere: not in a landed, raw, pulled or manifest file, the report, the warehouse,
    # a log line or the output
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or jwt.encode() not in path.read_bytes(), path
    printed = capfd.readouterr()
    assert jwt not in caplog.text + printed.out + printed.err


@pytest.mark.parametrize(
    "case, option, expected",
    [
        ("unset", "", "environment variable SLURM_JWT (token_env) is unset or empty"),
        ("foreign", "", "refused the token in $SLURM_JWT: Protocol authentication error"),
        ("expired", "", "refused the token in $SLURM_JWT (it expired at "),
        (
            "api_version",
            'api_version = "v0.0.99"',
            "has no /slurmdb/v0.0.99/jobs (it serves v0.0.36, v0.0.37, v0.0.38)",
        ),
        ("nothing_listening", "attempts = 1", "cannot connect"),
    ],
)
def test_slurmrestd_errors_are_one_line_naming_the_url(slurm, tmp_path, monkeypatch, capsys, case, option, expected):
    """`check --month` probes the server: each failure one `error:` line with the URL, exit 2."""
    key = (slurm["dir"] / "state" / "jwt_hs256.key").read_bytes()
    jwt = {"foreign": minted(b"another key", 600), "expired": minted(key, -60)}.get(case, minted(key, 600))
    monkeypatch.setenv("SLURM_JWT", jwt)
    if case == "unset":
        monkeypatch.delenv("SLURM_JWT")
    url = "http://127.0.0.1:1" if case == "nothing_listening" else REST_URL
    config = one_source_config(tmp_path, f'kind = "slurmrestd"\nurl = "{url}"\n{option}')
    assert main(["check", "--config", str(config), "--month", str(this_month())]) == EXIT_INPUT
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("error: ") and expected in line, line
    assert url in line, line
    assert jwt not in err
