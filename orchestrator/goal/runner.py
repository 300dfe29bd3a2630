"""The goal loop (DESIGN §5) as a small state machine: planning → review → executing → judging / re-planning →
complete | blocked | paused | failed | cancelled.

One :class:`GoalRunner` owns a planner session (read-only tools + submit_plan, revise_plan, goal_verdict) and an
executor session (all tools + report_step): two separate cache-stable conversations whose prefixes never change for
the life of the goal. Its phases are values (:mod:`orchestrator.goal.phases`); each is handled by one unit
(:mod:`~orchestrator.goal.planning`, :mod:`~orchestrator.goal.reviewing`, :mod:`~orchestrator.goal.executing`,
:mod:`~orchestrator.goal.judging`) that returns the next phase. Every state change is an event, and ``goal.json`` is
rewritten before anything else happens, so a killed process resumes where it stood and a verified step never runs
again.

A run ends in one of three ways: an :class:`~orchestrator.goal.phases.Ended` phase (the outcome is returned); a
cancellation (the goal is paused, then the cancellation propagates); or a DeepSeek API error (the goal is paused with
the error as its reason and a resume hint, then the error propagates, unwrapped from any exception group).
"""

from __future__ import annotations

import trio

from orchestrator.events import EndState, GoalFinished
from orchestrator.goal.context import AnyEvent, GoalContext, GoalMode, GoalOptions, SessionOpener
from orchestrator.goal.executing import run_step
from orchestrator.goal.judging import ask_verdict
from orchestrator.goal.outcome import (
    GoalOutcome,
    api_error_of,
    budget_refusal_of,
    is_cancellation,
    resume_command,
)
from orchestrator.goal.parallel.forks import fork_totals
from orchestrator.goal.parallel.wave import pick_wave, run_wave
from orchestrator.goal.phases import Ended, Executing, Judging, Phase, Planning, Replanning, Reviewing
from orchestrator.goal.planning import first_plan, replan
from orchestrator.goal.reviewing import review
from orchestrator.hooks.goal_events import goal_hook
from plans import PlanGraph, StepStatus

__all__ = ["AnyEvent", "GoalMode", "GoalOptions", "GoalOutcome", "GoalRunner", "SessionOpener"]

INTERRUPTED = "interrupted by the user; the goal is resumable"


