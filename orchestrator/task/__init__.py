"""One executor session on one task (``reasonix run``): :class:`TaskRun` builds it, runs the turn and sums up what it
cost (:class:`TaskSummary`). Its constant system prompt (part of its frozen prefix, docs/DESIGN.md §3.1) is
:mod:`orchestrator.executor_prompt`, which every standalone executor session shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.task.run import TaskRun, TaskSummary

__all__ = ["TaskRun", "TaskSummary"]

_HOME = {
    "TaskRun": "run",
    "TaskSummary": "run",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
