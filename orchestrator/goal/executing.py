"""Executing (DESIGN §5): pick the next ready step and run it: executor turns, then the supervisor's own verification.

The supervisor never takes the executor's word: a step is done when its verify commands pass. :func:`run_step`
returns what happened: the step is verified (go on executing), it needs a new plan (blocked, or failed too often), or
the goal pauses (stuck, or out of budget).
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.events import StepReported, StepStarted, StepVerified
from orchestrator.goal import prompts
from orchestrator.goal.context import GoalContext, Lane
from orchestrator.goal.phases import Ended, Executing, Replanning
from orchestrator.hooks.goal_events import goal_hook, with_context
from orchestrator.policy.budget import BudgetReachedError
from orchestrator.policy.stuck import workspace_fingerprint
from orchestrator.policy.turn_evidence import files_fingerprint, problems_feedback, turn_problems
from orchestrator.policy.verify import failure_digest, run_verify, verify_feedback
from plans import NO_VERIFY_HINT, Step, StepStatus

CUT_FEEDBACK = (
    "the executor's reply was cut at the output limit, and again when asked once more with the largest max_tokens: "
    "the step asks for more output than one reply can hold; split it into smaller steps"
)


def unverified_feedback(step: Step) -> str:
    """Why a step that writes files and names no verify command is sent back to the planner without running."""
    return (
        f"{step.id} writes {', '.join(step.writes)} but names no verify command, so nothing the supervisor runs "
        f"could show it done; it was not run: {NO_VERIFY_HINT}"
    )


@dataclass(frozen=True, slots=True)
class BranchVerified:
    """A step's verify commands passed in its parallel branch: it is done once the branch is merged back."""

    step: Step
    summary: str
    evidence: tuple[str, ...]


async def run_step(ctx: GoalContext, step: Step) -> Executing | Replanning | Ended:
    """Executor turns on ``step`` until its verify commands pass, it is blocked, or it failed too often."""
    outcome = await work_on_step(ctx, step, ctx.main_lane())
    assert not isinstance(outcome, BranchVerified)
    return outcome


