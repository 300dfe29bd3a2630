"""Writing a note to the project's memory file, and the changes the running session has not been told of yet.

A note is one Markdown list item appended under a ``## Remembered`` heading (added once, at the end of the file), so
the file stays the user's to read and edit. The file is written atomically. :class:`MemoryUpdates` keeps what was
written since the last user message; :meth:`MemoryUpdates.drain` turns it into the ``<memory-update>`` tail block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from plans import write_atomic
from sessions.prompt import TailBlock

HEADING = "## Remembered"
MEMORY_FILES = ("REASONIX.local.md", "REASONIX.md")
MAX_NOTE_CHARS = 2_000
UPDATE_TAG = "memory-update"


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
    path = workspace / file
    try:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryNoteError(f"cannot read {file}: {exc}; fix or remove it") from exc
    if current and not current.endswith("\n"):
        current += "\n"
    if HEADING not in current.splitlines():
        current += ("\n" if current else "") + HEADING + "\n\n"
    line = f"- {text}"
    try:
        write_atomic(path, current + line + "\n")
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
