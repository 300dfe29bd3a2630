"""How many tokens the next request of a session will carry, between two reports of the server (DESIGN §3.6).

The server's last reported usage (prompt + completion) is exact; what was appended since is counted with the DeepSeek
vocabulary, but only when a count is really needed. Compaction's trigger first reads :meth:`ContextEstimate.at_most`,
which never loads the tokenizer: the vocabulary is byte-level BPE with no normalizer, so a text never has more tokens
than UTF-8 bytes, and a context whose bound is below every threshold needs no exact count. Texts the server reports
before anyone needed their count are never counted at all (issue 49: the tokenizer costs a third of a second and
67 MiB to load, more than a short ``reasonix -p`` does otherwise). Compaction's trigger and the estimate of a request
cut off mid-way read it; nothing else writes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sessions.accounting import tokens
from sessions.wire.messages import Usage


class ContextEstimate:
    """The context a session's next request carries: the last reported size plus what was appended since."""

    def __init__(self) -> None:
        self._reported = 0
        self._counted = 0
        """Tokens of the texts appended since the last report that have been counted."""
        self._pending: list[str] = []
        """Texts appended since the last report, not counted yet."""
        self._pending_bytes = 0
        """Their UTF-8 size: at least their tokens."""

    @property
    def tokens(self) -> int:
        """The exact estimate: counts what is pending (this loads the tokenizer once, if nothing had)."""
        if self._pending:
            pending, self._pending, self._pending_bytes = self._pending, [], 0
            self._counted += sum(tokens.count_many(pending))
        return self._reported + self._counted

    def at_most(self) -> int:
        """An upper bound of :attr:`tokens` that counts nothing: each pending text's UTF-8 size for its tokens."""
        return self._reported + self._counted + self._pending_bytes

    @property
    def reported(self) -> bool:
        """Whether the server has reported a size since the session started or its log was rewritten."""
        return self._reported > 0

    def appended(self, text: str) -> None:
        """``text`` entered the log after the last report (counted when, and if, a count is needed)."""
        if text:
            self._pending.append(text)
            self._pending_bytes += len(text.encode("utf-8", "surrogatepass"))

    def report(self, usage: Usage) -> None:
        """The server reported a request of the conversation: the log it saw, and the reply now appended to it."""
        self._reported = usage.prompt_tokens + usage.completion_tokens
        self._counted, self._pending, self._pending_bytes = 0, [], 0

    def rewritten(self, encoded: Iterable[bytes]) -> None:
        """The log was rewritten (compaction): nothing is reported of the new one, every message is pending."""
        self._reported, self._counted, self._pending, self._pending_bytes = 0, 0, [], 0
        for data in encoded:
            self.appended(data.decode("utf-8"))
