"""The real Claude Agent SDK for Python registers hook callbacks (``ClaudeAgentOptions(hooks=...)``) and ``reasonix
-p`` calls them over the control protocol at its own hook events (orchestrator/hooks/), acting on the answers: a
PreToolUse deny refuses the call with a reason the model reads, a PostToolUse hook sees the result and adds to it, a
UserPromptSubmit hook adds context to the message, a Stop hook is told the last answer, ``continue: false`` stops the
turn. Every line ``reasonix`` writes (the ``hook_callback`` requests among them) validates against the schemas
generated from the SDK's TypeScript types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import claude_agent_sdk as sdk
import pytest

from orchestrator.conversation.engine import conversation_journal
from tests.support.claude_sdk import ANSWER, COMMAND, READ, lines_of, sdk_script, sdk_workspace, tee_cli, validate_lines

from ..run_support import clean_env, emulator_process


def _options(cli: Path, ws: Path, env: dict[str, str], **more: Any) -> Any:
    return sdk.ClaudeAgentOptions(cli_path=str(cli), cwd=str(ws), env=env, **more)


def _sent(ws: Path, session_id: str) -> str:
    """Everything the conversation's journal holds: what the model was sent."""
    return conversation_journal(ws, session_id).read_text()


def _results(got: list[Any]) -> dict[str, Any]:
    return {b.tool_use_id: b for m in got if isinstance(m, sdk.UserMessage) for b in m.content}


