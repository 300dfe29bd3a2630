"""Running commands confined: the :class:`Sandbox` seam, bubblewrap, no sandbox, and the allowlisted environment."""

from sessions.sandbox.base import Launch, Sandbox, describe
from sessions.sandbox.bwrap import BubblewrapSandbox
from sessions.sandbox.choose import INSTALL_HINT, sandbox_for, sandbox_unavailable_reason
from sessions.sandbox.env import command_env
from sessions.sandbox.none import NoSandbox
from sessions.sandbox.policy import BASE_ENV, DEFAULT_FORBID_READ, SANDBOX_MODES, SandboxMode, SandboxPolicy

__all__ = [
    "BASE_ENV",
    "DEFAULT_FORBID_READ",
    "INSTALL_HINT",
    "SANDBOX_MODES",
    "BubblewrapSandbox",
    "Launch",
    "NoSandbox",
    "Sandbox",
    "SandboxMode",
    "SandboxPolicy",
    "command_env",
    "describe",
    "sandbox_for",
    "sandbox_unavailable_reason",
]
