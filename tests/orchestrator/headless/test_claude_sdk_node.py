"""The npm Claude Agent SDK (``@anthropic-ai/claude-agent-sdk``, unmodified) drives ``reasonix`` through Node.js as
its Claude Code executable (``pathToClaudeCodeExecutable``), against a real ``reasonix emulate``: two turns of one
``query()``, its ``canUseTool`` callback denying a command. Every line ``reasonix`` writes validates against the
schemas generated from the same package's types. The package is installed from the npm registry into the test's
directory (``--ignore-scripts``); without the registry the test is skipped saying so, except under CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

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

VERSION = "0.3.337"
"""The release the schemas in tests/fixtures/claude_sdk_schema were generated from."""
DRIVER = Path(__file__).with_name("claude_sdk_drive.mjs")


def _install(where: Path) -> Path:
    where.mkdir()
    npm = shutil.which("npm")
    assert npm is not None
    proc = subprocess.run(
        [npm, "install", "--prefix", str(where), "--ignore-scripts", "--no-audit", "--no-fund", "--omit=optional",
         f"@anthropic-ai/claude-agent-sdk@{VERSION}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if proc.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"npm could not install the Claude Agent SDK: {proc.stderr[-2000:]}")
        pytest.skip(f"npm could not install @anthropic-ai/claude-agent-sdk (no registry?): {proc.stderr[-300:]}")
    return where / "node_modules"


@pytest.mark.node
def test_the_npm_sdk_drives_two_turns_and_its_callback_denies_a_command(tmp_path: Path) -> None:
    modules = _install(tmp_path / "npm")
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(sdk_script(READ, EDIT, COMMAND, ANSWER, {"content": "Still adding."}), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        config = {"cli": str(cli), "cwd": str(ws), "env": env, "prompts": ["fix add", "and now?"]}
        node = shutil.which("node")
        assert node is not None
        proc = subprocess.run(
            [node, str(DRIVER), str(modules), json.dumps(config)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
        )  # fmt: skip
        stats = emulator_stats(url)["sessions"]["executor"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    got: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    results = [m for m in got if m["type"] == "result"]
    assert [r["result"] for r in results] == ["add() adds now.", "Still adding."]
    assert len({r["session_id"] for r in results}) == 1
    # A result's figures are the whole conversation's in this process (docs/stream-json.md), as the server counted.
    assert results[-1]["num_turns"] == stats["requests"] == 5
    assert results[-1]["usage"]["output_tokens"] == stats["completion_tokens"]
    (done,) = [m for m in got if m["type"] == "done"]
    denials = [d for r in results for d in r["permission_denials"]]
    assert [d["tool_use_id"] for d in denials] == done["denied"] and len(denials) == 1
    refused = [
        block
        for m in got
        if m["type"] == "user" and isinstance(m["message"]["content"], list)
        for block in m["message"]["content"]
        if block.get("tool_use_id") == denials[0]["tool_use_id"]
    ]
    assert refused and refused[0]["is_error"] and "no commands from node" in refused[0]["content"]
    assert (ws / "calc.py").read_text().endswith("a + b\n")
    validate_lines(lines_of(log))


@pytest.mark.node
def test_the_npm_sdks_hooks_deny_a_command_and_see_a_read(tmp_path: Path) -> None:
    modules = _install(tmp_path / "npm")
    ws, env = sdk_workspace(tmp_path), clean_env(tmp_path)
    with emulator_process(sdk_script(READ, COMMAND, ANSWER), tmp_path, env) as url:
        cli, log = tee_cli(tmp_path, ws, url)
        config = {"cli": str(cli), "cwd": str(ws), "env": env, "prompts": ["fix add"], "hooks": "no shell from node"}
        node = shutil.which("node")
        assert node is not None
        proc = subprocess.run(
            [node, str(DRIVER), str(modules), json.dumps(config)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    (done,) = [m for m in got if m["type"] == "done"]
    calls = {
        block["name"]: block["id"]
        for m in got
        if m["type"] == "assistant"
        for block in m["message"]["content"]
        if block["type"] == "tool_use"
    }
    assert [(h["event"], h["tool"], h["toolUseID"]) for h in done["hooked"]] == [
        ("PostToolUse", "read_file", calls["read_file"]),
        ("PreToolUse", "bash", calls["bash"]),
    ]
    assert "return a - b" in done["hooked"][0]["response"]["content"]
    results = {
        block["tool_use_id"]: block
        for m in got
        if m["type"] == "user" and isinstance(m["message"]["content"], list)
        for block in m["message"]["content"]
    }
    assert results[calls["bash"]]["is_error"] and "no shell from node" in results[calls["bash"]]["content"]
    (result,) = [m for m in got if m["type"] == "result"]
    assert result["subtype"] == "success" and result["result"] == "add() adds now."
    validate_lines(lines_of(log))
