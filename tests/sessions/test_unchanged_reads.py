"""An unchanged re-read is a short note, not a second copy (DESIGN §5 "Unchanged re-reads"): the same path and range,
the same content, and no compaction since the earlier result. Anything else returns the text as usual."""

from __future__ import annotations

from pathlib import Path

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.accounting import tokens
from sessions.session import Session, SessionSettings
from sessions.wire.messages import ToolMessage

from .session_support import emulated, make_session

BODY = "".join(f"def f{i}(x):\n    return x * {i}  # a line of a realistic module\n" for i in range(120))


def _read(**arguments: object) -> ReplySpec:
    return ReplySpec(tool_calls=(ToolCallSpec(name="read_file", arguments=arguments),))


def _script(*reads: dict[str, object], digest: bool = False) -> Script:
    replies = tuple(r for args in reads for r in (_read(**args), ReplySpec(content="Read.")))
    sessions = [SessionSpec(key="executor", replies=replies)]
    if digest:
        digest_reply = ReplySpec(content="Digest: the user had mod.py read; it defines f0..f119.")
        compress = "You compress the history"
        sessions.insert(0, SessionSpec(key="digest", system_contains=compress, replies=(digest_reply,)))
    return Script(sessions=tuple(sessions))


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "mod.py").write_text(BODY)
    return ws


def _results(session: Session) -> list[ToolMessage]:
    return [m for m in session.log.messages if isinstance(m, ToolMessage)]


def _call_ids(session: Session) -> list[str]:
    return [c.id for m in session.log.messages for c in (getattr(m, "tool_calls", None) or ())]


async def test_an_unchanged_re_read_costs_a_few_dozen_tokens_and_names_the_earlier_call(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    async with emulated(_script({"path": "mod.py"}, {"path": "./mod.py"})) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl")
        await session.send("Read mod.py.")
        await session.send("Read it again.")
    first, second = _results(session)
    assert "def f119(x)" in first.content and tokens.count(first.content) > 2_000
    assert tokens.count(second.content) < 60, second.content
    assert second.content.startswith("Unchanged: mod.py is exactly what the read_file call ")
    assert _call_ids(session)[0] in second.content and "still above" in second.content


async def test_a_changed_file_is_read_in_full_and_a_range_already_shown_is_a_note(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    reads: tuple[dict[str, object], ...] = (
        {"path": "mod.py", "start_line": 1, "end_line": 20},
        {"path": "mod.py"},  # the file changed since the first read: its text
        {"path": "mod.py", "start_line": 1, "end_line": 20},  # lines the second read showed: a note
    )
    async with emulated(_script(*reads)) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl")
        await session.send("Read its first 20 lines.")
        (ws / "mod.py").write_text("# edited\n" + BODY)
        await session.send("Read it again.")
        await session.send("And the first 20 lines.")
    head, changed, head_again = (m.content for m in _results(session))
    assert "(lines 1-20 of 240)" in head
    assert changed.startswith("1\t# edited") and "def f119(x)" in changed
    assert head_again.startswith("Unchanged: lines 1-20 of mod.py are as the read_file call ")
    assert _call_ids(session)[1] in head_again and tokens.count(head_again) < 60


async def test_after_a_compaction_a_re_read_returns_the_text(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    settings = SessionSettings(context_window=8_000, compaction_ratio=1.0, compaction_keep_ratio=0.05)
    async with emulated(_script({"path": "mod.py"}, {"path": "mod.py"}, digest=True)) as (_emu, client):
        session = make_session(client, ws, journal=ws / "s.jsonl", settings=settings)
        await session.send("Read mod.py.")
        assert await session.compact(reason="test: the first copy is folded into a digest")
        await session.send("Read it again.")
    (again,) = _results(session)  # the first result went into the digest
    assert "def f119(x)" in again.content and not again.content.startswith("Unchanged")
