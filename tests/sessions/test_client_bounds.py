"""The client against answers that are not replies: HTML pages, runaway replies, whole replies left hanging.

Every test runs a real loopback server (real sockets, chunked bodies) under the autojump clock, so a retry's backoff
or a stall timeout costs no real time.
"""

from __future__ import annotations

import json

import pytest
import trio

from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.errors import ReplyTooLargeError, RetriesExhaustedError, StallTimeoutError, UnexpectedBodyError
from sessions.wire.stream import Completed, StreamEvent
from tests.sessions.fake_deepseek import V4_SSE, sse_lines
from tests.support.client import LoopbackServer, sample_request
from tests.support.wire_replies import assert_v4_stream_reply

CAPTIVE_PORTAL = [
    b"<!DOCTYPE html>\n",
    b"<html><head><title>Hotel Wi-Fi: please log in</title></head>\n",
    b"<body><form action='/login'><input name='room'></form></body></html>\n",
]


def _client(server: LoopbackServer, **settings: object) -> DeepSeekClient:
    return DeepSeekClient(
        base_url=f"http://127.0.0.1:{server.port}/v1",
        api_key="sk-test",
        settings=ClientSettings(backoff_jitter_s=0, **settings),  # type: ignore[arg-type]
    )


def _chunk(delta: dict[str, object], *, finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    chunk = {
        "id": "r1",
        "object": "chat.completion.chunk",
        "model": "deepseek-v4-flash",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "usage": usage,
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


# --------------------------------------------------------------------------------------- not an event stream


@pytest.mark.parametrize("content_type", [b"text/html; charset=utf-8", b"text/event-stream"])
async def test_an_html_page_is_refused_at_once_and_names_the_base_url(
    content_type: bytes, autojump_clock: trio.testing.MockClock
) -> None:
    # A captive portal answers 200 with its login page, whatever it says its content type is.
    server = LoopbackServer(CAPTIVE_PORTAL, content_type=content_type)
    async with server.running(), _client(server) as client:
        with pytest.raises(UnexpectedBodyError) as caught:
            await client.complete(sample_request())
    message = caught.value.message
    assert "not an event stream" in message
    assert f"http://127.0.0.1:{server.port}/v1" in message and "base_url" in message
    assert "Hotel Wi-Fi: please log in" in message  # what the page is, so the user recognises it
    assert "overloaded" not in message
    assert len(server.bodies) == 1, "an HTML page is not retried"


async def test_an_html_page_on_the_json_path_is_refused_and_names_the_base_url(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = LoopbackServer(CAPTIVE_PORTAL, content_type=b"text/html")
    async with server.running(), _client(server) as client:
        with pytest.raises(UnexpectedBodyError) as caught:
            await client.complete(sample_request(stream=False))
    message = caught.value.message
    assert "not JSON" in message and f"http://127.0.0.1:{server.port}/v1" in message and "base_url" in message
    assert len(server.bodies) == 1


async def test_a_stream_with_junk_after_data_is_still_read(autojump_clock: trio.testing.MockClock) -> None:
    # The V3.2 sample has a line of dots in the middle of its data lines: junk after data is not an HTML page.
    lines = sse_lines(V4_SSE)
    server = LoopbackServer([lines[0], lines[1], b"......\n", *lines[2:]])
    async with server.running(), _client(server) as client:
        reply = await client.complete(sample_request())
    assert_v4_stream_reply(reply)


# ------------------------------------------------------------------------------------------------ size caps


async def test_a_runaway_reply_is_abandoned_with_a_typed_error(autojump_clock: trio.testing.MockClock) -> None:
    piece = "la " * 1000
    lines = [_chunk({"role": "assistant", "content": "", "reasoning_content": ""})]
    lines += [_chunk({"content": piece}) for _ in range(200)]  # 600 000 characters, never finished
    server = LoopbackServer(lines, hold_open=True)
    events: list[StreamEvent] = []
    async with server.running(), _client(server, max_reply_chars=100_000) as client:
        with pytest.raises(ReplyTooLargeError) as caught:
            await client.complete(sample_request(), on_event=events.append)
    assert "100,000" in caught.value.message and "max_reply_chars" in caught.value.message
    assert len(server.bodies) == 1, "a runaway reply is not asked for again"
    assert not any(isinstance(e, Completed) for e in events)
    shown = sum(len(getattr(e, "text", "")) for e in events)
    assert shown <= 100_000


async def test_reasoning_and_arguments_count_toward_the_cap(autojump_clock: trio.testing.MockClock) -> None:
    lines = [_chunk({"role": "assistant", "content": None, "reasoning_content": "r" * 600})]
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "write_file", "arguments": ""}}
    lines.append(_chunk({"tool_calls": [call]}))
    lines += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "a" * 300}}]}) for _ in range(2)]
    server = LoopbackServer(lines, hold_open=True)
    async with server.running(), _client(server, max_reply_chars=1_000) as client:
        with pytest.raises(ReplyTooLargeError):
            await client.complete(sample_request())


def test_the_default_cap_is_a_few_megabytes() -> None:
    assert 1_000_000 <= ClientSettings().max_reply_chars <= 16_000_000


async def test_a_reply_at_the_cap_is_accepted(autojump_clock: trio.testing.MockClock) -> None:
    server = LoopbackServer(sse_lines(V4_SSE))
    async with server.running(), _client(server) as client:
        reply = await client.complete(sample_request())
    chars = len(reply.message.reasoning_content or "") + len(reply.message.tool_calls[0].function.arguments)
    server2 = LoopbackServer(sse_lines(V4_SSE))
    async with server2.running(), _client(server2, max_reply_chars=chars) as client:
        assert_v4_stream_reply(await client.complete(sample_request()))


# ------------------------------------------------------------------------------- a whole reply left hanging


async def test_a_whole_reply_without_done_on_an_open_connection_is_kept(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # The final chunk (finish_reason and usage) arrives, then the server neither sends [DONE] nor closes.
    lines = [line for line in sse_lines(V4_SSE) if not line.startswith(b"data: [DONE]")]
    server = LoopbackServer(lines, hold_open=True)
    events: list[StreamEvent] = []
    async with server.running(), _client(server) as client:
        start = trio.current_time()
        reply = await client.complete(sample_request(), on_event=events.append)
        waited = trio.current_time() - start
    assert_v4_stream_reply(reply)
    assert len(server.bodies) == 1, "the whole reply is not asked for again"
    assert waited < client.settings.stall_timeout_s
    assert [type(e).__name__ for e in events].count("StreamRestarted") == 0


async def test_a_finished_reply_without_usage_left_hanging_is_still_a_stall(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Without usage the reply is not known to be whole (the usage chunk may still come): the stall rule holds.
    lines = [_chunk({"role": "assistant", "content": "hi", "reasoning_content": ""}, finish="stop")]
    server = LoopbackServer(lines, hold_open=True)
    async with server.running(), _client(server, max_attempts=1) as client:
        with pytest.raises(RetriesExhaustedError) as caught:
            await client.complete(sample_request())
    assert isinstance(caught.value.last, StallTimeoutError)
