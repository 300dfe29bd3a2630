"""What bubblewrap hides or freezes besides the policy's ``forbid_read``, found on the host at each launch:

* ``/run`` (and a real ``/var/run``) become empty tmpfs: the session bus, ``docker.sock``, ssh and gpg agents under
  ``/run/user/$UID``; ``/etc/resolv.conf`` is bound back when it points there;
* every other unix socket the host has bound (``/proc/net/unix``) outside the private ``/tmp`` and ``/run`` gets
  ``/dev/null`` over it, so nothing listening on the host answers (abstract sockets live in the network namespace,
  which the sandbox has its own of unless ``network = true``);
* the repository's git directory stays read-only inside (``.git/config``, ``.git/hooks``, ``commondir``: whatever a
  later ``git status`` of the user would read and run);
* ``/home`` becomes empty but for the homes that hold the workspace, the writable paths or ``$HOME``, and ``/root``
  for an ordinary user becomes empty.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

RUN_DIRS = ("/run", "/var/run")
PRIVATE = ("/tmp", "/run", "/var/run", "/dev", "/proc")
HOMES = "/home"


def run_mounts() -> list[str]:
    """Empty ``/run`` and ``/var/run`` (a symlink to ``/run`` needs nothing), then the resolver file back."""
    args: list[str] = []
    for run in RUN_DIRS:
        if os.path.isdir(run) and not os.path.islink(run):
            args += ["--tmpfs", run]
    resolv = os.path.realpath("/etc/resolv.conf")
    if _under(resolv, RUN_DIRS) and os.path.isfile(resolv):
        args += ["--ro-bind", resolv, resolv]
    return args


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _depth(path: str, roots: Iterable[str]) -> int:
    """The length of the deepest of ``roots`` that holds ``path``; -1 when none does."""
    return max((len(root) for root in roots if _under(path, [root])), default=-1)


def host_sockets(skip: Iterable[str], bound_back: Iterable[str] = ()) -> list[str]:
    """The paths of the unix sockets bound on the host that exist and are still visible: outside ``skip`` and the
    private mounts, or inside a directory of ``bound_back`` shown again under them (the deepest root decides)."""
    skipped = (*PRIVATE, *skip)
    shown = tuple(bound_back)
    found: list[str] = []
    table: list[bytes] = []
    with contextlib.suppress(OSError):  # pragma: no mutate  — every Linux has it: only a /proc without it fails
        table = Path("/proc/net/unix").read_bytes().split(b"\n")
    for line in table:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith(b"/"):
            continue  # the header ("Path"), or unnamed, or abstract
        path = os.fsdecode(fields[7])  # the name's own bytes, as lstat and bubblewrap's arguments give them back
        if _depth(path, skipped) > _depth(path, shown) or path in found:
            continue
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found.append(path)
        except OSError:
            continue
    return found


def git_dirs(workspace: Path) -> list[Path]:
    """The workspace's git directory: ``.git``, or where a ``.git`` file points (``gitdir: …``)."""
    dot_git = workspace / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [dot_git]
    if dot_git.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            raw = dot_git.read_text(encoding="utf-8")  # pragma: no mutate (UTF-8 is also the locale codec)
            text = raw.strip()
            if text.startswith("gitdir:"):
                target = (workspace / text.removeprefix("gitdir:").strip()).resolve()
                if target.is_dir():
                    return [target]
    return []


class HomeMounts(NamedTuple):
    args: list[str]
    hidden: list[str]
    """Roots now empty: no socket under them needs a mask."""
    kept: list[str]
    """Homes bound back under a hidden root: their sockets still do."""


def home_mounts(keep: Iterable[Path]) -> HomeMounts:
    """Other users' homes emptied without listing them: an empty tmpfs over ``/home`` with the homes that hold one of
    ``keep`` bound back read-only (the workspace and writable paths are bound over them later), and ``/root`` emptied
    for an ordinary user. Nothing under ``/home`` is named but those, so a home made or removed while a command starts
    cannot make bubblewrap fail on a mount point that went away."""
    root = os.path.realpath(HOMES)
    args: list[str] = []
    hidden: list[str] = []
    kept: list[str] = []  # also on a host without /home
    if os.path.isdir(root) and root != "/":  # a /home that is a link to / must not empty the whole filesystem
        args += ["--tmpfs", root]  # pragma: no mutate (args is empty here: = and += agree)
        hidden.append(root)
        for path in keep:
            real = os.path.realpath(path)
            if _under(real, [root]) and real != root:
                home = os.path.join(root, os.path.relpath(real, root).split(os.sep)[0])
                if home not in kept and os.path.isdir(home):
                    kept.append(home)
                    args += ["--ro-bind", home, home]
    if os.geteuid() != 0 and os.path.isdir("/root"):
        args += ["--tmpfs", "/root"]
        hidden.append("/root")
    return HomeMounts(args, hidden, kept)
