"""The Python API: Reasonix from a program, Trio-native, with sync wrappers for scripts and notebooks.

``open_conversation`` / ``ApiConversation`` (an executor conversation, each message a turn, its events streamed),
``run_task`` / ``run_task_sync`` (one task), ``run_goal`` / ``run_goal_sync`` (a goal with a reviewer callback:
``approve``, ``revise``, ``cancel``; ``GoalHandle.pause`` pauses it, ``resume=`` continues it). The events are the
stream-json objects of ``reasonix -p`` (``orchestrator.headless.events``, documented in docs/stream-json.md), so one
definition serves the command line and the API; ``parse_event`` reads a line back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.api.conversation import ApiConversation, open_conversation, run_task, run_task_sync
    from orchestrator.api.goal import GoalHandle, approve, cancel, revise, run_goal, run_goal_sync
    from orchestrator.headless.events import (
        AssistantLine,
        ResultLine,
        StreamEventLine,
        StreamJsonEvent,
        SystemInit,
        SystemNotice,
        UserLine,
        parse_event,
    )
    from orchestrator.review.reviewer import ReviewDecision
    from orchestrator.summary import Summary

__all__ = [
    "ApiConversation",
    "AssistantLine",
    "GoalHandle",
    "ResultLine",
    "ReviewDecision",
    "StreamEventLine",
    "StreamJsonEvent",
    "Summary",
    "SystemInit",
    "SystemNotice",
    "UserLine",
    "approve",
    "cancel",
    "open_conversation",
    "parse_event",
    "revise",
    "run_goal",
    "run_goal_sync",
    "run_task",
    "run_task_sync",
]

_HOME = {
    "ApiConversation": "conversation",
    "open_conversation": "conversation",
    "run_task": "conversation",
    "run_task_sync": "conversation",
    "GoalHandle": "goal",
    "approve": "goal",
    "cancel": "goal",
    "revise": "goal",
    "run_goal": "goal",
    "run_goal_sync": "goal",
}
"""The module that defines each public name, relative to this package (the events and the decision are re-exported
from where they live)."""

_ELSEWHERE = {
    **dict.fromkeys(
        [
            "AssistantLine",
            "ResultLine",
            "StreamEventLine",
            "StreamJsonEvent",
            "SystemInit",
            "SystemNotice",
            "UserLine",
            "parse_event",
        ],
        "orchestrator.headless.events",
    ),
    "ReviewDecision": "orchestrator.review.reviewer",
    "Summary": "orchestrator.summary",
}

if not TYPE_CHECKING:
    _local = lazy_names(__name__, _HOME)

    def __getattr__(name: str) -> object:
        """Import a public name on first use (``import orchestrator.api`` stays cheap)."""
        if name in _ELSEWHERE:
            import importlib
            import sys

            value = getattr(importlib.import_module(_ELSEWHERE[name]), name)
            setattr(sys.modules[__name__], name, value)
            return value
        return _local(name)
