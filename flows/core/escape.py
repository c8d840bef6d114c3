"""The one rule for showing a string from the logs (or anything else not ours): the report, the
terminal, log lines and errors all escape it here, the same way.

A character that is not printable (Python's `str.isprintable`: control characters such as ESC,
which starts a terminal escape sequence, CR and LF, which forge lines, and format characters such
as the bidi overrides U+202A-U+202E and U+2066-U+2069, which reorder what a reader sees) is shown
as its escape: `\\x1b`, `\\u202e`, `\\U0001f5ff`. Everything else, backslashes included, is kept as
it is, so escaping twice changes nothing (an error's message escaped where it is made, then again
where it is printed, reads the same).
"""

from __future__ import annotations

import logging
import traceback

from markupsafe import Markup


def printable(value):
    """`value` with every character that is not printable escaped (strings only; a template's
    Markup, a macro's output, is already safe; other values are returned as they are)."""
    if not isinstance(value, str) or isinstance(value, Markup):
        return value
    if value.isprintable():  # nearly every string: no copy
        return value
    return "".join(ch if ch.isprintable() else _escape(ord(ch)) for ch in value)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable_lines(text: str) -> str:
    """A message of several lines (an error listing its problems, a command's stderr), each line
    escaped: its own line breaks are kept, nothing inside a line can move the cursor."""
    return "\n".join(printable(line) for line in text.split("\n"))


class PrintableRecords(logging.Filter):
    """On a logger: its records' messages (and tracebacks) escaped before any handler sees them,
    the console's, a file's or Prefect's API log."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = printable(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = printable_lines("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        return True


_FILTER = PrintableRecords()


def escaped_logger(name: str) -> logging.Logger:
    """logging.getLogger(name) whose records are escaped (the filter is added once)."""
    logger = logging.getLogger(name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger
