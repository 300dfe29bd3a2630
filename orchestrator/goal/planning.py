"""Planning (DESIGN §5): the Planning phase (the first plan) and the Replanning phase (after a blocked or failed step).

Each returns the next phase, or :class:`~orchestrator.goal.phases.Ended`.
"""

from __future__ import annotations

from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext
from orchestrator.goal.executing import CUT_FEEDBACK
from orchestrator.goal.judging import judge
from orchestrator.goal.phases import Ended, Executing, Replanning, Reviewing, VerdictGiven
from orchestrator.goal.proposals import adopt, ask_planner


async def first_plan(ctx: GoalContext) -> Reviewing | Ended:
    """The Planning phase: the planner inspects the workspace and submits the plan."""
    ctx.set_state("planning")
    answer = await ask_planner(ctx, prompts.planning_turn(ctx.record.objective))
    if isinstance(answer, Ended):
        return answer
    if isinstance(answer, VerdictGiven):
        return judge(ctx, answer.verdict) or Ended("blocked", unproven_verdict(answer.verdict.evidence))
    adopt(ctx, answer.plan, reason="initial plan", notes=answer.notes)
    return ctx.over_budget() or Reviewing()


def unproven_verdict(evidence: list[str]) -> str:
    """Why a ``complete`` verdict given instead of a first plan does not end the goal complete."""
    said = f" (it says: {'; '.join(evidence)})" if evidence else ""
    return (
        f"the planner says the objective is already met{said}, but gave no plan, so no command the supervisor ran "
        "shows it; if it is met, nothing is to be done, else state the objective with the test that shows it"
    )


async def replan(ctx: GoalContext, phase: Replanning) -> Executing | Ended:
    """The Replanning phase: the planner revises the plan after ``phase.step`` was blocked or failed."""
    record, step = ctx.record, phase.step
    if record.replans >= ctx.options.max_replans:
        return ctx.held(f"re-planned {record.replans} times without finishing; review the plan and resume")
    record.replans += 1
    why = "is blocked" if phase.blocked else "failed verification"
    if phase.feedback == CUT_FEEDBACK:
        why = "failed: its replies were cut at the output limit"
    ctx.set_state("replanning", f"{step.id} {why}")
    plan = ctx.plan
    assert plan is not None
    if phase.blocked:
        text = prompts.blocked_step_turn(plan, step, phase.feedback)
    else:
        text = prompts.replan_turn(plan, step, phase.feedback)
    answer = await ask_planner(ctx, ctx.with_planner_note(text))
    if isinstance(answer, Ended):
        return answer
    if isinstance(answer, VerdictGiven):
        return judge(ctx, answer.verdict) or Ended("failed", "the planner gave a verdict instead of revising the plan")
    adopt(ctx, answer.plan, reason=f"{step.id} {'blocked' if phase.blocked else 'failed'}")
    for s in answer.plan.steps:  # a revised step gets fresh attempts
        if s.id not in record.verified:
            record.attempts.pop(s.id, None)
    ctx.save()
    return Executing()