async def work_on_step(ctx: GoalContext, step: Step, lane: Lane) -> Executing | Replanning | Ended | BranchVerified:
    """Turns of ``lane`` on ``step`` until its verify commands pass in the lane's workspace, it is blocked, or it
    failed too often. The main executor marks the step done; a branch returns :class:`BranchVerified` (the step is
    done once the branch is merged)."""
    record, options = ctx.record, ctx.options
    if step.writes and not step.verify:  # an edited or loaded plan: the planner's tool would have refused it
        ctx.update_step(step.id, status=StepStatus.FAILED)
        ctx.save()
        return Replanning(step, unverified_feedback(step), blocked=False)
    resumed = lane.main and record.current_step == step.id
    current = record.current_step
    attempt = record.attempts.get(step.id, 0) + 1
    record.attempts[step.id] = attempt
    if lane.main:
        record.current_step = step.id
    ctx.update_step(step.id, status=StepStatus.RUNNING)
    ctx.save()
    plan = ctx.plan
    assert plan is not None
    deps = [plan.step(d) for d in step.depends_on]
    model = options.pro_model if step.needs_pro else options.flash_model
    ctx.emit(StepStarted(step_id=step.id, title=step.title, attempt=attempt, model=model))
    text = prompts.step_turn(step, deps, attempt=attempt, resumed=resumed and attempt > 1)
    said = await goal_hook(lane.session, "step_start", {"step_id": step.id, "title": step.title, "attempt": attempt})
    text = with_context(text, said)
    failed_verifications = 0
    watched = (lane.session.name, lane.step_id)
    # What the declared writes held when the step started here (a retry starts from the same files, restored from
    # the step's checkpoint); a resumed step's start was in an earlier process, so its change cannot be judged.
    before = files_fingerprint(lane.workspace, step.writes) if not resumed else None
    while True:
        logged = len(lane.session.log)
        ctx.turn_watch.begin(watched)
        try:
            turn = await ctx.turn(
                "executor",
                text,
                needs_pro=step.needs_pro,
                reason=f"step {step.id} is marked needs_pro",
                failures=failed_verifications,  # a failed verification counts toward escalating the retry turn
                lane=lane,
            )
        except BudgetReachedError as refused:
            if failed_verifications == 0 and len(lane.session.log) == logged:
                # The step's first request was refused before anything was sent: the step never started, and a
                # resumed run starts it exactly as this one would have (same attempt, same text, same bytes).
                _unstart(ctx, step, attempt, current)
            if not lane.main:
                return Ended("paused", refused.summary)  # the wave's other branches go on until the gate stops them
            raise
        if turn.status == "length":  # cut at the output limit twice, the second time with the most max_tokens
            ctx.update_step(step.id, status=StepStatus.FAILED)
            ctx.save()
            return Replanning(step, CUT_FEEDBACK, blocked=False)
        report = lane.mailbox.report
        if report is not None:
            ctx.emit(StepReported(step_id=step.id, status=report.status, summary=report.summary))
            if report.status == "blocked":
                ctx.update_step(step.id, status=StepStatus.BLOCKED)
                ctx.save()
                return Replanning(step, report.summary, blocked=True)
        outcomes = await run_verify(
            step,
            lane.workspace,
            default_timeout_s=options.verify_timeout_s,
            sandbox=ctx.sandbox,
            env=lane.env,
            unconfined=ctx.unconfined,
        )
        problems = turn_problems(
            ctx.turn_watch.calls(watched),
            turn.text,
            writes=step.writes,
            changed=_changed(before, files_fingerprint(lane.workspace, step.writes)),
        )
        ok = all(o.ok for o in outcomes) and not problems
        ctx.emit(StepVerified(step_id=step.id, ok=ok, outcomes=outcomes, problems=tuple(problems)))
        await goal_hook(lane.session, "step_verified", {"step_id": step.id, "ok": ok})
        if ok and not lane.main:
            summary = report.summary if report is not None else ""
            return BranchVerified(step, summary, tuple(report.evidence) if report is not None else ())
        if ok:
            ctx.update_step(
                step.id,
                status=StepStatus.DONE,
                result=report.summary if report is not None else "",
                evidence=tuple(report.evidence) if report is not None else (),
            )
            record.current_step = None
            if step.id in record.solo:
                record.solo.remove(step.id)
            ctx.save()
            seen = workspace_fingerprint(ctx.workspace, step.writes) | {o.command + "\0" + o.output for o in outcomes}
            no_progress = ctx.progress.record_round(seen)
            if no_progress is not None:
                return ctx.held(no_progress.reason)
            return ctx.over_budget() or Executing()
        feedback = "\n\n".join(
            part for part in (problems_feedback(problems) if problems else "", verify_feedback(outcomes)) if part
        )
        failed_verifications += 1
        stuck = ctx.progress.record_failure(step.id, feedback, "\n" + failure_digest(outcomes))
        if stuck is not None:
            ctx.update_step(step.id, status=StepStatus.FAILED)
            if options.unattended and step.id not in record.stuck_replanned:
                # Nobody will look at it: the planner gets the evidence once, then the goal ends blocked with it.
                record.stuck_replanned.append(step.id)
                ctx.save()
                return Replanning(step, f"{stuck.reason}\n\n{feedback}", blocked=False)
            return ctx.held(stuck.reason)
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
        # The retry starts from the step's checkpoint (a branch's retry goes on from its own files).
        reset = await ctx.checkpoints.reset_for_retry() if lane.main else ""
        if reset:
            text += "\n\n" + reset


def _changed(before: frozenset[str] | None, after: frozenset[str] | None) -> bool:
    """Whether the declared writes changed; unknown (a resumed step, a declared folder) counts as changed."""
    return before is None or after is None or after != before


def _unstart(ctx: GoalContext, step: Step, attempt: int, current: str | None) -> None:
    """Take back the start of ``step`` (its attempt, the current step, its state): nothing of it was sent."""
    record = ctx.record
    if attempt > 1:
        record.attempts[step.id] = attempt - 1
    else:
        record.attempts.pop(step.id, None)
    record.current_step = current
    ctx.update_step(step.id, status=StepStatus.PENDING)
    ctx.save()
