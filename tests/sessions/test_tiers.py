"""The tiers of a long context (DESIGN §3.6 "Tiers"): each tier's trigger, the snip that only pays on a long
session, recall byte for byte, the bytes around a snip, and a session without tiers sending exactly what it did."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.events import Compacted, DiagnosticsReported, SessionEvent
from sessions.log import MessageLog
from sessions.session import Session, SessionSettings
from sessions.tiers.archive import Archive
from sessions.tiers.policy import SnipCandidate, TokenPrices, choose_snip, tier_for
from sessions.tiers.snip import RECALL_TOOL, markers_in, snip_text
from sessions.wire.messages import ToolMessage, UserMessage

from .session_support import BodyRecorder, emulated
from .tiers_support import LINE, read_turn, tiered_session, write_files

WINDOW = 20_000
DIGEST = ReplySpec(content="Digest (scripted): files were read one after another.")


def _script(*replies: ReplySpec) -> Script:
    return Script(
        sessions=(
            SessionSpec(key="digest", system_contains="You compress the history", replies=(DIGEST,) * 4),
            SessionSpec(key="executor", replies=replies),
        )
    )


def _reads(turns: int, prefix: str = "f") -> list[ReplySpec]:
    return [r for i in range(turns) for r in read_turn(i, prefix)]


def _rewrites(events: list[SessionEvent]) -> list[str]:
    return [
        e.diagnostics.change_reason
        for e in events
        if isinstance(e, DiagnosticsReported)
        and e.diagnostics.change_reason
        and e.diagnostics.change_reason.startswith("log rewritten")
    ]


def _tool_contents(log: MessageLog) -> dict[str, str]:
    return {e.message.tool_call_id: e.message.content for e in log if isinstance(e.message, ToolMessage)}


def test_the_ladder_names_the_highest_share_passed() -> None:
    shares = dict(snip=0.6, compact=0.8, force=0.9)
    assert tier_for(12_000, WINDOW, **shares) is None
    assert tier_for(12_001, WINDOW, **shares) == "snip"
    assert tier_for(16_001, WINDOW, **shares) == "compact"
    assert tier_for(18_001, WINDOW, **shares) == "force"


def test_the_rule_weighs_the_saving_against_one_miss_from_the_first_snipped_result() -> None:
    prices = TokenPrices(hit=0.006e-6, miss=0.30e-6)  # flash at peak
    counts = [50, 3_000, 40, 3_000, 40, 60]
    candidates = [SnipCandidate(1, 300), SnipCandidate(3, 300)]
    # 3 requests left: the best start is the later result (saves 2,700 × 3, misses 300+40+60 = 400 once), and even
    # that does not pay: 8,100 × 0.006 < 400 × 0.294 (per million)
    short = choose_snip(counts, candidates, 3, prices)
    assert short is not None and not short.pays
    assert short.indices == (3,) and short.saved_tokens == 2_700 and short.miss_tokens == 400
    assert short.gain_usd == pytest.approx(2_700 * 3 * 0.006e-6)
    assert short.miss_usd == pytest.approx(400 * (0.30e-6 - 0.006e-6))
    # 10 left: both, from index 1: 5,400 × 10 × 0.006 = 0.324 > (300+40+300+40+60 = 740) × 0.294 = 0.218
    long = choose_snip(counts, candidates, 10, prices)
    assert long is not None and long.pays and long.indices == (1, 3) and long.miss_tokens == 740
    # a snip that starts later misses less: with only the second result worth it, the choice starts there
    late = choose_snip([50, 1_000, 40, 9_000, 40, 60], [SnipCandidate(1, 900), SnipCandidate(3, 300)], 3, prices)
    assert late is not None and late.indices == (3,)


def test_a_snip_keeps_a_stable_head_and_tail_and_names_its_original() -> None:
    text = "".join(LINE.format(i=i, f=0) for i in range(100))
    once, again = snip_text(text, "call_1"), snip_text(text, "call_1")
    assert once == again and once is not None
    assert once.startswith(text[:600]) and once.endswith(text[-600:])
    assert markers_in(once) == ["call_1"]
    assert snip_text("short", "call_1") is None


SNIP_WINDOW = 30_000
"""Six reads of ~3,100 tokens pass 60 % of it, below 80 %: the snip is weighed from the sixth read on."""


async def _run_snip_session(
    tmp_path: Path, expected: int, *, recall: bool
) -> tuple[Session, list[SessionEvent], BodyRecorder, dict[str, str]]:
    """Six reads, then one more turn (a recall of ``call_f0``, or another read); every tool result as it first
    entered the log."""
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, 7, 100)
    closing: list[ReplySpec] = [
        ReplySpec(tool_calls=(ToolCallSpec(id="call_recall", name=RECALL_TOOL, arguments={"id": "call_f0"}),)),
        ReplySpec(content="Recalled."),
    ]
    script = _script(*_reads(6), *(closing if recall else read_turn(6)))
    events: list[SessionEvent] = []
    recorder = BodyRecorder()
    settings = SessionSettings(context_window=SNIP_WINDOW, tiers=True)
    first_seen: dict[str, str] = {}
    async with emulated(script) as (_emu, client):
        session = tiered_session(client, ws, settings, events=events, recorder=recorder, expected=lambda: expected)
        for i in range(6):
            await session.send(f"Read f{i}.txt")
            for k, v in _tool_contents(session.log).items():
                first_seen.setdefault(k, v)
        await session.send("Go on")
    return session, events, recorder, first_seen


async def test_a_short_remaining_session_does_not_snip(tmp_path: Path) -> None:
    session, events, _, _ = await _run_snip_session(tmp_path, 3, recall=False)
    assert session.tiers is not None
    choice = session.tiers.last_choice
    assert choice is not None and not choice.pays and choice.remaining_requests == 3
    assert not [e for e in events if isinstance(e, Compacted)]
    assert session.log.epoch == 0


async def test_a_long_remaining_session_snips_and_the_diagnostics_name_it(tmp_path: Path) -> None:
    _, events, _, _ = await _run_snip_session(tmp_path, 500, recall=False)
    snips = [e for e in events if isinstance(e, Compacted) and e.reason.startswith("snip:")]
    assert snips and "pays" in snips[0].reason
    assert any(r.startswith("log rewritten: snip:") for r in _rewrites(events))
    assert not any(e.diagnostics.unexplained_miss for e in events if isinstance(e, DiagnosticsReported))


async def test_recall_returns_the_snipped_original_byte_for_byte(tmp_path: Path) -> None:
    session, _, _, before = await _run_snip_session(tmp_path, 500, recall=True)
    now = _tool_contents(session.log)
    assert markers_in(now["call_f0"]) == ["call_f0"] and now["call_f0"] != before["call_f0"]
    assert now["call_recall"] == before["call_f0"]
    kept = tmp_path / "ws" / ".reasonix" / "s.archive" / "call_f0.txt"
    assert kept.read_bytes() == before["call_f0"].encode("utf-8")


async def test_only_the_bytes_from_the_first_snipped_result_on_change(tmp_path: Path) -> None:
    session, events, recorder, before = await _run_snip_session(tmp_path, 500, recall=False)
    first = next(i for i, e in enumerate(events) if isinstance(e, Compacted))
    index = sum(1 for e in events[:first] if type(e).__name__ == "RequestStarted")  # the request after the snip
    old, new = recorder.bodies[index - 1], recorder.bodies[index]
    snipped = [k for k, v in _tool_contents(session.log).items() if markers_in(v) == [k]]
    originals = [
        (old.index(f'"tool_call_id":"{k}"'.encode()), old.index(f'"tool_call_id":"{k}"'.encode()) + len(before[k]))
        for k in snipped
    ]
    start = min(s for s, _ in originals)
    start = old.rindex(b'{"role":"tool"', 0, start)
    assert new[:start] == old[:start]  # everything before the first snipped result: the same bytes, a cache hit
    common = next(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
    assert start <= common < max(e for _, e in originals) + 200  # the first changed byte is inside a snipped result
    after_last = old.index(b'{"role":"assistant"', max(e for _, e in originals))
    assert old[after_last:-2] in new  # every message after the snipped ones goes back with its stored bytes


async def test_a_resumed_session_sends_the_snipped_log_and_still_recalls(tmp_path: Path) -> None:
    session, _, _, before = await _run_snip_session(tmp_path, 500, recall=False)
    ws = tmp_path / "ws"
    recall = ReplySpec(tool_calls=(ToolCallSpec(id="call_again", name=RECALL_TOOL, arguments={"id": "call_f0"}),))
    recorder = BodyRecorder()
    async with emulated(_script(recall, ReplySpec(content="ok"))) as (_emu, client):
        resumed = tiered_session(client, ws, session.settings, recorder=recorder, resume=True)
        assert resumed.body() == session.body()  # the snipped log, byte for byte, from the journal
        await resumed.send("What did f0.txt say?")
    assert _tool_contents(resumed.log)["call_again"] == before["call_f0"]


async def test_compaction_with_tiers_archives_what_it_folds_and_recall_brings_it_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, 7, 100)
    recall = ReplySpec(tool_calls=(ToolCallSpec(id="call_recall", name=RECALL_TOOL, arguments={"id": "call_f0"}),))
    events: list[SessionEvent] = []
    settings = SessionSettings(context_window=WINDOW, tiers=True, force_ratio=0.95)
    async with emulated(_script(*_reads(6), recall, ReplySpec(content="ok"))) as (_emu, client):
        session = tiered_session(client, ws, settings, events=events, expected=lambda: 1)
        for i in range(6):
            await session.send(f"Read f{i}.txt")
        original = (ws / ".reasonix" / "s.archive" / "call_f0.txt").read_text(encoding="utf-8")
        await session.send("What did f0.txt say?")
    compactions = [e for e in events if isinstance(e, Compacted) and e.reason.startswith("compact:")]
    assert len(compactions) == 1 and compactions[0].digest_chars > 0
    assert any(r.startswith("log rewritten: compact:") for r in _rewrites(events))
    block = session.log[0].message
    assert isinstance(block, UserMessage)
    assert (
        "<archived>" in block.content
        and 'recall("call_f0")' in block.content
        and 'recall("history-1")' in block.content
    )
    assert _tool_contents(session.log)["call_recall"] == original
    assert "FACT-f0" in original
    assert "[user]\nRead f0.txt" in (Archive.beside(ws / ".reasonix" / "s.jsonl").get("history-1") or "")


async def test_force_collapses_old_results_to_placeholders_without_a_request(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, 30, 30)
    events: list[SessionEvent] = []
    settings = SessionSettings(context_window=WINDOW, tiers=True)
    async with emulated(_script(*_reads(30))) as (emu, client):
        session = tiered_session(client, ws, settings, events=events, expected=lambda: 1_000)
        turn = 0
        while session.context_tokens() < 14_000:
            await session.send(f"Read f{turn}.txt")
            turn += 1
        assert not [e for e in events if isinstance(e, Compacted)]  # results under the snip size: nothing to snip
        served = emu.stats()["total"]["requests"]
        big = "FACT-user-big " + "".join(LINE.format(i=i, f=99) for i in range(170))
        await session.send(big)
        assert emu.stats()["total"]["requests"] == served + 2  # the turn's own two requests: no digest
    forced = [e for e in events if isinstance(e, Compacted) and e.reason.startswith("force:")]
    assert len(forced) == 1 and forced[0].digest_chars == 0
    assert any(r.startswith("log rewritten: force:") for r in _rewrites(events))
    contents = _tool_contents(session.log)
    assert markers_in(contents["call_f0"]) == ["call_f0"] and len(contents["call_f0"]) < 300
    kept = Archive.beside(ws / ".reasonix" / "s.jsonl")
    assert kept.get("call_f0") is not None and "FACT-f0" in (kept.get("call_f0") or "")


async def _bodies_without_tiers(tmp_path: Path, settings: SessionSettings) -> list[bytes]:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    write_files(ws, 7, 100)
    recorder = BodyRecorder()
    async with emulated(_script(*_reads(7))) as (_emu, client):
        session = tiered_session(client, ws, settings, recorder=recorder)
        for i in range(7):
            await session.send(f"Read f{i}.txt")
    return recorder.bodies


MAIN_DIGEST = "454c5cb3308f2e5881e9ef8f24f6bff9400b88995603ec54102c79d4b00f8ea6"
"""sha256 over every request body of the scripted session below as one tier sends them (first computed on main at
064acfe, before the tiers existed; recomputed when ``read_file``'s schema gained ``full`` and ``outline``, the only
change: the session reads seven distinct files once each, so no re-read rule applies): tiers off sends these bytes."""


async def test_with_tiers_off_every_byte_sent_is_what_one_tier_sent(tmp_path: Path) -> None:
    plain = await _bodies_without_tiers(tmp_path / "a", SessionSettings(context_window=WINDOW))
    ignored = SessionSettings(context_window=WINDOW, tiers=False, snip_ratio=0.1, force_ratio=0.85)
    assert await _bodies_without_tiers(tmp_path / "b", ignored) == plain
    assert all(RECALL_TOOL.encode() not in b for b in plain) and all(b"<archived>" not in b for b in plain)
    assert any(b"<compacted-history>" in b for b in plain)  # the session did cross the one tier
    assert hashlib.sha256(b"\n".join(plain)).hexdigest() == MAIN_DIGEST
