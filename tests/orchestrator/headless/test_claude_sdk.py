"""The real Claude Agent SDK for Python (``claude-agent-sdk``, unmodified, no shim) drives ``reasonix`` as its CLI
(``ClaudeAgentOptions(cli_path=...)``) against a real ``reasonix emulate`` subprocess. Every line ``reasonix`` writes
is captured (a ``tee`` of the CLI's standard output, through the SDK's own ``cli_path``) and validated against the
JSON Schema generated from the npm SDK's published TypeScript types (tests/fixtures/claude_sdk_schema/README.md).

The SDK runs on anyio, here on its trio backend (the suite's loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import claude_agent_sdk as sdk
import pytest

from orchestrator.conversation.engine import conversation_journal
from tests.support.claude_sdk import (
    ANSWER,
    COMMAND,
    EDIT,
    READ,
    lines_of,
    sdk_script,
    sdk_workspace,
    tee_cli,
    validate_lines,
)

from ..run_support import clean_env, emulator_process, emulator_stats


def _options(cli: Path, ws: Path, env: dict[str, str], **more: Any) -> Any:
    return sdk.ClaudeAgentOptions(cli_path=str(cli), cwd=str(ws), env=env, **more)


async def _one(text: str) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None, "session_id": ""}


@pytest.mark.bwrap
async def test_query_reads_edits_and_runs_a_command_and_the_result_is_the_servers(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(sdk_script(READ, EDIT, COMMAND, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        got = [m async for m in sdk.query(prompt="fix add", options=_options(cli, ws, env))]
        stats = emulator_stats(url)["sessions"]["executor"]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    init = next(m for m in got if isinstance(m, sdk.SystemMessage) and m.subtype == "init")
    assert init.data["cwd"] == str(ws) and "read_file" in init.data["tools"]
    assistant = [m for m in got if isinstance(m, sdk.AssistantMessage)]
    assert len(assistant) == 4 == stats["requests"]
    thinking = assistant[0].content[0]
    assert isinstance(thinking, sdk.ThinkingBlock) and thinking.thinking == "Read it first." and thinking.signature
    calls = [b.name for m in assistant for b in m.content if isinstance(b, sdk.ToolUseBlock)]
    assert calls == ["read_file", "edit_file", "bash"]
    results = [
        b for m in got if isinstance(m, sdk.UserMessage) for b in m.content if isinstance(b, sdk.ToolResultBlock)
    ]
    assert len(results) == 3 and not any(r.is_error for r in results)
    assert "return a + b" in str(results[2].content)  # the command ran after the edit, in the workspace
    (result,) = [m for m in got if isinstance(m, sdk.ResultMessage)]
    assert result.subtype == "success" and result.result == "add() adds now." and result.num_turns == 4
    assert result.usage is not None
    assert result.usage["input_tokens"] == stats["miss_tokens"]
    assert result.usage["cache_read_input_tokens"] == stats["hit_tokens"]
    assert result.usage["output_tokens"] == stats["completion_tokens"]
    lines = lines_of(log)
    costs = [line["message"]["cost_usd"] for line in lines if line["type"] == "assistant"]
    assert result.total_cost_usd == pytest.approx(sum(costs)) and result.total_cost_usd > 0
    assert result.model_usage is not None
    (figures,) = result.model_usage.values()
    assert figures["costUSD"] == result.total_cost_usd and figures["inputTokens"] == stats["miss_tokens"]
    validate_lines(lines)
    assert not any(line["type"] == "stream_event" for line in lines)  # partial messages were not asked for


async def test_two_turns_through_claude_sdk_client_are_one_conversation(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(sdk_script(READ, ANSWER, {"content": "There is no subtract."}), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        async with sdk.ClaudeSDKClient(_options(cli, ws, env, include_partial_messages=True)) as client:
            await client.query("what does add do?")
            first = [m async for m in client.receive_response()]
            await client.query("and subtract?")
            second = [m async for m in client.receive_response()]
    results = [m for m in (*first, *second) if isinstance(m, sdk.ResultMessage)]
    assert [r.result for r in results] == ["add() adds now.", "There is no subtract."]
    assert results[0].session_id == results[1].session_id
    assert any(isinstance(m, sdk.StreamEvent) for m in first)  # asked for: the reply as it streamed
    # The second turn's request re-sends the first turn's: the prefix cache serves it.
    assert results[1].usage is not None and results[1].usage["cache_read_input_tokens"] > 0
    validate_lines(lines_of(log))


async def test_a_can_use_tool_callback_denies_a_command_and_the_model_reads_why(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    asked: list[tuple[str, dict[str, Any], str | None]] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: Any) -> Any:
        asked.append((name, data, context.tool_use_id))
        if name == "bash":
            return sdk.PermissionResultDeny(message="no commands today")
        return sdk.PermissionResultAllow()

    with emulator_process(sdk_script(READ, EDIT, COMMAND, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        options = _options(cli, ws, env, can_use_tool=can_use_tool)
        got = [m async for m in sdk.query(prompt=_one("fix add"), options=options)]
    # Reads run unasked (Claude Code's default mode); the edit and the command were put to the callback.
    assert [name for name, _, _ in asked] == ["edit_file", "bash"]
    assert asked[1][1] == {"command": "cat calc.py"}
    calls = {b.id: b.name for m in got if isinstance(m, sdk.AssistantMessage) for b in m.content if hasattr(b, "id")}
    assert {tool_use_id for _, _, tool_use_id in asked} == {i for i, n in calls.items() if n != "read_file"}
    results = {b.tool_use_id: b for m in got if isinstance(m, sdk.UserMessage) for b in m.content}
    denied = results[asked[1][2] or ""]
    assert denied.is_error and "no commands today" in str(denied.content)
    assert (ws / "calc.py").read_text().endswith("a + b\n")  # the edit was allowed
    (result,) = [m for m in got if isinstance(m, sdk.ResultMessage)]
    assert result.permission_denials == [
        {"tool_name": "bash", "tool_use_id": asked[1][2], "tool_input": {"command": "cat calc.py"}}
    ]
    lines = lines_of(log)
    validate_lines(lines)
    assert sum(line["type"] == "control_request" for line in lines) == 2


@pytest.mark.bwrap
async def test_an_interrupt_ends_the_turn_and_the_conversation_goes_on(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    slow = {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}
    script = sdk_script(slow, {"content": "Back again."})
    with emulator_process(script, tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        options = _options(cli, ws, env, permission_mode="bypassPermissions")
        async with sdk.ClaudeSDKClient(options) as client:
            await client.query("wait a while")
            async for message in client.receive_messages():
                if isinstance(message, sdk.AssistantMessage):  # the command is starting: interrupt it
                    await client.interrupt()
                    break
            first = [m async for m in client.receive_response()]
            await client.query("still there?")
            second = [m async for m in client.receive_response()]
    (interrupted,) = [m for m in first if isinstance(m, sdk.ResultMessage)]
    assert interrupted.is_error and interrupted.subtype == "error_during_execution"
    assert "interrupted" in (interrupted.result or "")
    (after,) = [m for m in second if isinstance(m, sdk.ResultMessage)]
    assert after.subtype == "success" and after.result == "Back again." and after.session_id == interrupted.session_id
    validate_lines(lines_of(log))


async def test_resume_with_fork_session_goes_on_under_a_new_id_and_leaves_the_original(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    script = sdk_script(ANSWER, {"content": "Forked."}, {"content": "Original."})
    with emulator_process(script, tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        first = [m async for m in sdk.query(prompt="what does add do?", options=_options(cli, ws, env))]
        (origin,) = [m for m in first if isinstance(m, sdk.ResultMessage)]
        fork = _options(cli, ws, env, resume=origin.session_id, fork_session=True)
        forked = [m async for m in sdk.query(prompt="the fork's question", options=fork)]
        back = _options(cli, ws, env, resume=origin.session_id)
        again = [m async for m in sdk.query(prompt="the original's question", options=back)]
    (branch,) = [m for m in forked if isinstance(m, sdk.ResultMessage)]
    (resumed,) = [m for m in again if isinstance(m, sdk.ResultMessage)]
    assert branch.result == "Forked." and branch.session_id != origin.session_id
    assert resumed.result == "Original." and resumed.session_id == origin.session_id
    fork_journal = conversation_journal(ws, branch.session_id).read_text()
    origin_journal = conversation_journal(ws, origin.session_id).read_text()
    assert "what does add do?" in fork_journal and "the fork's question" in fork_journal  # it went on from there
    assert "the fork's question" not in origin_journal and "the original's question" in origin_journal
    assert branch.usage is not None and branch.usage["cache_read_input_tokens"] > 0  # the same prefix, re-sent
    init = [line for line in lines_of(log) if line.get("subtype") == "init"]
    assert [line["resumed"] for line in init] == [False, True, True] and "--fork-session" not in init[1]["ignored"]
    validate_lines(lines_of(log))


async def test_set_model_switches_the_next_turns_model_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(sdk_script(ANSWER, {"content": "From pro."}), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        async with sdk.ClaudeSDKClient(_options(cli, ws, env)) as client:
            await client.query("what does add do?")
            first = [m async for m in client.receive_response()]
            with pytest.raises(Exception, match="claude-opus-5"):  # no price for it: refused, naming it
                await client.set_model("claude-opus-5")
            await client.set_model("pro")
            await client.query("and now?")
            second = [m async for m in client.receive_response()]
        stats = emulator_stats(url)
    (before,) = [m for m in first if isinstance(m, sdk.ResultMessage)]
    (after,) = [m for m in second if isinstance(m, sdk.ResultMessage)]
    assert after.result == "From pro." and after.session_id == before.session_id
    assert [a.model for a in second if isinstance(a, sdk.AssistantMessage)] == ["deepseek-v4-pro"]
    assert after.model_usage is not None and list(after.model_usage) == ["deepseek-v4-pro"]
    assert stats["models"]["deepseek-v4-pro"]["requests"] == 1 and stats["models"]["deepseek-v4-flash"]["requests"] == 1
    validate_lines(lines_of(log))
