"""Running commands confined (DESIGN §5, Safety): the :class:`Sandbox` seam that turns a command into an argv and an
environment, the bubblewrap implementation (read-only root, writable workspace, private ``/tmp``, new PID namespace,
no network unless asked), :class:`NoSandbox` where none exists, and the allowlisted environment every command gets
(never the API key's variable). ``Spawned``, ``spawn_server`` and bubblewrap's status pipe (``with_status_pipe``,
``read_status``, ``executed``; :mod:`sessions.sandbox.spawn`, which needs trio) load on first use: importing the
package stays free of trio."""

from typing import TYPE_CHECKING

from sessions.sandbox.base import Launch, Sandbox, describe
from sessions.sandbox.bounds import Bounds, release
from sessions.sandbox.bwrap import BubblewrapSandbox
from sessions.sandbox.choose import INSTALL_HINT, sandbox_for, sandbox_unavailable_reason
from sessions.sandbox.env import command_env
from sessions.sandbox.none import NoSandbox
from sessions.sandbox.policy import (
    BASE_ENV,
    DEFAULT_FORBID_READ,
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_MB,
    DEFAULT_TMP_MB,
    SANDBOX_MODES,
    SandboxMode,
    SandboxPolicy,
)
from sessions.sandbox.reaper import armed, kill_launch

__all__ = [
    "BASE_ENV",
    "DEFAULT_FORBID_READ",
    "DEFAULT_MAX_PROCESSES",
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TMP_MB",
    "INSTALL_HINT",
    "SANDBOX_MODES",
    "Bounds",
    "BubblewrapSandbox",
    "Launch",
    "NoSandbox",
    "Sandbox",
    "SandboxMode",
    "SandboxPolicy",
    "Spawned",
    "armed",
    "command_env",
    "describe",
    "executed",
    "kill_launch",
    "read_status",
    "release",
    "sandbox_for",
    "sandbox_unavailable_reason",
    "spawn_server",
    "with_status_pipe",
]

if TYPE_CHECKING:
    from sessions.sandbox.spawn import Spawned, executed, read_status, spawn_server, with_status_pipe
else:

    def __getattr__(name: str) -> object:
        if name in ("Spawned", "spawn_server", "executed", "read_status", "with_status_pipe"):
            from sessions.sandbox import spawn

            return getattr(spawn, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
