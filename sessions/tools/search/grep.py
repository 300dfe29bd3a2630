"""``grep``: regex search over workspace files, as ``path:line:text``, sorted by path, capped.

Ripgrep runs when it is installed (the ``ripgrep`` wheel is a dependency; streamed, so a huge result never sits in
memory); otherwise a pure-Python search over the same walk. Both honour ``.gitignore`` (ripgrep natively, Python via
pathspec), skip ``.git`` and ``.reasonix``, search hidden files, ignore no other ignore files, and format lines the same
way. The Python search uses the ``regex`` engine with a time limit and without holding the GIL, so a pattern that
backtracks without end is stopped with a clear error and Ctrl-C is always heard (issue 11 item 9).
"""

from __future__ import annotations

import bisect
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec
import regex
import trio
from pydantic import Field

from sessions.tools.base import Tool, ToolArgs, ToolContext, ToolLimits, ToolResult
from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.files.textfile import is_binary, split_lines
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.gateway.tree import HeldTree
from sessions.tools.paths import WorkspacePath, display, resolve
from sessions.tools.search.listing import RG_FILTERS, AboveRules, path_order, rg_error
from sessions.tools.search.patterns import Deadline, bounded_spec
from sessions.tools.search.ripgrep import find_rg
from sessions.tools.search.walk import IgnoreRules, walk_files

RG_MAX_COLUMNS = 4_000
RG_PREVIEW_CHECK = 200
"""Characters of a line longer than ripgrep's column limit compared with the gateway's copy (ripgrep previews it)."""
GREP_MAX_FILE_BYTES = 64 * 1024 * 1024
"""The Python search reads at most this much of one file (through the gateway)."""


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(".", description="File or directory to search, relative to the workspace root.")
    glob: str | None = Field(None, description="Only files matching this glob, e.g. '*.py' or 'src/**/*.ts'.")
    ignore_case: bool = Field(False, description="Case-insensitive match.")


@dataclass
class Matches:
    """Collected ``path:line:text`` lines, all counted; the first ``cap`` in path order are kept.

    Files may arrive in any order (ripgrep searches in parallel), each file's lines together and in order. Only the
    files that can still hold one of the first ``cap`` lines are kept, so memory stays bounded."""

    cap: int
    line_max_chars: int
    only: pathspec.GitIgnoreSpec | None = None
    """The ``glob`` argument: only paths (relative to the workspace root) that match it."""
    keep: Callable[[str], bool] | None = None
    """Ignore rules ripgrep did not apply (those of the folders above the one searched)."""
    confirm: Callable[[str, int | str, str], str | None] | None = None
    """For ripgrep's lines: the line as the gateway reads it, or None when ripgrep's is not confirmed there."""
    total: int = 0
    stopped: str | None = None
    """Why the search ended before the end of the tree, if it did."""
    _files: dict[str, list[str]] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    """The kept files' sort keys, in order."""
    _kept: int = 0

    def wanted(self, rel: str) -> bool:
        return (self.only is None or bool(self.only.match_file(rel))) and (self.keep is None or self.keep(rel))

    def add(self, rel: str, number: int | str, text: str) -> None:
        if not self.wanted(rel):
            return
        if self.confirm is not None:
            confirmed = self.confirm(rel, number, text)
            if confirmed is None:
                return
            text = confirmed
        self.total += 1
        key = path_order(rel)
        bucket = self._files.get(key)
        if bucket is None:
            if self._kept >= self.cap and key > self._order[-1]:
                return  # after the first ``cap`` lines in path order: counted only
            bucket = self._files[key] = []
            bisect.insort(self._order, key)
        if len(bucket) >= self.cap:
            return
        text = text.removesuffix("\r")
        if len(text) > self.line_max_chars:
            text = text[: self.line_max_chars] + "…"
        bucket.append(f"{rel}:{number}:{text}")
        self._kept += 1
        while len(self._order) > 1 and self._kept - len(self._files[self._order[-1]]) >= self.cap:
            self._kept -= len(self._files.pop(self._order.pop()))

    @property
    def lines(self) -> list[str]:
        return [line for key in self._order for line in self._files[key]][: self.cap]

    def render(self, pattern: str, where: str) -> str:
        if not self.total:
            out = [f"no matches for {pattern!r} in {where}"]
        else:
            out = list(self.lines)
            if self.total > self.cap:
                out.append(f"… {self.total - self.cap} more matches not shown; narrow the pattern, path or glob")
        if self.stopped:
            out.append(self.stopped)
        return "\n".join(out)


