"""How many tokens the next request of a session will carry, between two reports of the server (DESIGN §3.6).

The server's last reported usage (prompt + completion) is exact; what was appended since is counted with the DeepSeek
vocabulary. Compaction's trigger and the estimate of a request cut off mid-way read it; nothing else writes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sessions.accounting import tokens
from sessions.wire.messages import Usage


class ContextEstimate:
    """The context a session's next request carries: the last reported size plus what was appended since."""

    def __init__(self) -> None:
        self._reported = 0
        self._unsent = 0

    @property
    def tokens(self) -> int:
        return self._reported + self._unsent

    @property
    def reported(self) -> bool:
        """Whether the server has reported a size since the session started or its log was rewritten."""
        return self._reported > 0

    def appended(self, text: str) -> None:
        """``text`` entered the log after the last report."""
        self._unsent += tokens.count(text)

    def add(self, count: int) -> None:
        """``count`` tokens (already counted) entered the log after the last report."""
        self._unsent += count

    def report(self, usage: Usage) -> None:
        """The server reported a request of the conversation: the log it saw, and the reply now appended to it."""
        self._reported = usage.prompt_tokens + usage.completion_tokens
        self._unsent = 0

    def rewritten(self, encoded: Iterable[bytes]) -> None:
        """The log was rewritten (compaction): nothing is reported of the new one, every message is counted."""
        self._reported = 0
        self._unsent = sum(tokens.count_many([data.decode("utf-8") for data in encoded]))
