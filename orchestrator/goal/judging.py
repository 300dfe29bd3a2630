"""Judging (DESIGN §5): the planner's verdict on the whole goal, and the phase that asks for it once every step is
verified. The supervisor never takes the model's word: a goal is complete only when every step of its plan is
verified and the goal's acceptance commands (:func:`plans.acceptance_commands`) pass on the host after the last step
(DESIGN §5 "Evidence from the host")."""

from __future__ import annotations

from orchestrator.events import StepVerified, VerifyOutcome
from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext
from orchestrator.goal.phases import Ended, Executing, PlanAccepted, Replanning, VerdictGiven
from orchestrator.goal.proposals import adopt, ask_planner
from orchestrator.goal.tools import GoalVerdictArgs
from orchestrator.policy.verify import run_command, verify_feedback
from plans import StepStatus, acceptance_commands

ACCEPTANCE = "acceptance"
"""The name the acceptance check is reported under (a :class:`StepVerified` of no step)."""

NO_EVIDENCE = (
    "the planner says the objective is met, but no command the supervisor ran shows it: the plan names no verify "
    "command. Give the goal a test or command that checks the objective (in the objective, or in the plan) and "
    "run it again"
)


def judge(ctx: GoalContext, verdict: GoalVerdictArgs, *, checked_on_host: bool = False) -> Ended | None:
    """What the planner's verdict means for the goal: ``blocked`` ends it with the planner's question; ``complete``
    ends it only when every step is verified and the acceptance commands passed on the host after the last step
    (``checked_on_host``), and means nothing (``None``) otherwise: the model's word alone is never evidence."""
    ctx.record.verdict = verdict.model_dump()
    if verdict.verdict == "blocked":
        return Ended("blocked", verdict.question)
    plan = ctx.plan
    if plan is None or not checked_on_host or any(s.status is not StepStatus.DONE for s in plan.steps):
        return None
    return Ended("complete", "; ".join(verdict.evidence) or "the planner confirmed the objective is met")


async def check_acceptance(ctx: GoalContext) -> Replanning | Ended | None:
    """Run the goal's acceptance commands on the host, after the last step: ``None`` when every one passes, else the
    re-plan of the step that named the first that failed (or the end, blocked, when there is no command at all)."""
    plan = ctx.plan
    assert plan is not None
    commands = acceptance_commands(plan)
    if not commands:
        return Ended("blocked", NO_EVIDENCE)
    outcomes: list[tuple[str, VerifyOutcome]] = []
    for step_id, command in commands:
        outcome = await run_command(
            command, ctx.workspace, default_timeout_s=ctx.options.verify_timeout_s, sandbox=ctx.sandbox
        )
        outcomes.append((step_id, outcome))
    if all(o.ok for _, o in outcomes):
        return None  # the state change that follows says so
    ctx.emit(StepVerified(step_id=ACCEPTANCE, ok=False, outcomes=tuple(o for _, o in outcomes)))
    first = next(step_id for step_id, o in outcomes if not o.ok)
    step = plan.step(first)
    ctx.update_step(step.id, status=StepStatus.FAILED)
    ctx.save()
    feedback = "After the last step, the goal's acceptance commands were run again and failed.\n" + verify_feedback(
        o for _, o in outcomes
    )
    return Replanning(step, feedback, blocked=False)


async def ask_verdict(ctx: GoalContext) -> Executing | Replanning | Ended:
    """The Judging phase: every step is verified; the acceptance commands are run again on the host; the planner
    confirms the objective is met, or revises the plan."""
    plan = ctx.plan
    assert plan is not None
    failed = await check_acceptance(ctx)
    if failed is not None:
        return failed
    ctx.set_state(
        "replanning",
        "every step is verified and its verify commands pass again on the host: asking the planner for its verdict",
    )
    answer = await ask_planner(ctx, ctx.with_planner_note(prompts.verdict_turn(plan)))
    if isinstance(answer, VerdictGiven):
        judged = judge(ctx, answer.verdict, checked_on_host=True)
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
