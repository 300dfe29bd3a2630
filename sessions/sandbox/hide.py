"""What bubblewrap hides or freezes besides the policy's ``forbid_read``, found on the host at each launch:

* ``/run`` (and a real ``/var/run``) become empty tmpfs: the session bus, ``docker.sock``, ssh and gpg agents under
  ``/run/user/$UID``; ``/etc/resolv.conf`` is bound back when it points there;
* every other unix socket the host has bound (``/proc/net/unix``) outside the private ``/tmp`` and ``/run`` gets
  ``/dev/null`` over it, so nothing listening on the host answers (abstract sockets live in the network namespace,
  which the sandbox has its own of unless ``network = true``);
* the repository's git directory stays read-only inside (``.git/config``, ``.git/hooks``, ``commondir``: whatever a
  later ``git status`` of the user would read and run);
* the homes of other users under ``/home``, and ``/root`` for an ordinary user, become empty.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

RUN_DIRS = ("/run", "/var/run")
PRIVATE = ("/tmp", "/run", "/var/run", "/dev", "/proc")


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


def host_sockets(skip: Iterable[str]) -> list[str]:
    """The paths of the unix sockets bound on the host that exist and lie outside ``skip`` and the private mounts."""
    skipped = (*PRIVATE, *skip)
    found: list[str] = []
    with contextlib.suppress(OSError), open("/proc/net/unix", encoding="utf-8", errors="replace") as table:
        next(table, None)
        for line in table:
            fields = line.split(None, 7)
            if len(fields) < 8 or not fields[7].startswith("/"):
                continue  # unnamed or abstract
            path = fields[7].rstrip("\n")
            if _under(path, skipped) or path in found:
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
            text = dot_git.read_text(encoding="utf-8").strip()
            if text.startswith("gitdir:"):
                target = (workspace / text.removeprefix("gitdir:").strip()).resolve()
                if target.is_dir():
                    return [target]
    return []


def other_homes(keep: Iterable[Path]) -> list[str]:
    """Home directories of other users (``/home/*``, ``/root`` when not root) that hold none of ``keep``."""
    kept = [str(p) for p in keep]
    homes: list[str] = []
    with contextlib.suppress(OSError):
        homes = [entry.path for entry in os.scandir("/home") if entry.is_dir(follow_symlinks=False)]
    if os.geteuid() != 0:
        homes.append("/root")
    return [home for home in homes if os.path.isdir(home) and not any(_under(k, [home]) for k in kept)]
