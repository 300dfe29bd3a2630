"""From stream-json lines (:mod:`orchestrator.headless.events`) to ACP ``session/update`` bodies.

Text and thinking deltas become ``agent_message_chunk`` / ``agent_thought_chunk``; each ``tool_use`` of a reply a
``tool_call`` (status ``in_progress``, its kind, its title, the file it touches as a location); each ``tool_result``
a ``tool_call_update`` (``completed`` or ``failed``, the result as text, and for an edit the diff of the file, read
before the call and after it). :class:`UpdateMaker` also remembers the calls not yet answered, so a permission request
names the call it is about, and which files a finished edit wrote (for the client's ``fs/write_text_file``).
:func:`replayed` makes the same bodies from a journaled message (``session/load``).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.acp.protocol import TOOL_KINDS, text_content
from orchestrator.headless.events import (
    AssistantLine,
    AssistantLineMessage,
    StreamEventLine,
    StreamJsonEvent,
    TextDelta,
    TokenUsage,
    ToolResultBlock,
    ToolUseBlock,
    UserLine,
    UserLineMessage,
)
from sessions.tools import ToolError
from sessions.tools.gateway import GatewayRoot
from sessions.wire import AssistantMessage, UserMessage

EDIT_TOOLS = frozenset({"write_file", "edit_file"})
MAX_DIFF_CHARS = 1_000_000
"""A file larger than this gets no diff in the update (the result text still says what changed)."""


@dataclass
class _Call:
    id: str
    name: str
    input: dict[str, Any]
    path: Path | None = None
    raw: str = ""
    before: str | None = None


def _read(workspace: Path, raw: str) -> str | None:
    """The text of the model's path for the editor's diff, through the gateway (a link out is never read)."""
    found = GatewayRoot(workspace).try_read(raw, limit=4 * MAX_DIFF_CHARS)
    if found is None or found.truncated:
        return None
    try:
        text = found.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n") if len(text) <= MAX_DIFF_CHARS else None


def _locate(workspace: Path, raw: str) -> Path | None:
    """Where the model's path leads in the workspace (through the gateway), None when it leads nowhere inside."""
    try:
        located = GatewayRoot(workspace).locate(raw)
    except ToolError:
        return None
    real = workspace.resolve()
    return real if located.real == "." else real / located.real


def _title(name: str, data: dict[str, Any]) -> str:
    subject = data.get("path") or data.get("command") or data.get("pattern") or ""
    return f"{name} {subject}".strip()


