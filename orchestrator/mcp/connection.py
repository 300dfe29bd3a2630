"""One MCP server for the life of a session: started with the official SDK's :class:`mcp.Client` (anyio, run here
under trio), its tools listed once, calls made with a deadline, restarted once if it dies.

The client lives in a task of the hub's nursery (an anyio context must be left in the task that entered it); calls
come from the session's tasks. A stdio server's stderr goes to a temporary file, so its noise never reaches the
terminal and its last lines can explain a failed start.

A stdio server runs in the sandbox the session's commands run in (:mod:`sessions.sandbox`: read-only filesystem but
the workspace, no network, hidden credentials, no capability, bounded processes and memory), with its own
``network`` and ``writable`` from the user's config, started by Reasonix on the trio thread so that it dies with
Reasonix, and stopped so that nothing of it is left (:mod:`orchestrator.mcp.stdio`); ``sandbox = false`` there runs
it as it is, started by the SDK. Without a ``cwd``
it starts in an empty directory (the sandbox's private ``/tmp``, or a fresh one) with ``PYTHONSAFEPATH=1``, so a
module the workspace holds is never imported in its place (``python -m notes_server`` would find a planted
``notes_server.py`` first in its working directory).

A server the program driving Reasonix serves itself (the Claude Agent SDKs' in-process servers) has no config: its
``opener`` gives the transport (:mod:`orchestrator.mcp.caller`), and nothing of it runs here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TextIO, cast

import anyio
import trio
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, CallToolResult
from mcp.types import Tool as McpToolInfo

from orchestrator.config.mcp import McpServerConfig
from orchestrator.mcp.stdio import sandboxed_stdio
from sessions.sandbox import Bounds, Launch, SandboxPolicy, release, sandbox_for

State = Literal["stopped", "ready", "failed", "restarted", "down"]
MAX_PAGES = 50
STDERR_TAIL_CHARS = 600


class ServerDied(Exception):
    """The server went away during a call (its process exited, its connection closed)."""


@dataclass
class ServerConnection:
    name: str
    config: McpServerConfig | None
    """None for a server the caller serves (``opener``)."""
    workspace: Path
    start_timeout_s: float = 30.0
    state: State = "stopped"
    error: str = ""
    """Why the server failed or went down, for the report."""
    tools: list[McpToolInfo] = field(default_factory=list)
    """The tools listed at the first start: fixed for the session."""
    restarts: int = 0
    generation: int = 0
    """Counts successful starts: a call that saw the server die restarts it only if nobody did since."""
    sandbox: SandboxPolicy | None = None
    """The session's sandbox policy (hidden paths, environment names); the server's own keys loosen it."""
    confined: bool = False
    """True once the server was started inside the sandbox."""
    _restarting: trio.Lock = field(default_factory=trio.Lock)
    _client: Client | None = None
    _scope: trio.CancelScope | None = None
    _stderr: TextIO | None = None
    _launch: Launch | None = None
    """The last sandboxed launch of a stdio server (None: not sandboxed, or not started yet)."""
    _scratch: Path | None = None
    _bounds: Bounds | None = None
    opener: Callable[[], Any] | None = None
    """The transport of a server the caller serves (:func:`orchestrator.mcp.caller.caller_transport`)."""

    @property
    def transport(self) -> str:
        return self.config.transport if self.config is not None else "caller"

    def server_policy(self) -> SandboxPolicy:
        cfg, base = self.config, self.sandbox or SandboxPolicy()
        assert cfg is not None  # a stdio server's
        extra = tuple(Path(p).expanduser() for p in cfg.writable)
        # The server's own files stay visible when they live under /tmp, behind the private /tmp: its program, the
        # files its arguments name, the paths its environment names (a PYTHONPATH).
        named = [p for v in cfg.env.values() for p in v.split(os.pathsep)]
        files = [shutil.which(cfg.command or "") or "", *cfg.args]
        own = [
            *(Path(a).parent for a in files if Path(a).is_absolute()),
            *(Path(p) for p in named if Path(p).is_absolute()),
        ]
        return replace(
            base,
            mode="workspace-write",
            network=cfg.network,
            writable=(*base.writable, *extra),
            readable=(*base.readable, *own),
        )

    def stdio_launch(self) -> Launch | StdioServerParameters:
        """How the server is started: through bubblewrap (a :class:`Launch`, started by :mod:`.stdio`) unless the
        user's config says ``sandbox = false`` or no sandbox works here (then by the SDK), never in the workspace
        unless ``cwd`` says so."""
        cfg = self.config
        assert cfg is not None and cfg.command is not None
        env = dict(cfg.env)
        cwd = (self.workspace / cfg.cwd) if cfg.cwd is not None else None
        if cwd is None:
            env.setdefault("PYTHONSAFEPATH", "1")
        command = cfg.command
        if "/" in command and not Path(command).is_absolute():
            command = str((cwd or self.workspace) / command)
        found = shutil.which(command)
        if found is None:
            raise FileNotFoundError(2, "not found", cfg.command)
        box = sandbox_for(self.server_policy()) if cfg.sandbox else None
        release(self._bounds)
        self._bounds = None
        self.confined = box is not None and box.confines
        if box is not None and box.confines:
            launch = box.wrap([found, *cfg.args], workspace=self.workspace, cwd=cwd or Path("/tmp"), env=env)
            self._bounds = launch.bounds
            self._launch = launch
            return launch
        if cwd is None:
            if self._scratch is None:
                self._scratch = Path(tempfile.mkdtemp(prefix=f"reasonix-mcp-{self.name}-"))
            cwd = self._scratch
        return StdioServerParameters(command=cfg.command, args=cfg.args, env=env or None, cwd=cwd)

    def _transport(self) -> Any:
        cfg = self.config
        if cfg is None:
            assert self.opener is not None
            return self.opener()
        if cfg.command is not None:
            if self._stderr is None:
                self._stderr = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115 — closed in close()
            how = self.stdio_launch()
            if isinstance(how, Launch):
                return sandboxed_stdio(how, cwd=self.workspace, errlog=self._stderr)
            return stdio_client(how, errlog=self._stderr)
        assert cfg.url is not None
        if cfg.headers:
            from mcp.shared._httpx_utils import create_mcp_http_client

            return streamable_http_client(cfg.url, http_client=create_mcp_http_client(headers=dict(cfg.headers)))
        return streamable_http_client(cfg.url)

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return text.strip()[-STDERR_TAIL_CHARS:]

    async def _serve(self, task_status: trio.TaskStatus[list[McpToolInfo]] = trio.TASK_STATUS_IGNORED) -> None:
        scope = self._scope = trio.CancelScope()
        client: Client | None = None
        started = False
        with scope:
            try:
                async with Client(self._transport()) as client:
                    tools = await _list_all(client)
                    self._client = client
                    task_status.started(tools)
                    started = True
                    await trio.sleep_forever()
            except BaseException as exc:  # whatever the SDK or the server raised ends this server only
                if not started or isinstance(exc, trio.Cancelled):
                    raise
                group = exc if isinstance(exc, BaseExceptionGroup) else BaseExceptionGroup("server", [exc])
                cancelled, rest = group.split(trio.Cancelled)
                if rest is not None and self._client is client:  # not an old instance replaced by a restart
                    self.state, self.error = "down", describe(rest)
                if cancelled is not None:
                    raise cancelled from None
            finally:
                if client is not None and self._client is client:
                    self._client = None

    async def start(self, nursery: trio.Nursery) -> None:
        """Start the server and list its tools within the deadline; on failure :attr:`state` says ``failed``. A
        sandbox that stopped before the server ran (a path it masks went away after the launch listed it: its only
        output is bubblewrap's setup error about that path) is started once more, built again."""
        await self._start(nursery)
        launch = self._launch
        if self.state == "failed" and launch is not None and launch.stopped_on_a_gone_mount(1, self.stderr_tail()):
            if self._stderr is not None:
                self._stderr.seek(0)
                self._stderr.truncate()
            self.state, self.error = "stopped", ""  # as before the first start: nothing of that one stays
            await self._start(nursery)

    async def _start(self, nursery: trio.Nursery) -> None:
        try:
            with trio.fail_after(self.start_timeout_s):
                tools = await nursery.start(self._serve)
        except trio.TooSlowError:
            self.state = "failed"
            self.error = f"did not start within {self.start_timeout_s:g} s"
            return
        except Exception as exc:  # noqa: BLE001 — a server that cannot start is reported, not fatal
            self.state = "failed"
            self.error = describe(exc)
            tail = self.stderr_tail()
            if tail:
                self.error += f"; its stderr ends: {tail.splitlines()[-1]}"
            return
        if self.state == "stopped":
            self.tools = sorted(tools, key=lambda t: t.name)
        self.state = "ready" if self.restarts == 0 else "restarted"
        self.error = ""
        self.generation += 1

    def stop(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> CallToolResult:
        """Call ``tool``. Raises :class:`ServerDied` when the server went away, :class:`trio.TooSlowError` past
        the deadline, :class:`MCPError` when the server refused the request."""
        client = self._client
        if client is None:
            raise ServerDied(self.error or "not running")
        try:
            with trio.fail_after(timeout_s):
                return await client.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                raise ServerDied("its connection closed") from exc
            raise
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            raise ServerDied("its connection closed") from exc

    async def restart(self, nursery: trio.Nursery, seen: int) -> bool:
        """Start it again, once per session, unless another call already did since generation ``seen``. True when
        it is running again."""
        async with self._restarting:
            if self.generation != seen:
                return self.state in ("ready", "restarted")
            return await self._restart(nursery)

    async def _restart(self, nursery: trio.Nursery) -> bool:
        self.stop()
        if self.restarts >= 1:
            self.state = "down"
            self.error = "it stopped again after its one restart"
            return False
        self.restarts += 1
        await self.start(nursery)
        if self.state != "restarted":
            self.state = "down"
            self.error = f"its restart failed: {self.error}"
        return self.state == "restarted"

    def close(self) -> None:
        self.stop()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        release(self._bounds)
        self._bounds = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions[:3])
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc.filename or exc})"
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


async def _list_all(client: Client) -> list[McpToolInfo]:
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
