"""Goals for ``reasonix batch`` against one emulator: each goal's workspace is a git repository whose ``AGENTS.md``
names the goal, so its planner's and executor's system messages (prompt + standing memory) are the goal's own and the
emulator's script gives every goal its own sessions. Each goal is one step: write ``calc/ops.py``, verified."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from orchestrator.goal.prompts import EXECUTOR_SYSTEM_PROMPT, PLANNER_SYSTEM_PROMPT
from tests.orchestrator.goal_support import call, executor_step, reply, step

OPS = "def add(a, b):\n    return a + b\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def goal_workspace(root: Path, goal_id: str) -> Path:
    ws = root / goal_id
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "AGENTS.md").write_text(f"batch goal {goal_id}\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "seed")
    return ws


def _marker(prompt: str, goal_id: str) -> str:
    """A substring only this goal's session of this prompt has: the prompt's end, then the goal's memory."""
    return (
        prompt.rstrip()[-40:]
        + "\n\n# Standing memory (project instructions)\n\n"
        + f'<memory file="AGENTS.md">\nbatch goal {goal_id}\n</memory>'
    )


def goal_sessions(goal_id: str, *, planner_faults: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    plan = reply(
        call(
            "submit_plan",
            objective=f"Add ops to {goal_id}",
            steps=[step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"])],
        )
    )
    if planner_faults:
        plan = {**plan, "faults": planner_faults}
    verdict = reply(call("goal_verdict", verdict="complete", evidence=["S1 verified"]))
    return [
        {
            "key": f"{goal_id}-planner",
            "system_contains": _marker(PLANNER_SYSTEM_PROMPT, goal_id),
            "replies": [plan, verdict],
        },
        {
            "key": f"{goal_id}-executor",
            "system_contains": _marker(EXECUTOR_SYSTEM_PROMPT, goal_id),
            "replies": executor_step("S1", "calc/ops.py", OPS),
        },
    ]


def batch_script(goal_ids: list[str], **faults: list[dict[str, Any]]) -> dict[str, Any]:
    """The emulator's script for the goals; ``faults`` by goal id: faults on that goal's first planner reply."""
    return {"sessions": [s for g in goal_ids for s in goal_sessions(g, planner_faults=faults.get(g))]}


def goals_file(root: Path, goal_ids: list[str], **extra: Any) -> Path:
    """``goals.jsonl`` for the goals (workspaces made under ``root/repos``), one line each."""
    lines = []
    for goal_id in goal_ids:
        ws = goal_workspace(root / "repos", goal_id)
        lines.append(json.dumps({"id": goal_id, "workspace": str(ws), "objective": f"Add ops to {goal_id}", **extra}))
    path = root / "goals.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def results(path: Path) -> dict[str, dict[str, Any]]:
    """The latest result line of each goal."""
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            data = json.loads(line)
            out[data["id"]] = data
    return out


def pin_peak_prices(env: dict[str, str]) -> None:
    """Flash at its peak prices, flat, in the user config of ``env``: the shipped table halves them off-peak, and a
    budget sized to one request's peak upper bound must bite at any hour."""
    config = Path(env["XDG_CONFIG_HOME"]) / "reasonix" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[prices.families.flash]\nhit = 0.006\nmiss = 0.30\noutput = 1.20\n")
