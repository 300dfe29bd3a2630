"""What a tool call's events carry for a front end that reads their JSON (the dashboard): the arguments with every
text bounded, and the result's last lines; bounded whatever the call, and left out of the journal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.events import SessionEvent, ToolFinished, ToolStarted
from sessions.tool_batch import SHOWN_CHARS, SHOWN_ITEMS, TAIL_LINE_CHARS, TAIL_LINES, bounded_args, tail_lines

from .session_support import emulated, make_session

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3 * SHOWN_CHARS),
    lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=20,
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _lists(value: Any) -> list[list[Any]]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _lists(v)]
    if isinstance(value, list):
        return [value, *(x for v in value for x in _lists(v))]
    return []


@given(JSON)
def test_bounded_args_bound_every_text_and_list_and_keep_a_short_value_as_it_is(value: Any) -> None:
    shown = bounded_args(value)
    assert all(len(s) <= SHOWN_CHARS + 2 for s in _strings(shown))
    assert all(len(x) <= SHOWN_ITEMS for x in _lists(shown))
    json.dumps(shown)  # still JSON
    if all(len(s) <= SHOWN_CHARS for s in _strings(value)) and all(len(x) <= SHOWN_ITEMS for x in _lists(value)):
        assert shown == value


@given(st.text())
def test_a_long_text_keeps_its_head_and_says_it_was_cut(text: str) -> None:
    shown = bounded_args(text)
    if len(text) > SHOWN_CHARS:
        assert shown.endswith("\n…") and text.startswith(shown[:-2])
    else:
        assert shown == text


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"))))
def test_the_tail_is_the_last_lines_each_bounded_and_counts_them_all(rows: list[str]) -> None:
    text = "\n".join(rows)
    tail, lines = tail_lines(text)
    expected = text.rstrip("\n").splitlines()
    assert lines == len(expected)
    shown = tail.split("\n") if tail or expected else []
    assert len(shown) <= TAIL_LINES and all(len(row) <= TAIL_LINE_CHARS for row in shown)
    if expected and all(len(row) <= TAIL_LINE_CHARS for row in expected):
        assert shown == expected[-TAIL_LINES:]


async def test_a_long_output_and_a_big_edit_reach_the_events_bounded_and_stay_out_of_the_journal(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.py").write_text("x = 1\n")
    new = "".join(f"y{i} = {i}\n" for i in range(2000))
    calls = (
        ToolCallSpec(name="bash", arguments={"command": "seq 1 30000"}),
        ToolCallSpec(name="edit_file", arguments={"path": "big.py", "edits": [{"old": "x = 1\n", "new": new}]}),
    )
    script = Script(
        sessions=(SessionSpec(key="executor", replies=(ReplySpec(tool_calls=calls), ReplySpec(content="ok"))),)
    )
    events: list[SessionEvent] = []
    journal = ws / ".reasonix" / "s.jsonl"
    async with emulated(script) as (_emu, client):
        session = make_session(client, ws, journal=journal, events=events)
        await session.send("count, then grow big.py")
    started = {e.name: e for e in events if isinstance(e, ToolStarted)}
    finished = {e.name: e for e in events if isinstance(e, ToolFinished)}
    bash = finished["bash"].model_dump(mode="json")
    *numbers, status = bash["tail"].split("\n")  # the last line is the command's status
    assert numbers == [str(i) for i in range(30000 - TAIL_LINES + 2, 30001)] and status.startswith("[exit code 0")
    assert bash["lines"] == 30001
    edit = started["edit_file"].model_dump(mode="json")
    shown_new = edit["args_shown"]["edits"][0]["new"]
    assert shown_new.startswith("y0 = 0\ny1 = 1\n") and shown_new.endswith("\n…") and len(shown_new) <= SHOWN_CHARS + 2
    assert len(edit["args_preview"]) <= 160  # as before
    assert (ws / "big.py").read_text() == new  # the call itself had its arguments in full
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    logged = [
        r["event"] for r in records if r["t"] == "event" and r["event"].get("kind") in ("tool_started", "tool_finished")
    ]
    assert len(logged) == 4 and not any("args_shown" in e or "tail" in e for e in logged)
