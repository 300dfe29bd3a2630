"""What the supervisor reports: every state change of a goal is an event (DESIGN §5).

The journal, the terminal UI and ``--json`` consume the same events. Session events (``sessions.events``) flow in the
same stream; these are the goal-level ones.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from orchestrator.exits import TERMINAL_STATES as TERMINAL_STATES  # re-exported: defined beside the exit statuses
from orchestrator.exits import EndState as EndState
from orchestrator.exits import GoalState as GoalState
from sessions import SessionEvent


class GoalEventBase(BaseModel):
    """The base of every goal event: ``isinstance(event, GoalEventBase)`` tells them from session events."""

    model_config = ConfigDict(frozen=True)


class GoalStateChanged(GoalEventBase):
    kind: Literal["goal_state"] = "goal_state"
    state: GoalState
    previous: GoalState | None
    reason: str = ""


class PlanProposed(GoalEventBase):
    kind: Literal["plan_proposed"] = "plan_proposed"
    revision: int
    plan: dict[str, Any]
    normalized: tuple[str, ...] = ()
    """What the lenient reader had to fix in the model's plan."""


class PlanRejected(GoalEventBase):
    """The planner's plan was invalid; the errors went back to it as the tool result."""

    kind: Literal["plan_rejected"] = "plan_rejected"
    errors: tuple[str, ...]
    attempt: int


class PlanRevised(GoalEventBase):
    kind: Literal["plan_revised"] = "plan_revised"
    revision: int
    diff_text: str
    reason: str = ""


class ReviewDecided(GoalEventBase):
    kind: Literal["review"] = "review"
    decision: Literal["approve", "revise", "edit", "cancel"]
    automatic: bool = False
    feedback: str = ""


class StepStarted(GoalEventBase):
    kind: Literal["step_started"] = "step_started"
    step_id: str
    title: str
    attempt: int
    model: str


class StepReported(GoalEventBase):
    kind: Literal["step_reported"] = "step_reported"
    step_id: str
    status: str
    summary: str


class VerifyOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    command: str
    exit_code: int | None
    expected: int = 0
    ok: bool
    timed_out: bool = False
    output: str = ""


class StepVerified(GoalEventBase):
    kind: Literal["step_verified"] = "step_verified"
    step_id: str
    ok: bool
    outcomes: tuple[VerifyOutcome, ...]
    problems: tuple[str, ...] = ()
    """What the executor's turn showed besides the verify commands that keeps the step from being done (a failed
    edit, a marker nobody acted on, no change to its declared writes): ``ok`` is false when there is any."""


class WaveStarted(GoalEventBase):
    """Ready steps with disjoint declared writes start at once, each in a fork of the executor in its own copy of the
    workspace (``[goal] parallel``)."""

    kind: Literal["wave_started"] = "wave_started"
    step_ids: tuple[str, ...]


class BranchMerged(GoalEventBase):
    """A verified branch's changes were merged into the workspace: the step is done."""

    kind: Literal["branch_merged"] = "branch_merged"
    step_id: str
    changed: tuple[str, ...] = ()


class BranchRerun(GoalEventBase):
    """A branch could not be merged (a conflict, a write outside the step's declared files, or its verify commands
    failed on the merged tree): the step runs again, alone, on the merged tree."""

    kind: Literal["branch_rerun"] = "branch_rerun"
    step_id: str
    reason: str
    conflicts: tuple[str, ...] = ()
    undeclared: tuple[str, ...] = ()


class Escalated(GoalEventBase):
    """A turn (or the rest of one) went to pro. Never silent; its cost is never hidden."""

    kind: Literal["escalation"] = "escalation"
    session: str
    trigger: Literal["marker", "failures", "hint", "preset"]
    reason: str
    from_model: str
    to_model: str
    flash_cost_usd: float = 0.0
    """What the aborted flash call cost (0 when nothing was aborted)."""
    flash_cost_estimated: bool = False
    wasted_chars: int = 0
    """Flash content characters consumed before the marker was recognised (≤ 256)."""
    wasted_reasoning_chars: int = 0


