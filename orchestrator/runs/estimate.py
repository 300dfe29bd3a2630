"""What a plan is expected to cost, shown at review beside the budget: requests and dollars, from the plan's size and
this workspace's own finished runs where there are any, priced at today's prices.

With history: requests per step and the average request's tokens (prompt, cache hits, output) of the finished goals
here. Without: a step takes about :data:`DEFAULT_REQUESTS_PER_STEP` executor requests, plus the planner's verdict,
and a request looks like :data:`DEFAULT_REQUEST`. It is an estimate, and says what it is based on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.policy.budget import Budget
from orchestrator.runs.history import list_runs
from orchestrator.text.wording import counted
from plans import Plan
from sessions.accounting import PriceBook, PriceError
from sessions.wire import Usage

DEFAULT_REQUESTS_PER_STEP = 3.0
"""Write, verify, report: the executor requests of a plain step."""
DEFAULT_PLANNER_REQUESTS = 1
"""The planner's verdict at the end, one request: goal_verdict ends its turn (its planning requests are already spent
when the plan is reviewed)."""
DEFAULT_REQUEST = Usage(
    prompt_tokens=8_000, prompt_cache_hit_tokens=7_400, prompt_cache_miss_tokens=600, completion_tokens=400
)


@dataclass(frozen=True)
class PlanEstimate:
    requests: int
    usd: float | None
    basis: str

    def text(self, budget: Budget | None = None) -> str:
        cost = f", about ${self.usd:.4f}" if self.usd is not None else ""
        line = f"expected: about {counted(self.requests, 'request')}{cost} ({self.basis})"
        if budget is not None:
            limits = [
                f"${budget.usd:g}" if budget.usd is not None else "",
                counted(budget.requests, "request") if budget.requests is not None else "",
            ]
            shown = " · ".join(x for x in limits if x)
            line += f" · budget {shown}" if shown else " · no budget set"
        return line


def estimate_plan(
    workspace: Path, plan: Plan, *, model: str, book: PriceBook, at: datetime | None = None
) -> PlanEstimate:
    steps = len(plan.steps)
    finished = [r for r in list_runs(workspace) if r.status == "complete" and r.steps_total and r.command != "run"]
    requests_made = sum(r.requests for r in finished)
    if finished and requests_made:
        per_step = requests_made / sum(r.steps_total or 0 for r in finished)
        requests = max(1, round(per_step * steps))
        sessions = [s for r in finished for s in r.sessions.values()]
        n = sum(s.requests for s in sessions) or 1
        average = Usage(
            prompt_tokens=sum(s.prompt_tokens for s in sessions) // n,
            prompt_cache_hit_tokens=sum(s.hit_tokens for s in sessions) // n,
            prompt_cache_miss_tokens=(sum(s.prompt_tokens - s.hit_tokens for s in sessions)) // n,
            completion_tokens=sum(s.completion_tokens for s in sessions) // n,
        )
        basis = f"{per_step:.1f} requests a step in {counted(len(finished), 'finished run')} here"
    else:
        requests = round(DEFAULT_REQUESTS_PER_STEP * steps) + DEFAULT_PLANNER_REQUESTS
        average = DEFAULT_REQUEST
        basis = "no finished runs here yet: a typical step"
    try:
        per_request = float(book.cost(average, model, at or datetime.now(UTC)))
    except PriceError:
        return PlanEstimate(requests, None, basis)
    return PlanEstimate(requests, per_request * requests, basis + ", today's prices")
