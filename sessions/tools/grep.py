"""``grep``: regex search over workspace files, as ``path:line:text``, sorted by path, capped.

Ripgrep runs when it is on PATH (streamed, so a huge result never sits in memory); otherwise a pure-Python search over
the same walk. Both honour ``.gitignore`` (ripgrep natively, Python via pathspec), skip ``.git`` and ``.reasonix``,
search hidden files, ignore no other ignore files, and format lines the same way.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pathspec
import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolLimits, ToolResult
from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.paths import WorkspacePath, display, resolve
from sessions.tools.textfile import is_binary, require_file, split_lines
from sessions.tools.walk import walk_files

RG_MAX_COLUMNS = 4_000


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(".", description="File or directory to search, relative to the workspace root.")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. '*.py' or 'src/**/*.ts'.")
    ignore_case: bool = Field(False, description="Case-insensitive match.")


@dataclass
class Matches:
    """Collected ``path:line:text`` lines, at most ``cap`` kept, all counted."""

    cap: int
    line_max_chars: int
    only: pathspec.GitIgnoreSpec | None = None
    """The ``glob`` argument: only paths (relative to the workspace root) that match it."""
    lines: list[str] = field(default_factory=list)
    total: int = 0

    def wanted(self, rel: str) -> bool:
        return self.only is None or bool(self.only.match_file(rel))

    def add(self, rel: str, number: int | str, text: str) -> None:
        if not self.wanted(rel):
            return
        self.total += 1
        if len(self.lines) < self.cap:
            text = text.removesuffix("\r")
            if len(text) > self.line_max_chars:
                text = text[: self.line_max_chars] + "…"
            self.lines.append(f"{rel}:{number}:{text}")

    def render(self, pattern: str, where: str) -> str:
        if not self.total:
            return f"no matches for {pattern!r} in {where}"
        out = list(self.lines)
        if self.total > self.cap:
            out.append(f"… {self.total - self.cap} more matches not shown; narrow the pattern, path or glob")
        return "\n".join(out)


def _compile(args: GrepArgs) -> re.Pattern[str]:
    try:
        return re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
    except re.error as exc:
        raise ToolInputError(f"invalid regular expression {args.pattern!r}: {exc}") from None


def _matches(args: GrepArgs, limits: ToolLimits) -> Matches:
    try:
        only = pathspec.GitIgnoreSpec.from_lines([args.glob]) if args.glob else None
    except ValueError as exc:
        raise ToolInputError(f"invalid glob {args.glob!r}: {exc}") from None
    return Matches(limits.grep_max_matches, limits.grep_line_max_chars, only)


def python_grep(root: Path, target: WorkspacePath, args: GrepArgs, limits: ToolLimits) -> Matches:
    regex = _compile(args)
    real_root = root.resolve()
    found = _matches(args, limits)
    for file in walk_files(real_root, target.path):
        rel = display(real_root, file)
        if not found.wanted(rel):
            continue
        try:
            data = file.read_bytes()
        except OSError:
            continue
        if is_binary(data):
            continue
        for number, line in enumerate(split_lines(data.decode("utf-8", errors="replace")), start=1):
            if regex.search(line):
                found.add(rel, number, line)
    return found


def rg_argv(rg: str, target: WorkspacePath, args: GrepArgs) -> list[str]:
    argv = [
        rg, "--line-number", "--no-heading", "--with-filename", "--null", "--color=never", "--sort=path",
        "--hidden", "--no-require-git", "--no-config", "--no-ignore-dot", "--no-ignore-global",
        "--no-ignore-exclude", "--no-ignore-parent", "--glob=!.git", "--glob=!.reasonix",
        f"--max-columns={RG_MAX_COLUMNS}", "--max-columns-preview",
    ]  # fmt: skip
    if args.ignore_case:
        argv.append("--ignore-case")
    # The glob argument is applied to rg's output, not passed as --glob: rg's --glob overrides .gitignore.
    argv += ["--regexp", args.pattern, "--"]
    if target.rel != ".":
        argv.append(target.rel)
    return argv


async def ripgrep(rg: str, root: Path, target: WorkspacePath, args: GrepArgs, limits: ToolLimits) -> Matches:
    found = _matches(args, limits)
    proc = await trio.lowlevel.open_process(
        rg_argv(rg, target, args),
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors = bytearray()

    async def drain_stderr() -> None:
        assert proc.stderr is not None
        async for chunk in proc.stderr:
            if len(errors) < 4_000:
                errors.extend(chunk)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain_stderr)
            pending = b""
            async for chunk in proc.stdout:
                *complete, pending = (pending + chunk).split(b"\n")
                for raw in complete:
                    _add_rg_line(found, raw)
            if pending:
                _add_rg_line(found, pending)
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            with trio.CancelScope(shield=True):
                await proc.wait()
    if code == 2 and not found.total:
        message = errors.decode("utf-8", errors="replace").strip()
        raise ToolInputError(f"grep failed: {message or 'ripgrep exited with status 2'}")
    return found


def _add_rg_line(found: Matches, raw: bytes) -> None:
    path, sep, rest = raw.partition(b"\x00")
    number, colon, text = rest.partition(b":")
    if sep and colon:
        found.add(path.decode("utf-8", errors="replace"), number.decode(), text.decode("utf-8", errors="replace"))


class GrepTool(Tool[GrepArgs]):
    name = "grep"
    description = (
        "Search file contents with a regular expression; prints path:line:text sorted by path, "
        "at most 200 matches. Skips .gitignore'd and binary files."
    )
    args_model = GrepArgs
    read_only = True
    parallel_safe = True

    def __init__(self, *, use_ripgrep: bool | None = None) -> None:
        """``use_ripgrep``: None = ripgrep when ``rg`` is on PATH; False = always Python; True = ripgrep or fail."""
        self.use_ripgrep = use_ripgrep

    def _rg(self) -> str | None:
        if self.use_ripgrep is False:
            return None
        rg = shutil.which("rg")
        if rg is None and self.use_ripgrep:
            raise ToolError("grep is configured to use ripgrep, but rg is not on PATH")
        return rg

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        target = resolve(ctx.root, args.path)
        if not target.path.is_dir():
            require_file(target)  # missing, or a FIFO that would block the search: a clear error instead
        rg = self._rg()
        if rg is not None:
            found = await ripgrep(rg, ctx.root, target, args, ctx.limits)
        else:

            def work() -> Matches:
                return python_grep(ctx.root, target, args, ctx.limits)

            found = await trio.to_thread.run_sync(work, abandon_on_cancel=True)
        return ToolResult(content=found.render(args.pattern, target.rel), data={"matches": found.total})
