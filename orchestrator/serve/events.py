"""One run's event log for the API: every object ``reasonix goal --json`` prints, numbered 1, 2, 3 … per run.

Each is appended as ``{"id":N,"data":{...}}`` to ``serve-events.jsonl`` in the run directory, so a client that
reconnects with ``Last-Event-ID`` gets every event after N, even from a restarted service.

Each event is serialised once: :meth:`EventLog.append` turns it into its server-sent-event frame (bytes) and keeps the
frame in the log's memory, and every viewer of the run is sent slices of those same bytes. A viewer is only a
position in the log (the last id it was sent): the goal never waits for one and never sends to one, it appends and
wakes whoever is waiting. A viewer that woke up waits a short window (:data:`COALESCE_S`, longer when many watch the
run) for the events that follow, then takes all it has not had in one write, so a burst of stream deltas costs each
viewer one write instead of one a delta; the window is cut short when the run ends, so the last events and ``end`` go
out at once. A viewer that fell behind (a slow client) just gets a bigger write when it reads again: it is never
dropped and holds up no one.

A finished run's stream is the same frames, read from the file once for all its viewers (parsed again only from
where the file grew, or whole when it was replaced) and sent in batches of up to :data:`BATCH_BYTES`. The frames of
runs no one is streaming stay in memory up to :data:`RESIDENT_BYTES` for them all, the least recently used dropped
first (read again from the file when asked for); a live run's are always kept.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import trio

EVENTS_FILE = "serve-events.jsonl"
PING_INTERVAL_S = 15.0
COALESCE_S = 0.025
"""How long a viewer that woke up for an event waits for the ones after it before it writes them all at once, while
at most :data:`VIEWERS_PER_WINDOW` watch the run; longer in proportion when more do (100 ms for 100)."""
VIEWERS_PER_WINDOW = 25
"""Above this many viewers of one run the window grows with them, so that all of them together make at most about
1,000 writes a second: each write costs the service's one thread about as much whatever it holds."""
BATCH_BYTES = 256 * 1024
"""The most frames' bytes a stream writes at once (a finished run, or a viewer that fell behind)."""
RESIDENT_BYTES = 64 * 1024 * 1024
"""The frames kept in memory for runs that are not live, all runs together (the least recently read dropped first)."""

END_FRAME = b"event: end\ndata: {}\n\n"
PING_FRAME = b": ping\n\n"

Numbered = tuple[int, dict[str, Any]]


def encode(data: dict[str, Any]) -> str:
    """The event as the one line of JSON both the file and the stream carry."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def frame(number: int, data: dict[str, Any], encoded: str | None = None) -> bytes:
    """One server-sent event: its id, its kind as the event name, the JSON object on one line."""
    kind = " ".join(str(data.get("kind", "message")).splitlines())
    return f"id: {number}\nevent: {kind}\ndata: {encoded if encoded is not None else encode(data)}\n\n".encode()


class _Resident:
    """The logs whose frames are in memory and may be dropped (not live), least recently read first."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.logs: OrderedDict[int, tuple[EventLog, int]] = OrderedDict()
        """By ``id(log)``: the log and its frames' size when last counted."""
        self.total = 0

    def touch(self, log: EventLog) -> None:
        _, counted = self.logs.pop(id(log), (log, 0))
        self.logs[id(log)] = (log, len(log._blob))
        self.total += len(log._blob) - counted
        if self.total <= self.budget:
            return
        for key, (held, size) in list(self.logs.items()):
            if self.total <= self.budget:
                break
            if held is not log and not held.live:
                self.total -= size
                held._forget()
                del self.logs[key]


RESIDENT = _Resident(RESIDENT_BYTES)


