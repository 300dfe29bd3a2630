"""A goal's events in the stream-json envelope (``reasonix goal --output-format stream-json`` and the Python API's
``run_goal``): the goal's own events as ``system`` lines of subtype ``goal_event`` (``data`` is the event as
``reasonix goal --json`` prints it, ``message`` its kind), its sessions' events as the ``stream_event`` /
``assistant`` / ``user`` lines of a conversation (one :class:`~orchestrator.headless.translate.Translator` per
session), and the summary as the ``result`` line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TextIO, get_args

from orchestrator.goal.context import AnyEvent
from orchestrator.headless.events import ResultLine, StreamJsonEvent, SystemNotice, TokenUsage, dump
from orchestrator.headless.translate import Translator
from orchestrator.ui.stream import JsonLinesRenderer
from sessions import SessionEvent
from sessions.wire import Usage

SESSION_EVENTS = get_args(get_args(SessionEvent)[0])
"""Every session event class (the members of the annotated union)."""


class GoalEvents:
    """Turns a goal's events into stream-json lines for ``on_event``."""

    def __init__(self, run_id: str, on_event: Callable[[StreamJsonEvent], None]) -> None:
        self.run_id = run_id
        self.on_event = on_event
        self._sessions: dict[str, Translator] = {}

    def __call__(self, event: AnyEvent) -> None:
        if isinstance(event, SESSION_EVENTS):
            translator = self._sessions.setdefault(event.session, Translator(self.run_id))
            for line in translator(event):
                self.on_event(line)
            return
        data = event.model_dump(mode="json")
        self.notice(data)

    def notice(self, data: Mapping[str, Any]) -> None:
        kind = str(data.get("kind", "goal_event"))
        self.on_event(SystemNotice(session_id=self.run_id, subtype="goal_event", message=kind, data=dict(data)))


def summary_result(run_id: str, summary: Mapping[str, Any]) -> ResultLine:
    """The ``result`` line of a goal's summary (``Summary.model_dump(mode="json")``)."""
    usage = Usage(
        prompt_tokens=summary["prompt_tokens"],
        completion_tokens=summary["completion_tokens"],
        prompt_cache_hit_tokens=summary["prompt_cache_hit_tokens"],
        prompt_cache_miss_tokens=summary["prompt_cache_miss_tokens"],
    )
    status = str(summary["status"])
    return ResultLine(
        session_id=summary.get("run_id") or run_id,
        subtype="success" if summary["ok"] else "error_during_execution",
        is_error=not summary["ok"],
        result=summary.get("text") or summary.get("error") or status,
        status=status,
        duration_ms=0,
        duration_api_ms=0,
        num_turns=summary["requests"],
        total_cost_usd=summary["cost_usd"],
        usage=TokenUsage.of(usage),
        cache_hit_ratio=summary["cache_hit_ratio"],
        model=summary.get("model") or "",
        journal=summary.get("journal") or "",
    )


class GoalStreamJson(JsonLinesRenderer):
    """What ``reasonix goal --output-format stream-json`` writes: every event as a stream-json line, the summary as
    the ``result`` line, any other object (an error) as a ``goal_event`` notice. ``run_id`` is set once the run
    exists."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.run_id = ""
        self._events = GoalEvents("", self._line)

    def _line(self, event: StreamJsonEvent) -> None:
        super().write(dump(event))

    def __call__(self, event: Any) -> None:
        self._events.run_id = self.run_id
        self._events(event)

    def write(self, obj: Mapping[str, Any]) -> None:
        self._events.run_id = self.run_id
        if obj.get("kind") == "summary":
            self._line(summary_result(self.run_id, obj))
        else:
            self._events.notice(json.loads(json.dumps(obj)))
