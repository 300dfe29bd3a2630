"""A small ACP client for the tests: starts ``reasonix acp`` as a subprocess and speaks JSON-RPC over its pipes, as
an editor does. Agent requests (permission, fs) are answered by ``on_request``; everything received is kept in
order in :attr:`AcpClient.log`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from tests.orchestrator.run_support import ROOT

OnRequest = Callable[["AcpClient", str, dict[str, Any]], Awaitable[Any]]


class AnswerError(Exception):
    """Raised by ``on_request`` to answer the agent's request with a JSON-RPC error, as a failing editor does."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class AcpClient:
    def __init__(self, process: trio.Process, on_request: OnRequest) -> None:
        self.process = process
        self.on_request = on_request
        self.log: list[dict[str, Any]] = []
        self._answers: dict[int, trio.MemorySendChannel[dict[str, Any]]] = {}
        self._next = 0
        self.nursery: trio.Nursery | None = None

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The whole answer (``result`` or ``error``)."""
        self._next += 1
        send, receive = trio.open_memory_channel[dict[str, Any]](1)
        self._answers[self._next] = send
        await self._send({"id": self._next, "method": method, "params": params})
        with trio.fail_after(300):  # a hang guard: a plan turn on a loaded 2-core machine can take minutes
            return await receive.receive()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self._send({"method": method, "params": params})

    async def _read(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for chunk in self.process.stdout:
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                self.log.append(message)
                if "method" in message and "id" in message:
                    assert self.nursery is not None
                    self.nursery.start_soon(self._answer, message)
                elif "method" not in message:
                    await self._answers.pop(message["id"]).send(message)

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            result = await self.on_request(self, message["method"], message["params"])
        except AnswerError as exc:
            await self._send({"id": message["id"], "error": {"code": exc.code, "message": exc.message}})
            return
        await self._send({"id": message["id"], "result": result})

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.log
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]


@asynccontextmanager
async def acp_agent(base_url: str, env: dict[str, str], on_request: OnRequest) -> AsyncIterator[AcpClient]:
    command = [sys.executable, "-m", "orchestrator", "acp", "--base-url", base_url]
    process = await trio.lowlevel.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=str(ROOT)
    )
    client = AcpClient(process, on_request)
    async with trio.open_nursery() as nursery:
        client.nursery = nursery
        nursery.start_soon(client._read)
        try:
            yield client
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with trio.move_on_after(30):
                await process.wait()
            if process.returncode is None:
                process.kill()
            nursery.cancel_scope.cancel()
