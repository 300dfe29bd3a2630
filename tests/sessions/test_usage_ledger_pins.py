"""The usage ledger's figures, as mutation testing (bench/mutation_score.py) found them unpinned: what each request is
charged and reported as, what an interrupted request is counted as, what a resumed session restores, and what the
budget is told a request may cost at most. Prices here are round (USD per 1M tokens) so every figure is exact."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from sessions.accounting import tokens
from sessions.accounting.prices import FamilyPrice, PriceBook, default_price_book
from sessions.events import DiagnosticsReported, SessionEvent, UsageReported
from sessions.usage_ledger import CacheKey, UsageLedger
from sessions.wire.messages import Usage

PEAK = datetime(2026, 9, 16, 2, 0, tzinfo=UTC)  # a Wednesday, inside the shipped tables' peak window
NOON = datetime(2026, 9, 16, 12, 0, tzinfo=UTC)  # the same day, off-peak (half price)


def book() -> PriceBook:
    """``m`` costs $1 per 1M hit tokens, $2 per 1M misses and $4 per 1M output tokens, at all times."""
    prices = FamilyPrice(hit=Decimal(1), miss=Decimal(2), output=Decimal(4))
    return PriceBook(tables=(), aliases={}).with_overrides({"m": prices})


def ledger(events: list[SessionEvent], *, price_book: PriceBook | None = None, at: datetime = NOON) -> UsageLedger:
    return UsageLedger(session="s1", price_book=price_book or book(), clock=lambda: at, emit=events.append)


def used(prompt: int, hit: int, completion: int) -> Usage:
    return Usage.counted(prompt, hit, completion)


def figures(usage: Usage) -> tuple[int, int, int, int, int]:
    return (
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        usage.prompt_cache_hit_tokens,
        usage.prompt_cache_miss_tokens,
    )


def test_each_request_is_priced_counted_and_reported_once() -> None:
    events: list[SessionEvent] = []
    books = ledger(events)
    assert (books.session, books.requests, books.usage, books.cost_usd) == ("s1", 0, Usage(), 0.0)
    first = books.account(used(1_000_000, 500_000, 250_000), "m", estimated=False, cache=None)
    assert first == pytest.approx(0.5 + 1.0 + 1.0)
    second = books.account(used(0, 0, 500_000), "m", estimated=True, cache=None)
    assert second == pytest.approx(2.0)
    assert books.requests == 2
    assert figures(books.usage) == (1_000_000, 750_000, 1_750_000, 500_000, 500_000)
    assert books.cost_usd == pytest.approx(4.5)
    assert events == [
        UsageReported(
            session="s1",
            model="m",
            usage=used(1_000_000, 500_000, 250_000),
            cost_usd=first,
            session_cost_usd=first,
            estimated=False,
        ),
        UsageReported(
            session="s1",
            model="m",
            usage=used(0, 0, 500_000),
            cost_usd=second,
            session_cost_usd=first + second,
            estimated=True,
        ),
    ]


def test_a_request_is_priced_at_the_time_the_clock_gives() -> None:
    usage = used(1_000_000, 0, 0)  # 1M misses on flash: $0.30 at peak, half off-peak
    at_peak = ledger([], price_book=default_price_book(), at=PEAK)
    at_noon = ledger([], price_book=default_price_book(), at=NOON)
    assert at_peak.account(usage, "deepseek-chat", estimated=False, cache=None) == pytest.approx(0.30)
    assert at_noon.account(usage, "deepseek-chat", estimated=False, cache=None) == pytest.approx(0.15)
    assert at_noon.estimate("deepseek-chat", 1_000_000, None).prompt_usd == pytest.approx(0.15)


def test_a_request_without_figures_is_one_estimated_request_and_no_cache_diagnostics() -> None:
    events: list[SessionEvent] = []
    books = ledger(events)
    key = CacheKey(fingerprint="f", epoch=0, rewrite_reason=None)
    assert books.account(None, "m", estimated=False, cache=key) == 0.0
    assert books.requests == 1 and figures(books.usage) == (0, 0, 0, 0, 0)
    assert events == [
        UsageReported(session="s1", model="m", usage=Usage(), cost_usd=0.0, session_cost_usd=0.0, estimated=True)
    ]
    # An estimate of our own never feeds the cache diagnostics either.
    books.account(used(300, 0, 10), "m", estimated=True, cache=key)
    assert [e.kind for e in events] == ["usage", "usage"]
    assert books.tracker.requests == 0


def test_a_conversation_request_reports_its_cache_diagnostics() -> None:
    events: list[SessionEvent] = []
    books = ledger(events)
    books.account(used(100, 0, 1), "m", estimated=False, cache=None)  # a side request: no diagnostics
    books.account(used(300, 0, 5), "m", estimated=False, cache=CacheKey("f", 0, None))
    books.account(used(400, 256, 7), "m", estimated=False, cache=CacheKey("f", 2, "digest"))
    cache = [e for e in events if isinstance(e, DiagnosticsReported)]
    assert [e.kind for e in events] == ["usage", "usage", "cache", "usage", "cache"]
    assert [e.session for e in cache] == ["s1", "s1"]
    first, second = (e.diagnostics for e in cache)
    assert (first.request_index, first.model, first.prefix_fingerprint, first.log_epoch) == (2, "m", "f", 0)
    assert (first.prompt_tokens, first.hit_tokens, first.completion_tokens) == (300, 0, 5)
    assert (second.request_index, second.log_epoch, second.change_reason) == (3, 2, "log rewritten: digest")
    assert (second.prompt_tokens, second.hit_tokens) == (400, 256)


def test_an_interrupted_request_counts_its_input_and_what_streamed() -> None:
    books = ledger([])
    books.account(used(300, 0, 5), "m", estimated=False, cache=CacheKey("f", 0, None))  # leaves 256 cached
    key = CacheKey("f", 0, None)
    streamed = "Half an answer, cut off"
    out = tokens.count(streamed)
    assert out > 0
    assert books.interrupted_usage("m", key, b"ignored", 1000, streamed) == Usage(
        prompt_tokens=1000,
        completion_tokens=out,
        total_tokens=1000 + out,
        prompt_cache_hit_tokens=256,
        prompt_cache_miss_tokens=744,
    )
    # Never more hit than the request had input; nothing streamed is no output.
    assert books.interrupted_usage("m", key, b"", 100, "") == used(100, 100, 0)
    # Another prefix, epoch or model expects nothing cached.
    assert books.interrupted_usage("m", CacheKey("g", 0, None), b"", 1000, "").prompt_cache_hit_tokens == 0
    assert books.interrupted_usage("m", CacheKey("f", 1, None), b"", 1000, "").prompt_cache_hit_tokens == 0
    assert books.interrupted_usage("other", key, b"", 1000, "").prompt_cache_hit_tokens == 0
    # The ledger's own figures do not move: the caller accounts the usage it returns.
    assert books.requests == 1


def test_an_interrupted_request_without_a_context_estimate_counts_its_body() -> None:
    books = ledger([])
    key = CacheKey("f", 0, None)
    body = b'{"messages": [{"role": "user", "content": "caf\xc3\xa9 \xff broken byte"}]}'
    expected = tokens.count(body.decode("utf-8", "replace"))
    assert expected != len(body) // 4
    assert books.interrupted_usage("m", key, body, None, "") == used(expected, 0, 0)
    # A body of 2 MB or more is not tokenised: a quarter of its bytes.
    big = b"ab" * 1_000_000
    assert tokens.count(big.decode()) != len(big) // 4
    assert books.interrupted_usage("m", key, big, None, "").prompt_tokens == 500_000
    assert books.interrupted_usage("m", key, big + b"abc", None, "").prompt_tokens == 500_000


def test_a_resumed_session_restores_requests_usage_cost_and_cache_numbering() -> None:
    events: list[SessionEvent] = []
    before = ledger(events)
    before.account(used(300, 0, 5), "m", estimated=False, cache=CacheKey("f", 0, None))
    before.account(None, "m", estimated=False, cache=None)
    before.account(used(400, 256, 7), "m", estimated=False, cache=CacheKey("f", 0, None))
    journal = [e.model_dump(mode="json") for e in events]
    journal.insert(1, {"kind": "turn_finished", "session": "s1"})  # other events count for nothing
    resumed: list[SessionEvent] = []
    after = ledger(resumed)
    after.restore(journal)
    assert (after.requests, figures(after.usage)) == (3, (700, 12, 712, 256, 444))
    assert after.cost_usd == pytest.approx(before.cost_usd) and after.cost_usd > 0
    assert after.tracker.requests == 3 and after.tracker.hit_ratio == pytest.approx(256 / 700)
    after.account(used(500, 0, 1), "m", estimated=False, cache=CacheKey("f", 0, None))
    last = resumed[-1]
    assert isinstance(last, DiagnosticsReported) and last.diagnostics.request_index == 4
    assert last.diagnostics.change_reason is not None and "resumed" in last.diagnostics.change_reason
    usage_event = resumed[0]
    assert isinstance(usage_event, UsageReported)
    assert usage_event.session_cost_usd == pytest.approx(before.cost_usd + usage_event.cost_usd)


def test_the_estimate_before_a_request_prices_its_input_as_misses() -> None:
    books = ledger([])
    estimate = books.estimate("m", 500_000, 2048)
    assert (estimate.session, estimate.model, estimate.prompt_tokens) == ("s1", "m", 500_000)
    assert estimate.prompt_usd == pytest.approx(1.0)  # $2 per 1M misses, never the $1 of a hit
    assert estimate.output_usd_per_token == 4 / 1_000_000  # exact: the unit price, per token
    assert estimate.max_output_tokens == 2048
    assert books.estimate("m", 10, None).max_output_tokens is None
    assert books.requests == 0 and books.cost_usd == 0.0
