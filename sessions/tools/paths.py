"""Confine file tools to the workspace root.

A path is resolved (symlinks followed) and must stay inside the resolved root: ``..`` that climbs out, an absolute path
elsewhere and a symlink whose target lies outside are all refused with a :class:`WorkspaceEscapeError`. Paths shown
to the model are POSIX paths relative to the root (``.`` for the root itself), so results never carry absolute paths.
:func:`resolve_for_write` also refuses the workspace's ``.reasonix/`` (Reasonix's own run state, which the sandbox
keeps read-only for commands too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sessions.tools.errors import ToolInputError, WorkspaceEscapeError


@dataclass(frozen=True, slots=True)
class WorkspacePath:
    """A path checked to lie inside the workspace."""

    path: Path
    """Absolute and resolved: what to open."""
    rel: str
    """POSIX, relative to the workspace root, as the model should see it (``.`` for the root)."""


def display(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` in POSIX form, or ``.`` for the root itself."""
    rel = path.relative_to(root).as_posix()
    return rel if rel else "."


def resolve(root: Path, raw: str) -> WorkspacePath:
    """Resolve the model's ``raw`` path against the workspace ``root``, refusing anything that leads outside it."""
    if not raw.strip():
        raise ToolInputError("path is empty; give a path relative to the workspace root, e.g. 'src/main.py' or '.'")
    if "\x00" in raw:
        raise ToolInputError(f"path {raw!r} contains a NUL byte; give a plain relative path")
    real_root = root.resolve()
    given = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    candidate = given if given.is_absolute() else real_root / given
    lexical = Path(os.path.normpath(candidate))
    if not lexical.is_relative_to(real_root):
        if given.is_absolute():
            raise WorkspaceEscapeError(
                f"refused: absolute path {raw!r} is outside the workspace; use a path relative to the workspace root"
            )
        raise WorkspaceEscapeError(
            f"refused: path {raw!r} leads outside the workspace; use a path relative to the workspace root"
        )
    resolved = candidate.resolve()
    if not resolved.is_relative_to(real_root):
        raise WorkspaceEscapeError(
            f"refused: path {raw!r} goes through a symlink that leads outside the workspace; "
            "only files inside the workspace can be used"
        )
    return WorkspacePath(path=resolved, rel=display(real_root, lexical))


STATE_DIR = ".reasonix"


def resolve_for_write(root: Path, raw: str) -> WorkspacePath:
    """:func:`resolve` for a path a tool writes: also refused inside the workspace's ``.reasonix/`` (reached directly
    or through a symlink), where Reasonix keeps its run records."""
    target = resolve(root, raw)
    inside = target.path.relative_to(root.resolve()).parts
    if inside and inside[0] == STATE_DIR:
        raise WorkspaceEscapeError(
            f"refused: {raw!r} is inside {STATE_DIR}/, where Reasonix keeps its own run state; tools do not write "
            "there, write somewhere else in the workspace"
        )
    return target
