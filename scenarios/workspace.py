"""A scenario's workspace as it is on a real machine (issue 18): besides text files, binary files (base64), file
modes, symlinks (inside the workspace or pointing out of it) and a git repository with history.

The workspace is built in this order: the git history (each commit's files written and committed with a fixed author
and date, so commit ids are the same on every replay), then the folder's ``workspace/`` files, the inline
``workspace`` texts and the ``files`` entries on top — so anything that differs from the last commit shows as an
uncommitted change, as in a user's working tree.
"""

from __future__ import annotations

import base64
import binascii
import os
import subprocess
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Scenario Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Scenario Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
EPOCH = 1_767_225_600
"""2026-01-01T00:00:00Z: commit N is dated EPOCH + N hours."""


class WorkspaceSpecError(ValueError):
    """A workspace entry cannot be written (a path that climbs out, a git failure)."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _relative(path: str) -> str:
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"workspace path {path!r} must be relative and stay inside the workspace")
    return p.as_posix()


class WorkspaceFile(_Spec):
    """One entry: exactly one of ``text``, ``base64`` (binary contents) or ``symlink`` (the link's target as written:
    relative, absolute, inside or outside the workspace). ``mode`` is octal (``"755"``) for a file."""

    path: str
    text: str | None = None
    base64: str | None = None
    symlink: str | None = None
    mode: str | None = Field(default=None, pattern=r"^[0-7]{3,4}$")

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        return _relative(value)

    @model_validator(mode="after")
    def _one_kind(self) -> WorkspaceFile:
        if sum(x is not None for x in (self.text, self.base64, self.symlink)) != 1:
            raise ValueError(f"workspace entry {self.path!r}: give exactly one of text, base64, symlink")
        if self.symlink is not None and self.mode is not None:
            raise ValueError(f"workspace entry {self.path!r}: a symlink has no mode")
        if self.base64 is not None:
            try:
                base64.b64decode(self.base64, validate=True)
            except binascii.Error as exc:
                raise ValueError(f"workspace entry {self.path!r}: base64 does not decode ({exc})") from None
        return self

    def data(self) -> bytes:
        if self.base64 is not None:
            return base64.b64decode(self.base64)
        return (self.text or "").encode("utf-8")


class GitCommit(_Spec):
    message: str = Field(min_length=1)
    files: dict[str, str | None] = Field(default_factory=dict)
    """Path → text written before the commit; ``null`` deletes the file."""


class GitHistory(_Spec):
    """The workspace is a git repository with these commits (oldest first) on branch ``branch``."""

    commits: tuple[GitCommit, ...] = Field(min_length=1)
    branch: str = "main"


def _git(ws: Path, *args: str, at: int = EPOCH) -> None:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"@{at} +0000", "GIT_COMMITTER_DATE": f"@{at} +0000"}
    done = subprocess.run(["git", *args], cwd=ws, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WorkspaceSpecError(f"git {' '.join(args)} failed in the scenario workspace: {done.stderr.strip()}")


def write_git_history(ws: Path, history: GitHistory) -> None:
    _git(ws, "init", "-q", "-b", history.branch)
    for n, commit in enumerate(history.commits, start=1):
        for rel, text in commit.files.items():
            path = ws / _relative(rel)
            if text is None:
                path.unlink(missing_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        _git(ws, "add", "-A")
        _git(ws, "commit", "-q", "--allow-empty", "-m", commit.message, at=EPOCH + 3600 * n)


def write_entry(ws: Path, entry: WorkspaceFile) -> None:
    path = ws / entry.path
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    if entry.symlink is not None:
        path.symlink_to(entry.symlink)
        return
    path.write_bytes(entry.data())
    if entry.mode is not None:
        path.chmod(int(entry.mode, 8))


def folder_entries(folder: Path) -> list[WorkspaceFile]:
    """A scenario folder's ``workspace/`` as entries: symlinks kept as links, executable bits kept, other files as
    text when they decode as UTF-8, else base64."""
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            out.append(WorkspaceFile(path=rel, symlink=os.readlink(path)))
        elif path.is_file():
            data = path.read_bytes()
            mode = f"{path.stat().st_mode & 0o777:o}" if path.stat().st_mode & 0o111 else None
            try:
                out.append(WorkspaceFile(path=rel, text=data.decode("utf-8"), mode=mode))
            except UnicodeDecodeError:
                out.append(WorkspaceFile(path=rel, base64=base64.b64encode(data).decode("ascii"), mode=mode))
    return out
