"""A branch's own copy of the workspace: a worktree of the checkpoints' shadow store (DESIGN §5: never the user's
``.git``) checked out from a snapshot of the live workspace as it is now, uncommitted and untracked files included.

- The snapshot is a tree in the shadow store, written from a private index (a copy of the checkpoints' index, so
  git's stat cache re-hashes only what changed). It is the merge base.
- The copy is ``git worktree add`` of that snapshot under ``<run_dir>/branches/<step_id>``: modes and symlinks as
  stored, and a ``.git`` file that keeps git commands run in the branch away from the user's repository. Reasonix
  never reads that file back (the branch's session may rewrite it): the worktree's git directory, inside the shadow
  store, is taken once when the copy is made and checked to be one of the store's worktrees.
- Ignored directories (``.venv``, ``node_modules``, build caches) are symlinked to the live ones, so verify commands
  find them; ignored files are copied. Neither is ever merged back. ``.reasonix/`` is never copied.
- Commands in the branch get :meth:`BranchWorkspace.env`: the branch's ``src/`` and root ahead of Python's import
  path, so a package installed in editable mode from the live workspace (whose ``.venv`` the branch shares) is
  imported from the branch's files, not the live ones.
- The shadow store's worktree admin entries are pruned on :meth:`BranchWorkspace.discard` and on the next open.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

import trio

from orchestrator.branches.gitrun import BranchGit, exclude_line
from orchestrator.branches.merge import merge_branch
from orchestrator.branches.outcome import BranchError, MergeOutcome
from orchestrator.checkpoints.git import CheckpointError, ShadowRepo, split_nul
from orchestrator.checkpoints.stage import stage_all

BRANCHES_DIR = "branches"
BASE_TREE = "base.tree"
"""In a copy's state folder: the tree it was made from, so a resumed writing subagent can go on in its copy."""
_admin_locks: dict[Path, trio.Lock] = {}


def _admin_lock(git_dir: Path) -> trio.Lock:
    """One lock per shadow store for what touches its shared admin files (init, config, worktree add/prune)."""
    return _admin_locks.setdefault(git_dir, trio.Lock())


