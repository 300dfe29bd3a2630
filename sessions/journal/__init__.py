"""A session's record on disk: the JSONL journal of exact message bytes (``jsonl``), reading a journal back
to resume a session with the same prefix bytes (``resume``), and the full text of tool results that were cut for the
model, kept once beside the journal (``kept_output``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.lazy import lazy_names

if TYPE_CHECKING:
    from sessions.journal.jsonl import Journal, read_journal

__all__ = [
    "Journal",
    "read_journal",
]

_HOME = {
    "Journal": "jsonl",
    "read_journal": "jsonl",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
