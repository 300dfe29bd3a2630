"""``write_file``: create or overwrite a text file atomically, creating parent directories."""

from __future__ import annotations

from pathlib import Path

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.files.atomic import atomic_write
from sessions.tools.files.textfile import encode_text, sha256_hex
from sessions.tools.paths import resolve_for_write
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

    async def run(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        def work() -> ToolResult:
            target = resolve_for_write(ctx.root, args.path)
            if target.path.is_dir():
                raise ToolInputError(f"{target.rel!r} is a directory; give a file path")
            existed = target.path.exists()
            before = _hash_of(target.path) if existed else None
            data = encode_text(args.content)
            atomic_write(target.path, data)
            lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
            verb = "overwrote" if existed else "created"
            return ToolResult(
                content=f"{verb} {target.rel} ({lines} lines, {len(data)} bytes)",
                wrote=FileWrite(path=target.rel, before=before, after=sha256_hex(data)),
            )

        # Not abandoned on cancel: the write completes (atomically) before the cancellation propagates.
        return await trio.to_thread.run_sync(work)


def _hash_of(path: Path) -> str | None:
    """The SHA-256 of a regular file's bytes (None for anything else, or one too large to hash here)."""
    try:
        if not path.is_file() or path.stat().st_size > HASH_MAX_BYTES:
            return None
        return sha256_hex(path.read_bytes())
    except OSError:
        return None
