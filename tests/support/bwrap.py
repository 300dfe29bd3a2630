"""The real bubblewrap for the sandbox tests. Where it is missing they skip, except in CI (``CI`` set): there a missing
sandbox is a failure, never a silent skip (``.ci/run`` installs it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessions.sandbox import BubblewrapSandbox, SandboxPolicy, sandbox_unavailable_reason
from sessions.sandbox.bwrap import find_bwrap


def require_bwrap() -> str:
    problem = sandbox_unavailable_reason()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests: {problem}")
        pytest.skip(problem)
    bwrap = find_bwrap()
    assert bwrap is not None
    return bwrap


def sandbox(bwrap: str, **policy: object) -> BubblewrapSandbox:
    return BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy(**policy))  # type: ignore[arg-type]


def home_entry(path: Path) -> str:
    """The entry of /home that holds ``path`` (what the sandbox binds back of /home)."""
    return "/home/" + path.relative_to("/home").parts[0]
