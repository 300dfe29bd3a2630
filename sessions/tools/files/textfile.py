"""Reading workspace files as text, shared by the file tools.

Text is decoded as UTF-8 with ``surrogateescape`` so that undecodable bytes survive a read-edit-write round trip.
A file with a NUL byte in its first 8 KiB is treated as binary and refused. Only regular files are opened: a FIFO, a
socket or a device is refused before anything waits on it (opening a FIFO for reading blocks until a writer comes).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO

from sessions.tools.errors import ToolInputError
from sessions.tools.paths import WorkspacePath

BINARY_SNIFF_BYTES = 8192


def is_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_regular(target: WorkspacePath, mode: int) -> None:
    """Refuse anything but a regular file, saying what it is."""
    if stat.S_ISDIR(mode):
        raise ToolInputError(f"{target.rel!r} is a directory, not a file; use list_dir to see what it holds")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise ToolInputError(f"{target.rel!r} is {kind}, not a regular file; only regular files can be read or edited")


def require_file(target: WorkspacePath) -> Path:
    path = target.path
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ToolInputError(f"not found: {target.rel!r}; use list_dir or glob to find the right path") from None
    check_regular(target, mode)
    return path


def open_regular(target: WorkspacePath) -> BinaryIO:
    """Open a regular file for reading without ever blocking on a FIFO: non-blocking open, then ``fstat`` the handle
    (so the file checked is the file read)."""
    require_file(target)
    fd = os.open(target.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        check_regular(target, os.fstat(fd).st_mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(target: WorkspacePath) -> str:
    with open_regular(target) as fh:
        data = fh.read()
    if is_binary(data):
        raise ToolInputError(f"{target.rel!r} looks like a binary file; only text files can be read or edited")
    return data.decode("utf-8", errors="surrogateescape")


def encode_text(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shown(text: str) -> str:
    """Text as it may go to the model: undecodable bytes become U+FFFD (surrogates cannot be encoded on the wire)."""
    return encode_text(text).decode("utf-8", errors="replace")


def split_lines(text: str) -> list[str]:
    """Lines as git and ripgrep count them: split on ``\\n`` only, a final newline ends the last line, ``\\r`` of CRLF
    dropped."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
