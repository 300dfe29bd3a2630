"""A goal's planner gets the read-only flavour of the ``task`` tool (issue 26, Build item 3): ``reasonix goal`` (a
real process, the emulator in this one) in a workspace with a read-only and a writing profile gives the planner the
tool and an index of the read-only profile only; its subagent runs and its report reaches the planner as a tool
result; the writing profile asked for by name is refused with what to do instead, and never runs; every planner
request only appends to the one before. A workspace whose only profile writes gives the planner nothing."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from scenarios.emulator import Script
from tests.support.conversation import system_of, tool_names
from tests.support.goal_cli import VERDICT, calc_workspace
from tests.support.subagents import FIXER, PROFILE, goal_through_cli, sub_session, task_call

from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step
from ..run_support import json_lines

OPS = "def add(a, b):\n    return a + b\n"
PLAN = reply(
    call(
        "submit_plan",
        objective="Grow calc",
        steps=[step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"])],
    )
)
FIX = {"name": "task", "arguments": {"agent": "fixer", "task": "FIX-A: set x_a to 2"}}


def _workspace(tmp_path: Path, *, reviewer: bool = True) -> Path:
    ws = calc_workspace(tmp_path)
    (ws / "a.py").write_text("x_a = 1\n")
    (ws / ".reasonix" / "agents").mkdir(parents=True)
    (ws / ".reasonix" / "agents" / "fixer.md").write_text(FIXER)
    if reviewer:
        (ws / ".reasonix" / "agents" / "reviewer.md").write_text(PROFILE.format(limit=5))
    return ws


def _script(planner: list[dict[str, Any]], *subs: dict[str, Any]) -> Script:
    fixer = {"key": "fixer", "system_contains": "FIXER-MARK", "replies": [{"content": "FIXED."}]}
    sessions = [
        {"key": "planner", "system_contains": PLANNER, "replies": planner},
        *subs,
        fixer,
        {"key": "executor", "system_contains": EXECUTOR, "replies": executor_step("S1", "calc/ops.py", OPS)},
    ]
    return Script.model_validate({"sessions": sessions})


def _results(body: bytes) -> list[str]:
    return [m["content"] for m in json.loads(body)["messages"] if m["role"] == "tool"]


async def test_the_planner_runs_a_read_only_subagent_and_cannot_start_a_writing_one(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    planner = [reply(task_call("a"), FIX), PLAN, *VERDICT]
    bodies, stdout = await goal_through_cli(ws, tmp_path, _script(planner, sub_session("a")))

    events = json_lines(stdout)
    assert events[-1]["status"] == "complete", events[-1]
    requests = [b for b in bodies if PLANNER in system_of(b)]
    assert "task" in tool_names(requests[0])
    system = system_of(requests[0])
    assert "- reviewer: Reads code and reports problems" in system and "fixer" not in system  # read-only ones only
    for earlier, later in itertools.pairwise(requests):
        assert later.startswith(earlier[:-2])  # the index and tool sit in the prefix; reports only ever append
    report, refused = _results(requests[1])
    assert report.startswith('<report agent="reviewer">\nREPORT-A: a.py is fine.')
    assert "'fixer' may change files" in refused and "read-only subagents (reviewer)" in refused
    assert "a step for the executor" in refused
    assert not [b for b in bodies if "FIXER-MARK" in system_of(b)]  # the writing one never ran
    assert (ws / "a.py").read_text() == "x_a = 1\n"

    # The subagent's own conversation: its profile's tools, never the planner's protocol tools nor the task tool.
    (sub_first, *_) = [b for b in bodies if "REVIEWER-MARK" in system_of(b)]
    assert set(tool_names(sub_first)) == {"grep", "read_file"}
    (finished,) = [e for e in events if e.get("kind") == "subagent_finished"]
    assert finished["session"] == "agent:reviewer#1@planner" and finished["ok"] and finished["read_only"]
    run_dir = ws / ".reasonix" / "runs" / events[-1]["run_id"]
    assert [p.name for p in (run_dir / "agents" / "planner").glob("*.result.json")] != []
    # The executor's prefix is its own: a goal's executor has the full task tool (here: both profiles).
    executor = next(b for b in bodies if EXECUTOR in system_of(b))
    assert "- fixer: Fixes one file (may change files)" in system_of(executor)


async def test_with_only_a_writing_profile_the_planner_gets_no_task_tool(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, reviewer=False)
    bodies, stdout = await goal_through_cli(ws, tmp_path, _script([PLAN, *VERDICT]))
    assert json_lines(stdout)[-1]["status"] == "complete"
    planner = [b for b in bodies if PLANNER in system_of(b)]
    assert all("task" not in tool_names(b) and "# Subagents" not in system_of(b) for b in planner)
    executor = next(b for b in bodies if EXECUTOR in system_of(b))
    assert "task" in tool_names(executor)  # the executor still may start the writing one
