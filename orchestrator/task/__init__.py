"""One executor session on one task (``reasonix run``): :class:`TaskRun` builds it, runs the turn and sums up what it
cost (:class:`RunSummary`); ``prompts`` holds the constant system prompt of that session (part of its frozen prefix,
docs/DESIGN.md §3.1).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.task.run import RunSummary, TaskRun

__all__ = [
    "RunSummary",
    "TaskRun",
]

_HOME = {
    "RunSummary": "run",
    "TaskRun": "run",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value
