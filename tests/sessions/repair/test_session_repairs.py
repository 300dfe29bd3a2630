"""Issue 31 through a real session against the emulator: the session offers its tools to the repair layer, so a call
written in prose runs without an extra request, a polling tool is never storm-suppressed, and every request is the
previous one with messages appended, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.events import SessionEvent, ToolFinished
from sessions.session import SessionSettings
from tests.sessions.repair.support import is_append, repair_session
from tests.sessions.session_support import BodyRecorder, emulated


async def test_a_prose_call_runs_without_an_extra_request_and_the_requests_only_append(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
    written = json.dumps({"name": "read_file", "arguments": {"path": "app.py"}})
    replies = (
        ReplySpec(reasoning=f"The user says add() is wrong, so I should call {written} to check it."),
        ReplySpec(reasoning="It subtracts.", content="add() subtracts instead of adding."),
    )
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    recorder, events = BodyRecorder(), list[SessionEvent]()
    async with emulated(script) as (_emu, client):
        session = repair_session(client, ws, recorder, events)
        result = await session.send("Why is add() wrong?")
    assert result.status == "done" and result.requests == 2 and result.failures == 1  # the scavenge is reported
    assert [e.name for e in events if isinstance(e, ToolFinished)] == ["read_file"]
    assert (
        b"return a - b" in recorder.bodies[1] and json.dumps(written)[1:-1].encode() in recorder.bodies[1]
    )  # as written
    assert is_append(recorder.bodies[0], recorder.bodies[1])


async def test_a_polling_tool_is_never_storm_suppressed_in_arepair_session(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    poll = ReplySpec(tool_calls=(ToolCallSpec(name="job_output", arguments={"job_id": "build-1"}),))
    replies = (*(poll,) * 5, ReplySpec(content="The build is still running."))
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    recorder, events = BodyRecorder(), list[SessionEvent]()
    async with emulated(script) as (_emu, client):
        session = repair_session(client, ws, recorder, events)
        result = await session.send("Wait for the build.")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert result.status == "done" and result.failures == 0
    assert [(e.name, e.is_error, e.preview) for e in finished] == [("job_output", False, "job build-1: running")] * 5
    assert all(is_append(a, b) for a, b in zip(recorder.bodies, recorder.bodies[1:], strict=False))


async def test_the_sessions_setting_caps_the_calls_taken_from_one_replys_text(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a.py", "b.py"):
        (ws / name).write_text(f"# {name}\n")
    first, second = (json.dumps({"name": "read_file", "arguments": {"path": p}}) for p in ("a.py", "b.py"))
    replies = (
        ReplySpec(reasoning=f"I should call {first} and then call {second} to compare them."),
        ReplySpec(reasoning="Done.", content="Compared."),
    )
    script = Script(sessions=(SessionSpec(key="executor", replies=replies),))
    for cap, expected in ((1, ["read_file"]), (3, ["read_file", "read_file"])):
        recorder, events = BodyRecorder(), list[SessionEvent]()
        async with emulated(script) as (_emu, client):
            session = repair_session(client, ws, recorder, events, SessionSettings(max_text_calls=cap))
            result = await session.send("Compare a.py and b.py.")
        assert result.status == "done"
        assert [e.name for e in events if isinstance(e, ToolFinished) and not e.is_error] == expected
