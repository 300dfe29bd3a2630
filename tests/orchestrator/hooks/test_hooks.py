"""Hooks in a real session against the emulator: real hook processes, real files; the bytes each request sends."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from orchestrator.build import RunOptions
from orchestrator.config.hooks import HookConfig
from orchestrator.config.model import load_config
from orchestrator.conversation import run_task
from orchestrator.hooks.gate import HookGate
from orchestrator.hooks.hooks import Hooks
from scenarios.emulator import RunningEmulator, Script, open_emulator
from scenarios.emulator.app import Response
from sessions.permissions import PermissionGate, Rules
from sessions.tools.base import ToolContext
from sessions.tools.shell.bash import BashArgs, BashTool
from sessions.wire.client import ClientSettings, DeepSeekClient
from tests.support.tasks import task_conversation

CLAUDE_STYLE = """\
import json, sys
data = json.load(sys.stdin)
if data["hook_event_name"] == "PreToolUse" and "rm " in data["tool_input"].get("command", ""):
    print("rm is not allowed here; move files to trash/ instead", file=sys.stderr)
    sys.exit(2)
"""


def _record(emu: RunningEmulator, bodies: list[bytes]) -> None:
    handle = emu.emulator.handle

    def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            bodies.append(body)
        return handle(method, path, headers, body)

    emu.emulator.handle = record  # type: ignore[method-assign]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "notes.txt").write_text("keep me\n")
    (ws / "guard.py").write_text(CLAUDE_STYLE)
    return ws


SCRIPT = {
    "sessions": [
        {
            "key": "executor",
            "replies": [
                {"tool_calls": [{"name": "bash", "arguments": {"command": "rm notes.txt"}}]},
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                {"content": "Left notes.txt alone."},
            ],
        }
    ]
}


async def _run(tmp_path: Path, hooks: list[HookConfig]) -> tuple[Any, list[bytes], Path, list[str]]:
    ws = _workspace(tmp_path)
    bodies: list[bytes] = []
    notices: list[str] = []
    resolved = load_config(workspace=ws, env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    found = Hooks(hooks, ws, on_notice=notices.append) if hooks else None
    gate = HookGate(Rules.parse(), mode="auto", hooks=found) if found else PermissionGate(Rules.parse(), mode="auto")
    async with open_emulator(script=Script.model_validate(SCRIPT)) as emu:
        _record(emu, bodies)
        client = DeepSeekClient(
            base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01, backoff_jitter_s=0)
        )
        async with client:
            run = task_conversation(
                resolved,
                ws,
                options=RunOptions(gate=gate),
                client=client,
                hooks=found,
                memory_config_dir=tmp_path / "cfg",
            )
            summary = await run_task(run, "Clean up notes.txt")
            run.close()
    return summary, bodies, ws, notices


def _hooks() -> list[HookConfig]:
    return [
        HookConfig(event="PreToolUse", matcher="bash", command=f"{sys.executable} guard.py"),
        HookConfig(event="post_tool", matcher="read_file", command='echo \'{"context": "notes.txt is owned by ops"}\''),
        HookConfig(event="user_prompt", command="echo 'The user prefers small diffs.'"),
    ]


async def test_a_claude_code_style_pre_tool_hook_blocks_bash_and_the_model_reads_why(tmp_path: Path) -> None:
    summary, bodies, ws, notices = await _run(tmp_path, _hooks())
    assert summary.status == "done", summary
    assert (ws / "notes.txt").read_text() == "keep me\n"  # the rm never ran
    assert notices == []
    second = json.loads(bodies[1])["messages"]
    assert second[-1]["role"] == "tool"
    assert second[-1]["content"] == ("refused by a pre_tool hook: rm is not allowed here; move files to trash/ instead")
    first_user = json.loads(bodies[0])["messages"][1]["content"]
    assert first_user.startswith("<hook-context>\nThe user prefers small diffs.\n</hook-context>")
    third = json.loads(bodies[2])["messages"]
    assert third[-1]["content"].endswith("<hook-context>\nnotes.txt is owned by ops\n</hook-context>")


async def test_what_hooks_add_is_appended_bytes_and_the_prefix_is_as_without_hooks(tmp_path: Path) -> None:
    _, hooked, _, _ = await _run(tmp_path / "a", _hooks())
    _, plain, _, _ = await _run(tmp_path / "b", [])
    for bodies in (hooked, plain):
        for earlier, later in itertools.pairwise(bodies):
            assert later.startswith(earlier[:-2])  # every request extends the one before, byte for byte
    # The prefix (everything up to the first user message) is the same bytes with or without hooks.
    cut = plain[0].index(b'{"role":"user"')
    assert hooked[0][:cut] == plain[0][:cut]


async def test_a_hook_that_hangs_is_killed_at_its_timeout_and_the_session_says_so(tmp_path: Path) -> None:
    ws = tmp_path
    notices: list[str] = []
    hooks = Hooks([HookConfig(event="pre_tool", command="sleep 60", timeout_s=0.3)], ws, on_notice=notices.append)
    answer = await hooks.fire("pre_tool", {"tool_name": "bash"}, tool="bash")
    assert answer.decision is None
    assert len(notices) == 1 and "ran past its timeout_s (0.3s) and was killed" in notices[0]


async def test_a_json_allow_runs_a_call_the_rules_would_ask_about_but_not_one_they_deny(tmp_path: Path) -> None:
    allow = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'
    hooks = Hooks([HookConfig(event="pre_tool", matcher="bash", command=f"echo '{allow}'")], tmp_path)
    rules = Rules.parse(deny=["bash(git push:*)"])
    ctx = ToolContext(root=tmp_path)
    plain = PermissionGate(rules, mode="ask")
    hooked = HookGate(rules, mode="ask", hooks=hooks)
    args = BashArgs(command="make deploy")
    assert "needs approval" in (await plain.check(BashTool(), args, ctx) or "")
    assert await hooked.check(BashTool(), args, ctx) is None
    denied = await hooked.check(BashTool(), BashArgs(command="git push origin"), ctx)
    assert denied is not None and "[permissions] deny" in denied


async def test_ask_asks_and_without_a_terminal_refuses(tmp_path: Path) -> None:
    hooks = Hooks(
        [HookConfig(event="pre_tool", command="""echo '{"decision": "ask", "reason": "touches prod"}'""")], tmp_path
    )
    gate = HookGate(Rules.parse(allow=["bash(ls)"]), mode="auto", hooks=hooks)
    refused = await gate.check(BashTool(), BashArgs(command="ls"), ToolContext(root=tmp_path))
    assert refused is not None and "touches prod" in refused and "no one to ask" in refused


@pytest.mark.parametrize(
    "answer",
    ['{"decision": "block", "reason": "not on fridays"}', '{"continue": false, "stopReason": "not on fridays"}'],
)
async def test_json_block_spellings_refuse_with_the_reason(tmp_path: Path, answer: str) -> None:
    hooks = Hooks([HookConfig(event="pre_tool", command=f"echo '{answer}'")], tmp_path)
    gate = HookGate(Rules.parse(), mode="auto", hooks=hooks)
    refused = await gate.check(BashTool(), BashArgs(command="ls"), ToolContext(root=tmp_path))
    assert refused == "refused by a pre_tool hook: not on fridays"
