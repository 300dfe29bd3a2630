"""Subagent profiles and scripts for the subagent tests: a workspace with a ``reviewer`` profile, the parent's
``task`` call, a subagent's scripted session (matched by its profile's mark and its task's tag), and ``reasonix
goal`` run as a real process against an emulator in this one, every request body recorded."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from scenarios.emulator import Script, open_emulator
from tests.orchestrator.run_support import ROOT, clean_env
from tests.support.conversation import record_bodies

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


FIXER = "---\ndescription: Fixes one file\nread_only: false\n---\nFIXER-MARK. You fix what the task names.\n"
"""A writing profile (``.reasonix/agents/fixer.md``)."""


async def goal_through_cli(ws: Path, tmp_path: Path, script: Script, *args: str) -> tuple[list[bytes], str]:
    """``reasonix goal "Grow calc" --yes --json`` in ``ws`` as a real process: every request body the emulator got,
    and the process's standard output (it must exit 0)."""
    bodies: list[bytes] = []
    async with open_emulator(script=script) as emu:
        record_bodies(emu, bodies)
        argv = [sys.executable, "-m", "orchestrator", "goal", "Grow calc", "--workspace", str(ws)]
        argv += ["--base-url", emu.base_url, "--yes", "--json", "--sandbox", "full-access", *args]
        with trio.fail_after(180):
            proc = await trio.run_process(
                argv, env=clean_env(tmp_path), cwd=ROOT, capture_stdout=True, capture_stderr=True, check=False
            )
    assert proc.returncode == 0, proc.stderr.decode()
    return bodies, proc.stdout.decode()
