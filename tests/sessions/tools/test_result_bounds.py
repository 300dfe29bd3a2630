"""One bound on what a tool result may hold (issue 11 item 3): the session's cap and the tools' own windows agree.

A read that the tool cuts must never be cut again by the session, so its continuation hint names the first line the
model has not seen; and the journal keeps what the model saw, not the full output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.session import SessionSettings
from sessions.wire.messages import ToolMessage
from tests.sessions.session_support import emulated, make_session


def _one_call(name: str, **arguments: object) -> Script:
    replies = (ReplySpec(tool_calls=(ToolCallSpec(name=name, arguments=dict(arguments)),)), ReplySpec(content="ok"))
    return Script(sessions=(SessionSpec(key="executor", replies=replies),))


async def _result_of(ws: Path, script: Script, settings: SessionSettings) -> str:
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=ws / ".reasonix" / "s.jsonl", settings=settings)
        await session.send("go")
    message = session.log[2].message
    assert isinstance(message, ToolMessage)
    return message.content


@pytest.mark.parametrize("cap", [24_000, 4_000])
async def test_a_long_read_is_cut_once_and_its_hint_names_the_first_unseen_line(tmp_path: Path, cap: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # ~105 characters a line: the 400-line window is ~42k characters, more than either cap.
    (ws / "big.py").write_text("".join(f"value_{n:05} = '{'x' * 84}'  # line {n}\n" for n in range(1, 2001)))
    content = await _result_of(ws, _one_call("read_file", path="big.py"), SessionSettings(tool_result_max_chars=cap))
    assert len(content) <= cap
    assert "cut here" not in content
    numbered = [int(line.split("\t", 1)[0]) for line in content.split("\n") if re.match(r"\d+\t", line)]
    assert numbered == list(range(1, len(numbered) + 1))  # every line up to the hint, none cut out of the middle
    hint = re.search(r"call read_file with start_line=(\d+)", content)
    assert hint is not None and int(hint.group(1)) == numbered[-1] + 1


async def test_the_journal_keeps_what_the_model_saw_and_the_full_output_once_outside_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "huge.txt").write_text("".join(f"{n:07} {'y' * 92}\n" for n in range(10_000)))  # 1 MB
    content = await _result_of(ws, _one_call("bash", command="cat huge.txt"), SessionSettings())
    journal = ws / ".reasonix" / "s.jsonl"
    assert journal.stat().st_size < 200_000  # the bounded result, not the 1 MB output
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    results = [r for r in records if r["t"] == "msg" and json.loads(r["raw"])["role"] == "tool"]
    assert [json.loads(r["raw"])["content"] for r in results] == [content]
    pointers = [r["event"] for r in records if r["t"] == "event" and r["event"].get("kind") == "tool_full_text"]
    assert len(pointers) == 1 and "text" not in pointers[0]
    kept = journal.parent / pointers[0]["path"]  # beside the journal
    assert kept.is_file() and kept.is_relative_to(ws / ".reasonix") and kept.stat().st_size <= 2_100_000
    assert "0009999 " in kept.read_text() and "0005000 " in kept.read_text()
    assert len(list((ws / ".reasonix").rglob("*"))) <= 4  # the journal, the kept output and its folder
