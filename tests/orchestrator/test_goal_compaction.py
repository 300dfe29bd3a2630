"""Compaction in a goal: the new log opens with the task as the supervisor holds it (objective, every step's status
and its verify outcome, the files changed), not as the model summarised it; then the goal goes on to complete."""

from __future__ import annotations

from pathlib import Path

from orchestrator.config.context import ContextConfig
from orchestrator.goal.context import STEP_REQUESTS_GUESS, remaining_requests
from orchestrator.goal.runner import GoalOptions
from plans import Plan
from scenarios.emulator import Script
from sessions.compaction import DIGEST_FINGERPRINT
from sessions.events import Compacted, RequestStarted
from sessions.wire import UserMessage

from .goal_support import EXECUTOR, PLANNER, call, executor_step, goal_env, new_runner, reply, step

OPS = "def add(a, b):\n    return a + b\n"
MUL = "def mul(a, b):\n    return a * b\n"
CHECK_OPS = "python3 -c 'import calc.ops'"
PLAN = [
    step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK_OPS]),
    step("S2", "Add calc/mul.py", deps=["S1"], writes=["calc/mul.py"], verify=["python3 -c 'import calc.mul'"]),
]
TASK = (
    "<compacted-history>\n<task>\n"
    "The task, as the supervisor holds it:\n"
    "Objective: grow calc\n"
    "Plan (revision 1):\n"
    "- S1 [done] Add calc/ops.py\n"
    "    verify `python3 -c 'import calc.ops'`: passed\n"
    "- S2 [running] Add calc/mul.py\n"
    "    verify `python3 -c 'import calc.mul'`: not run yet\n"
    "Files changed so far: calc/ops.py\n"
    "</task>\n"
    "The earlier part of this session was compacted."
)


def _script() -> Script:
    planner = [
        reply(call("submit_plan", objective="grow calc", steps=PLAN)),
        reply(call("goal_verdict", verdict="complete", evidence=["both modules"])),
    ]
    executor = executor_step("S1", "calc/ops.py", OPS) + executor_step("S2", "calc/mul.py", MUL)
    return Script.model_validate(
        {
            "sessions": [
                {
                    "key": "digest",
                    "system_contains": "You compress the history",
                    "replies": [{"content": "S1 done"}] * 2,
                },
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
            ]
        }
    )


async def test_a_compacted_executor_log_opens_with_the_task_the_supervisor_holds(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    events: list[object] = []
    # A window so small that the executor's log passes 80 % of it before S2: one compaction, then S2 goes on.
    options = GoalOptions(parallel=1, context_window=1_700)
    async with goal_env(_script()) as (_emu, client):
        outcome = await new_runner(client, ws, "grow calc", options=options, events=events).run()
    assert outcome.status == "complete", outcome.summary
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert [c.session for c in compacted] == ["executor"]
    assert outcome.executor is not None
    first = outcome.executor.log.messages[0]
    assert isinstance(first, UserMessage) and first.content.startswith(TASK)  # byte for byte
    assert "<user-turn>" in first.content and "<digest>\nS1 done\n</digest>" in first.content
    # Four requests of the conversation and, during S2, the one side request that wrote the digest.
    sent = [
        e.prefix_fingerprint == DIGEST_FINGERPRINT
        for e in events
        if isinstance(e, RequestStarted) and e.session == "executor"
    ]
    assert sent.count(False) == 4 and sent.count(True) == 1
    assert (ws / "calc" / "mul.py").read_text() == MUL


async def test_a_goal_with_tiers_gives_both_sessions_recall_and_archives_in_the_run_directory(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    events: list[object] = []
    options = GoalOptions(parallel=1, context_window=1_700, context=ContextConfig(tiers=True))
    async with goal_env(_script()) as (_emu, client):
        runner = new_runner(client, ws, "grow calc", options=options, events=events)
        outcome = await runner.run()
    assert outcome.status == "complete", outcome.summary
    assert outcome.executor is not None and outcome.executor.tiers is not None
    assert "recall" in outcome.executor.registry
    rewrites = [e for e in events if isinstance(e, Compacted) and e.session == "executor"]
    assert rewrites and rewrites[0].reason.split(":")[0] in ("compact", "force")
    archive = outcome.executor.tiers.archive
    assert archive.folder is not None and archive.folder.parent == runner.store.dir and archive.ids()


def test_a_goal_expects_the_steps_left_at_the_pace_of_the_steps_done() -> None:
    steps = [{**s, "status": st} for s, st in zip(PLAN, ("done", "pending"), strict=True)]
    plan = Plan.model_validate({"objective": "grow calc", "steps": steps})
    assert remaining_requests(plan, 10) == 11  # one step left at 10 requests a step, and the verdict
    assert remaining_requests(None, 4) == 4
    fresh = Plan.model_validate({"objective": "grow calc", "steps": PLAN})
    assert remaining_requests(fresh, 0) == 2 * STEP_REQUESTS_GUESS + 1