class GoalRunner(GoalContext):
    """Runs one goal. Build it with :func:`orchestrator.build.create_runner` (a new run) or
    :func:`orchestrator.build.resume_runner` (an existing run directory)."""

    stop_at: tuple[float, str] | None = None
    """``(trio time, reason)``, set by an unattended run with a maximum runtime: a cancellation from that time on is
    the runtime's end, and the pause says so, instead of "interrupted by the user"."""

    def first_phase(self, mode: GoalMode) -> Phase:
        """Where a new or resumed run starts."""
        if self.plan is None:
            return Planning()
        if self.record.needs_review and mode != "exec":
            return Reviewing()  # also a goal paused at its review (Ctrl-C, a limit): never executed unreviewed
        return self._after_review(mode)

    def _after_review(self, mode: GoalMode) -> Executing | Ended:
        if mode == "plan":
            return Ended("paused", "plan approved and saved; execute it with reasonix exec")
        return Executing()

    async def advance(self, phase: Phase, mode: GoalMode) -> Phase:
        """One transition of the machine: the unit for ``phase`` runs and returns the next phase."""
        if isinstance(phase, Planning):
            return await first_plan(self)
        if isinstance(phase, Reviewing):
            reviewed = await review(self)
            if isinstance(reviewed, Ended):
                return reviewed
            self.record.approved = True
            self.save()
            return self._after_review(mode)
        if isinstance(phase, Executing):
            return await next_step(self)
        if isinstance(phase, Judging):
            return await ask_verdict(self)
        if isinstance(phase, Replanning):
            return await replan(self, phase)
        return phase

    async def run(self, mode: GoalMode = "goal") -> GoalOutcome:
        """Run (or continue) the goal to a terminal or paused state. Cancellation pauses it, resumable; so does a
        DeepSeek API error, which is then raised (see the module's docstring)."""
        self.open_sessions()
        plan = self.plan
        if plan is not None:
            for step in plan.steps:
                if step.status is StepStatus.RUNNING:
                    self.update_step(step.id, status=StepStatus.PENDING)  # cut off mid-step: it runs again, resumed
        phase = self.first_phase(mode)
        try:
            while not isinstance(phase, Ended):
                phase = await self.advance(phase, mode)
        except BaseException as exc:
            if is_cancellation(exc):
                self.finish("paused", self.interrupted_reason())  # synchronous: no checkpoint
                raise
            refused = budget_refusal_of(exc)
            if refused is not None:  # the gate refused a request before it was sent: a budget pause like any other
                self.finish("paused", refused.summary)
                return self.outcome()
            error = api_error_of(exc)
            if error is None:
                raise
            reason = f"stopped by a DeepSeek API error: {error}"
            if self.options.unattended:  # outages were waited out: nobody will fix the key or the balance
                self.finish("failed", reason)
                return self.outcome()
            self.finish("paused", reason)
            if error is exc:
                raise
            raise error from None
        self.finish(phase.state, phase.reason)
        await goal_hook(self.executor or self.planner, "goal_end", {"status": phase.state, "summary": phase.reason})
        return self.outcome()

    def interrupted_reason(self) -> str:
        """Why a cancellation pauses the goal: the user's Ctrl-C, or the end of an unattended run's runtime."""
        if self.stop_at is not None and trio.current_time() >= self.stop_at[0]:
            return self.stop_at[1]
        return INTERRUPTED

    def finish(self, status: EndState, reason: str) -> None:
        """Record the end state (once) and report it, with the command that resumes a paused goal."""
        if self.record.state != status or self.record.reason != reason:
            self.set_state(status, reason)
        hint = resume_command(self.store.run_id) if status == "paused" else ""
        self.emit(GoalFinished(status=status, summary=reason, run_id=self.store.run_id, resume_hint=hint))
        self.store.sync()

    def outcome(self) -> GoalOutcome:
        """What the run came to. Only once it ended (:meth:`run` returned or raised)."""
        state = self.record.state
        assert state in ("complete", "blocked", "paused", "failed", "cancelled"), state
        return GoalOutcome(
            status=state,
            summary=self.record.reason,
            run_id=self.store.run_id,
            plan=self.plan,
            record=self.record,
            planner=self.planner,
            executor=self.executor,
            escalations=self.escalations,
            forks=fork_totals(self.store.dir),
        )


async def next_step(ctx: GoalContext) -> Executing | Judging | Replanning | Ended:
    """The Executing phase: run the ready steps (several at once when ``[goal] parallel`` allows, see
    :mod:`orchestrator.goal.parallel`); judge when every step is verified; fail when none can run."""
    plan = ctx.plan
    assert plan is not None
    if all(s.status is StepStatus.DONE for s in plan.steps):
        return Judging()
    ready = PlanGraph(plan).ready()
    if not ready:
        stuck = [s for s in plan.steps if s.status in (StepStatus.FAILED, StepStatus.BLOCKED)]
        return Ended("failed", f"no step can run: {', '.join(s.id for s in stuck) or 'unknown state'}")
    ctx.set_state("executing")
    solo = [sid for sid in ready if sid in ctx.record.solo]
    wave = [] if solo else pick_wave(plan, ready, ctx.parallel)
    refusal = ctx.unconfined.refusal([plan.step(sid) for sid in (wave or solo[:1] or ready[:1])])
    if refusal is not None:  # before the executor works on a step whose verification could not run
        return ctx.held(refusal)
    if wave:
        return await run_wave(ctx, [plan.step(sid) for sid in wave])
    first = solo[0] if solo else ready[0]
    async with ctx.checkpoints.step(first):  # before the step, and after it whatever happened
        return await run_step(ctx, plan.step(first))
