"""``/plan`` and ``/goal`` inside the conversation: the goal machinery of ``reasonix goal`` (the same runner, launched
by the same :func:`~orchestrator.launch.launch_goal`), run inline under the conversation's trio loop.
``/plan`` opens the review here (approve / revise with feedback / edit in ``$EDITOR`` / cancel); ``/goal`` approves
automatically. Ctrl-C pauses the goal (``reasonix goal --resume`` goes on) and returns to the prompt."""

from __future__ import annotations

import os

import trio
from pydantic import ValidationError

from orchestrator.errors import ReasonixError
from orchestrator.repl.conversation import Conversation
from sessions.wire import DeepSeekError


async def run_goal(conv: Conversation, objective: str, *, review: bool) -> None:
    from orchestrator.build import GoalSetup
    from orchestrator.goal.outcome import resume_command
    from orchestrator.goal.runner import AnyEvent
    from orchestrator.launch import GoalLaunch, launch_goal, plan_estimate
    from orchestrator.review.reviewer import AutoApprove, Reviewer, make_reviewer
    from orchestrator.ui.approval import terminal_asker
    from orchestrator.ui.goal_view import GoalTerminalUI, summary_text

    name = "plan" if review else "goal"
    if not objective.strip():
        conv.say(f"/{name} needs an objective, e.g. /{name} add a --json flag", "yellow")
        return
    launch = GoalLaunch(
        workspace=conv.workspace,
        objective=objective.strip(),
        preset=conv.preset,
        base_url=conv.options.base_url,
        sandbox=conv.options.sandbox,
    )

    def reviewer(setup: GoalSetup) -> Reviewer:
        if not review:
            return AutoApprove()
        return make_reviewer(conv.console, yes=False, stdin_isatty=True, show_plan=False, estimate=plan_estimate(setup))

    ui: GoalTerminalUI | None = None

    def on_event(event: AnyEvent) -> None:
        if ui is not None:
            ui(event)

    conv.renderer.end_line()
    try:
        launched = launch_goal(
            launch,
            env=os.environ,
            reviewer=reviewer,
            on_event=on_event,
            asker=terminal_asker(),
            on_notice=lambda text: conv.say(f"reasonix: {text}", "dim"),
        )
    except (ReasonixError, ValidationError) as exc:
        conv.say(f"/{name}: {exc}", "red")
        return
    runner = launched.runner
    if launched.setup.notice:
        conv.say(f"reasonix: {launched.setup.notice}", "red")
    ui = GoalTerminalUI(conv.console, plan_state=runner.plan_with_state, budget=runner.budget)
    conv.say(f"{name} · run {runner.store.run_id}")
    ui.start()
    outcome = None
    try:
        async with runner.client, launched.mcp.open():
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
        conv.say(f"paused: resume with `{resume_command(runner.store.run_id, workspace=conv.workspace)}`", "yellow")
        return
    conv.console.print(summary_text(outcome.to_summary("goal")), soft_wrap=True)
    style = "green" if outcome.status == "complete" else "yellow"
    conv.say(f"{outcome.status}: {outcome.summary}" if outcome.summary else outcome.status, style)
