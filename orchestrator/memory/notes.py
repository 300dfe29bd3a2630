"""Writing a note to the project's memory file, and the changes the running session has not been told of yet.

A note is one Markdown list item appended under a ``## Remembered`` heading (added once, at the end of the file), so
the file stays the user's to read and edit. The file is written atomically. :class:`MemoryUpdates` keeps what was
written since the last user message; :meth:`MemoryUpdates.drain` turns it into the ``<memory-update>`` tail block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sessions.prompt import TailBlock
from sessions.tools import ToolError
from sessions.tools.gateway import GatewayRoot

HEADING = "## Remembered"
MEMORY_FILES = ("REASONIX.local.md", "REASONIX.md")
MAX_NOTE_CHARS = 2_000
UPDATE_TAG = "memory-update"
NOTES_FILE_MAX_BYTES = 1024 * 1024
"""A memory file larger than this is not rewritten with a note added (only its first 64 KiB is memory anyway)."""


class MemoryNoteError(ValueError):
    """The note cannot be written: empty, too long, or the file cannot be written (the message says which)."""


def remember_note(workspace: Path, note: str, *, file: str = "REASONIX.local.md") -> str:
    """Append ``note`` to ``workspace/file``; the line written. Raises :class:`MemoryNoteError`."""
    if file not in MEMORY_FILES:
        raise MemoryNoteError(f"memory goes to one of {', '.join(MEMORY_FILES)}, not {file!r}")
    text = " ".join(note.split())
    if not text:
        raise MemoryNoteError("the note is empty; say what to remember")
    if len(text) > MAX_NOTE_CHARS:
        raise MemoryNoteError(f"the note has {len(text)} characters; keep it under {MAX_NOTE_CHARS}")
    root = GatewayRoot(workspace)
    try:
        found = root.read(file, limit=NOTES_FILE_MAX_BYTES + 1) if root.stat(file) is not None else None
        current = "" if found is None else found.data.decode("utf-8")
    except ToolError as exc:
        raise MemoryNoteError(f"cannot read {file}: {exc.message}; fix or remove it") from None
    except UnicodeDecodeError as exc:
        raise MemoryNoteError(f"cannot read {file}: it is not UTF-8 ({exc.reason}); fix or remove it") from None
    if found is not None and found.truncated:
        raise MemoryNoteError(f"{file} is larger than {NOTES_FILE_MAX_BYTES} bytes; trim it before adding notes")
    if current and not current.endswith("\n"):
        current += "\n"
    if HEADING not in current.splitlines():
        current += ("\n" if current else "") + HEADING + "\n\n"
    line = f"- {text}"
    try:
        root.write(file, (current + line + "\n").encode("utf-8"))
    except ToolError as exc:
        raise MemoryNoteError(f"cannot write {file}: {exc.message}") from None
    except OSError as exc:
        raise MemoryNoteError(f"cannot write {file}: {exc.strerror or exc}") from exc
    return line


@dataclass
class MemoryUpdates:
    """Notes written since the session last sent a user message (``/remember``, ``/memory``)."""

    pending: list[tuple[str, str]] = field(default_factory=list)
    """(file, line) in the order written."""

    def add(self, file: str, line: str) -> None:
        self.pending.append((file, line))

    def drain(self) -> list[TailBlock]:
        """The ``<memory-update>`` block for the next user message ([] when nothing changed); empties the queue."""
        if not self.pending:
            return []
        lines = [f"{file}: {line}" for file, line in self.pending]
        self.pending.clear()
        body = "The following project-memory changes were just made (later sessions have them as standing memory):\n"
        return [TailBlock(tag=UPDATE_TAG, body=body + "\n".join(lines))]
