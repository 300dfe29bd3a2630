"""Bounded capture of a stream: the first ``head`` bytes and the last ``tail`` bytes, with a count of what was cut.

Memory stays bounded however much a process prints. The rendered text snaps the cut to line boundaries when that
keeps most of each side, and the marker says how many bytes and lines were left out, so the form is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


@dataclass
class HeadTail:
    head_cap: int
    tail_cap: int
    full_cap: int = 0
    """Keep the whole stream too while it stays under this many bytes (0: never), for ``full_text``."""
    total: int = 0
    _head: bytearray = field(default_factory=bytearray)
    _tail: bytearray = field(default_factory=bytearray)
    _full: bytearray | None = field(default_factory=bytearray)
    _cut_lines: int = 0

    def feed(self, chunk: bytes | bytearray) -> None:
        self.total += len(chunk)
        if self._full is not None:
            if len(self._full) + len(chunk) <= self.full_cap:
                self._full += chunk
            else:
                self._full = None
        room = self.head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail += chunk
        overflow = len(self._tail) - self.tail_cap
        if overflow > 0:
            self._cut_lines += self._tail.count(b"\n", 0, overflow)
            del self._tail[:overflow]

    def reset(self) -> None:
        """Forget what was fed (a sandbox that never started the command printed only its own error)."""
        self.total, self._cut_lines = 0, 0
        self._head, self._tail, self._full = bytearray(), bytearray(), bytearray()

    @property
    def bounded(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def full_text(self) -> str | None:
        """The whole stream, if it was kept."""
        return _decode(self._full) if self._full is not None else None

    def text(self) -> str:
        if not self.bounded:
            return _decode(self._head + self._tail)
        head, tail = bytes(self._head), bytes(self._tail)
        cut_lines = self._cut_lines
        newline = head.rfind(b"\n")
        if newline >= len(head) // 2:
            head = head[: newline + 1]
        newline = tail.find(b"\n")
        if 0 <= newline < len(tail) // 2:
            cut_lines += 1
            tail = tail[newline + 1 :]
        cut = self.total - len(head) - len(tail)
        head_text = _decode(head)
        sep = "" if head_text.endswith("\n") or not head_text else "\n"
        return f"{head_text}{sep}[… {cut} bytes ({cut_lines} lines) cut …]\n{_decode(tail)}"
