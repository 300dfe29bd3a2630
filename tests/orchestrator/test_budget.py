"""Budgets: warnings at 80 %, a pause at 100 %, wall time only while working, resume with a raised budget."""

from __future__ import annotations

from collections.abc import Callable

import pydantic
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.events import BudgetWarning
from orchestrator.goal.outcome import resume_command
from orchestrator.policy.budget import (
    OUTPUT_ALLOWANCE_TOKENS,
    Budget,
    BudgetExceeded,
    BudgetReachedError,
    BudgetTracker,
    BudgetUsage,
)
from sessions.wire.reply import RequestEstimate


def warned(result: list[BudgetWarning] | BudgetExceeded) -> tuple[str, float, float]:
    """The single warning in a check result, as (resource, used, limit)."""
    assert isinstance(result, list) and len(result) == 1, result
    return result[0].resource, round(result[0].used, 6), result[0].limit


def test_unlimited_budget_never_warns_or_pauses() -> None:
    tracker = BudgetTracker(Budget())
    tracker.charge(usd=1000.0, requests=10_000)
    assert tracker.check() == []


def test_usd_warns_once_at_80_percent_then_pauses_at_100() -> None:
    tracker = BudgetTracker(Budget(usd=0.50))
    tracker.charge(usd=0.39, requests=1)
    assert tracker.check() == []
    tracker.charge(usd=0.02, requests=1)
    assert warned(tracker.check()) == ("usd", 0.41, 0.5)
    tracker.charge(usd=0.05, requests=1)
    assert tracker.check() == [], "the warning is emitted once"
    tracker.charge(usd=0.06, requests=1)
    verdict = tracker.check()
    assert isinstance(verdict, BudgetExceeded)
    assert verdict.resource == "usd"
    assert verdict.limit == 0.5
    assert verdict.summary == "spent $0.52 of $0.50 budget"


def test_requests_limit_is_reached_at_exactly_the_limit() -> None:
    tracker = BudgetTracker(Budget(requests=10))
    tracker.charge(requests=8)
    assert tracker.check() == [BudgetWarning(resource="requests", used=8, limit=10)]
    tracker.charge(requests=2)
    verdict = tracker.check()
    assert isinstance(verdict, BudgetExceeded)
    assert verdict.summary == "made 10 of 10 allowed requests"


def test_float_sums_that_reach_the_limit_count_as_reached() -> None:
    tracker = BudgetTracker(Budget(usd=0.3))
    for _ in range(3):
        tracker.charge(usd=0.1)  # 0.30000000000000004 or 0.29999999999999993 depending on order
    assert isinstance(tracker.check(), BudgetExceeded)


def test_each_resource_warns_separately_and_all_reached_limits_are_summarised() -> None:
    tracker = BudgetTracker(Budget(usd=1.0, requests=10))
    tracker.charge(usd=0.85, requests=1)
    assert warned(tracker.check())[0] == "usd"
    tracker.charge(requests=8)
    assert warned(tracker.check())[0] == "requests"
    tracker.charge(usd=0.2, requests=1)
    verdict = tracker.check()
    assert isinstance(verdict, BudgetExceeded)
    assert verdict.resource == "usd"
    assert verdict.summary == "spent $1.05 of $1.00 budget; made 10 of 10 allowed requests"


def test_small_budgets_show_enough_digits() -> None:
    tracker = BudgetTracker(Budget(usd=0.005))
    tracker.charge(usd=0.0052)
    verdict = tracker.check()
    assert isinstance(verdict, BudgetExceeded)
    assert verdict.summary == "spent $0.0052 of $0.0050 budget"


async def test_minutes_count_only_while_working(autojump_clock: trio.testing.MockClock) -> None:
    tracker = BudgetTracker(Budget(minutes=10))
    tracker.start()
    await trio.sleep(7 * 60)
    assert tracker.check() == []
    tracker.stop()
    await trio.sleep(60 * 60)  # paused: idle time is free
    assert tracker.usage.seconds == pytest.approx(7 * 60)
    tracker.start()
    tracker.start()  # idempotent
    await trio.sleep(60 + 30)
    assert warned(tracker.check()) == ("minutes", 8.5, 10)
    await trio.sleep(90)
    verdict = tracker.check()
    assert isinstance(verdict, BudgetExceeded)
    assert verdict.resource == "minutes"
    assert verdict.summary == "worked 10.0 of 10 minutes"
    tracker.stop()
    tracker.stop()  # idempotent
    assert tracker.usage.seconds == pytest.approx(600)


async def test_pause_then_resume_with_raised_budget(autojump_clock: trio.testing.MockClock) -> None:
    tracker = BudgetTracker(Budget(usd=0.50, minutes=60))
    tracker.start()
    await trio.sleep(120)
    tracker.charge(usd=0.52, requests=12)
    verdict = tracker.check()
    assert isinstance(verdict, BudgetExceeded)
    tracker.stop()
    saved = tracker.usage.model_dump_json()

    # A new process: the journal gives back the usage, the user raises the dollar budget.
    resumed = BudgetTracker(Budget(usd=0.50, minutes=60), already_used=BudgetUsage.model_validate_json(saved))
    assert isinstance(resumed.check(), BudgetExceeded)
    resumed.raise_limits(Budget(usd=1.00, minutes=60))
    assert resumed.check() == []
    resumed.start()
    await trio.sleep(60)
    resumed.charge(usd=0.30, requests=3)
    assert warned(resumed.check()) == ("usd", 0.82, 1.0)
    usage = resumed.usage
    assert (round(usage.usd, 6), usage.requests, round(usage.seconds, 6)) == (0.82, 15, 180)


