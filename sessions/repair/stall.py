"""Undo what a stalled stream did to one call: a tool name written twice, an arguments object written twice.

A DeepSeek stream that stalls and resumes sometimes repeats what it had already sent. Two shapes reach us:

* a repeated tool name, ``read_fileread_file`` (or ``bash bash``): :func:`repeated_name` finds the one known tool it
  repeats. A name that is several *different* known names run together (``read_filewrite_file``) is ambiguous:
  :func:`run_together` names the parts, so the error result can ask "did you mean" one call to each;
* the arguments object written more than once, ``{"path": "a.py"}{"path": "a.py"}`` (the last copy possibly cut
  off): :func:`repeated_object` recovers the object when every copy is the same, and otherwise raises a
  :class:`~sessions.repair.errors.ModelArgumentsError` whose message shows the objects, one call each.

Nothing here guesses: a repair is taken only when the text is exact repetitions of one thing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from sessions.repair.errors import ModelArgumentsError

_DECODER = json.JSONDecoder()
_BETWEEN = re.compile(r"[\s,;]*")
MAX_SHOWN = 160


def run_together(name: str, known: Collection[str]) -> tuple[str, ...] | None:
    """The known names that ``name`` is made of, two or more run together (spaces, commas between allowed); None
    when it is not such a concatenation. The first split found wins (shortest parts first)."""
    text = name.strip()
    if not text or text in known or len(text) > 400:
        return None
    names = sorted(known, key=len)  # pragma: no mutate - order never changes the split
    best: dict[int, tuple[str, ...]] = {0: ()}  # position -> parts that reach it
    for pos in range(len(text) + 1):
        parts = best.get(pos)
        if parts is None:
            continue
        for tool in names:
            if tool and text.startswith(tool, pos):
                end = _BETWEEN.match(text, pos + len(tool))
                nxt = end.end() if end else pos + len(tool)  # pragma: no mutate - _BETWEEN matches the empty string
                best.setdefault(nxt, (*parts, tool))
    found = best.get(len(text))
    return found if found is not None and len(found) >= 2 else None


def repeated_name(name: str, known: Collection[str]) -> str | None:
    """The known tool that ``name`` repeats two or more times (``read_fileread_file`` → ``read_file``), else None."""
    parts = run_together(name, known)
    if parts is None or len(set(parts)) != 1:
        return None
    return parts[0]  # pragma: no mutate - every part is the same name


def _squashed(text: str) -> str:
    return "".join(text.split())


def repeated_object(raw: str) -> tuple[dict[str, Any], int] | None:
    """``(object, copies)`` when ``raw`` is one JSON object written ``copies`` (>= 2) times in a row, the last copy
    possibly cut off; None when ``raw`` is not several JSON values one after another.

    Raises :class:`ModelArgumentsError`, with a message for the model, when the objects differ: a call takes one.
    """
    values: list[Any] = []
    texts: list[str] = []
    pos = 0
    while True:
        skip = _BETWEEN.match(raw, pos)
        pos = skip.end() if skip else pos  # pragma: no mutate - _BETWEEN matches the empty string
        if pos >= len(raw):  # pragma: no mutate - raw_decode at the end fails too
            break
        try:
            value, end = _DECODER.raw_decode(raw, pos)
        except (ValueError, RecursionError):
            break
        values.append(value)
        texts.append(raw[pos:end])
        pos = end
    rest = raw[pos:]
    if not values or not all(isinstance(v, dict) for v in values):
        return None
    cut_copy = bool(rest.strip()) and _squashed(texts[0]).startswith(_squashed(rest))
    if len(values) + int(cut_copy) < 2 or (rest.strip() and not cut_copy):
        return None
    if all(v == values[0] for v in values):
        return values[0], len(values) + int(cut_copy)
    shown = "; ".join(_short(t) for t in texts)
    raise ModelArgumentsError(
        f"The arguments hold {len(values)} different JSON objects one after another ({shown}); a call takes exactly "
        f"one. Did you mean {len(values)} calls? Send each object as the arguments of its own tool call."
    )


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= MAX_SHOWN else one_line[: MAX_SHOWN - 3] + "..."
