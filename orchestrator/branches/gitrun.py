"""Running git for a branch: on the checkpoints' shadow store (never the user's ``.git``), with the work tree, index
and extra exclude file of the caller's choice. The environment and the flags are the shadow store's (no user config,
no hooks, no fsmonitor, no attributes but the store's own: see :mod:`orchestrator.checkpoints.git`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.branches.outcome import BranchError
from orchestrator.checkpoints.git import SAFE_FLAGS, ShadowRepo, find_git


@dataclass(frozen=True)
class BranchGit:
    """One way of calling git: ``git_dir`` (the shadow store or one of its worktrees), a work tree and an index."""

    repo: ShadowRepo
    git_dir: Path
    work_tree: Path
    index_file: Path | None
    """``None``: git's own choice (for ``git worktree add``, which must write the new worktree's index)."""
    excludes_file: Path | None = None

    def env(self) -> dict[str, str]:
        env = self.repo.env()
        env["GIT_DIR"] = str(self.git_dir)
        if self.index_file is None:
            env.pop("GIT_WORK_TREE", None)
            env.pop("GIT_INDEX_FILE", None)
        else:
            env["GIT_WORK_TREE"] = str(self.work_tree)
            env["GIT_INDEX_FILE"] = str(self.index_file)
        return env

    async def __call__(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> bytes:
        return (await self.run(*args, stdin=stdin, ok_codes=ok_codes))[1]

    async def run(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> tuple[int, bytes]:
        """``git ARGS``: its exit status and stdout. Raises :class:`BranchError` with git's words otherwise."""
        exe = find_git()
        if exe is None:
            raise BranchError(
                "git is not installed (or not on PATH): parallel branches need it; set [goal] parallel = 1"
            )
        cmd = [exe, *SAFE_FLAGS]
        if self.excludes_file is not None:
            cmd += ["-c", f"core.excludesFile={self.excludes_file}"]
        proc = await trio.run_process(
            [*cmd, *args],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=self.env(),
            cwd=str(self.work_tree),
        )
        if proc.returncode not in ok_codes:
            err = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
            raise BranchError(f"git {args[0]} failed for a branch copy of {self.repo.workspace}: {err}")
        out: bytes = proc.stdout
        return proc.returncode, out


def exclude_line(rel: str) -> str:
    """An ignore pattern matching exactly ``rel`` (a file, a directory or a symlink), anchored at the root."""
    escaped = "".join("\\" + ch if ch in "*?[]\\!# " else ch for ch in rel.rstrip("/"))
    return "/" + escaped
