"""One tool call dispatched the way a session does it, for the tool, sandbox and permission tests."""

from __future__ import annotations

from typing import Any

from sessions.tools import PreparedCall, ToolContext, ToolRegistry, ToolResult, dispatch


async def call(
    registry: ToolRegistry, ctx: ToolContext, name: str, *, read_only: bool = False, **args: Any
) -> ToolResult:
    """Dispatch one call the way a session does and return its result."""
    [result] = await dispatch(registry, [PreparedCall(id="c1", name=name, args=args)], ctx, read_only=read_only)
    return result
