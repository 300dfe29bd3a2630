"""bubblewrap (``bwrap``, Debian package ``bubblewrap``): the Linux sandbox.

* ``--ro-bind / /``: the whole filesystem read-only; ``--tmpfs /tmp``: a private, empty ``/tmp`` of bounded size;
  ``--proc /proc`` (of the new PID namespace, so no other process's ``/proc/*/environ`` is visible) and a minimal
  ``--dev /dev``; empty ``/run`` and no host unix socket (:mod:`sessions.sandbox.hide`);
* the workspace bound writable (read-only in ``read-only`` mode), and the extra writable paths in
  ``workspace-write`` mode; the workspace's ``.reasonix`` directory (journals, run state), its ``reasonix.toml`` /
  ``reasonix.local.toml`` and its git directory stay read-only: a command cannot rewrite the supervisor's records,
  its own rules, or the git configuration and hooks the user's next ``git status`` runs;
* ``forbid_read`` paths and :data:`~sessions.sandbox.policy.ALWAYS_HIDDEN` (``/etc/shadow``, shell histories)
  masked, also where ``$XDG_CONFIG_HOME`` (and the data and state homes) put them, and every history found by name:
  an empty tmpfs over a directory, ``/dev/null`` over a file, at a symlink's target; ``/home`` emptied but for the
  homes in use;
* ``/dev/shm`` a tmpfs bounded like ``/tmp``, and ``/dev`` read-only (bubblewrap's is a tmpfs of half the RAM);
* ``--cap-drop ALL`` always (as root too), and a user namespace of its own where the machine allows one, with
  ``--disable-userns``: no capability inside, so no mount can be undone or remounted writable;
* the bounds of :mod:`sessions.sandbox.bounds`: processes, memory per process, the size of ``/tmp``;
* ``--unshare-pid --die-with-parent --new-session``: everything the command starts dies when it exits or when
  Reasonix dies (even by SIGKILL), and it has no terminal to inject input into; a kill that lands while bubblewrap
  starts (before its child armed ``--die-with-parent``) leaves that child running, so every launch names a marker
  (``--setenv REASONIX_COMMAND``) that :func:`~sessions.sandbox.reaper.kill_launch` finds it by;
* ``--unshare-net`` unless ``[sandbox] network = true``; a session with background jobs shares one loopback
  network between its commands instead (:mod:`sessions.sandbox.netns`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sessions.sandbox.base import Launch
from sessions.sandbox.bounds import Bounds, enter_cgroup, new_pids_cgroup, prlimit, rlimit_prefix
from sessions.sandbox.env import command_env
from sessions.sandbox.hide import (
    XDG_HOMES,
    git_dirs,
    histories,
    home_mounts,
    host_sockets,
    mask,
    relocated,
    run_mounts,
)
from sessions.sandbox.policy import ALWAYS_HIDDEN, SandboxMode, SandboxPolicy
from sessions.sandbox.probe import reports_exec, userns_works
from sessions.sandbox.reaper import MARKER, new_marker

PROTECTED_IN_WORKSPACE = (".reasonix", "reasonix.toml", "reasonix.local.toml")


def under_tmp(paths: Sequence[Path]) -> list[str]:
    """The existing ``paths`` that the private ``/tmp`` would hide, each once, outermost first."""
    found: list[str] = []
    for path in sorted({p.resolve() for p in paths if p.exists()}):
        if Path("/tmp") in path.parents and not any(Path(f) in path.parents for f in found):
            found.append(str(path))
    return found


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def _expand(path: str, home: str | None) -> Path:
    if home and (path == "~" or path.startswith("~/")):
        return Path(home + path[1:])
    return Path(os.path.expanduser(path))


@dataclass(frozen=True, slots=True)
class BubblewrapSandbox:
    bwrap: str
    policy: SandboxPolicy = field(default_factory=SandboxPolicy)
    base_env: Mapping[str, str] | None = None
    userns: bool | None = None
    """Run in a user namespace of its own (nested ones refused); None: probe whether this machine allows it."""
    join_net: tuple[str, ...] = ()
    """The ``nsenter`` prefix of a session's shared loopback network (:mod:`sessions.sandbox.netns`), used instead of
    ``--unshare-net`` once the session runs background jobs; empty: a network of its own per command."""

    @property
    def name(self) -> str:
        return "bubblewrap"

    @property
    def confines(self) -> bool:
        return True

    def with_mode(self, mode: SandboxMode) -> BubblewrapSandbox:
        return replace(self, policy=self.policy.with_mode(mode))

    def with_network(self, join_net: tuple[str, ...]) -> BubblewrapSandbox:
        """The same sandbox, its commands joining the shared network that ``join_net`` enters."""
        return replace(self, join_net=join_net)

    def uses_userns(self) -> bool:
        if self.userns is None:
            return userns_works(self.bwrap)
        return self.userns

    def mounts(self, workspace: Path, home: str | None) -> list[str]:
        """The filesystem arguments, in order (later mounts win)."""
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        size = ["--size", str(self.policy.tmp_mb * 1024 * 1024)] if self.policy.tmp_mb else []
        args += [*size, "--tmpfs", "/tmp", *run_mounts()]
        # /dev is a tmpfs of half the RAM and /dev/shm a folder of it: /dev/shm gets a tmpfs bounded like /tmp, and
        # /dev (its device nodes are mounts of their own) becomes read-only, so neither can fill the memory.
        args += [*size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
        write = self.policy.mode == "workspace-write"
        writable = [p for p in self.policy.writable if p.exists()] if write else []
        homes = home_mounts([workspace, *writable, *([Path(home)] if home else [])])
        args += homes.args  # before the workspace and writable binds, which may lie in a home bound back
        for kept in under_tmp((Path(sys.prefix), *self.policy.readable)):  # installed software stays readable
            args += ["--ro-bind", kept, kept]
        ws = str(workspace)
        args += ["--bind" if write else "--ro-bind", ws, ws]
        for extra in writable:
            args += ["--bind", str(extra), str(extra)]
        if write:
            for name in PROTECTED_IN_WORKSPACE:
                inside = workspace / name
                if inside.exists():
                    args += ["--ro-bind", str(inside), str(inside)]
            for git in git_dirs(workspace):
                if any(git == root or root in git.parents for root in (workspace, *writable)):
                    args += ["--ro-bind", str(git), str(git)]
        masked = list(homes.hidden)
        host_env = os.environ if self.base_env is None else self.base_env
        keep = [ws, *map(str, writable), sys.prefix]
        hidden: list[str] = []
        for raw in (*self.policy.forbid_read, *ALWAYS_HIDDEN):
            hidden.append(str(_expand(raw, home)))
            elsewhere = relocated(raw, host_env)  # $XDG_CONFIG_HOME/reasonix, where `reasonix setup` keeps the key
            if elsewhere is not None:
                hidden.append(elsewhere)
        also = [host_env.get(name, "") for name in ("ZDOTDIR", *(name for _, name in XDG_HOMES))]
        hidden += histories(str(_expand("~", home)), also, keep)
        for path in dict.fromkeys(hidden):
            found = mask(path, keep)
            args += found.args
            if found.folder is not None:
                masked.append(found.folder)
        for sock in host_sockets(masked, homes.kept):
            args += ["--ro-bind", "/dev/null", sock]
        return args

    def wrap(self, argv: Sequence[str], *, workspace: Path, cwd: Path, env: Mapping[str, str]) -> Launch:
        if self.policy.mode == "full-access":
            raise ValueError("full-access runs without a sandbox; use NoSandbox")
        child_env = command_env(self.policy, env, self.base_env)
        child_env["TMPDIR"] = "/tmp"  # the private /tmp; the parent's TMPDIR may not exist inside
        userns = self.uses_userns()
        root = os.geteuid() == 0
        cgroup = new_pids_cgroup(self.policy.max_processes) if root else None
        by_rlimit = userns and not root and bool(self.policy.max_processes) and prlimit() is not None
        prefix = enter_cgroup(cgroup, self.policy.memory_mb) if cgroup is not None else []
        joined = self.join_net if not self.policy.network else ()
        status_at = len(prefix) + len(joined) + 1 if reports_exec(self.bwrap) else None
        args = [*prefix, *joined, self.bwrap, *self.mounts(workspace, child_env.get("HOME"))]
        # No capability survives into the sandbox, as root too: no remount, no umount of a mask, no raw sockets.
        args += ["--cap-drop", "ALL"]
        if userns:
            args += ["--unshare-user", "--disable-userns"]
        # --die-with-parent follows the thread that starts it: start it from one that lives as long as Reasonix
        # (sessions.sandbox.spawn, the trio thread), never from a worker thread.
        args += ["--unshare-pid", "--unshare-ipc", "--new-session", "--die-with-parent"]
        if not self.policy.network and not joined:
            args.append("--unshare-net")
        # A word of the launch's own command line (the sh, bubblewrap and the sandbox's init forked from it), so that
        # what a kill while bubblewrap starts leaves can be found and killed (reaper.kill_launch).
        marker = new_marker()
        args += ["--setenv", MARKER, marker]
        inner = rlimit_prefix(self.policy, nproc=by_rlimit) if cgroup is None else []
        args += ["--chdir", str(cwd), "--", *inner, *argv]
        bounds = Bounds(
            tmp_mb=self.policy.tmp_mb,
            max_processes=self.policy.max_processes if (cgroup is not None or by_rlimit) else 0,
            memory_mb=self.policy.memory_mb if (cgroup is not None or prlimit() is not None) else 0,
            cgroup=cgroup,
            processes_by_rlimit=by_rlimit,
        )
        # bwrap itself gets the filtered environment: it is the command's parent, whose /proc/PID/environ is readable.
        return Launch(
            argv=tuple(args), env=child_env, contained=True, bounds=bounds, marker=marker, status_at=status_at
        )
