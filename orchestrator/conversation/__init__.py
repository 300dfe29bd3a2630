"""The executor conversation (``reasonix run``, ``code``, ``chat``, ``-p``, the Python API, ACP): one session fed
one user turn at a time, with everything around it (hooks, MCP servers, subagents under its budget, jobs, turn
checkpoints, the turn log, the run's events). :func:`orchestrator.launch.open_conversation` is the one place that
opens it; :mod:`~orchestrator.conversation.engine` is the conversation, :mod:`~orchestrator.conversation.limits` the
limits a front end may put on it, :mod:`~orchestrator.conversation.turn_log` its turns and
:mod:`~orchestrator.conversation.chat` the tool-less session of ``reasonix chat``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.conversation.engine import (
        ExecutorConversation,
        conversation_journal,
        last_conversation,
        run_task,
        task_summary,
    )

__all__ = ["ExecutorConversation", "conversation_journal", "last_conversation", "run_task", "task_summary"]

_HOME = {
    "ExecutorConversation": "engine",
    "conversation_journal": "engine",
    "last_conversation": "engine",
    "run_task": "engine",
    "task_summary": "engine",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
