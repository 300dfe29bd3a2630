"""How each goal event (:mod:`orchestrator.events`) shows in the terminal's goal view: one function per event class,
in :data:`GOAL_EVENT_LINES`. ``tests/orchestrator/test_event_vocabulary.py`` holds that it has one for every class of
:data:`~orchestrator.events.GOAL_EVENT_TYPES` (as ``reasonix runs show`` and the dashboard must)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rich.text import Text

from orchestrator.events import (
    BranchMerged,
    BranchRerun,
    BudgetWarning,
    Escalated,
    GoalEventBase,
    GoalFinished,
    GoalStateChanged,
    GoalWaiting,
    PlanProposed,
    PlanRejected,
    PlanRevised,
    ProAskedForPro,
    ReviewDecided,
    StepReported,
    StepStarted,
    StepVerified,
    SubagentFinished,
    WaveStarted,
)
from orchestrator.text.safe_text import neutralise
from orchestrator.text.wording import counted
from orchestrator.ui.branch_lines import BranchBoard
from orchestrator.ui.goal_lines import escalation_line, pro_marker_line, state_line, verify_failure_text
from orchestrator.ui.stream import TerminalRenderer
from orchestrator.ui.tool_lines import short


class GoalView(Protocol):
    """What the lines need of the goal view (:class:`orchestrator.ui.goal_view.GoalTerminalUI`)."""

    branches: BranchBoard
    renderer: TerminalRenderer

    @property
    def use_live(self) -> bool: ...
    def line(self, text: Text) -> None: ...
    def show_plan(self, title: str | None = None, *, detail: bool = False, live_too: bool = False) -> None: ...
    def pause_for_review(self) -> None: ...
    def review_done(self) -> None: ...
    def step_titles(self) -> dict[str, str]: ...


def _state(ui: GoalView, event: GoalStateChanged) -> None:
    if event.state == "awaiting_review" and ui.use_live:
        ui.pause_for_review()  # the reviewer talks to the user on this console, below the plan printed whole
        ui.line(state_line(event))
        ui.show_plan(detail=True, live_too=True)
        return
    ui.line(state_line(event))


def _proposed(ui: GoalView, event: PlanProposed) -> None:
    ui.line(Text(f"plan r{event.revision} proposed", style="bold"))
    for note in event.normalized:
        ui.line(Text(f"  normalized: {note}", style="dim"))
    ui.show_plan(detail=True)


def _revised(ui: GoalView, event: PlanRevised) -> None:
    reason = f" ({event.reason})" if event.reason else ""
    ui.line(Text(f"plan revised to r{event.revision}{reason}", style="bold"))
    if event.diff_text.strip():
        ui.line(Text(event.diff_text.rstrip("\n")))
    ui.show_plan(detail=True)


def _rejected(ui: GoalView, event: PlanRejected) -> None:
    errors = "; ".join(event.errors)
    ui.line(Text(f"✗ plan rejected (attempt {event.attempt}): {short(errors, 200)}", style="yellow"))


def _review(ui: GoalView, event: ReviewDecided) -> None:
    how = " (automatic)" if event.automatic else ""
    feedback = f": {short(event.feedback, 100)}" if event.feedback else ""
    ui.line(Text(f"review: {event.decision}{how}{feedback}", style="dim"))
    ui.review_done()


def _started(ui: GoalView, event: StepStarted) -> None:
    again = f" · attempt {event.attempt}" if event.attempt > 1 else ""
    ui.line(Text(f"◐ {event.step_id} {event.title}{again} · {event.model}", style="bold yellow"))


def _reported(ui: GoalView, event: StepReported) -> None:
    ui.line(Text(f"  {event.step_id} reported {event.status}: {short(event.summary, 100)}", style="dim"))


def _verified(ui: GoalView, event: StepVerified) -> None:
    if not event.ok:
        ui.line(verify_failure_text(event))
        return
    count = len(event.outcomes)
    what = f"{counted(count, 'verify command')} passed" if count else "reads only, nothing to verify"
    ui.line(Text(f"✓ {event.step_id} verified: {what}", style="green"))


def _wave(ui: GoalView, event: WaveStarted) -> None:
    ui.line(ui.branches.wave(event, ui.step_titles()))


def _joined(ui: GoalView, event: BranchMerged | BranchRerun) -> None:
    ui.line(ui.branches.joined(event))


def _escalated(ui: GoalView, event: Escalated) -> None:
    ui.line(escalation_line(event))


def _pro_marker(ui: GoalView, event: ProAskedForPro) -> None:
    ui.line(pro_marker_line(event))


def _warning(event: BudgetWarning) -> str:
    share = event.used / event.limit if event.limit else 1.0
    if event.resource == "usd":
        amounts = f"${event.used:.4f} of ${event.limit:.2f}"
    elif event.resource == "requests":
        amounts = f"{event.used:g} of {event.limit:g} requests"
    else:
        amounts = f"{event.used:.1f} of {event.limit:g} minutes"
    return f"{share * 100:.0f}% used ({amounts}); the goal pauses at 100%"


def _budget(ui: GoalView, event: BudgetWarning) -> None:
    ui.line(Text(f"⚠ budget: {_warning(event)}", style="yellow"))


def _waiting(ui: GoalView, event: GoalWaiting) -> None:
    ui.line(
        Text(f"… waiting {event.wait_s:.0f} s (outage {event.attempt}), then going on: {event.reason}", style="yellow")
    )


def _subagent(ui: GoalView, event: SubagentFinished) -> None:
    ui.line(Text(neutralise(event.words()), style="cyan" if event.ok else "yellow"))


def _finished(ui: GoalView, event: GoalFinished) -> None:
    ui.renderer.end_line()  # the state line said how it ended; the summary follows


GOAL_EVENT_LINES: dict[type[GoalEventBase], Callable[[GoalView, Any], None]] = {
    GoalStateChanged: _state,
    PlanProposed: _proposed,
    PlanRejected: _rejected,
    PlanRevised: _revised,
    ReviewDecided: _review,
    StepStarted: _started,
    StepReported: _reported,
    StepVerified: _verified,
    WaveStarted: _wave,
    BranchMerged: _joined,
    BranchRerun: _joined,
    Escalated: _escalated,
    ProAskedForPro: _pro_marker,
    BudgetWarning: _budget,
    GoalWaiting: _waiting,
    SubagentFinished: _subagent,
    GoalFinished: _finished,
}
