"""One cache-stable conversation with DeepSeek, and everything it is made of: the wire types and their deterministic
encoding, the streaming client (retries, deadlines, stalls), the SSE parser and reply assembler, token counting with
DeepSeek's vocabulary, dated prices, the frozen prefix and standing memory, the append-only log and tail blocks,
compaction, cache diagnostics, the session journal, the tools (``sessions.tools``) and tool-call repair
(``sessions.repair``). It imports nothing else of ours (docs/DESIGN.md §2); §3 is the cache invariant it keeps.
``__all__`` names what a caller needs to hold a conversation; each name is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessions.client import ClientSettings, DeepSeekClient
    from sessions.diagnostics import CacheTracker, RequestDiagnostics
    from sessions.errors import DeepSeekError
    from sessions.events import SessionEvent
    from sessions.journal import Journal, read_journal
    from sessions.log import MessageLog
    from sessions.memory import StandingMemory, load_standing_memory
    from sessions.prefix import Prefix, build_prefix
    from sessions.prices import PriceBook, default_price_book
    from sessions.reply import ReplySource, stream_reply
    from sessions.session import Session, SessionSettings
    from sessions.stream import Reply, StreamEvent
    from sessions.tail import TailBlock, compose_user_turn
    from sessions.turn import TurnResult

__all__ = [
    "CacheTracker",
    "ClientSettings",
    "DeepSeekClient",
    "DeepSeekError",
    "Journal",
    "MessageLog",
    "Prefix",
    "PriceBook",
    "Reply",
    "ReplySource",
    "RequestDiagnostics",
    "Session",
    "SessionEvent",
    "SessionSettings",
    "StandingMemory",
    "StreamEvent",
    "TailBlock",
    "TurnResult",
    "build_prefix",
    "compose_user_turn",
    "default_price_book",
    "load_standing_memory",
    "read_journal",
    "stream_reply",
]

_HOME = {
    "ClientSettings": "client",
    "DeepSeekClient": "client",
    "CacheTracker": "diagnostics",
    "RequestDiagnostics": "diagnostics",
    "DeepSeekError": "errors",
    "SessionEvent": "events",
    "Journal": "journal",
    "read_journal": "journal",
    "MessageLog": "log",
    "StandingMemory": "memory",
    "load_standing_memory": "memory",
    "Prefix": "prefix",
    "build_prefix": "prefix",
    "PriceBook": "prices",
    "default_price_book": "prices",
    "ReplySource": "reply",
    "Session": "session",
    "SessionSettings": "session",
    "TurnResult": "turn",
    "stream_reply": "reply",
    "Reply": "stream",
    "StreamEvent": "stream",
    "TailBlock": "tail",
    "compose_user_turn": "tail",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value
