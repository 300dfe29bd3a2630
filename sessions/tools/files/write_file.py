"""``write_file``: create or overwrite a text file atomically, creating parent directories."""

from __future__ import annotations

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.files.atomic import atomic_write
from sessions.tools.files.textfile import encode_text
from sessions.tools.paths import resolve_for_write


class WriteFileArgs(ToolArgs):
    path: str = Field(description="File path relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteFileTool(Tool[WriteFileArgs]):
    name = "write_file"
    description = (
        "Create a file or replace its whole content; parent directories are created. "
        "To change part of an existing file, use edit_file."
    )
    args_model = WriteFileArgs
    read_only = False
    parallel_safe = False

    async def run(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        def work() -> str:
            target = resolve_for_write(ctx.root, args.path)
            if target.path.is_dir():
                raise ToolInputError(f"{target.rel!r} is a directory; give a file path")
            existed = target.path.exists()
            data = encode_text(args.content)
            atomic_write(target.path, data)
            lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
            verb = "overwrote" if existed else "created"
            return f"{verb} {target.rel} ({lines} lines, {len(data)} bytes)"

        # Not abandoned on cancel: the write completes (atomically) before the cancellation propagates.
        return ToolResult(content=await trio.to_thread.run_sync(work))
