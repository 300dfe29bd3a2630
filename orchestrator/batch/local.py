"""Running a batch's goals on this machine: up to ``jobs`` at once, each a trio task running
:func:`~orchestrator.batch.goal_run.run_one_goal` in its own copy, all asking the one :class:`BatchLedger`."""

from __future__ import annotations

import trio

from orchestrator.batch.driver import BatchRun
from orchestrator.batch.goal_run import run_one_goal
from orchestrator.batch.ledger import LocalShare
from orchestrator.batch.spec import GoalSpec


async def run_local(batch: BatchRun, *, jobs: int) -> None:
    """Run every pending goal of ``batch``; each result is recorded as it ends. Once the batch's budget is reached
    no goal is started (it is recorded paused, to run on ``--resume``). Ctrl-C pauses the running goals and
    propagates."""
    limiter = trio.CapacityLimiter(max(1, jobs))

    async def one(goal: GoalSpec) -> None:
        async with limiter:
            if batch.ledger.closed:
                batch.record(batch.not_started(goal))
                return
            result = await run_one_goal(
                goal,
                None,
                batch.goal_dir(goal.id),
                env=batch.env,
                shared=LocalShare(batch.ledger, goal.id),
                base_url=batch.base_url,
                on_progress=batch.on_progress,
            )
            batch.record(result)

    async with trio.open_nursery() as nursery:
        for goal in batch.pending:
            nursery.start_soon(one, goal)
