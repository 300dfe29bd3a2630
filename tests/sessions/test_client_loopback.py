"""The client against a real loopback HTTP server: real sockets, real chunked SSE, a real connection to close."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial

import trio

from sessions.wire.client import DeepSeekClient
from sessions.wire.stream import Completed, ReasoningDelta
from tests.sessions.fake_deepseek import V4_SSE, sse_lines
from tests.sessions.test_client import request
from tests.sessions.test_stream import assert_v4_stream_reply


@dataclass
class LoopbackServer:
    """Answers every request with the given lines (chunked), then optionally holds the connection open."""

    lines: list[bytes]
    hold_open: bool = False
    content_type: bytes = b"text/event-stream"
    port: int = 0
    bodies: list[bytes] = field(default_factory=list)
    client_closed: trio.Event = field(default_factory=trio.Event)
    connections: int = 0

    async def handle(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        try:
            buffer = b""
            while True:  # one request after another on the same connection (HTTP/1.1 keep-alive)
                while b"\r\n\r\n" not in buffer:
                    data = await stream.receive_some(65536)
                    if not data:
                        return  # the client hung up: that is what a clean close looks like from here
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(buffer) < length:
                    buffer += await stream.receive_some(65536)
                self.bodies.append(buffer[:length])
                buffer = buffer[length:]
                await stream.send_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ntransfer-encoding: chunked\r\n\r\n" % self.content_type
                )
                for line in self.lines:
                    await stream.send_all(b"%x\r\n%s\r\n" % (len(line), line))
                if self.hold_open:
                    while await stream.receive_some(65536):
                        pass
                    return
                await stream.send_all(b"0\r\n\r\n")
        except trio.BrokenResourceError:
            return
        finally:
            self.client_closed.set()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[LoopbackServer]:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, self.handle, 0, host="127.0.0.1"))
            self.port = listeners[0].socket.getsockname()[1]
            yield self
            nursery.cancel_scope.cancel()


async def test_a_whole_stream_over_a_real_socket() -> None:
    server = LoopbackServer(sse_lines(V4_SSE))
    with trio.fail_after(20):
        async with server.running():
            async with DeepSeekClient(base_url=f"http://127.0.0.1:{server.port}", api_key="sk-test") as client:
                reply = await client.complete(request())
                again = await client.complete(request())
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
            async with client.stream(request()) as events:
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
                nursery.start_soon(lambda: client.complete(request(), on_event=on_event))
                await first_event.wait()
                nursery.cancel_scope.cancel()
            await server.client_closed.wait()
    assert seen and not any(isinstance(e, Completed) for e in seen)
