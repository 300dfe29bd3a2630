"""A scripted DeepSeek behind ``httpx.MockTransport``, for the client's tests.

Each request takes the next scripted response. Streamed bodies are lists of parts: ``bytes`` are sent, a number
sleeps that many seconds on the Trio clock (so ``autojump_clock`` makes it instant), an exception breaks the stream
there, and ``HANG`` waits forever. Every request's exact body bytes and arrival time are recorded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio

from tests import wire_samples

WIRE = wire_samples.WIRE
V4_SSE = WIRE / "v4flash_thinking_toolcall.sse"
V32_SSE = WIRE / "v32chat_parallel_toolcalls.sse"
V4_JSON = WIRE / "v4flash_toolcall_nonstream.json"

HANG = object()
Part = bytes | float | int | BaseException | object


class ScriptedBody(httpx.AsyncByteStream):
    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = list(parts)
        self.closed = False
        self.bytes_sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            if isinstance(part, bytes):
                self.bytes_sent += len(part)
                yield part
            elif isinstance(part, int | float):
                await trio.sleep(part)
            elif isinstance(part, BaseException):
                raise part
            elif part is HANG:
                await trio.sleep_forever()

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class Scripted:
    status: int = 200
    parts: Sequence[Part] = ()
    headers: dict[str, str] = field(default_factory=dict)
    raise_: BaseException | None = None


def sse(*parts: Part) -> Scripted:
    return Scripted(parts=parts, headers={"content-type": "text/event-stream"})


def error(status: int, message: str, retry_after: str | None = None) -> Scripted:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}})
    headers = {"content-type": "application/json"}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    return Scripted(status=status, parts=[body.encode()], headers=headers)


def fails(exc: BaseException) -> Scripted:
    return Scripted(raise_=exc)


def sse_lines(path: Path) -> list[bytes]:
    """A recorded SSE file split into its lines (each keeps its newline): one network read per line."""
    return path.read_bytes().splitlines(keepends=True)


@dataclass
class Seen:
    body: bytes
    headers: httpx.Headers
    at: float


class FakeDeepSeek:
    def __init__(self, *script: Scripted) -> None:
        self.script = list(script)
        self.seen: list[Seen] = []
        self.bodies: list[ScriptedBody] = []

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(Seen(await request.aread(), request.headers, trio.current_time()))
        assert self.script, f"unexpected request #{len(self.seen)}: the script is exhausted"
        step = self.script.pop(0)
        if step.raise_ is not None:
            raise step.raise_
        body = ScriptedBody(step.parts)
        self.bodies.append(body)
        return httpx.Response(step.status, headers=step.headers, stream=body, request=request)
