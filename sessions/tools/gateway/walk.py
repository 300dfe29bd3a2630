"""The gateway's descent: from a descriptor held on a root, one component at a time, never following a symlink.

Each directory is opened relative to the one above it with ``O_NOFOLLOW | O_DIRECTORY`` (``O_PATH`` where the system
has it, so a directory without read permission can still be passed through). A symlink met on the way is read
(``readlinkat``) and its target walked the same way, from the directory holding it (an absolute target: from the root,
when it names a place inside the root's real path); ``..`` goes back up the directories actually walked and never
above the root. So the directory finally held is, at the moment it was opened, beneath the root, and whatever is
renamed or swapped afterwards, the descriptors keep pointing at the directories walked: a later open, create or rename
relative to them cannot be redirected outside.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass, field

from sessions.tools.errors import ToolInputError, WorkspaceEscapeError
from sessions.tools.gateway.names import check_component

MAX_LINKS = 40
"""Symlinks followed in one walk before it is refused as a loop (Linux's own limit)."""
DIR_FLAGS = (
    getattr(os, "O_PATH", 0) or os.O_RDONLY
) | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)  # fmt: skip


@dataclass
class Spot:
    """Where a walk ended: ``dir_fd`` is the directory holding ``name`` (``name`` is "" when the path is a directory
    itself, then ``dir_fd`` is that directory). ``rel`` is the real path from the root through the symlinks followed.
    Owns the descriptors it walked; :meth:`close` closes them (never the root's)."""

    dir_fd: int
    name: str
    rel: str
    owned: list[int] = field(default_factory=list)
    missing: bool = False
    """A lenient walk stopped at a missing directory (``dir_fd`` and ``name`` then mean nothing)."""

    def close(self) -> None:
        while self.owned:
            os.close(self.owned.pop())

    def __enter__(self) -> Spot:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _escape(raw: str, what: str) -> WorkspaceEscapeError:
    return WorkspaceEscapeError(
        f"refused: path {raw!r} goes through a symlink that leads outside {what}; only files inside {what} can be used"
    )


def _link_target(dir_fd: int, name: str) -> str | None:
    """The target of the symlink ``name`` in ``dir_fd``, or None when ``name`` is not a symlink."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def _is_dir_or_link(dir_fd: int, name: str) -> bool:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        return stat.S_ISDIR(mode) or stat.S_ISLNK(mode)
    except OSError:
        return False


def walk(
    root_fd: int,
    real_root: str,
    parts: list[str],
    raw: str,
    *,
    refused: frozenset[str],
    what: str = "the workspace",
    create: bool = False,
    to_dir: bool = False,
    lenient: bool = False,
    follow_last: bool = True,
) -> Spot:
    """Walk ``parts`` beneath ``root_fd``. The last component is looked at but not opened (unless ``to_dir``): a
    symlink there is followed like any other, anything else is left to the caller, which opens it relative to
    :attr:`Spot.dir_fd` with ``O_NOFOLLOW``. ``create`` makes missing directories on the way (``mkdirat``: a name
    that appears meanwhile, symlink or not, is walked like one found). Raises :class:`WorkspaceEscapeError` for a way
    out, :class:`ToolInputError` for a missing or non-directory component or a symlink loop. ``lenient``: a missing
    directory ends the walk instead, :attr:`Spot.rel` completed lexically (nothing there can be a symlink) and
    :attr:`Spot.missing` set. ``follow_last=False``: a symlink as the last component is the spot itself (to replace or
    remove the link, never what it points at)."""
    for name in parts:  # refused as written before anything is made (a symlink's target is checked as it is walked)
        if name not in ("", ".", ".."):
            check_component(name, raw, refused)
    stack: list[tuple[int, str]] = [(root_fd, "")]
    pending = list(reversed(parts))
    links = 0
    spot = Spot(dir_fd=root_fd, name="", rel=".")

    def rel_of(last: str = "") -> str:
        names = [n for _, n in stack[1:]] + ([last] if last else [])
        return "/".join(names) or "."

    try:
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise _escape(raw, what)
                os.close(stack.pop()[0])
                spot.owned.pop()
                continue
            check_component(name, raw, refused)
            top = stack[-1][0]
            last = all(p in ("", ".") for p in pending)
            if last and not to_dir:
                target = _link_target(top, name) if follow_last else None
                if target is None:
                    spot.dir_fd, spot.name, spot.rel = top, name, rel_of(name)
                    return spot
            else:
                try:
                    fd = os.open(name, DIR_FLAGS, dir_fd=top)
                except FileNotFoundError:
                    if lenient:
                        for later in pending:
                            if later not in ("", ".", ".."):
                                check_component(later, raw, refused)
                        rest = os.path.normpath("/".join([rel_of(), name, *reversed(pending)]))
                        if rest == ".." or rest.startswith("../"):
                            raise _escape(raw, what) from None
                        spot.dir_fd, spot.name, spot.rel, spot.missing = top, "", rest, True
                        return spot
                    if not create:
                        raise ToolInputError(
                            f"not found: {raw!r} ({rel_of(name)} does not exist); use list_dir or glob to find the "
                            "right path"
                        ) from None
                    with contextlib.suppress(FileExistsError):  # made meanwhile: walked like one found
                        os.mkdir(name, 0o777, dir_fd=top)
                    links += 1  # a retry: bounded like a link, so a name that keeps vanishing cannot spin forever
                    if links > MAX_LINKS:
                        raise ToolInputError(f"{raw!r} keeps changing while it is opened; try again") from None
                    pending.append(name)
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise
                    target = _link_target(top, name)
                    if target is None:
                        if not _is_dir_or_link(top, name):
                            raise ToolInputError(
                                f"{raw!r}: {rel_of(name)} is not a directory; give a path whose parents are directories"
                            ) from None
                        links += 1  # swapped between the open and the readlink: look again, bounded
                        if links > MAX_LINKS:
                            raise ToolInputError(f"{raw!r} keeps changing while it is opened; try again") from None
                        pending.append(name)
                        continue
                else:
                    stack.append((fd, name))
                    spot.owned.append(fd)
                    continue
            links += 1
            if links > MAX_LINKS:
                raise ToolInputError(f"{raw!r}: too many symlinks (a loop?); give the path of a real file")
            if target.startswith("/"):
                inside = os.path.normpath(target)
                if inside != real_root and not inside.startswith(real_root.rstrip("/") + "/"):
                    raise _escape(raw, what)
                while len(stack) > 1:
                    os.close(stack.pop()[0])
                    spot.owned.pop()
                target = os.path.relpath(inside, real_root)
            pending.extend(reversed(target.split("/")))
        top, name = stack[-1]
        spot.dir_fd, spot.name, spot.rel = top, "", rel_of()
        return spot
    except BaseException:
        spot.close()
        raise


def kind_of(mode: int) -> str:
    """What a non-regular file is, for a message."""
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return kind
    return "a special file"
