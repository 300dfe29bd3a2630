"""Tools a session can call: the interface, the registry, the dispatcher and the built-ins (read_file, write_file,
edit_file, list_dir, glob, grep, bash). Every tool result is deterministic text (paths relative to the workspace, no
clocks), because it is re-sent in every later request of the conversation (DESIGN §3); read-only mode refuses a call
at dispatch and never changes the schemas (DESIGN §3.4). Adding a tool: DESIGN §9.
"""

from sessions.tools.base import Gate, Tool, ToolArgs, ToolContext, ToolLimits, ToolResult
from sessions.tools.dispatch import PreparedCall, current_call_id, dispatch
from sessions.tools.errors import DuplicateToolError, EditMismatchError, ToolError, ToolInputError, WorkspaceEscapeError
from sessions.tools.registry import ToolRegistry, default_registry

__all__ = [
    "DuplicateToolError",
    "EditMismatchError",
    "Gate",
    "PreparedCall",
    "Tool",
    "ToolArgs",
    "ToolContext",
    "ToolError",
    "ToolInputError",
    "ToolLimits",
    "ToolRegistry",
    "ToolResult",
    "WorkspaceEscapeError",
    "current_call_id",
    "default_registry",
    "dispatch",
]
