"""Tools from Model Context Protocol servers, through the official ``mcp`` SDK: the servers configured in
``[mcp.servers]`` and ``.mcp.json`` are started for the life of a session (:class:`McpHub`), their tools offered as
``mcp__<server>__<tool>`` with canonical schemas (so the frozen prefix stays byte-identical), read-only ones to the
planner too, every call bounded in time and size, a crashed server restarted once. Importing the package loads
nothing: the SDK is imported when a hub is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.mcp.hub import McpHub, ServerReport
    from orchestrator.mcp.tool import McpTool

__all__ = ["McpHub", "McpTool", "ServerReport"]

_HOME = {"McpHub": "hub", "McpTool": "tool", "ServerReport": "hub"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
