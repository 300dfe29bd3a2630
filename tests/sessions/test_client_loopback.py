"""The client against a real loopback HTTP server: real sockets, real chunked SSE, a real connection to close."""

from __future__ import annotations

import trio

from sessions.wire.client import DeepSeekClient
from sessions.wire.stream import Completed, ReasoningDelta
from tests.sessions.fake_deepseek import V4_SSE, sse_lines
from tests.support.client import LoopbackServer, sample_request
from tests.support.wire_replies import assert_v4_stream_reply


async def test_a_whole_stream_over_a_real_socket() -> None:
    server = LoopbackServer(sse_lines(V4_SSE))
    with trio.fail_after(20):
        async with server.running():
            async with DeepSeekClient(base_url=f"http://127.0.0.1:{server.port}", api_key="sk-test") as client:
                reply = await client.complete(sample_request())
                again = await client.complete(sample_request())
            await server.client_closed.wait()  # closing the client closes its pooled connection
    assert_v4_stream_reply(reply)
    assert again == reply
    assert server.bodies == [server.bodies[0]] * 2
    assert server.bodies[0].startswith(b'{"model":"deepseek-v4-flash","stream":true')
    assert server.connections == 1  # the body was read to its end after [DONE], so the connection was reused


async def test_breaking_out_early_closes_the_real_connection() -> None:
    server = LoopbackServer(sse_lines(V4_SSE)[:8], hold_open=True)  # the server never finishes this reply
    base_url = "http://127.0.0.1:{}"
    with trio.fail_after(20):
        async with server.running(), DeepSeekClient(base_url=base_url.format(server.port), api_key="k") as client:
            async with client.stream(sample_request()) as events:
                async for event in events:
                    assert isinstance(event, ReasoningDelta)
                    break
            # The client is still open, yet the half-read response's connection is gone.
            await server.client_closed.wait()


async def test_cancellation_closes_the_real_connection() -> None:
    server = LoopbackServer(sse_lines(V4_SSE)[:8], hold_open=True)
    seen: list[object] = []
    first_event = trio.Event()

    def on_event(event: object) -> None:
        seen.append(event)
        first_event.set()

    base_url = "http://127.0.0.1:{}"
    with trio.fail_after(20):
        async with server.running(), DeepSeekClient(base_url=base_url.format(server.port), api_key="k") as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: client.complete(sample_request(), on_event=on_event))
                await first_event.wait()
                nursery.cancel_scope.cancel()
            await server.client_closed.wait()
    assert seen and not any(isinstance(e, Completed) for e in seen)
