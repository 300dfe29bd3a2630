"""Real git repositories for the branch, checkpoint and undo tests (the user's git, with no global config), what the
user's git knows about one, and every byte, mode and link target of a tree."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.support.parts import require

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "u",
    "GIT_AUTHOR_EMAIL": "u@example.com",
    "GIT_COMMITTER_NAME": "u",
    "GIT_COMMITTER_EMAIL": "u@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def user_git(ws: Path, *args: str) -> str:
    require("git")
    return subprocess.run(["git", *args], cwd=ws, env=GIT_ENV, check=True, capture_output=True, text=True).stdout


def make_repo(ws: Path, files: dict[str, str], *, commit: bool = True) -> Path:
    ws.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    user_git(ws, "init", "-q", "-b", "main")
    if commit:
        user_git(ws, "add", "-A")
        user_git(ws, "commit", "-q", "-m", "init")
    return ws


def user_repo_state(ws: Path) -> dict[str, str]:
    """What the user's git knows, asked of git itself (for work that may rewrite the workspace's files and put them
    back, which refreshes the index's stat data)."""
    return {
        "head": user_git(ws, "rev-parse", "HEAD"),
        "index": user_git(ws, "ls-files", "--stage"),
        "staged": user_git(ws, "diff", "--cached"),
        "stash": user_git(ws, "stash", "list"),
        "branches": user_git(ws, "branch", "-a", "-v"),
        "refs": user_git(ws, "for-each-ref"),
        "config": user_git(ws, "config", "--local", "--list"),
    }


def user_repo_bytes(ws: Path) -> dict[str, object]:
    """What the user's git knows, asked of git itself, and the index file's bytes (for work that must never touch the
    workspace at all)."""
    return {
        "head": user_git(ws, "rev-parse", "HEAD"),
        "status": user_git(ws, "status", "--porcelain", "--ignored"),
        "index": (ws / ".git" / "index").read_bytes(),
        "stash": user_git(ws, "stash", "list"),
        "branches": user_git(ws, "branch", "-a", "-v"),
        "refs": user_git(ws, "for-each-ref"),
        "worktrees": user_git(ws, "worktree", "list", "--porcelain"),
        "config": user_git(ws, "config", "--local", "--list"),
    }


def tree_state(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every path under ``root`` (outside .git and .reasonix): kind + mode, and its bytes or link target."""
    out: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".reasonix")]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st_ = os.lstat(path)
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(path).encode())
            else:
                out[rel] = (f"file {stat.S_IMODE(st_.st_mode) & 0o111:o}", path.read_bytes())
    return out