class BranchWorkspace:
    """One step's isolated copy of the workspace; see the module docstring."""

    path: Path
    """The branch's own copy of the workspace: its session's tools and its verify commands work here."""
    step_id: str

    def __init__(self, *, workspace: Path, path: Path, state: Path, step_id: str, base_tree: str, admin: Path) -> None:
        self.workspace = workspace
        self.admin = admin
        """The worktree's git directory in the shadow store (``<store>/git/worktrees/<name>``)."""
        self.path = path
        self.state = state
        self.step_id = step_id
        self.base_tree = base_tree
        self.repo = ShadowRepo(workspace)

    @classmethod
    async def open(cls, workspace: Path, run_dir: Path, step_id: str) -> BranchWorkspace:
        """Snapshot the live workspace now into ``run_dir/branches/<step_id>``; an existing copy for the step (left
        by an interrupted run) is thrown away and made anew. Raises :class:`BranchError` when git or the file
        system fails (the goal can then run the step in the live workspace instead)."""
        try:
            return await cls._open(workspace, run_dir, step_id)
        except OSError as exc:
            raise BranchError(f"cannot make a copy of the workspace for step {step_id} under {run_dir}: {exc}") from exc

    @classmethod
    async def reopen(cls, workspace: Path, run_dir: Path, step_id: str) -> BranchWorkspace | None:
        """The copy an interrupted run left for ``step_id``, as it was left, or None when there is no whole one (the
        copy, its base snapshot and its entry in the shadow store, pointing at each other)."""
        workspace, path = await trio.to_thread.run_sync(_resolve, workspace, run_dir / BRANCHES_DIR / step_id)
        state = path.with_name(f".{step_id}.state")
        repo = ShadowRepo(workspace)
        try:
            base_tree = (state / BASE_TREE).read_text(encoding="ascii").strip()
            admin = _worktree_admin(repo, path)
            back = Path((admin / "gitdir").read_text(encoding="utf-8").strip())
        except (OSError, UnicodeError, BranchError):
            return None
        whole = (state / "base.index").is_file() and (state / "exclude").is_file() and back == path / ".git"
        if not whole or len(base_tree) not in (40, 64) or any(c not in "0123456789abcdef" for c in base_tree):
            return None
        return cls(workspace=workspace, path=path, state=state, step_id=step_id, base_tree=base_tree, admin=admin)

    @classmethod
    async def _open(cls, workspace: Path, run_dir: Path, step_id: str) -> BranchWorkspace:
        workspace, path = await trio.to_thread.run_sync(_resolve, workspace, run_dir / BRANCHES_DIR / step_id)
        state = path.with_name(f".{step_id}.state")
        repo = ShadowRepo(workspace)
        async with _admin_lock(repo.git_dir):
            try:
                await repo.ensure()
            except CheckpointError as exc:
                raise BranchError(f"cannot make a copy of the workspace for step {step_id}: {exc}") from exc
            await trio.to_thread.run_sync(_remove, path, state)
            await _prune(repo)
        state.mkdir(parents=True)
        base_index = state / "base.index"
        if repo.index_file.is_file():  # the checkpoints' stat cache: only files changed since are hashed again
            await trio.to_thread.run_sync(shutil.copyfile, repo.index_file, base_index)
        live = BranchGit(repo, repo.git_dir, workspace, base_index)
        await stage_all(live, workspace)
        base_tree = (await live("write-tree")).decode().strip()
        (state / BASE_TREE).write_text(base_tree + "\n", encoding="ascii")
        commit = (await live("commit-tree", base_tree, "-m", f"branch {step_id} base")).decode().strip()
        ignored = split_nul(await live("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"))
        ignored = [p for p in ignored if not _never_copied(p)]
        async with _admin_lock(repo.git_dir):
            admin = BranchGit(repo, repo.git_dir, workspace, None)
            await admin("worktree", "add", "--detach", "--force", "--quiet", str(path), commit)
        admin_dir = _worktree_admin(repo, path)
        branch = cls(workspace=workspace, path=path, state=state, step_id=step_id, base_tree=base_tree, admin=admin_dir)
        shared = await trio.to_thread.run_sync(_link_ignored, workspace, path, ignored)
        (state / "exclude").write_text("".join(exclude_line(p) + "\n" for p in shared), encoding="utf-8")
        return branch

    def branch_git(self) -> BranchGit:
        """Git on the branch's worktree (its own index, the shadow store's objects)."""
        if not self.path.is_dir() or not self.admin.is_dir():
            raise BranchError(
                f"the copy of the workspace for step {self.step_id} at {self.path} is gone; run the step again"
            )
        return BranchGit(self.repo, self.admin, self.path, self.admin / "index", self.state / "exclude")

    def env(self) -> dict[str, str]:
        """Environment overrides for commands run in the branch (its session's bash, its verify commands).

        An editable install of the project (``pip install -e .``, in the ``.venv`` the branch shares with the live
        workspace) points Python at the live workspace's files; ``PYTHONPATH`` comes before it, so the branch's
        ``src/`` (when there is one) and root are imported first. The caller's own ``PYTHONPATH`` follows."""
        paths = [str(p) for p in (self.path / "src", self.path) if p.is_dir()]
        inherited = os.environ.get("PYTHONPATH", "")
        return {"PYTHONPATH": os.pathsep.join([*paths, *([inherited] if inherited else [])])}

    async def merge_back(self, declared_writes: Sequence[str]) -> MergeOutcome:
        """Three-way merge of the branch's changes into the live workspace (base: the snapshot at open; theirs: the
        branch now; ours: the live workspace now). All or nothing: on a conflict or a write outside
        ``declared_writes`` (paths, directories or globs) nothing is applied, and the outcome says which and why.
        Raises :class:`BranchError` when git or the file system fails."""
        try:
            return await self._merge_back(declared_writes)
        except OSError as exc:
            raise BranchError(
                f"step {self.step_id} could not be merged back into {self.workspace}: {exc}; the workspace may hold"
                " part of its changes: look at the files the step writes, or run it again"
            ) from exc

    async def _merge_back(self, declared_writes: Sequence[str]) -> MergeOutcome:
        theirs = self.branch_git()
        await stage_all(theirs, self.path)
        theirs_tree = (await theirs("write-tree")).decode().strip()
        ours_index = self.state / "ours.index"
        await trio.to_thread.run_sync(shutil.copyfile, self.state / "base.index", ours_index)
        ours = BranchGit(self.repo, self.repo.git_dir, self.workspace, ours_index)
        await stage_all(ours, self.workspace)
        ours_tree = (await ours("write-tree")).decode().strip()
        return await merge_branch(
            ours,
            base=self.base_tree,
            ours=ours_tree,
            theirs=theirs_tree,
            declared=tuple(declared_writes),
            scratch=self.state,
        )

    async def discard(self) -> None:
        """Remove the copy and its entry in the shadow store (the live workspace's ignored dirs are not followed)."""
        async with _admin_lock(self.repo.git_dir):
            await trio.to_thread.run_sync(_remove, self.path, self.state)
            await _prune(self.repo)


def _worktree_admin(repo: ShadowRepo, path: Path) -> Path:
    """The git directory ``git worktree add`` made for ``path``: read from its fresh ``.git`` file (nothing has run
    in the copy yet), and only if it is one of the shadow store's worktrees."""
    text = (path / ".git").read_text(encoding="utf-8")
    admin = Path(text.removeprefix("gitdir:").strip()).resolve()
    if admin.parent != (repo.git_dir / "worktrees").resolve():
        raise BranchError(f"git made the copy for {path} with a git directory outside the checkpoint store: {admin}")
    return admin


def _never_copied(rel: str) -> bool:
    """``.reasonix/`` at the top, and any ``.git`` (an embedded repository's store is not the branch's to share)."""
    parts = rel.rstrip("/").split("/")
    return parts[0] == ".reasonix" or ".git" in parts


def _resolve(*paths: Path) -> tuple[Path, ...]:
    return tuple(p.resolve() for p in paths)


async def _prune(repo: ShadowRepo) -> None:
    if (repo.git_dir / "worktrees").is_dir():
        await BranchGit(repo, repo.git_dir, repo.workspace, repo.index_file)("worktree", "prune")


def _remove(*paths: Path) -> None:
    for p in paths:
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.exists():
            shutil.rmtree(p)  # unlinks symlinks inside, never follows them


def _link_ignored(workspace: Path, branch: Path, ignored: list[str]) -> list[str]:
    """Make the live workspace's ignored entries usable in the branch: directories symlinked, files copied. Returns
    the entries symlinked (they are excluded from the branch's tree; copied files stay ignored by the rules)."""
    shared = []
    for rel in ignored:
        rel = rel.rstrip("/")
        src, dst = workspace / rel, branch / rel
        try:
            st = os.lstat(src)
        except OSError:
            continue
        if os.path.lexists(dst):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if stat.S_ISDIR(st.st_mode):
            os.symlink(src, dst, target_is_directory=True)
            shared.append(rel)
        elif stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(src), dst)
        elif stat.S_ISREG(st.st_mode):
            shutil.copy2(src, dst)
    return shared
