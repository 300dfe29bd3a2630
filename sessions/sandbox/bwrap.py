"""bubblewrap (``bwrap``, Debian package ``bubblewrap``): the Linux sandbox.

* ``--ro-bind / /``: the whole filesystem read-only; ``--tmpfs /tmp``: a private, empty ``/tmp``; ``--proc /proc``
  (of the new PID namespace, so no other process's ``/proc/*/environ`` is visible) and a minimal ``--dev /dev``;
* the workspace bound writable (read-only in ``read-only`` mode), and the extra writable paths in
  ``workspace-write`` mode; the workspace's ``.reasonix`` directory (journals, run state) and its ``reasonix.toml`` /
  ``reasonix.local.toml`` stay read-only: a command cannot rewrite the supervisor's records or its own rules;
* ``forbid_read`` paths masked: an empty tmpfs over a directory, ``/dev/null`` over a file;
* ``--unshare-pid --die-with-parent --new-session``: everything the command starts dies when it exits or when
  Reasonix dies (even by SIGKILL), and it has no terminal to inject input into;
* ``--unshare-net`` unless ``[sandbox] network = true``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sessions.sandbox.base import Launch
from sessions.sandbox.env import command_env
from sessions.sandbox.policy import SandboxMode, SandboxPolicy

PROTECTED_IN_WORKSPACE = (".reasonix", "reasonix.toml", "reasonix.local.toml")


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

    @property
    def name(self) -> str:
        return "bubblewrap"

    @property
    def confines(self) -> bool:
        return True

    def with_mode(self, mode: SandboxMode) -> BubblewrapSandbox:
        return replace(self, policy=self.policy.with_mode(mode))

    def mounts(self, workspace: Path, home: str | None) -> list[str]:
        """The filesystem arguments, in order (later mounts win)."""
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        write = self.policy.mode == "workspace-write"
        ws = str(workspace)
        args += ["--bind" if write else "--ro-bind", ws, ws]
        if write:
            for extra in self.policy.writable:
                if extra.exists():
                    args += ["--bind", str(extra), str(extra)]
            for name in PROTECTED_IN_WORKSPACE:
                inside = workspace / name
                if inside.exists():
                    args += ["--ro-bind", str(inside), str(inside)]
        for raw in self.policy.forbid_read:
            path = _expand(raw, home)
            if path.is_dir():
                args += ["--tmpfs", str(path)]
            elif path.exists():
                args += ["--ro-bind", "/dev/null", str(path)]
        return args

    def wrap(self, argv: Sequence[str], *, workspace: Path, cwd: Path, env: Mapping[str, str]) -> Launch:
        if self.policy.mode == "full-access":
            raise ValueError("full-access runs without a sandbox; use NoSandbox")
        child_env = command_env(self.policy, env, self.base_env)
        child_env["TMPDIR"] = "/tmp"  # the private /tmp; the parent's TMPDIR may not exist inside
        args = [self.bwrap, *self.mounts(workspace, child_env.get("HOME"))]
        args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
        if not self.policy.network:
            args.append("--unshare-net")
        args += ["--chdir", str(cwd), "--", *argv]
        # bwrap itself gets the filtered environment: it is the command's parent, whose /proc/PID/environ is readable.
        return Launch(argv=tuple(args), env=child_env, contained=True)
