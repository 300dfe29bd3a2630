"""Small scenarios for the replay tests: a Python package whose test fails until ``calc.ops.add`` exists; and a
broken change for the cache guard to catch."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scenarios.format import LoadedScenario, load_scenario
from sessions.prompt.prefix import build_prefix
from sessions.session import Session

from .goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step

OPS = "def add(a, b):\n    return a + b\n"
TEST = "from calc.ops import add\n\nassert add(2, 3) == 5\nprint('ok')\n"
WORKSPACE = {
    "calc/__init__.py": "",
    "README.md": "# calc\nA tiny calculator package.\n",
    "test_calc.py": TEST,
}
PLAN = [step("S1", "Add calc/ops.py with add()", writes=["calc/ops.py"], verify=["python3 test_calc.py"])]


def goal_scenario(**overrides: Any) -> dict[str, Any]:
    """A one-step goal: the planner looks, plans, and confirms; the executor writes calc/ops.py."""
    planner = [
        reply(call("list_dir", path="."), reasoning="Look at the package first."),
        reply(call("submit_plan", objective="Make test_calc.py pass", steps=PLAN)),
        reply(call("goal_verdict", verdict="complete", evidence=["test_calc.py passes"])),
    ]
    data: dict[str, Any] = {
        "name": "tiny-goal",
        "title": "Add calc.ops.add so the test passes",
        "origin": "scripted",
        "command": "goal",
        "objective": "Make test_calc.py pass",
        "workspace": WORKSPACE,
        "script": {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor_step("S1", "calc/ops.py", OPS)},
            ]
        },
        "expect": {
            "status": "complete",
            "files": {"calc/ops.py": OPS},
            "commands": ["python3 test_calc.py"],
            "escalations": 0,
            "steps_done": 1,
            "min_hit_ratio": {"executor": 0.45},
        },
    }
    data.update(overrides)
    return data


def write(tmp_path: Path, data: dict[str, Any], name: str = "scenario.json") -> LoadedScenario:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return load_scenario(path)


MUL = "def mul(a, b):\n    return a * b\n"
NEG = "def neg(a):\n    return -a\n"


def three_step_scenario(**overrides: Any) -> dict[str, Any]:
    """Three steps, so the executor works through three user turns of one conversation (the cache guard's case)."""
    plan = [
        step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 test_calc.py"]),
        step("S2", "Add calc/mul.py", deps=["S1"], writes=["calc/mul.py"], verify=["python3 -c 'import calc.mul'"]),
        step("S3", "Add calc/neg.py", deps=["S2"], writes=["calc/neg.py"], verify=["python3 -c 'import calc.neg'"]),
    ]
    planner = [
        reply(call("submit_plan", objective="Grow calc", steps=plan)),
        reply(call("goal_verdict", verdict="complete", evidence=["all three modules import"])),
    ]
    executor = [
        *executor_step("S1", "calc/ops.py", OPS),
        *executor_step("S2", "calc/mul.py", MUL),
        *executor_step("S3", "calc/neg.py", NEG),
    ]
    data = goal_scenario(
        name="three-steps",
        title="Grow calc in three steps",
        objective="Grow calc: add, mul, neg",
        script={
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
            ]
        },
        expect={
            "status": "complete",
            "steps_done": 3,
            "files": {"calc/ops.py": OPS, "calc/mul.py": MUL, "calc/neg.py": NEG},
            "min_hit_ratio": {"executor": 0.75, "overall": 0.68},
        },
    )
    data.update(overrides)
    return data


def clock_in_system_prompt_every_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A realistic broken change: the system prompt carries the current time, refreshed at every user turn."""
    original = Session.send

    async def send(self: Session, text: str, **kwargs: Any) -> Any:
        base = self.prefix.system.content.split("\n\nCurrent time:")[0]
        stamped = f"{base}\n\nCurrent time: {datetime.now(UTC).isoformat()}"
        self.prefix = build_prefix(stamped, self.prefix.tools)
        return await original(self, text, **kwargs)

    monkeypatch.setattr(Session, "send", send)
