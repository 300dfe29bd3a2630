"""The clocks of one attempt: its deadline and stall timer, and the short reads after a reply is whole."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import trio

from sessions.wire.answers import ERROR_BODY_LIMIT
from sessions.wire.stream import StreamEvent

DRAIN_GRACE_S = 2.0
"""How long a whole reply's connection is given to end (``[DONE]``, the rest of the body) before it is closed."""

Emit = Callable[[list[StreamEvent]], Awaitable[None]]
"""Hands a non-empty batch of events to the caller."""


async def drain(chunks: AsyncIterator[bytes], timers: Timers) -> None:
    """After ``[DONE]``, read the (empty) rest of the body so the connection goes back to the pool for reuse.

    The reply is already whole: a server that keeps the body open is given a short grace, then the response is
    closed; a transport error here changes nothing.
    """
    timers.stall_scope.deadline = math.inf
    with trio.move_on_after(DRAIN_GRACE_S):
        try:
            async for _ in chunks:
                pass
        except httpx.TransportError:
            pass


class Timers:
    """The deadline and the stall timer of one attempt.

    Only the server's time counts: real data restarts the stall timer (keep-alives leave it be), and while the reader
    waits for the caller to take events (the channel is full) both timers are paused.
    """

    __slots__ = ("deadline_scope", "stall_s", "stall_scope")

    def __init__(self, deadline_scope: trio.CancelScope, stall_scope: trio.CancelScope, stall_s: float) -> None:
        self.deadline_scope = deadline_scope
        self.stall_scope = stall_scope
        self.stall_s = stall_s

    def real_data(self) -> None:
        self.stall_scope.deadline = trio.current_time() + self.stall_s

    async def hand_over(self, events: list[StreamEvent], real: bool, emit: Emit) -> None:
        if not events:
            if real:
                self.real_data()
            return
        before = trio.current_time()
        stall_left = self.stall_scope.deadline - before
        self.stall_scope.deadline = math.inf
        await emit(events)
        after = trio.current_time()
        self.deadline_scope.deadline += after - before
        self.stall_scope.deadline = after + (self.stall_s if real else stall_left)


async def read_head(head: bytes, chunks: AsyncIterator[bytes], timers: Timers) -> bytes:
    """A little more of a foreign body than what came so far (enough for an HTML page's title), briefly."""
    body = bytearray(head)
    timers.stall_scope.deadline = math.inf
    with trio.move_on_after(DRAIN_GRACE_S):
        async for part in chunks:
            body += part
            if len(body) >= ERROR_BODY_LIMIT or b"</title>" in body.lower():
                break
    return bytes(body[:ERROR_BODY_LIMIT])
