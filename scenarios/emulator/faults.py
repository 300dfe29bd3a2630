"""What a reply's faults do: which attempt fails and how, and how a delivered reply is bent (truncated, leaked)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from scenarios.emulator.render import render_tool_calls
from scenarios.emulator.script import (
    DropFault,
    FailingFault,
    HttpStatusFault,
    KeepAliveFault,
    ReplySpec,
    StallFault,
    StreamShape,
    ToolCallInContentFault,
    ToolCallInReasoningFault,
    TruncateArgumentsFault,
)


@dataclass(frozen=True, slots=True)
class GeneratedCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Generated:
    """A reply as the emulated model emits it (after shaping faults)."""

    reasoning: str
    content: str
    calls: tuple[GeneratedCall, ...]
    finish_reason: str
    shape: StreamShape | None = None
    """The scripted chunk boundaries; explicit pieces apply only while the text is still what they join to."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """What the server does for one request to a reply: fail it, or deliver (maybe slowly)."""

    failing: FailingFault | None
    keep_alive: KeepAliveFault | None
    slow: StallFault | None
    """A ``then: continue`` stall on a delivering attempt."""

    @property
    def delivers(self) -> bool:
        return self.failing is None


def plan_attempt(reply: ReplySpec, fired: list[int]) -> Attempt:
    """Choose the fault of this attempt. ``fired[i]`` counts how often fault ``i`` already fired (updated here).

    Failing faults fire in the order listed, each ``times`` times; once all are spent the reply is delivered.
    """
    while len(fired) < len(reply.faults):
        fired.append(0)
    keep_alive = next((f for f in reply.faults if isinstance(f, KeepAliveFault)), None)
    for i, fault in enumerate(reply.faults):
        failing = isinstance(fault, HttpStatusFault | DropFault) or (
            isinstance(fault, StallFault) and fault.then == "drop"
        )
        if failing and isinstance(fault, HttpStatusFault | DropFault | StallFault) and fired[i] < fault.times:
            fired[i] += 1
            return Attempt(failing=fault, keep_alive=keep_alive, slow=None)
    slow = next((f for f in reply.faults if isinstance(f, StallFault) and f.then == "continue"), None)
    return Attempt(failing=None, keep_alive=keep_alive, slow=slow)


def call_id(session: str, reply_index: int, call_index: int) -> str:
    """A stable call id in DeepSeek's shape (``call_00_`` + 24 characters): replays send the same bytes."""
    digest = hashlib.sha256(f"{session}\x00{reply_index}\x00{call_index}".encode()).hexdigest()
    return f"call_{call_index:02d}_{digest[:24]}"


def generate(reply: ReplySpec, *, session: str, reply_index: int) -> Generated:
    """The reply as emitted, with its shaping faults applied (truncated arguments, leaked tool-call markup)."""
    calls = tuple(
        GeneratedCall(id=c.id or call_id(session, reply_index, i), name=c.name, arguments=c.raw_arguments())
        for i, c in enumerate(reply.tool_calls)
    )
    reasoning, content, finish = reply.reasoning, reply.content, reply.effective_finish_reason
    for fault in reply.faults:
        if isinstance(fault, TruncateArgumentsFault):
            if calls:
                last = calls[-1]
                keep = len(last.arguments) // 2 if fault.keep_chars is None else fault.keep_chars
                cut = GeneratedCall(id=last.id, name=last.name, arguments=last.arguments[:keep])
                calls = (*calls[:-1], cut)
            else:
                keep = len(content) // 2 if fault.keep_chars is None else fault.keep_chars
                content = content[:keep]
            finish = "length"
        elif isinstance(fault, ToolCallInReasoningFault) and calls:
            markup = render_tool_calls([(c.name, c.arguments) for c in calls])
            reasoning = (reasoning + "\n\n" if reasoning else "") + markup
            calls, finish = (), "stop"
        elif isinstance(fault, ToolCallInContentFault) and calls:
            content += render_tool_calls([(c.name, c.arguments) for c in calls])
            calls, finish = (), "stop"
    return Generated(reasoning=reasoning, content=content, calls=calls, finish_reason=finish, shape=reply.stream)
