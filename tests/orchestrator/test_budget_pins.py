"""The budget gate's words and edges, as mutation testing (bench/mutation_score.py) found them unpinned: what a
refusal says (the user reads it when the goal pauses), a release counted once, what a resume must pass."""

from __future__ import annotations

import pydantic
import pytest
import trio

from orchestrator.events import BudgetWarning
from orchestrator.policy.budget import (
    OUTPUT_ALLOWANCE_TOKENS,
    WARN_AT,
    Budget,
    BudgetExceeded,
    BudgetReachedError,
    BudgetTracker,
    BudgetUsage,
    describe,
)
from sessions.wire.reply import RequestEstimate


def estimate(prompt_usd: float, *, per_token: float = 1e-6, max_tokens: int | None = 1000) -> RequestEstimate:
    return RequestEstimate(
        session="s",
        model="m",
        prompt_tokens=10,
        prompt_usd=prompt_usd,
        output_usd_per_token=per_token,
        max_output_tokens=max_tokens,
    )


def test_each_resource_is_described_as_the_user_reads_it() -> None:
    assert describe("usd", 0.5234, 0.5) == "spent $0.52 of $0.50 budget"
    assert describe("usd", 0.01234, 0.05) == "spent $0.0123 of $0.0500 budget"
    assert describe("usd", 0.01234, 0.1) == "spent $0.01 of $0.10 budget"
    assert describe("requests", 3, 10) == "made 3 of 10 allowed requests"
    assert describe("minutes", 2.345, 5.0) == "worked 2.3 of 5 minutes"
    assert describe("minutes", 2.345, 2.5) == "worked 2.3 of 2.5 minutes"
    assert WARN_AT == 0.8 and OUTPUT_ALLOWANCE_TOKENS == 8_192


def test_a_refusal_names_every_limit_it_would_pass_and_what_each_needed() -> None:
    tracker = BudgetTracker(Budget(usd=0.05, requests=2, minutes=1))
    first, _second = tracker.admit(estimate(0.01)), tracker.admit(estimate(0.01))
    with pytest.raises(BudgetReachedError) as refused:
        tracker.admit(estimate(0.01))
    assert refused.value.summary == str(refused.value) == "made 0 of 2 allowed requests (2 more in flight)"
    assert refused.value.resource == "requests" and tracker.refused == {"requests": 3}
    first()
    first()  # a release counts once
    tracker.charge(usd=0.011, requests=1)
    with pytest.raises(BudgetReachedError) as both:
        tracker.admit(estimate(0.04, max_tokens=None))
    assert both.value.summary == (
        "made 1 of 2 allowed requests (1 more in flight); spent $0.0110 of $0.0500 budget; "
        "the next request may cost up to $0.0482"
    )
    assert both.value.resource == "requests"
    assert tracker.refused == pytest.approx(
        {"requests": 3, "usd": 0.011 + 0.011 + 0.04 + OUTPUT_ALLOWANCE_TOKENS * 1e-6}
    )
    assert tracker.exhausted() == tracker.refused


def test_a_request_that_fits_exactly_is_admitted_and_its_release_frees_its_bound() -> None:
    tracker = BudgetTracker(Budget(usd=0.02))
    release = tracker.admit(estimate(0.009))  # bound 0.009 + 1000 * 1e-6 = 0.01
    again = tracker.admit(estimate(0.009))  # 0.02: exactly the cap
    with pytest.raises(BudgetReachedError, match="may cost up to"):
        tracker.admit(estimate(0.0))
    release()
    again()
    tracker.admit(estimate(0.019))()  # both released: the whole cap is free again


async def test_time_refuses_once_the_minutes_are_worked(autojump_clock: trio.testing.MockClock) -> None:
    tracker = BudgetTracker(Budget(minutes=1))
    tracker.start()
    await trio.sleep(59)
    tracker.admit(estimate(0.0))()
    await trio.sleep(1)
    with pytest.raises(BudgetReachedError) as refused:
        tracker.admit(estimate(0.0))
    assert refused.value.summary == "worked 1.0 of 1 minutes" and refused.value.resource == "minutes"
    assert tracker.refused == {"minutes": 1.0}
    await trio.sleep(300)
    with pytest.raises(BudgetReachedError) as later:
        tracker.admit(estimate(0.0))
    assert later.value.summary == "worked 6.0 of 1 minutes" and tracker.refused == {"minutes": 6.0}
    tracker.stop()
    assert tracker.usage.seconds == 360 and not tracker.running


def test_exhausted_names_a_reached_limit_with_what_was_used() -> None:
    tracker = BudgetTracker(Budget(usd=0.5, requests=10), already_used=BudgetUsage(usd=0.6, requests=3))
    assert tracker.exhausted() == {"usd": 0.6}
    result = tracker.check()
    assert isinstance(result, BudgetExceeded)
    assert (result.resource, result.used, result.limit, result.summary) == (
        "usd",
        0.6,
        0.5,
        "spent $0.60 of $0.50 budget",
    )
    tracker.raise_limits(Budget(usd=1.0, requests=10))
    assert tracker.exhausted() == {} and tracker.budget == Budget(usd=1.0, requests=10)


def test_a_charge_is_never_negative_and_a_budget_never_zero() -> None:
    tracker = BudgetTracker(Budget())
    with pytest.raises(ValueError) as raised:
        tracker.charge(usd=-0.01)
    assert str(raised.value) == "a charge cannot be negative (usd=-0.01, requests=0)"
    with pytest.raises(ValueError):
        tracker.charge(requests=-1)
    tracker.charge()
    assert tracker.usage == BudgetUsage()
    for bad in ({"usd": 0}, {"requests": 0}, {"minutes": 0}):
        with pytest.raises(pydantic.ValidationError):
            Budget(**bad)  # type: ignore[arg-type]
    assert Budget(requests=3).limit("requests") == 3.0 and Budget().limit("usd") is None
    assert BudgetUsage(seconds=90, usd=0.25, requests=4).amount("minutes") == 1.5
    assert BudgetUsage(seconds=90, usd=0.25, requests=4).amount("usd") == 0.25
    assert BudgetUsage(seconds=90, usd=0.25, requests=4).amount("requests") == 4.0


