import asyncio
import contextlib
import email
import email.message
import email.policy
import fcntl
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from local_servers import free_port, running

# The quick tier builds no month (docs/testing.md): outside the `slow` marker, a month build, a flow
# run or a server fails the test that started it (tests/quick_tier.py).
pytest_plugins = ["quick_tier", "pytester"]  # pytester: tests/test_quick_tier.py runs pytest on tests of its own

REPO_ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# Prefect: a persistent home saves ~11 s of migrations per start; no server -> ephemeral mode.
os.environ.setdefault("PREFECT_HOME", str(REPO_ROOT / ".prefect-test"))
if os.environ.get("PYTEST_XDIST_WORKER"):  # one home per worker: two ephemeral servers never share a database
    os.environ["PREFECT_HOME"] += "-" + os.environ["PYTEST_XDIST_WORKER"]
os.environ.pop("PREFECT_API_URL", None)
DATA_DIR = Path(__file__).resolve().parent / "data"  # real Slurm and node-health output (data/README.md)


@pytest.fixture(scope="module")
def without_charts():
    """Pages rendered without their charts (matplotlib takes seconds a chart), for tests of their texts."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("flows.report.render.render_charts", lambda metrics: {})
        # and no drawing process for a backfill's months (flows/report/drawing.py): a spawned process
        # would draw them with the real render_charts, after importing matplotlib for it
        patch.setattr("flows.report.drawing.MIN_MONTHS", sys.maxsize)
        yield


@pytest.fixture(scope="session")
def health_fixtures() -> Path:
    return DATA_DIR / "health"


@pytest.fixture(scope="session")
def slurm_fixtures() -> Path:
    return DATA_DIR / "slurm-22.05"


class SmtpRecorder:
    """aiosmtpd handler: keeps what it accepts; `replies` are answered to DATA first (e.g. a 4xx);
    with `hold` set, it keeps the message, sets `receiving` and waits for `hold` before answering."""

    def __init__(self) -> None:
        self.messages: list = []  # aiosmtpd Envelopes
        self.replies: list[str] = []
        self.data_commands = 0
        self.logins: list[str] = []
        self.hold: threading.Event | None = None
        self.receiving = threading.Event()
        self.port = 0

    def reset(self) -> None:
        self.messages.clear()
        self.replies.clear()
        self.logins.clear()
        self.data_commands = 0
        self.hold = None
        self.receiving.clear()

    async def handle_DATA(self, server, session, envelope) -> str:
        self.data_commands += 1
        if self.replies:
            return self.replies.pop(0)
        self.messages.append(envelope)
        if self.hold is not None:
            self.receiving.set()
            await asyncio.get_running_loop().run_in_executor(None, self.hold.wait)
        return "250 OK"

    def parsed(self) -> list[email.message.EmailMessage]:
        return [
            email.message_from_bytes(m.original_content, policy=email.policy.default)  # type: ignore[arg-type]
            for m in self.messages
        ]


@contextlib.contextmanager
def smtp_controller(**smtp_parameters):
    """A real SMTP server (aiosmtpd) on 127.0.0.1, on a free port picked first: Controller(port=0)
    fails, as it connects to the port it was given to check that the server is up."""
    from aiosmtpd.controller import Controller

    handler = SmtpRecorder()
    handler.port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=handler.port, **smtp_parameters)
    controller.start()
    try:
        yield handler
    finally:
        controller.stop()


@pytest.fixture(scope="module")
def smtp_server():
    with smtp_controller() as handler:
        yield handler


def email_section(port: int) -> str:
    """An `[email]` config section sending through the test SMTP server on `port`, retrying fast."""
    return (
        '\n[email]\nfrom = "r@example.org"\nto = ["ops@example.org"]\n'
        f'alert_to = ["oncall@example.org"]\nsmtp_host = "127.0.0.1"\nsmtp_port = {port}\n'
        'smtp_security = "plain"\nsend_attempts = 2\nretry_wait_seconds = 0.05\n'
    )


class WebhookRecorder:
    """A chat webhook on 127.0.0.1 (http.server): keeps each POST's JSON; `statuses` are answered first."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        recorder = self
        self.posts: list[dict] = []
        self.statuses: list[int] = []
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                import json

                body = self.rfile.read(int(self.headers["Content-Length"]))
                recorder.requests += 1
                status = recorder.statuses.pop(0) if recorder.statuses else 200
                if status == 200:
                    recorder.posts.append(json.loads(body))
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"no_service")

            def log_message(self, *args) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/T000/B000/secret"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reset(self) -> None:
        self.posts.clear()
        self.statuses.clear()
        self.requests = 0


@pytest.fixture(scope="module")
def webhook_server():
    recorder = WebhookRecorder()
    yield recorder
    recorder.server.shutdown()


@pytest.fixture(autouse=True)
def _reset_webhook(request):
    if "webhook_server" in request.fixturenames:
        request.getfixturevalue("webhook_server").reset()


@pytest.fixture(autouse=True)
def _reset_smtp(request):
    if "smtp_server" in request.fixturenames:
        request.getfixturevalue("smtp_server").reset()


