"""Small helpers for the words of what users read."""

from __future__ import annotations


def counted(count: int | float, noun: str, plural: str | None = None) -> str:
    """``1 request``, ``3 requests``, ``0 problems``; ``plural`` for nouns that take more than an ``s``."""
    shown = str(count) if isinstance(count, int) else f"{count:g}"
    return f"{shown} {noun if count == 1 else plural or noun + 's'}"
