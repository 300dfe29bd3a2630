"""An incremental parser for the server-sent events DeepSeek streams.

DeepSeek (like every OpenAI-compatible server) sends one JSON object per ``data:`` line, a blank line after each,
``: keep-alive`` comment lines while a request waits in the queue, and ``data: [DONE]`` at the end. This parser is
made for that wire: each ``data:`` line is one payload, delivered as soon as its line is complete (a JSON chunk never
spans lines). Blank lines, ``event:``/``id:``/``retry:`` fields and lines that are not SSE at all (the V3.2 sample's
``......``) are skipped; comments are reported separately so a caller can tell a keep-alive from data.

Lines may end in ``\\n``, ``\\r\\n`` or ``\\r``, and bytes may be fed split anywhere, even inside a UTF-8 character.
An unterminated last line is dropped at :meth:`SseParser.close`: a stream cut mid-line is a broken stream, not data.

A body that is not SSE at all (an HTML page from a wrong ``base_url`` or a captive portal) shows in its first line:
:attr:`SseParser.foreign` keeps the first line before any data or comment that is no SSE field at all, so the client
can say what it got instead of waiting for a reply that never comes. ``max_line_bytes`` bounds one line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from sessions.wire.errors import ProtocolError


@dataclass(frozen=True, slots=True)
class SseData:
    """The payload of one ``data:`` line (a JSON chunk)."""

    payload: str


@dataclass(frozen=True, slots=True)
class SseComment:
    """A comment line (``: keep-alive``), text after the colon without the leading space."""

    text: str


@dataclass(frozen=True, slots=True)
class SseDone:
    """``data: [DONE]``: the server finished the stream."""


SseItem = SseData | SseComment | SseDone

DONE: Final = SseDone()
_DONE_PAYLOAD: Final = "[DONE]"
_FIELDS: Final = ("event:", "id:", "retry:")
"""SSE fields we have no use for but that are SSE all the same (``data:`` and comments are parsed)."""
_FOREIGN_PREVIEW = 2000


def parse_line(line: str) -> SseItem | None:
    """One line without its terminator → an item, or None for lines that carry nothing for us."""
    if line.startswith("data:"):
        payload = line[6:] if line.startswith("data: ") else line[5:]
        if payload == _DONE_PAYLOAD:
            return DONE
        return SseData(payload)
    if line.startswith(":"):
        text = line[1:]
        return SseComment(text[1:] if text.startswith(" ") else text)
    return None


class SseParser:
    """Feed bytes as they arrive; get back the items of every line completed so far."""

    __slots__ = ("_buffer", "_max_line_bytes", "_pending_cr", "_seen_item", "foreign", "lines_skipped")

    def __init__(self, *, max_line_bytes: int | None = None) -> None:
        self._buffer = b""
        self._pending_cr = False
        self._max_line_bytes = max_line_bytes
        self._seen_item = False
        self.lines_skipped = 0
        """Non-blank lines that were neither data nor comment (``event:``, ``id:``, junk like ``......``)."""
        self.foreign: str | None = None
        """The first line, before any data or comment, that is not SSE at all (``<!DOCTYPE html>``): the body is
        something else. Junk after data (the V3.2 sample's ``......``) does not count."""

    def feed(self, data: bytes) -> list[SseItem]:
        if not data:
            return []
        if self._pending_cr:
            # A ``\r`` ended the previous feed: it was a line end; drop a ``\n`` that completes ``\r\n``.
            self._pending_cr = False
            if data.startswith(b"\n"):
                data = data[1:]
        if b"\r" in data:
            if data.endswith(b"\r"):
                self._pending_cr = True
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer + data if self._buffer else data
        *lines, self._buffer = buffer.split(b"\n")
        if self._max_line_bytes is not None and len(self._buffer) > self._max_line_bytes:
            raise ProtocolError(
                f"the server sent a line of more than {self._max_line_bytes:,} bytes without ending it; "
                f"that is not a stream of reply chunks, and it was abandoned"
            )
        return self._parse(lines)

    def feed_lines(self, lines: Iterable[str]) -> list[SseItem]:
        """Feed already-split text lines (terminators stripped or not)."""
        out: list[SseItem] = []
        for line in lines:
            text = line.rstrip("\r\n")
            item = parse_line(text)
            if item is not None:
                self._seen_item = True
                out.append(item)
            elif text.strip():
                self._skipped(text)
        return out

    def unfinished_foreign(self) -> str | None:
        """At the end of the body: the unterminated last line, when nothing SSE came before it and it is no SSE line
        either (a page without a final newline, a bare ``Not Found``). None otherwise."""
        if self._seen_item or not self._buffer.strip():
            return None
        text = self._buffer[:_FOREIGN_PREVIEW].decode("utf-8", "replace")
        return None if parse_line(text) is not None or text.startswith(_FIELDS) else text

    def close(self) -> list[SseItem]:
        """End of stream. An unterminated last line is dropped (a cut mid-line is not data)."""
        self._buffer = b""
        self._pending_cr = False
        return []

    @property
    def has_partial_line(self) -> bool:
        return bool(self._buffer)

    def _parse(self, lines: list[bytes]) -> list[SseItem]:
        out: list[SseItem] = []
        for raw in lines:
            if not raw:
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProtocolError(
                    f"the server sent a line that is not UTF-8 ({exc}); the stream cannot be read"
                ) from exc
            item = parse_line(text)
            if item is None:
                self._skipped(text)
            else:
                self._seen_item = True
                out.append(item)
        return out

    def _skipped(self, text: str) -> None:
        self.lines_skipped += 1
        if not self._seen_item and self.foreign is None and not text.startswith(_FIELDS):
            self.foreign = text[:_FOREIGN_PREVIEW]


def parse_sse(data: bytes) -> list[SseItem]:
    """Every item of a complete SSE body (e.g. a recorded ``.sse`` file)."""
    parser = SseParser()
    items = parser.feed(data)
    if parser.has_partial_line:
        # A recorded file may lack the final newline: treat the end of the file as the end of the line.
        items.extend(parser.feed(b"\n"))
    return items
