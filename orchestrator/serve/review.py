"""The plan review through the API: a :class:`~orchestrator.review.reviewer.Reviewer` that waits until
``POST /api/runs/{id}/review`` decides (approve, revise with feedback, edit with a validated plan, cancel)."""

from __future__ import annotations

from typing import Any

import trio
from pydantic import ValidationError

from orchestrator.review.reviewer import ReviewDecision
from orchestrator.serve.errors import InvalidPlanError, InvalidRequestError, RunConflictError
from orchestrator.serve.models import ReviewRequest
from plans import Plan


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" if e["loc"] else str(e["msg"]) for e in exc.errors()
    )


def decision_of(request: ReviewRequest, current: Plan | None) -> ReviewDecision:
    """The decision a review request asks for. :class:`InvalidPlanError` (422) for an edited plan that does not
    validate; :class:`InvalidRequestError` (400) for a request that does not fit its decision."""
    plan: Plan | None = None
    if request.decision == "edit":
        if request.plan is None:
            raise InvalidRequestError(
                "an 'edit' decision needs the edited plan", "send the plan document (as GET /api/runs/{id} shows it)"
            )
        data: dict[str, Any] = dict(request.plan)
        if current is not None:
            data.setdefault("objective", current.objective)
            data.setdefault("revision", current.revision)
        try:
            plan = Plan.model_validate(data)
        except ValidationError as exc:
            raise InvalidPlanError(
                f"the edited plan is invalid: {_problems(exc)}", "fix the plan document and send it again"
            ) from None
    try:
        return ReviewDecision(kind=request.decision, feedback=request.feedback, plan=plan)
    except ValidationError as exc:
        error = InvalidPlanError if request.decision == "edit" else InvalidRequestError
        raise error(_problems(exc), "fix the request and send it again") from None


class ApiReviewer:
    """Waits for the review decision sent through the API."""

    def __init__(self) -> None:
        self._waiting: trio.Event | None = None
        self._decision: ReviewDecision | None = None
        self.plan: Plan | None = None
        """The plan awaiting review (``None`` when nothing awaits)."""

    @property
    def awaiting(self) -> bool:
        return self._waiting is not None

    async def review(self, plan: Plan, *, diff_text: str | None = None) -> ReviewDecision:
        self.plan = plan
        self._decision = None
        self._waiting = trio.Event()
        try:
            await self._waiting.wait()
        finally:
            self._waiting = None
            self.plan = None
        assert self._decision is not None
        return self._decision

    def decide(self, request: ReviewRequest) -> None:
        """Answer the waiting review; :class:`RunConflictError` when nothing awaits one."""
        if self._waiting is None:
            raise RunConflictError(
                "the run is not awaiting a review", "GET /api/runs/{id} says when it is (awaiting_review: true)"
            )
        self._decision = decision_of(request, self.plan)
        self._waiting.set()
