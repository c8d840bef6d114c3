"""The deployments of prefect.yaml on a real Prefect server (started on 127.0.0.1 by conftest):
deployed (the demo unscheduled, a cluster added as the file says scheduled), and run by a process
worker end to end, each run publishing its markdown artifact. (CLI runs against the server: test_faults.)"""

import copy
import json
import os
import re
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import httpx
import pytest
import yaml
from conftest import BIN
from prefect.client.orchestration import SyncPrefectClient
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey
from prefect.client.schemas.sorting import ArtifactSort

from flows.core.months import Month
from flows.demo import write_demo_config
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

ROOT = Path(__file__).resolve().parents[1]


def with_a_cluster(shipped: dict, cluster: str, config: str) -> dict:
    """prefect.yaml with a cluster added as its header says: both demo entries copied, renamed,
    their `cluster` and `config` set, and the monthly schedule made active."""
    added = copy.deepcopy(shipped)
    for entry in shipped["deployments"]:
        if entry["parameters"].get("cluster") == "demo":  # (the study's entry names configs, not a cluster)
            site = copy.deepcopy(entry)
            site["name"] = entry["name"].removesuffix("-demo") + f"-{cluster}"
            site["parameters"] = {"cluster": cluster, "config": config}
            for schedule in site.get("schedules") or []:
                schedule["active"] = True
            added["deployments"].append(site)
    return added


