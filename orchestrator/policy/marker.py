"""The escalation marker, recognised while the content streams (DESIGN §5 "Escalation").

A flash reply asks for pro by *starting* its content with ``<<<NEEDS_PRO>>>`` or ``<<<NEEDS_PRO: reason>>>``
(leading whitespace allowed). :class:`MarkerDetector` is fed content deltas and holds them back only while a marker is
still possible, never more than ``hold_back`` characters: the moment the text can no longer become a marker (the first
non-blank character is not ``<``, the text leaves ``<<<NEEDS_PRO``, the limit is reached) everything held is released,
so nothing flickers and ordinary replies stream with no visible delay.

The decision depends only on the content, never on how it was split into deltas: the content carries a marker exactly
when its first ``hold_back`` characters start with a complete one (:func:`find_marker`). Pure: no IO, no clock.
"""

from __future__ import annotations

import re
from typing import Literal

MARKER_OPEN = "<<<NEEDS_PRO"
MARKER_CLOSE = ">>>"
DEFAULT_HOLD_BACK = 256
_MARKER = re.compile(r"\s*<<<NEEDS_PRO\s*(?::(.*?))?>>>", re.DOTALL)

Decision = Literal["undecided", "marker", "none"]


def find_marker(content: str, hold_back: int = DEFAULT_HOLD_BACK) -> re.Match[str] | None:
    """The marker at the start of ``content`` if it ends within the first ``hold_back`` characters."""
    return _MARKER.match(content, 0, hold_back)


def _may_become_marker(text: str) -> bool:
    """Whether appending more text to ``text`` could still complete a marker (ignoring the length limit)."""
    s = text.lstrip()
    if len(s) <= len(MARKER_OPEN):
        return MARKER_OPEN.startswith(s)
    if not s.startswith(MARKER_OPEN):
        return False
    rest = s[len(MARKER_OPEN) :].lstrip()
    if not rest:
        return True
    if rest[0] == ":":
        return True  # a reason is being written; the close (or the limit) decides
    return MARKER_CLOSE.startswith(rest)


class MarkerDetector:
    """Feed content deltas; get back the text that may be shown now.

    ``feed`` returns what to release (possibly ``""``). Once :attr:`decision` is ``"marker"`` nothing is ever
    released: the reply is to be cut off. ``finish`` is called when the content is over (the reply completed, or a
    tool call began) and releases whatever is still held: an unfinished marker is not a marker.
    """

    __slots__ = ("_held", "decision", "hold_back", "reason", "received_chars")

    def __init__(self, hold_back: int = DEFAULT_HOLD_BACK) -> None:
        if hold_back < len(MARKER_OPEN) + len(MARKER_CLOSE):
            raise ValueError(f"hold_back must be at least {len(MARKER_OPEN) + len(MARKER_CLOSE)} characters")
        self.hold_back = hold_back
        self.decision: Decision = "undecided"
        self.reason = ""
        self.received_chars = 0
        """Content characters fed so far (what the flash call produced before a marker was recognised)."""
        self._held = ""

    @property
    def held(self) -> str:
        """Text fed but not released (always shorter than ``hold_back`` while undecided)."""
        return self._held

    def feed(self, text: str) -> str:
        self.received_chars += len(text)
        if self.decision == "none":
            return text
        if self.decision == "marker":
            return ""
        self._held += text
        match = find_marker(self._held, self.hold_back)
        if match is not None:
            self.decision = "marker"
            self.reason = " ".join((match.group(1) or "").split())
            return ""
        if len(self._held) >= self.hold_back or not _may_become_marker(self._held):
            return self._release()
        return ""

    def finish(self) -> str:
        """The content is over: release anything still held (undecided means no marker)."""
        if self.decision == "undecided":
            return self._release()
        return ""

    def _release(self) -> str:
        self.decision = "none"
        out, self._held = self._held, ""
        return out
