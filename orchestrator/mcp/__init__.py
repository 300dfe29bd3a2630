"""Tools from Model Context Protocol servers, through the official ``mcp`` SDK: the servers configured in
``[mcp.servers]`` and ``.mcp.json`` are started for the life of a session (:class:`McpHub`), their tools offered as
``mcp__<server>__<tool>`` with canonical schemas (so the frozen prefix stays byte-identical), read-only ones to the
planner too, every call bounded in time and size, a crashed server restarted once. Importing the package loads
nothing: the SDK is imported when a hub is built.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.mcp.hub import McpHub, ServerReport
    from orchestrator.mcp.tool import McpTool

__all__ = ["McpHub", "McpTool", "ServerReport"]

_HOME = {"McpHub": "hub", "McpTool": "tool", "ServerReport": "hub"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, so importing the package stays cheap and cycle-free."""
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value
