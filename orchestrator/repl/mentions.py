"""``@path`` mentions: the current text of each mentioned file, appended after the user's message (never inserted
earlier in the conversation, which would break the cache)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_CHARS = 100_000
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
    root = workspace.resolve()
    for name in mentioned(text):
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            out.problems.append(f"@{name}: outside the workspace, not attached")
            continue
        if not path.is_file():
            out.problems.append(f"@{name}: no such file, not attached")
            continue
        try:
            body = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
            out.problems.append(f"@{name}: {reason}, not attached")
            continue
        if len(body) > MAX_CHARS:
            body = body[:MAX_CHARS] + f"\n[cut: the file has {len(body)} characters; read_file reads the rest]"
        rel = path.relative_to(root).as_posix()
        blocks.append(f'<file path="{rel}">\n{body.rstrip()}\n</file>')
        out.files.append(rel)
    if blocks:
        out.text = "\n\n".join([text, *blocks])
    return out
