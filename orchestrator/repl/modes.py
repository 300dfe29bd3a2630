"""The conversation's modes: ``ask`` (every command and unapproved write asks), ``auto`` (what a sandbox confines
runs), ``plan`` (read-only: writes are refused at dispatch). Shift+Tab cycles them.

A mode never changes the tool list or the prefix (DESIGN §3.4): plan mode is the session's ``read_only`` setting,
which dispatch consults per call, and the approval mode is the permission gate's. The model learns the mode from a
``<mode>`` tail block in front of the next user message (DESIGN §3.3), sent only when the mode changed since the last
one it saw, so every earlier byte is re-sent unchanged and the next request hits the whole previous one.
"""

from __future__ import annotations

from typing import Literal

from sessions import Session
from sessions.permissions import PermissionGate
from sessions.prompt import TailBlock

Mode = Literal["ask", "auto", "plan"]
CYCLE: tuple[Mode, ...] = ("ask", "auto", "plan")

_TEXT: dict[Mode, str] = {
    "ask": "ask: you may read, edit and run commands; the user approves each command and each write first.",
    "auto": "auto: you may read, edit and run commands; commands run in the sandbox without asking.",
    "plan": "plan: read-only. Investigate with the read-only tools and propose a plan; writes and commands that "
    "change the workspace are refused. Do not try to change anything until the mode changes.",
}


def next_mode(mode: Mode) -> Mode:
    """The mode after ``mode`` in the cycle ask → auto → plan → ask."""
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


def mode_block(mode: Mode) -> TailBlock:
    """The tail block that tells the model the current mode."""
    return TailBlock(tag="mode", body=_TEXT[mode])


def apply_mode(session: Session, gate: PermissionGate, mode: Mode) -> None:
    """Make dispatch enforce ``mode``: read-only for ``plan``; the gate asks in ``ask``, and in ``plan`` for all that
    ``ask`` asks for but a command the read-only sandbox confines (an MCP tool claiming ``readOnlyHint`` ran unasked
    in plan mode while ask mode asked). No byte sent changes."""
    read_only = mode == "plan"
    if session.settings.read_only != read_only:
        session.settings = session.settings.model_copy(update={"read_only": read_only})
    gate.mode = mode
