"""``read_file``: a text file, or a range of its lines, with line numbers; bounded, saying how to read on.

Only regular files are read (a FIFO would block), and only as far as the lines returned: a huge file costs memory for
the window, not for the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import trio
from pydantic import Field, model_validator

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolLimits, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.files.outline import outline_text
from sessions.tools.files.textfile import BINARY_SNIFF_BYTES, is_binary, sha256_hex, shown
from sessions.tools.gateway.names import KEPT_OUTPUTS
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.read_memory import FileView


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File path relative to the workspace root.")
    start_line: int | None = Field(None, ge=1, description="First line to read (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line to read, inclusive.")
    full: bool = False
    outline: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> ReadFileArgs:
        if self.start_line is not None and self.end_line is not None and self.end_line < self.start_line:
            raise ValueError("end_line must not be smaller than start_line")
        return self


COUNT_MAX_BYTES = 32 * 1024 * 1024
"""Past the lines returned, the rest of a file is read to count its lines only when it is at most this big."""
SKIP_CHUNK = 1024 * 1024
TRACK_MAX_BYTES = 2 * 1024 * 1024
"""A file up to this size is remembered by the session, so a re-read can send only what is new (DESIGN §5)."""
OUTLINE_MAX_BYTES = 4 * 1024 * 1024
"""A file larger than this gets no outline (it is never read whole)."""
KEPT_PREFIX = f"{KEPT_OUTPUTS}/"


def _lines(fh: BinaryIO, max_bytes: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, raw)`` per line: at most ``max_bytes`` of each line are kept; the rest of a longer line is skipped
    in chunks, and only when the next line is asked for."""
    while True:
        offset = fh.tell()
        raw = fh.readline(max_bytes)
        if not raw:
            return
        yield offset, raw
        if len(raw) == max_bytes and not raw.endswith(b"\n"):
            while (more := fh.readline(SKIP_CHUNK)) and not more.endswith(b"\n"):
                pass


