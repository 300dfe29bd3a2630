"""Walk the workspace the way git sees it: ``.gitignore`` files (root and nested) honoured via pathspec.

``.git`` and ``.reasonix`` (the session journal) are always skipped. Symlinks are not followed (as ripgrep does by
default) and directories are opened through held descriptors, so a walk never leaves the workspace. Entries come in
sorted order, so results are deterministic. A start directory that is itself ignored was asked for explicitly: its
contents are walked without ignore rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pathspec

from sessions.tools.errors import ToolError
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.gateway.tree import HeldTree
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


def walk_files(root: Path, start: Path, *, honour_ignore: bool = True) -> Iterator[Path]:
    """Every file under ``start`` (or ``start`` itself if it is not a directory) that git would not ignore, in sorted
    order. Directories are listed through held descriptors (:class:`~sessions.tools.gateway.tree.HeldTree`): a directory
    swapped for a symlink mid-walk is not entered, so no name from outside the root is ever yielded."""
    real_root = root.resolve()
    rel = start.relative_to(real_root).as_posix()
    rules = IgnoreRules(real_root) if honour_ignore else None
    with HeldTree(GatewayRoot(real_root)) as tree:
        if tree.dir_fd(rel) is None:
            yield start  # a file (read through the gateway by the caller), or missing
            return
        if rules is not None and rules.ignored(start, is_dir=True):
            rules = None  # asked for explicitly
        yield from _walk(rules, tree, real_root, "" if rel == "." else rel)


def _walk(rules: IgnoreRules | None, tree: HeldTree, real_root: Path, rel: str) -> Iterator[Path]:
    # Depth first, entries sorted by name within each directory (the order of ``rg --sort path``).
    for entry in tree.entries(rel) or ():
        if entry.kind not in ("dir", "file") or (entry.kind == "dir" and entry.name in ALWAYS_SKIP):
            continue
        child = f"{rel}/{entry.name}" if rel else entry.name
        path = real_root / child
        if rules is not None and rules.ignored(path, is_dir=entry.kind == "dir"):
            continue
        if entry.kind == "dir":
            yield from _walk(rules, tree, real_root, child)
        else:
            yield path
