"""How a request of a session becomes a reply: the :class:`ReplySource` seam and what it is given.

The default source streams the request through the client (:func:`stream_reply`); the orchestrator wraps it to
escalate a turn from flash to pro. A source gets a :class:`ReplyRequest` (the request, its exact bytes, the bytes of
the same request for another model, and an accounting callback), never the session itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from sessions.stream import Reply, StreamEvent
from sessions.wire import ChatRequest, Usage


@dataclasses.dataclass(frozen=True, slots=True)
class ReplyRequest:
    """What a :class:`ReplySource` gets for one request of a session, and nothing more: the session's name, the
    request and its exact bytes, the client to send it with, the turn's failure count so far, the bytes of the same
    request for another model (``body_for``), and a callback that accounts a call the source made on its own
    (``account_estimate(usage, model)``: an abandoned stream, priced and reported as an estimate)."""

    session: str
    request: ChatRequest
    body: bytes
    client: ChatClient
    failures: int
    body_for: Callable[[str], bytes]
    account_estimate: Callable[[Usage, str], float]
    started: Callable[[str], None] = lambda model: None
    """A source that sends a second request for this one (a pro request after an aborted flash call) says so: the
    session reports it as a request of its own."""


class ReplySource(Protocol):
    """How a request becomes a reply. The default streams through the client; the orchestrator wraps it to escalate."""

    async def __call__(self, call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply: ...


class ChatClient(Protocol):
    def stream(
        self, request: ChatRequest, *, body: bytes | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[StreamEvent]]:
        """``async with client.stream(request) as events``: the events of one request, ending with Completed."""
        ...

    async def complete(
        self,
        request: ChatRequest,
        *,
        body: bytes | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Reply: ...


async def stream_reply(call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply:
    return await call.client.complete(call.request, body=call.body, on_event=emit)
