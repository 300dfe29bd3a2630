"""Reading workspace files as text, shared by the file tools.

Text is decoded as UTF-8 with ``surrogateescape`` so that undecodable bytes survive a read-edit-write round trip.
A file with a NUL byte in its first 8 KiB is treated as binary and refused.
"""

from __future__ import annotations

from pathlib import Path

from sessions.tools.errors import ToolInputError
from sessions.tools.paths import WorkspacePath

BINARY_SNIFF_BYTES = 8192


def is_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def require_file(target: WorkspacePath) -> Path:
    path = target.path
    if not path.exists():
        raise ToolInputError(f"not found: {target.rel!r}; use list_dir or glob to find the right path")
    if path.is_dir():
        raise ToolInputError(f"{target.rel!r} is a directory, not a file; use list_dir to see what it holds")
    return path


def read_text(target: WorkspacePath) -> str:
    data = require_file(target).read_bytes()
    if is_binary(data):
        raise ToolInputError(f"{target.rel!r} looks like a binary file; only text files can be read or edited")
    return data.decode("utf-8", errors="surrogateescape")


def encode_text(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


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
