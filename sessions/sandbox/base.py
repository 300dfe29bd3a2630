"""The seam between a command and the OS: a :class:`Sandbox` turns a command line into the argv and the environment
that actually run (bubblewrap on Linux today; Seatbelt on macOS can be one more implementation). Tests inspect a
:class:`Launch` to see what would run."""

from __future__ import annotations

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
