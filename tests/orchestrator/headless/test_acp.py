"""``reasonix acp`` driven as an editor drives it: a subprocess, JSON-RPC over its real pipes, the emulator behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from scenarios.emulator import Script, open_emulator

from ..run_support import clean_env
from .acp_client import AcpClient, acp_agent

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
INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}}}


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": list(replies)}]})


def _prompt(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def test_an_editor_session_reads_edits_with_permission_cancels_and_loads_again(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    asked: list[dict[str, Any]] = []

    async def on_request(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
        assert method == "session/request_permission", method
        asked.append(params)
        if params["toolCall"]["kind"] == "execute":  # the second turn: the user cancels while asked
            await client.notify("session/cancel", {"sessionId": params["sessionId"]})
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    sc = _script(READ, EDIT, {"content": "Fixed add()."}, BASH, {"content": "It adds now."})
    async with open_emulator(script=sc) as emu:
        async with acp_agent(emu.base_url, env, on_request) as client:
            init = await client.request("initialize", INIT)
            assert init["result"]["protocolVersion"] == 1 and init["result"]["agentCapabilities"]["loadSession"]
            new = (await client.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]
            sid = new["sessionId"]
            assert new["modes"]["currentModeId"] == "ask"
            answer = await client.request("session/prompt", _prompt(sid, "fix add() in calc.py"))
            assert answer["result"] == {"stopReason": "end_turn"}, answer
            first = client.updates(sid)
            cancelled = await client.request("session/prompt", _prompt(sid, "run it"))
            assert cancelled["result"] == {"stopReason": "cancelled"}, cancelled
        assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
        assert first[0] == {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Read"}}
        first = [u for u in first if u["sessionUpdate"] != "agent_thought_chunk"]
        kinds = [(u["sessionUpdate"], u.get("status")) for u in first]
        assert kinds == [
            ("tool_call", "in_progress"),
            ("tool_call_update", "completed"),
            ("tool_call", "in_progress"),
            ("tool_call_update", "completed"),
            ("agent_message_chunk", None),
            ("agent_message_chunk", None),
        ]
        edit_call, edit_done = first[2], first[3]
        assert edit_call["kind"] == "edit" and edit_call["locations"] == [{"path": str(ws / "calc.py")}]
        diff = edit_done["content"][1]
        assert diff["type"] == "diff" and "a - b" in diff["oldText"] and "a + b" in diff["newText"]
        # The editor was asked about the edit (the call it had been shown) and, in turn two, about the command.
        assert [a["toolCall"]["toolCallId"] for a in asked[:1]] == [edit_call["toolCallId"]]
        assert [a["toolCall"]["kind"] for a in asked] == ["edit", "execute"]
        before = emu.stats()["sessions"]["executor"]

        async def no_requests(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
            raise AssertionError(f"unexpected {method}")

        async with acp_agent(emu.base_url, env, no_requests) as again:
            await again.request("initialize", INIT)
            loaded = await again.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
            assert "error" not in loaded, loaded
            replayed = again.updates(sid)
            assert replayed[0] == {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": replayed[0]["content"]["text"]},
            }
            assert "fix add() in calc.py" in replayed[0]["content"]["text"]
            answer = await again.request("session/prompt", _prompt(sid, "and now?"))
            assert answer["result"] == {"stopReason": "end_turn"}, answer
        after = emu.stats()["sessions"]["executor"]
    text = "".join(
        u["content"]["text"] for u in again.updates(sid)[len(replayed) :] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "It adds now."
    # The loaded conversation re-sends its journal's bytes: the next request hits nearly all of its prompt.
    hit = after["hit_tokens"] - before["hit_tokens"]
    prompt = after["prompt_tokens"] - before["prompt_tokens"]
    assert after["requests"] - before["requests"] == 1 and hit / prompt > 0.8, (hit, prompt)


async def test_a_client_with_fs_capabilities_receives_the_edit(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    written: list[dict[str, Any]] = []
    got_write = trio.Event()

    async def on_request(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
        if method == "fs/write_text_file":
            written.append(params)
            got_write.set()
            return None
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    init = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}}
    async with (
        open_emulator(script=_script(EDIT, {"content": "Done."})) as emu,
        acp_agent(emu.base_url, env, on_request) as client,
    ):
        await client.request("initialize", init)
        sid = (await client.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
        await client.request("session/set_mode", {"sessionId": sid, "modeId": "auto"})
        answer = await client.request("session/prompt", _prompt(sid, "fix add()"))
        assert answer["result"] == {"stopReason": "end_turn"}, answer
        with trio.fail_after(30):
            await got_write.wait()
    assert written == [{"sessionId": sid, "path": str(ws / "calc.py"), "content": "def add(a, b):\n    return a + b\n"}]


async def test_unknown_methods_and_sessions_are_json_rpc_errors(tmp_path: Path) -> None:
    env = clean_env(tmp_path)

    async def on_request(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
        raise AssertionError(method)

    async with open_emulator(script=_script()) as emu, acp_agent(emu.base_url, env, on_request) as client:
        unknown = await client.request("nes/start", {})
        assert unknown["error"]["code"] == -32601
        missing = await client.request("session/prompt", _prompt("nope", "hi"))
        assert missing["error"]["code"] == -32602 and "session/new" in missing["error"]["message"]
        bad = await client.request("session/new", {"cwd": str(tmp_path / "missing"), "mcpServers": []})
        assert bad["error"]["code"] == -32000 and "not a directory" in bad["error"]["message"]
