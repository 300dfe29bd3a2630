"""Real git repositories and plain directories for the branch tests, and what the user's git knows about them."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "u",
    "GIT_AUTHOR_EMAIL": "u@example.com",
    "GIT_COMMITTER_NAME": "u",
    "GIT_COMMITTER_EMAIL": "u@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def user_git(ws: Path, *args: str) -> str:
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


def user_repo_state(ws: Path) -> dict[str, object]:
    """What the user's git knows, asked of git itself, and the index file's bytes."""
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
                out[rel] = (oct(st_.st_mode & 0o111 != 0), path.read_bytes())
    return out
