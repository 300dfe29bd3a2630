"""Goal-loop flows against the emulator: escalation, review, budget pause and resume, stuck detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.build import resume_runner
from orchestrator.events import Escalated, GoalFinished, PlanRevised, ReviewDecided, StepStarted
from orchestrator.goal.runner import GoalOptions
from orchestrator.policy.budget import Budget
from orchestrator.policy.escalation import EscalationPolicy
from orchestrator.review.reviewer import ScriptedReviewer
from sessions.events import RequestStarted

from .goal_support import call, executor_step, goal_env, new_runner, reply, script, step

OPS = "def add(a, b):\n    return a + b\n"
CHECK = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    return ws


def _one_step_plan(sid: str = "S1", **extra: object) -> list[dict[str, object]]:
    return [step(sid, "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK], **extra)]


def _verdict() -> list[dict[str, object]]:
    return [reply(call("goal_verdict", verdict="complete", evidence=["add works"]))]


async def test_marker_escalation_in_planner_and_executor(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    marker = "<<<NEEDS_PRO: the dependency graph is subtle>>>" + " and then a long explanation" * 40
    planner = [
        reply(content=marker, reasoning="Hard."),  # flash: aborted at the marker
        reply(call("submit_plan", objective="ops", steps=_one_step_plan())),  # pro, same request
        *_verdict(),  # next turn: flash again
    ]
    executor = [reply(content="<<<NEEDS_PRO>>>"), *executor_step("S1", "calc/ops.py", OPS)]
    events: list[object] = []
    async with goal_env(script(planner, executor)) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", events=events).run()
    assert outcome.status == "complete"
    escalations = [e for e in events if isinstance(e, Escalated)]
    assert [(e.session, e.trigger) for e in escalations] == [("planner", "marker"), ("executor", "marker")]
    assert escalations[0].reason == "the dependency graph is subtle"
    assert all(e.wasted_chars <= 256 and e.flash_cost_usd > 0 for e in escalations)
    models = [(e.session, e.model) for e in events if isinstance(e, RequestStarted)]
    assert models[0] == ("planner", "deepseek-v4-flash")
    assert models[-1] == ("planner", "deepseek-v4-flash")  # the verdict turn is flash again
    assert outcome.to_summary().escalations == 2


async def test_needs_pro_hint_starts_the_step_on_pro_and_preset_flash_never_escalates(tmp_path: Path) -> None:
    for preset, expected in (("auto", 1), ("flash", 0)):
        ws = _workspace(tmp_path / preset)
        planner = [
            reply(call("submit_plan", objective="ops", steps=_one_step_plan(needs_pro=True))),
            *_verdict(),
        ]
        events: list[object] = []
        options = GoalOptions(escalation=EscalationPolicy(preset=preset))  # type: ignore[arg-type]
        async with goal_env(script(planner, executor_step("S1", "calc/ops.py", OPS))) as (_emu, client):
            outcome = await new_runner(client, ws, "ops", events=events, options=options).run()
        assert outcome.status == "complete"
        hints = [e for e in events if isinstance(e, Escalated)]
        assert len(hints) == expected and all(e.trigger == "hint" for e in hints)


async def test_review_feedback_revises_and_the_diff_is_shown(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    first = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK])]
    second = [*first, step("S2", "Add README", deps=["S1"], writes=["README.md"], verify=["test -s README.md"])]
    planner = [
        reply(call("submit_plan", objective="ops", steps=first)),
        reply(call("revise_plan", objective="ops", steps=second)),
        *_verdict(),
    ]
    executor = [*executor_step("S1", "calc/ops.py", OPS), *executor_step("S2", "README.md", "# calc\n")]
    reviewer = ScriptedReviewer([{"kind": "revise", "feedback": "Also add a README."}, {"kind": "approve"}])
    events: list[object] = []
    async with goal_env(script(planner, executor)) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", events=events, reviewer=reviewer).run()
    assert outcome.status == "complete"
    decisions = [e.decision for e in events if isinstance(e, ReviewDecided)]
    assert decisions == ["revise", "approve"]
    revised = [e for e in events if isinstance(e, PlanRevised)]
    assert len(revised) == 1 and "S2" in revised[0].diff_text
    assert (ws / "README.md").read_text() == "# calc\n"


async def test_review_cancel_stops_before_anything_changes(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    planner = [reply(call("submit_plan", objective="ops", steps=_one_step_plan()))]
    async with goal_env(script(planner, [])) as (_emu, client):
        runner = new_runner(client, ws, "ops", reviewer=ScriptedReviewer([{"kind": "cancel"}]))
        outcome = await runner.run()
    assert outcome.status == "cancelled"
    assert not (ws / "calc" / "ops.py").exists()


def _as_old_goal_json(path: Path) -> None:
    """Rewrite ``goal.json`` as it was written before the plan held the step state (per-step maps)."""
    data = json.loads(path.read_text())
    plan = data.pop("plan")
    done = [s for s in plan["steps"] if s["status"] == "done"]
    data.update(
        plan_revision=plan["revision"],
        verified=[s["id"] for s in done],
        statuses={s["id"]: s["status"] for s in plan["steps"]},
        results={s["id"]: s["result"] for s in done},
        evidence={s["id"]: s["evidence"] for s in done},
    )
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("old_goal_json", [False, True])
async def test_budget_pause_then_resume_with_a_raised_budget(tmp_path: Path, old_goal_json: bool) -> None:
    ws = _workspace(tmp_path)
    two = [
        step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK]),
        step("S2", "Add README", deps=["S1"], writes=["README.md"], verify=["test -s README.md"]),
    ]
    planner = [reply(call("submit_plan", objective="ops", steps=two)), *_verdict()]
    executor = [*executor_step("S1", "calc/ops.py", OPS), *executor_step("S2", "README.md", "# calc\n")]
    events: list[object] = []
    tiny = GoalOptions(budget=Budget(requests=4))
    async with goal_env(script(planner, executor)) as (_emu, client):
        first = await new_runner(client, ws, "ops", events=events, options=tiny).run()
        assert first.status == "paused" and "requests" in first.summary
        finished = [e for e in events if isinstance(e, GoalFinished)]
        assert finished[-1].resume_hint == "reasonix goal --resume run-1"
        verified_before = list(first.record.verified)
        if old_goal_json:
            _as_old_goal_json(ws / ".reasonix" / "runs" / "run-1" / "goal.json")
        resumed = resume_runner(
            workspace=ws,
            client=client,
            run_id="run-1",
            options=GoalOptions(budget=Budget(requests=50)),
            reviewer=None,
            on_event=events.append,
            config_dir=ws / ".no-user-config",
        )
        outcome = await resumed.run()
    assert outcome.status == "complete", outcome.summary
    assert outcome.record.verified == ["S1", "S2"]
    started = [e.step_id for e in events if isinstance(e, StepStarted)]
    for sid in verified_before:
        assert started.count(sid) == 1  # a verified step never runs again
    # The summary covers the whole goal, both processes: its requests and cost are what the budget charged.
    summary = outcome.to_summary()
    assert summary.requests == outcome.record.usage_requests > first.to_summary().requests
    assert summary.cost_usd == pytest.approx(outcome.record.usage_usd, abs=1e-6)


async def test_the_same_failure_three_times_pauses_as_stuck(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    bad = "def add(a, b):\n    return a - b\n"
    planner = [
        reply(call("submit_plan", objective="ops", steps=_one_step_plan())),
        # The revision keeps the step's id (its meaning stays) with new instructions; it fails the same way again.
        reply(call("revise_plan", objective="ops", steps=_one_step_plan(instructions="Write add() carefully"))),
    ]
    executor = executor_step("S1", "calc/ops.py", bad) * 3
    events: list[object] = []
    async with goal_env(script(planner, executor)) as (_emu, client):
        outcome = await new_runner(client, ws, "ops", events=events).run()
    assert outcome.status == "paused"
    assert outcome.summary.startswith("the same failure three times on S1")
    assert [e.step_id for e in events if isinstance(e, StepStarted)] == ["S1", "S1", "S1"]


async def test_a_planner_that_never_plans_fails_the_goal_saying_what_to_do(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    planner = [reply(content="I would start by reading the code.") for _ in range(3)]
    events: list[object] = []
    async with goal_env(script(planner, [])) as (emu, client):
        outcome = await new_runner(client, ws, "ops", events=events).run()
        requests = emu.stats()["sessions"]
    assert outcome.status == "failed"
    assert "no valid plan in 3 attempts (it never called submit_plan)" in outcome.summary
    assert "--preset pro" in outcome.summary
    assert "executor" not in requests and not any(isinstance(e, StepStarted) for e in events)


async def test_a_planner_whose_plans_stay_invalid_fails_naming_the_last_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    cyclic = [step("S1", "One", deps=["S2"]), step("S2", "Two", deps=["S1"])]
    planner = [
        r
        for _ in range(3)
        for r in (reply(call("submit_plan", objective="ops", steps=cyclic)), reply(content="Submitted."))
    ]
    async with goal_env(script(planner, [])) as (emu, client):
        outcome = await new_runner(client, ws, "ops").run()
        requests = emu.stats()["sessions"]
    assert outcome.status == "failed"
    assert "its last plan was rejected:" in outcome.summary and "S1 → S2 → S1" in outcome.summary, outcome.summary
    assert "executor" not in requests


async def test_an_exec_run_paused_by_its_budget_resumes_as_a_goal(tmp_path: Path) -> None:
    """``reasonix exec`` starts from an approved plan; its pause hint is ``reasonix goal --resume``, which must work."""
    from orchestrator.build import create_runner
    from plans.schema import Plan

    ws = _workspace(tmp_path)
    two = [
        step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK]),
        step("S2", "Add README", deps=["S1"], writes=["README.md"], verify=["test -s README.md"]),
    ]
    plan = Plan.model_validate({"objective": "ops", "steps": two})
    executor = [*executor_step("S1", "calc/ops.py", OPS), *executor_step("S2", "README.md", "# calc\n")]
    events: list[object] = []
    async with goal_env(script(_verdict(), executor)) as (emu, client):
        common = dict(workspace=ws, client=client, reviewer=None, on_event=events.append, config_dir=ws / ".none")
        first = await create_runner(
            objective="", plan=plan, run_id="run-x", options=GoalOptions(budget=Budget(requests=3)), **common
        ).run()
        assert first.status == "paused", first.summary
        assert "planner" not in emu.stats()["sessions"]  # exec never plans
        resumed = resume_runner(run_id="run-x", options=GoalOptions(budget=Budget(requests=50)), **common)
        outcome = await resumed.run()
    assert outcome.status == "complete", outcome.summary
    assert outcome.record.verified == ["S1", "S2"]
    assert [e.step_id for e in events if isinstance(e, StepStarted)].count("S1") == 1