class Ledger:
    """A shared ledger (a batch's budget) that records what it is asked and charged."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.admitted = 0
        self.released = 0
        self.charged: list[tuple[float, int]] = []
        self.asked: list[RequestEstimate] = []

    def admit(self, estimate: RequestEstimate):  # type: ignore[no-untyped-def]
        self.asked.append(estimate)
        if self.refuse:
            raise BudgetReachedError("the batch's budget is spent", "usd")
        self.admitted += 1

        def release() -> None:
            self.released += 1

        return release

    def charge(self, *, usd: float = 0.0, requests: int = 0) -> None:
        self.charged.append((usd, requests))


def test_a_shared_ledger_is_asked_after_the_goals_own_and_charged_with_it() -> None:
    tracker, ledger = BudgetTracker(Budget(requests=1)), Ledger()
    tracker.share(ledger)
    release = tracker.admit(estimate(0.0))
    assert ledger.admitted == 1 and ledger.asked == [estimate(0.0)]  # the batch bounds the same request
    with pytest.raises(BudgetReachedError):
        tracker.admit(estimate(0.0))  # the goal's own limit refuses first: the ledger is not asked
    assert ledger.admitted == 1
    release()
    release()
    assert ledger.released == 1
    tracker.charge(usd=0.1, requests=1)
    assert ledger.charged == [(0.1, 1)]
    refusing = BudgetTracker(Budget())
    refusing.share(Ledger(refuse=True))
    with pytest.raises(BudgetReachedError, match="batch"):
        refusing.admit(estimate(0.0))
    refusing.share(Ledger())
    refusing.admit(estimate(0.0))  # the refused request held nothing


def test_at_the_request_limit_with_nothing_in_flight_the_refusal_says_only_what_was_made() -> None:
    tracker = BudgetTracker(Budget(requests=2), already_used=BudgetUsage(requests=1))
    tracker.admit(estimate(0.0))()  # the last allowed request
    tracker.charge(requests=1)
    with pytest.raises(BudgetReachedError) as refused:
        tracker.admit(estimate(0.0))
    assert refused.value.summary == "made 2 of 2 allowed requests" and refused.value.resource == "requests"


def test_time_at_the_limit_within_the_float_tolerance_refuses_as_check_says_it_is_reached() -> None:
    edge = BudgetTracker(Budget(minutes=1), already_used=BudgetUsage(seconds=60 * (1 - 1e-9)))
    with pytest.raises(BudgetReachedError) as refused:
        edge.admit(estimate(0.0))
    assert refused.value.summary == "worked 1.0 of 1 minutes"
    assert isinstance(edge.check(), BudgetExceeded)
    under = BudgetTracker(Budget(minutes=1), already_used=BudgetUsage(seconds=59.9))
    under.admit(estimate(0.0))()
    assert under.check() == [BudgetWarning(resource="minutes", used=59.9 / 60, limit=1.0)]


def test_a_resume_must_pass_what_the_refused_request_needed_even_at_a_reached_limit() -> None:
    tracker = BudgetTracker(Budget(requests=2), already_used=BudgetUsage(requests=2))
    assert tracker.exhausted() == {"requests": 2.0}
    with pytest.raises(BudgetReachedError):
        tracker.admit(estimate(0.0))
    assert tracker.exhausted() == {"requests": 3.0}  # the refused request needed a third


def test_a_raised_limit_still_past_80_percent_does_not_warn_again() -> None:
    tracker = BudgetTracker(Budget(usd=1.0))
    tracker.charge(usd=0.85)
    assert tracker.check() == [BudgetWarning(resource="usd", used=0.85, limit=1.0)]
    tracker.raise_limits(Budget(usd=1.05))  # 81 %: warned already
    assert tracker.check() == []
    tracker.raise_limits(Budget(usd=2.0))  # 42.5 %: the warning is armed again
    tracker.charge(usd=0.8)
    assert tracker.check() == [BudgetWarning(resource="usd", used=1.65, limit=2.0)]


def test_a_resumed_budget_keeps_each_limit_the_user_did_not_raise() -> None:
    started = Budget(usd=1.0, requests=50, minutes=30)
    assert Budget(usd=2.0).over(started) == Budget(usd=2.0, requests=50, minutes=30)
    assert Budget(requests=80).over(started) == Budget(usd=1.0, requests=80, minutes=30)
    assert Budget(minutes=45).over(started) == Budget(usd=1.0, requests=50, minutes=45)
    assert Budget().over(started) == started
    assert Budget(usd=0.5, requests=5, minutes=5).over(started) == Budget(usd=0.5, requests=5, minutes=5)
    assert Budget().over(Budget()) == Budget()


def test_a_pause_counts_as_the_warning_but_holds_back_another_resources() -> None:
    tracker = BudgetTracker(Budget(usd=1.0, requests=10))
    tracker.charge(usd=1.0, requests=9)  # usd reached, requests at 90 %: the pause names only what was reached
    result = tracker.check()
    assert isinstance(result, BudgetExceeded) and result.summary == "spent $1.00 of $1.00 budget"
    tracker.raise_limits(Budget(usd=1.1, requests=10))  # usd at 91 %: the pause said it already
    assert tracker.check() == [BudgetWarning(resource="requests", used=9, limit=10)]
