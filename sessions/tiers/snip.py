"""What a tier leaves of a tool result in the log: a stable head and tail with a marker (snip), or the marker alone
(force), and the marker's form (DESIGN §3.6 "Tiers").

A marker names the archive entry that holds the original (``recall("call_3")``), so the model can have it back. Both
forms depend only on the text and its id: the same result snipped twice gives the same bytes.
"""

from __future__ import annotations

import re

SNIP_HEAD_CHARS = 600
SNIP_TAIL_CHARS = 600
"""What a snipped result keeps of its start and its end."""
RECALL_TOOL = "recall"
_MARKER = re.compile(r'recall\("([A-Za-z0-9_.:-]{1,120})"\)')


def recall_hint(archive_id: str) -> str:
    """The words every marker ends with: the call that returns the original."""
    return f'recall("{archive_id}") returns it byte for byte'


def snip_text(text: str, archive_id: str, *, head: int = SNIP_HEAD_CHARS, tail: int = SNIP_TAIL_CHARS) -> str | None:
    """``text`` cut to its first ``head`` and last ``tail`` characters around a marker; None when that saves
    nothing worth a marker (the text is not much longer than what it keeps)."""
    if len(text) <= head + tail + 400:
        return None
    cut = len(text) - head - tail
    lines = text.count("\n", head, len(text) - tail)
    marker = (
        f"\n[… snipped: {cut} characters ({lines} lines) of this tool result are archived; "
        f"{recall_hint(archive_id)} …]\n"
    )
    return text[:head] + marker + text[len(text) - tail :]


def placeholder_text(text: str, archive_id: str, label: str) -> str:
    """What force leaves of a tool result: one line naming it and how to have it back."""
    lines = text.count("\n") + 1
    return f"[tool result {label} archived ({len(text)} characters, {lines} lines); {recall_hint(archive_id)}]"


def markers_in(text: str) -> list[str]:
    """The archive ids that markers in ``text`` name, in order of first appearance."""
    seen: dict[str, None] = {}
    for found in _MARKER.finditer(text):
        seen.setdefault(found.group(1), None)
    return list(seen)
