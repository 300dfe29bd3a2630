"""How a request of a session becomes a reply: the :class:`ReplySource` seam and what it is given, and the
:class:`RequestGate` every request passes first.

The default source streams the request through the client (:func:`stream_reply`); the orchestrator wraps it to
escalate a turn from flash to pro. A source gets a :class:`ReplyRequest` (the request, its exact bytes, the bytes of
the same request for another model, and an accounting callback), never the session itself.

Before a session sends any request (a turn's, the pro request after an aborted flash call, a compaction digest) it asks
its gate, when it has one, with a :class:`RequestEstimate`: what the request may cost at most. The gate raises to
refuse it (the request is not sent, and the exception leaves the session as a cancellation would) or returns a release
callback, called once the request has ended and its usage is accounted. The orchestrator supplies the gate (a goal's
budget ledger); nothing here knows what it counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from sessions.wire.messages import ChatRequest, Usage
from sessions.wire.stream import Reply, StreamEvent


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


@dataclasses.dataclass(frozen=True, slots=True)
class RequestEstimate:
    """What a request about to be sent may cost at most: its prompt tokens by our own count, priced as if none hit
    the cache (``prompt_usd``, an upper bound), the price of each output token, and the output the request allows
    (``max_output_tokens``: its ``max_tokens``, ``None`` when it sets none and the server's default applies)."""

    session: str
    model: str
    prompt_tokens: int
    prompt_usd: float
    output_usd_per_token: float
    max_output_tokens: int | None = None

    def bound_usd(self, output_allowance_tokens: int) -> float:
        """The most the request can cost when its output is at most its ``max_tokens`` or else the allowance."""
        output = self.max_output_tokens if self.max_output_tokens is not None else output_allowance_tokens
        return self.prompt_usd + output * self.output_usd_per_token


class RequestGate(Protocol):
    """Asked before every request a session sends (see the module's docstring)."""

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        """Refuse the request (raise) or admit it; the callable returned is called once it has ended."""
        ...


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
