"""The shadow repository: ``<workspace>/.reasonix/checkpoints/git`` with its own index, the workspace as work tree.

Every call goes through :meth:`ShadowRepo.git`: a subprocess (``trio.run_process``) with an environment built from
scratch: ``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_INDEX_FILE`` point at the shadow store, no system or global config
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), no hooks (``core.hooksPath=/dev/null``), a fixed author
and committer. The user's ``.git``, index, stash and branches are never read or written. The index persists between
checkpoints, so git's stat cache re-hashes only the files that changed.

The workspace's ignore rules apply (its ``.gitignore`` files, and its ``.git/info/exclude`` copied into the shadow's
``info/exclude``); ``.reasonix/`` and ``.git/`` are always left out.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from orchestrator.errors import ReasonixError

STATE_DIR = Path(".reasonix") / "checkpoints"
AUTHOR = "Reasonix checkpoints"
EMAIL = "checkpoints@reasonix.invalid"
HEAD_REF = "refs/reasonix/head"
"""Every checkpoint commit has the previous one as parent, so this one ref keeps them all reachable."""
ALWAYS_EXCLUDED = ("/.reasonix/", ".git")
SETTINGS = {
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.symlinks": "true",
    "core.filemode": "true",
    "core.quotePath": "false",
    "core.untrackedCache": "true",
    "core.fsmonitor": "false",
    "core.bare": "false",
    "gc.auto": "0",
    "core.looseCompression": "1",
    "commit.gpgSign": "false",
    "advice.addEmbeddedRepo": "false",
    "advice.detachedHead": "false",
}


class CheckpointError(ReasonixError):
    """A checkpoint could not be taken or restored: git failed on the shadow store (the message has git's words)."""


class GitUnavailableError(CheckpointError):
    """The machine has no ``git``: goals run without checkpoints, and undo cannot work."""


def find_git() -> str | None:
    return shutil.which("git")


@dataclass(frozen=True)
class ShadowRepo:
    workspace: Path

    @property
    def state_dir(self) -> Path:
        return self.workspace / STATE_DIR

    @property
    def git_dir(self) -> Path:
        return self.state_dir / "git"

    @property
    def index_file(self) -> Path:
        return self.state_dir / "index"

    def env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.state_dir),
            "LC_ALL": "C",
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.index_file),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": AUTHOR,
            "GIT_AUTHOR_EMAIL": EMAIL,
            "GIT_COMMITTER_NAME": AUTHOR,
            "GIT_COMMITTER_EMAIL": EMAIL,
        }
        for name in ("SYSTEMROOT", "TMPDIR"):  # what git itself may need on some systems
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    async def git(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> bytes:
        """Run ``git ARGS`` on the shadow store; its stdout. Raises :class:`CheckpointError` with git's stderr."""
        exe = find_git()
        if exe is None:
            raise GitUnavailableError("git is not installed (or not on PATH): checkpoints and undo need it")
        cmd = [exe, "-c", f"core.hooksPath={os.devnull}", *args]
        proc = await trio.run_process(
            cmd,
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=self.env(),
            cwd=str(self.workspace),
        )
        if proc.returncode not in ok_codes:
            err = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
            raise CheckpointError(f"git {args[0]} failed on the checkpoint store {self.git_dir}: {err}")
        out: bytes = proc.stdout
        return out

    async def ensure(self) -> None:
        """Create the shadow store on first use; refresh its excludes from the workspace's ``.git/info/exclude``."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if not (self.git_dir / "HEAD").is_file():
            await self.git("init", "--quiet")
            for key, value in SETTINGS.items():
                await self.git("config", key, value)
        self._write_excludes()

    def _write_excludes(self) -> None:
        lines = ["# written by reasonix: the workspace's own excludes, and its state", *ALWAYS_EXCLUDED]
        user = self.workspace / ".git" / "info" / "exclude"
        if user.is_file():
            lines.append(user.read_text(encoding="utf-8", errors="replace"))
        text = "\n".join(lines) + "\n"
        target = self.git_dir / "info" / "exclude"
        if not target.is_file() or target.read_text(encoding="utf-8", errors="replace") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    async def head(self) -> str | None:
        out = await self.git("rev-parse", "--verify", "--quiet", HEAD_REF, ok_codes=(0, 1))
        return out.decode().strip() or None


def split_nul(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def join_nul(paths: Sequence[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
