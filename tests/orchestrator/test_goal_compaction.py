"""Compaction in a goal: the new log opens with the task as the supervisor holds it (objective, every step's status
and its verify outcome, the files changed), not as the model summarised it; then the goal goes on to complete."""

from __future__ import annotations

from pathlib import Path

from orchestrator.goal.runner import GoalOptions
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
    step("S2", "Add calc/mul.py", deps=["S1"], writes=["calc/mul.py"]),
]
TASK = (
    "<compacted-history>\n<task>\n"
    "The task, as the supervisor holds it:\n"
    "Objective: grow calc\n"
    "Plan (revision 1):\n"
    "- S1 [done] Add calc/ops.py\n"
    "    verify `python3 -c 'import calc.ops'`: passed\n"
    "- S2 [running] Add calc/mul.py\n"
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
