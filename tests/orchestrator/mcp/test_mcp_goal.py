"""``reasonix goal`` with an MCP server end to end against the emulator: the planner reads through the server's
read-only tool and cannot call its writing tool; the executor writes through it; the supervisor verifies the file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config.trust import record_trust

from ..goal_support import EXECUTOR, PLANNER, call, reply, step
from ..run_support import clean_env, emulator_process, json_lines, reasonix
from .support import NOTES_SERVER

VERIFY = "python3 -c \"import pathlib; assert pathlib.Path('done.txt').read_text() == 'shipped'\""


def _mcp(tool: str, **arguments: str) -> dict[str, Any]:
    return {"name": f"mcp__notes__{tool}", "arguments": arguments}


def _script() -> dict[str, Any]:
    planner = [
        reply(_mcp("read_note", name="brief"), _mcp("write_note", name="x", text="no")),
        reply(
            call(
                "submit_plan",
                objective="Ship the brief",
                steps=[step("S1", "Write the done note", writes=["done.txt"], verify=[VERIFY])],
            )
        ),
        reply(content="Plan submitted."),
        reply(call("goal_verdict", verdict="complete", evidence=["S1 verified"])),
        reply(content="Done."),
    ]
    executor = [
        reply(_mcp("write_note", name="done", text="shipped")),
        reply(call("report_step", step_id="S1", status="done", summary="wrote done", evidence=["wrote done.txt"])),
        reply(content="S1 done."),
    ]
    return {
        "sessions": [
            {"key": "planner", "system_contains": PLANNER, "replies": planner},
            {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
        ]
    }


@pytest.mark.bwrap
def test_a_goal_plans_with_a_read_only_mcp_tool_and_executes_with_a_writing_one(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "brief.txt").write_text("ship it")
    mcp_json = ws / ".mcp.json"
    mcp_json.write_text(
        json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(NOTES_SERVER)], "cwd": "."}}})
    )
    record_trust(tmp_path / ".config" / "reasonix" / "trusted.json", [mcp_json])
    with emulator_process(_script(), tmp_path, env) as url:
        proc = reasonix("goal", "Ship the brief", "--workspace", str(ws), "--base-url", url, "--yes", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    events = json_lines(proc.stdout)
    assert events[-1]["status"] == "complete"
    finished = [e for e in events if e.get("kind") == "tool_finished" and e["name"].startswith("mcp__")]
    assert [(e["name"], e["is_error"]) for e in finished] == [
        ("mcp__notes__read_note", False),  # the planner reads through the server
        ("mcp__notes__write_note", True),  # the planner has no writing MCP tool
        ("mcp__notes__write_note", False),  # the executor writes
    ]
    assert "ship it" in finished[0]["preview"] and "no tool named 'mcp__notes__write_note'" in finished[1]["preview"]
    assert (ws / "done.txt").read_text() == "shipped"
