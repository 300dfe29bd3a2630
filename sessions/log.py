"""The append-only message log: every message encoded once, the same bytes re-sent forever (DESIGN §3.2).

Compaction is the only rewrite. It goes through :meth:`MessageLog.rewrite`, which bumps ``epoch`` so that the
diagnostics can name it as the reason of the miss that follows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sessions.wire.messages import AssistantMessage, Message, encode_message


@dataclass(frozen=True, slots=True)
class LogEntry:
    message: Message
    data: bytes
    """The message's bytes inside ``messages``: computed once, when it entered the log."""


def encode_for_log(message: Message) -> bytes:
    # Sessions always carry tools, so every assistant message goes back with reasoning_content ("" when none).
    if isinstance(message, AssistantMessage):
        message = message.with_reasoning_round_trip()
    return encode_message(message)


class MessageLog:
    """Messages after the system prompt, in order. Append-only, except for :meth:`rewrite`."""

    def __init__(self) -> None:
        self._entries: list[LogEntry] = []
        self._bytes: list[bytes] = []
        self.epoch = 0
        self.rewrite_reason: str | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[LogEntry]:
        return iter(self._entries)

    def __getitem__(self, index: int) -> LogEntry:
        return self._entries[index]

    def append(self, message: Message, *, data: bytes | None = None) -> LogEntry:
        """Append a message. ``data`` is its stored bytes when rebuilding from a journal (never re-encoded)."""
        entry = LogEntry(message=message, data=encode_for_log(message) if data is None else data)
        self._entries.append(entry)
        self._bytes.append(entry.data)
        return entry

    @property
    def encoded(self) -> Sequence[bytes]:
        """The stored bytes of every message, in order. Read-only view; do not mutate."""
        return self._bytes

    @property
    def messages(self) -> list[Message]:
        return [e.message for e in self._entries]

    def rewrite(self, messages: Sequence[Message | LogEntry], reason: str) -> None:
        """Replace the whole log (compaction, a tier). The next request's cache miss is explained by ``reason``. An
        entry given as a :class:`LogEntry` keeps its stored bytes (a tier that changes one message re-sends every
        other byte as it was)."""
        self._entries = []
        self._bytes = []
        for m in messages:
            if isinstance(m, LogEntry):
                self.append(m.message, data=m.data)
            else:
                self.append(m)
        self.epoch += 1
        self.rewrite_reason = reason
