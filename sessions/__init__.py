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
    from sessions.accounting.diagnostics import CacheTracker, RequestDiagnostics
    from sessions.accounting.prices import PriceBook, default_price_book
    from sessions.events import SessionEvent
    from sessions.journal.jsonl import Journal, read_journal
    from sessions.log import MessageLog
    from sessions.prompt.memory import StandingMemory, load_standing_memory
    from sessions.prompt.prefix import Prefix, build_prefix
    from sessions.prompt.tail import TailBlock, compose_user_turn
    from sessions.session import Session, SessionSettings
    from sessions.turn import TurnResult
    from sessions.wire.client import ClientSettings, DeepSeekClient
    from sessions.wire.errors import DeepSeekError
    from sessions.wire.reply import ReplySource, stream_reply
    from sessions.wire.stream import Reply, StreamEvent

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
    "ClientSettings": "wire.client",
    "DeepSeekClient": "wire.client",
    "CacheTracker": "accounting.diagnostics",
    "RequestDiagnostics": "accounting.diagnostics",
    "DeepSeekError": "wire.errors",
    "SessionEvent": "events",
    "Journal": "journal.jsonl",
    "read_journal": "journal.jsonl",
    "MessageLog": "log",
    "StandingMemory": "prompt.memory",
    "load_standing_memory": "prompt.memory",
    "Prefix": "prompt.prefix",
    "build_prefix": "prompt.prefix",
    "PriceBook": "accounting.prices",
    "default_price_book": "accounting.prices",
    "ReplySource": "wire.reply",
    "Session": "session",
    "SessionSettings": "session",
    "TurnResult": "turn",
    "stream_reply": "wire.reply",
    "Reply": "wire.stream",
    "StreamEvent": "wire.stream",
    "TailBlock": "prompt.tail",
    "compose_user_turn": "prompt.tail",
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
