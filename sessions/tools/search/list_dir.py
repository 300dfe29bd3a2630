"""``list_dir``: the entries of one directory, sorted, directories marked with ``/``; ignored entries counted."""

from __future__ import annotations

import os
from pathlib import Path

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.paths import resolve
from sessions.tools.search.walk import ALWAYS_SKIP, IgnoreRules


class ListDirArgs(ToolArgs):
    path: str = Field(".", description="Directory relative to the workspace root.")


def list_entries(root: Path, raw: str, max_entries: int) -> str:
    target = resolve(root, raw)
    if not target.path.exists():
        raise ToolInputError(f"not found: {target.rel!r}; list '.' to see the workspace root")
    if not target.path.is_dir():
        raise ToolInputError(f"{target.rel!r} is a file, not a directory; use read_file to read it")
    rules = IgnoreRules(root)
    explicit = rules.ignored(target.path, is_dir=True)
    with os.scandir(target.path) as it:
        entries = sorted(it, key=lambda e: e.name)
    shown: list[str] = []
    ignored = 0
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in ALWAYS_SKIP:
            continue
        if not explicit and rules.ignored(Path(entry.path), is_dir=is_dir):
            ignored += 1
            continue
        if entry.is_symlink():
            shown.append(entry.name + ("/@" if entry.is_dir() else "@"))
        else:
            shown.append(entry.name + ("/" if is_dir else ""))
    lines = shown[:max_entries]
    if not shown:
        lines.append(f"({target.rel} is empty)")
    if len(shown) > max_entries:
        lines.append(f"… {len(shown) - max_entries} more entries not shown; use glob to narrow down")
    if ignored:
        lines.append(f"({ignored} entries ignored by .gitignore not shown)")
    return "\n".join(lines)


class ListDirTool(Tool[ListDirArgs]):
    name = "list_dir"
    description = "List a directory: names sorted, directories end with /, symlinks with @. Skips .gitignore'd entries."
    args_model = ListDirArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: ListDirArgs, ctx: ToolContext) -> ToolResult:
        def work() -> str:
            return list_entries(ctx.root, args.path, ctx.limits.list_max_entries)

        return ToolResult(content=await trio.to_thread.run_sync(work, abandon_on_cancel=True))
