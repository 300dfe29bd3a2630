"""Durations as a user writes them (``--max-runtime 2h``, ``[goal] max_runtime = "90m"``) and as they are shown."""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT_S = {"": 60.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """Seconds in ``text``: ``90s``, ``45m``, ``2h``, ``1.5d``, or a bare number of minutes. :class:`ValueError` with
    the accepted forms otherwise (argparse shows it)."""
    match = _DURATION.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a duration; write e.g. 90s, 45m, 2h or 1.5d (a bare number is minutes)")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def format_duration(seconds: float) -> str:
    """``seconds`` as a person reads it: ``45 s``, ``12 min``, ``2.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
