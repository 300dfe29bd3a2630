"""Listing a workspace's files fast, the way git sees them: ``rg --files`` where ripgrep is installed, else the walk.

ripgrep reads the ``.gitignore`` files in the directory it lists and below. It is told not to read those of parent
directories (``--no-ignore-parent``: above the workspace they are not the project's), so the rules of the directories
between the workspace root and the listed directory are applied here, to what it prints. ripgrep walks by path, so each
name it prints is kept only when it is a regular file beneath the root through held descriptors (a directory swapped for
a symlink mid-listing cannot add a name from outside). Paths come back relative to the workspace root, POSIX, unsorted;
:func:`path_order` sorts them the way the walk and ``rg --sort path`` do.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

import pathspec

from sessions.tools.errors import ToolError
from sessions.tools.gateway.root import GatewayRoot
from sessions.tools.gateway.tree import HeldTree
from sessions.tools.search.patterns import Deadline, TimedRegex, described
from sessions.tools.search.walk import IgnoreRules, walk_files

RG_FILTERS = (
    "--hidden", "--no-require-git", "--no-config", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude",
    "--no-ignore-parent", "--glob=!.git", "--glob=!.reasonix",
)  # fmt: skip
"""What ripgrep must honour and skip to list what the walk lists (shared with grep)."""


def path_order(rel: str) -> str:
    """Sort key: names compared directory by directory (``a/b`` before ``a.py``), as the walk yields them."""
    return rel.replace("/", "\0")


def fast_matcher(spec: pathspec.GitIgnoreSpec, deadline: Deadline | None = None) -> Callable[[str], bool]:
    """``spec.match_file`` as one compiled regex when no pattern negates (the usual case), else ``spec`` itself;
    matched within ``deadline`` (:mod:`sessions.tools.search.patterns`: ``spec`` from ``bounded_spec`` is too)."""
    active = [p for p in spec.patterns if p.include is not None]
    if any(not p.include for p in active):
        return spec.match_file
    if not active:
        return lambda rel: False
    combined = "|".join(f"(?:{p.regex.pattern.replace('(?P<ps_d>/)', '/')})" for p in active if p.regex is not None)
    match = TimedRegex(combined, deadline or Deadline(), described(spec)).match
    return lambda rel: match(rel) is not None


class AboveRules:
    """The ``.gitignore`` rules of the directories from the workspace root down to (not including) ``start``."""

    def __init__(self, rules: IgnoreRules, start: Path) -> None:
        self.rules = rules
        rel = start.relative_to(rules.root)
        chain = [rules.root / Path(*rel.parts[:depth]) for depth in range(len(rel.parts))]
        self.specs: list[tuple[str, Callable[[str], bool]]] = []
        for directory in chain:
            spec = rules.spec(directory)
            if spec is not None:
                prefix = directory.relative_to(rules.root).as_posix()
                self.specs.append(("" if prefix == "." else prefix + "/", fast_matcher(spec, rules.deadline)))

    def keeps(self, rel: str) -> bool:
        """Whether ``rel`` (relative to the root, under ``start``) is kept by those rules."""
        return not any(m(rel[len(prefix) :]) for prefix, m in self.specs)


def rg_error(stderr: bytes | bytearray) -> str:
    """What ripgrep said went wrong, without its lines about one file (``rg: PATH: … (os error N)``): those name
    paths as ripgrep walked them by path, perhaps through a directory swapped for a symlink out (not confirmed, so
    never shown); a file that vanished or cannot be read is left out, as the walk leaves it out."""
    lines = stderr.decode("utf-8", errors="replace").splitlines()
    return "\n".join(line for line in lines if "(os error " not in line).strip()


def rg_files(rg: str, root: Path, start: Path, *, honour_ignore: bool) -> list[str]:
    """Files under ``start`` per ``rg --files``, relative to the workspace root."""
    real_root = root.resolve()
    where = start.relative_to(real_root).as_posix() or "."
    argv = [rg, "--files", "--null", "--color=never", *RG_FILTERS, *(() if honour_ignore else ("--no-ignore",))]
    proc = subprocess.run([*argv, "--", where], cwd=real_root, capture_output=True, stdin=subprocess.DEVNULL)
    message = rg_error(proc.stderr)
    if proc.returncode not in (0, 1) and message:  # 1: nothing listed
        raise ToolError(f"listing files failed: {message}")
    names = [n.decode("utf-8", errors="surrogateescape") for n in proc.stdout.split(b"\0") if n]
    names = [n.removeprefix("./") for n in names]
    if honour_ignore and start != real_root:
        above = AboveRules(IgnoreRules(real_root), start)
        if above.specs:
            names = [n for n in names if above.keeps(n)]
    with HeldTree(GatewayRoot(real_root)) as tree:  # ripgrep walks by path: keep only what is there beneath the root
        return [n for n in names if tree.is_file(n)]


def walk_names(root: Path, start: Path, *, honour_ignore: bool) -> Iterable[str]:
    """Files under ``start`` per the Python walk, relative to the workspace root."""
    real_root = root.resolve()
    for file in walk_files(real_root, start, honour_ignore=honour_ignore):
        yield file.relative_to(real_root).as_posix()
