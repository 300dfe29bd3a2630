"""The ``remember`` tool: the model writes a note to the project's memory file, for this and every later session.

It joins the executor's tools only with ``[memory] remember = true``: a tool is part of the frozen prefix, so a
session without the setting sends exactly the bytes it sent before. The note comes back as the call's result (the
running session has it from there); later sessions find it in the memory file, folded into their prefix. The call is
a write of that file to the permission rules (``write(REASONIX.local.md)``), and refused in read-only sessions.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from orchestrator.memory.notes import MAX_NOTE_CHARS, MemoryNoteError, remember_note
from sessions.tools import Tool, ToolArgs, ToolContext, ToolError, ToolRegistry, ToolResult


class RememberArgs(ToolArgs):
    note: str = Field(
        min_length=1,
        max_length=MAX_NOTE_CHARS,
        description="One fact worth keeping for later sessions (a convention, a command, a decision), one line.",
    )


class RememberTool(Tool[RememberArgs]):
    name = "remember"
    description = (
        "Write a short note to the project's memory file; every later session starts with it. Use it for lasting "
        "facts the user would otherwise repeat (how to run the tests, a convention, a decision), not for progress."
    )
    args_model = RememberArgs
    read_only: ClassVar[bool] = False
    parallel_safe: ClassVar[bool] = False

    def __init__(self, file: str = "REASONIX.local.md") -> None:
        self.file = file
        self.rule_subject = ("write", file)

    async def run(self, args: RememberArgs, ctx: ToolContext) -> ToolResult:
        try:
            line = remember_note(ctx.root, args.note, file=self.file)
        except MemoryNoteError as exc:
            raise ToolError(str(exc)) from exc
        return ToolResult(content=f"remembered in {self.file}: {line}")


def with_memory_tools(registry: ToolRegistry, memory: Any) -> ToolRegistry:
    """``registry`` with ``remember`` when the configuration's ``[memory] remember`` asks for it, else unchanged."""
    if not getattr(memory, "remember", False) or registry.get(RememberTool.name) is not None:
        return registry
    return ToolRegistry([*registry, RememberTool(memory.file)])
