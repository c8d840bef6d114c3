"""The url sources' one HTTP client (flows/ingest/sources/http_client.py) against a real HTTP server
on 127.0.0.1 that answers as told: what is retried, what stops at once, and that every failure is
one line naming the URL and what to do, with no credential in it; and an impostor's answers to the
Prometheus pull."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from flows.core.months import Month
from flows.ingest.sources.http_client import HttpClient, PullError, authorization
from flows.ingest.sources.prometheus_dcgm import pull_series
from flows.ingest.sources.servers import PrometheusDcgmSource

pytestmark = pytest.mark.slow  # starts a server: `make test`, not `make test-fast`

SECRET = "s3cret-token-value"


class Scripted(BaseHTTPRequestHandler):
    """Answers each GET with the next (status, body, delay) of the server's script (the last one repeats)."""

    def do_GET(self) -> None:
        server = self.server
        server.seen.append((self.path, dict(self.headers)))
        status, body, delay = server.script[min(len(server.seen), len(server.script)) - 1]
        time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    httpd.seen, httpd.script = [], []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def client(url: str, **settings: object) -> HttpClient:
    settings = {"attempts": 3, "retry_wait_seconds": 0, **settings}
    server = PrometheusDcgmSource(kind="prometheus_dcgm", url=url, **settings)
    return HttpClient(server, authorization(server), error_text=lambda body: body.get("error"))


def url_of(httpd: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def test_a_5xx_is_tried_again_and_the_token_is_sent_as_a_bearer(server, monkeypatch) -> None:
    monkeypatch.setenv("PROM_TOKEN", SECRET)
    server.script = [(503, "{}", 0), (200, '{"status": "success", "data": 1}', 0)]
    assert client(url_of(server), token_env="PROM_TOKEN").get_json("/api/v1/query", {"query": "up"}) == {
        "status": "success",
        "data": 1,
    }
    assert len(server.seen) == 2 and server.seen[0][0] == "/api/v1/query?query=up"
    assert server.seen[1][1]["Authorization"] == f"Bearer {SECRET}"


def test_refused_credentials_stop_at_once_naming_the_variable_never_the_token(server, monkeypatch) -> None:
    monkeypatch.setenv("PROM_TOKEN", SECRET)
    server.script = [(401, '{"error": "bad token ' + SECRET + '"}', 0)]
    with pytest.raises(PullError) as raised:
        client(url_of(server) + "/prom", token_env="PROM_TOKEN").get_json("/api/v1/query")
    message = str(raised.value)
    assert len(server.seen) == 1 and "\n" not in message
    assert f"{url_of(server)}/prom/api/v1/query answered 401" in message and "$PROM_TOKEN" in message
    assert SECRET not in message


def test_a_rejected_request_says_what_the_server_said(server) -> None:
    server.script = [(400, json.dumps({"status": "error", "error": "parse error at char 5"}), 0)]
    with pytest.raises(PullError, match="answered 400 Bad Request: parse error at char 5$"):
        client(url_of(server)).get_json("/api/v1/query_range")
    assert len(server.seen) == 1


def test_an_answer_that_is_not_json_is_not_this_server(server) -> None:
    server.script = [(200, "<html>login</html>", 0)]
    with pytest.raises(PullError, match="not with JSON: is `url` this server's"):
        client(url_of(server)).get_json("/api/v1/query")


def test_no_server_is_one_line_at_once_and_no_answer_is_tried_attempts_times(server) -> None:
    """A refused connection is a server that is not there: no retry (issue 51); a timeout can pass."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    slow = client(f"http://127.0.0.1:{port}", retry_wait_seconds=30)  # a retry would wait 30 s
    started = time.monotonic()
    with pytest.raises(PullError, match=r"cannot connect \(.*refused\): is the server up and `url` right\?$"):
        slow.get_json("/api/v1/query")
    assert time.monotonic() - started < 5
    server.script = [(200, "{}", 1.0)]
    with pytest.raises(PullError, match=r"no answer in 0.2 s: .*\(gave up after 3 attempts\)$"):
        client(url_of(server), timeout_seconds=0.2).get_json("/api/v1/query")


def test_an_unset_token_variable_is_named(monkeypatch) -> None:
    monkeypatch.delenv("PROM_TOKEN", raising=False)
    with pytest.raises(
        PullError,
        match=r"^source prometheus_dcgm: http://127.0.0.1:9: environment variable PROM_TOKEN \(token_env\) is unset or empty",
    ):
        client("http://127.0.0.1:9", token_env="PROM_TOKEN")


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": 1, "values": []}]}},
        {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, 2, 3]]}]}},
        {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [["x", "1"]]}]}},
        {"status": "success", "data": None},
        ["not", "prometheus"],
    ],
)
def test_an_answer_that_is_no_prometheus_matrix_is_one_line_not_a_traceback(server, tmp_path, answer) -> None:
    server.script = [(200, json.dumps(answer), 0)]
    settings = PrometheusDcgmSource(kind="prometheus_dcgm", url=url_of(server), attempts=1, chunk_hours=744)
    with pytest.raises(
        PullError,
        match=r"^source prometheus_dcgm: http://127\.0\.0\.1:\d+[^\n]*: (not a Prometheus answer|a series' values are no samples)$",
    ):
        pull_series(settings, Month.parse("2026-10"), tmp_path / "dcgm_series.jsonl")


@pytest.mark.parametrize("value", [f"{SECRET}\nInjected: 1", f"{SECRET} x", f"{SECRET}é"])
def test_a_token_no_header_can_carry_is_named_never_shown(server, monkeypatch, value) -> None:
    """A newline, a space or a non-ASCII letter in the token: one line naming the variable, not the
    value (httpx's own error quoted the header) and not a traceback (non-ASCII)."""
    monkeypatch.setenv("PROM_TOKEN", value)
    with pytest.raises(PullError, match=r"variable PROM_TOKEN \(token_env\) holds characters no token has") as raised:
        client(url_of(server), token_env="PROM_TOKEN").get_json("/api/v1/query")
    assert SECRET not in str(raised.value) and not server.seen
