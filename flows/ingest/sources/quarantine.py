"""Where a reader puts the rows it cannot read (or, strict, stops at the first)."""

from __future__ import annotations

from flows.ingest.sources.errors import InputFormatError


class Quarantine:
    """Collects the rows a reader could not read. A strict one (the default) raises the first instead."""

    def __init__(self, strict: bool = True):
        self.strict = strict
        self.errors: list[InputFormatError] = []

    def reject(self, error: InputFormatError) -> None:
        if self.strict:
            raise error
        self.errors.append(error)
