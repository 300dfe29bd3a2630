"""A real session against the emulator: byte-stable requests, cache hits, tools, resume, compaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.events import (
    Compacted,
    DiagnosticsReported,
    RequestStarted,
    SessionEvent,
    ToolFinished,
    TurnFinished,
    UsageReported,
)
from sessions.journal import read_journal
from sessions.session import DIGEST_FINGERPRINT, INTERRUPTED_RESULT, SessionSettings
from sessions.wire import ToolMessage

from .session_support import BodyRecorder, emulated, make_session


def _workspace(tmp_path: Path, filler_lines: int = 40) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text(
        "def add(a, b):\n    return a - b\n" + "# filler line for a realistic file\n" * filler_lines
    )
    (ws / "REASONIX.md").write_text("Run tests with python -m pytest.")
    return ws


def _realistic_memory(ws: Path) -> None:
    """A project's standing memory of realistic size (conventions, a module map: ~14k tokens), as real agents carry."""
    sections = [
        f"## Module {i}: package/sub{i}.py\n- owns the {i}th stage of the pipeline; pure functions only\n"
        f"- tests live in tests/test_sub{i}.py and run with `python -m pytest tests/test_sub{i}.py -q`\n"
        f"- never import sub{i + 1} from sub{i}; data flows forward through typed records (Record{i})\n"
        for i in range(200)
    ]
    (ws / "REASONIX.md").write_text("# Project conventions\n\n" + "\n".join(sections))


def _turn(i: int) -> list[ReplySpec]:
    return [
        ReplySpec(
            reasoning=f"Turn {i}: I should look at the file first.",
            tool_calls=(ToolCallSpec(name="read_file", arguments={"path": "app.py"}),),
        ),
        ReplySpec(reasoning="Now I know.", content=f"Answer {i}: add subtracts instead of adding."),
    ]


def _is_append(prev: bytes, new: bytes) -> bool:
    """The new body is the previous one with messages appended (its closing ']}' replaced by ',' + new messages)."""
    return new.startswith(prev[:-2] + b",") and new.endswith(b"]}")


async def test_fifty_turns_are_append_only_and_hit_the_cache(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, filler_lines=2)  # each turn adds ~100 new tokens to a growing conversation
    _realistic_memory(ws)
    replies = []
    for i in range(50):  # each turn: read the file, run a check, answer
        first, answer = _turn(i)
        check = ReplySpec(tool_calls=(ToolCallSpec(name="bash", arguments={"command": f"echo check {i}"}),))
        replies += [first, check, answer]
    script = Script(sessions=(SessionSpec(key="executor", replies=tuple(replies)),))
    recorder = BodyRecorder()
    events: list[SessionEvent] = []
    async with emulated(script) as (emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl", recorder=recorder, events=events)
        for i in range(50):
            result = await session.send(f"Question {i}: what is wrong with add()?")
            assert result.status == "done"
            assert result.text == f"Answer {i}: add subtracts instead of adding."
        stats = emu.stats()["sessions"]["executor"]
    assert len(recorder.bodies) == 150
    for prev, new in zip(recorder.bodies, recorder.bodies[1:], strict=False):
        assert _is_append(prev, new)
    assert stats["hit_ratio"] >= 0.99, stats
    assert session.tracker.hit_ratio == pytest.approx(stats["hit_tokens"] / stats["prompt_tokens"])
    diags = [e.diagnostics for e in events if isinstance(e, DiagnosticsReported)]
    assert not any(d.unexplained_miss for d in diags)
    assert diags[0].change_reason == "first request of the session"
    tools_run = [e for e in events if isinstance(e, ToolFinished)]
    assert len(tools_run) == 100 and all(not e.is_error for e in tools_run)
    print(f"50-turn session: {stats['hit_ratio']:.4%} hit ratio over {stats['requests']} requests")


async def test_resume_after_cancel_mid_turn_hits_the_cache(tmp_path: Path, autojump_clock: trio.abc.Clock) -> None:
    ws = _workspace(tmp_path)
    _realistic_memory(ws)
    journal = ws / ".reasonix" / "s.jsonl"
    replies = [r for i in range(3) for r in _turn(i)]
    # Turn 3: the model calls bash, which hangs; the user cancels mid-turn.
    replies.append(ReplySpec(tool_calls=(ToolCallSpec(name="bash", arguments={"command": "sleep 600"}),)))
    replies += _turn(9)  # after the resume
    script = Script(sessions=(SessionSpec(key="executor", replies=tuple(replies)),))
    before: list[SessionEvent] = []
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=journal, events=before)
        for i in range(3):
            await session.send(f"Q{i}")
        with trio.move_on_after(5):
            await session.send("Run the slow thing")
        sent_before = session.body()
        state = read_journal(journal)
        assert state.messages[-1][0].role == "assistant"  # the call never got a result

        recorder = BodyRecorder()
        events: list[SessionEvent] = []
        resumed = make_session(client, ws, journal=journal, recorder=recorder, resume=True, events=events)
        # The figures cover the whole session: what the first process spent is not forgotten.
        assert (resumed.requests, resumed.usage, resumed.cost_usd) == (
            session.requests,
            session.usage,
            session.cost_usd,
        )
        assert resumed.requests == 7 and resumed.cost_usd > 0
        last = resumed.log[-1].message
        assert isinstance(last, ToolMessage) and last.content == INTERRUPTED_RESULT
        assert resumed.body().startswith(sent_before[:-2])
        result = await resumed.send("Q9")
        assert result.status == "done"
    assert recorder.bodies[0].startswith(sent_before[:-2])
    used = [e for e in events if isinstance(e, UsageReported)]
    assert used[-1].session_cost_usd == pytest.approx(session.cost_usd + sum(e.cost_usd for e in used))
    first = next(e.diagnostics for e in events if isinstance(e, DiagnosticsReported))
    # Everything sent before the interruption hits; only the appended result, the new question and the 128-token
    # unit rounding miss.
    print(f"first request after resume: {first.hit_tokens}/{first.prompt_tokens} tokens hit")
    last_sent = [e.diagnostics for e in before if isinstance(e, DiagnosticsReported)][-1]
    sent_tokens = last_sent.prompt_tokens + last_sent.completion_tokens  # input and output of the cut-off request
    assert first.hit_tokens == sent_tokens // 128 * 128
    assert first.hit_tokens / sent_tokens >= 0.99


