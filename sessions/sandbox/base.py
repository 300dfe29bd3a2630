"""The seam between a command and the OS: a :class:`Sandbox` turns a command line into the argv and the environment
that actually run (bubblewrap on Linux today; Seatbelt on macOS can be one more implementation). Tests inspect a
:class:`Launch` to see what would run."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sessions.sandbox.bounds import Bounds
from sessions.sandbox.policy import SandboxMode, SandboxPolicy


@dataclass(frozen=True, slots=True)
class Launch:
    """What to start for one command."""

    argv: tuple[str, ...]
    env: dict[str, str]
    contained: bool = False
    """True when the OS itself ends everything the command starts when it exits (a PID namespace): nothing to hunt.
    Only a sandbox that gives that says so; any other launch is hunted after."""
    bounds: Bounds | None = None
    """The bounds it runs under (None: none); :func:`~sessions.sandbox.bounds.release` after it ended."""
    marker: str = ""
    """A word of the launch's command line that :func:`~sessions.sandbox.reaper.kill_launch` finds what is left of
    it by, whoever started it ("" for a launch that is not confined)."""
    status_at: int | None = None
    """Where ``--json-status-fd FD`` may go in ``argv`` (right after bubblewrap) for a starter that gives it a pipe
    (:func:`~sessions.sandbox.spawn.spawn`): then a launch that never executed the command is told apart. None: no
    such report here."""

    def stopped_on_a_gone_mount(self, exit_code: int | None, output: str) -> bool:
        """For a starter that only sees what the launch printed (an editor's terminal, which the editor starts):
        True when ``output`` is only bubblewrap's own setup error (exit status 1) about a destination this launch
        mounts over that no longer exists (a host socket or history file removed after the launch listed it, so
        bubblewrap could not make the mount point on the read-only root): the command never ran, and a launch built
        again starts it. A command that prints the same words about anything else, or about a path still there,
        ran, and is never started twice. A starter that spawns the launch itself reads bubblewrap's status instead
        (:func:`~sessions.sandbox.spawn.executed`), which tells even those apart."""
        if exit_code != 1 or not self.contained:
            return False
        line = output.strip()
        if "\n" in line:
            return False
        for start in _SETUP_ERRORS:
            if line.startswith(start):
                path, sep, _reason = line[len(start) :].rpartition(": ")
                return bool(sep) and path in _destinations(self.argv) and not os.path.lexists(path)
        return False


_SETUP_ERRORS = ("bwrap: Can't mkdir parents for ", "bwrap: Can't create file at ", "bwrap: Can't mkdir ")


def _destinations(argv: tuple[str, ...]) -> set[str]:
    """What bubblewrap mounts over: the second operand of each bind, the operand of each tmpfs — read from its
    mounts (which start with the read-only root) to the ``--`` before the command, never from the command itself."""
    found: set[str] = set()
    start = next((i for i in range(len(argv) - 2) if argv[i : i + 3] == ("--ro-bind", "/", "/")), len(argv))
    for i in range(start, len(argv)):
        word = argv[i]
        if word == "--":
            break
        if word in ("--ro-bind", "--bind", "--ro-bind-try", "--bind-try") and i + 2 < len(argv):
            found.add(argv[i + 2])
        elif word == "--tmpfs" and i + 1 < len(argv):
            found.add(argv[i + 1])
    return found


class Sandbox(Protocol):
    """Turns a command into a :class:`Launch` under a :class:`SandboxPolicy`."""

    @property
    def name(self) -> str:
        """``bubblewrap``, ``none``: what confines the commands."""
        ...

    @property
    def policy(self) -> SandboxPolicy: ...

    @property
    def confines(self) -> bool:
        """True when the OS enforces the policy (reads, writes, network); False means commands run with the user's
        full rights, so each one should be approved."""
        ...

    def with_mode(self, mode: SandboxMode) -> Sandbox:
        """The same sandbox under another mode (the planner's read-only view of the executor's sandbox)."""
        ...

    def wrap(self, argv: Sequence[str], *, workspace: Path, cwd: Path, env: Mapping[str, str]) -> Launch:
        """The launch for ``argv`` run in ``cwd`` inside ``workspace``; ``env`` holds overrides (already chosen
        values, e.g. from the tool context) that join the allowlisted environment."""
        ...


def describe(sandbox: Sandbox) -> str:
    """One line for prompts, footers and ``doctor``: ``bubblewrap · workspace-write · no network``."""
    if not sandbox.confines:
        if sandbox.policy.mode == "full-access":
            return "no sandbox (full-access)"
        return "no sandbox available"
    network = "network" if sandbox.policy.network else "no network"
    return f"{sandbox.name} · {sandbox.policy.mode} · {network}"
