"""A tool result can end the turn (DESIGN §5 "Turn boundaries"): no request only to collect closing words, and the
next turn's user message follows the tool result with every earlier byte unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.events import SessionEvent, TurnFinished
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.registry import default_registry
from sessions.wire.client import DeepSeekClient
from sessions.wire.messages import ToolMessage, UserMessage

from .session_support import SYSTEM, BodyRecorder, emulated


class HandInArgs(ToolArgs):
    answer: str


class HandInTool(Tool[HandInArgs]):
    """A protocol-like tool: an empty answer is an error (the turn goes on); any other answer ends the turn."""

    name: ClassVar[str] = "hand_in"
    description: ClassVar[str] = "Hand in the answer."
    args_model = HandInArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = False

    async def run(self, args: HandInArgs, ctx: ToolContext) -> ToolResult:
        if not args.answer.strip():
            return ToolResult(content="An empty answer: hand in again.", is_error=True, ends_turn=True)
        return ToolResult(content=f"Answer {args.answer!r} recorded.", ends_turn=True)


def _session(client: DeepSeekClient, ws: Path, recorder: BodyRecorder, events: list[SessionEvent]) -> Session:
    registry = default_registry(use_ripgrep=False)
    registry.register(HandInTool())
    prefix = build_prefix(SYSTEM, Session.schemas_for(registry), load_standing_memory(ws, stop_at=ws))
    return Session.start(
        journal_path=ws / "journal.jsonl",
        name="executor",
        client=client,
        prefix=prefix,
        registry=registry,
        tool_context=ToolContext(root=ws),
        settings=SessionSettings(),
        on_event=events.append,
        reply_source=recorder,
    )


def _call(name: str, **arguments: str) -> ReplySpec:
    return ReplySpec(tool_calls=(ToolCallSpec(name=name, arguments=arguments),))


async def test_a_result_that_ends_the_turn_sends_no_request_for_closing_words(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n")
    replies = (
        _call("read_file", path="notes.txt"),
        _call("hand_in", answer=""),  # an invalid call: its error is a result and the turn goes on
        _call("hand_in", answer="42"),  # ends turn 1: no fourth request
        _call("hand_in", answer="43"),  # turn 2: one request
    )
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    recorder, events = BodyRecorder(), list[SessionEvent]()
    async with emulated(script) as (emu, client):
        session = _session(client, ws, recorder, events)
        first = await session.send("What is the answer? Hand it in.")
        log_after_first = len(session.log)
        second = await session.send("Check it once more and hand it in again.")
        served = emu.stats()["sessions"]["executor"]["requests"]
    assert (first.status, first.requests) == ("done", 3)
    assert (second.status, second.requests) == ("done", 1)
    assert served == 4 == len(recorder.bodies)
    # Turn 1 ends on the tool result; turn 2's user message follows it.
    messages = session.log.messages
    assert isinstance(messages[log_after_first - 1], ToolMessage)
    assert "recorded" in (messages[log_after_first - 1].content or "")
    assert isinstance(messages[log_after_first], UserMessage)
    assert isinstance(messages[-1], ToolMessage) and "'43' recorded" in messages[-1].content
    # Byte for byte: every request is the one before with messages appended, across the turn boundary too.
    for prev, new in zip(recorder.bodies, recorder.bodies[1:], strict=False):
        assert new.startswith(prev[:-2] + b","), "an earlier byte changed"
    boundary = recorder.bodies[3][len(recorder.bodies[2]) - 2 :]
    assert boundary.count(b'"role":"tool"') == 1 and boundary.count(b'"role":"user"') == 1
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert [f.requests for f in finished] == [3, 1]


async def test_an_error_result_does_not_end_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    replies = (_call("hand_in", answer=" "), ReplySpec(content="I have no answer."))
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    recorder, events = BodyRecorder(), list[SessionEvent]()
    async with emulated(script) as (_emu, client):
        result = await _session(client, ws, recorder, events).send("Hand in the answer.")
    assert (result.status, result.requests, result.text) == ("done", 2, "I have no answer.")
