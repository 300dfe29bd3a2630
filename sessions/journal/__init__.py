"""A session's record on disk: the JSONL journal of exact message bytes (``jsonl``), reading a journal back
to resume a session with the same prefix bytes (``resume``), and the full text of tool results that were cut for the
model, kept once beside the journal (``kept_output``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = importlib.import_module(f"{__name__}.{home}")
        if home != name:
            value = getattr(value, name)
        globals()[name] = value
        return value
