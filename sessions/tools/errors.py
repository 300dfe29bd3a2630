"""What a tool call can get wrong, named for who is at fault. Each message says what happened and what to do next.

A :class:`ToolError` raised inside a tool becomes an error result (``is_error=True``) that the model reads; the turn
goes on. Paths in messages are the ones the model gave, or relative to the workspace: never absolute temp paths.
"""

from __future__ import annotations


class ToolError(Exception):
    """Base: the tool call cannot do what was asked. The message is sent to the model as the tool result."""

    counts_as_failure = False
    """Whether this error feeds the per-turn failure counter that escalates a struggling turn (DESIGN §5)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WorkspaceEscapeError(ToolError):
    """The model asked for a path outside the workspace root (``..``, an absolute path, or a symlink out)."""


class ToolInputError(ToolError):
    """The model's arguments are well-formed but do not fit the file system (missing file, not a directory, ...)."""


class EditMismatchError(ToolInputError):
    """An ``edit_file`` edit's ``old`` text was not found exactly once; nothing was written."""

    counts_as_failure = True


class DuplicateToolError(Exception):
    """Programmer error: two tools registered under one name."""
