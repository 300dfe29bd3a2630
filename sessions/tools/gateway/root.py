"""A root the host reads and writes beneath: the workspace, a kept-output folder, the user's config directory.

Every operation opens the root directory once (the one name it opens by path: the user chose it, the model cannot
rename it), walks to its target with :func:`~sessions.tools.gateway.walk.walk`, and acts relative to the directory
descriptor it ends on:

* reads open the last component with ``O_NOFOLLOW | O_NONBLOCK`` and ``fstat`` the descriptor: only a regular file
  is read (a FIFO or a device is refused before anything waits on it), and at most the bytes asked for;
* writes create a temporary file in the held directory (``O_CREAT | O_EXCL | O_NOFOLLOW``), fsync it and rename it
  onto the name with ``renameat`` between the same descriptor: a directory swapped for a symlink meanwhile changes
  nothing about where the bytes go. An existing file keeps its permission bits;
* missing parent directories are made with ``mkdirat``, one at a time, never through a symlink.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sessions.tools.errors import ToolError, ToolInputError
from sessions.tools.gateway.names import RESERVED, components
from sessions.tools.gateway.walk import DIR_FLAGS, Spot, kind_of, walk

FILE_FLAGS = (
    os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)  # fmt: skip
ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
MAX_NAME_BYTES = 255


@dataclass(frozen=True, slots=True)
class Located:
    """A path as written (``rel``, normalised) and where it leads (``real``: through the symlinks it passes), both
    relative to the root."""

    rel: str
    real: str


@dataclass(frozen=True, slots=True)
class Read:
    data: bytes
    size: int
    """The file's size when it was opened (``data`` holds at most the bytes asked for)."""
    rel: str

    @property
    def truncated(self) -> bool:
        return self.size > len(self.data)


def _lexical(parts: list[str]) -> str:
    return os.path.normpath("/".join(parts)) if parts else "."