@dataclass
class UpdateMaker:
    workspace: Path
    _open: dict[str, _Call] = field(default_factory=dict)
    _order: deque[str] = field(default_factory=deque)
    written: list[tuple[Path, str]] = field(default_factory=list)
    """(absolute path, new text) of each edit that finished since :meth:`take_written` was last called."""

    def __call__(self, event: StreamJsonEvent) -> list[dict[str, Any]]:
        if isinstance(event, StreamEventLine):
            delta = event.event.delta
            if isinstance(delta, TextDelta):
                return [{"sessionUpdate": "agent_message_chunk", "content": text_content(delta.text)}]
            return [{"sessionUpdate": "agent_thought_chunk", "content": text_content(delta.thinking)}]
        if isinstance(event, AssistantLine):
            return [
                self._started(block.id, block.name, block.input)
                for block in event.message.content
                if block.type == "tool_use"
            ]
        if isinstance(event, UserLine):
            return [self._finished(block.tool_use_id, block.content, block.is_error) for block in event.message.content]
        return []

    def _started(self, call_id: str, name: str, data: dict[str, Any]) -> dict[str, Any]:
        call = _Call(call_id, name, data)
        raw = data.get("path")
        body: dict[str, Any] = {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": _title(name, data),
            "kind": TOOL_KINDS.get(name, "other"),
            "status": "in_progress",
            "rawInput": data,
        }
        located = _locate(self.workspace, raw) if isinstance(raw, str) and raw else None
        if located is not None and isinstance(raw, str):
            call.path, call.raw = located, raw
            body["locations"] = [{"path": str(call.path)}]
            if name in EDIT_TOOLS:
                call.before = _read(self.workspace, raw)
        self._open[call_id] = call
        self._order.append(call_id)
        return body

    def _finished(self, call_id: str, text: str, is_error: bool) -> dict[str, Any]:
        call = self._open.pop(call_id, None)
        if call_id in self._order:
            self._order.remove(call_id)
        content: list[dict[str, Any]] = [{"type": "content", "content": text_content(text)}]
        if call is not None and call.name in EDIT_TOOLS and call.path is not None and not is_error:
            after = _read(self.workspace, call.raw)
            if after is not None:
                content.append({"type": "diff", "path": str(call.path), "oldText": call.before, "newText": after})
                self.written.append((call.path, after))
        return {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "failed" if is_error else "completed",
            "content": content,
        }

    def cancel_open(self) -> list[dict[str, Any]]:
        """After a cancelled turn: a final ``failed`` update for every call still open (else the editor shows it
        running forever); what reached the model is the journal's interrupted result."""
        return [self._finished(call_id, "cancelled: the turn was stopped", True) for call_id in list(self._order)]

    def pending_call(self, tool: str) -> dict[str, Any]:
        """The ``toolCall`` of a permission request: the oldest open call of ``tool``."""
        for call_id in self._order:
            call = self._open[call_id]
            if call.name == tool:
                return {"toolCallId": call.id, "title": _title(call.name, call.input), "kind": TOOL_KINDS.get(tool)}
        return {"toolCallId": f"{tool}-call", "title": tool, "kind": TOOL_KINDS.get(tool, "other")}

    def take_written(self) -> list[tuple[Path, str]]:
        written, self.written = self.written, []
        return written


_TAIL_BLOCKS = re.compile(r"\A(?:<([a-z][a-z0-9-]*)>\n.*?\n</\1>\n\n)+", re.DOTALL)
"""The tail blocks in front of a user message's text (``sessions.prompt.compose_user_turn``)."""


def replayed(message: Any, maker: UpdateMaker) -> list[dict[str, Any]]:
    """The ``session/update`` bodies one journaled message made live."""
    if isinstance(message, UserMessage) and isinstance(message.content, str):
        text = _TAIL_BLOCKS.sub("", message.content)
        return [{"sessionUpdate": "user_message_chunk", "content": text_content(text)}] if text else []
    if isinstance(message, AssistantMessage):
        bodies: list[dict[str, Any]] = []
        if message.reasoning_content:
            bodies.append({"sessionUpdate": "agent_thought_chunk", "content": text_content(message.reasoning_content)})
        if message.content:
            bodies.append({"sessionUpdate": "agent_message_chunk", "content": text_content(message.content)})
        for call in message.tool_calls:
            bodies += maker(_call_line(call))
        return bodies
    if getattr(message, "role", None) == "tool":  # a tool's result
        done = UserLine(
            session_id="",
            message=UserLineMessage(
                content=[ToolResultBlock(tool_use_id=message.tool_call_id, content=message.content, is_error=False)]
            ),
        )
        return maker(done)
    return []


def _call_line(call: Any) -> AssistantLine:
    """A journaled tool call as the ``assistant`` line that showed it."""
    try:
        data = json.loads(call.function.arguments or "{}")
    except ValueError:
        data = {}
    block = ToolUseBlock(id=call.id, name=call.function.name, input=data if isinstance(data, dict) else {})
    usage = TokenUsage(
        input_tokens=0, cache_read_input_tokens=0, output_tokens=0, prompt_tokens=0, prompt_cache_hit_tokens=0,
        prompt_cache_miss_tokens=0,
    )  # fmt: skip
    message = AssistantLineMessage(id=call.id, model="", content=[block], usage=usage, cost_usd=0.0)
    return AssistantLine(session_id="", message=message)
