"""Staging a work tree into a Reasonix-owned index without git ever entering a repository nested in it.

Left to itself, ``git add --all`` records a directory holding a ``.git`` (a repository the model made with ``git
init``, or a ``.git`` file pointing anywhere) as a gitlink, and on the next ``add`` asks that repository whether it
is modified by running ``git status`` *inside it*: with its own config, so its ``filter.*.clean``,
``core.fsmonitor`` and the like run on the host. Git recurses into a directory as plain content once the index holds
a path under it, so before each ``add`` every nested repository git reports (an untracked ``dir/``) has its files put
into the index by name (:func:`_walk`, never following a symlink, leaving every ``.git`` out), and any gitlink
already in the index is dropped first. The files of a nested repository are then stored byte for byte like any
other; its ``.git`` is never stored and never opened by git. Git only reads the store's own config and attributes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Protocol

import trio

from orchestrator.checkpoints.git import join_nul, split_nul

GITLINK_MODE = "160000"


class GitCall(Protocol):
    """``git ARGS`` on a Reasonix-owned git directory and index (``ShadowRepo.git``, ``BranchGit``): its stdout."""

    def __call__(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> Awaitable[bytes]: ...


def is_dot_git(name: str) -> bool:
    """A name git treats as a repository's directory (it compares ``.git`` without case)."""
    return name.lower() == ".git"


def _walk(top: Path, rel: str, max_bytes: int | None) -> list[str]:
    """Every regular file and symlink under ``top`` (``rel`` in the work tree), no ``.git`` entry, no symlink
    followed, no file over ``max_bytes``."""
    found: list[str] = []
    for root, dirs, files in os.walk(top, followlinks=False):
        base = Path(root).relative_to(top)
        dirs[:] = [d for d in dirs if not is_dot_git(d)]
        for name in [*files, *dirs]:
            if is_dot_git(name):
                continue
            path = Path(root) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode) or (
                stat.S_ISREG(st.st_mode) and (max_bytes is None or st.st_size <= max_bytes)
            ):
                found.append(f"{rel}{base / name}" if str(base) != "." else f"{rel}{name}")
    return found


async def drop_gitlinks(git: GitCall) -> list[str]:
    """Remove every gitlink from the index (so no later ``add`` asks a nested repository anything); their paths."""
    links = []
    for entry in split_nul(await git("ls-files", "-z", "--stage")):
        meta, _, path = entry.partition("\t")
        if meta.startswith(GITLINK_MODE + " "):
            links.append(path)
    if links:
        await git("update-index", "-z", "--force-remove", "--stdin", stdin=join_nul(links))
    return links


async def new_gitlinks(git: GitCall, old_tree: str, new_tree: str) -> list[str]:
    """Paths that are gitlinks in ``new_tree`` and were not in ``old_tree``: a nested repository that appeared between
    the listing and the ``add`` (cheap: ``diff-tree`` skips the subtrees both share)."""
    parts = split_nul(await git("diff-tree", "-r", "-z", "--no-renames", "--raw", old_tree, new_tree))
    links = []
    for meta, path in zip(parts[::2], parts[1::2], strict=False):
        fields = meta.lstrip(":").split()
        if len(fields) >= 2 and fields[1] == GITLINK_MODE:
            links.append(path)
    return links


def index_stamp(index: Path) -> tuple[int, int, int, int] | None:
    """What tells that an index file was rewritten: inode, size, modification and change times."""
    try:
        st = index.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


async def index_nested(
    git: GitCall, work_tree: Path, *, max_bytes: int | None = None, listed: Sequence[str] | None = None
) -> list[str]:
    """Put the files of every nested repository git sees in ``work_tree`` into the index by name, so the next ``add``
    walks them as plain directories; ignored ones are taken out again. The nested repositories' paths. ``listed``:
    the caller's own ``ls-files --others --exclude-standard`` (saves a walk of the work tree)."""
    if listed is None:
        listed = split_nul(await git("ls-files", "-z", "--others", "--exclude-standard"))
    nested = [p for p in listed if p.endswith("/")]
    if not nested:
        return []
    paths: list[str] = []
    for rel in nested:
        paths += await trio.to_thread.run_sync(_walk, work_tree / rel, rel, max_bytes)
    if paths:
        await git("update-index", "--add", "-z", "--stdin", stdin=join_nul(paths))
        specs = [f":(literal){rel}" for rel in nested]
        ignored = split_nul(await git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard", "--", *specs))
        if ignored:
            await git("update-index", "-z", "--force-remove", "--stdin", stdin=join_nul(ignored))
    return nested


async def stage_all(
    git: GitCall,
    work_tree: Path,
    specs: Sequence[str] = (".",),
    *,
    max_bytes: int | None = None,
) -> None:
    """``git add --all`` of ``specs`` with every nested repository stored as content (see the module docstring); a
    gitlink the ``add`` recorded all the same (a repository made meanwhile) leaves the index before anything reads it.
    """
    await drop_gitlinks(git)
    await index_nested(git, work_tree, max_bytes=max_bytes)
    await git("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=join_nul(list(specs)))
    await drop_gitlinks(git)
