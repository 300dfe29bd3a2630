"""Executing (DESIGN §5): pick the next ready step and run it: executor turns, then the supervisor's own verification.

The supervisor never takes the executor's word: a step is done when its verify commands pass. :func:`run_step`
returns what happened: the step is verified (go on executing), it needs a new plan (blocked, or failed too often), or
the goal pauses (stuck, or out of budget).
"""

from __future__ import annotations

from orchestrator.events import StepReported, StepStarted, StepVerified
from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext
from orchestrator.goal.phases import Ended, Executing, Judging, Replanning
from orchestrator.policy.stuck import workspace_fingerprint
from orchestrator.policy.verify import failure_digest, run_verify, verify_feedback
from plans.graph import PlanGraph
from plans.schema import Step, StepStatus

CUT_FEEDBACK = (
    "the executor's reply was cut at the output limit, and again when asked once more with the largest max_tokens: "
    "the step asks for more output than one reply can hold; split it into smaller steps"
)


async def next_step(ctx: GoalContext) -> Executing | Judging | Replanning | Ended:
    """The Executing phase: run the first ready step; judge when every step is verified; fail when none can run."""
    plan = ctx.plan
    assert plan is not None
    if all(s.status is StepStatus.DONE for s in plan.steps):
        return Judging()
    ready = PlanGraph(plan).ready()
    if not ready:
        stuck = [s for s in plan.steps if s.status in (StepStatus.FAILED, StepStatus.BLOCKED)]
        return Ended("failed", f"no step can run: {', '.join(s.id for s in stuck) or 'unknown state'}")
    ctx.set_state("executing")
    async with ctx.checkpoints.step(ready[0]):  # before the step, and after it whatever happened
        return await run_step(ctx, plan.step(ready[0]))


async def run_step(ctx: GoalContext, step: Step) -> Executing | Replanning | Ended:
    """Executor turns on ``step`` until its verify commands pass, it is blocked, or it failed too often."""
    record, options = ctx.record, ctx.options
    resumed = record.current_step == step.id
    attempt = record.attempts.get(step.id, 0) + 1
    record.attempts[step.id] = attempt
    record.current_step = step.id
    ctx.update_step(step.id, status=StepStatus.RUNNING)
    ctx.save()
    plan = ctx.plan
    assert plan is not None
    deps = [plan.step(d) for d in step.depends_on]
    model = options.pro_model if step.needs_pro else options.flash_model
    ctx.emit(StepStarted(step_id=step.id, title=step.title, attempt=attempt, model=model))
    text = prompts.step_turn(step, deps, attempt=attempt, resumed=resumed and attempt > 1)
    failed_verifications = 0
    while True:
        turn = await ctx.turn(
            "executor",
            text,
            needs_pro=step.needs_pro,
            reason=f"step {step.id} is marked needs_pro",
            failures=failed_verifications,  # a failed verification counts toward escalating the retry turn
        )
        if turn.status == "length":  # cut at the output limit twice, the second time with the most max_tokens
            ctx.update_step(step.id, status=StepStatus.FAILED)
            ctx.save()
            return Replanning(step, CUT_FEEDBACK, blocked=False)
        report = ctx.mailbox.report
        if report is not None:
            ctx.emit(StepReported(step_id=step.id, status=report.status, summary=report.summary))
            if report.status == "blocked":
                ctx.update_step(step.id, status=StepStatus.BLOCKED)
                ctx.save()
                return Replanning(step, report.summary, blocked=True)
        outcomes = await run_verify(
            step, ctx.workspace, default_timeout_s=options.verify_timeout_s, sandbox=ctx.sandbox
        )
        ok = all(o.ok for o in outcomes)
        ctx.emit(StepVerified(step_id=step.id, ok=ok, outcomes=outcomes))
        if ok:
            ctx.update_step(
                step.id,
                status=StepStatus.DONE,
                result=report.summary if report is not None else "",
                evidence=tuple(report.evidence) if report is not None else (),
            )
            record.current_step = None
            ctx.save()
            seen = workspace_fingerprint(ctx.workspace, step.writes) | {o.command + "\0" + o.output for o in outcomes}
            no_progress = ctx.progress.record_round(seen)
            if no_progress is not None:
                return Ended("paused", no_progress.reason)
            return ctx.over_budget() or Executing()
        feedback = verify_feedback(outcomes)
        failed_verifications += 1
        stuck = ctx.progress.record_failure(step.id, feedback, "\n" + failure_digest(outcomes))
        if stuck is not None:
            ctx.update_step(step.id, status=StepStatus.FAILED)
            return Ended("paused", stuck.reason)
        attempt = record.attempts[step.id] = record.attempts[step.id] + 1
        ctx.save()
        paused = ctx.over_budget()
        if paused is not None:
            return paused
        if attempt > options.max_step_attempts:
            ctx.update_step(step.id, status=StepStatus.FAILED)
            ctx.save()
            return Replanning(step, feedback, blocked=False)
        ctx.emit(StepStarted(step_id=step.id, title=step.title, attempt=attempt, model=model))
        text = prompts.verify_failed_turn(step, feedback)
        reset = await ctx.checkpoints.reset_for_retry()  # the retry starts from the step's checkpoint
        if reset:
            text += "\n\n" + reset
