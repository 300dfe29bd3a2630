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
    JournalRecovered,
    RequestStarted,
    SessionEvent,
    ToolFinished,
    TurnFinished,
    UsageReported,
)
from sessions.journal.jsonl import read_journal
from sessions.session import DIGEST_FINGERPRINT, INTERRUPTED_RESULT, INTERRUPTED_WHILE_RUNNING, SessionSettings
from sessions.wire.messages import AssistantMessage, Message, ToolMessage

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


def _touch(ws: Path, turn: int) -> None:
    """A new last line in app.py: a re-read of an unchanged file would be a short note instead of its text."""
    app = ws / "app.py"
    lines = app.read_text().splitlines(keepends=True)
    app.write_text("".join(line for line in lines if not line.startswith("# turn ")) + f"# turn {turn}\n")


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
            _touch(ws, i)  # the file changes each turn, so each read returns its text (not an "unchanged" note)
            result = await session.send(f"Question {i}: what is wrong with add()?")
            assert result.status == "done"
            assert result.text == f"Answer {i}: add subtracts instead of adding."
        stats = emu.stats()["sessions"]["executor"]
    assert len(recorder.bodies) == 150
    for prev, new in zip(recorder.bodies, recorder.bodies[1:], strict=False):
        assert _is_append(prev, new)
    assert stats["hit_ratio"] >= 0.99, stats
    assert session.ledger.tracker.hit_ratio == pytest.approx(stats["hit_tokens"] / stats["prompt_tokens"])
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
        assert isinstance(last, ToolMessage) and last.content == INTERRUPTED_WHILE_RUNNING  # bash had started
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
            _touch(ws, i)
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


def _answered_in_place(messages: list[Message]) -> bool:
    """Well formed for the API: each assistant's tool calls are answered by the tool messages right after it, and no
    tool message answers anything else."""
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if isinstance(m, ToolMessage):
            return False  # a tool message not in the block after its assistant message
        if isinstance(m, AssistantMessage) and m.tool_calls:
            ids = {c.id for c in m.tool_calls}
            while i < len(messages) and isinstance(messages[i], ToolMessage):
                answer = messages[i]
                assert isinstance(answer, ToolMessage)
                if answer.tool_call_id not in ids:
                    return False
                ids.discard(answer.tool_call_id)
                i += 1
            if ids:
                return False
    return True


async def test_resume_tells_a_call_that_was_running_from_one_that_never_started(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    journal = ws / ".reasonix" / "s.jsonl"
    slow = ToolCallSpec(name="bash", arguments={"command": "echo started > marker.txt; sleep 600"})
    after = ToolCallSpec(name="bash", arguments={"command": "echo second"})
    replies = [ReplySpec(tool_calls=(slow, after)), *_turn(1)]
    script = Script(sessions=(SessionSpec(key="executor", replies=tuple(replies)),))
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=journal)
        async with trio.open_nursery() as nursery:  # the process dies while the first call runs
            nursery.start_soon(session.send, "Run both")
            # A real bash process is a party outside trio: wait for its effect, not for a (virtual) timeout.
            with trio.fail_after(60):
                while not (ws / "marker.txt").exists():  # noqa: ASYNC110 - a file, not a trio task, is awaited
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
        assert (ws / "marker.txt").exists()  # the first call had effects
        resumed = make_session(client, ws, journal=journal, resume=True)
        first, second = resumed.log[-2].message, resumed.log[-1].message
        assert isinstance(first, ToolMessage) and isinstance(second, ToolMessage)
        assert first.content == INTERRUPTED_WHILE_RUNNING
        assert "check the state before running it again" in first.content
        assert second.content == INTERRUPTED_RESULT and second.content.startswith("Not run")
        assert _answered_in_place(resumed.log.messages)
        assert (await resumed.send("Go on")).status == "done"


async def test_resume_after_a_corrupt_middle_line_says_so_and_mends_the_conversation(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    journal = ws / ".reasonix" / "s.jsonl"
    replies = [r for i in range(4) for r in _turn(i)]
    script = Script(sessions=(SessionSpec(key="executor", replies=tuple(replies)),))
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=journal)
        for i in range(3):
            await session.send(f"Q{i}")
        before = session.log.messages
        # A bad block on disk: the tool result of the first turn becomes garbage.
        lines = journal.read_bytes().splitlines(keepends=True)
        bad = next(n for n, line in enumerate(lines) if b'\\"role\\":\\"tool\\"' in line)
        lines[bad] = b'{"t":"msg","raw":"\x00\x00\x00\x00\n'
        journal.write_bytes(b"".join(lines))

        events: list[SessionEvent] = []
        resumed = make_session(client, ws, journal=journal, resume=True, events=events)
        notices = [e for e in events if isinstance(e, JournalRecovered)]
        assert len(notices) == 1
        later = len(lines) - bad - 1
        assert notices[0].message == f"line {bad + 1} of {journal} is corrupt and was skipped; {later} later lines kept"
        after = resumed.log.messages
        assert len(after) == len(before)  # every later message kept; the lost result replaced in place
        assert _answered_in_place(after)
        lost = after[2]
        assert isinstance(lost, ToolMessage) and lost.content == INTERRUPTED_WHILE_RUNNING  # it had started
        assert after[3:] == before[3:]
        assert (await resumed.send("Q3")).status == "done"
        # The mended conversation is what the journal holds now: a second resume reads it back whole.
        again = make_session(client, ws, journal=journal, resume=True)
        assert again.log.messages[: len(after) + 2] == resumed.log.messages[: len(after) + 2]
        assert _answered_in_place(again.log.messages)