class EventLog:
    """The numbered events of one run: stored, held as frames, and streamed to its viewers (:func:`sse_frames`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.live = False
        self._file: IO[bytes] | None = None
        self._ids: list[int] = []
        self._ends: list[int] = []
        """Where each frame ends in ``_blob``."""
        self._blob = bytearray()
        self._offset = 0
        """How much of the file the frames hold (whole lines)."""
        self._inode: int | None = None
        self._loaded = False
        self._summary: dict[str, Any] | None = None
        self._more: trio.Event | None = None
        """Set (and replaced) by the next append; made only when a viewer waits."""
        self._ended = trio.Event()
        self._ended.set()
        self.viewers = 0
        """The streams open on this log (:func:`sse_frames`)."""
        self.refresh()
        self.last_id = self._ids[-1] if self._ids else 0

    # -------------------------------------------------------------------------------------------- writing

    def open(self) -> None:
        """The run goes live: events are appended from now on."""
        self.live = True
        self._ended = trio.Event()

    def append(self, data: dict[str, Any]) -> int:
        """Store ``data`` as the next event, keep its frame, wake the viewers waiting for one; its id."""
        if self._file is None:
            self._file = self._open_for_append()
        self.last_id += 1
        number = self.last_id
        encoded = encode(data)
        line = f'{{"id":{number},"data":{encoded}}}\n'.encode()
        before = self._file.tell()
        self._file.write(line)
        self._file.flush()
        if self._loaded and before == self._offset:
            self._keep(number, data, frame(number, data, encoded))
            self._offset = before + len(line)
        if self._more is not None:
            self._more.set()
            self._more = None
        return number

    def _open_for_append(self) -> IO[bytes]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("ab")
        if handle.tell() > 0:
            with self.path.open("rb") as tail:
                tail.seek(-1, os.SEEK_END)
                if tail.read(1) != b"\n":  # a torn last line (a crash mid-write): it stays one bad line, skipped
                    handle.write(b"\n")
                    handle.flush()
        self.refresh()  # the frames now hold the whole file: appends add theirs directly
        return handle

    def close(self) -> None:
        """The run is no longer live: every viewer sends what is left and ``end``; the file is closed."""
        self.live = False
        self._ended.set()
        if self._more is not None:
            self._more.set()
            self._more = None
        if self._file is not None:
            self._file.close()
            self._file = None

    # -------------------------------------------------------------------------------------------- reading

    def refresh(self) -> None:
        """Bring the frames up to the file: parse what it grew by, or all of it when it was replaced or shrank. While
        this log writes the file, its frames are the file's already."""
        if self._file is not None:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._ids:
                self._forget()
            self._loaded = True
            return
        if not self._loaded or st.st_ino != self._inode or st.st_size < self._offset:
            self._forget()
            self._inode = st.st_ino
        self._loaded = True
        if st.st_size > self._offset:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read(st.st_size - self._offset)
            whole = data.rfind(b"\n") + 1  # a line still being written is parsed next time
            for raw in data[:whole].splitlines():
                self._parse(raw)
            self._offset += whole
        if not self.live:
            RESIDENT.touch(self)

    def _parse(self, raw: bytes) -> None:
        try:
            record = json.loads(raw)
            number, data = int(record["id"]), record["data"]
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(data, dict) and (not self._ids or number > self._ids[-1]):
            self._keep(number, data, frame(number, data))

    def _keep(self, number: int, data: dict[str, Any], framed: bytes) -> None:
        self._ids.append(number)
        self._blob += framed
        self._ends.append(len(self._blob))
        if data.get("kind") == "summary":
            self._summary = data

    def _forget(self) -> None:
        self._ids, self._ends, self._blob = [], [], bytearray()
        self._offset, self._loaded, self._summary = 0, False, None

    def frames_after(self, after: int, limit: int = BATCH_BYTES) -> tuple[bytes, int]:
        """The frames of the events with an id above ``after``, whole frames up to about ``limit`` bytes (at least
        one), and the id of the last one (``after`` when there is none)."""
        self.refresh()
        first = bisect_right(self._ids, after)
        if first == len(self._ids):
            return b"", after
        start = self._ends[first - 1] if first else 0
        last = min(max(bisect_left(self._ends, start + limit), first), len(self._ids) - 1)
        with memoryview(self._blob) as view:
            chunk = view[start : self._ends[last]].tobytes()
        return chunk, self._ids[last]

    def last_summary(self) -> dict[str, Any] | None:
        """The run's last ``summary`` event, if it has one."""
        self.refresh()
        return self._summary

    def latest(self) -> int:
        """The id of the last event held (0: none)."""
        return self._ids[-1] if self._ids else 0

    async def wait_after(self, after: int) -> None:
        """Until there is an event above ``after`` or the run is no longer live (the caller bounds the wait)."""
        if self.latest() > after or not self.live:
            return
        if self._more is None:
            self._more = trio.Event()
        await self._more.wait()

    async def ended(self) -> None:
        """Until the run is no longer live (the caller bounds the wait)."""
        await self._ended.wait()


async def sse_frames(
    log: EventLog,
    after: int,
    *,
    ping_s: float = PING_INTERVAL_S,
    coalesce_s: float = COALESCE_S,
    batch_bytes: int = BATCH_BYTES,
) -> AsyncIterator[bytes]:
    """Every event with an id above ``after`` (stored, then live as they come), each batch in one chunk; ``end`` once
    the run is no longer live and all its events were sent; ``: ping`` after ``ping_s`` without an event."""
    sent = after
    log.viewers += 1
    try:
        while True:
            live = log.live  # before taking the frames: once it is false, the frames taken after it are all there are
            chunk, sent = log.frames_after(sent, batch_bytes)
            if chunk:
                yield chunk
                if len(chunk) >= batch_bytes or not live:
                    continue  # a backlog (a finished run, a late or slow viewer): the rest at once
            elif not live:
                yield END_FRAME
                return
            woke = False
            with trio.move_on_after(ping_s):
                await log.wait_after(sent)
                woke = True
            if not woke:
                yield PING_FRAME
                continue
            window = coalesce_s * max(1.0, log.viewers / VIEWERS_PER_WINDOW)
            with trio.move_on_after(window):  # the events that follow go in the same write; the run's end cuts it short
                await log.ended()
    finally:
        log.viewers -= 1
