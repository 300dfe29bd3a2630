"""What ``async with client.stream(...) as events`` gives: the caller's side of the channel the reader task fills,
and how the reader's outcome reaches it."""

from __future__ import annotations

import trio

from sessions.wire.errors import DeepSeekError
from sessions.wire.stream import StreamEvent


class Outcome:
    __slots__ = ("crashed", "error")

    def __init__(self) -> None:
        self.error: DeepSeekError | None = None
        self.crashed = False
        """The reader died of something else (a bug, a cancellation): the nursery will raise it."""


class ReplyEvents:
    """What ``async with client.stream(...) as events`` gives: iterate it; a failed request raises at the end."""

    def __init__(self, receive: trio.MemoryReceiveChannel[list[StreamEvent]], outcome: Outcome) -> None:
        self._receive = receive
        self._batch: list[StreamEvent] = []
        self._next = 0
        self._outcome = outcome

    def __aiter__(self) -> ReplyEvents:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._next < len(self._batch):
            # Events travel in batches (one per network read); the checkpoint keeps this a well-behaved await.
            await trio.lowlevel.checkpoint()
            event = self._batch[self._next]
            self._next += 1
            return event
        try:
            self._batch = await self._receive.receive()
            self._next = 1
            return self._batch[0]
        except trio.EndOfChannel:
            pass
        if self._outcome.crashed:
            # The reader task died of an unexpected exception; its nursery is about to cancel us and raise it.
            await trio.sleep_forever()
        # Raised outside the except block: the error came from the reader task, not from the channel ending.
        error, self._outcome.error = self._outcome.error, None
        if error is not None:
            raise error
        raise StopAsyncIteration
