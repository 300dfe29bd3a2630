"""The client's side of the wire tests: the request the recorded samples answer, a real loopback HTTP server that
plays given lines, and the emulator's streams read through the client or as raw bytes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial

import httpx
import trio

from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.messages import ChatRequest, FunctionSchema, SystemMessage, ToolSchema, UserMessage
from sessions.wire.stream import StreamEvent

WEATHER = ToolSchema(
    function=FunctionSchema(
        name="weather",
        description="Weather at a place.",
        parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    )
)


def sample_request(*, stream: bool = True, **kw: object) -> ChatRequest:
    return ChatRequest.model_validate(
        {
            "model": "deepseek-v4-flash",
            "messages": (SystemMessage(content="Be terse."), UserMessage(content="Weather in SF?")),
            "tools": (WEATHER,),
            "stream": stream,
            **kw,
        }
    )


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


FAST = ClientSettings(backoff_initial_s=0.5, backoff_max_s=2, backoff_jitter_s=0, max_attempts=4, stall_timeout_s=20)


async def collect(client: DeepSeekClient, req: ChatRequest, body: bytes | None = None) -> list[StreamEvent]:
    out: list[StreamEvent] = []
    async with client.stream(req, body=body) as events:
        async for event in events:
            out.append(event)
    return out


async def raw_sse(base_url: str, req: ChatRequest) -> bytes:
    from sessions.wire.messages import encode_request

    async with httpx.AsyncClient(base_url=base_url, headers={"Authorization": "Bearer k"}) as http:
        r = await http.post("/chat/completions", content=encode_request(req))
        assert r.status_code == 200, r.text
        return r.content
