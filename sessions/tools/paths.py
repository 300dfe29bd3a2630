"""Confine the search tools and the permission gate to the workspace root, through the gateway.

A path is walked beneath the root by :class:`~sessions.tools.gateway.GatewayRoot` (symlinks resolved by the walk
itself, only while they stay beneath the root): ``..`` that climbs out, an absolute path elsewhere, ``~`` paths and a
symlink whose target lies outside are all refused with a :class:`~sessions.tools.errors.ToolError` the model reads,
and so are ``.git`` and ``.reasonix`` at any depth. Paths shown to the model are POSIX paths relative to the root
(``.`` for the root itself), so results never carry absolute paths. The file tools read and write through the gateway
directly; this module serves the tools that list and search, and the gate that matches path rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sessions.tools.gateway.names import STATE_DIR
from sessions.tools.gateway.root import GatewayRoot


@dataclass(frozen=True, slots=True)
class WorkspacePath:
    """A path checked to lie inside the workspace."""

    path: Path
    """Absolute, through the symlinks it passes (resolved beneath the root): what to list or search."""
    rel: str
    """POSIX, relative to the workspace root, as the model should see it (``.`` for the root)."""


def display(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` in POSIX form, or ``.`` for the root itself."""
    rel = path.relative_to(root).as_posix()
    return rel if rel else "."


def resolve(root: Path, raw: str) -> WorkspacePath:
    """Resolve the model's ``raw`` path against the workspace ``root``, refusing anything that leads outside it or
    into ``.git`` / ``.reasonix``. Raises only :class:`~sessions.tools.errors.ToolError` subclasses."""
    located = GatewayRoot(root).locate(raw)
    real_root = Path(os.path.realpath(root))
    return WorkspacePath(path=real_root if located.real == "." else real_root / located.real, rel=located.rel)


def resolve_for_write(root: Path, raw: str) -> WorkspacePath:
    """:func:`resolve` for a path a tool writes (the same refusals: ``.git`` and ``.reasonix`` are never entered)."""
    return resolve(root, raw)


__all__ = ["STATE_DIR", "WorkspacePath", "display", "resolve", "resolve_for_write"]