class ProAskedForPro(GoalEventBase):
    """Pro itself wrote the escalation marker: there is no stronger model, so its reply stands as written."""

    kind: Literal["pro_asked_for_pro"] = "pro_asked_for_pro"
    session: str
    model: str
    reason: str
    """The marker's reason, as pro wrote it ("" if none)."""


class BudgetWarning(GoalEventBase):
    kind: Literal["budget_warning"] = "budget_warning"
    resource: Literal["usd", "requests", "minutes"]
    used: float
    limit: float


class GoalWaiting(GoalEventBase):
    """An unattended goal waits before it goes on by itself: DeepSeek kept failing (past the client's own retries)
    or could not be reached. ``attempt`` counts the waits in a row; ``wait_s`` grows with it."""

    kind: Literal["goal_waiting"] = "goal_waiting"
    reason: str
    wait_s: float
    attempt: int


class SubagentFinished(GoalEventBase):
    """A subagent (the ``task`` tool) ended: what it was, what it cost and how its cache did; its report (or why it
    stopped) went back to the parent as the tool result. A resumed parent's kept report emits none (nothing ran)."""

    kind: Literal["subagent_finished"] = "subagent_finished"
    session: str
    """``agent:PROFILE#N``: the Nth subagent of its parent."""
    profile: str
    ok: bool
    """It gave its report (false: it stopped before, and ``reason`` says why)."""
    reason: str = ""
    read_only: bool = True
    requests: int = 0
    cost_usd: float = 0.0
    escalations: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    merged: tuple[str, ...] = ()
    """A writing subagent's files merged back into the parent's workspace."""

    def words(self) -> str:
        """The one line every view shows (the terminal, ``runs show``; the dashboard says the same in its JS)."""
        prompt = self.cache_hit_tokens + self.cache_miss_tokens
        ratio = f" ({self.cache_hit_tokens / prompt:.0%})" if prompt else ""
        flavour = "read-only" if self.read_only else "writing"
        line = (
            f"subagent {self.session} ({flavour}) {'done' if self.ok else 'stopped'} · {self.requests} requests · "
            f"${self.cost_usd:.4f} · cache {self.cache_hit_tokens} hit / {self.cache_miss_tokens} miss{ratio} · "
            f"{self.escalations} escalations"
        )
        if self.merged:
            line += f" · merged {', '.join(self.merged)}"
        return line + (f": {self.reason}" if self.reason else "")


class GoalFinished(GoalEventBase):
    kind: Literal["goal_finished"] = "goal_finished"
    status: EndState
    summary: str
    run_id: str
    resume_hint: str = ""


GoalEvent = (
    GoalStateChanged
    | PlanProposed
    | PlanRejected
    | PlanRevised
    | ReviewDecided
    | StepStarted
    | StepReported
    | StepVerified
    | WaveStarted
    | BranchMerged
    | BranchRerun
    | Escalated
    | ProAskedForPro
    | BudgetWarning
    | GoalWaiting
    | SubagentFinished
    | GoalFinished
)
"""Every event of a goal's own (the session events of its planner and executor flow in the same stream)."""

GOAL_EVENT_TYPES: tuple[type[GoalEventBase], ...] = get_args(GoalEvent)
"""The goal event classes, in the order of :data:`GoalEvent`: the one list of them (the terminal view, ``reasonix
runs show`` and the dashboard each render every one, which ``tests/orchestrator/test_event_vocabulary.py`` holds)."""


def event_kind(cls: type[BaseModel]) -> str:
    """The ``kind`` an event class writes (its ``kind`` field's one value)."""
    kind = cls.model_fields["kind"].default
    assert isinstance(kind, str), cls
    return kind


GOAL_EVENT_KINDS: tuple[str, ...] = tuple(event_kind(cls) for cls in GOAL_EVENT_TYPES)
SESSION_EVENT_KINDS: tuple[str, ...] = tuple(event_kind(cls) for cls in get_args(get_args(SessionEvent)[0]))
"""The kinds of the session events (``sessions.events.SessionEvent``) that flow in a goal's stream."""