def test_raising_the_limit_rearms_the_warning() -> None:
    tracker = BudgetTracker(Budget(requests=10))
    tracker.charge(requests=9)
    assert warned(tracker.check()) == ("requests", 9, 10)
    tracker.raise_limits(Budget(requests=100))
    tracker.charge(requests=71)
    assert tracker.check() == [BudgetWarning(resource="requests", used=80, limit=100)]


def test_a_warning_held_back_by_a_pause_comes_after_the_raise() -> None:
    tracker = BudgetTracker(Budget(usd=1.0, requests=10))
    tracker.charge(usd=1.5, requests=9)
    assert isinstance(tracker.check(), BudgetExceeded)
    tracker.raise_limits(Budget(usd=5.0, requests=10))
    assert tracker.check() == [BudgetWarning(resource="requests", used=9, limit=10)]


def test_invalid_budgets_and_charges_are_refused() -> None:
    with pytest.raises(pydantic.ValidationError):
        Budget(usd=0)
    with pytest.raises(pydantic.ValidationError):
        Budget(requests=-1)
    with pytest.raises(ValueError, match="negative"):
        BudgetTracker(Budget()).charge(usd=-0.1)


@given(charges=st.lists(st.floats(min_value=0, max_value=0.2, allow_nan=False), max_size=60))
def test_warning_once_and_exceeded_iff_limit_reached(charges: list[float]) -> None:
    tracker = BudgetTracker(Budget(usd=1.0))
    warnings = 0
    total = 0.0
    for amount in charges:
        tracker.charge(usd=amount)
        total += amount
        verdict = tracker.check()
        if isinstance(verdict, BudgetExceeded):
            assert total >= 1.0 - 1e-6
            return
        assert total < 1.0 + 1e-6
        warnings += len(verdict)
    if total >= 0.8 + 1e-6:
        assert warnings == 1
    elif total < 0.8 - 1e-6:
        assert warnings == 0
    else:
        assert warnings <= 1


# ------------------------------------------------------------------------------------------------ the gate


def _estimate(prompt_usd: float = 0.001, max_tokens: int | None = None) -> RequestEstimate:
    return RequestEstimate(
        session="executor",
        model="deepseek-v4-flash",
        prompt_tokens=1000,
        prompt_usd=prompt_usd,
        output_usd_per_token=1e-6,
        max_output_tokens=max_tokens,
    )


def test_the_gate_counts_requests_in_flight_so_concurrent_branches_never_pass_the_request_cap() -> None:
    tracker = BudgetTracker(Budget(requests=3))
    tracker.charge(requests=1)
    first, second = tracker.admit(_estimate()), tracker.admit(_estimate())  # two branches at once
    with pytest.raises(BudgetReachedError) as refused:
        tracker.admit(_estimate())
    assert refused.value.resource == "requests" and "2 more in flight" in refused.value.summary
    first()
    first()  # a release is counted once
    tracker.charge(requests=1)  # its usage arrives with the release
    with pytest.raises(BudgetReachedError):
        tracker.admit(_estimate())
    second()
    assert "--max-requests 6" in resume_command("r1", budget=tracker)


def test_the_gate_refuses_a_request_whose_upper_bound_would_pass_the_dollar_cap() -> None:
    tracker = BudgetTracker(Budget(usd=0.05))
    tracker.charge(usd=0.035, requests=1)
    bound = _estimate().bound_usd(OUTPUT_ALLOWANCE_TOKENS)
    assert bound == pytest.approx(0.001 + OUTPUT_ALLOWANCE_TOKENS * 1e-6)
    release = tracker.admit(_estimate())  # 0.035 + 0.0092 fits
    with pytest.raises(BudgetReachedError) as refused:
        tracker.admit(_estimate())  # 0.035 + 0.0092 in flight + 0.0092 does not
    assert refused.value.resource == "usd"
    assert refused.value.summary == "spent $0.0350 of $0.0500 budget; the next request may cost up to $0.0092"
    assert "--budget-usd 0.10" in resume_command("r1", budget=tracker)
    release()
    with pytest.raises(BudgetReachedError):
        tracker.admit(_estimate(max_tokens=393_216))  # a retry of a cut reply may produce far more
    assert "--budget-usd 0.64" in resume_command("r1", budget=tracker)  # enough for the request refused
    tracker.admit(_estimate())()
    tracker.raise_limits(Budget(usd=1.0))
    tracker.admit(_estimate(max_tokens=393_216))()


@given(st.lists(st.tuples(st.booleans(), st.floats(0, 0.01)), max_size=60))
def test_whatever_the_order_admitted_bounds_never_pass_the_cap(steps: list[tuple[bool, float]]) -> None:
    """Admissions and releases in any order: what was charged plus the bounds in flight stays within the cap."""
    tracker = BudgetTracker(Budget(usd=0.05, requests=10))
    bound = _estimate().bound_usd(OUTPUT_ALLOWANCE_TOKENS)
    open_: list[Callable[[], None]] = []
    for admit, cost in steps:
        if admit:
            try:
                open_.append(tracker.admit(_estimate()))
            except BudgetReachedError:
                continue
        elif open_:
            tracker.charge(usd=min(cost, bound), requests=1)
            open_.pop(0)()
        usage = tracker.usage
        assert usage.usd + bound * len(open_) <= 0.05 + 1e-12
        assert usage.requests + len(open_) <= 10
