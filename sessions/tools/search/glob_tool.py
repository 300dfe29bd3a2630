"""``glob``: files whose workspace-relative path matches a gitignore-style pattern, sorted, .gitignore honoured.

Fast on big trees (issue 11 item 10): the listing starts at the pattern's literal directory prefix (``src/pkg3`` for
``src/pkg3/**/file1.py``), comes from ``rg --files`` where ripgrep is installed, and the pattern is matched as one
compiled regex. A prefix directory that is ignored, a symlink or missing lists nothing, as the full walk would.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.paths import resolve
from sessions.tools.search.listing import fast_matcher, path_order, rg_files, walk_names
from sessions.tools.search.patterns import MATCH_TIMEOUT_S, Deadline, bounded_spec
from sessions.tools.search.ripgrep import find_rg
from sessions.tools.search.walk import ALWAYS_SKIP, IgnoreRules

GLOB_CHARS = frozenset("*?[\\!")


class GlobArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Glob, e.g. '*.py' (any depth), 'src/**/*.ts', 'tests/test_*.py'.")
    path: str = Field(".", description="Directory to search, relative to the workspace root.")


def literal_prefix(pattern: str) -> list[str]:
    """The leading directory names of an anchored pattern that hold no glob syntax: where its matches must lie.

    Only a pattern with a slash before its last part is anchored (gitignore rules); ``*.py`` may match at any depth."""
    body = pattern.strip().rstrip("/")
    if "/" not in body or body.startswith("!"):
        return []
    parts = body.lstrip("/").split("/")[:-1]
    prefix: list[str] = []
    for part in parts:
        if not part or part in (".", "..") or GLOB_CHARS & set(part):
            break
        prefix.append(part)
    return prefix


def _start(rules: IgnoreRules | None, base: Path, prefix: list[str]) -> Path | None:
    """``base/prefix`` if every directory on the way is a real, not ignored directory; else None (nothing matches)."""
    here = base
    for name in prefix:
        here = here / name
        if name in ALWAYS_SKIP:
            return None
        try:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return None
        except OSError:
            return None
        if rules is not None and rules.ignored(here, is_dir=True):
            return None
    return here


def find(
    root: Path, pattern: str, raw: str, max_results: int, rg: str | None = None, timeout_s: float = MATCH_TIMEOUT_S
) -> str:
    target = resolve(root, raw)
    if not target.path.is_dir():
        raise ToolInputError(f"{target.rel!r} is not a directory; give a directory to search in")
    deadline = Deadline(timeout_s)  # the glob and the .gitignore rules: within one budget (patterns.py)
    try:
        spec = bounded_spec([pattern], deadline, f"the glob {pattern!r}")
    except ValueError as exc:
        raise ToolInputError(f"invalid glob {pattern!r}: {exc}") from None
    real_root = root.resolve()
    rules: IgnoreRules | None = IgnoreRules(real_root, deadline)
    if rules is not None and rules.ignored(target.path, is_dir=True):
        rules = None  # an ignored directory asked for explicitly: its contents are listed without ignore rules
    start = _start(rules, target.path, literal_prefix(pattern))
    names: list[str] = []
    if start is not None:
        names = (
            rg_files(rg, real_root, start, honour_ignore=rules is not None)
            if rg is not None
            else list(walk_names(real_root, start, honour_ignore=rules is not None))
        )
    under = target.path.relative_to(real_root).as_posix()
    base = "" if under == "." else under + "/"
    matches = fast_matcher(spec, deadline)
    found = sorted((n for n in names if matches(n[len(base) :])), key=path_order)
    if not found:
        return f"no files match {pattern!r} under {target.rel}"
    shown = found[:max_results]
    if len(found) > max_results:
        shown.append(f"… {len(found) - max_results} more files not shown; use a narrower pattern or path")
    return "\n".join(shown)


class GlobTool(Tool[GlobArgs]):
    name = "glob"
    description = "Find files by path pattern (gitignore syntax), sorted by path. Skips .gitignore'd files."
    args_model = GlobArgs
    read_only = True
    parallel_safe = True

    def __init__(self, *, use_ripgrep: bool | None = None) -> None:
        """``use_ripgrep``: None = ``rg --files`` when ripgrep is installed; False = always the Python walk."""
        self.use_ripgrep = use_ripgrep

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        rg = None if self.use_ripgrep is False else find_rg()
        if rg is None and self.use_ripgrep:
            raise ToolError("glob is configured to use ripgrep, but rg is not installed; pip install ripgrep")

        def work() -> str:
            limits = ctx.limits
            return find(ctx.root, args.pattern, args.path, limits.glob_max_results, rg, limits.match_timeout_s)

        return ToolResult(content=await trio.to_thread.run_sync(work, abandon_on_cancel=True))
