"""Retries with exponential back-off (tenacity), for SMTP, the chat webhook and live Slurm commands."""

from __future__ import annotations

import logging
from collections.abc import Callable

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

MAX_RETRY_WAIT_SECONDS = 600


def with_backoff(
    what: str,
    attempts: int,
    wait_seconds: float,
    is_temporary: Callable[[BaseException], bool],
    describe: Callable[[BaseException], str],
    log: logging.Logger,
) -> Retrying:
    """Call through the result (`retrying(fn, *args)`): `attempts` tries in all, a temporary error
    retried after `wait_seconds`, then twice that, ... (at most 10 min), each retry logged as
    "<what>: attempt i of n failed (<error>); retrying in s"; the last error is raised."""

    def note_retry(state) -> None:
        log.warning(
            "%s: attempt %d of %d failed (%s); retrying in %g s",
            what,
            state.attempt_number,
            attempts,
            describe(state.outcome.exception()),
            state.next_action.sleep,
        )

    return Retrying(
        retry=retry_if_exception(is_temporary),
        stop=stop_after_attempt(attempts),
        wait=wait_exponential(multiplier=wait_seconds, max=MAX_RETRY_WAIT_SECONDS),
        before_sleep=note_retry,
        reraise=True,
    )