def _compile(args: GrepArgs) -> regex.Pattern[str]:
    try:
        return regex.compile(args.pattern, regex.V0 | (regex.IGNORECASE if args.ignore_case else 0))
    except regex.error as exc:
        raise ToolInputError(f"invalid regular expression {args.pattern!r}: {exc}") from None


def _matches(args: GrepArgs, limits: ToolLimits) -> Matches:
    try:
        deadline = Deadline(limits.match_timeout_s)
        only = bounded_spec([args.glob], deadline, f"the glob {args.glob!r}") if args.glob else None
    except ValueError as exc:
        raise ToolInputError(f"invalid glob {args.glob!r}: {exc}") from None
    return Matches(limits.grep_max_matches, limits.grep_line_max_chars, only)


def python_grep(
    root: Path, target: WorkspacePath, args: GrepArgs, limits: ToolLimits, cancelled: threading.Event | None = None
) -> Matches:
    """The Python search. At most ``limits.grep_timeout_s`` of this thread's CPU time; each match runs without the GIL
    and with the time that is left as its timeout; ``cancelled`` ends the search between lines."""
    pattern = _compile(args)
    real_root = root.resolve()
    found = _matches(args, limits)
    budget = limits.grep_timeout_s
    began = time.thread_time()
    gateway = GatewayRoot(real_root)
    for file in walk_files(real_root, target.path):
        if cancelled is not None and cancelled.is_set():
            break
        if time.thread_time() - began > budget:
            found.stopped = (
                f"… search stopped after {budget:g} s at {display(real_root, file)}; narrow the path or glob"
            )
            break
        rel = display(real_root, file)
        if not found.wanted(rel):
            continue
        try:
            data = gateway.read(rel, limit=GREP_MAX_FILE_BYTES).data
        except ToolError:  # gone, swapped for a symlink out, not a regular file: not searched
            continue
        if is_binary(data):
            continue
        for number, line in enumerate(split_lines(data.decode("utf-8", errors="replace")), start=1):
            left = budget - (time.thread_time() - began)
            try:
                hit = pattern.search(line, concurrent=True, timeout=max(left, 0.001))
            except TimeoutError:
                raise ToolInputError(
                    f"the regular expression {args.pattern!r} took more than {budget:g} s on {rel}:{number} and was "
                    "stopped; nested or overlapping repetition such as (a+)+ or (a|aa)+ backtracks without end: "
                    "simplify the pattern"
                ) from None
            if hit:
                found.add(rel, number, line)
            if cancelled is not None and cancelled.is_set():
                return found
    return found


def rg_argv(rg: str, where: str, args: GrepArgs, *, honour_ignore: bool = True) -> list[str]:
    argv = [
        rg, "--line-number", "--no-heading", "--with-filename", "--null", "--color=never",
        *RG_FILTERS, f"--max-columns={RG_MAX_COLUMNS}", "--max-columns-preview",
    ]  # fmt: skip
    if not honour_ignore:
        argv.append("--no-ignore")
    if args.ignore_case:
        argv.append("--ignore-case")
    # The glob argument is applied to rg's output, not passed as --glob: rg's --glob overrides .gitignore.
    argv += ["--regexp", args.pattern, "--"]
    if where != ".":
        argv.append(where)
    return argv


