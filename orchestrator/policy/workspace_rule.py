"""Where a session may not run: ``/``, every top-level and system directory, the user's home and what holds it.

A session's commands write anywhere in their workspace: in ``$HOME`` that is ``~/.bashrc`` and ``~/.gitconfig`` (run
by the user's next shell and git), in ``/`` or a system directory the system's own files (issue 43 item 17). Every
front end that runs a session refuses such a workspace through :func:`check_workspace` (given
what to do instead), and serve's goal start API through :func:`workspace_refusal` itself.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from orchestrator.errors import ReasonixError

SYSTEM_TREES = tuple(
    Path(f"/{p}")
    for p in ["bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "sys", "usr"]
)
"""Directories that belong to the system, with everything under them: never a workspace."""
CD_INTO_A_PROJECT = "cd into a project directory (or pass --workspace DIR) and start again"


def _homes() -> list[Path]:
    """The user's home: ``$HOME`` and the password database's, resolved (they may differ)."""
    found = [Path(os.environ["HOME"])] if os.environ.get("HOME") else []
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        found.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return [home.resolve() for home in found if home.is_absolute()]


def workspace_refusal(path: Path) -> str | None:
    """Why the resolved ``path`` may not hold a session (what it is and what that would expose), or None.

    A session's commands write anywhere in their workspace: in ``$HOME`` that is ``~/.bashrc`` and ``~/.gitconfig``
    (run by the user's next shell and git), in ``/`` or a system directory the system's own files. So ``/``, every
    top-level directory (``/usr``, ``/etc``, ``/var``, ``/home``, ``/tmp`` …), everything in a system tree
    (:data:`SYSTEM_TREES`), the user's home and each directory that holds it are refused, by every front end."""
    if path == Path("/"):
        return "is the root directory (a system directory): a session there could change any file of the system"
    for home in _homes():
        if path == home:
            return "is your home directory: a session there could change every file in it, ~/.bashrc too"
        if home.is_relative_to(path):
            return f"holds your home directory ({home}): a session there could change every file in it"
    if path.parent == Path("/") or any(path.is_relative_to(tree) for tree in SYSTEM_TREES):
        return "is a system directory: a session there could change the system's own files"
    return None


class WorkspaceError(ReasonixError):
    """The user is at fault: the workspace is not a directory we can work in."""


def check_workspace(workspace: Path, session: str | None = None) -> Path:
    """The resolved directory; with ``session`` (what to do instead), never ``$HOME``, ``/`` or a system directory.
    Here, not in :mod:`orchestrator.build`, so that a command that only reads its workspace (``reasonix runs``,
    ``checkpoints``, ``undo``) imports no session or goal machinery to check it."""
    path = workspace.expanduser().resolve()
    if not path.is_dir():
        raise WorkspaceError(f"the workspace {workspace} is not a directory; create it or pass --workspace DIR")
    if session is not None and (reason := workspace_refusal(path)) is not None:
        raise WorkspaceError(f"the workspace {path} {reason}; {session}")
    return path