async def test_a_pre_tool_use_hook_denies_a_command_and_a_post_tool_use_hook_sees_the_read(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    seen: list[tuple[str, dict[str, Any], str | None]] = []

    async def deny_bash(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append(("pre", data, tool_use_id))
        reason = "commands are off today; read files instead"
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }

    async def after(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append(("post", data, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "calc.py is generated"}}

    async def prompt(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append(("prompt", data, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "the user is Ada"}}

    async def stop(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append(("stop", data, tool_use_id))
        return {}

    hooks = {
        "PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[deny_bash])],  # Claude Code's name for bash
        "PostToolUse": [sdk.HookMatcher(matcher="read_file", hooks=[after])],  # and Reasonix's own
        "UserPromptSubmit": [sdk.HookMatcher(hooks=[prompt])],
        "Stop": [sdk.HookMatcher(hooks=[stop])],
    }
    with emulator_process(sdk_script(READ, COMMAND, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        got = [m async for m in sdk.query(prompt="fix add", options=_options(cli, ws, env, hooks=hooks))]
    assert [kind for kind, _, _ in seen] == ["prompt", "post", "pre", "stop"]
    calls = {b.name: b.id for m in got if isinstance(m, sdk.AssistantMessage) for b in m.content if hasattr(b, "id")}
    _, asked, asked_id = seen[2]
    assert asked["hook_event_name"] == "PreToolUse" and asked["tool_name"] == "bash"
    assert asked["tool_input"]["command"] == "cat calc.py" and asked_id == asked["tool_use_id"] == calls["bash"]
    assert asked["cwd"] == str(ws) and asked["transcript_path"].endswith("executor.jsonl")
    _, told, told_id = seen[1]
    assert told["tool_name"] == "read_file" and told_id == calls["read_file"]
    assert "return a - b" in told["tool_response"]["content"] and told["tool_response"]["is_error"] is False
    assert seen[0][1]["prompt"] == "fix add"
    assert seen[3][1]["last_assistant_message"] == "add() adds now." and seen[3][1]["stop_hook_active"] is False
    results = _results(got)
    refused = results[calls["bash"]]
    assert refused.is_error and "commands are off today; read files instead" in str(refused.content)
    assert "calc.py is generated" in str(results[calls["read_file"]].content)
    (result,) = [m for m in got if isinstance(m, sdk.ResultMessage)]
    assert result.subtype == "success" and result.result == "add() adds now."
    sent = _sent(ws, result.session_id)  # what the model was sent: the refusal, the added context, the prompt's
    assert "commands are off today" in sent and "calc.py is generated" in sent and "the user is Ada" in sent
    lines = lines_of(log)
    validate_lines(lines)
    requests = [line["request"] for line in lines if line["type"] == "control_request"]
    assert [r["subtype"] for r in requests] == ["hook_callback"] * 4
    assert requests[2]["tool_use_id"] == calls["bash"]
    (init,) = [line for line in lines if line["type"] == "control_response" and "pid" in str(line)]
    assert init["response"]["response"]["hooks_applied"] is True


@pytest.mark.bwrap
async def test_a_hook_that_answers_continue_false_stops_the_turn_and_the_next_goes_on(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    script = sdk_script(READ, COMMAND, ANSWER, {"content": "Here again."})

    async def halt(data: Any, tool_use_id: str | None, context: Any) -> Any:
        return {"continue_": False, "stopReason": "the build is frozen"}

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[halt])]}
    with emulator_process(script, tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        options = _options(cli, ws, env, hooks=hooks, permission_mode="bypassPermissions")
        async with sdk.ClaudeSDKClient(options) as client:
            await client.query("fix add")
            first = [m async for m in client.receive_response()]
            await client.query("still there?")
            second = [m async for m in client.receive_response()]
    (stopped,) = [m for m in first if isinstance(m, sdk.ResultMessage)]
    assert stopped.is_error and "stopped by a hook" in (stopped.result or "")
    assert "the build is frozen" in (stopped.result or "")
    assert not any(isinstance(m, sdk.AssistantMessage) and "adds now" in str(m.content) for m in first)
    (after,) = [m for m in second if isinstance(m, sdk.ResultMessage)]
    assert after.subtype == "success" and after.session_id == stopped.session_id
    validate_lines(lines_of(log))


async def test_a_failing_hook_callback_blocks_only_where_on_failure_says_block(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)

    async def broken(data: Any, tool_use_id: str | None, context: Any) -> Any:
        raise RuntimeError(f"the policy server is down ({data['tool_name']})")

    hooks = {
        "PreToolUse": [
            sdk.HookMatcher(matcher="Read", hooks=[broken]),  # reported, the read goes on
            sdk.HookMatcher(matcher="Bash", hooks=[broken], on_failure="block"),
        ]
    }
    with emulator_process(sdk_script(READ, COMMAND, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        options = _options(cli, ws, env, hooks=hooks, permission_mode="bypassPermissions")
        got = [m async for m in sdk.query(prompt="fix add", options=options)]
    calls = {b.name: b.id for m in got if isinstance(m, sdk.AssistantMessage) for b in m.content if hasattr(b, "id")}
    results = _results(got)
    assert not results[calls["read_file"]].is_error and "return a - b" in str(results[calls["read_file"]].content)
    blocked = results[calls["bash"]]
    assert blocked.is_error and "the policy server is down (bash)" in str(blocked.content)
    lines = lines_of(log)
    validate_lines(lines)
    answers = [line["response"] for line in lines if line["type"] == "control_response"]
    assert json.dumps(answers).count("hook_on_failure_supported") == 1


async def test_post_tool_use_hears_successes_and_post_tool_use_failure_the_failed_calls(tmp_path: Path) -> None:
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    heard: list[tuple[str, str, Any]] = []

    async def record(data: Any, tool_use_id: str | None, context: Any) -> Any:
        heard.append((data["hook_event_name"], data["tool_input"]["path"], data.get("error")))
        return {}

    missing = {"tool_calls": [{"name": "read_file", "arguments": {"path": "gone.py"}}]}
    hooks = {
        "PostToolUse": [sdk.HookMatcher(matcher="Read", hooks=[record])],
        "PostToolUseFailure": [sdk.HookMatcher(matcher="Read", hooks=[record])],
    }
    with emulator_process(sdk_script(missing, READ, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        got = [m async for m in sdk.query(prompt="read", options=_options(cli, ws, env, hooks=hooks))]
    assert [(event, path) for event, path, _ in heard] == [
        ("PostToolUseFailure", "gone.py"),
        ("PostToolUse", "calc.py"),
    ]
    assert "gone.py" in heard[0][2] and heard[1][2] is None  # the failure's error is the result the model read
    (result,) = [m for m in got if isinstance(m, sdk.ResultMessage)]
    assert result.subtype == "success"
    validate_lines(lines_of(log))
