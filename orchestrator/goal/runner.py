"""The goal loop: planning → review → executing → re-planning → complete | blocked | paused | failed | cancelled.

One :class:`GoalRunner` owns a planner session (read-only tools + submit_plan, revise_plan, goal_verdict) and an
executor session (all tools + report_step): two separate cache-stable conversations whose prefixes never change for
the life of the goal. The supervisor never takes the executor's word: a step is done when its verify commands pass.
Every state change is an event, and ``goal.json`` in the run directory is rewritten before anything else happens, so a
killed process resumes where it stood and a verified step never runs again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import trio
from pydantic import BaseModel, ConfigDict

from orchestrator.events import (
    TERMINAL_STATES,
    Escalated,
    GoalEvent,
    GoalFinished,
    GoalState,
    GoalStateChanged,
    PlanProposed,
    PlanRejected,
    PlanRevised,
    ReviewDecided,
    StepReported,
    StepStarted,
    StepVerified,
)
from orchestrator.goal import prompts as prompts
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.goal.tools import Mailbox, executor_tools, planner_tools
from orchestrator.policy.budget import Budget, BudgetExceeded, BudgetTracker, BudgetUsage
from orchestrator.policy.escalation import EscalationPolicy, Escalator
from orchestrator.policy.stuck import ProgressTracker, workspace_fingerprint
from orchestrator.policy.verify import run_verify, verify_feedback
from orchestrator.review.reviewer import Reviewer
from plans.graph import PlanGraph
from plans.revision import diff, diff_text
from plans.schema import Plan, Step, StepStatus
from sessions.client import DeepSeekClient
from sessions.events import SessionEvent, UsageReported
from sessions.memory import load_standing_memory
from sessions.prefix import build_prefix
from sessions.prices import PriceBook
from sessions.sandbox import NoSandbox, Sandbox
from sessions.session import Session, SessionSettings, TurnResult
from sessions.tools.base import Gate, ToolContext
from sessions.tools.registry import ToolRegistry, default_registry

AnyEvent = SessionEvent | GoalEvent
Mode = Literal["goal", "plan", "exec"]


class GoalOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    flash_model: str = "deepseek-v4-flash"
    pro_model: str = "deepseek-v4-pro"
    thinking: bool = True
    reasoning_effort: Literal["low", "medium", "high", "max"] | None = "high"
    escalation: EscalationPolicy = EscalationPolicy()
    budget: Budget = Budget()
    max_step_attempts: int = 2
    max_plan_attempts: int = 3
    max_replans: int = 5
    max_requests_per_turn: int = 60
    context_window: int = 1_000_000
    verify_timeout_s: float = 300.0
    use_ripgrep: bool | None = None


@dataclass
class GoalOutcome:
    status: GoalState
    summary: str
    run_id: str
    plan: Plan | None
    record: GoalRecord
    planner: Session | None
    executor: Session | None
    escalations: list[Escalated] = field(default_factory=list)

    def to_summary(self) -> dict[str, Any]:
        sessions = {s.name: s for s in (self.planner, self.executor) if s is not None}
        prompt = sum(s.usage.prompt_tokens for s in sessions.values())
        hit = sum(s.usage.prompt_cache_hit_tokens for s in sessions.values())
        per_session = {
            name: {
                "requests": s.requests,
                "prompt_tokens": s.usage.prompt_tokens,
                "prompt_cache_hit_tokens": s.usage.prompt_cache_hit_tokens,
                "prompt_cache_miss_tokens": s.usage.prompt_cache_miss_tokens,
                "completion_tokens": s.usage.completion_tokens,
                "cost_usd": round(s.cost_usd, 6),
                "hit_ratio": round(s.usage.prompt_cache_hit_tokens / s.usage.prompt_tokens, 6)
                if s.usage.prompt_tokens
                else None,
            }
            for name, s in sessions.items()
        }
        steps = self.plan.steps if self.plan is not None else ()
        return {
            "kind": "summary",
            "run_id": self.run_id,
            "status": self.status,
            "goal_status": self.status,
            "text": self.summary,
            "requests": sum(s.requests for s in sessions.values()),
            "prompt_tokens": prompt,
            "prompt_cache_hit_tokens": hit,
            "prompt_cache_miss_tokens": sum(s.usage.prompt_cache_miss_tokens for s in sessions.values()),
            "completion_tokens": sum(s.usage.completion_tokens for s in sessions.values()),
            "cost_usd": round(sum(s.cost_usd for s in sessions.values()), 6),
            "hit_ratio": round(hit / prompt, 6) if prompt else None,
            "steps_total": len(steps),
            "steps_done": sum(1 for s in steps if s.id in self.record.verified),
            "escalations": self.record.escalations,
            "replans": self.record.replans,
            "sessions": per_session,
        }


class _Pause(Exception):
    """Internal: stop the loop and leave the goal resumable (budget, stuck)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Finish(Exception):
    def __init__(self, state: GoalState, reason: str) -> None:
        super().__init__(reason)
        self.state = state
        self.reason = reason


