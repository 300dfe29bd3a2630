"""The gateway's reading of a path someone else wrote: lexical checks, before anything on disk is looked at.

A raw path (from the model, a tool argument or a file in the workspace) becomes the list of its components relative to
a root: empty, NUL, ``~word`` and absolute paths outside the root are refused here with the sentence the model reads,
``..`` that climbs out of the root too. Components named :data:`RESERVED` are refused wherever they occur (also when
a symlink's target names them), by :func:`check_component`.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

from sessions.tools.errors import ToolInputError, WorkspaceEscapeError

GIT_DIR = ".git"
STATE_DIR = ".reasonix"
RESERVED: frozenset[str] = frozenset({GIT_DIR, STATE_DIR})
"""Components no file tool reads or writes: a repository's own data (its ``config`` and ``hooks`` run as the user at
their next ``git status``) and Reasonix's run state (read-only for commands too)."""
KEPT_OUTPUTS = "~outputs"


class ReservedPathError(WorkspaceEscapeError):
    """A path goes through ``.git`` or ``.reasonix`` (directly or through a symlink), which the gateway never enters."""


def reserved_refusal(raw: str, name: str) -> ReservedPathError:
    if name.casefold() == GIT_DIR:
        return ReservedPathError(
            f"refused: {raw!r} is inside a {GIT_DIR} directory, the repository's own data; file tools never read or "
            "write there (its config and hooks run as the user). Use git commands through bash for repository state"
        )
    return ReservedPathError(
        f"refused: {raw!r} is inside {STATE_DIR}/, where Reasonix keeps its own run state; tools do not read or write "
        "there, use a path elsewhere in the workspace"
    )


def check_component(name: str, raw: str, refused: frozenset[str]) -> None:
    """Refuse ``name`` when it is one of ``refused`` (compared case-insensitively: a case-insensitive file system
    takes ``.GIT`` for ``.git``)."""
    if name.casefold() in refused:
        raise reserved_refusal(raw, name.casefold())


def components(raw: str, real_root: str, *, what: str = "the workspace") -> list[str]:
    """``raw`` as components relative to the root whose real path is ``real_root``, ``..`` kept (the walk applies it
    against what it finds, so a symlink followed earlier decides where ``..`` leads). Refuses what can never be inside:
    an empty path, a NUL byte, ``~`` paths and absolute paths outside the root."""
    if not raw.strip():
        raise ToolInputError(f"path is empty; give a path relative to {what} root, e.g. 'src/main.py' or '.'")
    if "\x00" in raw:
        raise ToolInputError(f"path {raw!r} contains a NUL byte; give a plain relative path")
    if raw.startswith("~"):
        head = raw.split("/", 1)[0]
        hint = f' (a kept output is read with read_file path="{KEPT_OUTPUTS}/NAME")' if head != KEPT_OUTPUTS else ""
        raise ToolInputError(
            f"path {raw!r} starts with {head!r}, which is not expanded here (no home directory, no user names); "
            f"give a path relative to {what} root{hint}"
        )
    if os.path.isabs(raw):
        lexical = os.path.normpath(raw)
        inside = os.path.relpath(lexical, real_root) if lexical.startswith(real_root.rstrip("/") + "/") else None
        if lexical == real_root:
            return []
        if inside is None or inside.startswith(".."):
            raise WorkspaceEscapeError(
                f"refused: absolute path {raw!r} is outside {what}; use a path relative to {what} root"
            )
        return list(PurePosixPath(inside).parts)
    depth = 0
    for part in raw.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                raise WorkspaceEscapeError(
                    f"refused: path {raw!r} leads outside {what}; use a path relative to {what} root"
                )
        elif part not in ("", "."):
            depth += 1
    return [part for part in raw.split("/") if part not in ("", ".")]
