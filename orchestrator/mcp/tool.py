"""A server's tool as one of the session's tools (:class:`sessions.tools.base.Tool`).

Each MCP tool gets a class of its own (the tool interface keeps name, description and read-only-ness on the class).
``readOnlyHint`` makes it read-only: the planner gets it, and in a read-only session it may run. The hint is the
server's claim, not a permission: whether a call asks is the permission gate's, as for any other MCP tool.
Arguments are passed through as the model wrote them; the server validates them against its own schema and says what
is wrong. A call has a deadline; a server that dies mid-call is restarted once per session and the model is told
the call did not finish.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import trio
from mcp import MCPError
from pydantic import BaseModel, ConfigDict

from orchestrator.mcp import naming
from orchestrator.mcp.connection import ServerConnection, ServerDied, describe
from orchestrator.mcp.result import render
from sessions.tools import Tool, ToolContext, ToolResult
from sessions.wire import FunctionSchema, ToolSchema

if TYPE_CHECKING:
    from mcp.types import Tool as McpToolInfo


class McpArgs(BaseModel):
    """Whatever the model passed: the server checks it against its schema."""

    model_config = ConfigDict(extra="allow", frozen=True)


class McpTool(Tool[McpArgs]):
    args_model = McpArgs
    server: ClassVar[str]
    remote_name: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    rule_subject: ClassVar[tuple[str, str]]
    """What permission rules match: ``("mcp", "server.tool")``, as in ``mcp(server.tool)``."""

    def __init__(self, connection: ServerConnection, nursery: trio.Nursery, call_timeout_s: float) -> None:
        self.connection = connection
        self.nursery = nursery
        self.call_timeout_s = call_timeout_s

    def schema(self) -> ToolSchema:
        return ToolSchema(
            function=FunctionSchema(name=self.name, description=self.description, parameters=self.parameters)
        )

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        conn = self.connection
        label = f"{self.server}.{self.remote_name}"
        if conn.state in ("failed", "down"):
            return ToolResult.error(
                f"{label} is unavailable: the MCP server {self.server} is down for the rest of this session "
                f"({conn.error}); do without it"
            )
        seen = conn.generation
        try:
            result = await conn.call(self.remote_name, dict(args.model_extra or {}), self.call_timeout_s)
        except trio.TooSlowError:
            return ToolResult.error(
                f"{label} did not answer within {self.call_timeout_s:g} s and was abandoned; try a smaller request "
                "or another way"
            )
        except ServerDied as exc:
            why = str(exc)
            if await conn.restart(self.nursery, seen):
                return ToolResult.error(
                    f"{label} did not finish: the MCP server {self.server} stopped during the call ({why}); it was "
                    "restarted (once per session), and the call was not repeated — call again if it is still needed"
                )
            return ToolResult.error(
                f"{label} did not finish: the MCP server {self.server} stopped during the call ({why}) and is down "
                "for the rest of this session; do without it"
            )
        except MCPError as exc:
            return ToolResult.error(f"{label} failed: {exc.error.message}")
        except Exception as exc:  # noqa: BLE001 — a server's odd answer is an error for the model, not a crash
            return ToolResult.error(f"{label} failed: {describe(exc)}")
        return render(result, ctx.limits, tool=label)


def make_tool(
    connection: ServerConnection, info: McpToolInfo, name: str, nursery: trio.Nursery, call_timeout_s: float
) -> McpTool:
    """An instance of a fresh :class:`McpTool` subclass for ``info`` of ``connection``'s server."""
    read_only = bool(info.annotations is not None and info.annotations.read_only_hint)
    cls = type(
        f"McpTool_{name}",
        (McpTool,),
        {
            "name": name,
            "description": naming.description(info.description, info.title),
            "read_only": read_only,
            "parallel_safe": read_only,
            "server": connection.name,
            "remote_name": info.name,
            "parameters": naming.parameters(info.input_schema),
            "rule_subject": ("mcp", f"{connection.name}.{info.name}"),
        },
    )
    tool: McpTool = cls(connection, nursery, call_timeout_s)
    return tool
