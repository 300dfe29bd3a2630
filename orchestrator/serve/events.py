"""One run's event log for the API: every object ``reasonix goal --json`` prints, numbered 1, 2, 3 … per run.

Each is appended as ``{"id": N, "data": {...}}`` to ``serve-events.jsonl`` in the run directory before it is fanned
out, so a client that reconnects with ``Last-Event-ID`` gets every event after N, even from a restarted service. Live
subscribers each get a bounded memory channel; one that falls behind by more than its buffer is dropped (its channel
closed) rather than holding up the goal, and reconnects with the last id it saw. :func:`sse_frames` turns a log into
the server-sent-event stream of ``GET /api/runs/{id}/events``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import trio

EVENTS_FILE = "serve-events.jsonl"
SUBSCRIBER_BUFFER = 4096
"""Events a subscriber may fall behind by before it is dropped (it reconnects with ``Last-Event-ID``)."""
PING_INTERVAL_S = 15.0

Numbered = tuple[int, dict[str, Any]]


def read_events(path: Path, after: int = 0) -> list[Numbered]:
    """The stored events with an id above ``after``, in order (a torn last line is skipped)."""
    if not path.is_file():
        return []
    out: list[Numbered] = []
    with path.open("rb") as fh:
        for raw in fh:
            try:
                record = json.loads(raw)
                number, data = int(record["id"]), record["data"]
            except (ValueError, KeyError, TypeError):
                continue
            if number > after and isinstance(data, dict):
                out.append((number, data))
    return out


class EventLog:
    """The numbered events of one run: stored, and fanned out to live subscribers while the run is live."""

    def __init__(self, path: Path, *, buffer: int = SUBSCRIBER_BUFFER) -> None:
        self.path = path
        self.buffer = buffer
        stored = read_events(path)
        self.last_id = stored[-1][0] if stored else 0
        self.live = False
        self.dropped = 0
        """Subscribers dropped for falling behind."""
        self._file: IO[str] | None = None
        self._subscribers: set[trio.MemorySendChannel[Numbered]] = set()

    def open(self) -> None:
        """The run goes live: events are appended from now on."""
        self.live = True

    def append(self, data: dict[str, Any]) -> int:
        """Store ``data`` as the next event and send it to every subscriber; its id."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            torn = self.path.is_file() and self.path.stat().st_size > 0 and not self.path.read_bytes().endswith(b"\n")
            self._file = self.path.open("a", encoding="utf-8")
            if torn:
                self._file.write("\n")
        self.last_id += 1
        number = self.last_id
        self._file.write(json.dumps({"id": number, "data": data}, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()
        for channel in list(self._subscribers):
            try:
                channel.send_nowait((number, data))
            except trio.WouldBlock:
                self.dropped += 1
                self._drop(channel)
            except trio.BrokenResourceError:
                self._drop(channel)
        return number

    def _drop(self, channel: trio.MemorySendChannel[Numbered]) -> None:
        self._subscribers.discard(channel)
        channel.close()

    def subscribe(self) -> trio.MemoryReceiveChannel[Numbered] | None:
        """A channel of the live events from now on; ``None`` when the run is not live (its stream is complete)."""
        if not self.live:
            return None
        send, receive = trio.open_memory_channel[Numbered](self.buffer)
        self._subscribers.add(send)
        return receive

    def close(self) -> None:
        """The run is no longer live: every subscriber's channel ends, and the file is closed."""
        self.live = False
        for channel in list(self._subscribers):
            self._drop(channel)
        if self._file is not None:
            self._file.close()
            self._file = None

    def stored(self, after: int = 0) -> list[Numbered]:
        return read_events(self.path, after)


def frame(number: int, data: dict[str, Any]) -> str:
    """One server-sent event: its id, its kind as the event name, the JSON object on one line."""
    kind = " ".join(str(data.get("kind", "message")).splitlines())
    return f"id: {number}\nevent: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


END_FRAME = "event: end\ndata: {}\n\n"


async def sse_frames(log: EventLog, after: int, *, ping_s: float = PING_INTERVAL_S) -> AsyncIterator[str]:
    """Every event with an id above ``after``, then the live ones; ``event: end`` once the run is no longer live.
    A subscriber dropped for falling behind gets no ``end``: the stream just closes and the client reconnects."""
    live = log.subscribe()  # before reading the file, so nothing falls between the two (duplicates are skipped)
    sent = after
    for number, data in log.stored(after):
        yield frame(number, data)
        sent = number
    if live is None:
        yield END_FRAME
        return
    async with live:
        ended = False
        while not ended:
            item: Numbered | None = None
            with trio.move_on_after(ping_s):
                try:
                    item = await live.receive()
                except trio.EndOfChannel:
                    break
            if item is None:
                yield ": ping\n\n"
                continue
            # Whatever else is already waiting goes in the same chunk: one write for a burst of stream deltas.
            chunk: list[str] = []
            while item is not None:
                number, data = item
                if number > sent:
                    chunk.append(frame(number, data))
                    sent = number
                try:
                    item = live.receive_nowait()
                except trio.WouldBlock:
                    item = None
                except trio.EndOfChannel:
                    item, ended = None, True
            if chunk:
                yield "".join(chunk)
    if not log.live:
        # The run ended: anything stored after the last live event we saw (none, normally), then the end.
        for number, data in log.stored(sent):
            yield frame(number, data)
        yield END_FRAME
