"""``reasonix run`` using an MCP tool end to end: a real ``reasonix emulate`` subprocess plays the model, the notes
server (stdio, from the trusted workspace's ``reasonix.toml``) does the work, and a second run hits the cache from its
first request — the MCP tools are part of a byte-stable prefix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from orchestrator.config.trust import record_trust

from ..run_support import clean_env, emulator_process, json_lines, reasonix
from .support import NOTES_SERVER

FINAL = "The note says: ship it."


def _script() -> dict[str, Any]:
    replies: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "mcp__notes__write_note", "arguments": {"name": "plan", "text": "ship it"}}]},
        {"tool_calls": [{"name": "mcp__notes__read_note", "arguments": {"name": "plan"}}]},
        {"content": FINAL},
        {"content": "Nothing more to do."},
    ]
    return {"sessions": [{"key": "executor", "replies": replies}]}


def _workspace(tmp_path: Path, home: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    project = ws / "reasonix.toml"
    project.write_text(
        f"[mcp.servers.notes]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(NOTES_SERVER))}]\n"
        'cwd = "."\n'
    )
    record_trust(home / ".config" / "reasonix" / "trusted.json", [project])
    return ws


def test_a_run_uses_an_mcp_tool_and_a_second_run_hits_the_cache(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = _workspace(tmp_path, tmp_path)
    with emulator_process(_script(), tmp_path, env) as url:
        args = ("run", "Write the plan note and read it back", "--workspace", str(ws), "--base-url", url, "--json")
        first = reasonix(*args, env=env)
        assert first.returncode == 0, first.stderr
        second = reasonix(*args, env=env)
        assert second.returncode == 0, second.stderr

    assert (ws / "plan.txt").read_text() == "ship it"
    events = json_lines(first.stdout)
    finished = [e for e in events if e.get("kind") == "tool_finished"]
    assert [e["name"] for e in finished] == ["mcp__notes__write_note", "mcp__notes__read_note"]
    assert not any(e["is_error"] for e in finished) and "ship it" in finished[1]["preview"]
    assert events[-1]["status"] == "done" and events[-1]["text"] == FINAL
    first_cache = next(e["diagnostics"] for e in json_lines(second.stdout) if e.get("kind") == "cache")
    assert first_cache["prompt_tokens"] > 1000
    assert first_cache["hit_tokens"] == first_cache["prompt_tokens"] // 128 * 128


def test_an_untrusted_workspace_server_is_refused_before_anything_starts(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reasonix.toml").write_text(f"[mcp.servers.notes]\ncommand = {json.dumps(sys.executable)}\n")
    proc = reasonix("run", "anything", "--workspace", str(ws), "--base-url", "http://127.0.0.1:9", env=env)
    assert proc.returncode == 2
    assert "mcp.servers: refused: this workspace file is not trusted" in proc.stderr
    assert "reasonix trust --workspace" in proc.stderr and "Traceback" not in proc.stderr
