"""Reviewing (DESIGN §5, plan mode): the user approves the plan, edits it, sends feedback to the planner, or cancels.

:func:`review` returns :class:`Approved` or :class:`~orchestrator.goal.phases.Ended`.
When the planner answers the user's feedback with a verdict instead of a revised plan, the goal ends with a reason
the user can act on: ``blocked`` with the planner's question, or ``failed`` when it claims the objective is met
although no step has run.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.events import ReviewDecided
from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext
from orchestrator.goal.judging import judge
from orchestrator.goal.phases import Ended, VerdictGiven
from orchestrator.goal.proposals import adopt, ask_planner
from plans import diff, diff_text


@dataclass(frozen=True, slots=True)
class Approved:
    """The plan was approved (or there was nobody to ask)."""


VERDICT_AT_REVIEW = (
    "the planner answered the review feedback with a 'complete' verdict instead of a revised plan, "
    "but no step has run{evidence}; nothing was executed. Start the goal again with the feedback in the objective"
)


async def review(ctx: GoalContext) -> Approved | Ended:
    """The Reviewing phase: until the user approves (or cancels), show each revision and act on the decision."""
    if ctx.reviewer is None:
        return Approved()
    diff_shown: str | None = None
    while True:
        old = ctx.plan
        assert old is not None
        ctx.set_state("awaiting_review")
        decision = await ctx.reviewer.review(old, diff_text=diff_shown)
        ctx.emit(ReviewDecided(decision=decision.kind, automatic=decision.automatic, feedback=decision.feedback))
        if decision.kind == "approve":
            ctx.unconfined.approve(decision.unconfined_approved)  # what the review named as running unconfined
            return Approved()
        if decision.kind == "cancel":
            return Ended("cancelled", "the plan was not approved; nothing was executed")
        if decision.kind == "edit":
            assert decision.plan is not None  # ReviewDecision guarantees it
            adopt(ctx, decision.plan, reason="edited by the user")
            edited = ctx.plan
            assert edited is not None
            # The planner learns about the edit in its log (appended: cache-stable) at its next turn.
            ctx.pending_planner_note = prompts.user_edit_turn(edited)
        else:
            ctx.set_state("planning", "revising with the user's feedback")
            answer = await ask_planner(ctx, prompts.feedback_turn(decision.feedback))
            if isinstance(answer, Ended):
                return answer
            if isinstance(answer, VerdictGiven):
                evidence = "; ".join(answer.verdict.evidence)
                return judge(ctx, answer.verdict) or Ended(
                    "failed", VERDICT_AT_REVIEW.format(evidence=f" (it says: {evidence})" if evidence else "")
                )
            adopt(ctx, answer.plan, reason="the user's feedback")
        new = ctx.plan
        assert new is not None
        diff_shown = diff_text(diff(old, new))
