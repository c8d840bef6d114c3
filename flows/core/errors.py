"""Which failures are the user's to fix, and the exit code every command gives for each.

| exit | meaning |
| --- | --- |
| 0 | done (a backfill: every month built or skipped) |
| 1 | the run failed: dbt build, a critical data-quality failure, delivery, another run holds the cluster, a full disk, a bug |
| 2 | usage, config or input: a bad argument, a month not ended, a config key, a missing or unreadable input |
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

EXIT_DONE, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


class InputError(Exception):
    """A failure the user fixes in the command, the config or the inputs (exit 2): every such error
    derives from it (the readers' InputFormatError too), so this module needs none of their modules."""


class UsageError(InputError, ValueError):
    """A command asked for something it cannot do: a month in the future or not ended, a bad option."""


class ConfigError(InputError, ValueError):
    """A config that cannot be used: not there, not TOML, a key's type or range, a path it cannot write."""


class MissingInputError(InputError, FileNotFoundError):
    """A configured input of the month is not there, or not as configured: a directory for a file
    (or the reverse), a symlink loop, an entry no one may read."""


class DiskFullError(RuntimeError):
    """No space left (or the quota reached) where a run writes; what was there before is unchanged."""


def disk_full(error: BaseException, writing: Path | str) -> DiskFullError | None:
    """`error` as a DiskFullError naming what was being written, when it is one: ENOSPC or EDQUOT,
    or (DuckDB's and Arrow's errors carry no errno) their text in the message."""
    reasons = [os.strerror(errno.ENOSPC), os.strerror(errno.EDQUOT)]
    if isinstance(error, DiskFullError):  # named already, by what was writing
        return None
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        reason = error.strerror
    elif not (reason := next((r for r in reasons if r in str(error)), None)):
        return None
    return DiskFullError(
        f"no space left on the device writing {writing}: {reason}; "
        "free some space and run again (earlier results are unchanged)"
    )


class TooManyBadRowsError(InputError, ValueError):
    """A source with more unreadable rows than the configured limit: the run stops instead of reporting on it."""


def is_input_error(error: BaseException | None) -> bool:
    # FileNotFoundError: an input, a CA file or a config that is not there.
    return isinstance(error, InputError | FileNotFoundError)


def exit_code(error: BaseException) -> int:
    """2 for what the user fixes in the command, the config or the inputs; 1 for a failed run.
    An error may carry its own (a backfill whose months all failed on their inputs exits 2)."""
    code = getattr(error, "exit_code", None)
    if isinstance(code, int):
        return code
    return EXIT_INPUT if is_input_error(error) else EXIT_FAILED
