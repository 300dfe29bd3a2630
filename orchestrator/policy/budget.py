"""Goal budgets (DESIGN §5 "Budgets"): dollars, requests and wall time, with a warning at 80 % and a pause at 100 %.

A budget is a hard cap. :class:`BudgetTracker` is the run's one ledger and the request gate
(:class:`sessions.wire.reply.RequestGate`) installed on every session of the goal: the planner, the executor and every
fork of a parallel wave ask it before each request. It admits a request only when what was spent, plus what the
requests admitted and still in flight may cost, plus what this one may cost (its prompt at the cache-miss price and its
``max_tokens``, or :data:`OUTPUT_ALLOWANCE_TOKENS` of output, at the output price) stays within the dollar limit, and
when one more request stays within the request limit; otherwise it raises :class:`BudgetReachedError` before anything
is sent, and the goal pauses, resumable.

Time counts only while the goal works: the supervisor calls ``start()`` and ``stop()`` around active work, so a paused
goal's idle time is free. Time comes from ``trio.current_time()``. ``usage`` is what the journal keeps, and a resumed
goal passes it back as ``already_used``, with a raised budget if the user gave one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

import trio
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.errors import ReasonixError
from orchestrator.events import BudgetWarning
from sessions.wire import RequestEstimate

Resource = Literal["usd", "requests", "minutes"]
RESOURCES: tuple[Resource, ...] = ("usd", "requests", "minutes")

#: The share of a limit at which the user is warned (once per resource).
WARN_AT = 0.8
#: Float sums of prices drift by a few ulps; a limit counts as reached within this relative tolerance.
_TOLERANCE = 1e-9
#: The output a request that sets no ``max_tokens`` is assumed to produce at most, for the dollar gate.
OUTPUT_ALLOWANCE_TOKENS = 8_192


class BudgetReachedError(ReasonixError):
    """A request was refused before it was sent: it would pass a limit. The goal pauses with :attr:`summary` and
    resumes with a raised limit."""

    def __init__(self, summary: str, resource: Resource) -> None:
        super().__init__(summary)
        self.summary = summary
        self.resource = resource


class Budget(BaseModel):
    """Limits for one goal; ``None`` means unlimited."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    usd: float | None = Field(default=None, gt=0)
    requests: int | None = Field(default=None, gt=0)
    minutes: float | None = Field(default=None, gt=0)

    def limit(self, resource: Resource) -> float | None:
        value: float | int | None = getattr(self, resource)
        return None if value is None else float(value)

    def over(self, previous: Budget) -> Budget:
        """These limits, each one not given taken from ``previous`` (a resumed run keeps what it started with)."""
        return Budget(
            usd=self.usd if self.usd is not None else previous.usd,
            requests=self.requests if self.requests is not None else previous.requests,
            minutes=self.minutes if self.minutes is not None else previous.minutes,
        )


class BudgetUsage(BaseModel):
    """What a goal has used so far; persisted in the journal so a resumed goal continues the count."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    usd: float = Field(default=0.0, ge=0)
    requests: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0)

    def amount(self, resource: Resource) -> float:
        if resource == "minutes":
            return self.seconds / 60
        return float(self.usd if resource == "usd" else self.requests)


class BudgetExceeded(BaseModel):
    """A limit was reached: the goal pauses with ``summary`` and can resume with a raised budget."""

    model_config = ConfigDict(frozen=True)
    resource: Resource
    """The first resource (in the order usd, requests, minutes) whose limit was reached."""
    used: float
    limit: float
    summary: str
    """Every reached limit, e.g. ``spent $0.52 of $0.50 budget``."""


def _money(value: float, limit: float) -> str:
    digits = 2 if limit >= 0.1 else 4
    return f"${value:.{digits}f}"


def describe(resource: Resource, used: float, limit: float) -> str:
    """One resource's use against its limit, as the user reads it."""
    if resource == "usd":
        return f"spent {_money(used, limit)} of {_money(limit, limit)} budget"
    if resource == "requests":
        return f"made {used:.0f} of {limit:.0f} allowed requests"
    return f"worked {used:.1f} of {limit:g} minutes"


class SharedLedger(Protocol):
    """A ledger above the goal's own, shared with other goals (a batch's budget, :mod:`orchestrator.batch`): asked
    before every request of the goal, after the goal's own limits admitted it, and charged with everything the goal
    is charged. It refuses with :class:`BudgetReachedError` as the goal's own ledger does, so the goal pauses."""

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]: ...

    def charge(self, *, usd: float = 0.0, requests: int = 0) -> None: ...  # pragma: no mutate  — never run


