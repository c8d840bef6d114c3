"""Ask a server (slurmrestd, Prometheus) for a month's records over HTTP: the one client the url
kinds share, with their credentials taken from the environment and never shown.

What can pass is tried again with back-off (the source's `attempts`, `retry_wait_seconds`): no
answer within `timeout_seconds`, a connection dropped mid-answer, 429 or 5xx. A server that is not
there (a refused connection, a name that does not resolve, no connection within
CONNECT_TIMEOUT_SECONDS), 401/403 and any other refusal stop at once. Every failure is a PullError:
one line naming the URL (never a credential) and what to do.
"""

from __future__ import annotations

import base64
import os
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from flows.core.errors import InputError
from flows.core.escape import escaped_logger, printable
from flows.core.retry import with_backoff

if TYPE_CHECKING:
    from flows.ingest.sources.servers import UrlSource

ERROR_CHARS = 300  # of a server's own error text, in a PullError
CONNECT_TIMEOUT_SECONDS = 5.0  # a server that is there accepts a connection within it (at most timeout_seconds)
TOKEN_CHARS = re.compile(r"[!-~]+")
HEADER_CHARS = re.compile(
    r"[ -~]*"
)  # printable ASCII  # visible ASCII: what an HTTP header may carry of a bearer token or a JWT
log = escaped_logger(__name__)
Params = Mapping[str, str | int | float] | Sequence[tuple[str, str | int | float]] | None


class PullError(InputError):
    """A server could not give the month: unreachable, credentials refused, a request rejected, or
    nothing there. Its message names the URL and what to do; exit 2."""


class _Temporary(Exception):
    """A failure worth another try (a timeout or a dropped connection mid-answer, 429, 5xx), with what
    to say if it stays."""


def _env(server: UrlSource, key: str) -> str:
    name = getattr(server, key)
    value = os.environ.get(name, "")
    if not value:
        raise PullError(
            f"source {server.kind}: {printable(server.url)}: environment variable {name} ({key}) is unset or "
            "empty: export it in the environment the run starts from"
        )
    return value


def token(server: UrlSource) -> str:
    """The token in the environment variable `token_env` names: a PullError naming the variable (never
    its value) when it is unset, or holds what no token has (a space, a newline, a non-ASCII letter)."""
    value = _env(server, "token_env")
    if not TOKEN_CHARS.fullmatch(value):
        raise PullError(
            f"source {server.kind}: {printable(server.url)}: environment variable {server.token_env} (token_env) "
            "holds characters no token has (a space, a newline, a non-ASCII letter): export the token alone"
        )
    return value


def authorization(server: UrlSource) -> dict[str, str]:
    """Authorization headers: a bearer token from `token_env`, or basic auth from `username_env` /
    `password_env` (the kinds that take them), or none."""
    if server.token_env:
        return {"Authorization": f"Bearer {token(server)}"}
    if getattr(server, "username_env", ""):
        user, password = _env(server, "username_env"), _env(server, "password_env")
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
    return {}


def credential_env(server: UrlSource) -> str:
    """The environment variables the credentials come from, for an error that says which were refused."""
    keys = ("token_env", "username_env", "password_env")
    names = [name for key in keys if (name := getattr(server, key, ""))]
    return " and ".join(f"${name}" for name in names) if names else "no credentials (none configured)"


