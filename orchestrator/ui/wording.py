"""Small helpers for the words of what users read: the one plural helper and the one text-shortening helper."""

from __future__ import annotations


def counted(count: int | float, noun: str, plural: str | None = None) -> str:
    """``1 request``, ``3 requests``, ``0 problems``; ``plural`` for nouns that take more than an ``s``."""
    shown = str(count) if isinstance(count, int) else f"{count:g}"
    return f"{shown} {noun if count == 1 else plural or noun + 's'}"


def shorten(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace become one space), cut to ``limit`` characters with ``…`` if longer."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: max(limit - 1, 0)] + "…"
