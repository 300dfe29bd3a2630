"""Issue 44 through the goal loop: a step whose turn changed none of its declared writes is not done although its
verify command passes, and a step of a plan that never went through the planner's tool (``reasonix exec``) that writes
files with no verify command is re-planned before it runs."""

from __future__ import annotations

from pathlib import Path

from orchestrator.build import create_runner
from orchestrator.events import StepStarted, StepVerified
from orchestrator.goal.runner import GoalOptions
from plans.schema import Plan

from .goal_support import call, goal_env, new_runner, reply, script, step

OPS = "def add(a, b):\n    return a + b\n"
CHECK = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "calc" / "ops.py").write_text(OPS)  # already right: the verify command passes untouched
    return ws


def _report(summary: str) -> dict[str, object]:
    return reply(call("report_step", step_id="S1", status="done", summary=summary, evidence=["looked"]))


async def test_a_step_that_changed_nothing_is_not_done_although_its_verify_passes(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    plan = [step("S1", "Make add() add", writes=["calc/ops.py"], verify=[CHECK])]
    planner = [
        reply(call("submit_plan", objective="ops", steps=plan)),
        reply(call("goal_verdict", verdict="blocked", question="add() already adds: what should change?")),
    ]
    executor = [_report("nothing to change"), _report("still nothing to change")]
    events: list[object] = []
    async with goal_env(script(planner, executor)) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", events=events).run()
    assert outcome.status == "blocked", outcome.summary
    verified = [e for e in events if isinstance(e, StepVerified)]
    assert [(v.ok, [o.ok for o in v.outcomes]) for v in verified] == [(False, [True]), (False, [True])]
    assert verified[0].problems == ("none of the files the step writes (calc/ops.py) changed",)


async def test_an_exec_plan_with_an_unverified_writing_step_goes_back_to_the_planner(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    plan = Plan.model_validate({"objective": "ops", "steps": [step("S1", "Touch ops", writes=["calc/ops.py"])]})
    planner = [reply(call("goal_verdict", verdict="blocked", question="Which command shows calc/ops.py is right?"))]
    events: list[object] = []
    async with goal_env(script(planner, [])) as (emu, client):
        runner = create_runner(
            objective="",
            plan=plan,
            run_id="run-x",
            workspace=ws,
            client=client,
            reviewer=None,
            on_event=events.append,
            config_dir=ws / ".none",
            options=GoalOptions(),
        )
        outcome = await runner.run()
        sessions = emu.stats()["sessions"]
    assert outcome.status == "blocked", outcome.summary
    assert "executor" not in sessions  # the step never ran
    assert not any(isinstance(e, StepStarted) for e in events)
