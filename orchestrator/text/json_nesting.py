"""JSON input bounded in nesting before it is parsed: ``json.loads`` recurses once per level, so a line of 100 000
``[`` from an editor (``reasonix acp``) or a script (``-p --input-format stream-json``) ended in a RecursionError
traceback. :func:`loads` counts the depth first (brackets outside strings only, found by one regex scan) and refuses
a document deeper than :data:`MAX_DEPTH` with a :class:`TooDeep`, a ValueError like any other malformed input."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64
"""Far above any message of the protocols read here (ACP's deepest is about 6 levels)."""

_TOKENS = re.compile(rb'["\\\[\]{}]')


class TooDeep(ValueError):
    """JSON nested deeper than the bound."""


def depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in ``raw`` (well formed or not), brackets in strings not counted."""
    deepest = level = 0
    in_string = False
    escaped_at = -1
    for token in _TOKENS.finditer(raw):
        at, char = token.start(), raw[token.start()]
        if in_string:
            if at == escaped_at:
                continue
            if char == 0x5C:  # a backslash escapes the next byte
                escaped_at = at + 1
            elif char == 0x22:
                in_string = False
        elif char == 0x22:
            in_string = True
        elif char in (0x5B, 0x7B):
            level += 1
            deepest = max(deepest, level)
        elif char in (0x5D, 0x7D):
            level -= 1
    return deepest


def loads(raw: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(raw)``, after a :class:`TooDeep` for a document nested deeper than ``max_depth``."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") > max_depth and depth(data) > max_depth:
        raise TooDeep(f"JSON nested deeper than {max_depth} levels; send a flatter message")
    return json.loads(raw)
