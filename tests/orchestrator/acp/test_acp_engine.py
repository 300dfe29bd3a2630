"""Issue 45: an ACP session is the same executor conversation as every other front end's
(:func:`orchestrator.launch.open_conversation`). Through the real ``reasonix acp`` process: the session lists the
user's MCP tools and those of a server the editor passes in ``session/new``, and a turn that wrote is checkpointed,
so ``reasonix undo`` takes it back."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from scenarios.emulator import Script, open_emulator
from tests.support.acp_trio_client import AcpClient, acp_agent
from tests.support.conversation import record_bodies, tool_names
from tests.support.git_repo import user_git

from ..mcp.support import NOTES_SERVER
from ..run_support import clean_env, reasonix


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": list(replies)}]})


def _prompt(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


async def _never(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
    raise AssertionError(f"nothing should ask the editor: {method}")


async def test_a_session_lists_the_users_mcp_tools_and_the_editors_server(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    user = Path(env["XDG_CONFIG_HOME"]) / "reasonix" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        f"[mcp.servers.notes]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(NOTES_SERVER))}]\n"
    )
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    editors = {"name": "desk", "command": sys.executable, "args": [str(NOTES_SERVER), "desk"], "env": []}
    bodies: list[bytes] = []
    async with open_emulator(script=_script({"content": "Hello."})) as emu:
        record_bodies(emu, bodies)
        async with acp_agent(emu.base_url, env, _never) as client:
            await client.request("initialize", {"protocolVersion": 1})
            new = await client.request("session/new", {"cwd": str(ws), "mcpServers": [editors]})
            sid = new["result"]["sessionId"]
            done = await client.request("session/prompt", _prompt(sid, "hello"))
    assert done.get("result") == {"stopReason": "end_turn"}, done
    (body,) = bodies
    names = tool_names(body)
    assert {"mcp__notes__read_note", "mcp__notes__write_note"} <= set(names)  # the user's server
    assert {"mcp__desk__read_note", "mcp__desk__write_note"} <= set(names)  # the editor's
    assert "read_file" in names


async def test_a_bad_editor_server_is_refused_with_the_reason(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    async with open_emulator(script=_script({"content": "Hello."})) as emu, acp_agent(emu.base_url, env, _never) as c:
        await c.request("initialize", {"protocolVersion": 1})
        bad = await c.request("session/new", {"cwd": str(ws), "mcpServers": [{"name": "a b", "command": "x"}]})
        neither = await c.request("session/new", {"cwd": str(ws), "mcpServers": [{"name": "ab"}]})
    assert "letters, digits" in bad["error"]["message"]
    assert "does not parse" in neither["error"]["message"]


@pytest.mark.git
async def test_an_acp_turn_is_checkpointed_and_reasonix_undo_takes_it_back(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    user_git(ws, "init", "-q", "-b", "main")
    (ws / "notes.md").write_text("before\n")
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "after\n"}}]}
    asked: list[str] = []

    async def allow(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
        asked.append(method)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    script = _script(write, {"content": "Rewrote the notes."})
    async with open_emulator(script=script) as emu, acp_agent(emu.base_url, env, allow) as client:
        await client.request("initialize", {"protocolVersion": 1})
        new = await client.request("session/new", {"cwd": str(ws), "mcpServers": []})
        sid = new["result"]["sessionId"]
        done = await client.request("session/prompt", _prompt(sid, "rewrite the notes"))
    assert done.get("result") == {"stopReason": "end_turn"}, done
    assert asked == ["session/request_permission"]  # ask mode: the editor approved the write
    assert (ws / "notes.md").read_text() == "after\n"
    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert sid in listed.stdout and "turn-1" in listed.stdout, listed.stdout + listed.stderr
    undone = reasonix("undo", "--workspace", str(ws), env=env)
    assert undone.returncode == 0, undone.stderr
    assert (ws / "notes.md").read_text() == "before\n"
