"""Escalation with a real session against the in-process emulator: the marker, failures, hints, presets, the cap, and
the cost of the aborted flash call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from orchestrator.events import Escalated, ProAskedForPro
from orchestrator.policy.escalation import EscalationPolicy, Escalator
from orchestrator.ui.goal_lines import pro_marker_line
from scenarios.emulator import ReplySpec, RunningEmulator, Script, SessionSpec, ToolCallSpec
from scenarios.emulator.script import DropFault
from sessions.events import RequestStarted, SessionEvent, StreamUpdate, UsageReported
from sessions.session import Session, SessionSettings
from sessions.wire.client import DeepSeekClient
from sessions.wire.messages import ChatRequest
from sessions.wire.stream import ContentDelta, Reply, StreamEvent, StreamRestarted, ToolCallStarted
from tests.sessions.session_support import emulated, make_session

FLASH = "deepseek-v4-flash"
PRO = "deepseek-v4-pro"
FLASH_FIELD = b'"model":"deepseek-v4-flash"'
PRO_FIELD = b'"model":"deepseek-v4-pro"'
REASONING = "This needs a careful proof about the invariant; I am not sure I can do it."
LONG_TAIL = "\nHere is a long answer that the user must never see. " * 60  # ~3 000 characters after the marker


class RecordingClient:
    """The real client, with the model and exact bytes of every request it is asked to send."""

    def __init__(self, inner: DeepSeekClient) -> None:
        self.inner = inner
        self.sent: list[tuple[str, bytes]] = []

    def stream(self, request: ChatRequest, *, body: bytes | None = None) -> Any:
        assert body is not None
        self.sent.append((request.model, body))
        return self.inner.stream(request, body=body)

    async def complete(
        self,
        request: ChatRequest,
        *,
        body: bytes | None = None,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Reply:
        assert body is not None
        self.sent.append((request.model, body))
        return await self.inner.complete(request, body=body, on_event=on_event)

    @property
    def models(self) -> list[str]:
        return [model for model, _ in self.sent]


@dataclass
class Rig:
    emu: RunningEmulator
    client: RecordingClient
    session: Session
    escalator: Escalator
    notices: list[Escalated]
    events: list[SessionEvent] = field(default_factory=list)

    async def turn(self, text: str, *, needs_pro: bool = False, reason: str = "") -> str:
        self.escalator.begin_turn(self.session.name, needs_pro=needs_pro, reason=reason)
        result = await self.session.send(text)
        return result.text


@asynccontextmanager
async def rig(tmp_path: Path, replies: list[ReplySpec], policy: EscalationPolicy | None = None) -> AsyncIterator[Rig]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
    script = Script(sessions=(SessionSpec(key="executor", replies=tuple(replies)),))
    notices: list[Escalated] = []
    escalator = Escalator(policy or EscalationPolicy(), flash_model=FLASH, pro_model=PRO, on_escalation=notices.append)
    events: list[SessionEvent] = []
    async with emulated(script) as (emu, inner):
        client = RecordingClient(inner)
        session = make_session(inner, ws, journal=None, settings=SessionSettings(model=FLASH), events=events)
        session.client = client
        session.reply_source = escalator
        yield Rig(emu, client, session, escalator, notices, events)


def _marker_reply(reason: str = "the proof needs pro") -> ReplySpec:
    return ReplySpec(reasoning=REASONING, content=f"<<<NEEDS_PRO: {reason}>>>{LONG_TAIL}")


def _shown_content(events: list[SessionEvent]) -> str:
    return "".join(e.event.text for e in events if isinstance(e, StreamUpdate) and isinstance(e.event, ContentDelta))


def _usage_events(events: list[SessionEvent]) -> list[UsageReported]:
    return [e for e in events if isinstance(e, UsageReported)]


async def test_marker_resends_the_identical_body_to_pro_and_the_next_turn_is_flash(tmp_path: Path) -> None:
    replies = [_marker_reply(), ReplySpec(reasoning="Pro thinks.", content="Pro answer."), ReplySpec(content="Flash.")]
    async with rig(tmp_path, replies) as r:
        assert await r.turn("Prove the invariant.") == "Pro answer."
        assert await r.turn("Thanks. Anything else?") == "Flash."
        stats = r.emu.stats()["models"]
    assert r.client.models == [FLASH, PRO, FLASH]
    (_, flash_body), (_, pro_body), _ = r.client.sent
    # Byte for byte the same request; only the model field differs.
    assert flash_body.count(FLASH_FIELD) == 1 and flash_body != pro_body
    assert pro_body == flash_body.replace(FLASH_FIELD, PRO_FIELD)
    assert stats[FLASH]["requests"] == 2 and stats[PRO]["requests"] == 1

    (notice,) = r.notices
    assert notice.trigger == "marker" and notice.reason == "the proof needs pro"
    assert (notice.from_model, notice.to_model, notice.session) == (FLASH, PRO, "executor")
    assert 0 < notice.wasted_chars <= 256  # the flash content had ~3 000 characters; we stopped reading early
    assert notice.wasted_reasoning_chars == len(REASONING)
    assert notice.flash_cost_estimated and notice.flash_cost_usd > 0

    # The user never saw the marker or the flash answer, and the conversation keeps only the pro reply.
    assert "NEEDS_PRO" not in _shown_content(r.events) and "never see" not in _shown_content(r.events)
    assert b"NEEDS_PRO" not in r.session.body()
    assert r.session.log[1].message.content == "Pro answer."


async def test_the_aborted_flash_call_is_in_the_session_cost_as_an_estimate(tmp_path: Path) -> None:
    replies = [ReplySpec(content="First, on flash."), _marker_reply(), ReplySpec(content="Pro answer.")]
    async with rig(tmp_path, replies) as r:
        await r.turn("Warm up.")
        await r.turn("Now the hard part.")
    usages = _usage_events(r.events)
    assert [(u.model, u.estimated) for u in usages] == [(FLASH, False), (FLASH, True), (PRO, False)]
    first, aborted, pro = usages
    (notice,) = r.notices
    assert aborted.cost_usd == notice.flash_cost_usd > 0
    assert r.session.cost_usd == sum(u.cost_usd for u in usages)
    # The estimate: the pro request carried the same messages, and the server counted them exactly.
    assert abs(aborted.usage.prompt_tokens - pro.usage.prompt_tokens) <= 0.15 * pro.usage.prompt_tokens
    # What the first flash request sent is cached on flash, in whole 128-token units.
    assert aborted.usage.prompt_cache_hit_tokens == first.usage.prompt_tokens // 128 * 128 > 0
    assert aborted.usage.completion_tokens > 0


async def test_the_first_flash_request_estimates_its_whole_body_as_a_miss(tmp_path: Path) -> None:
    async with rig(tmp_path, [_marker_reply(), ReplySpec(content="Pro answer.")]) as r:
        await r.turn("Hard from the start.")
    aborted, pro = _usage_events(r.events)
    assert aborted.estimated and aborted.usage.prompt_cache_hit_tokens == 0
    assert aborted.usage.prompt_cache_miss_tokens == aborted.usage.prompt_tokens > 0.85 * pro.usage.prompt_tokens
    assert r.session.cost_usd == aborted.cost_usd + pro.cost_usd


async def test_three_failures_in_a_turn_send_the_rest_of_the_turn_to_pro(tmp_path: Path) -> None:
    bad_calls = tuple(ToolCallSpec(name="no_such_tool", arguments={"n": i}) for i in range(3))
    replies = [
        ReplySpec(reasoning="Let me try some tools.", tool_calls=bad_calls),
        ReplySpec(tool_calls=(ToolCallSpec(name="read_file", arguments={"path": "app.py"}),)),
        ReplySpec(content="Pro fixed it."),
        ReplySpec(content="Flash again."),
    ]
    async with rig(tmp_path, replies) as r:
        assert await r.turn("Fix add().") == "Pro fixed it."
        assert await r.turn("Next?") == "Flash again."
    assert r.client.models == [FLASH, PRO, PRO, FLASH]
    (notice,) = r.notices
    assert notice.trigger == "failures" and "3 failures" in notice.reason
    assert notice.flash_cost_usd == 0 and notice.wasted_chars == 0
    # The pro requests carry the session's own bytes: the next flash request extends them (append-only).
    _, pro_body = r.client.sent[2]
    assert r.client.sent[3][1].startswith(pro_body.replace(PRO_FIELD, FLASH_FIELD)[:-2] + b",")


async def test_two_failures_stay_on_flash(tmp_path: Path) -> None:
    bad_calls = tuple(ToolCallSpec(name="no_such_tool", arguments={"n": i}) for i in range(2))
    replies = [ReplySpec(tool_calls=bad_calls), ReplySpec(content="Flash fixed it.")]
    async with rig(tmp_path, replies) as r:
        assert await r.turn("Fix add().") == "Flash fixed it."
    assert r.client.models == [FLASH, FLASH] and r.notices == []


async def test_preset_flash_never_escalates_and_keeps_the_marker_as_written(tmp_path: Path) -> None:
    bad_calls = tuple(ToolCallSpec(name="no_such_tool", arguments={"n": i}) for i in range(4))
    content = "<<<NEEDS_PRO: too hard>>> but here is my attempt."
    replies = [ReplySpec(content=content), ReplySpec(tool_calls=bad_calls), ReplySpec(content="Done on flash.")]
    async with rig(tmp_path, replies, EscalationPolicy(preset="flash")) as r:
        assert await r.turn("Hard thing.", needs_pro=True) == content
        assert await r.turn("Another.") == "Done on flash."
    assert r.client.models == [FLASH, FLASH, FLASH]
    assert r.notices == []
    assert content in _shown_content(r.events)


async def test_preset_pro_sends_every_request_to_pro_and_announces_once_per_turn(tmp_path: Path) -> None:
    replies = [
        ReplySpec(tool_calls=(ToolCallSpec(name="read_file", arguments={"path": "app.py"}),)),
        ReplySpec(content="Read it."),
        ReplySpec(content="Second turn."),
    ]
    async with rig(tmp_path, replies, EscalationPolicy(preset="pro", max_pro_turns=0)) as r:
        assert await r.turn("Look at app.py.") == "Read it."
        assert await r.turn("And now?") == "Second turn."
    assert r.client.models == [PRO, PRO, PRO]  # the user's explicit choice is not capped
    assert [n.trigger for n in r.notices] == ["preset", "preset"]
    assert [u.model for u in _usage_events(r.events)] == [PRO, PRO, PRO]


async def test_a_needs_pro_hint_starts_the_turn_on_pro(tmp_path: Path) -> None:
    replies = [ReplySpec(content="Pro did the step."), ReplySpec(content="Flash did the next.")]
    async with rig(tmp_path, replies) as r:
        await r.turn("Step 1", needs_pro=True, reason="step s1 is marked needs_pro")
        await r.turn("Step 2")
    assert r.client.models == [PRO, FLASH]
    (notice,) = r.notices
    assert notice.trigger == "hint" and notice.reason == "step s1 is marked needs_pro"


async def test_the_cap_keeps_turns_on_flash_without_claiming_an_escalation(tmp_path: Path) -> None:
    second = "<<<NEEDS_PRO: again>>> I will try anyway."
    replies = [_marker_reply(), ReplySpec(content="Pro answer."), ReplySpec(content=second), ReplySpec(content="x")]
    async with rig(tmp_path, replies, EscalationPolicy(max_pro_turns=1)) as r:
        assert await r.turn("Hard one.") == "Pro answer."
        assert await r.turn("Hard two.") == second
        assert await r.turn("Hint ignored.", needs_pro=True) == "x"
    assert r.client.models == [FLASH, PRO, FLASH, FLASH]
    assert [n.trigger for n in r.notices] == ["marker"]
    assert r.escalator.pro_turns == 1 and r.escalator.cap_reached
    assert [u.estimated for u in _usage_events(r.events)] == [True, False, False, False]


async def test_held_content_is_released_before_a_tool_call_and_reasoning_streams_at_once(tmp_path: Path) -> None:
    replies = [
        ReplySpec(
            reasoning="Thinking first.",
            content="<<<",
            tool_calls=(ToolCallSpec(name="read_file", arguments={"path": "app.py"}),),
        ),
        ReplySpec(content="Done."),
    ]
    async with rig(tmp_path, replies) as r:
        assert await r.turn("Go.") == "Done."
    stream = [e.event for e in r.events if isinstance(e, StreamUpdate)]
    kinds = [type(e).__name__ for e in stream]
    shown = kinds.index("ContentDelta")
    assert kinds.index("ReasoningDelta") < shown < kinds.index("ToolCallStarted")
    first_shown = stream[shown]
    assert isinstance(first_shown, ContentDelta) and first_shown.text == "<<<"
    assert any(isinstance(e, ToolCallStarted) for e in stream)
    assert r.client.models == [FLASH, FLASH] and r.notices == []


async def test_a_retried_flash_stream_starts_the_marker_question_afresh(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    # Chunks: role, "Thinking.", "<<<NEEDS_PRO:", ... : the connection drops while a marker is half held.
    drop = DropFault(after_chunks=3)
    flaky = ReplySpec(reasoning="Thinking.", content="<<<NEEDS_PRO: x>>>" + LONG_TAIL, faults=(drop,))
    async with rig(tmp_path, [flaky, ReplySpec(content="Pro answer.")]) as r:
        assert await r.turn("Go.") == "Pro answer."
    stream = [e.event for e in r.events if isinstance(e, StreamUpdate)]
    assert any(isinstance(e, StreamRestarted) for e in stream)
    assert "NEEDS_PRO" not in _shown_content(r.events)
    (notice,) = r.notices
    assert notice.reason == "x" and notice.wasted_reasoning_chars == len("Thinking.")  # the void attempt not counted
    assert r.client.models == [FLASH, PRO]


async def test_when_pro_itself_writes_the_marker_the_user_is_told_why_the_turn_ends(tmp_path: Path) -> None:
    replies = [_marker_reply(), _marker_reply("this is beyond me")]
    told: list[ProAskedForPro] = []
    async with rig(tmp_path, replies) as r:
        r.escalator.on_pro_marker = told.append
        await r.turn("Prove the invariant.")
    (event,) = told
    assert (event.session, event.model, event.reason) == ("executor", PRO, "this is beyond me")
    line = pro_marker_line(event).plain
    assert "asked for pro" in line and "no stronger model" in line and "this is beyond me" in line


async def test_an_escalated_request_is_two_requests_each_with_one_usage(tmp_path: Path) -> None:
    replies = [_marker_reply(), ReplySpec(content="Pro answer.")]
    async with rig(tmp_path, replies) as r:
        await r.turn("Prove the invariant.")
    started = [e for e in r.events if isinstance(e, RequestStarted)]
    assert [e.model for e in started] == [FLASH, PRO] and [e.request_index for e in started] == [1, 2]
    assert len(_usage_events(r.events)) == 2 and r.session.requests == 2
