"""``glob``: files whose workspace-relative path matches a gitignore-style pattern, sorted, .gitignore honoured."""

from __future__ import annotations

from pathlib import Path

import pathspec
import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolInputError
from sessions.tools.paths import display, resolve
from sessions.tools.walk import walk_files


class GlobArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Glob, e.g. '*.py' (any depth), 'src/**/*.ts', 'tests/test_*.py'.")
    path: str = Field(".", description="Directory to search, relative to the workspace root.")


def find(root: Path, pattern: str, raw: str, max_results: int) -> str:
    target = resolve(root, raw)
    if not target.path.is_dir():
        raise ToolInputError(f"{target.rel!r} is not a directory; give a directory to search in")
    try:
        spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    except ValueError as exc:
        raise ToolInputError(f"invalid glob {pattern!r}: {exc}") from None
    real_root = root.resolve()
    matches: list[str] = []
    total = 0
    for file in walk_files(real_root, target.path):
        if spec.match_file(file.relative_to(target.path).as_posix()):
            total += 1
            if len(matches) < max_results:
                matches.append(display(real_root, file))
    if not matches:
        return f"no files match {pattern!r} under {target.rel}"
    if total > max_results:
        matches.append(f"… {total - max_results} more files not shown; use a narrower pattern or path")
    return "\n".join(matches)


class GlobTool(Tool[GlobArgs]):
    name = "glob"
    description = "Find files by path pattern (gitignore syntax), sorted by path. Skips .gitignore'd files."
    args_model = GlobArgs
    read_only = True
    parallel_safe = True

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        def work() -> str:
            return find(ctx.root, args.pattern, args.path, ctx.limits.glob_max_results)

        return ToolResult(content=await trio.to_thread.run_sync(work, abandon_on_cancel=True))
