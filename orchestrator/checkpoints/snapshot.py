"""Taking a checkpoint: the workspace into the shadow store's index and a commit, and a line in the ledger.

Only what changed since the last checkpoint is hashed again: the index persists, so ``git add -A`` trusts its stat
cache for the rest. Files over the size limit are left out (and named); ignored files are left out as git would.
A repository nested in the workspace is stored as plain files, never entered (:mod:`~orchestrator.checkpoints.stage`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.checkpoints.git import HEAD_REF, ShadowRepo, join_nul, split_nul
from orchestrator.checkpoints.ledger import MAX_CHANGES, Checkpoint, FileChange, Kind, Ledger, StepRunRef
from orchestrator.checkpoints.stage import drop_gitlinks, index_nested, index_stamp, new_gitlinks

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are not checkpointed (and the checkpoint says so)."""
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_clean: dict[Path, tuple[int, int, int, int] | None] = {}
"""Index files this process left without a gitlink, with their stamp then: while it holds, the snapshot need not
list the whole index to look for one (``drop_gitlinks``); any other writer of the index changes the stamp."""


@dataclass(frozen=True)
class Tree:
    """The workspace as stored: a commit of the shadow store and its tree."""

    commit: str
    tree: str
    skipped: tuple[str, ...] = ()


async def _listed(repo: ShadowRepo) -> list[str]:
    """Changed and new paths (not ignored); a nested repository git has not been shown as content yet is ``dir/``."""
    return split_nul(await repo.git("ls-files", "-z", "--others", "--modified", "--exclude-standard"))


def _too_big(repo: ShadowRepo, listed: list[str], max_bytes: int) -> list[str]:
    """Those of ``listed`` that are files larger than ``max_bytes``."""
    big = []
    for rel in dict.fromkeys(listed):
        try:
            st = os.lstat(repo.workspace / rel)
        except OSError:
            continue  # deleted
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            big.append(rel)
    return big


def _split(repo: ShadowRepo, listed: list[str], big: set[str]) -> tuple[list[str], list[str]]:
    """Of the listed paths: those that leave the index (too big, or now a directory, whose files are listed
    themselves) and those staged as they are now (a file, a symlink, or gone)."""
    gone, stage = list(big), list[str]()
    for rel in dict.fromkeys(listed):
        if rel in big or rel.endswith("/"):
            continue
        try:
            is_dir = stat.S_ISDIR(os.lstat(repo.workspace / rel).st_mode)
        except OSError:
            is_dir = False  # deleted (or under a path that is no longer a directory): --remove takes it out
        (gone if is_dir else stage).append(rel)
    return gone, stage


async def store_workspace(repo: ShadowRepo, message: str, *, max_file_bytes: int = MAX_FILE_BYTES) -> Tree:
    """Stage the whole workspace in the shadow index and commit it (no commit when nothing changed)."""
    await repo.ensure()
    if _clean.get(repo.index_file) is None or _clean[repo.index_file] != index_stamp(repo.index_file):
        await drop_gitlinks(repo.git)  # the index changed since this process last left it without any
    _clean.pop(repo.index_file, None)
    listed = await _listed(repo)
    if await index_nested(repo.git, repo.workspace, max_bytes=max_file_bytes, listed=listed):
        listed = await _listed(repo)  # the nested repositories' files, now listed one by one
    big = _too_big(repo, listed, max_file_bytes)
    gone, stage = _split(repo, listed, set(big))
    if gone:  # a tracked file that grew too big, or that became a directory, leaves the index
        await repo.git("update-index", "-z", "--force-remove", "--stdin", stdin=join_nul(gone))
    if stage:  # what the listing named, and only that: the workspace is walked once a store
        await repo.git("update-index", "-z", "--add", "--remove", "--replace", "--stdin", stdin=join_nul(stage))
    tree = (await repo.git("write-tree")).decode().strip()
    parent = await repo.head()
    parent_tree = (await repo.git("rev-parse", f"{parent}^{{tree}}")).decode().strip() if parent else EMPTY_TREE
    links = await new_gitlinks(repo.git, parent_tree, tree)
    if links:  # a nested repository made while the workspace was listed: never kept as one
        await repo.git("update-index", "-z", "--force-remove", "--stdin", stdin=join_nul(links))
        tree = (await repo.git("write-tree")).decode().strip()
    _clean[repo.index_file] = index_stamp(repo.index_file)
    if parent is not None and parent_tree == tree:
        return Tree(commit=parent, tree=tree, skipped=tuple(big))
    args = ["commit-tree", tree, "-m", message]
    if parent is not None:
        args += ["-p", parent]
    commit = (await repo.git(*args)).decode().strip()
    await repo.git("update-ref", HEAD_REF, commit)
    return Tree(commit=commit, tree=tree, skipped=tuple(big))


async def changes_between(repo: ShadowRepo, old: str, new: str) -> list[FileChange]:
    """``git diff --name-status`` of two trees (no rename detection: a rename is a D and an A)."""
    if old == new:
        return []
    out = await repo.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
    parts = split_nul(out)
    return [FileChange(status=parts[i], path=parts[i + 1]) for i in range(0, len(parts) - 1, 2)]


async def take_checkpoint(
    repo: ShadowRepo,
    *,
    run_id: str,
    step_id: str,
    kind: Kind,
    since: str | None = None,
    attempt: int = 1,
    undoes: tuple[StepRunRef, ...] = (),
    note: str = "",
    tree: Tree | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> Checkpoint:
    """Snapshot the workspace (or record ``tree``, already stored) and append it to the ledger. ``since``: the tree
    the changes are counted from (by default the previous checkpoint's)."""
    ledger = Ledger(repo.workspace)
    entries = ledger.read()
    if tree is None:
        tree = await store_workspace(repo, f"{run_id} {step_id} {kind}", max_file_bytes=max_file_bytes)
    base = since or (entries[-1].tree if entries else None)
    changes = await changes_between(repo, base, tree.tree) if base is not None else []
    checkpoint = Checkpoint(
        seq=entries[-1].seq + 1 if entries else 1,
        run_id=run_id,
        step_id=step_id,
        kind=kind,
        commit=tree.commit,
        tree=tree.tree,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        attempt=attempt,
        changes=tuple(changes[:MAX_CHANGES]),
        changes_total=len(changes),
        skipped=tree.skipped,
        undoes=undoes,
        note=note,
    )
    ledger.append(checkpoint)
    return checkpoint
