"""The real Claude Agent SDK for Python passes ``mcp_servers`` (as Claude Code's ``--mcp-config``) and
``strict_mcp_config``: ``reasonix -p`` starts those servers under the same sandbox and checks as a workspace's
``.mcp.json`` (the path ACP's ``session/new`` servers take), offers their tools, and lists them with their state in
the ``init`` line; ``--strict-mcp-config`` leaves out the user's configured servers. The model calls the notes
server's tools through the SDK-driven run. Every line validates against the SDK's generated schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import claude_agent_sdk as sdk
import pytest

from tests.support.claude_sdk import ANSWER, lines_of, sdk_script, sdk_workspace, tee_cli, validate_lines

from ..mcp.support import NOTES_SERVER
from ..run_support import clean_env, emulator_process, reasonix

WRITE = {"tool_calls": [{"name": "mcp__desk__write_note", "arguments": {"name": "todo", "text": "buy milk"}}]}
READ_BACK = {"tool_calls": [{"name": "mcp__desk__read_note", "arguments": {"name": "todo"}}]}


def _user_server(env: dict[str, str]) -> None:
    """The user's own configured server, ``notes``."""
    user = Path(env["XDG_CONFIG_HOME"]) / "reasonix" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        f"[mcp.servers.notes]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(NOTES_SERVER))}]\n"
    )


def _desk() -> dict[str, Any]:
    return {"type": "stdio", "command": sys.executable, "args": [str(NOTES_SERVER), "desk"]}


@pytest.mark.bwrap
async def test_the_sdks_mcp_servers_run_beside_the_users_and_the_model_calls_their_tools(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    _user_server(env)
    with emulator_process(sdk_script(WRITE, READ_BACK, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        options = sdk.ClaudeAgentOptions(
            cli_path=str(cli), cwd=str(ws), env=env, mcp_servers={"desk": _desk()}, permission_mode="acceptEdits"
        )
        got = [m async for m in sdk.query(prompt="note it", options=options)]
    init = next(m for m in got if isinstance(m, sdk.SystemMessage) and m.subtype == "init")
    assert sorted(init.data["mcp_servers"], key=lambda s: s["name"]) == [
        {"name": "desk", "status": "connected"},
        {"name": "notes", "status": "connected"},
    ]
    assert {"mcp__desk__read_note", "mcp__notes__read_note"} <= set(init.data["tools"])
    assert "--mcp-config" not in init.data["ignored"]
    results = [b for m in got if isinstance(m, sdk.UserMessage) for b in m.content]
    assert [r.is_error for r in results] == [False, False]
    assert "wrote 8 characters" in str(results[0].content) and "buy milk" in str(results[1].content)
    assert not (ws / "todo.txt").exists()  # the server ran in a directory of its own, not in the workspace
    (result,) = [m for m in got if isinstance(m, sdk.ResultMessage)]
    assert result.subtype == "success"
    validate_lines(lines_of(log))


@pytest.mark.bwrap
async def test_strict_mcp_config_means_only_the_sdks_servers_and_its_in_process_server_answers(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    _user_server(env)
    pinged: list[dict[str, Any]] = []

    @sdk.tool("ping", "answers pong", {"who": str})
    async def ping(args: dict[str, Any]) -> dict[str, Any]:
        pinged.append(args)
        return {"content": [{"type": "text", "text": f"pong to {args['who']}"}]}

    inside = sdk.create_sdk_mcp_server("inside", tools=[ping])
    servers: dict[str, Any] = {"desk": _desk(), "inside": inside}
    call = {"tool_calls": [{"name": "mcp__inside__ping", "arguments": {"who": "ada"}}]}
    with emulator_process(sdk_script(READ_BACK, call, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        options = sdk.ClaudeAgentOptions(
            cli_path=str(cli), cwd=str(ws), env=env, mcp_servers=servers, strict_mcp_config=True
        )
        got = [m async for m in sdk.query(prompt="read the note, then ping", options=options)]
    init = next(m for m in got if isinstance(m, sdk.SystemMessage) and m.subtype == "init")
    assert sorted(init.data["mcp_servers"], key=lambda s: s["name"]) == [
        {"name": "desk", "status": "connected"},
        {"name": "inside", "status": "connected"},  # served inside the SDK, through mcp_message requests
    ]
    assert {"mcp__desk__read_note", "mcp__inside__ping"} <= set(init.data["tools"])
    assert not any(name.startswith("mcp__notes__") for name in init.data["tools"])  # strict: not the user's
    read, pong = [b for m in got if isinstance(m, sdk.UserMessage) for b in m.content]
    assert read.is_error and "desk.read_note failed" in str(read.content)  # no such note: the desk server said so
    assert not pong.is_error and "pong to ada" in str(pong.content) and pinged == [{"who": "ada"}]
    (result,) = [m for m in got if isinstance(m, sdk.ResultMessage)]
    assert result.subtype == "success"
    lines = lines_of(log)
    validate_lines(lines)
    asked = [line["request"] for line in lines if line["type"] == "control_request"]
    assert {r["subtype"] for r in asked} == {"mcp_message"} and {r["server_name"] for r in asked} == {"inside"}


def test_an_mcp_config_that_loosens_the_sandbox_or_does_not_parse_is_refused(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    loose = json.dumps({"mcpServers": {"desk": {**_desk(), "sandbox": False}}})
    done = reasonix("-p", "hi", "--workspace", str(ws), "--mcp-config", loose, env=env)
    assert done.returncode == 2 and "cannot loosen a server's sandbox" in done.stderr, done.stderr
    (ws / "servers.json").write_text('{"mcpServers": [1]}')
    done = reasonix("-p", "hi", "--workspace", str(ws), "--mcp-config", "servers.json", env=env)
    assert done.returncode == 2 and "servers.json" in done.stderr and "mcpServers" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    named = json.dumps({"mcpServers": {"a b": _desk()}})
    done = reasonix("-p", "hi", "--workspace", str(ws), "--mcp-config", named, env=env)
    assert done.returncode == 2 and "mcpServers.a b: name a server with letters" in done.stderr, done.stderr
    assert "pydantic" not in done.stderr
