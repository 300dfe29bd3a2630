"""What bubblewrap hides or freezes besides the policy's ``forbid_read``, found on the host at each launch:

* ``/run`` (and a real ``/var/run``) become empty tmpfs: the session bus, ``docker.sock``, ssh and gpg agents under
  ``/run/user/$UID``; ``/etc/resolv.conf`` is bound back when it points there;
* every other unix socket the host has bound, in any network namespace a process of the host is in (the table
  ``/proc/PID/net/unix`` of each), outside the private ``/tmp`` and ``/run`` gets ``/dev/null`` over it, so nothing
  listening on the host answers (abstract sockets live in the network namespace, which the sandbox has its own of
  unless ``network = true``);
* histories found by name, not by a fixed list (:func:`histories`): whatever in ``$HOME``, its dot-directories and the
  XDG and zsh directories is named like one (``*hist*``, ``*hst*``, ``.dbshell``, atuin, shada, mongosh);
* a hidden path that is a symlink is hidden where it points (:func:`mask`): bubblewrap cannot mount over the link;
* the repository's git directory stays read-only inside (``.git/config``, ``.git/hooks``, ``commondir``: whatever a
  later ``git status`` of the user would read and run);
* ``/home`` becomes empty but for the homes that hold the workspace, the writable paths or ``$HOME``, and ``/root``
  for an ordinary user becomes empty.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Mapping
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


def unix_tables() -> list[bytes]:
    """The lines of the unix socket table of every network namespace a process of the host is in, each table once.

    ``/proc/net/unix`` lists only the sockets of this process's namespace: a listener started under ``unshare --net``
    is in another one's, yet its socket file is on the same filesystem. ``/proc/PID/net/unix`` is readable for every
    process (an ordinary user's too) and its inode number names the namespace, so one ``stat`` a process finds each
    table. Not found: a socket whose namespace no process is in any more (made after a ``setns`` back)."""
    lines: list[bytes] = []
    seen: set[int] = set()
    pids = ["self"]
    with contextlib.suppress(OSError):  # pragma: no mutate  — every Linux has it: only a /proc without it fails
        pids += [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    for pid in pids:
        table = f"/proc/{pid}/net/unix"
        try:
            namespace = os.stat(table).st_ino
            if namespace in seen:
                continue
            seen.add(namespace)
            lines += Path(table).read_bytes().split(b"\n")
        except OSError:
            continue  # the process ended meanwhile
    return lines


def host_sockets(skip: Iterable[str], bound_back: Iterable[str] = ()) -> list[str]:
    """The paths of the unix sockets bound on the host that exist and are still visible: outside ``skip`` and the
    private mounts, or inside a directory of ``bound_back`` shown again under them (the deepest root decides)."""
    skipped = (*PRIVATE, *skip)
    shown = tuple(bound_back)
    found: list[str] = []
    for line in unix_tables():
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


GIT_POINTER_MAX_BYTES = 4096
"""A ``.git`` pointer file is one line (``gitdir: PATH``); anything longer is not one."""


def git_dirs(workspace: Path) -> list[Path]:
    """The workspace's git directory: ``.git``, or where a ``.git`` file points (``gitdir: …``). The file is read
    through the gateway: a regular file beneath the workspace only (a FIFO, a device or a symlink out is no pointer),
    at most :data:`GIT_POINTER_MAX_BYTES` (a larger one is no pointer either)."""
    from sessions.tools.errors import ToolError  # lazily: the tools package loads trio and pydantic
    from sessions.tools.gateway.root import GatewayRoot

    dot_git = workspace / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [dot_git]
    try:
        found = GatewayRoot(workspace, refused=frozenset()).read(".git", limit=GIT_POINTER_MAX_BYTES)
    except ToolError:
        return []
    if found.truncated:
        return []
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = found.data.decode("utf-8").strip()  # pragma: no mutate (UTF-8 is also the locale codec)
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


#: What a history is called: a name holding one of these (any case) — ``.bash_history``, ``.zhistory``, ``.histfile``,
#: ``~/.local/state/zsh/history``, IPython's ``history.sqlite``, ``.Rhistory``, ``.irb_history``, ``.lesshst``,
#: ``.wget-hsts`` — or one of :data:`HISTORY_NAMES`, or ending in ``.shada``.
HISTORY_PARTS = ("hist", "hst")
HISTORY_NAMES = frozenset({".dbshell", "atuin", "shada", "mongosh", ".viminfo", "viminfo"})
HISTORY_DEPTH = 3
"""How deep below ``$HOME`` its dot-directories are searched (``~/.ipython/profile_default/history.sqlite`` is 3)."""
HISTORY_HOMES = ("~/.config", "~/.local/share", "~/.local/state")
"""Searched two deep besides (``~/.local/state/nvim/shada``, ``~/.local/state/zsh/history``), like ``$ZDOTDIR`` and
the XDG homes when they are set elsewhere: four levels everywhere cost ten times as much (24 ms a launch here)."""
HISTORY_SCAN_LIMIT = 20_000
"""Entries looked at per launch at most, so a huge ``~/.cache`` cannot slow every command down."""


def is_history(name: str) -> bool:
    low = name.lower()
    return any(part in low for part in HISTORY_PARTS) or low in HISTORY_NAMES or low.endswith(".shada")


def histories(home: str | None, also: Iterable[str] = (), keep: Iterable[str] = ()) -> list[str]:
    """Every file or directory named like a history (:func:`is_history`): in ``home`` itself and inside its
    dot-directories down to :data:`HISTORY_DEPTH`, and two levels into :data:`HISTORY_HOMES` and each of ``also``
    (``$ZDOTDIR``, ``$XDG_STATE_HOME``, …). Nothing that holds or lies in one of ``keep`` (the workspace, the writable
    paths, the running Python) is entered or returned: hiding it would hide the work itself."""
    kept = [os.path.realpath(path) for path in keep]
    found: list[str] = []
    budget = [HISTORY_SCAN_LIMIT]

    def clear(path: str) -> bool:
        real = os.path.realpath(path)
        return not any(_under(real, [k]) or _under(k, [real]) for k in kept)

    def walk(folder: str, levels: int, dots_only: bool) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return
            if is_history(entry.name):
                if entry.path not in found and clear(entry.path):
                    found.append(entry.path)
                continue
            if levels <= 1 or (dots_only and not entry.name.startswith(".")):
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and clear(entry.path):
                    walk(entry.path, levels - 1, False)

    roots = list(also)
    if home:
        walk(home, HISTORY_DEPTH, True)
        roots += [home + name[1:] for name in HISTORY_HOMES]
    for folder in dict.fromkeys(roots):
        if folder and os.path.isabs(folder) and os.path.isdir(folder) and clear(folder):
            walk(folder, 2, False)
    return found


def relocated(raw: str, env: Mapping[str, str]) -> str | None:
    """Where ``raw`` (``~/.config/…``, ``~/.local/share/…``, ``~/.local/state/…``) lives when the XDG variable of
    its kind names another directory (an absolute one, as the spec asks): ``reasonix setup`` keeps the key in
    ``$XDG_CONFIG_HOME/reasonix``, wherever that is."""
    for prefix, name in XDG_HOMES:
        value = env.get(name, "")
        if raw.startswith(prefix) and value and os.path.isabs(value):
            return os.path.join(value, raw[len(prefix) :])
    return None


XDG_HOMES = (
    ("~/.config/", "XDG_CONFIG_HOME"),
    ("~/.local/share/", "XDG_DATA_HOME"),
    ("~/.local/state/", "XDG_STATE_HOME"),
)


class Mask(NamedTuple):
    args: list[str]
    folder: str | None
    """The directory now an empty tmpfs, if any (no socket under it needs a mask)."""


def mask(path: str, keep: Iterable[str] = ()) -> Mask:
    """The arguments that hide ``path``: an empty tmpfs over a directory, ``/dev/null`` over anything else; nothing
    when it does not exist. bubblewrap mounts over what a symlink points at (an absolute link it resolves outside its
    new root, and fails the launch), so a link is hidden at its real target, unless that target is ``/``, a top-level
    directory, inside the private mounts, or holds one of ``keep``: hiding it would hide the system or the work."""
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return Mask([], None)
    if real != os.path.abspath(path):
        kept = [os.path.realpath(k) for k in keep]
        if len(Path(real).parts) <= 2 or _under(real, PRIVATE) or any(_under(k, [real]) for k in kept):
            return Mask([], None)
    if os.path.isdir(real):
        return Mask(["--tmpfs", real], real)
    return Mask(["--ro-bind", "/dev/null", real], None)