class BudgetTracker:
    """Counts a goal's spending against its ``Budget``; see the module docstring."""

    def __init__(self, budget: Budget, *, already_used: BudgetUsage | None = None) -> None:
        self._budget = budget
        used = already_used or BudgetUsage()
        self._usd = used.usd
        self._requests = used.requests
        self._seconds = used.seconds
        self._started_at: float | None = None
        self._warned: set[Resource] = set()
        self._reserved_usd = 0.0
        self._reserved_requests = 0
        self.refused: dict[Resource, float] = {}
        """What the gate refused, per resource: the amount the refused request needed (spent, in flight and its
        own bound); a resume command asks for more than that."""
        self._shared: SharedLedger | None = None

    def share(self, ledger: SharedLedger) -> None:
        """Ask ``ledger`` too before every request, and charge it with every charge from now on (a batch's budget)."""
        self._shared = ledger

    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def running(self) -> bool:
        return self._started_at is not None

    def start(self) -> None:
        """Active work begins: wall time counts from now (no-op when already counting)."""
        if self._started_at is None:
            self._started_at = trio.current_time()

    def stop(self) -> None:
        """Active work ends (pause, review, exit): wall time stops counting (no-op when not counting)."""
        if self._started_at is not None:
            self._seconds += trio.current_time() - self._started_at
            self._started_at = None

    def charge(self, *, usd: float = 0.0, requests: int = 0) -> None:
        """Add the cost of requests made (an aborted escalation's flash call counts too)."""
        if usd < 0 or requests < 0:
            raise ValueError(f"a charge cannot be negative (usd={usd}, requests={requests})")
        self._usd += usd
        self._requests += requests
        if self._shared is not None:
            self._shared.charge(usd=usd, requests=requests)

    @property
    def usage(self) -> BudgetUsage:
        """Everything used so far, including the running stretch of wall time; what the journal keeps."""
        seconds = self._seconds
        if self._started_at is not None:
            seconds += trio.current_time() - self._started_at
        return BudgetUsage(usd=self._usd, requests=self._requests, seconds=seconds)

    def _reached(self, used: float, limit: float, share: float) -> bool:
        return used >= limit * share * (1 - _TOLERANCE)

    def check(self) -> list[BudgetWarning] | BudgetExceeded:
        """New warnings (each resource warns once, at 80 %), or what was exceeded (at 100 %) when a limit is reached."""
        usage = self.usage
        exceeded: list[tuple[Resource, float, float]] = []
        warnings: list[BudgetWarning] = []
        for resource in RESOURCES:
            limit = self._budget.limit(resource)
            if limit is None:
                continue
            used = usage.amount(resource)
            if self._reached(used, limit, 1.0):
                exceeded.append((resource, used, limit))
                self._warned.add(resource)
            elif self._reached(used, limit, WARN_AT) and resource not in self._warned:
                warnings.append(BudgetWarning(resource=resource, used=used, limit=limit))
        if exceeded:
            for warning in warnings:  # not shown now: the pause says more; they come back after a raise
                self._warned.discard(warning.resource)  # pragma: no mutate  — a warning's resource is never marked
            resource, used, limit = exceeded[0]
            summary = "; ".join(describe(*item) for item in exceeded)
            return BudgetExceeded(resource=resource, used=used, limit=limit, summary=summary)
        self._warned.update(w.resource for w in warnings)
        return warnings

    # ------------------------------------------------------------------------------------------------ the gate

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        """Admit the request ``estimate`` describes, reserving its bound until the release returned is called (its
        usage is charged by then), or raise :class:`BudgetReachedError` (see the module's docstring)."""
        usage, budget = self.usage, self._budget
        bound = estimate.bound_usd(OUTPUT_ALLOWANCE_TOKENS)
        refusals: list[tuple[Resource, str, float]] = []
        if budget.requests is not None and usage.requests + self._reserved_requests + 1 > budget.requests:
            in_flight = f" ({self._reserved_requests} more in flight)" if self._reserved_requests else ""
            what = describe("requests", usage.requests, budget.requests) + in_flight
            refusals.append(("requests", what, usage.requests + self._reserved_requests + 1))
        if budget.usd is not None:
            needed = usage.usd + self._reserved_usd + bound
            if needed > budget.usd * (1 + _TOLERANCE):
                spent = describe("usd", usage.usd, budget.usd)
                refusals.append(("usd", f"{spent}; the next request may cost up to {_money(bound, bound)}", needed))
        if budget.minutes is not None and usage.seconds / 60 >= budget.minutes * (1 - _TOLERANCE):
            worked = usage.seconds / 60
            what = describe("minutes", worked, budget.minutes)  # pragma: no mutate  — describe's last case: minutes
            refusals.append(("minutes", what, worked))
        if refusals:
            for resource, _, needed in refusals:
                self.refused[resource] = needed
            raise BudgetReachedError("; ".join(what for _, what, _ in refusals), refusals[0][0])
        shared_release = self._shared.admit(estimate) if self._shared is not None else None  # may refuse: nothing held
        self._reserved_usd += bound
        self._reserved_requests += 1
        released = False  # pragma: no mutate  — None is as false

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._reserved_usd = max(0.0, self._reserved_usd - bound)
                self._reserved_requests -= 1
                if shared_release is not None:
                    shared_release()

        return release

    def exhausted(self) -> dict[Resource, float]:
        """Each resource whose limit was reached or that refused a request, with the amount a raised limit must pass."""
        usage, out = self.usage, dict(self.refused)
        for resource in RESOURCES:
            limit = self._budget.limit(resource)
            if limit is not None and self._reached(usage.amount(resource), limit, 1.0):
                out[resource] = max(out.get(resource, 0.0), usage.amount(resource))
        return out

    def raise_limits(self, new_budget: Budget) -> None:
        """New limits for a resumed goal; a resource under 80 % of its new limit warns again."""
        self._budget = new_budget
        self.refused.clear()
        usage = self.usage
        for resource in RESOURCES:
            limit = new_budget.limit(resource)
            if limit is None or not self._reached(usage.amount(resource), limit, WARN_AT):
                self._warned.discard(resource)
