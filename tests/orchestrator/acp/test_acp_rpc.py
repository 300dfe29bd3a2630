"""``reasonix acp`` over its real pipes with a bare JSON-RPC client (tests/support/acp_trio_client.py): what an SDK
client would never send (unknown methods, unknown sessions, a bad ``cwd``) is answered with JSON-RPC errors, and the
connection goes on. The protocol flows themselves are driven by the SDK's client in test_acp_sdk.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio

from scenarios.emulator import Script, open_emulator
from tests.support.acp_trio_client import AcpClient, AnswerError, acp_agent

from ..run_support import ROOT, clean_env


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": list(replies)}]})


def _prompt(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


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


async def test_requests_piped_in_before_standard_input_closes_are_all_answered(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}},
    ]
    piped = "".join(json.dumps(line) + "\n" for line in lines).encode()
    with trio.fail_after(120):
        done = await trio.run_process(
            [sys.executable, "-m", "orchestrator", "acp", "--base-url", "http://127.0.0.1:9"],
            stdin=piped,
            capture_stdout=True,
            capture_stderr=True,
            env=env,
            cwd=str(ROOT),
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert sorted(a["id"] for a in answers) == [1, 2] and all("result" in a for a in answers), answers


async def test_a_permission_request_the_client_answers_with_an_error_gets_the_call_an_error_result(
    tmp_path: Path,
) -> None:
    """Issue 44: the editor failing ``session/request_permission`` must not leave the call unanswered (DeepSeek and
    the strict emulator refuse the next request with a 400): the call gets an error result, the turn goes on."""
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    bash = {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > out.txt"}}]}
    sc = _script(bash, {"content": "The editor could not ask you; nothing ran."}, {"content": "Still here."})
    asked: list[str] = []

    async def on_request(client: AcpClient, method: str, params: dict[str, Any]) -> Any:
        asked.append(method)
        if method == "session/request_permission":
            raise AnswerError(-32603, "the permission dialog crashed")
        raise AssertionError(method)

    async with open_emulator(script=sc) as emu, acp_agent(emu.base_url, env, on_request) as client:
        await client.request("initialize", {"protocolVersion": 1})
        new = await client.request("session/new", {"cwd": str(ws), "mcpServers": []})
        sid = new["result"]["sessionId"]
        first = await client.request("session/prompt", _prompt(sid, "write out.txt"))
        second = await client.request("session/prompt", _prompt(sid, "and now?"))
        served = emu.stats()["sessions"]
    assert asked == ["session/request_permission"]
    assert first.get("result") == {"stopReason": "end_turn"}, first
    assert second.get("result") == {"stopReason": "end_turn"}, second
    assert not (ws / "out.txt").exists()
    assert sum(s["requests"] for s in served.values()) == 3  # none refused: every call was answered
    shown = [u for u in client.updates(sid) if u["sessionUpdate"] == "tool_call_update"]
    assert shown and shown[-1]["status"] == "failed"
