"""``@path`` mentions: the current text of each mentioned file, appended after the user's message (never inserted
earlier in the conversation, which would break the cache)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sessions.tools import ToolError, WorkspaceEscapeError
from sessions.tools.gateway import GatewayRoot

MAX_CHARS = 100_000
MAX_READ_BYTES = 4 * MAX_CHARS
"""Read at most this much of a mentioned file (through the gateway: a link out, a FIFO or a device is no file)."""
"""A mentioned file's text is cut after this many characters, and says so."""
_MENTION = re.compile(r"(?<!\S)@([^\s@]+)")


@dataclass
class Attached:
    text: str
    """The message with the files appended."""
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Mentions that could not be attached, with why."""


def mentioned(text: str) -> list[str]:
    """The paths mentioned with ``@``, in order, each once."""
    seen: list[str] = []
    for match in _MENTION.finditer(text):
        path = match.group(1).rstrip(".,;:!?)")
        if path and path not in seen:
            seen.append(path)
    return seen


def attach(text: str, workspace: Path) -> Attached:
    """``text`` with the current text of every ``@path`` inside ``workspace`` appended as ``<file>`` blocks."""
    out = Attached(text=text)
    blocks: list[str] = []
    root = GatewayRoot(workspace)
    for name in mentioned(text):
        try:
            found = root.read(name, limit=MAX_READ_BYTES)
        except WorkspaceEscapeError:
            out.problems.append(f"@{name}: outside the workspace, not attached")
            continue
        except ToolError:
            out.problems.append(f"@{name}: no such file, not attached")
            continue
        try:
            body = found.data.decode("utf-8")
        except UnicodeDecodeError:
            if not found.truncated:
                out.problems.append(f"@{name}: not UTF-8 text, not attached")
                continue
            body = found.data.decode("utf-8", errors="ignore")  # cut inside a character
        if len(body) > MAX_CHARS or found.truncated:
            body = body[:MAX_CHARS] + f"\n[cut: the file has {found.size} bytes; read_file reads the rest]"
        rel = root.locate(name).real
        blocks.append(f'<file path="{rel}">\n{body.rstrip()}\n</file>')
        out.files.append(rel)
    if blocks:
        out.text = "\n\n".join([text, *blocks])
    return out
