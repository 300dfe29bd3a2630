"""Small helpers for the words of what users read: the one plural helper and the one text-shortening helper."""

from __future__ import annotations

import math


def counted(count: int | float, noun: str, plural: str | None = None) -> str:
    """``1 request``, ``3 requests``, ``0 problems``; ``plural`` for nouns that take more than an ``s``."""
    shown = str(count) if isinstance(count, int) else f"{count:g}"
    return f"{shown} {noun if count == 1 else plural or noun + 's'}"


def usd(amount: float) -> str:
    """``$0.0123``: four decimals, and for a smaller non-zero amount as many as its first two significant digits need
    (``$0.000031``), so a short chat never reads ``$0.0000``."""
    if amount == 0 or abs(amount) >= 0.0001:
        return f"${amount:.4f}"
    digits = -math.floor(math.log10(abs(amount))) + 1
    return f"${amount:.{digits}f}"


def shorten(text: str, limit: int) -> str:
    """``text`` on one line of at most ``limit`` characters: runs of whitespace and control characters become one
    space, and a longer line is cut with ``…`` (a space before the cut dropped). The one text-shortening helper."""
    one_line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return one_line if len(one_line) <= limit else one_line[: max(limit - 1, 0)].rstrip() + "…"
