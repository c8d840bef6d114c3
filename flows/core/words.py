"""Counts in words, the one rule for plurals: "1 source", "2 sources", "1 recipient"."""

from __future__ import annotations


def plural(count: float | None, singular: str, plural_form: str | None = None) -> str:
    """The noun for `count`: singular for exactly 1 (or -1), else the plural ("s" added unless given)."""
    return singular if count is not None and abs(count) == 1 else (plural_form or f"{singular}s")


def counted(count: float | None, singular: str, plural_form: str | None = None, number: str | None = None) -> str:
    """`count` and its noun, e.g. counted(1, "source") -> "1 source", counted(3_858, "attempt") ->
    "3,858 attempts"; `number` is the count as already formatted (e.g. "1.5 k"), if not the default."""
    shown = number if number is not None else "–" if count is None else f"{count:,}"
    return f"{shown} {plural(count, singular, plural_form)}"
