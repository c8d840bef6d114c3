"""Pull a month's job records from slurmrestd, Slurm's REST API: `GET /slurmdb/v0.0.<n>/jobs`.

The query selects what `sacct --allusers --duplicates --allocations -S <month start> -E <next
month start>` selects (flows/ingest/sources/slurm_live.py `pull_sacct`): slurmrestd's jobs query
always includes every record of a requeued job (sacct's --duplicates, JOBCOND_FLAG_DUP) and the jobs
of every user the token's user may see (sacct's --allusers), on the cluster slurmrestd belongs to
(sacct's default); `skip_steps=true` is sacct's --allocations. The steps would be nested inside
their job's record, never separate records as in sacct's text output, and no reader reads them:
the flag only keeps the answer small. The window is sent as `uts<epoch>` because slurmrestd reads
a date in its own time zone and an epoch in none. The answer's JSON is written out (it is what
`sacct --json` prints for the same query, tests/test_slurm_live.py) and lands as a `sacct_json` file.

The API version is the configured `api_version`, else the newest `/slurmdb/v0.0.<n>/jobs` the
server's OpenAPI description (`/openapi/v3`) lists. The token goes in X-SLURM-USER-TOKEN and the
user in X-SLURM-USER-NAME: `user_name`, else the user the token was minted for (its `sun` claim;
Slurm 22.05 refuses a request without the header).

slurmrestd 22.05 answers a token that slurmdbd refuses (expired, signed with another key) with
HTTP 200 and `Protocol authentication error` in the body's `errors`, and a window without jobs
with `Nothing found`: both are read from the body.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from flows.core.escape import printable
from flows.core.months import Month
from flows.ingest.sources.http_client import ERROR_CHARS, HttpClient, PullError, credential_env, token
from flows.ingest.sources.servers import SlurmrestdSource

SPEC = "/openapi/v3"
JOBS_PATH = re.compile(r"/slurmdb/v(\d+\.\d+\.\d+)/jobs")
NOTHING_FOUND = 9003  # ESLURM_REST_EMPTY_RESULT: no job in the window
AUTHENTICATION_ERROR = 1007  # SLURM_PROTOCOL_AUTHENTICATION_ERROR: slurmdbd refused the token


def error_text(body: Any) -> str | None:
    """The server's own words for a failed request: its `errors[].description` (or `error`)."""
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list):
        return None
    return "; ".join(str(e.get("description") or e.get("error", "")) for e in errors if isinstance(e, dict))


def _claims(jwt: str) -> dict:
    """The claims of a JSON Web Token, read without checking its signature ({} when it is none)."""
    try:
        payload = jwt.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, binascii.Error):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return {}
    return claims if isinstance(claims, dict) else {}


class _Slurmrestd:
    """One source's slurmrestd: its client (each request tried `attempts` times, default the
    source's), the token's claims and the API version to ask."""

    def __init__(self, server: SlurmrestdSource, attempts: int | None = None) -> None:
        self.server = server
        jwt = token(server)
        self.claims = _claims(jwt)
        user = server.user_name or str(self.claims.get("sun", ""))
        headers = {"X-SLURM-USER-TOKEN": jwt, **({"X-SLURM-USER-NAME": user} if user else {})}
        self.client = HttpClient(server, headers, error_text=error_text, attempts=attempts)
        self.version, self.skip_steps = self._api_version()

    def _api_version(self) -> tuple[str, bool]:
        """The version to ask (configured, else the newest the server lists) and whether its jobs
        query takes `skip_steps`; a configured version the server lacks is refused."""
        spec = self.client.get_json(SPEC)
        paths = spec.get("paths") if isinstance(spec, dict) else None
        paths = paths if isinstance(paths, dict) else {}
        versions = sorted(
            (m.group(1) for m in map(JOBS_PATH.fullmatch, paths) if m and isinstance(paths[m.group(0)], dict)),
            key=lambda v: tuple(int(n) for n in v.split(".")),
        )
        if not versions:
            raise PullError(
                f"source slurmrestd: {self.client.shown_url(SPEC)} lists no /slurmdb/v0.0.<n>/jobs: is slurmrestd "
                "running with its slurmdbd plugins (slurmrestd -s list shows them)?"
            )
        wanted = self.server.api_version.removeprefix("v") or versions[-1]
        if wanted not in versions:
            raise PullError(
                f"source slurmrestd: {self.client.shown_url()} has no /slurmdb/v{wanted}/jobs (it serves "
                f"v{', v'.join(versions)}): set api_version to one of them, or leave it out to use the newest"
            )
        get = paths[f"/slurmdb/v{wanted}/jobs"].get("get")
        parameters = get.get("parameters") if isinstance(get, dict) else None
        return wanted, isinstance(parameters, list) and any(
            isinstance(p, dict) and p.get("name") == "skip_steps" for p in parameters
        )

    @property
    def path(self) -> str:
        return f"/slurmdb/v{self.version}/jobs"

    def jobs(self, start: datetime, end: datetime) -> dict:
        """The jobs query's answer for [start, end) (see the module docstring for what it selects)."""
        params = {"start_time": f"uts{int(start.timestamp())}", "end_time": f"uts{int(end.timestamp())}"}
        if self.skip_steps:
            params["skip_steps"] = "true"
        document = self.client.get_json(self.path, params)
        url = self.client.shown_url(self.path)
        if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
            raise PullError(f"source slurmrestd: {url} answered without a list of jobs: is `url` a slurmrestd?")
        errors = [e for e in document.get("errors") or [] if isinstance(e, dict)]
        said = printable(error_text(document) or "")[:ERROR_CHARS]
        if any(e.get("error_number") == AUTHENTICATION_ERROR for e in errors):
            raise PullError(f"source slurmrestd: {url} {self._refused(said)}")
        if any(e.get("error_number") != NOTHING_FOUND for e in errors):
            raise PullError(f"source slurmrestd: {url} answered with errors: {said}")
        return document

    def _refused(self, said: str) -> str:
        """That slurmdbd refused the token, when it expired if it has (its `exp`), and what to do."""
        expiry = self.claims.get("exp")
        expired = ""
        if isinstance(expiry, int) and expiry <= datetime.now(UTC).timestamp():
            expired = f" (it expired at {datetime.fromtimestamp(expiry, UTC):%Y-%m-%dT%H:%M:%SZ})"
        return (
            f"refused the token in {credential_env(self.server)}{expired}: {said}: mint one on a host of the "
            "cluster (`scontrol token lifespan=<seconds>`; as root or SlurmUser add username=<user>) and export it"
        )


def pull(server: SlurmrestdSource, month: Month, out: Path) -> Path:
    """Write the month's job records (slurmrestd's JSON answer) to `out`."""
    document = _Slurmrestd(server).jobs(month.start, month.end)
    out.write_text(json.dumps(document), encoding="utf-8")
    return out


def probe(server: SlurmrestdSource, month: Month) -> str:
    """One line on what the server has for `month`: reachable, the token accepted, jobs there.
    It asks for the month's first day first, and for the whole month only when that day had no
    job: a busy cluster's month is a large answer, an empty day a quick one. Each request is asked
    once, as every server source's probe (`check --month` takes seconds; the pull retries)."""
    rest = _Slurmrestd(server, attempts=1)
    first_day = min(month.start + timedelta(days=1), month.end)
    found, where = len(rest.jobs(month.start, first_day)["jobs"]), f"on {month.start:%Y-%m-%d}, the month's first day"
    if not found:
        found, where = len(rest.jobs(month.start, month.end)["jobs"]), f"in {month}"
    if not found:
        raise PullError(
            f"source slurmrestd: {rest.client.shown_url(rest.path)} has no job in {month}: is this the cluster's "
            "slurmrestd, and may the token's user see every user's jobs (PrivateData)?"
        )
    return f"slurmrestd v{rest.version} at {rest.client.shown_url()}: {found} job records {where}"
