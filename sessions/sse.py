"""An incremental parser for the server-sent events DeepSeek streams.

DeepSeek (like every OpenAI-compatible server) sends one JSON object per ``data:`` line, a blank line after each,
``: keep-alive`` comment lines while a request waits in the queue, and ``data: [DONE]`` at the end. This parser is
made for that wire: each ``data:`` line is one payload, delivered as soon as its line is complete (a JSON chunk never
spans lines). Blank lines, ``event:``/``id:``/``retry:`` fields and lines that are not SSE at all (the V3.2 sample's
``......``) are skipped; comments are reported separately so a caller can tell a keep-alive from data.

Lines may end in ``\\n``, ``\\r\\n`` or ``\\r``, and bytes may be fed split anywhere, even inside a UTF-8 character.
An unterminated last line is dropped at :meth:`SseParser.close`: a stream cut mid-line is a broken stream, not data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from sessions.errors import ProtocolError


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

    __slots__ = ("_buffer", "_pending_cr", "lines_skipped")

    def __init__(self) -> None:
        self._buffer = b""
        self._pending_cr = False
        self.lines_skipped = 0
        """Non-blank lines that were neither data nor comment (``event:``, ``id:``, junk like ``......``)."""

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
        return self._parse(lines)

    def feed_lines(self, lines: Iterable[str]) -> list[SseItem]:
        """Feed already-split text lines (terminators stripped or not)."""
        out: list[SseItem] = []
        for line in lines:
            item = parse_line(line.rstrip("\r\n"))
            if item is not None:
                out.append(item)
            elif line.strip():
                self.lines_skipped += 1
        return out

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
                self.lines_skipped += 1
            else:
                out.append(item)
        return out


def parse_sse(data: bytes) -> list[SseItem]:
    """Every item of a complete SSE body (e.g. a recorded ``.sse`` file)."""
    parser = SseParser()
    items = parser.feed(data)
    if parser.has_partial_line:
        # A recorded file may lack the final newline: treat the end of the file as the end of the line.
        items.extend(parser.feed(b"\n"))
    return items
