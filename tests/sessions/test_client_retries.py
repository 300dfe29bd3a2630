"""Retries, backoff, stall, deadline and cancellation, on the Trio clock (autojump makes the waits instant)."""

import itertools
import random

import httpx
import pytest
import trio
import trio.testing

from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.errors import (
    DeadlineExceededError,
    OverloadedError,
    ProtocolError,
    RateLimitError,
    RetriesExhaustedError,
    ServerError,
    StallTimeoutError,
    StreamBrokenError,
)
from sessions.wire.stream import (
    Completed,
    ContentDelta,
    KeepAlive,
    ReasoningDelta,
    StreamEvent,
    StreamRestarted,
    assemble_sse,
)
from tests.sessions.fake_deepseek import HANG, V4_SSE, FakeDeepSeek, error, fails, sse, sse_lines
from tests.support.client import sample_request
from tests.support.wire_replies import assert_v4_stream_reply

LINES = sse_lines(V4_SSE)
DATA_LINES = [line for line in LINES if line.strip()]  # no blank separators: they are not data
EXPECTED_EVENTS, EXPECTED_REPLY = assemble_sse(V4_SSE.read_bytes())
KEEP = b": keep-alive\n\n"


def client(fake: FakeDeepSeek, **settings: object) -> DeepSeekClient:
    base: dict[str, object] = {"backoff_jitter_s": 0.0}
    return DeepSeekClient(
        base_url="https://api.deepseek.test",
        api_key="sk-test",
        settings=ClientSettings.model_validate(base | settings),
        transport=fake.transport,
        rng=random.Random(7),
    )


async def collect(c: DeepSeekClient) -> list[StreamEvent]:
    async with c.stream(sample_request()) as events:
        return [e async for e in events]