class GatewayRoot:
    """Reads and writes beneath ``path``; ``refused`` names are never entered (default: ``.git`` and ``.reasonix``)."""

    def __init__(self, path: Path, *, refused: frozenset[str] = RESERVED, what: str = "the workspace") -> None:
        self.path = path
        self.refused = refused
        self.what = what

    @contextlib.contextmanager
    def _held(self) -> Iterator[tuple[int, str]]:
        try:
            fd = os.open(self.path, ROOT_FLAGS)
        except OSError as exc:
            raise ToolInputError(
                f"{self.what} cannot be opened ({exc.strerror}); nothing was read or written"
            ) from None
        try:
            real = _real_path(fd, self.path)
            yield fd, real
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _spot(
        self, raw: str, *, create: bool = False, to_dir: bool = False, lenient: bool = False, follow_last: bool = True
    ) -> Iterator[tuple[Spot, str]]:
        with self._held() as (fd, real):
            parts = components(raw, real, what=self.what)
            try:
                spot = walk(
                    fd, real, parts, raw, refused=self.refused, what=self.what, create=create, to_dir=to_dir,
                    lenient=lenient, follow_last=follow_last,
                )  # fmt: skip
            except OSError as exc:  # a directory without permission, a race the walk cannot name: still a tool error
                raise ToolInputError(
                    f"{raw!r} cannot be reached ({exc.strerror or exc}); check the path with list_dir and try again"
                ) from None
            with spot:
                yield spot, _lexical(parts)

    def locate(self, raw: str) -> Located:
        """Where ``raw`` leads, without opening it (it need not exist: a missing part is taken as written)."""
        with self._spot(raw, lenient=True) as (spot, lexical):
            return Located(rel=lexical, real=spot.rel)

    def stat(self, raw: str, *, follow_last: bool = True) -> os.stat_result | None:
        """The file or directory ``raw`` leads to (symlinks followed beneath the root; with ``follow_last=False`` a
        symlink at ``raw`` is itself what is looked at), None when it is missing."""
        try:
            with self._spot(raw, follow_last=follow_last) as (spot, _):
                if not spot.name:
                    return os.stat(spot.dir_fd)
                return os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except ToolInputError as exc:
            if exc.message.startswith("not found"):
                return None
            raise

    def open_file(self, raw: str) -> tuple[io.BufferedReader, str]:
        """A regular file opened for reading, and its path as written (normalised); the caller closes it."""
        with self._spot(raw) as (spot, lexical):
            if not spot.name:
                raise ToolInputError(f"{lexical!r} is a directory, not a file; use list_dir to see what it holds")
            try:
                fd = os.open(spot.name, FILE_FLAGS, dir_fd=spot.dir_fd)
            except FileNotFoundError:
                raise ToolInputError(f"not found: {raw!r}; use list_dir or glob to find the right path") from None
            except OSError as exc:
                found = _lstat(spot)
                if found is not None and not stat.S_ISREG(found.st_mode) and not stat.S_ISLNK(found.st_mode):
                    raise _not_regular(lexical, found.st_mode) from None  # a socket cannot be opened at all
                raise ToolInputError(
                    f"{raw!r} cannot be opened ({exc.strerror}); it changed while it was opened, or it is not readable"
                ) from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(lexical, mode)
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb"), lexical
        except BaseException:
            os.close(fd)
            raise

    def read(self, raw: str, *, limit: int) -> Read:
        """At most ``limit`` bytes of the regular file ``raw``."""
        handle, lexical = self.open_file(raw)
        with handle:
            size = os.fstat(handle.fileno()).st_size
            return Read(data=handle.read(limit), size=size, rel=lexical)

    def try_read(self, raw: str, *, limit: int) -> Read | None:
        """:meth:`read`, or None when ``raw`` is missing, refused or not a regular file (for readers that look for
        optional files: skills, profiles, memory files)."""
        try:
            return self.read(raw, limit=limit)
        except ToolError:
            return None

    def names(self, raw: str) -> list[str]:
        """The entries of the directory ``raw``, sorted ([] when it is missing or not a directory)."""
        try:
            with self._spot(raw, to_dir=True) as (spot, _):
                fd = os.open(".", ROOT_FLAGS, dir_fd=spot.dir_fd)
                try:
                    return sorted(os.listdir(fd))
                finally:
                    os.close(fd)
        except (ToolError, OSError):
            return []

    def write(self, raw: str, data: bytes, *, mode: int | None = None, follow_last: bool = True) -> tuple[str, bool]:
        """Replace (or create) the file ``raw`` with ``data`` atomically, making missing parent directories; its path
        as written and whether it existed. ``mode``: the new file's permission bits (default: the existing file's,
        or ``0o666 & ~umask``). ``follow_last=False`` replaces a symlink at ``raw`` instead of writing where it
        points."""
        with self._spot(raw, create=True, follow_last=follow_last) as (spot, lexical):
            if not spot.name:
                raise ToolInputError(f"{lexical!r} is a directory; give a file path")
            current = _lstat(spot)
            if current is not None and stat.S_ISDIR(current.st_mode):
                raise ToolInputError(f"{lexical!r} is a directory; give a file path")
            if mode is None and current is not None and stat.S_ISREG(current.st_mode):
                mode = stat.S_IMODE(current.st_mode)
            _replace(spot.dir_fd, spot.name, data, mode)
            return lexical, current is not None

    def symlink(self, raw: str, target: str) -> None:
        """Make ``raw`` a symlink holding ``target`` (replacing what is there, never following it; the target is text
        the gateway never follows by name)."""
        with self._spot(raw, create=True, follow_last=False) as (spot, lexical):
            if not spot.name:
                raise ToolInputError(f"{lexical!r} is a directory; give a file path")
            tmp = _temporary_name(spot.name)
            os.symlink(target, tmp, dir_fd=spot.dir_fd)
            try:
                os.replace(tmp, spot.name, src_dir_fd=spot.dir_fd, dst_dir_fd=spot.dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=spot.dir_fd)
                raise

    def remove(self, raw: str) -> bool:
        """Remove the file or symlink ``raw`` (a symlink itself, never what it points at), then its parent directories
        that are left empty, up to the root. Whether something was removed."""
        try:
            with self._spot(raw, follow_last=False) as (spot, _):
                if not spot.name:
                    return False
                os.unlink(spot.name, dir_fd=spot.dir_fd)
        except FileNotFoundError:
            return False
        except ToolInputError as exc:
            if exc.message.startswith("not found"):
                return False
            raise
        parent = os.path.dirname(os.path.normpath(raw))
        while parent not in ("", ".", "/"):
            try:
                with self._spot(parent, follow_last=False) as (spot, _):
                    os.rmdir(spot.name, dir_fd=spot.dir_fd)  # never through a symlink: ENOTDIR
            except (OSError, ToolError):
                break
            parent = os.path.dirname(parent)
        return True


def _real_path(fd: int, path: Path) -> str:
    """Where the held root really is (absolute symlinks are compared with it): one readlink of ``/proc/self/fd``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def _lstat(spot: Spot) -> os.stat_result | None:
    try:
        return os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
    except OSError:
        return None


def _not_regular(rel: str, mode: int) -> ToolInputError:
    if stat.S_ISDIR(mode):
        return ToolInputError(f"{rel!r} is a directory, not a file; use list_dir to see what it holds")
    return ToolInputError(f"{rel!r} is {kind_of(mode)}, not a regular file; only regular files can be read or edited")


def _temporary_name(name: str) -> str:
    stem = name.encode("utf-8", "surrogateescape")[: MAX_NAME_BYTES - 24].decode("utf-8", "ignore")
    return f".{stem}.{secrets.token_hex(6)}.tmp"


def _replace(dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    tmp = _temporary_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o666 if mode is None else 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


__all__ = ["DIR_FLAGS", "GatewayRoot", "Located", "Read"]
