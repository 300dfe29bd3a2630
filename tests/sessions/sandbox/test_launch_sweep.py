"""What a kill of a launch while bubblewrap starts leaves, found by the launch's marker and ended.

bubblewrap arms ``--die-with-parent`` in its child only after the mounts: a kill of the launch in between (an
editor's kill of its terminal right after creating it) leaves that child, and then the command, running with no
parent. To be sure the kill lands there, bubblewrap's child is stopped (SIGSTOP) as soon as it exists and let go on
(SIGCONT) after the kill, as a loaded machine holds it in its setup.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from sessions.sandbox import Launch, SandboxPolicy, kill_launch, release, sandbox_for
from sessions.sandbox.spawn import Spawned, spawn
from tests.support.bwrap import require_bwrap
from tests.support.leftovers import assert_gone, pids_running

ROUNDS = 10


def _first_child(pid: int) -> int:
    """bubblewrap's child, as soon as it exists (a busy wait of a few milliseconds: bubblewrap forks at once)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            found = children.read_text().split()
            if found:
                return int(found[0])
    raise AssertionError("bubblewrap forked no child within 10 s")


def _kill_while_starting(launch: Launch, cwd: Path) -> Spawned:
    started = spawn(launch.argv, cwd=cwd, env=launch.env)
    child = _first_child(started.pid)
    os.kill(child, signal.SIGSTOP)
    os.kill(started.pid, signal.SIGKILL)  # the launch only, as an editor kills the process it started
    os.kill(child, signal.SIGCONT)
    return started


@pytest.mark.bwrap
async def test_a_launch_killed_while_bubblewrap_starts_leaves_a_sandbox_that_kill_launch_ends(tmp_path: Path) -> None:
    require_bwrap()
    box = sandbox_for(SandboxPolicy(mode="workspace-write"))
    landed = 0
    for _ in range(ROUNDS):  # a loaded machine may let bubblewrap arm before the stop: that round leaves nothing
        command = f"sleep 60; : {uuid.uuid4().hex}"  # a word of the sandbox's command lines, this round's only
        launch = box.wrap(["bash", "-c", command], workspace=tmp_path, cwd=tmp_path, env=dict(os.environ))
        try:
            await _kill_while_starting(launch, tmp_path).wait()
            left = pids_running(command)
        finally:
            swept = kill_launch(launch.marker)
            release(launch.bounds)
        assert bool(swept.killed) == bool(left) and swept.survived == 0
        assert_gone(command, "the sandbox the kill left is still running after kill_launch")
        assert kill_launch(launch.marker).killed == 0  # nothing of it is left to find
        landed += bool(left)
        if landed:
            break
    assert landed, f"no kill of {ROUNDS} landed while bubblewrap started"
