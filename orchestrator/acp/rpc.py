"""JSON-RPC 2.0 over a byte stream, one JSON object a line (ACP's stdio transport), on Trio.

:class:`Connection` reads messages from ``receive`` and writes to ``send`` through one writer task, so lines never
interleave and are written in the order they were queued (a ``session/update`` queued before a
``session/request_permission`` reaches the client first). Each request that comes in runs in a task of its own (a
``session/cancel`` notification is read while a ``session/prompt`` runs); :meth:`Connection.request` sends one of
ours and waits for its answer. A handler raises :class:`RpcError` to answer with an error; anything else it raises
becomes an internal error (-32603) with the message, and the connection goes on. When the client closes its side,
the requests still running are answered (within a grace), our own requests to it fail, and the queue is written out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from pydantic import ValidationError

from orchestrator.text import json_nesting

Handler = Callable[[str, Any], Awaitable[Any]]
"""``(method, params) -> result`` for requests; the result of a notification is ignored."""

MAX_LINE_BYTES = 64 * 1024 * 1024
EOF_GRACE_S = 30.0
"""After the client closed its side: how long the requests still running may take to be answered."""
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


class RpcError(Exception):
    """An error answer: ``code`` and ``message`` as JSON-RPC defines them."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Connection:
    """One JSON-RPC peer. :meth:`serve` runs until ``receive`` ends."""

    def __init__(self, receive: trio.abc.ReceiveStream, send: trio.abc.SendStream, handler: Handler) -> None:
        self._receive = receive
        self._send = send
        self._handler = handler
        self._out, self._out_receive = trio.open_memory_channel[bytes](math.inf)
        self._pending: dict[int, tuple[trio.Event, list[Any]]] = {}
        self._next_id = 0
        self._nursery: trio.Nursery | None = None
        self._closed = False

    # ------------------------------------------------------------------------------------------------ sending

    def _queue(self, message: dict[str, Any]) -> None:
        self._out.send_nowait(json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False).encode() + b"\n")

    def notify(self, method: str, params: Any) -> None:
        """Queue a notification (no answer)."""
        self._queue({"method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result; :class:`RpcError` for an error answer (and once the client has
        closed the connection)."""
        if self._closed:
            raise RpcError(INTERNAL_ERROR, "the client closed the connection")
        self._next_id += 1
        ident = self._next_id
        done, box = trio.Event(), list[Any]()
        self._pending[ident] = (done, box)
        self._queue({"id": ident, "method": method, "params": params})
        try:
            await done.wait()
        finally:
            self._pending.pop(ident, None)
        answer: dict[str, Any] = box[0]
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise RpcError(
                int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "error")), error.get("data")
            )
        return answer.get("result")

    def start_soon(self, work: Callable[[], Awaitable[Any]]) -> None:
        """Run ``work`` in the connection's nursery (a request whose answer nobody waits for)."""
        assert self._nursery is not None
        self._nursery.start_soon(work)

    async def _writer(self) -> None:
        async for line in self._out_receive:
            try:
                await self._send.send_all(line)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return  # the client stopped reading: what is left has no reader

    # ------------------------------------------------------------------------------------------------ receiving

    async def serve(self) -> None:
        """Read until ``receive`` ends, then answer what is still running (for at most :data:`EOF_GRACE_S`: a
        script that pipes its requests in and closes gets every answer), and write out every queued line."""
        async with trio.open_nursery() as outer:
            outer.start_soon(self._writer)
            async with trio.open_nursery() as handlers:
                self._nursery = handlers
                await self._read(handlers)
                self._closed = True
                for done, box in self._pending.values():  # nobody is left to answer them
                    box.append({"error": RpcError(INTERNAL_ERROR, "the client closed the connection").to_json()})
                    done.set()
                handlers.cancel_scope.deadline = trio.current_time() + EOF_GRACE_S
            self._out.close()  # the writer drains the queue, then ends

    async def _read(self, handlers: trio.Nursery) -> None:
        buffer = b""
        while True:
            chunk = await self._receive.receive_some(65536)
            if not chunk:
                return
            buffer += chunk
            if len(buffer) > MAX_LINE_BYTES:
                self._queue({"id": None, "error": RpcError(PARSE_ERROR, "a message over 64 MiB").to_json()})
                buffer = b""
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip():
                    self._incoming(line, handlers)

    def _incoming(self, line: bytes, nursery: trio.Nursery) -> None:
        try:
            message = json_nesting.loads(line)  # bounded in nesting: no RecursionError on 100 000 brackets
        except ValueError as exc:
            self._queue({"id": None, "error": RpcError(PARSE_ERROR, f"not JSON: {exc}").to_json()})
            return
        if not isinstance(message, dict):
            self._queue({"id": None, "error": RpcError(INVALID_REQUEST, "a message is a JSON object").to_json()})
            return
        if "method" not in message:
            pending = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if pending is not None:
                pending[1].append(message)
                pending[0].set()
            return
        nursery.start_soon(self._answer, message)

    async def _answer(self, message: dict[str, Any]) -> None:
        ident, method = message.get("id"), str(message["method"])
        try:
            result = await self._handler(method, message.get("params"))
        except RpcError as exc:
            error = exc.to_json()
        except ValidationError as exc:
            error = RpcError(INVALID_PARAMS, f"invalid params for {method}: {exc.errors()[0]['msg']}").to_json()
        except Exception as exc:  # noqa: BLE001 - one failed request must not end the connection
            error = RpcError(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}").to_json()
        else:
            if ident is not None:
                self._queue({"id": ident, "result": result})
            return
        if ident is not None:
            self._queue({"id": ident, "error": error})