class HttpClient:
    """GET JSON from one server: its settings' `url` joined with a path, with the kind's auth headers;
    each request tried up to `attempts` times (default: the source's; `check --month` asks once)."""

    def __init__(
        self,
        server: UrlSource,
        auth_headers: dict[str, str],
        error_text: Callable[[Any], str | None] = lambda body: None,
        attempts: int | None = None,
    ):
        self.server = server
        self.attempts = attempts or server.attempts
        self.kind = server.kind
        self.base = self.server.url.rstrip("/")
        for name, value in auth_headers.items():  # e.g. a user name from the config: never a traceback, never shown
            if not HEADER_CHARS.fullmatch(value):
                raise PullError(
                    f"source {self.kind}: {self.shown_url()}: the {name} header would carry characters HTTP "
                    "headers cannot (a newline, a non-ASCII letter): set its source to plain ASCII"
                )
        self.error_text = error_text  # the server's own words in an error body (Prometheus' `error`, ...)
        self._client = httpx.Client(
            headers={"Accept": "application/json", **auth_headers},
            timeout=httpx.Timeout(server.timeout_seconds, connect=min(server.timeout_seconds, CONNECT_TIMEOUT_SECONDS)),
            follow_redirects=False,
            trust_env=False,  # no proxy from the environment: the URL is the server
        )

    def shown_url(self, path: str = "") -> str:
        """The URL as errors and logs show it: no query (it may hold matchers, never credentials)."""
        return printable(self.base + path)

    def get_json(self, path: str, params: Params = None) -> Any:
        """The JSON body of GET `path` (from the base URL). Temporary failures are tried again up to
        the client's `attempts` times; any other is a PullError at once."""
        tries = self.attempts
        retrying = with_backoff(
            f"source {self.kind}: {self.shown_url(path)}",
            tries,
            self.server.retry_wait_seconds,
            lambda error: isinstance(error, _Temporary),
            str,
            log,
        )
        try:
            return retrying(self._get_once, path, params)
        except _Temporary as error:
            gave_up = f" (gave up after {tries} attempts)" if tries > 1 else ""
            raise PullError(f"source {self.kind}: {error}{gave_up}") from None

    def _get_once(self, path: str, params: Params) -> Any:
        url = self.shown_url(path)
        try:
            response = self._client.get(self.base + path, params=params)
        except (httpx.ConnectError, httpx.ConnectTimeout) as error:  # refused, no such host, no route, TLS
            raise PullError(
                f"source {self.kind}: {url}: cannot connect ({_reason(error)}): is the server up and `url` right?"
            ) from None
        except httpx.TimeoutException:
            raise _Temporary(
                f"{url}: no answer in {self.server.timeout_seconds:g} s: "
                "is the server overloaded? raise timeout_seconds or query less at once"
            ) from None
        except httpx.HTTPError as error:  # the connection dropped mid-answer
            raise _Temporary(f"{url}: the answer broke off ({_reason(error)})") from None
        status = response.status_code
        if status in (401, 403):
            raise PullError(
                f"source {self.kind}: {url} answered {status} {response.reason_phrase}: it refused "
                f"{credential_env(self.server)}: give a valid, unexpired token or account the server accepts"
            )
        body = _json_or_none(response)
        said = self.error_text(body) if body is not None else None
        said = f": {printable(said[:ERROR_CHARS])}" if said else ""
        if status == 429 or status >= 500:
            raise _Temporary(f"{url} answered {status} {response.reason_phrase}{said}")
        if status >= 300:
            raise PullError(f"source {self.kind}: {url} answered {status} {response.reason_phrase}{said}")
        if body is None:
            raise PullError(f"source {self.kind}: {url} answered {status} but not with JSON: is `url` this server's?")
        return body


def _reason(error: httpx.HTTPError) -> str:
    """The innermost cause's words ("[Errno 111] Connection refused"), on one line; a name that does
    not resolve says so (the resolver's own words differ from one C library to another)."""
    cause: BaseException = error
    while cause.__cause__ is not None or cause.__context__ is not None:
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    if isinstance(cause, socket.gaierror):
        return printable(f"the host name does not resolve: {cause.strerror or cause}")[:ERROR_CHARS]
    if isinstance(error, httpx.ConnectTimeout):
        return "no connection within the connect timeout"
    return printable(str(cause) or type(cause).__name__)[:ERROR_CHARS]


def _json_or_none(response: httpx.Response) -> Any:
    """The answer's JSON, or None when it is none; nesting too deep to parse (a RecursionError) or a
    number of thousands of digits is no answer of these servers either. A NaN or an infinity is kept:
    the pull is written out and its reader quarantines the one record that holds it."""
    try:
        return response.json()
    except (ValueError, RecursionError):
        return None
