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
from orchestrator.checkpoints.ledger import Ledger, step_runs
from orchestrator.config.context import ContextConfig
from orchestrator.config.model import Config, ParallelSteps, TextCalls
from orchestrator.events import (
    Escalated,
    GoalEvent,
    GoalEventBase,
    GoalState,
    GoalStateChanged,
    GoalWaiting,
    StepVerified,
    VerifyOutcome,
)
from orchestrator.goal import prompts
from orchestrator.goal.phases import Ended
from orchestrator.goal.store import GoalRecord, RunStore
from orchestrator.goal.tools import Mailbox, executor_tools, planner_tools
from orchestrator.policy.budget import Budget, BudgetExceeded, BudgetTracker, BudgetUsage
from orchestrator.policy.escalation import EscalationPolicy, Escalator
from orchestrator.policy.outage import Backoff, OutageWaits
from orchestrator.policy.stuck import ProgressTracker
from orchestrator.policy.turn_evidence import TurnWatch
from orchestrator.policy.verify import UnconfinedVerify, unconfined_reason
from orchestrator.review.reviewer import Reviewer
from plans import Plan, StepStatus
from sessions import Session, SessionEvent, SessionSettings, ToolFinished, ToolStarted, TurnResult, UsageReported
from sessions.sandbox import NoSandbox, Sandbox
from sessions.tools import ToolRegistry, default_registry
from sessions.wire import DeepSeekClient, ReplySource, RequestGate

AnyEvent = SessionEvent | GoalEvent
GoalMode = Literal["goal", "plan", "exec"]
SessionName = Literal["planner", "executor"]


_CONFIG = Config()
_SESSION = SessionSettings()


class GoalOptions(BaseModel):
    """How one goal runs, fixed for the run. ``orchestrator.build.goal_options`` makes it from the configuration and
    the command line; every default is the configuration's (``Config``) or a session's (``SessionSettings``), and the
    bounds of ``parallel`` and ``max_text_calls`` are the configuration's own types: none is written here again."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    flash_model: str = _CONFIG.models.flash
    pro_model: str = _CONFIG.models.pro
    planner_model: str | None = None
    """``[roles] planner``: the planner's model when it is not :attr:`flash_model` (another provider's, perhaps)."""
    thinking: bool = _CONFIG.thinking
    reasoning_effort: Literal["low", "medium", "high", "max"] | None = _CONFIG.reasoning_effort
    escalation: EscalationPolicy = EscalationPolicy()
    budget: Budget = Budget()
    max_step_attempts: int = 2
    max_plan_attempts: int = 3
    max_replans: int = 5
    max_requests_per_turn: int = _SESSION.max_requests_per_turn
    context_window: int = _SESSION.context_window
    """The executor's context window (its ``[[providers]]`` entry's ``context_window``, else the session default)."""
    planner_context_window: int | None = None
    """The planner's, when its entry (``[roles] planner``) has one; else :attr:`context_window`."""
    max_output: dict[str, int] = Field(default_factory=dict)
    """Every ``[[providers]]`` entry's ``max_output`` by model id (``SessionSettings.max_output``)."""
    max_text_calls: TextCalls = _CONFIG.repair.max_text_calls
    """``[repair] max_text_calls``: the most calls taken from one reply's text."""
    context: ContextConfig = _CONFIG.context
    """``[context]``: the tiers of both sessions' context (DESIGN §3.6); off by default."""
    verify_timeout_s: float = 300.0
    use_ripgrep: bool | None = None
    retry_from_checkpoint: bool = _CONFIG.goal.retry_from_checkpoint
    parallel: ParallelSteps = _CONFIG.goal.parallel
    """Ready steps with disjoint declared writes run at once, up to this many (1: one step at a time). The run's
    own limit, which drops to 1 when branches cannot be made, is :attr:`GoalContext.parallel`."""
    allow_unconfined_verify: bool = False
    """``--allow-unconfined-verify``: without a sandbox, verify commands run on the host anyway."""
    unattended: bool = False
    """``--unattended``: nobody is there to answer, so what would wait for a person ends the goal blocked (with the
    reason) instead of paused, and a stuck step is re-planned once before that (see :mod:`orchestrator.unattended`)."""
    backoff: Backoff = Backoff()
    """How an unattended goal waits out DeepSeek's outages (:mod:`orchestrator.policy.outage`)."""


