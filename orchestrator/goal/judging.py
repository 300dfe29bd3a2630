"""Judging (DESIGN §5): the planner's verdict on the whole goal, and the phase that asks for it once every step is
verified. The supervisor never takes the model's word: a goal is complete only when every step of its plan is."""

from __future__ import annotations

from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext
from orchestrator.goal.phases import Ended, Executing, PlanAccepted, VerdictGiven
from orchestrator.goal.proposals import adopt, ask_planner
from orchestrator.goal.tools import GoalVerdictArgs
from plans import StepStatus


def judge(ctx: GoalContext, verdict: GoalVerdictArgs) -> Ended | None:
    """What the planner's verdict means for the goal: ``blocked`` ends it with the planner's question; ``complete``
    ends it when every step is verified, and means nothing (``None``) while a step is not."""
    ctx.record.verdict = verdict.model_dump()
    if verdict.verdict == "blocked":
        return Ended("blocked", verdict.question)
    plan = ctx.plan
    if plan is not None and any(s.status is not StepStatus.DONE for s in plan.steps):
        return None
    return Ended("complete", "; ".join(verdict.evidence) or "the planner confirmed the objective is met")


async def ask_verdict(ctx: GoalContext) -> Executing | Ended:
    """The Judging phase: every step is verified; the planner confirms the objective is met, or revises the plan."""
    plan = ctx.plan
    assert plan is not None
    ctx.set_state("replanning", "every step is verified: asking the planner for its verdict")
    answer = await ask_planner(ctx, ctx.with_planner_note(prompts.verdict_turn(plan)))
    if isinstance(answer, VerdictGiven):
        judged = judge(ctx, answer.verdict)
        if judged is not None:
            return judged
        # A "complete" verdict with unverified steps: ask again for a plan.
        answer = await ask_planner(ctx, prompts.no_plan_turn(1))
    if isinstance(answer, Ended):
        return answer
    if isinstance(answer, PlanAccepted):
        adopt(ctx, answer.plan, reason="the planner found work remaining")
        ctx.set_state("executing")
    return Executing()
