"""One executor session on one task (``reasonix run``): :class:`TaskRun` builds it, runs the turn and sums up what it
cost (:class:`RunSummary`); ``prompts`` holds the constant system prompt of that session (part of its frozen prefix,
docs/DESIGN.md §3.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

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
    __getattr__ = lazy_names(__name__, _HOME)
