"""HTTP/1.1 for the emulator: trio sockets and h11, so that faults are exact (drop the connection after k chunks,
stall, keep-alive comments). Connections are kept alive between requests, as httpx expects."""

from __future__ import annotations

import sys
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import h11
import trio
import trio.lowlevel

from scenarios.emulator.app import DEFAULT_MODELS, Emulator, Plain, Response, Streamed, json_response
from scenarios.emulator.latency import LatencyModel
from scenarios.emulator.script import Script
from scenarios.emulator.streaming import KEEP_ALIVE
from scenarios.emulator.validation import ModelLimits

MAX_BODY = 256 * 1024 * 1024
_RECEIVE = 65536
_NET_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError, h11.LocalProtocolError)


class _Closed(Exception):
    """The peer went away or the exchange cannot continue: close this connection."""


async def _next_event(stream: trio.SocketStream, conn: h11.Connection) -> Any:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        data = await stream.receive_some(_RECEIVE)
        conn.receive_data(data)


async def _read_request(stream: trio.SocketStream, conn: h11.Connection) -> tuple[h11.Request, bytes] | None:
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = await _next_event(stream, conn)
        if isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                raise _Closed("request body too large")
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            return None


async def _send(stream: trio.SocketStream, conn: h11.Connection, event: Any) -> None:
    data = conn.send(event)
    if data:
        await stream.send_all(data)


def _headers(pairs: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


async def _send_plain(stream: trio.SocketStream, conn: h11.Connection, resp: Plain) -> bool:
    """Returns False when the connection was dropped on purpose."""
    if resp.delay:
        await trio.sleep(resp.delay)
    if resp.drop:
        return False
    headers = [("content-type", resp.content_type), ("content-length", str(len(resp.body))), *resp.headers]
    await _send(stream, conn, h11.Response(status_code=resp.status, headers=_headers(headers)))
    await _send(stream, conn, h11.Data(data=resp.body))
    await _send(stream, conn, h11.EndOfMessage())
    return True


async def _send_stream(stream: trio.SocketStream, conn: h11.Connection, resp: Streamed) -> bool:
    headers = [("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache")]
    await _send(stream, conn, h11.Response(status_code=200, headers=_headers(headers)))
    for i in range(resp.keep_alives):
        if i and resp.keep_alive_interval:
            await trio.sleep(resp.keep_alive_interval)
        await _send(stream, conn, h11.Data(data=KEEP_ALIVE))
    if resp.first_delay:
        await trio.sleep(resp.first_delay)
    for i, event in enumerate(resp.events):
        if resp.stall_at == i:
            await trio.sleep(resp.stall_seconds)
        if resp.drop_at == i:
            return False
        if i and resp.chunk_delay:
            await trio.sleep(resp.chunk_delay)
        if resp.write_bytes is None:
            await _send(stream, conn, h11.Data(data=event))
            continue
        for at in range(0, len(event), resp.write_bytes):
            await _send(stream, conn, h11.Data(data=event[at : at + resp.write_bytes]))
            await trio.lowlevel.checkpoint()  # let the piece leave before the next one
    await _send(stream, conn, h11.EndOfMessage())
    return True


async def _send_response(stream: trio.SocketStream, conn: h11.Connection, resp: Response) -> bool:
    if isinstance(resp, Plain):
        return await _send_plain(stream, conn, resp)
    return await _send_stream(stream, conn, resp)


def _dispatch(emulator: Emulator, request: h11.Request, body: bytes) -> Response:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
    try:
        return emulator.handle(request.method.decode("ascii"), request.target.decode("latin-1"), headers, body)
    except Exception as exc:  # noqa: BLE001 - a bug in the emulator answers 500 instead of killing the server
        traceback.print_exc(file=sys.stderr)
        err = {"message": f"emulator bug: {exc!r}", "type": "server_error", "param": None, "code": "emulator_bug"}
        return json_response(500, {"error": err})


async def serve_connection(stream: trio.SocketStream, emulator: Emulator) -> None:
    """Answer requests on one connection until the peer closes it, a fault drops it, or it breaks."""
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            got = await _read_request(stream, conn)
            if got is None:
                return
            request, body = got
            if not await _send_response(stream, conn, _dispatch(emulator, request, body)):
                return  # dropped on purpose: close without finishing the message
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()
    except (*_NET_ERRORS, _Closed):
        return
    finally:
        await trio.aclose_forcefully(stream)


async def serve(
    emulator: Emulator,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on ``host:port`` (0 picks a free port) and serve until cancelled; reports the bound address."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    sockname = listeners[0].socket.getsockname()
    async with trio.open_nursery() as nursery:
        task_status.started((sockname[0], sockname[1]))

        async def handler(stream: trio.SocketStream) -> None:
            await serve_connection(stream, emulator)

        await trio.serve_listeners(handler, listeners, handler_nursery=nursery)


@dataclass(frozen=True, slots=True)
class RunningEmulator:
    """An emulator serving on loopback, from :func:`open_emulator`."""

    emulator: Emulator
    host: str
    port: int

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def stats(self) -> dict[str, Any]:
        return self.emulator.stats()

    def reset(self, *, cache: bool = True, counters: bool = True, script: bool = True) -> None:
        self.emulator.reset(cache=cache, counters=counters, script=script)

    def load_script(self, script: Script | None) -> None:
        self.emulator.load_script(script)


@asynccontextmanager
async def open_emulator(
    *,
    script: Script | None = None,
    cache_unit: int = 128,
    latency: LatencyModel | None = None,
    models: tuple[str, ...] | None = DEFAULT_MODELS,
    host: str = "127.0.0.1",
    port: int = 0,
    limits: ModelLimits | None = None,
) -> AsyncIterator[RunningEmulator]:
    """Serve an emulator in the background for the duration of the block (tests: port 0 on loopback).

    ``models`` are the model ids served (others get DeepSeek's 400 "Model Not Exist"); ``None`` accepts any id.
    ``limits`` are the model's context window and output limit (DeepSeek V4's by default).
    """
    emulator = Emulator(script=script, cache_unit=cache_unit, latency=latency, models=models, limits=limits)
    async with trio.open_nursery() as nursery:
        bound_host, bound_port = await nursery.start(serve, emulator, host, port)
        yield RunningEmulator(emulator, bound_host, bound_port)
        nursery.cancel_scope.cancel()
