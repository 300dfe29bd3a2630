"""The exact bytes of a session's next request (DESIGN §3.1, §3.2): the cached head for its model, the frozen system
bytes, and the stored bytes of every message, joined once.

Thinking and reasoning effort are fixed for the life of a session (§3.7), so a head depends only on the prefix and
the model; it is built once per (prefix, model) and reused for every request. The provider that serves the model
decides whether they are sent at all (:mod:`sessions.wire.provider`: an OpenAI-compatible server gets neither). A
model with a ``max_output`` carries ``max_tokens`` in every head, the same each time (:meth:`RequestBytes.max_tokens`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Protocol

from sessions.log import MessageLog
from sessions.prompt.prefix import Prefix
from sessions.wire.messages import ChatRequest, ReasoningEffort, Thinking, request_head
from sessions.wire.provider import DEEPSEEK, Provider


class _Settings(Protocol):
    """What a session's settings (``sessions.session.SessionSettings``) say about its request heads."""

    @property
    def thinking(self) -> bool: ...
    @property
    def reasoning_effort(self) -> ReasoningEffort | None: ...
    @property
    def max_output(self) -> Mapping[str, int]: ...


class RequestBytes:
    """Builds a session's request bodies; keeps each model's head."""

    def __init__(
        self,
        *,
        thinking: bool,
        reasoning_effort: ReasoningEffort | None,
        client: object = None,
        max_output: Mapping[str, int] | None = None,
    ) -> None:
        self.thinking = thinking
        self.max_output: Mapping[str, int] = max_output or {}
        """The most ``max_tokens`` of a model id (its ``[[providers]]`` entry's ``max_output``): every request to it
        carries ``max_tokens``, at most that; a model without one carries none unless asked (as ever)."""
        self.reasoning_effort = reasoning_effort if thinking else None
        provider_for: Callable[[str], Provider] | None = getattr(client, "provider_for", None)  # a test's fake: none
        self.provider_for = provider_for or (lambda _model: DEEPSEEK)
        """The provider of a model: its kind decides whether thinking and effort are sent."""
        self._heads: dict[tuple[str, str], bytes] = {}

    @classmethod
    def for_session(cls, settings: _Settings, client: object) -> RequestBytes:
        """A session's: its thinking, effort and ``max_output``, the provider of each model asked of ``client``."""
        return cls(
            thinking=settings.thinking,
            reasoning_effort=settings.reasoning_effort,
            client=client,
            max_output=settings.max_output,
        )

    def max_tokens(self, model: str, max_tokens: int | None = None) -> int | None:
        """The ``max_tokens`` a request to ``model`` carries: ``max_tokens`` bounded by the model's
        :attr:`max_output`, or that bound when none is asked."""
        cap = self.max_output.get(model)
        if cap is None:
            return max_tokens
        return cap if max_tokens is None else min(max_tokens, cap)

    def request(self, prefix: Prefix, model: str, max_tokens: int | None = None) -> ChatRequest:
        """The request's parameters (no messages: those are the log's stored bytes)."""
        takes = self.provider_for(model).takes_thinking
        return ChatRequest(
            model=model,
            messages=(),
            tools=prefix.tools,
            stream=True,
            thinking=Thinking(type="enabled" if self.thinking else "disabled") if takes else None,
            reasoning_effort=self.reasoning_effort if takes else None,
            max_tokens=self.max_tokens(model, max_tokens),
        )

    def head(self, prefix: Prefix, model: str, max_tokens: int | None = None) -> bytes:
        """Everything before the first message: parameters, tools, system message."""
        if max_tokens is not None:  # a retry of a cut reply: not the conversation's usual head, not kept
            return request_head(self.request(prefix, model, max_tokens), prefix.tools_bytes) + prefix.system_bytes
        key = (prefix.fingerprint, model)
        head = self._heads.get(key)
        if head is None:
            head = request_head(self.request(prefix, model), prefix.tools_bytes) + prefix.system_bytes
            self._heads[key] = head
        return head

    def body(self, prefix: Prefix, log: MessageLog, model: str, max_tokens: int | None = None) -> bytes:
        """The exact bytes of the next request: head + system + every stored message."""
        head = self.head(prefix, model, max_tokens)
        encoded = log.encoded
        if not encoded:
            return head + b"]}"
        # One join, one copy: the harness cost of a request is joining the stored bytes (DESIGN §7).
        return b",".join(itertools.chain((head,), encoded[:-1], (encoded[-1] + b"]}",)))