def _rg_scope(root: Path, target: WorkspacePath) -> tuple[Path, bool, Callable[[str], bool] | None]:
    """The real root, whether ignore rules apply (not to an ignored path asked for explicitly), and the rules of the
    folders above the target that ripgrep does not read."""
    real_root = root.resolve()
    rules = IgnoreRules(real_root)
    is_dir = target.path.is_dir()
    honour = not rules.ignored(target.path, is_dir=is_dir)
    keep = None
    if honour and is_dir and target.path != real_root:
        above = AboveRules(rules, target.path)
        keep = above.keeps if above.specs else None
    return real_root, honour, keep


class Confirmed:
    """ripgrep's lines checked against the file as the gateway reads it (:mod:`sessions.tools.gateway.tree`): ripgrep
    walks by path, so a directory swapped for a symlink mid-search could let it read outside the workspace; only a line
    that the same relative path holds beneath the root is shown, and as the gateway read it. Files come one at a time
    (ripgrep prints each file's lines together), so one file is held at once."""

    def __init__(self, tree: HeldTree) -> None:
        self.tree = tree
        self._rel: str | None = None
        self._lines: list[str] | None = None

    def __call__(self, rel: str, number: int | str, text: str) -> str | None:
        if rel != self._rel:
            data = self.tree.read(rel, GREP_MAX_FILE_BYTES)
            self._rel = rel
            self._lines = None if data is None else split_lines(data.decode("utf-8", errors="replace"))
        try:
            index = int(number) - 1
        except ValueError:
            return None
        if self._lines is None or not 0 <= index < len(self._lines):
            return None
        line, seen = self._lines[index], text.removesuffix("\r")
        if seen == line or (len(line.encode()) > RG_MAX_COLUMNS and line.startswith(seen[:RG_PREVIEW_CHECK])):
            return line
        return None


async def ripgrep(rg: str, root: Path, target: WorkspacePath, args: GrepArgs, limits: ToolLimits) -> Matches:
    with HeldTree(GatewayRoot(root)) as tree:
        return await _ripgrep(rg, root, target, args, limits, tree)


async def _ripgrep(
    rg: str, root: Path, target: WorkspacePath, args: GrepArgs, limits: ToolLimits, tree: HeldTree
) -> Matches:
    found = _matches(args, limits)
    found.confirm = Confirmed(tree)
    real_root, honour, found.keep = await trio.to_thread.run_sync(_rg_scope, root, target)
    proc = await trio.lowlevel.open_process(
        rg_argv(rg, display(real_root, target.path), args, honour_ignore=honour),
        cwd=real_root,
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
                await trio.to_thread.run_sync(_add_rg_lines, found, complete)  # confirming reads files
            if pending:
                await trio.to_thread.run_sync(_add_rg_lines, found, [pending])
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            with trio.CancelScope(shield=True):
                await proc.wait()
    message = rg_error(errors)
    if code == 2 and not found.total and message:
        raise ToolInputError(f"grep failed: {message}")
    return found


def _add_rg_lines(found: Matches, lines: list[bytes]) -> None:
    for raw in lines:
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
        rg = find_rg()
        if rg is None and self.use_ripgrep:
            raise ToolError("grep is configured to use ripgrep, but rg is not installed; pip install ripgrep")
        return rg

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        target = resolve(ctx.root, args.path)
        if not target.path.is_dir():
            # missing, or a FIFO that would block the search: a clear error instead
            GatewayRoot(ctx.root).open_file(args.path)[0].close()
        rg = self._rg()
        if rg is not None:
            found = await ripgrep(rg, ctx.root, target, args, ctx.limits)
        else:
            cancelled = threading.Event()

            def work() -> Matches:
                return python_grep(ctx.root, target, args, ctx.limits, cancelled)

            try:
                found = await trio.to_thread.run_sync(work, abandon_on_cancel=True)
            finally:
                cancelled.set()  # an abandoned search stops at its next line
        return ToolResult(content=found.render(args.pattern, target.rel), data={"matches": found.total})
