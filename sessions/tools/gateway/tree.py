"""Listing and confirming beneath a root through held directory descriptors: what list_dir, glob and grep see.

A :class:`HeldTree` holds the root open and opens each directory relative to its parent with ``O_NOFOLLOW |
O_DIRECTORY``, one component at a time, never ``.git`` or ``.reasonix``: a directory swapped for a symlink meanwhile
(``renameat2(RENAME_EXCHANGE)`` from a background job) is refused, not entered, so a listing never holds a name from
outside the root. Symlinks are listed as what they are and never followed.

ripgrep walks by path and cannot be held to this, so what it reports is *confirmed* here before anyone sees it: a
file name it lists is kept only when the same relative path is, through the held descriptors, a regular file beneath
the root; a matching line is shown as the gateway reads it from that file (ripgrep's copy is only compared with it).
Whatever ripgrep read through a swapped directory, the bytes that reach the model were read beneath the root.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from types import TracebackType

from sessions.tools.gateway.root import FILE_FLAGS, ROOT_FLAGS, GatewayRoot
from sessions.tools.gateway.walk import DIR_FLAGS

MAX_HELD = 256
"""Directory descriptors a tree keeps open for confirmations before it lets them go (and reopens as needed)."""


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    kind: str
    """``dir``, ``file``, ``link`` (a symlink, never followed) or ``other`` (FIFO, socket, device)."""


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


class HeldTree:
    """Directories beneath ``gateway``'s root, held open while the ``with`` block lasts."""

    def __init__(self, gateway: GatewayRoot) -> None:
        self.gateway = gateway
        self._root = -1
        self._held: dict[str, int | None] = {}
        self._files: dict[str, frozenset[str]] = {}

    def __enter__(self) -> HeldTree:
        self._root = os.open(self.gateway.path, ROOT_FLAGS)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._release()
        os.close(self._root)
        self._root = -1

    def _release(self) -> None:
        for fd in self._held.values():
            if fd is not None:
                os.close(fd)
        self._held.clear()

    def dir_fd(self, rel: str) -> int | None:
        """A descriptor on the directory ``rel`` (POSIX, relative to the root, no symlink on the way), or None when
        it is missing, not a directory, a symlink or refused. Owned by the tree."""
        rel = rel.strip("/")
        if rel in ("", "."):
            return self._root
        if rel in self._held:
            return self._held[rel]
        parent_rel, _, name = rel.rpartition("/")
        if name in ("", ".", "..") or name.casefold() in self.gateway.refused:
            return None
        parent = self.dir_fd(parent_rel)
        fd: int | None = None
        if parent is not None:
            try:
                fd = os.open(name, DIR_FLAGS, dir_fd=parent)
            except OSError:
                fd = None
        if len(self._held) >= MAX_HELD:
            self._release()  # ``parent`` may be closed now: it is reopened by the next call that needs it
        self._held[rel] = fd
        return fd

    def entries(self, rel: str) -> list[Entry] | None:
        """The entries of the directory ``rel``, sorted by name (None when it cannot be held)."""
        held = self.dir_fd(rel)
        if held is None:
            return None
        try:
            fd = os.open(".", ROOT_FLAGS, dir_fd=held)
        except OSError:
            return None
        try:
            with os.scandir(fd) as it:
                found = [Entry(e.name, _kind(e)) for e in it]
        except OSError:
            return None
        finally:
            os.close(fd)
        return sorted(found, key=lambda e: e.name)

    def _parent(self, rel: str) -> tuple[int, str] | None:
        parent_rel, _, name = rel.strip("/").rpartition("/")
        if name in ("", ".", "..") or name.casefold() in self.gateway.refused:
            return None
        parent = self.dir_fd(parent_rel)
        return None if parent is None else (parent, name)

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` is a regular file beneath the root, reached without a symlink. Each directory is listed
        once (its regular files kept), so confirming a whole listing costs one ``getdents`` per directory, not one
        ``stat`` per name."""
        parent_rel, _, name = rel.strip("/").rpartition("/")
        if name in ("", ".", "..") or name.casefold() in self.gateway.refused:
            return False
        files = self._files.get(parent_rel)
        if files is None:
            found = self.entries(parent_rel) or []
            files = self._files[parent_rel] = frozenset(e.name for e in found if e.kind == "file")
        return name in files

    def read(self, rel: str, limit: int) -> bytes | None:
        """At most ``limit`` bytes of the regular file ``rel`` (None when it is not one, reached without a symlink)."""
        spot = self._parent(rel)
        if spot is None:
            return None
        try:
            fd = os.open(spot[1], FILE_FLAGS, dir_fd=spot[0])
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as handle:
                return handle.read(limit)
        except OSError:
            return None
        finally:
            os.close(fd)


__all__ = ["Entry", "HeldTree"]
