"""Probing what bubblewrap can do on this machine, once per binary: whether it starts a sandbox at all, whether it
can give commands a user namespace of their own, and whether it reports that the command was started."""

from __future__ import annotations

import functools
import subprocess

TIMEOUT_S = 10.0
"""How long a probe may take before bubblewrap counts as not working here."""
_PROBE = ["--ro-bind", "/", "/", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--die-with-parent"]


def _try(bwrap: str, *flags: str) -> str | None:
    try:
        done = subprocess.run([bwrap, *flags, *_PROBE, "true"], capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
    return None


@functools.cache
def bwrap_works(bwrap: str) -> str | None:
    """None when ``bwrap`` can start a sandbox here, else why not (user namespaces off, a container without them)."""
    return _try(bwrap)


@functools.cache
def userns_works(bwrap: str) -> bool:
    """True when ``bwrap`` can give commands a user namespace of their own with nested ones refused (bubblewrap
    0.8 or later, user namespaces allowed; as root some containers refuse them). Capabilities are dropped either
    way."""
    return _try(bwrap, "--unshare-user", "--disable-userns") is None


@functools.cache
def reports_exec(bwrap: str) -> bool:
    """True when ``bwrap`` has ``--json-status-fd`` (bubblewrap 0.5 or later): its ``exit-code`` line is written only
    when the command was executed, so a launch that failed in bubblewrap's own setup can be told from the command's
    own failure."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--json-status-fd" in done.stdout + done.stderr
