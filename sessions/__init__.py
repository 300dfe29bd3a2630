"""One cache-stable conversation with DeepSeek, and everything it is made of: the wire types and their deterministic
encoding, the streaming client (retries, deadlines, stalls), the SSE parser and reply assembler, token counting with
DeepSeek's vocabulary, dated prices, the frozen prefix and standing memory, the append-only log and tail blocks,
compaction, cache diagnostics, the session journal, the tools (``sessions.tools``) and tool-call repair
(``sessions.repair``). It imports nothing else of ours (docs/DESIGN.md §2); §3 is the cache invariant it keeps.
``__all__`` names what a caller needs to hold a conversation; each name is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.lazy import lazy_names

if TYPE_CHECKING:
    from sessions.events import (
        Compacted,
        DiagnosticsReported,
        JournalRecovered,
        RepairApplied,
        RequestStarted,
        SessionEvent,
        StreamUpdate,
        ToolFinished,
        ToolStarted,
        TurnFinished,
        UsageReported,
    )
    from sessions.log import MessageLog
    from sessions.session import Session, SessionSettings
    from sessions.turn import TurnResult

__all__ = [
    "Compacted",
    "DiagnosticsReported",
    "JournalRecovered",
    "MessageLog",
    "RepairApplied",
    "RequestStarted",
    "Session",
    "SessionEvent",
    "SessionSettings",
    "StreamUpdate",
    "ToolFinished",
    "ToolStarted",
    "TurnFinished",
    "TurnResult",
    "UsageReported",
]

_HOME = {
    "Compacted": "events",
    "DiagnosticsReported": "events",
    "JournalRecovered": "events",
    "MessageLog": "log",
    "RepairApplied": "events",
    "RequestStarted": "events",
    "Session": "session",
    "SessionEvent": "events",
    "SessionSettings": "session",
    "StreamUpdate": "events",
    "ToolFinished": "events",
    "ToolStarted": "events",
    "TurnFinished": "events",
    "TurnResult": "turn",
    "UsageReported": "events",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
