"""A re-read sends only what the conversation lacks (DESIGN §5 "Re-reads"): after the session's own edit the changed
lines with a little context, for an overlapping range the lines not shown yet; anything else (a change by someone
else, a compaction, ``full=true``) the whole text. Every result is appended: consecutive requests extend each other
byte for byte."""

from __future__ import annotations

import itertools
from pathlib import Path

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.accounting import tokens
from sessions.session import Session, SessionSettings
from sessions.wire.messages import ToolMessage

from .session_support import BodyRecorder, emulated, make_session

BODY = "".join(f"def f{i}(x):\n    return x * {i}  # a line of a realistic module\n" for i in range(120))


def _call(name: str, **arguments: object) -> ReplySpec:
    return ReplySpec(tool_calls=(ToolCallSpec(name=name, arguments=arguments),))


def _script(*calls: ReplySpec, digest: bool = False) -> Script:
    replies = tuple(r for call in calls for r in (call, ReplySpec(content="Done.")))
    sessions = [SessionSpec(key="executor", replies=replies)]
    if digest:
        reply = ReplySpec(content="Digest: mod.py defines f0..f119.")
        sessions.insert(0, SessionSpec(key="digest", system_contains="You compress the history", replies=(reply,)))
    return Script(sessions=tuple(sessions))


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "mod.py").write_text(BODY)
    return ws


def _results(session: Session) -> list[str]:
    return [m.content for m in session.log.messages if isinstance(m, ToolMessage)]


def _call_ids(session: Session) -> list[str]:
    return [c.id for m in session.log.messages for c in (getattr(m, "tool_calls", None) or ())]


def _extends(bodies: list[bytes]) -> None:
    assert len(bodies) >= 2
    for prev, new in itertools.pairwise(bodies):
        assert new.startswith(prev[:-2] + b","), "an earlier byte changed"


EDIT = {"old": "    return x * 60  #", "new": "    y = x + 1\n    return y * 60  #"}


async def test_a_re_read_after_the_sessions_own_edit_returns_the_changed_lines_and_names_the_earlier_call(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    script = _script(_call("read_file", path="mod.py"), _call("edit_file", path="mod.py", edits=[EDIT]),
                     _call("read_file", path="mod.py"))  # fmt: skip
    recorder = BodyRecorder()
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", recorder=recorder)
        for text in ("Read mod.py.", "Change f60.", "Read it again."):
            await session.send(text)
    first, edited, again = _results(session)
    read_id, edit_id, _ = _call_ids(session)
    assert "def f119(x)" in first and edited.startswith("edited mod.py")
    assert again.startswith("mod.py changed since the read_file call " + read_id) and edit_id in again
    assert "@@ lines 120-125 (were 120-124) @@" in again
    assert "122\t    y = x + 1" in again and "123\t    return y * 60  #" in again
    assert "def f0(x)" not in again and "def f119(x)" not in again
    assert tokens.count(again) < tokens.count(first) // 10
    _extends(recorder.bodies)


async def test_after_a_change_by_someone_else_the_whole_text_comes_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    sed = "sed -i 's/return x \\* 5 /return x * 50 /' mod.py"
    script = _script(
        _call("read_file", path="mod.py"),
        _call("bash", command=sed),  # a command of the session's own, but not one of its file tools
        _call("read_file", path="mod.py"),
        _call("edit_file", path="mod.py", edits=[EDIT]),
        _call("read_file", path="mod.py"),  # the edit found what the last read showed, then a hand edit came
    )
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl")
        await session.send("Read mod.py.")
        await session.send("Change f5 with sed.")
        await session.send("Read it again.")
        await session.send("Change f60.")
        (ws / "mod.py").write_text((ws / "mod.py").read_text() + "# by hand\n")
        await session.send("Read it again.")
    _first, _sed, after_sed, _edit, after_hand = _results(session)
    assert after_sed.startswith("1\tdef f0(x)") and "return x * 50 " in after_sed
    assert after_hand.startswith("1\tdef f0(x)") and "y = x + 1" in after_hand and "# by hand" in after_hand


async def test_an_edit_after_a_foreign_change_is_not_taken_for_the_sessions_own(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = _script(_call("read_file", path="mod.py"), _call("edit_file", path="mod.py", edits=[EDIT]),
                     _call("read_file", path="mod.py"))  # fmt: skip
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl")
        await session.send("Read mod.py.")
        (ws / "mod.py").write_text("# by hand\n" + BODY)  # before the session's edit
        await session.send("Change f60.")
        await session.send("Read it again.")
    again = _results(session)[-1]
    assert again.startswith("1\t# by hand") and "def f119(x)" in again


async def test_an_overlapping_read_returns_only_the_lines_not_shown_yet(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = _script(_call("read_file", path="mod.py", start_line=1, end_line=100),
                     _call("read_file", path="mod.py", start_line=51, end_line=150))  # fmt: skip
    recorder = BodyRecorder()
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", recorder=recorder)
        await session.send("Read the first 100 lines.")
        await session.send("Read lines 51-150.")
    _first, second = _results(session)
    assert second.startswith(f"Lines 51-100 of mod.py are as the read_file call {_call_ids(session)[0]} returned")
    body = second.splitlines()[1:]
    assert body[0].startswith("101\t") and body[-2].startswith("150\t") and body[-1] == "(lines 51-150 of 240)"
    assert not any(line.startswith(("51\t", "100\t")) for line in body)
    _extends(recorder.bodies)


async def test_after_a_compaction_the_whole_text_comes_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    settings = SessionSettings(context_window=8_000, compaction_ratio=1.0, compaction_keep_ratio=0.05)
    script = _script(_call("read_file", path="mod.py", start_line=1, end_line=100),
                     _call("read_file", path="mod.py", start_line=51, end_line=150), digest=True)  # fmt: skip
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", settings=settings)
        await session.send("Read the first 100 lines.")
        assert await session.compact(reason="test: the first copy is folded into a digest")
        await session.send("Read lines 51-150.")
    (again,) = _results(session)
    assert again.startswith("51\tdef f25(x)") and "150\t" in again


async def test_full_true_always_returns_everything(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = _script(
        _call("read_file", path="mod.py"),
        _call("read_file", path="mod.py", full=True),  # the same range, unchanged
        _call("read_file", path="mod.py", start_line=51, end_line=150, full=True),  # a range already shown
        _call("edit_file", path="mod.py", edits=[EDIT]),
        _call("read_file", path="mod.py", full=True),  # after the session's own edit
    )
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl")
        for text in ("Read.", "Read all.", "Read 51-150 all.", "Edit.", "Read all."):
            await session.send(text)
    first, same, overlap, _edit, after_edit = _results(session)
    assert same == first
    assert overlap.startswith("51\tdef f25(x)") and overlap.endswith("(lines 51-150 of 240)")
    assert after_edit.startswith("1\tdef f0(x)") and "122\t    y = x + 1" in after_edit and "241\t" in after_edit
