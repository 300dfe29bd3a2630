"""Issue 45: ``reasonix -p`` opens the same executor conversation as every front end. Through the real CLI against
a real ``reasonix emulate``: a turn that wrote is checkpointed and ``reasonix undo`` takes it back, and
``--permission-mode default`` (Claude Code's word for ask) asks, so with no one to ask it refuses with the reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.git_repo import user_git

from ..run_support import ROOT, clean_env, emulator_process, json_lines, reasonix


def _script(*replies: dict[str, Any]) -> dict[str, Any]:
    return {"sessions": [{"key": "executor", "replies": list(replies)}]}


def _print(ws: Path, url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "-p", *args, "--workspace", str(ws), "--base-url", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
        input="",
    )


@pytest.mark.git
def test_a_print_turn_is_checkpointed_and_reasonix_undo_takes_it_back(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    user_git(ws, "init", "-q", "-b", "main")
    (ws / "notes.md").write_text("before\n")
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "after\n"}}]}
    with emulator_process(_script(write, {"content": "Rewrote it."}), tmp_path, env) as url:
        proc = _print(ws, url, env, "rewrite the notes", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json_lines(proc.stdout)
    assert (ws / "notes.md").read_text() == "after\n"
    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert result["session_id"] in listed.stdout and "turn-1" in listed.stdout, listed.stdout + listed.stderr
    undone = reasonix("undo", "--workspace", str(ws), env=env)
    assert undone.returncode == 0, undone.stderr
    assert (ws / "notes.md").read_text() == "before\n"


def test_permission_mode_default_asks_and_with_no_one_to_ask_refuses_with_the_reason(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "out.txt", "content": "x\n"}}]}
    replies = (write, {"content": "Refused."})
    with emulator_process(_script(*replies), tmp_path, env) as url:
        asked = _print(ws, url, env, "write out.txt", "--permission-mode", "default", "--output-format", "stream-json")
    with emulator_process(_script(*replies), tmp_path, env) as url:
        bypass = _print(ws, url, env, "write out.txt", "--permission-mode", "bypassPermissions")
    lines = json_lines(asked.stdout)
    assert lines[0]["permissionMode"] == "default" and lines[0]["approval_mode"] == "ask"  # Claude's name, ours
    refused = [x["message"]["content"][0] for x in lines if x["type"] == "user"]
    assert refused and refused[0]["is_error"], lines
    assert "needs approval and there is no terminal to ask" in refused[0]["content"]
    assert "[permissions] allow" in refused[0]["content"]  # the way out
    assert bypass.returncode == 0, bypass.stderr
    assert (ws / "out.txt").read_text() == "x\n"  # bypassPermissions is auto: the same call ran
