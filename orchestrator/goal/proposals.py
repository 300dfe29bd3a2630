"""The planner's proposals (DESIGN §5): a planner turn that must end with a plan or a verdict, and adopting a plan as
the current revision. Shared by planning, reviewing and judging.
"""

from __future__ import annotations

from orchestrator.events import PlanProposed, PlanRejected, PlanRevised
from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext
from orchestrator.goal.phases import Ended, PlanAccepted, PlannerAnswer, VerdictGiven
from plans import Plan, StepStatus, diff, diff_text


async def ask_planner(ctx: GoalContext, text: str) -> PlannerAnswer | Ended:
    """A planner turn that must end with an accepted plan or a verdict, with bounded follow-ups when it ends with
    neither. Ends the goal (failed) when the planner never gives a valid plan, or (paused) when the budget runs out."""
    last_errors: tuple[str, ...] = ()
    box = ctx.mailbox
    for attempt in range(1, ctx.options.max_plan_attempts + 1):
        await ctx.turn("planner", text)
        for rejected in box.rejections:
            ctx.emit(PlanRejected(errors=rejected, attempt=attempt))
            last_errors = rejected
        if box.plan is not None:
            return PlanAccepted(box.plan, box.plan_notes)
        if box.verdict is not None:
            return VerdictGiven(box.verdict)
        paused = ctx.over_budget()
        if paused is not None:
            return paused
        text = prompts.no_plan_turn(attempt)
    why = f"its last plan was rejected: {last_errors[0]}" if last_errors else "it never called submit_plan"
    return Ended(
        "failed",
        f"the planner gave no valid plan in {ctx.options.max_plan_attempts} attempts ({why}); "
        "state the objective more concretely, or plan it with --preset pro",
    )


def adopt(ctx: GoalContext, plan: Plan, *, reason: str, notes: tuple[str, ...] = ()) -> None:
    """Make ``plan`` the current revision: done steps keep their state, every other step is pending; saved, and
    shown (with the diff for a revision)."""
    old = ctx.plan
    done = {s.id: s for s in old.steps if s.status is StepStatus.DONE} if old is not None else {}
    steps = tuple(
        step.model_copy(
            update={"status": StepStatus.DONE, "result": done[step.id].result, "evidence": done[step.id].evidence}
        )
        if step.id in done
        else step.model_copy(update={"status": StepStatus.PENDING})
        for step in plan.steps
    )
    revision = old.revision + 1 if old is not None else plan.revision
    adopted = plan.model_copy(update={"steps": steps, "revision": revision})
    ctx.record.plan = adopted
    ctx.store.save_plan(adopted)
    ctx.save()
    if old is None:
        ctx.emit(PlanProposed(revision=adopted.revision, plan=adopted.model_dump(mode="json"), normalized=notes))
    else:
        ctx.emit(PlanRevised(revision=adopted.revision, diff_text=diff_text(diff(old, adopted)), reason=reason))
