"""A goal's executor gets the extensions ``reasonix code`` gets (``SessionExtensions``): with a subagent profile, a
skill and ``[memory] remember`` configured, ``reasonix goal`` (a real process, the emulator in this one) gives its
executor the ``task``, ``skill`` and ``remember`` tools, each works in a step, every executor request only appends to
the one before, and the subagent's end is a ``subagent_finished`` event in ``--json`` and in ``runs show``. Without
any of them the executor's first request is what it was."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from scenarios.emulator import Script
from tests.support.conversation import system_of, tool_names
from tests.support.goal_cli import VERDICT, calc_workspace
from tests.support.subagents import PROFILE, goal_through_cli, sub_session, task_call

from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step
from ..run_support import clean_env, json_lines, reasonix

OPS = "def add(a, b):\n    return a + b\n"
SKILL = "---\nname: deploy\ndescription: How this project is deployed\n---\nDEPLOY-BODY: run make deploy.\n"
PLAN = [
    reply(
        call(
            "submit_plan",
            objective="Grow calc",
            steps=[step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"])],
        )
    )
]


def _workspace(tmp_path: Path, *, extensions: bool) -> Path:
    ws = calc_workspace(tmp_path)
    (ws / "a.py").write_text("x_a = 1\n")
    if extensions:
        (ws / ".claude" / "agents").mkdir(parents=True)
        (ws / ".claude" / "agents" / "reviewer.md").write_text(PROFILE.format(limit=5))
        (ws / ".reasonix" / "skills").mkdir(parents=True)
        (ws / ".reasonix" / "skills" / "deploy.md").write_text(SKILL)
        user = tmp_path / ".config" / "reasonix"  # the user's own: a workspace file may not turn the tool on
        user.mkdir(parents=True)
        (user / "config.toml").write_text("[memory]\nremember = true\n")
    return ws


def _script(executor: list[dict[str, Any]], *subs: dict[str, Any]) -> Script:
    sessions = [
        {"key": "planner", "system_contains": PLANNER, "replies": [*PLAN, *VERDICT]},
        *subs,
        {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
    ]
    return Script.model_validate({"sessions": sessions})


def _executor(bodies: list[bytes]) -> list[bytes]:
    return [b for b in bodies if EXECUTOR in system_of(b)]


async def test_a_goal_executor_has_the_task_skill_and_remember_tools_and_they_work(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, extensions=True)
    executor = [
        reply(task_call("a"), {"name": "skill", "arguments": {"name": "deploy"}}),
        reply(call("remember", note="calc holds one module per operation")),
        *executor_step("S1", "calc/ops.py", OPS),
    ]
    bodies, stdout = await goal_through_cli(ws, tmp_path, _script(executor, sub_session("a")))

    events = json_lines(stdout)
    assert events[-1]["status"] == "complete", events[-1]
    requests = _executor(bodies)
    assert {"task", "skill", "remember"} <= set(tool_names(requests[0]))
    system = system_of(requests[0])
    assert "- reviewer: Reads code and reports problems" in system and "deploy: How this project is deployed" in system
    assert "DEPLOY-BODY" not in system  # the index, never a body
    for earlier, later in itertools.pairwise(requests):
        assert later.startswith(earlier[:-2])  # the tools' results only ever append
    results = [m["content"] for m in json.loads(requests[-1])["messages"] if m["role"] == "tool"]
    assert results[0].startswith('<report agent="reviewer">\nREPORT-A: a.py is fine.')
    assert "DEPLOY-BODY: run make deploy." in results[1]
    assert "calc holds one module per operation" in (ws / "REASONIX.local.md").read_text()
    assert (ws / "calc" / "ops.py").read_text() == OPS

    (finished,) = [e for e in events if e.get("kind") == "subagent_finished"]
    assert finished["session"] == "agent:reviewer#1" and finished["ok"] and finished["requests"] == 2
    run_id = events[-1]["run_id"]
    kept = [json.loads(line) for line in (ws / ".reasonix" / "runs" / run_id / "events.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in kept].count("subagent_finished") == 1
    shown = reasonix("runs", "show", run_id, "--workspace", str(ws), env=clean_env(tmp_path))
    assert "⑂ subagent agent:reviewer#1 (read-only) done · 2 requests" in shown.stdout, shown.stdout


async def test_without_extensions_a_goal_executor_gets_no_tool_of_theirs(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, extensions=False)
    bodies, stdout = await goal_through_cli(ws, tmp_path, _script(executor_step("S1", "calc/ops.py", OPS)))
    assert json_lines(stdout)[-1]["status"] == "complete"
    first = _executor(bodies)[0]
    assert not {"task", "skill", "remember"} & set(tool_names(first))
    assert "# Subagents" not in system_of(first) and "deploy" not in system_of(first)
    planner = next(b for b in bodies if PLANNER in system_of(b))
    assert "task" not in tool_names(planner) and "# Subagents" not in system_of(planner)


async def test_a_subagent_turn_that_asks_for_pro_is_escalated_and_counted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, extensions=True)
    sub = sub_session("a")
    marker = {"content": "<<<NEEDS_PRO: the module is subtle>>>" + " and a long explanation" * 20}
    sub["replies"] = [marker, *sub["replies"]]  # flash, aborted at the marker; the rest of its turn on pro
    executor = [reply(task_call("a")), *executor_step("S1", "calc/ops.py", OPS)]
    bodies, stdout = await goal_through_cli(ws, tmp_path, _script(executor, sub))
    events = json_lines(stdout)
    assert events[-1]["status"] == "complete", events[-1]
    subs = [json.loads(b) for b in bodies if "REVIEWER-MARK" in system_of(b)]
    assert [b["model"] for b in subs] == ["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-v4-pro"]
    assert {**subs[0], "model": ""} == {**subs[1], "model": ""}  # the identical request, only the model changed
    (escalated,) = [e for e in events if e.get("kind") == "escalation"]
    assert escalated["session"] == "agent:reviewer#1" and escalated["trigger"] == "marker"
    assert escalated["reason"] == "the module is subtle" and escalated["flash_cost_usd"] > 0
    (finished,) = [e for e in events if e.get("kind") == "subagent_finished"]
    assert finished["escalations"] == 1 and finished["ok"]
