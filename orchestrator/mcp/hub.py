"""Every configured MCP server for the life of a session (or a goal's two sessions): started in parallel, each within
the start deadline, its tools offered to sessions as ``mcp__<server>__<tool>``.

Open it around the run (``async with hub.open():``) and hand it to :class:`orchestrator.build.SessionBuilder`; the
builder adds the tools when it builds a session. The tool list is read once, at start: a server whose tools change
mid-session is not re-read until the next session, so the frozen prefix stays byte-identical (DESIGN §3.7). A server
that fails to start is reported once (``on_notice``) and its tools are absent; nothing else stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from orchestrator.config.mcp import McpConfig
from orchestrator.mcp.naming import tool_name
from sessions.sandbox import SandboxPolicy

if TYPE_CHECKING:  # the SDK is imported only when a server is configured
    from orchestrator.mcp.connection import ServerConnection, State
    from orchestrator.mcp.tool import McpTool


@dataclass(frozen=True)
class ServerReport:
    """What ``reasonix mcp list`` and ``reasonix doctor`` show for one server."""

    name: str
    transport: str
    state: State
    error: str
    tools: tuple[tuple[str, bool], ...]
    """(the model's name for the tool, read-only?) in name order."""


class McpHub:
    def __init__(
        self,
        config: McpConfig,
        workspace: Path,
        *,
        on_notice: Callable[[str], None] | None = None,
        sandbox: SandboxPolicy | None = None,
        callers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        """``sandbox``: the session's policy, which stdio servers run under (default: the default policy).
        ``callers``: servers the caller serves, by name, each with its transport's opener (a name taken is theirs)."""
        self.config = config
        self.connections: list[ServerConnection] = []
        callers = callers or {}
        if config.servers or callers:
            from orchestrator.mcp.connection import ServerConnection

            every: dict[str, ServerConnection] = {
                name: ServerConnection(name, server, workspace, start_timeout_s=config.start_timeout_s, sandbox=sandbox)
                for name, server in config.servers.items()
            }
            for name, opener in callers.items():
                every[name] = ServerConnection(
                    name, None, workspace, start_timeout_s=config.start_timeout_s, opener=opener
                )
            self.connections = [every[name] for name in sorted(every)]
        self._on_notice = on_notice
        self._tools: tuple[McpTool, ...] = ()
        self._skipped: list[str] = []

    def tools(self) -> tuple[McpTool, ...]:
        """The tools of every server that started, in name order (empty until :meth:`open`)."""
        return self._tools

    def _notice(self, text: str) -> None:
        if self._on_notice is not None:
            self._on_notice(text)

    def _build_tools(self, nursery: trio.Nursery) -> tuple[McpTool, ...]:
        from orchestrator.mcp.tool import make_tool

        tools: dict[str, McpTool] = {}
        for conn in self.connections:
            if conn.state == "failed":
                self._notice(
                    f"MCP server {conn.name} did not start ({conn.error}); its tools are absent from this session"
                )
                continue
            for info in conn.tools:
                name = tool_name(conn.name, info.name)
                if name is None or name in tools:
                    why = "its name is too long" if name is None else f"its name clashes as {name}"
                    self._notice(f"MCP tool {conn.name}.{info.name} is left out: {why}")
                    continue
                tools[name] = make_tool(conn, info, name, nursery, self.config.call_timeout_s)
        return tuple(tools[name] for name in sorted(tools))

    @asynccontextmanager
    async def open(self) -> AsyncIterator[McpHub]:
        """Start every server (in parallel), list the tools, and stop them all when the block ends."""
        if not self.connections:
            yield self
            return
        try:
            async with trio.open_nursery() as nursery:
                async with trio.open_nursery() as starting:
                    for conn in self.connections:
                        starting.start_soon(conn.start, nursery)
                self._tools = self._build_tools(nursery)
                try:
                    yield self
                finally:
                    for conn in self.connections:
                        conn.stop()
        except BaseExceptionGroup as group:
            # The servers' tasks end quietly: what the nursery wraps is the body's own exception (a DeepSeekError,
            # Ctrl-C), and callers catch it by its type.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            for conn in self.connections:
                conn.close()

    def reports(self) -> list[ServerReport]:
        by_server: dict[str, list[tuple[str, bool]]] = {}
        for tool in self._tools:
            by_server.setdefault(tool.server, []).append((tool.name, tool.read_only))
        return [
            ServerReport(
                name=conn.name,
                transport=conn.transport,
                state=conn.state,
                error=conn.error,
                tools=tuple(by_server.get(conn.name, ())),
            )
            for conn in self.connections
        ]


async def probe(config: McpConfig, workspace: Path, sandbox: SandboxPolicy | None = None) -> list[ServerReport]:
    """Start every server, list its tools, stop them: what ``reasonix mcp list`` and ``reasonix doctor`` show."""
    hub = McpHub(config, workspace, sandbox=sandbox)
    async with hub.open():
        return hub.reports()