async def test_compaction_rewrites_once_and_explains_the_miss(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    replies = [r for i in range(12) for r in _turn(i)]
    digest = ReplySpec(content="Digest: the user asked about add(); it subtracts; read app.py several times.")
    script = Script(
        sessions=(
            SessionSpec(key="digest", system_contains="You compress the history", replies=(digest,)),
            SessionSpec(key="executor", replies=tuple(replies)),
        )
    )
    events: list[SessionEvent] = []
    settings = SessionSettings(context_window=6000, compaction_ratio=0.8, compaction_keep_ratio=0.2)
    async with emulated(script) as (emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl", settings=settings, events=events)
        for i in range(12):
            await session.send(f"Question {i}")
        served = emu.stats()["total"]["requests"]
    compactions = [e for e in events if isinstance(e, Compacted)]
    assert len(compactions) >= 1
    # The digest is a request like the others: counted, priced from the server's usage (not an estimate).
    started = [e for e in events if isinstance(e, RequestStarted)]
    used = [e for e in events if isinstance(e, UsageReported)]
    assert session.requests == len(started) == len(used) == served
    assert sum(e.prefix_fingerprint == DIGEST_FINGERPRINT for e in started) == len(compactions)
    assert not any(e.estimated for e in used)
    assert session.log.epoch == len(compactions)
    first_user = session.log[0].message
    assert "<compacted-history>" in first_user.content  # type: ignore[union-attr]
    assert "<user-turn>\nQuestion 0\n</user-turn>" in first_user.content  # type: ignore[union-attr]
    diags = [e.diagnostics for e in events if isinstance(e, DiagnosticsReported)]
    rewritten = [d for d in diags if d.change_reason and d.change_reason.startswith("log rewritten")]
    assert len(rewritten) == len(compactions)
    assert not any(d.unexplained_miss for d in diags)
    state = read_journal(ws / ".reasonix" / "s.jsonl")
    assert state.epoch == len(compactions)
    assert [d for _, d in state.messages] == list(session.log.encoded)


async def test_large_tool_results_are_bounded_once_with_the_full_text_kept_beside_the_journal(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(
        sessions=(
            SessionSpec(
                key="executor",
                replies=(
                    ReplySpec(tool_calls=(ToolCallSpec(name="bash", arguments={"command": "seq 1 30000"}),)),
                    ReplySpec(content="ok"),
                ),
            ),
        )
    )
    events: list[SessionEvent] = []
    settings = SessionSettings(tool_result_max_chars=4000)
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl", settings=settings, events=events)
        await session.send("count")
    result = session.log[2].message
    assert isinstance(result, ToolMessage)
    assert len(result.content) <= 4000 and "cut" in result.content and "cut here" not in result.content  # cut once
    full = [json.loads(line) for line in (ws / ".reasonix" / "s.jsonl").read_text().splitlines()]
    kept = [r["event"]["path"] for r in full if r["t"] == "event" and r["event"].get("kind") == "tool_full_text"]
    assert kept and "14999\n15000\n" in (ws / ".reasonix" / kept[0]).read_text()
    assert next(e for e in events if isinstance(e, TurnFinished)).status == "done"


async def test_edit_mismatches_and_seeded_failures_feed_the_turn_failure_counter(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, filler_lines=0)
    miss = ToolCallSpec(name="edit_file", arguments={"path": "app.py", "edits": [{"old": "no such text", "new": "x"}]})
    replies = (
        ReplySpec(tool_calls=(miss,)),
        ReplySpec(tool_calls=(miss,)),
        ReplySpec(content="giving up"),
        ReplySpec(content="second turn"),
    )
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=None)
        first = await session.send("fix add()")
        second = await session.send("again", failures=1)  # e.g. one failed verification before this retry
    assert first.failures == 2
    assert second.failures == 1
    assert (ws / "app.py").read_text().startswith("def add(a, b):\n    return a - b\n")  # nothing was written
