"""A three-step ``calc`` goal for ``reasonix goal`` run as a real process: the workspace, the planner's and the
executor's replies for the emulator, and a wait until the emulator holds a request in a stall."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from tests.orchestrator.goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step
from tests.orchestrator.run_support import emulator_stats

OPS = "def add(a, b):\n    return a + b\n"
MUL = "def mul(a, b):\n    return a * b\n"


NEG = "def neg(a):\n    return -a\n"
STEPS = [
    step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"]),
    step(
        "S2",
        "Add calc/mul.py",
        deps=["S1"],
        writes=["calc/mul.py"],
        verify=["python3 -c 'from calc.mul import mul; assert mul(3, 4) == 12'"],
    ),
    step(
        "S3",
        "Add calc/neg.py",
        deps=["S2"],
        writes=["calc/neg.py"],
        verify=["python3 -c 'from calc.neg import neg; assert neg(2) == -2'"],
    ),
]


STALL = {"kind": "stall", "seconds": 120, "then": "drop"}
"""The request is held for two minutes, then dropped; the reply stays for the retry (the next request)."""


def calc_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "calc").mkdir(parents=True)
    (ws / ".git").mkdir()  # ends the upward search for standing memory here
    (ws / "calc" / "__init__.py").write_text("")
    return ws


def calc_planning(steps: list[dict[str, Any]] = STEPS) -> list[dict[str, Any]]:
    return [reply(call("submit_plan", objective="Grow calc", steps=steps))]


VERDICT = [reply(call("goal_verdict", verdict="complete", evidence=["every step verified"]))]


def calc_executor(stall_at: int | None = None) -> list[dict[str, Any]]:
    replies = [
        *executor_step("S1", "calc/ops.py", OPS),
        *executor_step("S2", "calc/mul.py", MUL),
        *executor_step("S3", "calc/neg.py", NEG),
    ]
    if stall_at is not None:
        replies[stall_at] = {**replies[stall_at], "faults": [STALL]}
    return replies


def goal_script(planner: list[dict[str, Any]], executor: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "sessions": [
            {"key": "planner", "system_contains": PLANNER, "replies": planner},
            {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
        ]
    }


def wait_for_stall(url: str, session: str, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    """Until the emulator holds a request of ``session`` in its stall (the process is then mid-turn)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        faults = emulator_stats(url)["sessions"].get(session, {}).get("faults_injected", {})
        if faults.get("stall"):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"the {session} request never reached the stall")
