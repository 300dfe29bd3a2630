"""``reasonix acp`` driven by the official SDK's client side (``agent-client-protocol``), as an editor drives it: the
agent a subprocess of the SDK client, which is a subprocess of the test (tests/support/acp_sdk_client.py), the
emulator behind the agent. The SDK parses every message the agent sends into its own models, so a field name or a
shape the protocol does not have fails here (the transcript would carry an ``sdk_error``)."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from scenarios.emulator import Script, open_emulator
from tests.support.acp_sdk import agent_command, index_of, results, run_sdk_client, updates
from tests.support.leftovers import assert_gone
from tests.support.sockets import listen

from ..run_support import clean_env

READ = {"reasoning": "Read it first.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
EDIT = {
    "tool_calls": [
        {
            "name": "edit_file",
            "arguments": {"path": "calc.py", "edits": [{"old": "return a - b", "new": "return a + b"}]},
        }
    ]
}
BASH = {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 calc.py"}}]}
NO_CAPS: dict[str, bool] = {}
ALL_CAPS = {"readTextFile": True, "writeTextFile": True, "terminal": True}


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": list(replies)}]})


def _kinds(found: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(u["sessionUpdate"], u.get("status")) for u in found]


async def test_an_sdk_client_reads_edits_with_permission_cancels_and_loads_again(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    sc = _script(READ, EDIT, {"content": "Fixed add()."}, BASH, {"content": "It adds now."})
    async with open_emulator(script=sc) as emu:
        first = await run_sdk_client(
            {
                "agent": agent_command(emu.base_url),
                "capabilities": NO_CAPS,
                "permissions": {"edit": "allow_once", "execute": "cancel"},
                "steps": [
                    {"op": "initialize"},
                    {"op": "new_session", "cwd": str(ws)},
                    {"op": "prompt", "text": "fix add() in calc.py"},
                    {"op": "prompt", "text": "run it"},
                ],
            },
            tmp_path,
            env,
        )
        before = emu.stats()["sessions"]["executor"]
        init = results(first, "initialize")[0]["result"]
        assert init["protocolVersion"] == 1 and init["agentCapabilities"]["loadSession"] is True
        new = results(first, "new_session")[0]["result"]
        sid = new["sessionId"]
        assert new["modes"]["currentModeId"] == "ask"
        assert [m["id"] for m in new["modes"]["availableModes"]] == ["ask", "auto", "plan"]
        prompts = results(first, "prompt")
        assert [p["result"] for p in prompts] == [{"stopReason": "end_turn"}, {"stopReason": "cancelled"}]
        assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"

        # Turn one, in the order the client received it: thinking, the read, the edit (asked about), the answer.
        turn = first[index_of(first, "new_session") + 1 : index_of(first, "prompt", 0)]
        assert turn[0]["update"] == {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "Read"},
        }
        shown = [
            e for e in turn if not (e["kind"] == "update" and e["update"]["sessionUpdate"] == "agent_thought_chunk")
        ]
        steps = [(e["kind"], *_kinds([e["update"]])[0]) if e["kind"] == "update" else (e["kind"],) for e in shown]
        assert steps == [
            ("update", "tool_call", "in_progress"),
            ("update", "tool_call_update", "completed"),
            ("update", "tool_call", "in_progress"),
            ("permission",),
            ("update", "tool_call_update", "completed"),
            ("update", "agent_message_chunk", None),
            ("update", "agent_message_chunk", None),
        ]
        read_call, read_done, edit_call, asked, edit_done = (e.get("update", e) for e in shown[:5])
        assert read_call["kind"] == "read" and read_call["locations"] == [{"path": str(ws / "calc.py")}]
        assert "return a - b" in read_done["content"][0]["content"]["text"]
        assert edit_call["kind"] == "edit" and asked["toolCall"]["toolCallId"] == edit_call["toolCallId"]
        assert [o["optionId"] for o in asked["options"]] == ["allow_once", "allow_always", "reject_once"]
        diff = edit_done["content"][1]
        assert diff["type"] == "diff" and diff["path"] == str(ws / "calc.py")
        assert "a - b" in diff["oldText"] and "a + b" in diff["newText"]
        text = "".join(u["content"]["text"] for u in updates(turn) if u["sessionUpdate"] == "agent_message_chunk")
        assert text == "Fixed add()."
        # Turn two: the command is asked about, the user stops it there; nothing ran.
        second = first[index_of(first, "prompt", 0) + 1 :]
        assert [e["toolCall"]["kind"] for e in second if e["kind"] == "permission"] == ["execute"]

        again = await run_sdk_client(
            {
                "agent": agent_command(emu.base_url),
                "capabilities": NO_CAPS,
                "permissions": {"*": "reject_once"},
                "steps": [
                    {"op": "initialize"},
                    {"op": "load_session", "cwd": str(ws), "sessionId": sid},
                    {"op": "prompt", "text": "and now?", "sessionId": sid},
                ],
            },
            tmp_path,
            env,
        )
        after = emu.stats()["sessions"]["executor"]
    loaded = results(again, "load_session")[0]
    assert loaded["kind"] == "result" and loaded["result"]["modes"]["currentModeId"] == "ask"  # an object, not null
    replayed = updates(again[: index_of(again, "load_session")])
    # As the editor saw it live: the user's words without Reasonix's blocks, thoughts, the calls and their results.
    said = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert said == ["fix add() in calc.py", "run it"]
    assert "Fixed add()." in [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"]
    assert any(u["sessionUpdate"] == "agent_thought_chunk" for u in replayed)
    calls = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
    assert [c["kind"] for c in calls] == ["read", "edit", "execute"]
    done = {u["toolCallId"] for u in replayed if u["sessionUpdate"] == "tool_call_update"}
    assert {c["toolCallId"] for c in calls} == done
    assert results(again, "prompt")[0]["result"] == {"stopReason": "end_turn"}
    answer = updates(again, index_of(again, "load_session"))
    assert "".join(u["content"]["text"] for u in answer if u["sessionUpdate"] == "agent_message_chunk") == (
        "It adds now."
    )
    # The loaded conversation re-sends its journal's bytes: its one request hits nearly all of its prompt.
    hit = after["hit_tokens"] - before["hit_tokens"]
    prompt = after["prompt_tokens"] - before["prompt_tokens"]
    assert after["requests"] - before["requests"] == 1 and hit / prompt > 0.8, (hit, prompt)


async def test_a_client_with_fs_capabilities_gets_the_reads_and_the_edit(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    target = str(ws / "calc.py")
    unsaved = "def add(a, b):\n    return a - b  # the editor's buffer\n"
    edit = {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "calc.py", "edits": [{"old": "a - b  # the editor's buffer", "new": "a + b"}]},
            }
        ]
    }
    sc = _script(READ, edit, {"content": "Done."})
    async with open_emulator(script=sc) as emu:
        transcript = await run_sdk_client(
            {
                "agent": agent_command(emu.base_url),
                "capabilities": {"readTextFile": True, "writeTextFile": True},
                "buffers": {target: unsaved},
                "steps": [
                    {"op": "initialize"},
                    {"op": "new_session", "cwd": str(ws)},
                    {"op": "set_mode", "mode": "auto"},
                    {"op": "prompt", "text": "fix add()"},
                ],
            },
            tmp_path,
            env,
        )
    assert results(transcript, "prompt")[0]["result"] == {"stopReason": "end_turn"}
    sid = results(transcript, "new_session")[0]["result"]["sessionId"]
    # The read went to the client and the model saw its buffer, numbered as our own read_file numbers a file.
    reads = [e for e in transcript if e["kind"] == "fs/read_text_file"]
    assert reads == [{"kind": "fs/read_text_file", "path": target, "line": None, "limit": None}] * 2
    done = [u for u in updates(transcript) if u["sessionUpdate"] == "tool_call_update"]
    assert done[0]["content"][0]["content"]["text"] == "1\tdef add(a, b):\n2\t    return a - b  # the editor's buffer"
    # The edit matched the buffer the model read (its unsaved text is what it changed), was made in the workspace by
    # our own tool, and reached the client's write_text_file.
    writes = [e for e in transcript if e["kind"] == "fs/write_text_file"]
    assert writes == [
        {
            "kind": "fs/write_text_file",
            "sessionId": sid,
            "path": target,
            "content": "def add(a, b):\n    return a + b\n",
        }
    ]


async def test_a_client_with_a_terminal_runs_the_allowed_command_in_it_under_our_sandbox(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    command = "python3 -c 'print(6 * 7)'; exit 3"
    sc = _script({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"content": "It printed 42."})
    async with open_emulator(script=sc) as emu:
        transcript = await run_sdk_client(
            {
                "agent": agent_command(emu.base_url),
                "capabilities": {"terminal": True},
                "permissions": {"execute": "allow_once"},
                "steps": [{"op": "initialize"}, {"op": "new_session", "cwd": str(ws)}, {"op": "prompt", "text": "go"}],
            },
            tmp_path,
            env,
        )
    assert results(transcript, "prompt")[0]["result"] == {"stopReason": "end_turn"}
    turn = transcript[index_of(transcript, "new_session") + 1 : index_of(transcript, "prompt")]
    order = [e["kind"] if e["kind"] != "update" else e["update"]["sessionUpdate"] for e in turn]
    assert order[:8] == [
        "tool_call",
        "permission",  # the rules and the user first: nothing reached the terminal before the answer
        "terminal/create",
        "tool_call_update",  # the terminal, shown in the call
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
        "tool_call_update",
    ]
    call, create, shown, done = turn[0]["update"], turn[2], turn[3]["update"], turn[7]["update"]
    assert create["args"][-2:] == ["-c", command] and create["cwd"] == str(ws)
    assert create["outputByteLimit"] > 0 and "DEEPSEEK_API_KEY" not in create["env"]
    assert shown["toolCallId"] == call["toolCallId"] and shown["content"] == [
        {"type": "terminal", "terminalId": "term-1"}
    ]
    assert done["status"] == "failed" and done["content"][0]["content"]["text"] == "42\n[exit code 3]"


async def test_a_socket_gone_while_the_terminal_starts_does_not_stop_the_command(tmp_path: Path) -> None:
    """Another program's socket folder (outside /tmp, so the launch masks the socket in it) removed after the agent
    built the launch and before the editor's terminal started it: bubblewrap stops in its setup; the agent builds the
    launch again and the command runs once, in a second terminal."""
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    outside = Path(tempfile.mkdtemp(prefix="reasonix-acp-vanish-", dir="/var/tmp"))
    (outside / "gone").mkdir()
    server = listen(outside / "gone" / "agent.sock")
    command = "echo run >> runs; python3 -c 'print(6 * 7)'"
    sc = _script({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"content": "It printed 42."})
    try:
        async with open_emulator(script=sc) as emu:
            transcript = await run_sdk_client(
                {
                    "agent": agent_command(emu.base_url),
                    "capabilities": {"terminal": True},
                    "permissions": {"execute": "allow_once"},
                    "remove_before_first_terminal": str(outside / "gone"),
                    "steps": [
                        {"op": "initialize"},
                        {"op": "new_session", "cwd": str(ws)},
                        {"op": "prompt", "text": "go"},
                    ],
                },
                tmp_path,
                env,
            )
    finally:
        server.close()
        shutil.rmtree(outside, ignore_errors=True)
    assert results(transcript, "prompt")[0]["result"] == {"stopReason": "end_turn"}
    creates = [e for e in transcript if e["kind"] == "terminal/create"]
    assert len(creates) == 2, creates
    first, again = (e["args"] for e in creates)
    assert str(outside / "gone" / "agent.sock") in first and str(outside / "gone" / "agent.sock") not in again
    done = [e["update"] for e in transcript if e["kind"] == "update" and e["update"].get("status") == "completed"]
    assert done and done[-1]["content"][0]["content"]["text"] == "42\n[exit code 0]"
    assert (ws / "runs").read_text() == "run\n"


async def test_two_clients_with_different_capabilities_send_the_same_first_request(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    bodies: list[bytes] = []
    async with open_emulator(script=_script({"content": "A."}, {"content": "A."})) as emu:
        handle = emu.emulator.handle

        def recording(method: str, path: str, headers: Any, body: bytes) -> Any:
            if path.endswith("/chat/completions"):
                bodies.append(body)
            return handle(method, path, headers, body)

        emu.emulator.handle = recording  # type: ignore[method-assign]
        for caps in (NO_CAPS, ALL_CAPS):
            transcript = await run_sdk_client(
                {
                    "agent": agent_command(emu.base_url),
                    "capabilities": caps,
                    "steps": [
                        {"op": "initialize"},
                        {"op": "new_session", "cwd": str(ws)},
                        {"op": "prompt", "text": "explain calc.py"},
                    ],
                },
                tmp_path,
                env,
            )
            assert results(transcript, "prompt")[0]["result"] == {"stopReason": "end_turn"}
    assert len(bodies) == 2 and bodies[0] == bodies[1]


async def test_a_terminal_command_is_killed_at_its_timeout_and_released_when_the_turn_is_cancelled(
    tmp_path: Path,
) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    command = f"sleep 60; : {uuid.uuid4().hex}"  # a word of the sandbox's command line, this test's only
    slow = {"tool_calls": [{"name": "bash", "arguments": {"command": command, "timeout_s": 1}}]}
    stuck = {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    sc = _script(slow, {"content": "Too slow."}, stuck)
    async with open_emulator(script=sc) as emu:
        transcript = await run_sdk_client(
            {
                "agent": agent_command(emu.base_url),
                "capabilities": {"terminal": True},
                "steps": [
                    {"op": "initialize"},
                    {"op": "new_session", "cwd": str(ws)},
                    {"op": "set_mode", "mode": "auto"},
                    {"op": "prompt", "text": "wait"},
                ],
            },
            tmp_path,
            env,
        )
        assert_gone(command, "the command killed at its timeout is still running")
        # The cancel comes at once, so the editor's kill lands while bubblewrap starts, before its child armed
        # --die-with-parent: that child, then the command, ran on with no parent until Reasonix killed what is left.
        cancelled = await run_sdk_client(
            {
                "agent": agent_command(emu.base_url),
                "capabilities": {"terminal": True},
                "cancel_after": "terminal/create",
                "slow_sandbox_start": True,
                "steps": [
                    {"op": "initialize"},
                    {"op": "new_session", "cwd": str(ws)},
                    {"op": "set_mode", "mode": "auto"},
                    {"op": "prompt", "text": "wait again"},
                ],
            },
            tmp_path,
            env,
        )
    timed = [e["kind"] for e in transcript if e["kind"].startswith("terminal/")]
    assert timed == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/output",
        "terminal/release",
    ]
    done = [u for u in updates(transcript) if u["sessionUpdate"] == "tool_call_update" and u["status"] != "in_progress"]
    assert done[0]["status"] == "failed"
    assert done[0]["content"][0]["content"]["text"].endswith("[timed out after 1s; the editor's terminal was killed]")
    assert results(cancelled, "prompt")[0]["result"] == {"stopReason": "cancelled"}
    # The running call ends with a final update before the prompt's answer (else the editor shows it running).
    answered = index_of(cancelled, "prompt")
    started = [u["toolCallId"] for u in updates(cancelled[:answered]) if u["sessionUpdate"] == "tool_call"]
    final = [
        u
        for u in updates(cancelled[:answered])
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    ]
    assert started and [u["toolCallId"] for u in final] == started and final[-1]["status"] == "failed"
    kinds = [e["kind"] for e in cancelled if e["kind"].startswith("terminal/")]
    assert kinds[0] == "terminal/create" and kinds[-1] == "terminal/release"
    assert_gone(command, "the command of the cancelled turn is still running")