async def test_429_twice_then_success_waits_as_configured(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(
        error(429, "Rate Limit Reached", retry_after="7"),  # honoured exactly
        error(429, "Rate Limit Reached"),  # no Retry-After: exponential backoff, 1.5 * 2**1
        sse(*LINES),
    )
    start = trio.current_time()
    async with client(fake, backoff_initial_s=1.5) as c:
        events = await collect(c)
    assert [round(s.at - start, 6) for s in fake.seen] == [0, 7, 10]
    assert trio.current_time() - start == pytest.approx(10)
    completed = [e for e in events if isinstance(e, Completed)]
    assert completed == [Completed(reply=EXPECTED_REPLY)]
    restarts = [e for e in events if isinstance(e, StreamRestarted)]
    assert [(r.attempt, r.discarded_events) for r in restarts] == [(2, 0), (3, 0)]
    assert "429" in restarts[0].reason and "wait 7s" in restarts[0].reason
    assert fake.seen[0].body == fake.seen[1].body == fake.seen[2].body  # the identical request each time


async def test_a_huge_retry_after_is_capped(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(error(429, "Rate Limit Reached", retry_after="86400"), sse(*LINES))
    start = trio.current_time()
    async with client(fake, retry_after_max_s=60) as c:
        await collect(c)
    assert [round(s.at - start, 6) for s in fake.seen] == [0, 60]


async def test_backoff_is_exponential_capped_and_jittered(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(*(error(503, "Server overloaded") for _ in range(4)), sse(*LINES))
    start = trio.current_time()
    async with client(fake, max_attempts=5, backoff_initial_s=2, backoff_max_s=5, backoff_jitter_s=0.5) as c:
        reply = await c.complete(sample_request())
    assert_v4_stream_reply(reply)
    times = [s.at - start for s in fake.seen]
    waits = [b - a for a, b in itertools.pairwise(times)]
    for wait, base in zip(waits, [2, 4, 5, 5], strict=True):
        assert base <= wait <= base + 0.5
    assert len(set(waits)) > 1


async def test_retries_exhausted_wraps_the_last_error(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(error(500, "boom 1"), error(503, "busy"), error(500, "boom 3"))
    async with client(fake, max_attempts=3, backoff_initial_s=1) as c:
        with pytest.raises(RetriesExhaustedError, match="gave up after 3 attempts") as info:
            await c.complete(sample_request())
    assert isinstance(info.value.last, ServerError) and info.value.last.server_message == "boom 3"
    assert info.value.attempts == 3 and info.value.status == 500
    assert isinstance(info.value.__cause__, ServerError)


async def test_connection_failure_is_retried(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(fails(httpx.ConnectError("connection refused")), sse(*LINES))
    async with client(fake) as c:
        reply = await c.complete(sample_request())
    assert reply == EXPECTED_REPLY
    assert len(fake.seen) == 2


@pytest.mark.parametrize(
    "cut",
    [httpx.ReadError("connection reset by peer"), httpx.RemoteProtocolError("peer closed connection"), None],
    ids=["read-error", "remote-protocol-error", "clean-eof-without-finish"],
)
async def test_stream_cut_midway_is_retried_without_a_half_reply(
    autojump_clock: trio.testing.MockClock, cut: BaseException | None
) -> None:
    half = LINES[: len(LINES) // 2]
    fake = FakeDeepSeek(sse(*half, *([cut] if cut else [])), sse(*LINES))
    async with client(fake) as c:
        events = await collect(c)
    restart_at = next(i for i, e in enumerate(events) if isinstance(e, StreamRestarted))
    before, restart, after = events[:restart_at], events[restart_at], events[restart_at + 1 :]
    assert isinstance(restart, StreamRestarted)
    assert restart.attempt == 2 and restart.discarded_events == len(before) > 0
    assert not any(isinstance(e, Completed) for e in before)  # the half reply never surfaced as complete
    assert after == EXPECTED_EVENTS  # the retry is shown whole, once
    assert [e for e in events if isinstance(e, Completed)] == [Completed(reply=EXPECTED_REPLY)]
    assert all(b.closed for b in fake.bodies)


async def test_a_reply_cut_short_for_lack_of_capacity_is_retried_and_discarded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """finish_reason insufficient_system_resource: DeepSeek stopped early. The partial reply never surfaces."""
    short = [
        line.replace(b'"finish_reason":"tool_calls"', b'"finish_reason":"insufficient_system_resource"')
        for line in LINES
    ]
    assert short != LINES
    fake = FakeDeepSeek(sse(*short), sse(*LINES))
    async with client(fake) as c:
        events = await collect(c)
    restarts = [e for e in events if isinstance(e, StreamRestarted)]
    assert len(restarts) == 1 and "lack of server capacity" in restarts[0].reason
    assert [e for e in events if isinstance(e, Completed)] == [Completed(reply=EXPECTED_REPLY)]
    assert fake.seen[0].body == fake.seen[1].body


async def test_complete_returns_only_the_whole_reply_after_a_cut(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(
        sse(*LINES[:10], httpx.ReadError("reset")), sse(*LINES[:20], httpx.ReadError("reset")), sse(*LINES)
    )
    seen: list[StreamEvent] = []
    async with client(fake) as c:
        reply = await c.complete(sample_request(), on_event=seen.append)
    assert reply == EXPECTED_REPLY
    assert sum(isinstance(e, StreamRestarted) for e in seen) == 2


async def test_stall_after_the_configured_time(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(*LINES[:6], HANG))
    async with client(fake, stall_timeout_s=45, max_attempts=1) as c:
        start = trio.current_time()
        with pytest.raises(RetriesExhaustedError) as info:
            await c.complete(sample_request())
    assert isinstance(info.value.last, StallTimeoutError)
    assert "45s" in str(info.value)
    assert trio.current_time() - start == pytest.approx(45)
    assert fake.bodies[0].closed


async def test_keep_alives_alone_do_not_reset_the_stall_timer(autojump_clock: trio.testing.MockClock) -> None:
    floods = [part for _ in range(100) for part in (10, KEEP)]  # a keep-alive every 10 s, for 1000 s
    fake = FakeDeepSeek(sse(*LINES[:4], *floods), sse(*LINES))
    events: list[StreamEvent] = []
    async with client(fake, stall_timeout_s=35, backoff_initial_s=1) as c:
        start = trio.current_time()
        reply = await c.complete(sample_request(), on_event=events.append)
    assert reply == EXPECTED_REPLY
    # The first attempt stalled 35 s after its last data line despite three keep-alives; then 1 s backoff.
    assert fake.seen[1].at - start == pytest.approx(36)
    assert sum(isinstance(e, KeepAlive) for e in events) == 3
    restart = next(e for e in events if isinstance(e, StreamRestarted))
    assert "no data from DeepSeek for 35s" in restart.reason


async def test_real_data_resets_the_stall_timer(autojump_clock: trio.testing.MockClock) -> None:
    slow = [part for line in DATA_LINES for part in (15, line)]  # a line every 15 s: 465 s in all, stall 20 s
    fake = FakeDeepSeek(sse(*slow))
    async with client(fake, stall_timeout_s=20) as c:
        reply = await c.complete(sample_request())
    assert reply == EXPECTED_REPLY and len(fake.seen) == 1


async def test_a_slow_caller_is_not_a_stall(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(*LINES))
    async with client(fake, stall_timeout_s=5, deadline_s=100) as c, c.stream(sample_request()) as events:
        async for event in events:
            if isinstance(event, ReasoningDelta):
                await trio.sleep(60)  # a renderer that takes its time: 15 × 60 s, neither stall nor deadline
            if isinstance(event, Completed):
                assert event.reply == EXPECTED_REPLY
    assert len(fake.seen) == 1


async def test_deadline_is_not_retried(autojump_clock: trio.testing.MockClock) -> None:
    trickle = [part for _ in range(1000) for part in (10, DATA_LINES[1])]  # data every 10 s, never finishing
    fake = FakeDeepSeek(sse(DATA_LINES[0], *trickle))
    async with client(fake, deadline_s=95, stall_timeout_s=30) as c:
        start = trio.current_time()
        with pytest.raises(DeadlineExceededError, match="deadline of 95s"):
            await c.complete(sample_request())
    assert trio.current_time() - start == pytest.approx(95)
    assert len(fake.seen) == 1 and fake.bodies[0].closed


async def test_protocol_errors_are_not_retried(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(LINES[0], b"data: {this is not json\n\n"))
    async with client(fake) as c:
        with pytest.raises(ProtocolError):
            await c.complete(sample_request())
    assert len(fake.seen) == 1 and fake.bodies[0].closed


async def test_error_status_inside_retries_keeps_status_and_retry_after(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(error(503, "Server overloaded", retry_after="2"))
    async with client(fake, max_attempts=1) as c:
        with pytest.raises(RetriesExhaustedError) as info:
            await c.complete(sample_request())
    last = info.value.last
    assert isinstance(last, OverloadedError) and last.status == 503 and last.retry_after == 2.0


async def test_breaking_out_early_closes_the_stream(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(*LINES[:3], HANG), sse(*LINES))
    async with client(fake) as c:
        async with c.stream(sample_request()) as events:
            async for event in events:
                assert isinstance(event, ReasoningDelta)
                break  # e.g. escalation aborting a flash stream
        assert fake.bodies[0].closed
        # The client stays usable.
        assert await c.complete(sample_request()) == EXPECTED_REPLY


async def test_cancellation_closes_the_stream(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(*LINES[:3], HANG))
    got: list[StreamEvent] = []
    async with client(fake) as c:
        with trio.move_on_after(5) as scope:
            await c.complete(sample_request(), on_event=got.append)
    assert scope.cancelled_caught
    assert fake.bodies[0].closed
    assert got and not any(isinstance(e, Completed) for e in got)


async def test_an_exception_in_the_callers_block_comes_out_unwrapped(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(*LINES))
    async with client(fake) as c:
        with pytest.raises(KeyError, match="mine"):
            async with c.stream(sample_request()) as events:
                async for _ in events:
                    raise KeyError("mine")
    assert fake.bodies[0].closed


async def test_a_crash_in_the_reader_surfaces_as_itself(autojump_clock: trio.testing.MockClock) -> None:
    fake = FakeDeepSeek(sse(*LINES[:4], HANG))
    async with client(fake, stall_timeout_s=5) as c:
        with pytest.raises(AssertionError, match="script is exhausted"):  # the fake's own failure, not a masked one
            await c.complete(sample_request())


async def test_rate_limit_error_is_retryable_and_typed() -> None:
    err = RateLimitError("x", status=429, retry_after=1.0)
    assert err.retryable and not StallTimeoutError("x").status
    assert StreamBrokenError("x").retryable and not DeadlineExceededError("x").retryable


async def test_content_only_stream(autojump_clock: trio.testing.MockClock) -> None:
    body = (
        b'data: {"id":"x","model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"role":"assistant",'
        b'"content":"Hel"}}]}\n\n'
        b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}],'
        b'"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_cache_hit_tokens":0,'
        b'"prompt_cache_miss_tokens":10}}\n\n'
    )  # no [DONE]: a finish reason makes the reply whole
    fake = FakeDeepSeek(sse(body))
    async with client(fake) as c:
        events = await collect(c)
    assert [e for e in events if isinstance(e, ContentDelta)] == [ContentDelta(text="Hel"), ContentDelta(text="lo")]
    last = events[-1]
    assert isinstance(last, Completed) and last.reply.message.content == "Hello"
    assert last.reply.finish_reason == "stop" and last.reply.usage is not None
