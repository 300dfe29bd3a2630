"""What every unit of the goal loop works with (DESIGN §5): the run's record and store, the two sessions, the budget,
the escalator, and the mailbox the protocol tools write into during a turn.

:class:`GoalContext` holds them and the few operations the units share: emit an event, save ``goal.json``, change the
goal's state, change a step of the plan, and run one turn of a session. The plan in :attr:`GoalRecord.plan` is the one
home of step state; ``goal.json`` is rewritten before anything else happens, so a killed process resumes where it stood.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.checkpoints.hook import StepCheckpoints
from orchestrator.events import Escalated, GoalEvent, GoalEventBase, GoalState, GoalStateChanged
from orchestrator.goal import prompts
from orchestrator.goal.phases import Ended
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.goal.tools import Mailbox, executor_tools, planner_tools
from orchestrator.policy.budget import Budget, BudgetExceeded, BudgetTracker, BudgetUsage
from orchestrator.policy.escalation import EscalationPolicy, Escalator
from orchestrator.policy.stuck import ProgressTracker
from orchestrator.policy.verify import UnconfinedVerify, unconfined_reason
from orchestrator.review.reviewer import Reviewer
from plans import Plan
from sessions import Session, SessionEvent, SessionSettings, TurnResult, UsageReported
from sessions.sandbox import NoSandbox, Sandbox
from sessions.tools import ToolRegistry, default_registry
from sessions.wire import DeepSeekClient, ReplySource, RequestGate

AnyEvent = SessionEvent | GoalEvent
Mode = Literal["goal", "plan", "exec"]
SessionName = Literal["planner", "executor"]


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
    max_text_calls: int = Field(default=3, ge=0, le=20)
    """``[repair] max_text_calls``: the most calls taken from one reply's text."""
    verify_timeout_s: float = 300.0
    use_ripgrep: bool | None = None
    retry_from_checkpoint: bool = True
    parallel: int = Field(default=3, ge=1)
    """Ready steps with disjoint declared writes run at once, up to this many (1: one step at a time)."""
    allow_unconfined_verify: bool = False
    """``--allow-unconfined-verify``: without a sandbox, verify commands run on the host anyway."""


class SessionOpener(Protocol):
    """Builds (or resumes from its journal) one session of the goal: :class:`orchestrator.build.SessionBuilder`."""

    def __call__(
        self,
        *,
        name: str,
        system_prompt: str,
        registry: ToolRegistry,
        settings: SessionSettings,
        journal_path: Path,
        on_event: Callable[[SessionEvent], None],
        reply_source: ReplySource,
        resume: bool,
        root: Path | None = None,
        env: Mapping[str, str] | None = None,
        request_gate: RequestGate | None = None,
    ) -> Session: ...


@dataclass
class Lane:
    """Where an executor turn runs: the main executor in the workspace (``step_id`` None), or a fork of it working on
    one step in a parallel branch's copy of the workspace. Each lane has its own mailbox and its own escalation state
    (``key``, the name the escalator knows its turns by)."""

    session: Session
    mailbox: Mailbox
    workspace: Path
    key: str
    step_id: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    """What the environment of commands run for this lane adds (its verify commands; its session's bash has it too)."""

    @property
    def main(self) -> bool:
        return self.step_id is None


