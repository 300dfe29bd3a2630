"""``/plan`` and ``/goal`` inside the conversation: the goal machinery of ``reasonix goal`` (the same runner, built by
the same :class:`~orchestrator.cli.goal_command.GoalCommand`), run inline under the conversation's trio loop.
``/plan`` opens the review here (approve / revise with feedback / edit in ``$EDITOR`` / cancel); ``/goal`` approves
automatically. Ctrl-C pauses the goal (``reasonix goal --resume`` goes on) and returns to the prompt."""

from __future__ import annotations

import argparse

import trio
from pydantic import ValidationError

from orchestrator.errors import ReasonixError
from orchestrator.repl.conversation import Conversation
from sessions.errors import DeepSeekError


async def run_goal(conv: Conversation, objective: str, *, review: bool) -> None:
    from orchestrator.cli.goal_command import GoalCommand
    from orchestrator.goal.runner import AnyEvent
    from orchestrator.ui.goal_view import GoalTerminalUI, summary_text

    name = "plan" if review else "goal"
    if not objective.strip():
        conv.say(f"/{name} needs an objective, e.g. /{name} add a --json flag", "yellow")
        return
    args = argparse.Namespace(
        objective=objective.strip(),
        workspace=conv.workspace,
        base_url=conv.options.base_url,
        sandbox=conv.options.sandbox,
        permissions=None,
        preset=conv.preset,
        budget_usd=None,
        max_requests=None,
        max_minutes=None,
        yes=not review,
        json=False,
        record=None,
        resume=None,
    )
    command = GoalCommand(args=args, mode="goal", prog=name, stdout=conv.console, stdin_isatty=True)
    ui: GoalTerminalUI | None = None

    def on_event(event: AnyEvent) -> None:
        if ui is not None:
            ui(event)

    conv.renderer.end_line()
    try:
        runner = command.build(on_event)
    except (ReasonixError, ValidationError) as exc:
        conv.say(f"/{name}: {exc}", "red")
        return
    ui = GoalTerminalUI(conv.console, plan_state=runner.plan_with_state, budget=runner.budget)
    conv.say(f"{name} · run {runner.store.run_id}")
    ui.start()
    outcome = None
    try:
        async with runner.client:
            with trio.CancelScope() as scope:
                conv.turn_scope = scope
                outcome = await runner.run("goal")
    except DeepSeekError as exc:
        conv.say(f"DeepSeek: {exc}", "red")
    finally:
        conv.turn_scope = None
        ui.stop()
        runner.store.sync()
        runner.store.close()
    if outcome is None:
        conv.say(f"paused: resume with `reasonix goal --resume {runner.store.run_id}`", "yellow")
        return
    conv.console.print(summary_text(outcome.to_summary("goal")), soft_wrap=True)
    style = "green" if outcome.status == "complete" else "yellow"
    conv.say(f"{outcome.status}: {outcome.summary}" if outcome.summary else outcome.status, style)
