"""Walk the workspace the way git sees it: ``.gitignore`` files (root and nested) honoured via pathspec.

``.git`` and ``.reasonix`` (the session journal) are always skipped. Symlinks are not followed (as ripgrep does by
default), so a walk never leaves the workspace. Entries come in sorted order, so results are deterministic.
A start directory that is itself ignored was asked for explicitly: its contents are walked without ignore rules.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pathspec

from sessions.tools.errors import ToolError
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.search.patterns import Deadline, bounded_spec

ALWAYS_SKIP = frozenset({".git", ".reasonix"})
GITIGNORE_MAX_BYTES = 1024 * 1024


class IgnoreRules:
    """The ``.gitignore`` rules of one workspace, loaded lazily per directory."""

    def __init__(self, root: Path, deadline: Deadline | None = None) -> None:
        self.root = root.resolve()
        self.deadline = deadline or Deadline()
        """Every rule is matched within it: a repository's .gitignore may hold a line that backtracks without end."""
        self._gateway = GatewayRoot(self.root)
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def spec(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._specs:
            spec = None
            try:
                rel = (directory / ".gitignore").relative_to(self.root).as_posix()
                text = self._gateway.read(rel, limit=GITIGNORE_MAX_BYTES).data.decode("utf-8", errors="replace")
            except (ToolError, ValueError):  # missing, not a regular file, or a symlink out: no rules
                text = ""
            if text.strip():
                where = directory.relative_to(self.root).as_posix() if directory != self.root else ""
                spec = bounded_spec(text.splitlines(), self.deadline, f"the rules of {where or '.'}/.gitignore")
            self._specs[directory] = spec
        return self._specs[directory]

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        """Whether git would ignore ``path`` (absolute, inside the root). The deepest matching rule wins."""
        if path == self.root:
            return False
        rel_parts = path.relative_to(self.root).parts
        if rel_parts[-1] in ALWAYS_SKIP and is_dir:
            return True
        verdict = False
        directory = self.root
        for depth in range(len(rel_parts)):
            spec = self.spec(directory)
            if spec is not None:
                rel = "/".join(rel_parts[depth:]) + ("/" if is_dir else "")
                include = spec.check_file(rel).include
                if include is not None:
                    verdict = bool(include)
            directory = directory / rel_parts[depth]
        return verdict


def scan_dir(rules: IgnoreRules | None, directory: Path) -> Iterator[tuple[os.DirEntry[str], bool]]:
    """Sorted entries of one directory that the rules keep, each with whether it is a (real) directory."""
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in ALWAYS_SKIP:
            continue
        if rules is not None and rules.ignored(Path(entry.path), is_dir=is_dir):
            continue
        yield entry, is_dir


def walk_files(root: Path, start: Path, *, honour_ignore: bool = True) -> Iterator[Path]:
    """Every file under ``start`` (or ``start`` itself if it is a file) that git would not ignore, in sorted order."""
    real_root = root.resolve()
    rules = IgnoreRules(real_root) if honour_ignore else None
    if rules is not None and rules.ignored(start, is_dir=start.is_dir()):
        rules = None  # asked for explicitly
    if not start.is_dir():
        yield start
        return
    yield from _walk(rules, real_root, start)


def _walk(rules: IgnoreRules | None, real_root: Path, directory: Path) -> Iterator[Path]:
    # Depth first, entries sorted by name within each directory (the order of ``rg --sort path``).
    try:
        listing = list(scan_dir(rules, directory))
    except OSError:
        return
    for entry, is_dir in listing:
        if is_dir:
            yield from _walk(rules, real_root, Path(entry.path))
        elif not entry.is_symlink() and entry.is_file():
            yield Path(entry.path)
