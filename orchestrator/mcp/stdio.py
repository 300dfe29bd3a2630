"""The transport of a stdio MCP server that runs in the sandbox: Reasonix starts it itself, on the trio thread, and
the SDK's :class:`mcp.Client` talks to it over these streams.

The SDK's own ``stdio_client`` starts the process from a worker thread (trio's ``open_process``), and
bubblewrap's ``--die-with-parent`` follows the *thread* that started it: the server was killed when that idle
thread exited, so the launch went without it, and a server outlived a SIGKILLed Reasonix unless it read its stdin's
EOF (one that hung never did). Started here with :func:`~sessions.sandbox.spawn.spawn_server` it dies with this
thread like every command (``PR_SET_PDEATHSIG`` armed before the launch runs, then ``--die-with-parent``).

Stopping it: stdin closes (a server ends on its EOF), and one that has not exited within ``grace_s`` is killed with
its process group; then whatever is left of the launch is killed by its marker
(:func:`~sessions.sandbox.reaper.kill_launch`: bubblewrap's sandbox init runs in a session of its own, out of the
group's reach, and a kill while bubblewrap started leaves it unwatched). A server given up at its start deadline is
stopped the same way, so nothing of it is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TextIO

import anyio
import mcp_types
import trio
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from sessions.sandbox import Launch, Spawned, kill_launch, spawn_server

GRACE_S = 2.0
"""How long a server may take to exit after its stdin closed before it is killed."""
REAP_S = 5.0
"""How long the exit of a killed server is awaited (only an unkillable process runs this out)."""


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # the session surfaces it, as the SDK's own transport does
        return exc


async def _stop(proc: Spawned, launch: Launch, grace_s: float) -> None:
    if proc.stdin is not None:
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError, OSError):
            await proc.stdin.aclose()
    with trio.move_on_after(grace_s):
        await proc.wait()
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    await trio.to_thread.run_sync(kill_launch, launch.marker)
    with trio.move_on_after(REAP_S):
        await proc.wait()
    await proc.stdout.aclose()


@contextlib.asynccontextmanager
async def sandboxed_stdio(
    launch: Launch, *, cwd: Path, errlog: TextIO, grace_s: float = GRACE_S
) -> AsyncIterator[TransportStreams]:
    """Start ``launch`` (raises OSError when it cannot start) and yield the SDK's streams to it; when the block
    ends, however it ends, the server is stopped and nothing of it is left running."""
    # On the trio thread: bubblewrap's --die-with-parent follows the thread that started it (spawn.py).
    proc = spawn_server(launch.argv, cwd=cwd, env=launch.env, stderr=errlog)
    stdin = proc.stdin
    assert stdin is not None
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with to_session:
            buffer = b""
            with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError, OSError):
                async for chunk in proc.stdout:
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    for line in lines:
                        if line.strip():
                            try:
                                await to_session.send(_parse(line))
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return

    async def write() -> None:
        async with from_session:
            async for message in from_session:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await stdin.send_all(data.encode())
                except (trio.ClosedResourceError, trio.BrokenResourceError, OSError):
                    await to_session.aclose()  # the session sees the connection end, not a request hanging
                    return

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            nursery.start_soon(write)
            try:
                yield from_server, to_server
            finally:
                with trio.CancelScope(shield=True):
                    await to_server.aclose()
                    await from_server.aclose()
                    await _stop(proc, launch, grace_s)
                nursery.cancel_scope.cancel()
    finally:
        if proc.returncode is None:  # the nursery failed before the stop: still nothing may be left
            with trio.CancelScope(shield=True):
                await _stop(proc, launch, 0)
