"""``write_file``: create or overwrite a text file atomically, creating parent directories."""

from __future__ import annotations

import stat

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.files.textfile import encode_text, sha256_hex, written_path
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.read_memory import FileWrite

HASH_MAX_BYTES = 32 * 1024 * 1024
"""An existing file up to this size is hashed before it is overwritten, so the session knows the write was its own
change of what it last read (DESIGN §5 "Re-reads")."""


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

    def writes(self, args: WriteFileArgs, ctx: ToolContext) -> tuple[str, ...] | None:
        return written_path(ctx, args.path)

    async def run(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        def work() -> ToolResult:
            root = GatewayRoot(ctx.root)
            found = root.stat(args.path)
            if found is not None and stat.S_ISDIR(found.st_mode):
                raise ToolInputError(f"{root.locate(args.path).rel!r} is a directory; give a file path")
            before = _hash_of(root, args.path) if found is not None else None
            data = encode_text(args.content)
            rel, existed = root.write(args.path, data)
            lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
            verb = "overwrote" if existed else "created"
            return ToolResult(
                content=f"{verb} {rel} ({lines} lines, {len(data)} bytes)",
                wrote=FileWrite(path=rel, before=before, after=sha256_hex(data)),
            )

        # Not abandoned on cancel: the write completes (atomically) before the cancellation propagates.
        return await trio.to_thread.run_sync(work)


def _hash_of(root: GatewayRoot, raw: str) -> str | None:
    """The SHA-256 of a regular file's bytes (None for anything else, or one too large to hash here)."""
    try:
        read = root.read(raw, limit=HASH_MAX_BYTES + 1)
    except ToolError:
        return None
    return None if read.truncated or len(read.data) > HASH_MAX_BYTES else sha256_hex(read.data)
