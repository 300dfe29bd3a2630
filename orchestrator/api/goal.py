"""Goals from Python: plan, review (your callback), execute and verify, as ``reasonix goal`` does, through the same
launch path (:func:`orchestrator.launch.launch_goal`).

    async def review(plan: Plan) -> ReviewDecision:
        return approve() if len(plan.steps) <= 5 else revise("fewer steps, please")

    summary = await run_goal("add a --json flag", "path/to/repo", reviewer=review, base_url=url)

Every event reaches ``on_event`` in the stream-json envelope: a goal's own events as ``system`` lines of subtype
``goal_event`` (``data`` is the event as ``reasonix goal --json`` prints it, ``message`` its kind), its sessions'
events as the same ``stream_event`` / ``assistant`` / ``user`` lines as a conversation's. :class:`GoalHandle` pauses a
running goal (it stays resumable: ``run_goal(resume=run_id)``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import httpx
import trio

from orchestrator.headless.events import StreamJsonEvent
from orchestrator.headless.goal_stream import GoalEvents
from orchestrator.launch import GoalLaunch, launch_goal
from orchestrator.policy.workspace_rule import check_workspace
from orchestrator.review.reviewer import AutoApprove, ReviewDecision, Reviewer
from orchestrator.summary import Summary
from plans import Plan

ReviewCallback = Callable[[Plan], "ReviewDecision | Awaitable[ReviewDecision]"]


def approve() -> ReviewDecision:
    return ReviewDecision(kind="approve")


def revise(feedback: str) -> ReviewDecision:
    """Send the plan back to the planner with ``feedback``."""
    return ReviewDecision(kind="revise", feedback=feedback)


def cancel() -> ReviewDecision:
    return ReviewDecision(kind="cancel")


class _CallbackReviewer:
    def __init__(self, callback: ReviewCallback) -> None:
        self.callback = callback

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        decision = self.callback(plan)
        if inspect.isawaitable(decision):
            decision = await decision
        if not isinstance(decision, ReviewDecision):
            raise TypeError(f"the reviewer callback returned {decision!r}; return approve(), revise(...) or cancel()")
        return decision


class GoalHandle:
    """Control over a goal started by :func:`run_goal` (``on_start`` receives it)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.scope = trio.CancelScope()

    def pause(self) -> None:
        """Stop the goal at once; it is paused and resumable (``run_goal(resume=run_id)``)."""
        self.scope.cancel()


async def run_goal(
    objective: str = "",
    workspace: str | Path = ".",
    *,
    reviewer: ReviewCallback | None = None,
    on_event: Callable[[StreamJsonEvent], None] | None = None,
    on_start: Callable[[GoalHandle], None] | None = None,
    resume: str | None = None,
    preset: str | None = None,
    budget_usd: float | None = None,
    max_requests: int | None = None,
    max_minutes: float | None = None,
    base_url: str | None = None,
    allow_unconfined_verify: bool = False,
    env: Mapping[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Summary:
    """Run a goal (or ``resume`` a paused one) to its end and return its summary (what ``reasonix goal --json``
    prints last). ``reviewer`` decides on each plan (default: approve automatically). Raises
    :class:`~orchestrator.errors.ReasonixError` for a usage or configuration problem before anything is sent."""
    root = check_workspace(Path(workspace))
    launch = GoalLaunch(
        workspace=root,
        objective=objective if resume is None else "",
        resume=resume,
        preset=preset,
        budget_usd=budget_usd,
        max_requests=max_requests,
        max_minutes=max_minutes,
        base_url=base_url,
        allow_unconfined_verify=allow_unconfined_verify,
    )
    sink: list[GoalEvents] = []

    def chosen(setup: object) -> Reviewer:
        return _CallbackReviewer(reviewer) if reviewer is not None else AutoApprove()

    launched = launch_goal(
        launch,
        env=dict(os.environ if env is None else env),
        reviewer=chosen,
        on_event=lambda event: sink[0](event) if sink else None,
        transport=transport,
    )
    runner = launched.runner
    handle = GoalHandle(runner.store.run_id)
    if on_event is not None:
        sink.append(GoalEvents(handle.run_id, on_event))
    if on_start is not None:
        on_start(handle)
    async with runner.client, launched.mcp.open():
        with handle.scope:
            await runner.run(launch.mode)
    summary = runner.outcome().to_summary("goal")
    runner.store.sync()
    runner.store.close()
    return summary


def run_goal_sync(objective: str = "", workspace: str | Path = ".", **options: object) -> Summary:
    """:func:`run_goal` from plain Python: runs its own Trio loop (a callback reviewer may be a plain function)."""
    summary: Summary = trio.run(lambda: run_goal(objective, workspace, **options))  # type: ignore[arg-type]
    return summary
