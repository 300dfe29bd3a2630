"""Subagent profiles and scripts for the subagent tests: a workspace with a ``reviewer`` profile, the parent's
``task`` call, and a subagent's scripted session (matched by its profile's mark and its task's tag)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROFILE = """---
name: reviewer
description: Reads code and reports problems
tools: [read_file, grep]
max_requests: {limit}
---
REVIEWER-MARK. You review code. Read what the task names and report what is wrong, with line numbers.
"""
STALL = [{"kind": "stall", "seconds": 0.3, "then": "continue"}]


def subagent_workspace(tmp_path: Path, *, limit: int = 5, profile: bool = True) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / ".git").mkdir()
    for name in "abc":
        (ws / f"{name}.py").write_text(f"x_{name} = 1\n")
    if profile:
        (ws / ".claude" / "agents").mkdir(parents=True)
        (ws / ".claude" / "agents" / "reviewer.md").write_text(PROFILE.format(limit=limit))
    return ws


def task_call(name: str) -> dict[str, Any]:
    return {"name": "task", "arguments": {"agent": "reviewer", "task": f"TASK-{name.upper()}: review {name}.py"}}


def sub_session(name: str) -> dict[str, Any]:
    return {
        "key": f"sub-{name}",
        "system_contains": "REVIEWER-MARK",
        "user_contains": f"TASK-{name.upper()}",
        "replies": [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": f"{name}.py"}}], "faults": STALL},
            {"content": f"REPORT-{name.upper()}: {name}.py is fine."},
        ],
    }
