"""An MCP server the program driving Reasonix serves itself, reached through that program rather than a process or a
URL: the Claude Agent SDKs' in-process servers (``create_sdk_mcp_server``), whose JSON-RPC messages travel in
``mcp_message`` control requests (``reasonix -p``, :mod:`orchestrator.headless.control`).

:func:`caller_transport` is an MCP transport (the read and write streams the SDK's :class:`mcp.Client` speaks over):
each message the client writes is handed to ``ask`` with the server's name, and a request's answer comes back as the
server's response. A notification is delivered and its acknowledgement dropped. A failed ``ask`` answers the request
with a JSON-RPC error naming why, so the call fails and the session goes on. Nothing of such a server runs here: its
code is the caller's, in the caller's process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import trio
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCMessage, jsonrpc_message_adapter

CallerAsk = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends one JSON-RPC message to the caller's server ``name``; its JSON-RPC answer. Raises
:class:`CallerServerError` when the caller answered with an error or not at all."""

INTERNAL_ERROR = -32603


class CallerServerError(Exception):
    """The caller did not answer a message for its server."""


def _dump(message: JSONRPCMessage) -> dict[str, Any]:
    data: dict[str, Any] = message.model_dump(by_alias=True, mode="json", exclude_none=True)
    return data


@asynccontextmanager
async def caller_transport(
    name: str, ask: CallerAsk
) -> AsyncIterator[tuple[anyio.abc.ObjectReceiveStream[Any], anyio.abc.ObjectSendStream[SessionMessage]]]:
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    to_client, from_server = anyio.create_memory_object_stream[Any](64)

    async def one(message: dict[str, Any]) -> None:
        try:
            answer = await ask(name, message)
        except CallerServerError as exc:
            answer = {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": INTERNAL_ERROR, "message": str(exc)}}
        if "id" not in message:  # a notification: the caller's acknowledgement is no message of the server's
            return
        try:
            parsed = jsonrpc_message_adapter.validate_python(answer)
        except ValueError as exc:
            text = f"the caller's MCP server {name} answered something that is not JSON-RPC: {exc}"
            parsed = jsonrpc_message_adapter.validate_python(
                {"jsonrpc": "2.0", "id": message["id"], "error": {"code": INTERNAL_ERROR, "message": text[:300]}}
            )
        try:
            await to_client.send(SessionMessage(parsed))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    async def pump() -> None:
        async with from_client, to_client, trio.open_nursery() as calls:  # answers in any order: a task a message
            async for session_message in from_client:
                calls.start_soon(one, _dump(session_message.message))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pump)
        try:
            yield from_server, to_server
        finally:
            nursery.cancel_scope.cancel()
