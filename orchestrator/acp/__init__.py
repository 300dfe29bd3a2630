"""``reasonix acp``: the Agent Client Protocol over standard input and output, so editors run Reasonix with their own
diffs and permission prompts. ``rpc`` is JSON-RPC 2.0 framing on Trio, ``protocol`` the messages of ACP version 1
that are spoken, ``updates`` turns stream-json events into ``session/update`` bodies, and ``agent`` holds the
sessions (each an ordinary headless conversation) and ``serve_stdio``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.acp.agent import AcpAgent, serve_stdio
    from orchestrator.acp.rpc import Connection, RpcError

__all__ = ["AcpAgent", "Connection", "RpcError", "serve_stdio"]

_HOME = {"AcpAgent": "agent", "serve_stdio": "agent", "Connection": "rpc", "RpcError": "rpc"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