@contextlib.contextmanager
def session_directory(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A directory shared by the whole test session, its xdist workers included (beside their own
    base directories), held under an exclusive lock while the block runs: what the first worker
    builds in it, the others wait for and then read instead of building it again."""
    base = tmp_path_factory.getbasetemp()
    directory = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    directory.mkdir(exist_ok=True)
    with open(directory.with_name(name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield directory
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def fresh_warehouse(tmp_path_factory) -> Callable[..., Path]:
    """Points a config file's warehouse at one of this worker's scratch paths, emptied first (dbt's
    working files beside it kept). dbt keeps its parse of the project per warehouse path: tests
    that each need a new, empty warehouse then share one full parse instead of paying one each.
    Slot "test": for a warehouse used within one test, or one fixture's setup (the next call
    empties it). Slot "module": for a module fixture's warehouse that its tests read (pytest
    finishes a module's fixtures before it sets up another module's)."""

    def point(config: Path, slot: str = "test") -> Path:
        root = tmp_path_factory.getbasetemp() / "fresh-warehouse" / slot
        warehouse = root / "warehouse.duckdb"
        root.mkdir(parents=True, exist_ok=True)
        for path in root.iterdir():
            if path.name != "dbt":  # dbt's target/ and logs/ for this path (flows.warehouse.build.dbt_work_dir)
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        text, found = re.subn(r'^warehouse = ".*"$', f'warehouse = "{warehouse}"', config.read_text(), flags=re.M)
        assert found == 1, f"{config}: no warehouse path to point elsewhere"
        config.write_text(text)
        return warehouse

    return point


CHROMIUM = "/usr/bin/chromium"
# Chromium's sandbox cannot run as root, so it is off; and no background
# connections, which this machine's closed network refuses. playwright starts it with a fresh profile.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser(request):
    """Debian's headless chromium (the Makefile installs it), driven by playwright."""
    from quick_tier import refuse  # the plugin (pytest_plugins above)

    refuse(request.config, "starts Chromium (the `browser` fixture)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def prefect_server(request, tmp_path_factory):
    """A real Prefect server on 127.0.0.1, one per test file that uses it (stopped after it: an idle
    server's services keep a core ~3% busy for the rest of the session); yields its API URL."""
    from quick_tier import refuse

    refuse(request.config, "starts a Prefect server (the `prefect_server` fixture)")
    port = free_port()
    env = {
        **os.environ,
        # Its own home, kept between runs so migrations run once per machine.
        "PREFECT_HOME": str(REPO_ROOT / ".prefect-test-server") + "-" + os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",  # deployments get their runs at once
    }
    env.pop("PREFECT_API_URL", None)
    log = tmp_path_factory.mktemp("server") / "server.log"
    command = [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    api = f"http://127.0.0.1:{port}/api"
    with running(command, f"{api}/health", log, env=env, timeout=120):
        yield api


# The longest files first (pyproject.toml's --no-loadscope-reorder keeps this order): under `--dist
# loadfile` none of them then starts last and runs alone at the end. xdist hands each of the three
# workers two files at the start, round robin (the 1st and 4th to the first worker, ...), so the
# order pairs each long file with a shorter one: test_benches with test_backfill, test_spark with
# test_study, test_faults with test_prefect_server; the rest go to whichever worker is free, longest
# first (each file's time: bench/README.md "The test command's order and shared builds").
SLOWEST_FILES = (
    # the heavy benches at a toy size, a file each (minutes each), then the other benches'
    "test_bench_month.py",
    "test_bench_backfill.py",
    "test_bench_periods.py",
    "test_bench_spark.py",
    "test_benches.py",
    "test_spark.py",
    "test_faults.py",
    "test_backfill.py",
    "test_study.py",
    "test_prefect_server.py",
    "test_package.py",
    "test_delivery.py",
    "test_pipeline.py",
    "test_publish_prometheus.py",  # builds the six months test_publish_archive.py reads: before it
    "test_lemons.py",
    "test_history.py",
    "test_report.py",
    "test_upgrade.py",
    "test_slurm_live.py",
    "test_month_model.py",
    "test_warehouse.py",
    "test_publish_archive.py",
    "test_prometheus_dcgm.py",  # a real Prometheus and a month's builds: ~30 s alone (bench/README.md, issue 44)
    "test_study_marts.py",
    "test_first_month.py",
    # the quick tier's longest (`make test-fast`, two workers: the 1st and 3rd to one, the 2nd and 4th
    # to the other), the dbt models' unit tests among them; replaying a quick tier's per-test seconds
    # through xdist's hand-out, the two workers end within 1 % of each other in this order
    "test_models_unit.py",
    "test_study_report.py",
    "test_simulate.py",
    "test_chart_layout.py",
    "test_hostile_job_records.py",
    "test_study_thin.py",
    "test_sources.py",
    "test_fuzz_readers.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the other files keep their order
    for item in items:  # user_properties travel with the reports to xdist's controller
        if marker := item.get_closest_marker("hostile"):
            item.user_properties.append(("hostile", marker.args[0]))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Count the hostile-input corpus's passed cases by class of outcome (tests/hostile.py)."""
    classes = [
        value
        for report in terminalreporter.stats.get("passed", [])
        if report.when == "call"
        for key, value in report.user_properties
        if key == "hostile"
    ]
    if classes:
        counts = ", ".join(f"{classes.count(c)} {c}" for c in sorted(set(classes)))
        terminalreporter.write_line(f"hostile-input corpus: {len(classes)} cases passed ({counts})")


@pytest.fixture(scope="module")
def real(slurm_fixtures: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The real sacct dump's columns and rows (tests/job_records.py DUMP), for a test to change one field."""
    from job_records import dump_rows

    return dump_rows(slurm_fixtures)


@pytest.fixture(scope="module")
def baseline(slurm_fixtures: Path) -> list:
    """The real sacct dump's attempts as the reader lands them, unchanged."""
    from job_records import DUMP, dump_clock, sacct_attempts

    return sacct_attempts(slurm_fixtures / DUMP, dump_clock())
