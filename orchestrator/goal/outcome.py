"""How a run of the goal loop ends: what it hands back (:class:`GoalOutcome`, and its
:class:`~orchestrator.summary.Summary`), and how it can be stopped from outside the machine: a cancellation (Ctrl-C),
or a DeepSeek API error escaping a turn. Either may arrive bare or wrapped in an exception group (it passed through a
nursery: the client's, a verify command's)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

import trio

from orchestrator.events import EndState, Escalated
from orchestrator.exits import leaves
from orchestrator.goal.store import GoalRecord
from orchestrator.policy.budget import BudgetReachedError, BudgetTracker
from orchestrator.summary import Command, Summary, figures
from plans import Plan, StepStatus
from sessions import Session
from sessions.wire import DeepSeekError, Usage


def resume_command(
    run_id: str,
    *,
    workspace: Path | None = None,
    base_url: str | None = None,
    budget: BudgetTracker | None = None,
    yes: bool = False,
) -> str:
    """The one ``reasonix goal --resume`` command line: with ``workspace`` (left out for ``.``) and ``base_url`` when
    given, ``--yes`` when the run was started with it (a plan made after the resume is then approved as the first one
    was, also without a terminal), and a raised limit for each one the run reached or whose gate refused a request
    (the pause's way out)."""
    parts = ["reasonix", "goal", "--resume", run_id]
    if workspace is not None and workspace != Path("."):
        parts += ["--workspace", str(workspace)]
    if base_url:
        parts += ["--base-url", base_url]
    if yes:
        parts.append("--yes")
    if budget is not None:
        limits, needed = budget.budget, budget.exhausted()
        if limits.usd is not None and "usd" in needed:
            parts += ["--budget-usd", f"{max(limits.usd * 2, needed['usd'] * 1.5):.2f}"]
        if limits.requests is not None and "requests" in needed:
            parts += ["--max-requests", str(max(limits.requests * 2, int(needed["requests"]) + 1))]
        if limits.minutes is not None and "minutes" in needed:
            parts += ["--max-minutes", f"{limits.minutes * 2:g}"]
    return shlex.join(parts)


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
    forks: tuple[int, Usage, float] = (0, Usage(), 0.0)
    """Requests, usage and dollars of the executor's forks (parallel branches), every process of the run: they count
    as the executor's."""

    @property
    def steps_done(self) -> int:
        return sum(1 for s in self.plan.steps if s.status is StepStatus.DONE) if self.plan is not None else 0

    @property
    def steps_total(self) -> int:
        return len(self.plan.steps) if self.plan is not None else 0

    def to_summary(self, command: Command = "goal") -> Summary:
        """The summary (``--json``'s last line; the terminal's last line is rendered from it)."""
        sessions = {s.name: (s.requests, s.usage, s.cost_usd) for s in (self.planner, self.executor) if s is not None}
        fork_requests, fork_usage, fork_cost = self.forks
        if fork_requests:
            requests, usage, cost = sessions.get("executor", (0, Usage(), 0.0))
            sessions["executor"] = (requests + fork_requests, usage + fork_usage, cost + fork_cost)
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


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation: ``trio.Cancelled``, or a group of nothing else."""
    found = list(leaves(exc))
    return bool(found) and all(isinstance(leaf, trio.Cancelled) for leaf in found)


def budget_refusal_of(exc: BaseException) -> BudgetReachedError | None:
    """The budget refusal that ``exc`` is (or the first of a group holding nothing else), or ``None``."""
    found = list(leaves(exc))
    if found and all(isinstance(leaf, BudgetReachedError) for leaf in found):
        first = found[0]
        assert isinstance(first, BudgetReachedError)
        return first
    return None


def api_error_of(exc: BaseException) -> DeepSeekError | None:
    """The DeepSeek error that ``exc`` is (or the first one of a group holding nothing else), or ``None``."""
    found = list(leaves(exc))
    if found and all(isinstance(leaf, DeepSeekError) for leaf in found):
        first = found[0]
        assert isinstance(first, DeepSeekError)
        return first
    return None
