"""The batch's one budget (``--budget-usd``): a ledger every request of every goal passes, after the goal's own
limits (:meth:`orchestrator.policy.budget.BudgetTracker.share`).

It admits a request when what the batch spent, plus the bounds of the requests admitted and still in flight, plus this
request's bound (the same upper bound the goal's own ledger uses) stays within the limit. The first refusal closes
the ledger for good: every goal is refused at its next request and pauses, resumable, and no goal is started after
it, so the sum never passes the limit. :class:`BatchLedger` keeps the count and is what the Ray actor holds
(:mod:`orchestrator.batch.ray_engine`); :class:`LocalShare` is the goal's view of it in the same process.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from orchestrator.policy.budget import OUTPUT_ALLOWANCE_TOKENS, BudgetReachedError, describe
from sessions.wire import RequestEstimate

_TOLERANCE = 1e-9


class BatchLedger:
    """What a batch spent against its limit (``None``: no limit, only counted)."""

    def __init__(self, limit_usd: float | None, *, spent_usd: float = 0.0) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.requests = 0
        self.refusal: str | None = None
        """Why the ledger closed (``None`` while open)."""
        self._tokens = itertools.count(1)
        self._held: dict[int, tuple[str, float]] = {}

    @property
    def in_flight_usd(self) -> float:
        return sum(bound for _, bound in self._held.values())

    def reserve(self, bound_usd: float, holder: str) -> tuple[int, str | None]:
        """Admit a request that may cost ``bound_usd``: ``(token, None)``, or ``(0, why)`` when refused."""
        if self.refusal is None and self.limit_usd is not None:
            needed = self.spent_usd + self.in_flight_usd + bound_usd
            if needed > self.limit_usd * (1 + _TOLERANCE):
                spent = describe("usd", self.spent_usd, self.limit_usd).replace("budget", "batch budget")
                self.refusal = f"{spent}; the next request may cost up to ${bound_usd:.4f}"
        if self.refusal is not None:
            return 0, self.refusal
        token = next(self._tokens)
        self._held[token] = (holder, bound_usd)
        return token, None

    def release(self, token: int) -> None:
        self._held.pop(token, None)

    def charge(self, usd: float, requests: int) -> None:
        self.spent_usd += usd
        self.requests += requests

    def forget(self, holder: str) -> None:
        """Release every reservation ``holder`` still holds (an attempt whose node died never releases its own)."""
        for token in [t for t, (h, _) in self._held.items() if h == holder]:
            del self._held[token]

    @property
    def closed(self) -> bool:
        return self.refusal is not None


def bound_of(estimate: RequestEstimate) -> float:
    return estimate.bound_usd(OUTPUT_ALLOWANCE_TOKENS)


class LocalShare:
    """One goal's view of a :class:`BatchLedger` in this process (a
    :class:`~orchestrator.policy.budget.SharedLedger`)."""

    def __init__(self, ledger: BatchLedger, holder: str) -> None:
        self.ledger = ledger
        self.holder = holder

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        token, refusal = self.ledger.reserve(bound_of(estimate), self.holder)
        if refusal is not None:
            raise BudgetReachedError(refusal, "usd")
        return lambda: self.ledger.release(token)

    def charge(self, *, usd: float = 0.0, requests: int = 0) -> None:
        self.ledger.charge(usd, requests)
