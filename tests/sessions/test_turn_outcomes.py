"""Issue 11 items 1, 4 and 5 at the session level: a reply cut at the output limit is its own outcome (and, when the
session is told to, retried once with a larger ``max_tokens``); an interrupted request is accounted; cache diagnostics
continue their numbering after a resume."""

from __future__ import annotations

import json
from pathlib import Path

import trio

from scenarios.emulator import ReplySpec, Script, SessionSpec
from scenarios.emulator.script import StallFault
from sessions.events import DiagnosticsReported, RequestStarted, SessionEvent, StreamUpdate, TurnFinished, UsageReported
from sessions.session import OUTPUT_LIMIT_TOKENS, SessionSettings
from sessions.wire.stream import StreamRestarted

from .session_support import BodyRecorder, emulated, make_session

CUT = ReplySpec(reasoning="Let me think about this very carefully", finish_reason="length")


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    return ws


async def test_a_reply_cut_at_the_output_limit_is_length_not_empty(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    script = Script(sessions=(SessionSpec(key="executor", replies=(CUT,)),))
    events: list[SessionEvent] = []
    async with emulated(script) as (_, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", events=events)
        result = await session.send("Explain app.py")
    assert result.status == "length"
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert finished[-1].status == "length"
    journaled = [json.loads(line) for line in (ws / "s.jsonl").read_text().splitlines()]
    assert any(
        e.get("event", {}).get("kind") == "turn_finished" and e["event"]["status"] == "length" for e in journaled
    )


async def test_a_cut_reply_is_retried_once_with_a_larger_max_tokens(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    answer = ReplySpec(reasoning="Short now.", content="app.py sets x to 1.")
    script = Script(sessions=(SessionSpec(key="executor", replies=(CUT, answer)),))
    events: list[SessionEvent] = []
    recorder = BodyRecorder()
    settings = SessionSettings(retry_when_cut=True)
    async with emulated(script) as (_, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", events=events, recorder=recorder, settings=settings)
        result = await session.send("Explain app.py")
    assert result.status == "done" and result.text == "app.py sets x to 1."
    first, retried = recorder.bodies
    assert b'"max_tokens"' not in first
    assert f'"max_tokens":{OUTPUT_LIMIT_TOKENS}'.encode() in retried
    # only the head differs: the same messages, and the cut reply was not appended
    assert json.loads(first)["messages"] == json.loads(retried)["messages"]
    restarts = [e.event for e in events if isinstance(e, StreamUpdate) and isinstance(e.event, StreamRestarted)]
    assert len(restarts) == 1 and "cut at the output limit" in restarts[0].reason


async def test_a_reply_cut_twice_ends_the_turn_as_length(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    script = Script(sessions=(SessionSpec(key="executor", replies=(CUT, CUT)),))
    async with emulated(script) as (_, client):
        session = make_session(client, ws, journal=None, settings=SessionSettings(retry_when_cut=True))
        result = await session.send("Explain app.py")
    assert result.status == "length" and result.requests == 2


async def test_an_interrupted_request_is_accounted_with_its_input(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    ws = _ws(tmp_path)
    slow = ReplySpec(content="never seen", faults=(StallFault(seconds=600, after_chunks=1, then="continue"),))
    script = Script(sessions=(SessionSpec(key="executor", replies=(slow,)),))
    events: list[SessionEvent] = []
    async with emulated(script) as (_, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", events=events)
        with trio.move_on_after(1):
            await session.send("Explain app.py")
    usage = [e for e in events if isinstance(e, UsageReported)]
    assert len(usage) == 1 and usage[0].estimated
    assert usage[0].usage.prompt_tokens > 0 and usage[0].cost_usd > 0
    assert session.requests == 1 and session.cost_usd == usage[0].cost_usd


async def test_cache_diagnostics_continue_their_numbering_after_a_resume(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    replies = tuple(ReplySpec(content=f"answer {i}") for i in range(3))
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    journal = ws / "s.jsonl"
    events: list[SessionEvent] = []
    async with emulated(script) as (_, client):
        session = make_session(client, ws, journal=journal)
        await session.send("one")
        await session.send("two")
        resumed = make_session(client, ws, journal=journal, events=events, resume=True)
        await resumed.send("three")
    diag = [e.diagnostics for e in events if isinstance(e, DiagnosticsReported)]
    started = [e for e in events if isinstance(e, RequestStarted)]
    assert started[0].request_index == 3
    assert diag[0].request_index == 3
    assert diag[0].change_reason is not None and "first request of the session" not in diag[0].change_reason
    assert "resume" in diag[0].change_reason
