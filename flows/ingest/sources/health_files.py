"""What a health reader does with a file it cannot read to its end, or with a document of an
unexpected shape: it quarantines it (with its path, line, field and the reason) and goes on with
the source's other files, so one bad file never fails the month."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import BrokenGzipError

# a corrupt or truncated .gz (open_text names where it breaks), a file removed or unreadable while
# the month is read
READ_ERRORS = (OSError, EOFError, zlib.error, BrokenGzipError)


def unreadable(path: Path, line: int, error: BaseException) -> InputFormatError:
    """The quarantine entry of a file that could not be read past `line`."""
    if isinstance(error, BrokenGzipError):
        return error  # it names the line already
    return InputFormatError(path, line, "file", path.name, f"could not be read from this line on: {error}")


def invalid(
    path: Path, line: int, error: ValidationError, value: str, what: str, whole: str = "document"
) -> InputFormatError:
    """The quarantine entry of a document that is not `what`: the first field pydantic found wrong
    (or `whole`, when the document itself has the wrong type)."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or whole
    return InputFormatError(path, line, field, value, f"not {what}: {first['msg']}")


def node_folders(root: Path) -> Iterator[tuple[Path, Path | None]]:
    """Every file under `root` in path order, with the node folder it is in (`<root>/<node>/...`), or
    None for a file directly in `root`: a capture that names no node, which the reader quarantines
    (`loose_file`), never passes over."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        yield path, (root / relative.parts[0] if len(relative.parts) > 1 else None)


def loose_file(root: Path, path: Path, layout: str) -> InputFormatError:
    """The quarantine entry of a file directly in a directory of per-node folders (`layout`)."""
    return InputFormatError(path, 1, "file name", str(path.relative_to(root)), f"expected {layout}: no node folder")