class GoalRunner:
    """Runs one goal. Build with :meth:`create` (a new run) or :meth:`resume` (an existing run directory)."""

    def __init__(
        self,
        *,
        workspace: Path,
        client: DeepSeekClient,
        store: RunStore,
        record: GoalRecord,
        options: GoalOptions,
        reviewer: Reviewer | None,
        on_event: Callable[[AnyEvent], None] | None = None,
        price_book: PriceBook | None = None,
        clock: Callable[[], datetime] | None = None,
        config_dir: Path | None = None,
        sandbox: Sandbox | None = None,
        gate: Gate | None = None,
    ) -> None:
        self.sandbox = sandbox or NoSandbox()
        self.gate = gate
        self.workspace = workspace
        self.client = client
        self.store = store
        self.record = record
        self.options = options
        self.reviewer = reviewer
        self._on_event = on_event
        self.escalations: list[Escalated] = []
        self.mailbox = Mailbox(objective=record.objective)
        self.escalator = Escalator(
            options.escalation,
            flash_model=options.flash_model,
            pro_model=options.pro_model,
            on_escalation=self._escalated,
        )
        self.budget = BudgetTracker(
            options.budget,
            already_used=BudgetUsage(
                usd=record.usage_usd, requests=record.usage_requests, seconds=record.usage_seconds
            ),
        )
        self.progress = ProgressTracker()
        self.plan: Plan | None = store.latest_plan()
        self._price_book = price_book
        self._clock = clock
        self._config_dir = config_dir
        self.planner: Session | None = None
        self.executor: Session | None = None

    # ------------------------------------------------------------------------------------------------ events

    def emit(self, event: AnyEvent) -> None:
        if isinstance(event, UsageReported):
            self.budget.charge(usd=event.cost_usd, requests=1)
            checked = self.budget.check()
            if isinstance(checked, list):
                for warning in checked:
                    self.emit(warning)
        if _is_goal_event(event):
            self.store.append_event(event.model_dump(mode="json"))
        if self._on_event is not None:
            self._on_event(event)

    def _escalated(self, event: Escalated) -> None:
        self.escalations.append(event)
        self.record.escalations += 1
        self.emit(event)

    def _set_state(self, state: GoalState, reason: str = "") -> None:
        previous = self.record.state
        self.record.state = state
        self.record.reason = reason
        self._save()
        self.emit(GoalStateChanged(state=state, previous=previous, reason=reason))

    def _save(self) -> None:
        usage = self.budget.usage
        self.record.usage_usd = usage.usd
        self.record.usage_requests = usage.requests
        self.record.usage_seconds = usage.seconds
        self.record.pro_turns = self.escalator.pro_turns
        self.store.save(self.record)

    # ---------------------------------------------------------------------------------------------- sessions

    def _session(self, name: str, system_prompt: str, registry: ToolRegistry, *, read_only: bool) -> Session:
        journal = self.store.dir / f"{name}.jsonl"
        memory = load_standing_memory(self.workspace, config_dir=self._config_dir)
        prefix = build_prefix(system_prompt, Session.schemas_for(registry), memory)
        kwargs: dict[str, Any] = dict(
            name=name,
            client=self.client,
            registry=registry,
            tool_context=ToolContext(root=self.workspace, sandbox=self.sandbox, gate=self.gate),
            settings=SessionSettings(
                model=self.options.flash_model,
                thinking=self.options.thinking,
                reasoning_effort=self.options.reasoning_effort,
                max_requests_per_turn=self.options.max_requests_per_turn,
                context_window=self.options.context_window,
                read_only=read_only,
            ),
            on_event=self.emit,
            price_book=self._price_book,
            clock=self._clock,
            reply_source=self.escalator,
        )
        if journal.exists() and journal.stat().st_size > 0:
            return Session.resume(journal_path=journal, prefix=prefix, **kwargs)
        return Session.start(journal_path=journal, prefix=prefix, **kwargs)

    def _open_sessions(self) -> None:
        planner_registry = default_registry(use_ripgrep=self.options.use_ripgrep)
        for tool in planner_tools(self.mailbox):
            planner_registry.register(tool)
        executor_registry = default_registry(use_ripgrep=self.options.use_ripgrep)
        for tool in executor_tools(self.mailbox):
            executor_registry.register(tool)
        self.planner = self._session("planner", prompts.PLANNER_SYSTEM_PROMPT, planner_registry, read_only=True)
        self.executor = self._session("executor", prompts.EXECUTOR_SYSTEM_PROMPT, executor_registry, read_only=False)

    async def _turn(
        self, session: Session, text: str, *, needs_pro: bool = False, reason: str = "", failures: int = 0
    ) -> TurnResult:
        self.mailbox.clear()
        self.mailbox.current_plan = self.plan_with_state()
        self.escalator.begin_turn(session, needs_pro=needs_pro, reason=reason)
        self.budget.start()
        try:
            result = await session.send(text, failures=failures)
        finally:
            self.budget.stop()
            self._save()
        return result

    def _check_budget(self) -> None:
        """Pause when a limit is reached. Called at safe points: after a planner turn, after a step's verification
        (verification costs nothing, so a finished step is verified before the goal pauses)."""
        checked = self.budget.check()
        if isinstance(checked, BudgetExceeded):
            raise _Pause(checked.summary)

    # ----------------------------------------------------------------------------------------------- the plan

    def plan_with_state(self) -> Plan | None:
        if self.plan is None:
            return None
        steps = []
        for step in self.plan.steps:
            status = StepStatus(self.record.statuses.get(step.id, StepStatus.PENDING.value))
            if step.id in self.record.verified:
                status = StepStatus.DONE
            steps.append(
                step.model_copy(
                    update={
                        "status": status,
                        "result": self.record.results.get(step.id, step.result),
                        "evidence": tuple(self.record.evidence.get(step.id, step.evidence)),
                    }
                )
            )
        return self.plan.model_copy(update={"steps": tuple(steps)})

    def _adopt(self, plan: Plan, *, reason: str) -> None:
        """Make ``plan`` the current revision: saved, shown (with the diff for a revision)."""
        old = self.plan_with_state()
        self.plan = plan.model_copy(update={"revision": (old.revision + 1) if old is not None else plan.revision})
        self.store.save_plan(self.plan)
        self.record.plan_revision = self.plan.revision
        for step in self.plan.steps:
            if step.id not in self.record.verified:
                self.record.statuses[step.id] = StepStatus.PENDING.value
        self._save()
        if old is None:
            self.emit(
                PlanProposed(
                    revision=self.plan.revision,
                    plan=self.plan.model_dump(mode="json"),
                    normalized=self.mailbox.plan_notes,
                )
            )
        else:
            self.emit(
                PlanRevised(revision=self.plan.revision, diff_text=diff_text(diff(old, self.plan)), reason=reason)
            )

    async def _planner_turn(self, text: str) -> Plan | None:
        """A planner turn that must end with an accepted plan (bounded follow-ups). None: the planner gave a verdict."""
        assert self.planner is not None
        last_errors: tuple[str, ...] = ()
        for attempt in range(1, self.options.max_plan_attempts + 1):
            await self._turn(self.planner, text)
            for rejected in self.mailbox.rejections:
                self.emit(PlanRejected(errors=rejected, attempt=attempt))
                last_errors = rejected
            if self.mailbox.plan is None and self.mailbox.verdict is None:
                self._check_budget()
            if self.mailbox.plan is not None:
                return self.mailbox.plan
            if self.mailbox.verdict is not None:
                return None
            text = prompts.no_plan_turn(attempt)
        why = f"its last plan was rejected: {last_errors[0]}" if last_errors else "it never called submit_plan"
        raise _Finish(
            "failed",
            f"the planner gave no valid plan in {self.options.max_plan_attempts} attempts ({why}); "
            "state the objective more concretely, or plan it with --preset pro",
        )

    async def _plan(self) -> None:
        self._set_state("planning")
        plan = await self._planner_turn(prompts.planning_turn(self.record.objective))
        if plan is None:
            self._verdict()
        assert plan is not None
        self._adopt(plan, reason="initial plan")
        self._check_budget()

    async def _review(self) -> None:
        if self.reviewer is None:
            return
        assert self.plan is not None and self.planner is not None
        diff_shown: str | None = None
        while True:
            self._set_state("awaiting_review")
            decision = await self.reviewer.review(self.plan, diff_text=diff_shown)
            self.emit(ReviewDecided(decision=decision.kind, automatic=decision.automatic, feedback=decision.feedback))
            if decision.kind == "approve":
                return
            if decision.kind == "cancel":
                raise _Finish("cancelled", "the user cancelled the plan at review")
            old = self.plan
            if decision.kind == "edit":
                assert decision.plan is not None
                self._adopt(decision.plan, reason="edited by the user")
                # The planner learns about the edit in its log (appended: cache-stable) at its next turn.
                self._pending_planner_note = prompts.user_edit_turn(self.plan)
            else:
                self._set_state("planning", "revising with the user's feedback")
                plan = await self._planner_turn(prompts.feedback_turn(decision.feedback))
                if plan is None:
                    self._verdict()
                assert plan is not None
                self._adopt(plan, reason="the user's feedback")
            diff_shown = diff_text(diff(old, self.plan))

    _pending_planner_note: str | None = None

    def _verdict(self) -> None:
        verdict = self.mailbox.verdict
        assert verdict is not None
        self.record.verdict = verdict.model_dump()
        if verdict.verdict == "complete":
            missing = [s.id for s in (self.plan.steps if self.plan else ()) if s.id not in self.record.verified]
            if missing:
                return  # not complete while steps are unverified: the loop goes on
            raise _Finish("complete", "; ".join(verdict.evidence) or "the planner confirmed the objective is met")
        raise _Finish("blocked", verdict.question)

    # ---------------------------------------------------------------------------------------------- execution

    def _ready(self) -> list[Step]:
        plan = self.plan_with_state()
        assert plan is not None
        statuses = {s.id: s.status for s in plan.steps}
        ready = PlanGraph(plan).ready(statuses)
        return [plan.step(sid) for sid in ready]

    async def _execute(self) -> None:
        assert self.executor is not None and self.planner is not None
        while True:
            plan = self.plan_with_state()
            assert plan is not None
            if all(s.id in self.record.verified for s in plan.steps):
                self._set_state("replanning", "every step is verified: asking the planner for its verdict")
                text = prompts.verdict_turn(plan)
                if self._pending_planner_note:
                    text = self._pending_planner_note + "\n\n" + text
                    self._pending_planner_note = None
                proposal = await self._planner_turn_or_verdict(text)
                if proposal is not None:
                    self._adopt(proposal, reason="the planner found work remaining")
                    self._set_state("executing")
                continue
            ready = self._ready()
            if not ready:
                stuck = [s for s in plan.steps if s.status in (StepStatus.FAILED, StepStatus.BLOCKED)]
                raise _Finish("failed", f"no step can run: {', '.join(s.id for s in stuck) or 'unknown state'}")
            self._set_state("executing")
            await self._run_step(ready[0])

    async def _planner_turn_or_verdict(self, text: str) -> Plan | None:
        plan = await self._planner_turn(text)
        if plan is None:
            self._verdict()
            # A "complete" verdict with unverified steps falls through: ask again for a plan.
            return await self._planner_turn(prompts.no_plan_turn(1))
        return plan

    async def _run_step(self, step: Step) -> None:
        assert self.executor is not None and self.plan is not None
        resumed = self.record.current_step == step.id
        attempt = self.record.attempts.get(step.id, 0) + 1
        self.record.attempts[step.id] = attempt
        self.record.current_step = step.id
        self.record.statuses[step.id] = StepStatus.RUNNING.value
        self._save()
        deps = [self.plan_with_state().step(d) for d in step.depends_on]  # type: ignore[union-attr]
        model = self.options.pro_model if step.needs_pro else self.options.flash_model
        self.emit(StepStarted(step_id=step.id, title=step.title, attempt=attempt, model=model))
        text = prompts.step_turn(step, deps, attempt=attempt, resumed=resumed and attempt > 1)
        feedback = ""
        failed_verifications = 0
        while True:
            await self._turn(
                self.executor,
                text,
                needs_pro=step.needs_pro,
                reason=f"step {step.id} is marked needs_pro",
                failures=failed_verifications,  # a failed verification counts toward escalating the retry turn
            )
            report = self.mailbox.report
            if report is not None:
                self.emit(StepReported(step_id=step.id, status=report.status, summary=report.summary))
                if report.status == "blocked":
                    self.record.statuses[step.id] = StepStatus.BLOCKED.value
                    self._save()
                    await self._replan(step, report.summary, blocked=True)
                    return
            outcomes = await run_verify(
                step, self.workspace, default_timeout_s=self.options.verify_timeout_s, sandbox=self.sandbox
            )
            ok = all(o.ok for o in outcomes)
            self.emit(StepVerified(step_id=step.id, ok=ok, outcomes=outcomes))
            if ok:
                self.record.verified.append(step.id)
                self.record.statuses[step.id] = StepStatus.DONE.value
                self.record.results[step.id] = report.summary if report is not None else ""
                self.record.evidence[step.id] = list(report.evidence) if report is not None else []
                self.record.current_step = None
                self._save()
                evidence = workspace_fingerprint(self.workspace, step.writes) | {
                    o.command + "\0" + o.output for o in outcomes
                }
                verdict = self.progress.record_round(evidence)
                if verdict is not None:
                    raise _Pause(verdict.reason)
                self._check_budget()
                return
            feedback = verify_feedback(outcomes)
            failed_verifications += 1
            stuck = self.progress.record_failure(step.id, feedback)
            if stuck is not None:
                self.record.statuses[step.id] = StepStatus.FAILED.value
                raise _Pause(stuck.reason)
            attempt = self.record.attempts[step.id] = self.record.attempts[step.id] + 1
            self._save()
            self._check_budget()
            if attempt > self.options.max_step_attempts:
                self.record.statuses[step.id] = StepStatus.FAILED.value
                self._save()
                await self._replan(step, feedback, blocked=False)
                return
            self.emit(StepStarted(step_id=step.id, title=step.title, attempt=attempt, model=model))
            text = prompts.verify_failed_turn(step, feedback)

    async def _replan(self, step: Step, feedback: str, *, blocked: bool) -> None:
        assert self.planner is not None
        if self.record.replans >= self.options.max_replans:
            raise _Pause(f"re-planned {self.record.replans} times without finishing; review the plan and resume")
        self.record.replans += 1
        self._set_state("replanning", f"{step.id} {'is blocked' if blocked else 'failed verification'}")
        plan = self.plan_with_state()
        assert plan is not None
        text = prompts.blocked_step_turn(plan, step, feedback) if blocked else prompts.replan_turn(plan, step, feedback)
        if self._pending_planner_note:
            text = self._pending_planner_note + "\n\n" + text
            self._pending_planner_note = None
        proposal = await self._planner_turn(text)
        if proposal is None:
            self._verdict()
            raise _Finish("failed", "the planner gave a verdict instead of revising the plan")
        self._adopt(proposal, reason=f"{step.id} {'blocked' if blocked else 'failed'}")
        for s in proposal.steps:  # a revised step gets fresh attempts
            if s.id not in self.record.verified:
                self.record.attempts.pop(s.id, None)
        self._save()

    # ------------------------------------------------------------------------------------------------ running

    async def run(self, mode: Mode = "goal") -> GoalOutcome:
        """Run (or continue) the goal to a terminal or paused state. Cancellation pauses it, resumable."""
        self._open_sessions()
        for sid, st in list(self.record.statuses.items()):
            if st == StepStatus.RUNNING.value and sid not in self.record.verified:
                self.record.statuses[sid] = StepStatus.PENDING.value  # cut off mid-step: it runs again, resumed
        status: GoalState
        reason: str
        try:
            if self.plan is None:
                await self._plan()
                await self._review()
            elif self.record.state in ("planning", "awaiting_review") and mode != "exec":
                await self._review()
            if mode == "plan":
                raise _Finish("paused", "plan approved and saved; execute it with reasonix exec")
            await self._execute()
            raise _Finish("failed", "the loop ended without a verdict")  # pragma: no cover
        except _Finish as fin:
            status, reason = fin.state, fin.reason
        except _Pause as pause:
            status, reason = "paused", pause.reason
        except (trio.Cancelled, BaseExceptionGroup) as exc:
            # A cancellation that passed through a nursery (the client's, a verify command's) arrives as a group.
            if isinstance(exc, trio.Cancelled) or exc.split(trio.Cancelled)[1] is None:
                self._finish("paused", "interrupted by the user; the goal is resumable")  # synchronous: no checkpoint
            raise
        self._finish(status, reason)
        return self.outcome()

    def _finish(self, status: GoalState, reason: str) -> None:
        if self.record.state != status or self.record.reason != reason:
            self._set_state(status, reason)
        hint = f"reasonix goal --resume {self.store.run_id}" if status == "paused" else ""
        self.emit(GoalFinished(status=status, summary=reason, run_id=self.store.run_id, resume_hint=hint))
        self.store.sync()

    def outcome(self) -> GoalOutcome:
        state = self.record.state
        assert state in TERMINAL_STATES
        return GoalOutcome(
            status=state,  # type: ignore[arg-type]
            summary=self.record.reason,
            run_id=self.store.run_id,
            plan=self.plan_with_state(),
            record=self.record,
            planner=self.planner,
            executor=self.executor,
            escalations=self.escalations,
        )


def _is_goal_event(event: AnyEvent) -> bool:
    return event.__class__.__module__ == "orchestrator.events"