STEP_REQUESTS_GUESS = 8
"""The requests a step is guessed to take before any step of the goal is done."""


def remaining_requests(plan: Plan | None, requests: int) -> int:
    """How many more requests a goal's session is expected to make (the snip rule of DESIGN §3.6): the steps not
    done yet times the requests a done step took it on average so far (:data:`STEP_REQUESTS_GUESS` before any is
    done), plus one for the verdict; before a plan exists, as many as it made so far."""
    if plan is None:
        return max(1, requests)
    done = sum(1 for s in plan.steps if s.status in (StepStatus.DONE, StepStatus.SKIPPED))
    per_step = requests / done if done else STEP_REQUESTS_GUESS
    return max(1, round((len(plan.steps) - done) * per_step) + 1)


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


ExtendSession = Callable[..., tuple[str, ToolRegistry]]
"""Adds the configured extensions to an executor's system prompt and registry before its prefix is built
(``SessionExtensions.apply`` of :mod:`orchestrator.subagents.bundle`: memory, skills, subagents)."""


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
        extend: ExtendSession | None = None,
    ) -> None:
        self.workspace = workspace
        self.extend = extend
        """The extensions of the executor and its forks (``None``: none, the prefix of a goal without them)."""
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
        self.parallel = options.parallel
        """How many steps a wave may run at once in this run: ``options.parallel`` until a branch's copy of the
        workspace cannot be made, then 1 (:meth:`one_step_at_a_time`). The options themselves never change."""
        self.reviewer = reviewer
        self.open_session = open_session
        """Builds a session (the planner, the executor, and each fork of the executor in a parallel wave)."""
        self._on_event = on_event
        self.escalations: list[Escalated] = []
        self.mailbox = Mailbox(objective=record.objective)
        self.turn_watch = TurnWatch()
        """The tool calls of each executor turn in flight, for what the turn shows besides its verify commands."""
        self.escalator = Escalator(
            options.escalation,
            flash_model=options.flash_model,
            pro_model=options.pro_model,
            on_escalation=self._escalated,
            on_pro_marker=self.emit,
        )
        self.replies: ReplySource = self.escalator
        """Where every request of the goal goes: the escalator, or around it the wait for DeepSeek's outages when
        the run is unattended (:class:`~orchestrator.policy.outage.OutageWaits`)."""
        self.outages: OutageWaits | None = None
        if options.unattended:
            self.outages = OutageWaits(self.escalator, on_wait=self._waiting, backoff=options.backoff)
            self.replies = self.outages
        self.budget = BudgetTracker(
            options.budget,
            already_used=BudgetUsage(
                usd=record.usage_usd, requests=record.usage_requests, seconds=record.usage_seconds
            ),
        )
        self.progress = ProgressTracker()
        self.last_verify: dict[str, tuple[VerifyOutcome, ...]] = {}
        """Each step's verify outcomes the last time they ran (for :meth:`task_state`)."""
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

    def one_step_at_a_time(self, reason: str) -> None:
        """No more parallel waves in this run (a branch's copy of the workspace could not be made): say so, and why."""
        self.parallel = 1
        self.checkpoints.notify(f"steps run one at a time for the rest of this run: {reason}")

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
        if isinstance(event, StepVerified):
            self.last_verify[event.step_id] = event.outcomes
        if isinstance(event, ToolStarted | ToolFinished):
            self.turn_watch.observe(event)
        if isinstance(event, GoalEventBase):
            self.store.append_event(event.model_dump(mode="json"))
        if self._on_event is not None:
            self._on_event(event)

    def _waiting(self, reason: str, wait_s: float, attempt: int) -> None:
        self.emit(GoalWaiting(reason=reason, wait_s=wait_s, attempt=attempt))
        self.store.sync()  # journaled before the wait: a run killed while it waits says why it stood still

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

    def held(self, reason: str) -> Ended:
        """The end of a goal that needs a person to go on (it is stuck, or a step cannot be verified here): paused,
        resumable, when someone is there; blocked with the reason when the run is unattended."""
        return Ended("blocked" if self.options.unattended else "paused", reason)

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
        planner_system, planner_registry = self.planner_extended(default_registry(use_ripgrep=self.options.use_ripgrep))
        for tool in planner_tools(self.mailbox):  # after the extensions: a subagent never gets a protocol tool
            planner_registry.register(tool)
        system, executor_registry = self.extended(
            default_registry(use_ripgrep=self.options.use_ripgrep), self.store.executor_journal
        )
        for tool in executor_tools(self.mailbox):
            executor_registry.register(tool)
        self.planner = self._session("planner", planner_system, planner_registry, read_only=True)
        self.executor = self._session("executor", system, executor_registry, read_only=False)

    def extended(
        self, registry: ToolRegistry, journal: Path, root: Path | None = None, parent: str = ""
    ) -> tuple[str, ToolRegistry]:
        """The executor's system prompt and ``registry`` (the built-ins; the protocol tools are added after, so no
        subagent gets one) with the extensions: the same bytes for the executor and every fork of it; a fork's
        subagents work in its branch (``root``), a writing one there in place."""
        if self.extend is None:
            return prompts.EXECUTOR_SYSTEM_PROMPT, registry
        return self.extend(
            prompts.EXECUTOR_SYSTEM_PROMPT,
            registry,
            builder=self.open_session,
            journal_path=journal,
            request_gate=self.budget,  # subagents spend from the goal's budget
            on_event=self.emit,
            root=root,
            copies=root is None,
            parent=parent,
            replies=self.replies,  # a subagent's turn is escalated as the executor's are
            escalator=self.escalator,
        )

    def planner_extended(self, registry: ToolRegistry) -> tuple[str, ToolRegistry]:
        """The planner's system prompt and ``registry`` with the read-only ``task`` flavour and the index of the
        read-only subagent profiles, when there are any (else both as they were: the planner's bytes of a workspace
        without profiles). Its subagents spend from the goal's budget and are journaled in ``agents/planner/``."""
        if self.extend is None:
            return prompts.PLANNER_SYSTEM_PROMPT, registry
        return self.extend(
            prompts.PLANNER_SYSTEM_PROMPT,
            registry,
            builder=self.open_session,
            journal_path=self.store.dir / "planner.jsonl",
            read_only=True,
            request_gate=self.budget,
            on_event=self.emit,
            parent="planner",
            agents_only=True,
            replies=self.replies,
            escalator=self.escalator,
        )

    def _session(self, name: SessionName, system_prompt: str, registry: ToolRegistry, *, read_only: bool) -> Session:
        options = self.options
        session = self.open_session(
            name=name,
            system_prompt=system_prompt,
            registry=registry,
            settings=SessionSettings(
                model=options.planner_model if name == "planner" and options.planner_model else options.flash_model,
                thinking=options.thinking,
                reasoning_effort=options.reasoning_effort,
                max_requests_per_turn=options.max_requests_per_turn,
                context_window=(
                    options.planner_context_window
                    if name == "planner" and options.planner_model and options.planner_context_window
                    else options.context_window
                ),
                max_output=options.max_output,
                max_text_calls=options.max_text_calls,
                read_only=read_only,
                **options.context.session_fields(),
                retry_when_cut=True,  # a reply cut at the output limit gets one retry with a larger max_tokens
            ),
            journal_path=self.store.dir / f"{name}.jsonl",
            on_event=self.emit,
            reply_source=self.replies,
            resume=True,
            request_gate=self.budget,  # the run's one ledger, asked before every request (DESIGN §5 "Budgets")
        )
        session.task_state = self.task_state  # what a compaction restates first (DESIGN §5 "Compaction in a goal")
        session.expected_requests = lambda: remaining_requests(self.plan, session.requests)  # the snip rule's
        return session

    def task_state(self) -> str:
        """The task as the supervisor holds it, restated first in a compacted log of either session
        (:func:`orchestrator.goal.prompts.task_state`); the files changed are the run's steps' checkpoints."""
        changed = sorted(
            {c.path for run in step_runs(Ledger(self.workspace).read(), self.store.run_id) for c in run.changes}
        )
        return prompts.task_state(self.record.objective, self.plan, changed=changed, verified=self.last_verify)

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
