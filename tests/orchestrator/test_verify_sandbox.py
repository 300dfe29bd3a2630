"""The supervisor's verify commands run in the same sandbox as the bash tool: an approved plan's verify command
cannot write outside the workspace, and can inside it (real bubblewrap; a failure, never a skip, in CI)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.policy.verify import run_verify
from plans.schema import Step, VerifyCommand
from sessions.sandbox import BubblewrapSandbox, SandboxPolicy
from tests.support.bwrap import require_bwrap


@pytest.fixture
def outside() -> Iterator[Path]:
    """Outside the workspace and outside /tmp (which the sandbox replaces with its own)."""
    path = Path(tempfile.mkdtemp(prefix="reasonix-verify-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        for child in path.iterdir():
            child.unlink()
        path.rmdir()


def step(command: str) -> Step:
    return Step(id="S1", title="t", instructions="i", verify=(VerifyCommand(command=command),))


@pytest.mark.bwrap
async def test_a_verify_command_cannot_write_outside_the_workspace_but_can_inside(
    tmp_path: Path, outside: Path
) -> None:
    box = BubblewrapSandbox(bwrap=require_bwrap(), policy=SandboxPolicy(mode="workspace-write"))
    (escaped,) = await run_verify(step(f"echo pwned > {outside}/x"), tmp_path, sandbox=box)
    assert not escaped.ok and not (outside / "x").exists()
    (inside,) = await run_verify(step("echo fine > inside.txt && cat inside.txt"), tmp_path, sandbox=box)
    assert inside.ok and (tmp_path / "inside.txt").read_text() == "fine\n"


async def test_without_the_sandbox_the_same_verify_command_escapes(tmp_path: Path, outside: Path) -> None:
    """The contrast that makes the test above mean something."""
    (escaped,) = await run_verify(step(f"echo pwned > {outside}/x"), tmp_path)
    assert escaped.ok and (outside / "x").read_text() == "pwned\n"
