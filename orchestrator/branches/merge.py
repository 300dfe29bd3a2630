"""Merging a branch back: a three-way merge of trees in the shadow store (base: the snapshot the branch began from;
theirs: the branch now; ours: the live workspace now) applied to the live workspace's files, all or nothing.

A path the branch changed and the workspace did not is taken from the branch (file, mode, symlink, deletion). A path
both changed the same way is left alone. A text file both changed differently is merged line by line with
``git merge-file``; any other change on both sides (a binary file, a symlink, a deletion against an edit, modes that
disagree, overlapping lines) is a conflict. So is a path the branch changed outside the step's declared writes. When
there is any conflict or undeclared write, nothing is applied. Tools' caches (``__pycache__`` and the like, see
:mod:`orchestrator.checkpoints.caches`) are neither merged nor counted as undeclared writes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.branches.gitrun import BranchGit
from orchestrator.branches.outcome import BranchError, MergeOutcome
from orchestrator.checkpoints.caches import is_tool_cache
from orchestrator.checkpoints.git import split_nul
from plans import paths_overlap
from sessions.tools import ToolError
from sessions.tools.gateway import GIT_DIR, GatewayRoot

ZERO = "0" * 40
LINK, GITLINK, EXEC = 0o120000, 0o160000, 0o100755


@dataclass(frozen=True)
class PathChange:
    """One path of ``git diff-tree --raw``: the entry before and after (mode 0 and sha ``ZERO`` when absent)."""

    old_mode: int
    new_mode: int
    old_sha: str
    new_sha: str

    @property
    def deleted(self) -> bool:
        return self.new_mode == 0


@dataclass(frozen=True)
class Write:
    """What to do to one path of the live workspace: write ``data`` with ``mode``, or delete it (``mode`` 0)."""

    path: str
    mode: int
    data: bytes = b""


async def diff(git: BranchGit, old: str, new: str) -> dict[str, PathChange]:
    if old == new:
        return {}
    parts = split_nul(await git("diff-tree", "-r", "-z", "--no-renames", "--raw", old, new))
    out = {}
    for meta, path in zip(parts[::2], parts[1::2], strict=True):
        old_mode, new_mode, old_sha, new_sha, _status = meta.lstrip(":").split(" ")
        out[path] = PathChange(int(old_mode, 8), int(new_mode, 8), old_sha, new_sha)
    return out


async def read_blobs(git: BranchGit, shas: Sequence[str]) -> dict[str, bytes]:
    """The content of each blob, in one ``git cat-file --batch``."""
    wanted = sorted({s for s in shas if s != ZERO})
    if not wanted:
        return {}
    out = await git("cat-file", "--batch", stdin="".join(s + "\n" for s in wanted).encode())
    blobs, pos = {}, 0
    for sha in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode().split(" ")
        size = int(header[2])
        blobs[sha] = out[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def _binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


async def _merge_text(git: BranchGit, scratch: Path, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """``git merge-file`` of three texts: the merged bytes, or ``None`` when lines overlap."""
    files = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        f = scratch / f"merge.{name}"
        f.write_bytes(data)
        files.append(str(f))
    code, out = await git.run("merge-file", "-p", *files, ok_codes=range(128))
    return out if code == 0 else None


def _in_the_way(workspace: Path, rel: str, deleted: set[str]) -> str | None:
    """Why ``rel`` cannot be written in the live workspace (a file or symlink where a directory is needed), if so;
    ``deleted``: the paths this merge deletes first."""
    parts = rel.split("/")
    for cut in range(1, len(parts)):
        if "/".join(parts[:cut]) in deleted:
            return None
        parent = workspace.joinpath(*parts[:cut])
        try:
            st = os.lstat(parent)
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return f"{'/'.join(parts[:cut])} is a file in the workspace, the branch needs a directory there"
    target = workspace / rel
    if target.is_dir() and not target.is_symlink() and not any(d.startswith(rel + "/") for d in deleted):
        return "a directory in the workspace, a file in the branch"
    return None


async def merge_branch(
    git: BranchGit,
    *,
    base: str,
    ours: str,
    theirs: str,
    declared: Sequence[str],
    scratch: Path,
) -> MergeOutcome:
    """Plan the merge of ``theirs`` into the live workspace (``git``'s work tree) and apply it, or apply nothing."""
    workspace = git.work_tree
    mine, live = await diff(git, base, theirs), await diff(git, base, ours)
    mine = {p: c for p, c in mine.items() if GITLINK not in (c.old_mode, c.new_mode) and not is_tool_cache(p)}
    changed = tuple(sorted(mine))
    undeclared = tuple(p for p in changed if not any(paths_overlap(p, d) for d in declared))
    both = {
        p: (c, live[p])
        for p, c in mine.items()
        if p in live and (c.new_mode, c.new_sha) != (live[p].new_mode, live[p].new_sha)
    }
    blobs = await read_blobs(
        git,
        [c.new_sha for c in mine.values()]
        + [x.old_sha for c, x in both.values()]
        + [x.new_sha for _, x in both.values()],
    )
    deleted = {p for p, c in mine.items() if c.deleted and p not in live}
    why: dict[str, str] = {}
    writes: list[Write] = []
    for path, c in mine.items():
        if path in live and path not in both:
            continue  # the workspace already has the same change
        if path in both:
            o = both[path][1]
            if c.deleted or o.deleted:
                why[path] = "deleted on one side, changed on the other"
                continue
            if LINK in (c.new_mode, o.new_mode):
                why[path] = "a symlink changed on both sides"
                continue
            if c.new_mode != o.new_mode and c.old_mode not in (c.new_mode, o.new_mode):
                why[path] = "its mode changed differently on both sides"
                continue
            texts = (blobs.get(c.old_sha, b""), blobs[o.new_sha], blobs[c.new_sha])
            if any(_binary(t) for t in texts):
                why[path] = "a binary file changed on both sides"
                continue
            merged = await _merge_text(git, scratch, texts[0], texts[1], texts[2])
            if merged is None:
                why[path] = "both changed the same lines"
                continue
            mode = c.new_mode if c.new_mode != c.old_mode else o.new_mode
            writes.append(Write(path, mode, merged))
        else:
            if not c.deleted:
                blocked = _in_the_way(workspace, path, deleted)
                if blocked:
                    why[path] = blocked
                    continue
            writes.append(Write(path, c.new_mode, b"" if c.deleted else blobs[c.new_sha]))
    conflicts = tuple(sorted(why))
    if conflicts or undeclared:
        refused = MergeOutcome(
            merged=False,
            changed=changed,
            conflicts=conflicts,
            why=tuple(why[p] for p in conflicts),
            undeclared=undeclared,
            declared=tuple(declared),
        )
        said = ". ".join(c for c in (refused.conflicts_said(), refused.undeclared_said()) if c)
        return refused.model_copy(update={"reason": f"nothing in the workspace was changed: {said}."})
    writes.sort(key=lambda w: w.mode != 0)  # deletions first: a file may become a directory or the other way round
    await trio.to_thread.run_sync(_apply, workspace, writes)
    said = f"{len(changed)} changed file{'s' if len(changed) != 1 else ''}" if changed else "no changes"
    return MergeOutcome(
        merged=True, changed=changed, declared=tuple(declared), reason=f"merged {said} into the workspace"
    )


def _apply(workspace: Path, writes: Sequence[Write]) -> None:
    """Write the merge into the live workspace through the gateway: beneath a descriptor held on the workspace, never
    through a symlink by name (a directory swapped for a link meanwhile cannot send a byte outside), a link itself
    replaced or removed rather than followed. ``.git`` is never entered (the store keeps none in a tree)."""
    root = GatewayRoot(workspace, refused=frozenset({GIT_DIR}))
    try:
        for w in writes:
            if w.mode == 0:
                root.remove(w.path)
            elif w.mode == LINK:
                root.symlink(w.path, os.fsdecode(w.data))
            else:
                current = root.stat(w.path, follow_last=False)
                perms = 0o644
                if current is not None and stat.S_ISREG(current.st_mode):
                    perms = stat.S_IMODE(current.st_mode) & ~0o111
                if w.mode == EXEC:
                    perms |= (perms & 0o444) >> 2
                root.write(w.path, w.data, mode=perms, follow_last=False)
    except ToolError as exc:
        raise BranchError(f"merging into the workspace stopped: {exc.message}") from None
