"""Crash-safe replacement of output directories: a failed run never loses an earlier result."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from flows.core.errors import disk_full

_swaps = itertools.count()  # a process may replace the same directory again before an old copy is gone
_removing: set[Path] = set()  # old copies this process's threads are deleting: not leftovers of a killed run


def replace_dir_atomically(
    target: Path, fill: Callable[[Path], None], *, remove_old_in_background: bool = False
) -> None:
    """Fill a sibling temporary directory, then swap it in with renames (see staged_replacement).

    With `remove_old_in_background`, the previous content (moved aside by the swap) is deleted by
    a thread of its own, which the interpreter waits for at exit: deleting hundreds of megabytes
    of raw inputs takes a fifth of a second that the caller need not wait for.
    """
    with staged_replacement(target, remove_old_in_background=remove_old_in_background) as tmp:
        fill(tmp)


@contextmanager
def staged_replacement(
    target: Path, *, remove_old_in_background: bool = False, keep_on: tuple[type[BaseException], ...] = ()
) -> Iterator[Path]:
    """A new, empty sibling directory to fill; when the block ends it replaces `target` (renames),
    and if the block raises it is removed instead, leaving `target` as it was. An exception of a
    type in `keep_on` replaces `target` all the same, then goes on.

    Until the swap the previous content of `target` is untouched, so an exception (or a kill)
    inside the block leaves the last good result in place. What a killed run left behind is cleared
    first (callers hold the cluster's run lock, so no other run is filling; _clear_leftovers_of).
    A full disk inside the block is raised as DiskFullError naming `target`.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    _clear_leftovers_of(target)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    old = target.with_name(f".{target.name}.old-{os.getpid()}-{next(_swaps)}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
    except keep_on:
        _swap(target, tmp, old, remove_old_in_background)
        raise
    except BaseException as error:
        shutil.rmtree(tmp, ignore_errors=True)
        if full := disk_full(error, target):
            raise full from error
        raise
    _swap(target, tmp, old, remove_old_in_background)


LEFTOVER = re.compile(r"\.(?P<target>.+)\.(?:tmp-\d+|old-\d+(?:-\d+)?)")


def clear_leftovers(parent: Path) -> None:
    """Clear what killed runs left beside every directory in `parent` (see staged_replacement):
    a run that replaces one month must not leave another month's superseded copy behind."""
    if parent.is_dir():
        targets = {match["target"] for entry in parent.iterdir() if (match := LEFTOVER.fullmatch(entry.name))}
        for name in sorted(targets):
            _clear_leftovers_of(parent / name)


def _clear_leftovers_of(target: Path) -> None:
    """Remove a killed run's temporary directory of `target`, and its `old` copies; if it died
    between the two renames, the newest `old` copy is the last good result and goes back in place."""
    for stale in target.parent.glob(f".{glob.escape(target.name)}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    leftovers = {}  # path -> mtime; a background removal of this process may finish while we look
    for path in target.parent.glob(f".{glob.escape(target.name)}.old-*"):
        with contextlib.suppress(FileNotFoundError):
            if path not in _removing:
                leftovers[path] = path.stat().st_mtime
    for stale in sorted(leftovers, key=leftovers.get, reverse=True):
        if not target.exists():
            stale.rename(target)
        else:
            shutil.rmtree(stale, ignore_errors=True)


def _swap(target: Path, tmp: Path, old: Path, remove_old_in_background: bool) -> None:
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    if remove_old_in_background:
        _removing.add(old)
        threading.Thread(target=_remove, args=(old,), name=f"remove {old}").start()
    else:
        shutil.rmtree(old, ignore_errors=True)


def _remove(path: Path) -> None:
    try:
        shutil.rmtree(path, ignore_errors=True)
    finally:
        _removing.discard(path)


def replace_file_atomically(target: Path, data: bytes) -> None:
    """Write `data` to a sibling temporary file, then rename it over `target`: a reader (or a crash)
    sees the old content or the new, never half. A full disk is raised as DiskFullError naming `target`."""
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except BaseException as error:
        tmp.unlink(missing_ok=True)
        if full := disk_full(error, target):
            raise full from error
        raise
