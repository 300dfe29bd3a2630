"""``reasonix mcp list`` and ``reasonix doctor`` on configured servers, as a user runs them (real processes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from orchestrator.config.trust import record_trust

from ..run_support import clean_env, reasonix
from .support import NOTES_SERVER


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    servers = {
        "notes": {"command": sys.executable, "args": [str(NOTES_SERVER)]},
        "broken": {"command": str(tmp_path / "no-such-server")},
    }
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    record_trust(tmp_path / ".config" / "reasonix" / "trusted.json", [ws / ".mcp.json"])
    return ws


def test_mcp_list_shows_servers_states_and_read_only_marks(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = _workspace(tmp_path)
    proc = reasonix("mcp", "list", "--workspace", str(ws), env=env)
    assert proc.returncode == 1, proc.stderr  # one server did not start
    out = proc.stdout
    assert "notes (stdio) ready · 2 tools" in out
    assert "mcp__notes__read_note  read-only" in out and "mcp__notes__write_note\n" in out
    assert "broken (stdio) failed: the command was not found" in out
    assert "read again at the next session" in out and "Traceback" not in proc.stderr
    listed = json.loads(reasonix("mcp", "list", "--workspace", str(ws), "--json", env=env).stdout)
    assert [(s["server"], s["state"]) for s in listed] == [("broken", "failed"), ("notes", "ready")]
    assert listed[1]["tools"] == [
        {"name": "mcp__notes__read_note", "read_only": True},
        {"name": "mcp__notes__write_note", "read_only": False},
    ]


def test_mcp_list_without_servers_says_how_to_add_one(tmp_path: Path) -> None:
    proc = reasonix("mcp", "list", "--workspace", str(tmp_path), env=clean_env(tmp_path))
    assert proc.returncode == 0 and "no MCP servers configured" in proc.stdout
    assert "add a [mcp.servers.NAME] table to reasonix.toml" in proc.stdout  # the table name is not eaten as markup
    proc = reasonix("mcp", "list", "--workspace", str(tmp_path), "--json", env=clean_env(tmp_path))
    assert proc.returncode == 0 and json.loads(proc.stdout) == []


def test_an_untrusted_mcp_json_says_so_on_whole_lines_with_advice_for_servers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}}))
    proc = reasonix("mcp", "list", "--workspace", str(ws), env={**clean_env(tmp_path), "COLUMNS": "80"})
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if "refused" in line]
    assert len(lines) == 1, proc.stderr  # one problem, one line: not hard-wrapped mid-sentence at 80 columns
    assert lines[0].endswith(
        f"`reasonix trust --workspace {ws.resolve()}` to accept it (or define the server in your own config)"
    )


def test_doctor_checks_each_server(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = _workspace(tmp_path)
    proc = reasonix("doctor", "--offline", "--workspace", str(ws), env=env)
    assert "✓ MCP server notes: stdio, 2 tools (1 read-only, for the planner too)" in proc.stdout
    assert "– MCP server broken: stdio: the command was not found" in proc.stdout
    assert "fix: check the command" in proc.stdout
