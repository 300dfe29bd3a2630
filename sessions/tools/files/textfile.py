"""Reading workspace files as text, shared by the file tools.

Text is decoded as UTF-8 with ``surrogateescape`` so that undecodable bytes survive a read-edit-write round trip.
A file with a NUL byte in its first 8 KiB is treated as binary and refused. Only regular files are opened: a FIFO, a
socket or a device is refused before anything waits on it (opening a FIFO for reading blocks until a writer comes):
the gateway (``sessions.tools.gateway``) opens them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.gateway.root import GatewayRoot

if TYPE_CHECKING:
    from sessions.tools.base import ToolContext

BINARY_SNIFF_BYTES = 8192


def written_path(ctx: ToolContext, raw: str) -> tuple[str, ...] | None:
    """Where a file tool's write of ``raw`` lands, relative to the root (through the symlinks on the way, as the
    gateway writes); None when the gateway cannot tell (the write will be refused, or the path changes meanwhile)."""
    try:
        return (GatewayRoot(ctx.root).locate(raw).real,)
    except (ToolError, OSError):
        return None


def is_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def read_text(root: GatewayRoot, raw: str) -> tuple[str, str]:
    """A workspace text file through the gateway (regular files only, never blocking on a FIFO) and its path as
    written; a binary file is refused."""
    handle, rel = root.open_file(raw)
    with handle:
        data = handle.read()
    if is_binary(data):
        raise ToolInputError(f"{rel!r} looks like a binary file; only text files can be read or edited")
    return data.decode("utf-8", errors="surrogateescape"), rel


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
