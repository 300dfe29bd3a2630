"""The request gate (sessions/wire/reply.py): asked before every request a session sends (a turn's requests and a
compaction's digest), released once each has ended; a refusal sends nothing and, before a turn's first request,
logs nothing. ``sessions/`` defines the gate; these tests supply one of their own, as the orchestrator does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.events import SessionEvent, UsageReported
from sessions.session import SessionSettings
from sessions.wire.reply import RequestEstimate

from .session_support import emulated, make_session


class Refused(Exception):
    pass


class CountingGate:
    """Admits ``allow`` requests, then refuses; records every estimate and every release."""

    def __init__(self, allow: int = 1_000) -> None:
        self.allow = allow
        self.estimates: list[RequestEstimate] = []
        self.in_flight = 0
        self.released = 0

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        if len(self.estimates) >= self.allow:
            raise Refused(f"request {len(self.estimates) + 1} refused")
        self.estimates.append(estimate)
        self.in_flight += 1
        assert self.in_flight == 1, "a session has one request in flight at a time"

        def release() -> None:
            self.in_flight -= 1
            self.released += 1

        return release


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n" + "# filler line for a realistic file\n" * 40)
    return ws


def _read_turns(n: int) -> tuple[ReplySpec, ...]:
    return tuple(
        r
        for i in range(n)
        for r in (
            ReplySpec(tool_calls=(ToolCallSpec(name="read_file", arguments={"path": "app.py"}),)),
            ReplySpec(content=f"Answer {i}: add subtracts."),
        )
    )


async def test_every_request_and_every_compaction_digest_asks_the_gate_first(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    digest = ReplySpec(content="Digest: the user asked about add(); it subtracts.")
    script = Script(
        sessions=(
            SessionSpec(key="digest", system_contains="You compress the history", replies=(digest,) * 4),
            SessionSpec(key="executor", replies=_read_turns(12)),
        )
    )
    gate = CountingGate()
    events: list[SessionEvent] = []
    settings = SessionSettings(context_window=6000, compaction_ratio=0.8, compaction_keep_ratio=0.2)
    async with emulated(script) as (emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl", settings=settings, events=events)
        session.in_flight.gate = gate
        for i in range(12):
            (ws / "app.py").write_text(f"def add(a, b):\n    return a - b  # turn {i}\n" + "# a filler line\n" * 120)
            await session.send(f"Question {i}")
        served = emu.stats()["total"]["requests"]
        digests = emu.stats()["sessions"].get("digest", {}).get("requests", 0)
    assert digests >= 1  # a compaction happened, and its digest request was gated too
    assert len(gate.estimates) == served == session.requests and gate.released == served and gate.in_flight == 0
    costs = [e.cost_usd for e in events if isinstance(e, UsageReported)]
    for estimate, cost in zip(gate.estimates, costs, strict=True):
        assert estimate.model == "deepseek-v4-flash" and estimate.max_output_tokens is None
        assert estimate.bound_usd(8_192) >= cost > 0  # the bound (all input a miss, plus the allowance) holds


async def test_a_refused_first_request_sends_nothing_and_logs_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(sessions=(SessionSpec(key="executor", replies=_read_turns(2)),))
    gate = CountingGate(allow=2)
    async with emulated(script) as (emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl")
        session.in_flight.gate = gate
        await session.send("Question 0")  # two requests: the read, then the answer
        before = bytes(session.body())
        with pytest.raises(Refused):
            await session.send("Question 1")
        assert emu.stats()["total"]["requests"] == 2 and gate.in_flight == 0
        assert session.body() == before  # the refused turn left no message behind
        gate.allow = 10
        result = await session.send("Question 1")
        assert result.status == "done" and emu.stats()["total"]["requests"] == 4


async def test_a_refusal_mid_turn_sends_nothing_more_and_releases_what_was_admitted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(sessions=(SessionSpec(key="executor", replies=_read_turns(1)),))
    gate = CountingGate(allow=1)
    async with emulated(script) as (emu, client):
        session = make_session(client, ws, journal=None)
        session.in_flight.gate = gate
        with pytest.raises(Refused):
            await session.send("Question 0")  # the read goes out; the request after its result is refused
        assert emu.stats()["total"]["requests"] == 1 and gate.released == 1 and gate.in_flight == 0
