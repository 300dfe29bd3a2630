"""A prompt in the ACP session mode ``plan``: the goal machinery of ``reasonix goal`` (its read-only planner, a review,
then the executor step by step), with the editor as the reviewer and the plan as ACP plan entries.

The prompt is the goal's objective. The planner's thinking, reads and text stream as the conversation's do; each plan
it proposes (and each revision) is sent as a ``plan`` update (every step an entry: its title as ``content``, its risk
as ``priority``, its state as ``status``) and as the plan document in markdown, then the editor is asked whether to
run it (``session/request_permission`` with the options "Run the plan" and "Do not run it"). Approved, the session
leaves plan mode for ask (a ``current_mode_update``) and the steps run; every change of a step's state sends the
entries again, as the protocol wants (the whole list each time). Not approved, the goal ends there, the plan shown.
``session/cancel`` pauses the goal (``reasonix goal --resume ID`` goes on).

The planner and the goal's executor are conversations of their own: the ACP session's conversation, and its cache,
are untouched by a plan turn. What came of it (the plan with its steps' states, the closing line) rides in a
``<plan-run>`` tail block in front of the session's next user message, so the conversation knows what was done.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from orchestrator.acp.protocol import text_content
from orchestrator.headless.events import StreamJsonEvent
from orchestrator.headless.goal_stream import SESSION_EVENTS, GoalEvents
from orchestrator.review.reviewer import ReviewDecision
from plans import Plan, StepStatus, to_markdown
from sessions.permissions import Answer, Question

if TYPE_CHECKING:
    from orchestrator.goal.runner import AnyEvent, GoalRunner

PLAN_OPTIONS = [
    {"optionId": "run_plan", "name": "Run the plan", "kind": "allow_once"},
    {"optionId": "reject_plan", "name": "Do not run it", "kind": "reject_once"},
]

STATUS = {StepStatus.RUNNING: "in_progress", StepStatus.DONE: "completed", StepStatus.SKIPPED: "completed"}
"""A step's state as a plan entry's status (the protocol has pending, in_progress and completed; a failed or
blocked step stays pending: it is not done)."""

Send = Callable[[dict[str, Any]], None]
"""Queue one ``session/update`` body."""
Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Send a request to the client and wait for its result."""


def plan_entries(plan: Plan) -> list[dict[str, str]]:
    return [
        {"content": step.title, "priority": step.risk.value, "status": STATUS.get(step.status, "pending")}
        for step in plan.steps
    ]


class EditorReviewer:
    """The goal's reviewer: the plan goes to the editor, and the editor's answer decides."""

    def __init__(
        self,
        session_id: str,
        send: Send,
        request: Request,
        show_plan: Callable[[Plan], None],
        on_approved: Callable[[], None],
    ) -> None:
        self.session_id = session_id
        self.send = send
        self.request = request
        self.show_plan = show_plan
        self.on_approved = on_approved

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        self.show_plan(plan)
        self.send({"sessionUpdate": "agent_message_chunk", "content": text_content(to_markdown(plan))})
        call = {
            "toolCallId": f"plan-r{plan.revision}",
            "title": f"Run this plan ({len(plan.steps)} steps)?",
            "kind": "switch_mode",
            "status": "pending",
            "content": [{"type": "content", "content": text_content(diff_text or to_markdown(plan))}],
        }
        result = await self.request(
            "session/request_permission", {"sessionId": self.session_id, "toolCall": call, "options": PLAN_OPTIONS}
        )
        outcome = result.get("outcome", {}) if isinstance(result, dict) else {}
        if outcome.get("outcome") == "selected" and outcome.get("optionId") == "run_plan":
            self.on_approved()
            return ReviewDecision(kind="approve")
        return ReviewDecision(kind="cancel")


class PlanTurn:
    """One plan-mode prompt: builds and runs the goal. ``on_line`` takes the stream-json lines of the goal's
    sessions (the ACP session turns them into updates); ``ask`` answers the goal's permission questions."""

    def __init__(
        self,
        *,
        session_id: str,
        send: Send,
        request: Request,
        on_line: Callable[[StreamJsonEvent], None],
        ask: Callable[[Question], Awaitable[Answer]],
        on_approved: Callable[[], None],
    ) -> None:
        self.session_id = session_id
        self.send = send
        self.reviewer = EditorReviewer(session_id, send, request, self.show_plan, on_approved)
        self.lines = GoalEvents(session_id, on_line)
        self.ask = ask
        self.runner: GoalRunner | None = None
        self.report = ""
        """After :meth:`run`: the plan as it ended and the goal's closing line, for the conversation's next turn."""
        self._sent: list[dict[str, str]] | None = None

    def show_plan(self, plan: Plan) -> None:
        """Send the plan's entries (the whole list: the client replaces its plan with each update)."""
        self._sent = plan_entries(plan)
        self.send({"sessionUpdate": "plan", "entries": self._sent})

    def on_event(self, event: AnyEvent) -> None:
        self.lines(event)
        if isinstance(event, SESSION_EVENTS) or self.runner is None or self._sent is None:
            return  # before a plan was shown there is nothing to update
        plan = self.runner.plan_with_state()
        if plan is not None and plan_entries(plan) != self._sent:
            self.show_plan(plan)

    async def run(self, *, launch: Any, env: dict[str, str]) -> str:
        """Run the goal ``launch`` describes; returns its closing line (also sent as agent text). Raises
        :class:`~orchestrator.errors.ReasonixError` when it cannot start (a configuration problem, a missing key)."""
        from orchestrator.launch import launch_goal

        launched = launch_goal(
            launch, env=env, reviewer=lambda setup: self.reviewer, on_event=self.on_event, asker=self.ask
        )
        runner = self.runner = launched.runner
        try:
            async with runner.client, launched.mcp.open():
                await runner.run("goal")
        finally:
            runner.store.sync()
            runner.store.close()
        outcome = runner.outcome()
        text = f"{outcome.status}: {outcome.summary}" if outcome.summary else outcome.status
        plan = runner.plan_with_state()
        self.report = f"run {runner.store.run_id}: {text}" + (f"\n\n{to_markdown(plan)}" if plan is not None else "")
        self.send({"sessionUpdate": "agent_message_chunk", "content": text_content(f"\n\n{text}")})
        return text
