"""Memory the agent keeps: notes written to the project's memory file (``REASONIX.local.md`` by default, or
``REASONIX.md``) by the ``remember`` tool (with ``[memory] remember = true``) or by ``/remember TEXT``. A note reaches
the running session in a ``<memory-update>`` block in front of the next user message (or as the tool's result), and
every later session in its frozen prefix, as standing memory. The prefix of the running session never moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.memory.notes import MemoryUpdates, remember_note
    from orchestrator.memory.tool import RememberTool, with_memory_tools

__all__ = ["MemoryUpdates", "RememberTool", "remember_note", "with_memory_tools"]

_HOME = {"MemoryUpdates": "notes", "remember_note": "notes", "RememberTool": "tool", "with_memory_tools": "tool"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
