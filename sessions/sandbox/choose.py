"""Picking the sandbox for a policy: bubblewrap when it is installed and works, else none (and the caller says so)."""

from __future__ import annotations

from collections.abc import Mapping

from sessions.sandbox.base import Sandbox
from sessions.sandbox.bwrap import BubblewrapSandbox, find_bwrap
from sessions.sandbox.none import NoSandbox
from sessions.sandbox.policy import SandboxPolicy
from sessions.sandbox.probe import bwrap_works, userns_works

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap)"
)


def sandbox_unavailable_reason() -> str | None:
    """None when a sandbox can confine commands here; otherwise what is wrong and how to fix it."""
    bwrap = find_bwrap()
    if bwrap is None:
        return f"bwrap is not installed; {INSTALL_HINT}"
    problem = bwrap_works(bwrap)
    if problem is not None:
        return f"bwrap cannot start a sandbox here ({problem}); unprivileged user namespaces may be disabled"
    return None


def sandbox_for(policy: SandboxPolicy, base_env: Mapping[str, str] | None = None) -> Sandbox:
    """bubblewrap for ``workspace-write`` / ``read-only`` when it works here; :class:`NoSandbox` for ``full-access``
    or when no sandbox is available (check :attr:`Sandbox.confines`)."""
    if policy.mode != "full-access":
        bwrap = find_bwrap()
        if bwrap is not None and bwrap_works(bwrap) is None:
            return BubblewrapSandbox(bwrap=bwrap, policy=policy, base_env=base_env, userns=userns_works(bwrap))
    return NoSandbox(policy=policy, base_env=base_env)