class GoalContext:
    """The state a goal's units share. :class:`~orchestrator.goal.runner.GoalRunner` is one, plus the machine."""

    def __init__(
        self,
        *,
        workspace: Path,
        client: DeepSeekClient,
        store: RunStore,
        record: GoalRecord,
        options: GoalOptions,
        reviewer: Reviewer | None,
        open_session: SessionOpener,
        on_event: Callable[[AnyEvent], None] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.workspace = workspace
        self.sandbox: Sandbox = sandbox or NoSandbox()
        """What confines the supervisor's verify commands (the sessions' commands are confined by their builder)."""
        self.unconfined = UnconfinedVerify(unconfined_reason(sandbox), allow_all=options.allow_unconfined_verify)
        """Which verify commands may run although no sandbox confines them (none unless the user said so)."""
        self.client = client
        """The client the sessions send through (the caller opens and closes it)."""
        self.store = store
        store.lock()  # one process per run: a second --resume is refused, not interleaved
        self.record = record
        self.options = options
        self.reviewer = reviewer
        self.open_session = open_session
        """Builds a session (the planner, the executor, and each fork of the executor in a parallel wave)."""
        self._on_event = on_event
        self.escalations: list[Escalated] = []
        self.mailbox = Mailbox(objective=record.objective)
        self.escalator = Escalator(
            options.escalation,
            flash_model=options.flash_model,
            pro_model=options.pro_model,
            on_escalation=self._escalated,
            on_pro_marker=self.emit,
        )
        self.budget = BudgetTracker(
            options.budget,
            already_used=BudgetUsage(
                usd=record.usage_usd, requests=record.usage_requests, seconds=record.usage_seconds
            ),
        )
        self.progress = ProgressTracker()
        self.planner: Session | None = None
        self.executor: Session | None = None
        self.pending_planner_note: str | None = None
        """Told to the planner at the start of its next turn (the user's edit of the plan)."""
        self.checkpoints = StepCheckpoints(workspace, store.run_id, retry_from_checkpoint=options.retry_from_checkpoint)
        """Snapshots of the workspace around each step (undo, and the retry's starting point)."""

    # ------------------------------------------------------------------------------------------------ the plan

    @property
    def plan(self) -> Plan | None:
        """The current plan, each step with its state."""
        return self.record.plan

    def plan_with_state(self) -> Plan | None:
        """The current plan with each step's state (what the terminal UI draws)."""
        return self.record.plan

    def update_step(self, step_id: str, **fields: Any) -> None:
        """Change supervisor-owned fields (``status``, ``result``, ``evidence``) of one step of the current plan."""
        plan = self.record.plan
        assert plan is not None
        steps = tuple(s.model_copy(update=fields) if s.id == step_id else s for s in plan.steps)
        self.record.plan = plan.model_copy(update={"steps": steps})

    # ------------------------------------------------------------------------------------------------ events

    def emit(self, event: AnyEvent) -> None:
        if isinstance(event, UsageReported):
            self.budget.charge(usd=event.cost_usd, requests=1)
            checked = self.budget.check()
            if isinstance(checked, list):
                for warning in checked:
                    self.emit(warning)
        if isinstance(event, GoalEventBase):
            self.store.append_event(event.model_dump(mode="json"))
        if self._on_event is not None:
            self._on_event(event)

    def _escalated(self, event: Escalated) -> None:
        self.escalations.append(event)
        self.record.escalations += 1
        self.emit(event)

    def set_state(self, state: GoalState, reason: str = "") -> None:
        previous = self.record.state
        self.record.state = state
        self.record.reason = reason
        self.save()
        self.emit(GoalStateChanged(state=state, previous=previous, reason=reason))

    def save(self) -> None:
        usage = self.budget.usage
        self.record.usage_usd = usage.usd
        self.record.usage_requests = usage.requests
        self.record.usage_seconds = usage.seconds
        self.record.pro_turns = self.escalator.pro_turns
        self.store.save(self.record)

    def over_budget(self) -> Ended | None:
        """A pause when a limit is reached, at safe points: after a planner turn, after a step's verification (a
        finished step is verified before the goal pauses). The hard cap is the gate every request passes first
        (:meth:`BudgetTracker.admit`); this only ends the goal cleanly once nothing is left."""
        checked = self.budget.check()
        if isinstance(checked, BudgetExceeded):
            return Ended("paused", checked.summary)
        return None

    # ------------------------------------------------------------------------------------------------ sessions

    def open_sessions(self) -> None:
        planner_registry = default_registry(use_ripgrep=self.options.use_ripgrep)
        for tool in planner_tools(self.mailbox):
            planner_registry.register(tool)
        executor_registry = default_registry(use_ripgrep=self.options.use_ripgrep)
        for tool in executor_tools(self.mailbox):
            executor_registry.register(tool)
        self.planner = self._session("planner", prompts.PLANNER_SYSTEM_PROMPT, planner_registry, read_only=True)
        self.executor = self._session("executor", prompts.EXECUTOR_SYSTEM_PROMPT, executor_registry, read_only=False)

    def _session(self, name: SessionName, system_prompt: str, registry: ToolRegistry, *, read_only: bool) -> Session:
        options = self.options
        return self.open_session(
            name=name,
            system_prompt=system_prompt,
            registry=registry,
            settings=SessionSettings(
                model=options.flash_model,
                thinking=options.thinking,
                reasoning_effort=options.reasoning_effort,
                max_requests_per_turn=options.max_requests_per_turn,
                context_window=options.context_window,
                max_text_calls=options.max_text_calls,
                read_only=read_only,
                retry_when_cut=True,  # a reply cut at the output limit gets one retry with a larger max_tokens
            ),
            journal_path=self.store.dir / f"{name}.jsonl",
            on_event=self.emit,
            reply_source=self.escalator,
            resume=True,
            request_gate=self.budget,  # the run's one ledger, asked before every request (DESIGN §5 "Budgets")
        )

    def with_planner_note(self, text: str) -> str:
        """``text``, preceded by the pending note for the planner (which is then told)."""
        note, self.pending_planner_note = self.pending_planner_note, None
        return f"{note}\n\n{text}" if note else text

    def main_lane(self) -> Lane:
        """The executor itself, in the workspace."""
        assert self.executor is not None, "open_sessions() first"
        return Lane(self.executor, self.mailbox, self.workspace, self.executor.name)

    async def turn(
        self,
        name: SessionName,
        text: str,
        *,
        needs_pro: bool = False,
        reason: str = "",
        failures: int = 0,
        lane: Lane | None = None,
    ) -> TurnResult:
        """One turn of the planner or the executor (or of ``lane``: a fork in a parallel branch). What the protocol
        tools were told lands in the lane's mailbox (:attr:`mailbox` for the planner and the executor)."""
        if lane is None:
            session = self.planner if name == "planner" else self.executor
            assert session is not None, "open_sessions() first"
            lane = Lane(session, self.mailbox, self.workspace, session.name)
        lane.mailbox.clear()
        lane.mailbox.current_plan = self.plan
        self.escalator.begin_turn(lane.key, needs_pro=needs_pro, reason=reason)
        if lane.main:  # a wave counts its wall time once, around all of its branches
            self.budget.start()
        try:
            result = await lane.session.send(text, failures=failures)
        finally:
            if lane.main:
                self.budget.stop()
            self.save()
        return result