def _count_from(fh: BinaryIO, offset: int, size: int) -> int | None:
    """Lines from ``offset`` to the end, or None when that part is too big to count."""
    if size - offset > COUNT_MAX_BYTES:
        return None
    fh.seek(offset)
    count, last = 0, b"\n"
    while chunk := fh.read(SKIP_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def display_line(raw: bytes, limits: ToolLimits) -> str:
    """One line as read_file shows it after its number: decoded, cut at ``line_max_chars`` characters."""
    line = raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", errors="surrogateescape")
    if len(line) > limits.line_max_chars:
        line = line[: limits.line_max_chars] + f"… [line cut at {limits.line_max_chars} characters]"
    return shown(line)


@dataclass(frozen=True, slots=True)
class Window:
    """A read's lines ``first``..``first + len(entries) - 1`` and its closing line, if any."""

    entries: list[str]
    first: int
    trailer: str | None = None

    @property
    def text(self) -> str:
        return "\n".join([*self.entries, *([self.trailer] if self.trailer else [])])


def render(fh: BinaryIO, rel: str, start: int | None, end: int | None, limits: ToolLimits) -> str:
    """Numbered lines ``N<TAB>text``, cut at ``limits.read_max_lines`` lines or ``read_max_chars`` characters."""
    return window(fh, rel, start, end, limits).text


def window(fh: BinaryIO, rel: str, start: int | None, end: int | None, limits: ToolLimits) -> Window:
    """:func:`render`'s lines and closing line. The file is streamed: only the lines returned are kept, each line at
    most ``line_max_chars`` characters."""
    size = os.fstat(fh.fileno()).st_size
    if is_binary(fh.read(BINARY_SNIFF_BYTES)):
        raise ToolInputError(f"{rel!r} looks like a binary file; only text files can be read or edited")
    fh.seek(0)
    first = start or 1
    out: list[str] = []
    chars = 0
    number = 0
    stop: int | None = None  # offset of the first line not returned, if the read stopped before the end
    cut = False
    for offset, raw in _lines(fh, 4 * limits.line_max_chars + 4):
        number += 1
        if number < first:
            continue
        if end is not None and number > end:
            stop = offset
            break
        entry = f"{number}\t{display_line(raw, limits)}"
        if out and (len(out) >= limits.read_max_lines or chars + len(entry) + 1 > limits.read_max_chars):
            stop, cut = offset, True
            break
        out.append(entry)
        chars += len(entry) + 1
    else:
        number += 1  # the loop ran to the end of the file: ``number - 1`` lines in all
    seen = number - 1
    total = seen if stop is None else _count_from(fh, stop, size)
    if stop is not None and total is not None:
        total += seen
    if stop is None and seen == 0:
        return Window([], 1, f"({rel} is empty)")
    if first > seen and stop is None:
        raise ToolInputError(f"start_line={first} is past the end of {rel!r}, which has {seen} lines")
    of = f"of {total}" if total is not None else f"of a file of {size} bytes, too large to count its lines"
    if cut:
        return Window(
            out, first, f"… truncated at line {seen} {of}; call read_file with start_line={seen + 1} to read more"
        )
    if first > 1 or stop is not None:
        return Window(out, first, f"(lines {first}-{seen} {of})")
    return Window(out, first)


class ReadFileTool(Tool[ReadFileArgs]):
    name = "read_file"
    description = (
        "Read a text file. Each line is prefixed with its number and a tab (not part of the file). "
        "At most 400 lines per call; use start_line/end_line for other parts. A re-read shows only what is new "
        "unless full=true. For a long source file, outline=true first lists its functions and classes with line "
        "ranges."
    )
    args_model = ReadFileArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        def work() -> ToolResult:
            fh, rel = open_for_read(ctx, args.path)
            with fh:
                if args.outline:
                    return ToolResult(content=outline_of(fh, rel))
                shown_window = window(fh, rel, args.start_line, args.end_line, ctx.limits)
                view = _view(fh, rel, shown_window, args, ctx.limits)
            key = None if args.full else _range_key(args)
            return ToolResult(content=shown_window.text, unchanged_key=key, view=view)

        return await trio.to_thread.run_sync(work, abandon_on_cancel=True)


def _view(fh: BinaryIO, rel: str, shown_window: Window, args: ReadFileArgs, limits: ToolLimits) -> FileView | None:
    """What the session remembers of this read (None for a file past :data:`TRACK_MAX_BYTES` or an empty one)."""
    if not shown_window.entries or os.fstat(fh.fileno()).st_size > TRACK_MAX_BYTES:
        return None
    fh.seek(0)
    data = fh.read()
    raws = data.split(b"\n")
    if raws[-1] == b"":
        raws.pop()
    lines = tuple(display_line(raw, limits) for raw in raws)
    first = shown_window.first
    return FileView(
        path=rel,
        sha256=sha256_hex(data),
        lines=lines,
        first=first,
        last=first + len(shown_window.entries) - 1,
        trailer=shown_window.trailer,
        full=args.full,
    )


def open_for_read(ctx: ToolContext, raw: str) -> tuple[BinaryIO, str]:
    """The regular file ``raw`` names, opened through the gateway, and the path to show: ``~outputs/NAME`` is a
    command's full output the session kept (its folder beside the journal, a root of its own), anything else a path
    in the workspace."""
    if not raw.startswith(KEPT_PREFIX):
        return GatewayRoot(ctx.root).open_file(raw)
    name = raw[len(KEPT_PREFIX) :]
    if ctx.outputs is None or not name or "/" in name or name in (".", ".."):
        raise ToolInputError(
            f"no kept output {raw!r} in this session; give the name exactly as a result showed it, "
            f"e.g. {KEPT_PREFIX}0003-call_1.txt"
        )
    kept = GatewayRoot(ctx.outputs, refused=frozenset(), what="the kept outputs")
    try:
        handle, _ = kept.open_file(name)
    except ToolInputError:
        raise ToolInputError(f"no kept output {raw!r} in this session; it may have been cleaned up") from None
    return handle, raw


def outline_of(fh: BinaryIO, rel: str) -> str:
    """The outline of an open file, or why there is none: a file past :data:`OUTLINE_MAX_BYTES` is not read."""
    size = os.fstat(fh.fileno()).st_size
    if size > OUTLINE_MAX_BYTES:
        return (
            f"No outline: {rel} has {size} bytes, more than the {OUTLINE_MAX_BYTES} an outline reads. "
            "Read it with start_line/end_line, or grep for 'def |class '."
        )
    return outline_text(fh.read(OUTLINE_MAX_BYTES + 1)[:OUTLINE_MAX_BYTES], rel)


def _range_key(args: ReadFileArgs) -> str:
    """The file and range a read shows, for :attr:`ToolResult.unchanged_key`: the path as the model wrote it,
    normalized (``./a.py`` and ``a.py`` are one file), and the requested lines."""
    path = os.path.normpath(args.path)
    if args.start_line is None and args.end_line is None:
        return path
    return f"{path} lines {args.start_line or 1}-{args.end_line if args.end_line is not None else 'end'}"
