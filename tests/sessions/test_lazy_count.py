"""The context estimate counts only when a count is needed (issue 49): a short conversation never loads the tokenizer,
and counting lazily changes no request byte (the compaction decisions fall where exact counting puts them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions import in_flight
from sessions.accounting import context_estimate, tokens
from sessions.accounting.context_estimate import ContextEstimate
from sessions.events import Compacted, SessionEvent
from sessions.session import SessionSettings
from sessions.wire.messages import Usage

from .session_support import BodyRecorder, emulated, make_session


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n" + "# filler line for a realistic file\n" * 60)
    return ws


def _turns(n: int) -> list[ReplySpec]:
    return [
        r
        for i in range(n)
        for r in (
            ReplySpec(tool_calls=(ToolCallSpec(name="bash", arguments={"command": f"echo turn {i}; cat app.py"}),)),
            ReplySpec(content=f"Answer {i}: add subtracts."),
        )
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_a_text_never_has_more_tokens_than_utf8_bytes(text: str) -> None:
    """What the bound rests on: byte-level BPE without a normalizer, every token at least one byte."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return  # a lone surrogate is no text a message carries
    assert tokens.count(text) <= size


def test_the_bound_holds_the_pending_texts_and_a_report_drops_them_uncounted(monkeypatch: pytest.MonkeyPatch) -> None:
    estimate = ContextEstimate()
    estimate.appended("héllo wörld")
    estimate.appended("")
    assert estimate.at_most() == len("héllo wörld".encode())

    def refuse() -> object:
        raise AssertionError("a reported text was counted")

    monkeypatch.setattr(tokens, "tokenizer", refuse)
    estimate.report(Usage(prompt_tokens=100, completion_tokens=20, total_tokens=120))
    assert estimate.tokens == estimate.at_most() == 120
    monkeypatch.undo()
    estimate.appended("hello world")
    assert estimate.at_most() == 120 + len("hello world")
    assert estimate.tokens == 122 == estimate.at_most()  # counted once, the bound is exact
    estimate.rewritten([b'{"role":"user","content":"hello world"}'])
    assert not estimate.reported
    assert estimate.tokens == tokens.count('{"role":"user","content":"hello world"}')


async def test_a_short_conversation_with_tools_never_loads_the_tokenizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Refuse:  # the session's counting modules see this for ``tokens`` (the emulator keeps its own)
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the session counted tokens: tokens.{name}")

    monkeypatch.setattr(context_estimate, "tokens", Refuse())
    monkeypatch.setattr(in_flight, "tokens", Refuse())
    ws = _workspace(tmp_path)
    script = Script(sessions=(SessionSpec(key="executor", replies=tuple(_turns(3))),))
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl")
        for i in range(3):
            result = await session.send(f"Question {i}")
            assert result.text == f"Answer {i}: add subtracts."


async def _bodies(ws: Path, *, exact: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], int]:
    """The request bodies of a conversation that compacts; with ``exact``, every decision counts as before issue 49."""
    if exact:
        monkeypatch.setattr(ContextEstimate, "at_most", lambda self: self.tokens)
    replies = _turns(12)
    digest = ReplySpec(content="Digest: the user asked about add(); it subtracts.")
    script = Script(
        sessions=(
            SessionSpec(key="digest", system_contains="You compress the history", replies=(digest,)),
            SessionSpec(key="executor", replies=tuple(replies)),
        )
    )
    recorder, events = BodyRecorder(), list[SessionEvent]()
    compacting = SessionSettings(context_window=6000, compaction_ratio=0.8, compaction_keep_ratio=0.2)
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=None, settings=compacting, recorder=recorder, events=events)
        for i in range(12):
            await session.send(f"Question {i}")
    monkeypatch.undo()
    return recorder.bodies, sum(isinstance(e, Compacted) for e in events)


async def test_counting_lazily_sends_the_same_bytes_as_counting_every_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Byte for byte, request after request, with compaction in the conversation: the bound only skips counts."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    lazy, lazy_compactions = await _bodies(_workspace(tmp_path / "a"), exact=False, monkeypatch=monkeypatch)
    exact, exact_compactions = await _bodies(_workspace(tmp_path / "b"), exact=True, monkeypatch=monkeypatch)
    assert lazy_compactions == exact_compactions >= 1
    assert len(lazy) == len(exact) == 24  # the digest requests go out beside the recorder
    assert [i for i, (a, b) in enumerate(zip(lazy, exact, strict=True)) if a != b] == []
