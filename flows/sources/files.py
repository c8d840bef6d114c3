"""Opening an input file: gzip or plain text, never failing on bad bytes."""

from __future__ import annotations

import gzip
from pathlib import Path


def open_text(path: Path):
    """A text file, gzip-compressed when it ends in .gz; undecodable bytes become U+FFFD, never an error."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")