def prefect(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "prefect"), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def deployed(prefect_server, tmp_path_factory):
    """prefect.yaml deployed with `prefect deploy --all`, and a process worker polling its pool."""
    env = {
        **os.environ,
        "PREFECT_API_URL": prefect_server,
        "PROJECT_DIR": str(ROOT),  # prefect.yaml's pull step: the worker's runs start in the checkout
        "PREFECT_WORKER_QUERY_SECONDS": "2",
    }
    # The server's database outlives sessions: start from no deployments (their scheduled runs go too).
    # Deleting one with many runs can keep SQLite busy: the server answers 503 until it is done.
    for deployment in httpx.post(f"{prefect_server}/deployments/filter", json={}, timeout=10).json():
        for _ in range(10):
            response = httpx.delete(f"{prefect_server}/deployments/{deployment['id']}", timeout=30)
            if response.status_code != 503:
                break
            time.sleep(2)
        if response.status_code != 404:  # 404: gone with an earlier attempt
            response.raise_for_status()
    created = prefect(env, "work-pool", "create", "local-process", "--type", "process", "--overwrite")
    assert created.returncode == 0, created.stdout + created.stderr
    # One `deploy --all`: the shipped entries as they are, and a cluster added the documented way.
    shipped = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    prefect_file = tmp_path_factory.mktemp("deploy") / "prefect.yaml"
    prefect_file.write_text(yaml.safe_dump(with_a_cluster(shipped, "site", "var/site/site.toml"), sort_keys=False))
    deploy = prefect(env, "--no-prompt", "deploy", "--all", "--prefect-file", str(prefect_file))
    assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]
    log = tmp_path_factory.mktemp("worker") / "worker.log"
    with open(log, "w") as out:
        worker = subprocess.Popen(
            [str(BIN / "prefect"), "worker", "start", "--pool", "local-process"],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield {"env": env, "api": prefect_server, "log": log}
    finally:
        # The first SIGINT starts a graceful shutdown that can hang; the second ends it.
        for _ in range(2):
            os.killpg(worker.pid, signal.SIGINT)
            try:
                worker.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                pass
        else:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def next_second_of_month_at_6(now: datetime, count: int) -> list[str]:
    month, dates = Month(now.year, now.month), []
    while len(dates) < count:
        run_at = datetime(month.year, month.month, 2, 6, tzinfo=UTC)
        if run_at > now:
            dates.append(run_at.isoformat().replace("+00:00", "Z"))
        month = month.next()
    return dates


def scheduled_runs(api: str, deployment: dict) -> list[dict]:
    query = {
        "deployments": {"id": {"any_": [deployment["id"]]}},
        "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}},
        "sort": "EXPECTED_START_TIME_ASC",
    }
    return httpx.post(f"{api}/flow_runs/filter", json=query, timeout=10).json()


def test_a_clusters_copy_runs_on_the_2nd_at_6_utc_and_the_demo_never(deployed):
    api = deployed["api"]
    demo = httpx.get(f"{api}/deployments/name/monthly-report/monthly-demo", timeout=10).json()
    assert demo["parameters"] == {"cluster": "demo", "config": "var/demo/demo.toml"}
    site = httpx.get(f"{api}/deployments/name/monthly-report/monthly-site", timeout=10).json()
    assert site["parameters"] == {"cluster": "site", "config": "var/site/site.toml"}
    assert [s["active"] for s in demo["schedules"]] == [False]
    assert [s["active"] for s in site["schedules"]] == [True]
    runs = []
    for _ in range(60):  # the scheduler service runs every 2 s here
        runs = scheduled_runs(api, site)
        if len(runs) >= 3:
            break
        time.sleep(1)
    expected = next_second_of_month_at_6(datetime.now(UTC), 3)
    starts = [datetime.fromisoformat(r["expected_start_time"]).astimezone(UTC) for r in runs[:3]]
    assert [s.isoformat().replace("+00:00", "Z") for s in starts] == expected
    assert scheduled_runs(api, demo) == []  # the scheduler has been round: it made the site's runs
    for cluster in ("demo", "site"):
        backfill = httpx.get(f"{api}/deployments/name/backfill/backfill-{cluster}", timeout=10).json()
        assert backfill["schedules"] == []


def run_id(run: subprocess.CompletedProcess) -> UUID:
    """The flow run `prefect deployment run` created (it prints `UUID: ...`)."""
    return UUID(re.search(r"UUID: ([0-9a-f-]{36})", run.stdout).group(1))


def test_a_bad_month_is_refused_when_the_run_is_created(deployed):
    run = prefect(deployed["env"], "deployment", "run", "monthly-report/monthly-demo", "--param", "month=2026-13")
    assert run.returncode != 0
    assert "Validation failed for field 'month'" in run.stdout and "'2026-13' does not match" in run.stdout


def test_monthly_and_backfill_deployments_complete_a_month(deployed, smtp_server, tmp_path, fresh_warehouse):
    config = write_demo_config(tmp_path, "dep", tmp_path / "reports")
    fresh_warehouse(config)  # the worker's scratch warehouse: dbt's parse of it is on disk, shared with other tests
    config.write_text(
        config.read_text() + f'\n[email]\nfrom = "r@example.org"\nto = ["ops@example.org"]\n'
        f'smtp_host = "127.0.0.1"\nsmtp_port = {smtp_server.port}\nsmtp_security = "plain"\n'
    )
    for month, seed in (("2026-08", 8), ("2026-09", 9)):
        simulate(SimParams("dep", Month.parse(month), nodes=16, seed=seed), tmp_path / "sim" / "dep" / month)
    params = ["--param", "cluster=dep", "--param", f"config={config}"]
    started = datetime.now(UTC)

    monthly = prefect(
        deployed["env"],
        *("deployment", "run", "monthly-report/monthly-demo", *params, "--param", "month=2026-09"),
        *("--watch", "--watch-timeout", "400"),
        timeout=420,
    )
    assert monthly.returncode == 0, monthly.stdout[-2000:] + deployed["log"].read_text()[-3000:]
    backfill = prefect(
        deployed["env"],
        *("deployment", "run", "backfill/backfill-demo", *params),
        *("--param", "from_month=2026-08", "--param", "to_month=2026-09", "--watch", "--watch-timeout", "400"),
        timeout=420,
    )
    assert backfill.returncode == 0, backfill.stdout[-2000:] + deployed["log"].read_text()[-3000:]

    # the study of the two months, from the months just built (the study's backfill skips them)
    study = prefect(
        deployed["env"],
        *("deployment", "run", "study/study-demo", "--param", f"configs={json.dumps([str(config)])}"),
        *("--param", "from_month=2026-08", "--param", "to_month=2026-09", "--watch", "--watch-timeout", "400"),
        timeout=420,
    )
    assert study.returncode == 0, study.stdout[-2000:] + deployed["log"].read_text()[-3000:]
    studied = json.loads((tmp_path / "reports" / "studies" / "dep_2026-08_2026-09" / "metrics.json").read_text())
    assert studied["months"] == 2 and list(studied["clusters"]) == ["dep"]

    for month in ("2026-08", "2026-09"):
        metrics = json.loads((tmp_path / "reports" / "dep" / month / "metrics.json").read_text())
        assert metrics["month"] == month
        assert (
            studied["clusters"]["dep"]["monthly"][int(month[-1]) - 8]["all"]["failures"]
            == (metrics["node_failure_rate"]["all"]["failures"])
        )

    # Each run published its markdown artifact: the month's (also the backfill's subflow) and the backfill's.
    with SyncPrefectClient(deployed["api"]) as client:

        def artifact(key: str, flow_run: UUID | None = None) -> str:
            found = client.read_artifacts(
                artifact_filter=ArtifactFilter(
                    key=ArtifactFilterKey(any_=[key]),
                    flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run]) if flow_run else None,
                ),
                sort=ArtifactSort.CREATED_DESC,
                limit=1,
            )
            assert found, f"no artifact {key}"
            assert found[0].type == "markdown" and found[0].created >= started
            return found[0].data

        assert "report emailed to ops@example.org" in artifact("reliability-dep-2026-09", run_id(monthly))
        # the backfill built 2026-08, so it refreshed 2026-09 (its comparisons include 2026-08)
        september = artifact("reliability-dep-2026-09")
        metrics = json.loads((tmp_path / "reports" / "dep" / "2026-09" / "metrics.json").read_text())
        assert metrics["summary"]["text"] in september
        assert f"{metrics['totals']['infra_failures']:,}" in september and "Infrastructure failures" in september
        assert "correction emailed to ops@example.org" in september
        assert str(tmp_path / "reports" / "dep" / "2026-09" / "report.html") in september
        assert "archived, not sent" in artifact("reliability-dep-2026-08")  # backfill's default: --email latest
        ranged = artifact("backfill-dep-2026-08-to-2026-09", run_id(backfill))
        assert re.search(r"2026-08 \| built", ranged) and re.search(r"2026-09 \| refreshed", ranged)
    # 2026-09 by the monthly deployment, then its correction; the backfill archived 2026-08.
    subjects = [m["Subject"] for m in smtp_server.parsed()]
    assert subjects == [f"{kind}Cluster reliability report: dep, 2026-09" for kind in ("", "Correction: ")]
