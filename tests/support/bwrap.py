"""The real bubblewrap for the sandbox tests. Where it is missing they skip, except in CI (``CI`` set): there a missing
sandbox is a failure, never a silent skip (``.ci/run`` installs it). The rule is the ``bwrap`` part's
(tests/support/parts.py)."""

from __future__ import annotations

from pathlib import Path

from sessions.sandbox import BubblewrapSandbox, SandboxPolicy
from sessions.sandbox.bwrap import find_bwrap
from tests.support.parts import require


def require_bwrap() -> str:
    """The bwrap executable, for a test marked ``bwrap`` (tests/support/parts.py skips or fails the others)."""
    require("bwrap")
    bwrap = find_bwrap()
    assert bwrap is not None
    return bwrap


def sandbox(bwrap: str, **policy: object) -> BubblewrapSandbox:
    return BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy(**policy))  # type: ignore[arg-type]


def home_entry(path: Path) -> str:
    """The entry of /home that holds ``path`` (what the sandbox binds back of /home)."""
    return "/home/" + path.relative_to("/home").parts[0]
