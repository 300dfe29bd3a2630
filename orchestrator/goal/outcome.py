"""What a run of the goal loop hands back: :class:`GoalOutcome`, and its :class:`~orchestrator.summary.Summary`."""

from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.events import EndState, Escalated
from orchestrator.goal.store import GoalRecord
from orchestrator.summary import Command, Summary, figures
from plans.schema import Plan, StepStatus
from sessions.session import Session


@dataclass
class GoalOutcome:
    status: EndState
    summary: str
    run_id: str
    plan: Plan | None
    record: GoalRecord
    planner: Session | None
    executor: Session | None
    escalations: list[Escalated] = field(default_factory=list)

    @property
    def steps_done(self) -> int:
        return sum(1 for s in self.plan.steps if s.status is StepStatus.DONE) if self.plan is not None else 0

    @property
    def steps_total(self) -> int:
        return len(self.plan.steps) if self.plan is not None else 0

    def to_summary(self, command: Command = "goal") -> Summary:
        """The summary (``--json``'s last line; the terminal's last line is rendered from it)."""
        sessions = {s.name: (s.requests, s.usage, s.cost_usd) for s in (self.planner, self.executor) if s is not None}
        return Summary(
            command=command,
            run_id=self.run_id,
            status=self.status,
            ok=self.status == "complete",
            text=self.summary,
            steps_done=self.steps_done,
            steps_total=self.steps_total,
            escalations=self.record.escalations,
            replans=self.record.replans,
            **figures(sessions),
        )
