"""From a session's events to stream-json lines (:mod:`orchestrator.headless.events`).

:class:`Translator` is fed every :class:`~sessions.events.SessionEvent` of a session, in order, and returns the lines
they make: each text or reasoning delta at once (``stream_event``), the whole reply of a request once its usage is in
(``assistant``, its tool calls as ``tool_use`` blocks), each tool's result (``user``/``tool_result``), and a
``system`` notice for a compaction, a repair, a restarted stream or a recovered journal. It reads, never changes,
what the session sends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from orchestrator.headless.events import (
    AssistantLine,
    AssistantLineMessage,
    ContentBlockDelta,
    StreamEventLine,
    StreamJsonEvent,
    SystemNotice,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    TokenUsage,
    ToolResultBlock,
    ToolUseBlock,
    UserLine,
    UserLineMessage,
    signature_of,
)
from sessions import (
    Compacted,
    JournalRecovered,
    RepairApplied,
    SessionEvent,
    StreamUpdate,
    ToolFinished,
    UsageReported,
)
from sessions.wire import (
    ContentDelta,
    ReasoningDelta,
    StreamRestarted,
    ToolCallArgumentsDelta,
    ToolCallStarted,
)


@dataclass
class _Reply:
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: dict[int, tuple[str, str, list[str]]] = field(default_factory=dict)
    """index → (id, name, argument fragments)."""
    last: str = ""
    """The kind of the last piece streamed (``thinking`` or ``text``): a change starts a new block."""
    block: int = -1
    """The index of the block being streamed (``content_block_delta``'s ``index``)."""

    def index(self, kind: str) -> int:
        if kind != self.last:
            self.last, self.block = kind, self.block + 1
        return self.block


def _input(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


class Translator:
    """Stateful: the reply being streamed is kept until its usage arrives."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._reply = _Reply()
        self._requests = 0

    def __call__(self, event: SessionEvent) -> list[StreamJsonEvent]:
        sid = self.session_id
        if isinstance(event, StreamUpdate):
            return self._stream(event)
        if isinstance(event, UsageReported):
            return [self._assistant(event)]
        if isinstance(event, ToolFinished):
            text = event.text or event.preview
            block = ToolResultBlock(tool_use_id=event.call_id, content=text, is_error=event.is_error)
            return [UserLine(session_id=sid, message=UserLineMessage(content=[block]))]
        if isinstance(event, Compacted):
            message = f"compacted {event.messages_before} messages to {event.messages_after}: {event.reason}"
            return [SystemNotice(session_id=sid, subtype="compaction", message=message, data=_data(event))]
        if isinstance(event, RepairApplied):
            message = f"repaired {event.tool} call {event.call_id}: {event.detail}"
            return [SystemNotice(session_id=sid, subtype="repair", message=message, data=_data(event))]
        if isinstance(event, JournalRecovered):
            return [SystemNotice(session_id=sid, subtype="journal_recovered", message=event.message, data=_data(event))]
        return []

    def _stream(self, update: StreamUpdate) -> list[StreamJsonEvent]:
        sid, event, reply = self.session_id, update.event, self._reply
        if isinstance(event, ContentDelta):
            reply.text.append(event.text)
            block = ContentBlockDelta(index=reply.index("text"), delta=TextDelta(text=event.text))
            return [StreamEventLine(session_id=sid, event=block)]
        if isinstance(event, ReasoningDelta):
            reply.thinking.append(event.text)
            block = ContentBlockDelta(index=reply.index("thinking"), delta=ThinkingDelta(thinking=event.text))
            return [StreamEventLine(session_id=sid, event=block)]
        if isinstance(event, ToolCallStarted):
            reply.calls[event.index] = (event.id, event.name, [])
        elif isinstance(event, ToolCallArgumentsDelta) and event.index in reply.calls:
            reply.calls[event.index][2].append(event.text)
        elif isinstance(event, StreamRestarted):
            self._reply = _Reply()
            message = f"the reply stream restarted (attempt {event.attempt}): {event.reason}"
            return [SystemNotice(session_id=sid, subtype="stream_restarted", message=message, data=_data(update))]
        return []

    def _assistant(self, usage: UsageReported) -> AssistantLine:
        reply, self._reply = self._reply, _Reply()
        self._requests += 1
        content: list[TextBlock | ThinkingBlock | ToolUseBlock] = []
        if reply.thinking:
            thinking = "".join(reply.thinking)
            content.append(ThinkingBlock(thinking=thinking, signature=signature_of(thinking)))
        if reply.text:
            content.append(TextBlock(text="".join(reply.text)))
        for index in sorted(reply.calls):
            call_id, name, parts = reply.calls[index]
            content.append(ToolUseBlock(id=call_id, name=name, input=_input("".join(parts))))
        message = AssistantLineMessage(
            id=f"{self.session_id}-{usage.session}-{self._requests}",
            model=usage.model,
            content=content,
            usage=TokenUsage.of(usage.usage),
            cost_usd=usage.cost_usd,
            stop_reason="tool_use" if reply.calls else "end_turn",
        )
        return AssistantLine(session_id=self.session_id, message=message)


def _data(event: Any) -> dict[str, Any]:
    data: dict[str, Any] = event.model_dump(mode="json")
    return data
