"""``list_dir``: the entries of one directory, sorted, directories marked with ``/``; ignored entries counted."""

from __future__ import annotations

import stat
from pathlib import Path

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.gateway.tree import HeldTree
from sessions.tools.paths import resolve
from sessions.tools.search.walk import ALWAYS_SKIP, IgnoreRules


class ListDirArgs(ToolArgs):
    path: str = Field(".", description="Directory relative to the workspace root.")


def list_entries(root: Path, raw: str, max_entries: int) -> str:
    """The entries of ``raw``, listed through a descriptor held under the root (:class:`HeldTree`): a directory swapped
    for a symlink meanwhile is refused, never listed; a symlink's own target is looked at only beneath the root."""
    gateway = GatewayRoot(root)
    target = resolve(root, raw)
    real = gateway.locate(raw).real
    with HeldTree(gateway) as tree:
        found = tree.entries(real)
        if found is None:
            if not tree.is_file(real) and gateway.stat(raw) is None:
                raise ToolInputError(f"not found: {target.rel!r}; list '.' to see the workspace root")
            raise ToolInputError(f"{target.rel!r} is a file, not a directory; use read_file to read it")
    rules = IgnoreRules(root)
    explicit = rules.ignored(target.path, is_dir=True)
    shown: list[str] = []
    ignored = 0
    for entry in found:
        is_dir = entry.kind == "dir"
        if is_dir and entry.name in ALWAYS_SKIP:
            continue
        if not explicit and rules.ignored(target.path / entry.name, is_dir=is_dir):
            ignored += 1
            continue
        if entry.kind == "link":
            child = entry.name if real == "." else f"{real}/{entry.name}"
            shown.append(entry.name + ("/@" if _dir_beneath(gateway, child) else "@"))
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


def _dir_beneath(gateway: GatewayRoot, rel: str) -> bool:
    """Whether the symlink ``rel`` leads to a directory beneath the root (one outside is not looked at)."""
    try:
        found = gateway.stat(rel)
    except ToolError:
        return False
    return found is not None and stat.S_ISDIR(found.st_mode)


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
