"""read_file on what is not a plain text file of modest size (issue 11 item 11): FIFOs, devices, huge files."""

from __future__ import annotations

import os
import socket
import tracemalloc
from pathlib import Path

import trio

from sessions.tools import ToolContext, ToolRegistry
from tests.support.tools import call

TWO_GB = 2 * 1024**3


async def test_a_fifo_is_refused_at_once_not_waited_on(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    os.mkfifo(ws / "pipe")
    with trio.move_on_after(30) as waited:  # a guard against the old hang, not a timing assertion
        read = await call(registry, ctx, "read_file", path="pipe")
        edit = await call(registry, ctx, "edit_file", path="pipe", edits=[{"old": "a", "new": "b"}])
        grep = await call(registry, ctx, "grep", pattern="a", path="pipe")
    assert not waited.cancelled_caught
    assert (
        read.is_error
        and read.content
        == "'pipe' is a named pipe (FIFO), not a regular file; only regular files can be read or edited"
    )
    assert edit.is_error and "not a regular file" in edit.content
    assert grep.is_error and "not a regular file" in grep.content


async def test_a_socket_is_refused(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(ws / "sock"))
        result = await call(registry, ctx, "read_file", path="sock")
    assert (
        result.is_error
        and result.content == "'sock' is a socket, not a regular file; only regular files can be read or edited"
    )


async def test_reading_one_line_of_a_2_gb_file_reads_only_that_line(
    ws: Path, ctx: ToolContext, registry: ToolRegistry
) -> None:
    big = ws / "big.log"
    with big.open("wb") as fh:
        fh.write(b"".join(b"entry %d\n" % n for n in range(1, 5001)))
        fh.truncate(TWO_GB)  # sparse: the rest reads as NUL bytes, one 2 GB line
    tracemalloc.start()
    try:
        first = await call(registry, ctx, "read_file", path="big.log", end_line=1)
        window = await call(registry, ctx, "read_file", path="big.log", start_line=4999)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * 1024**2, f"peak {peak / 1024**2:.0f} MiB"
    assert first.content == "1\tentry 1\n(lines 1-1 of a file of 2147483648 bytes, too large to count its lines)"
    lines = window.content.split("\n")
    assert lines[:2] == ["4999\tentry 4999", "5000\tentry 5000"]
    assert lines[2].startswith("5001\t\x00") and lines[2].endswith("… [line cut at 2000 characters]")
    assert lines[3] == "(lines 4999-5001 of 5001)"
