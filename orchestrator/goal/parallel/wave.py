"""A parallel wave of the Executing phase (issue 14 item 2, DESIGN §5 "Parallel branches").

Ready steps whose declared writes cannot name the same file run at once (up to ``[goal] parallel``), each in a fork
of the executor (:mod:`orchestrator.goal.parallel.forks`) working in its own copy of the workspace
(:class:`~orchestrator.branches.BranchWorkspace`), where its verify commands run too. The main executor does not run
during a wave. At the join, in plan order, each verified branch is merged back with a three-way merge, between a
checkpoint before and one after (so ``reasonix undo --step S`` puts back exactly what the merge of S changed), and
the step is done. A branch that cannot be merged (a conflict, a write outside its declared files), or whose verify
commands fail on the merged tree, sends its step back to pending: it runs again afterwards, alone, in the executor, on
the merged tree (``GoalRecord.solo``), and the user is told why (:class:`~orchestrator.events.BranchRerun`).

A pause (stuck) in one branch cancels the others; so does Ctrl-C (the cancellation reaches every branch). Every
branch's requests pass the goal's one budget gate: a branch whose request is refused stops there, and the others go
on until they finish their step or are refused in turn (nothing is thrown away), then the verified ones are merged and
the goal pauses. A step is done only once merged: on resume the unfinished branches' steps are pending again and
start anew (a new fork journal, a new copy of the workspace); a merged step never runs again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import trio

from orchestrator.branches.outcome import BranchError, MergeOutcome
from orchestrator.branches.workspace import BranchWorkspace
from orchestrator.events import BranchMerged, BranchRerun, WaveStarted
from orchestrator.goal.context import GoalContext
from orchestrator.goal.executing import BranchVerified, run_step, work_on_step
from orchestrator.goal.parallel.forks import open_fork
from orchestrator.goal.phases import Ended, Executing, Replanning
from orchestrator.policy.stuck import workspace_fingerprint
from orchestrator.policy.verify import failure_digest, run_verify
from plans import Plan, Step, StepStatus, paths_overlap

Outcome = Executing | Replanning | Ended | BranchVerified
DISCARD_TIMEOUT_S = 30.0
"""Branch copies are removed even while the wave is being cancelled (shielded), within this bound."""


async def run_wave(ctx: GoalContext, steps: Sequence[Step]) -> Executing | Replanning | Ended:
    """Run ``steps`` at once, each in its branch; merge the verified ones back; say what comes next."""
    ctx.emit(WaveStarted(step_ids=tuple(s.id for s in steps)))
    results: dict[str, Outcome] = {}
    branches: dict[str, BranchWorkspace] = {}
    try:
        try:
            for step in steps:
                branches[step.id] = await BranchWorkspace.open(ctx.workspace, ctx.store.dir, step.id)
        except BranchError as exc:  # no copy of the workspace (git missing, a full disk): one step at a time
            ctx.one_step_at_a_time(str(exc))
            async with ctx.checkpoints.step(steps[0].id):
                return await run_step(ctx, steps[0])
        for step in steps:
            ctx.update_step(step.id, status=StepStatus.RUNNING)
        ctx.save()
        ctx.budget.start()  # the wave's wall time counts once, whatever runs in it
        try:
            async with trio.open_nursery() as nursery:
                for step in steps:
                    nursery.start_soon(_branch, ctx, step, branches[step.id], results, nursery.cancel_scope)
        finally:
            ctx.budget.stop()
            ctx.save()
        return await _join(ctx, steps, branches, results)
    finally:
        _unfinished_back_to_pending(ctx, steps)  # cancelled (Ctrl-C) or stopped by an error: they start anew
        with trio.CancelScope(shield=True), trio.move_on_after(DISCARD_TIMEOUT_S):
            for branch in branches.values():
                # a copy left behind is thrown away when the step's branch is opened again
                with contextlib.suppress(BranchError, OSError):
                    await branch.discard()


async def _branch(
    ctx: GoalContext, step: Step, branch: BranchWorkspace, results: dict[str, Outcome], wave: trio.CancelScope
) -> None:
    lane = open_fork(ctx, step.id, branch.path, branch.env())
    outcome = await work_on_step(ctx, step, lane)
    results[step.id] = outcome
    if isinstance(outcome, Ended) and not ctx.budget.refused:
        wave.cancel()  # a pause (stuck) stops every branch of the wave


async def _join(
    ctx: GoalContext, steps: Sequence[Step], branches: dict[str, BranchWorkspace], results: dict[str, Outcome]
) -> Executing | Replanning | Ended:
    merged: list[Step] = []
    for step in steps:  # plan order: the merge of a later step sees the earlier ones' changes as "ours"
        result = results.get(step.id)
        if not isinstance(result, BranchVerified):
            continue
        async with ctx.checkpoints.step(step.id):  # before the merge, and after it
            outcome = await branches[step.id].merge_back(step.writes)
        if not outcome.merged:
            reason = not_merged(step.id, outcome)
            _rerun_alone(ctx, step, reason, conflicts=outcome.conflicts, undeclared=outcome.undeclared)
            continue
        ctx.update_step(step.id, status=StepStatus.DONE, result=result.summary, evidence=result.evidence)
        ctx.save()
        ctx.emit(BranchMerged(step_id=step.id, changed=outcome.changed))
        merged.append(step)
    paused: Ended | None = None
    for step in merged:  # each merged step's verify commands again, on the merged tree (no tokens)
        outcomes = await run_verify(
            step,
            ctx.workspace,
            default_timeout_s=ctx.options.verify_timeout_s,
            sandbox=ctx.sandbox,
            unconfined=ctx.unconfined,
        )
        if not all(o.ok for o in outcomes):
            reason = f"its verify commands fail on the merged tree:{failure_digest(outcomes)}"
            _rerun_alone(ctx, step, reason)
            continue
        seen = workspace_fingerprint(ctx.workspace, step.writes) | {o.command + "\0" + o.output for o in outcomes}
        no_progress = ctx.progress.record_round(seen)
        if no_progress is not None and paused is None:
            paused = Ended("paused", no_progress.reason)
    _unfinished_back_to_pending(ctx, steps)  # a branch cancelled, or stopped by a pause mid-step: it starts anew
    for step in steps:
        result = results.get(step.id)
        if isinstance(result, Ended | Replanning):
            return result
    return paused or ctx.over_budget() or Executing()


def not_merged(step_id: str, outcome: MergeOutcome) -> str:
    """What the user reads of a step whose branch was not merged back, in the goal's words around the outcome's."""
    parts = [f"step {step_id} was not merged back and nothing in the workspace was changed:"]
    if outcome.conflicts:
        parts.append(outcome.conflicts_said() + ".")
    if outcome.undeclared:
        parts.append(outcome.undeclared_said() + "; declare them in the step's writes, or run the step alone.")
    return " ".join(parts)


def _unfinished_back_to_pending(ctx: GoalContext, steps: Sequence[Step]) -> None:
    plan = ctx.plan
    if plan is None:
        return
    running = [s.id for s in steps if s.id in plan.ids and plan.step(s.id).status is StepStatus.RUNNING]
    for sid in running:
        ctx.update_step(sid, status=StepStatus.PENDING)
    if running:
        ctx.save()


def _rerun_alone(
    ctx: GoalContext, step: Step, reason: str, *, conflicts: Sequence[str] = (), undeclared: Sequence[str] = ()
) -> None:
    """``step`` goes back to pending, to run again alone in the executor on the merged tree."""
    ctx.update_step(step.id, status=StepStatus.PENDING)
    if step.id not in ctx.record.solo:
        ctx.record.solo.append(step.id)
    ctx.save()
    ctx.emit(BranchRerun(step_id=step.id, reason=reason, conflicts=tuple(conflicts), undeclared=tuple(undeclared)))


def pick_wave(plan: Plan, ready: Sequence[str], parallel: int) -> list[str]:
    """The ready steps that run at once: up to ``parallel`` of them, in plan order, each declaring its writes and no
    two whose writes may name the same file (globs compared conservatively). Fewer than two: no wave."""
    if parallel < 2:
        return []
    chosen: list[Step] = []
    for sid in ready:
        step = plan.step(sid)
        if not step.writes or any(_overlap(step, other) for other in chosen):
            continue
        chosen.append(step)
        if len(chosen) == parallel:
            break
    return [s.id for s in chosen] if len(chosen) >= 2 else []


def _overlap(a: Step, b: Step) -> bool:
    return any(paths_overlap(x, y) for x in a.writes for y in b.writes)
