"""A hook started while another program removes its socket folder: bubblewrap stops in its setup before the hook
ran, the launch is built again and the hook runs once. A hook that fails by itself with bubblewrap's words runs once.
Real bubblewrap; the removal happens right after the launch listed the sockets, so it is deterministic."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from orchestrator.hooks.process import run_hook_command
from sessions.sandbox import BubblewrapSandbox, SandboxPolicy
from tests.support.bwrap import require_bwrap
from tests.support.sockets import listen
from tests.support.vanish import RemovingAfterListing

pytestmark = pytest.mark.bwrap


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="reasonix-hook-vanish-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _bash() -> str:
    bash = shutil.which("bash")
    assert bash is not None
    return bash


async def test_a_hook_whose_socket_folder_went_away_still_runs_once(tmp_path: Path, outside: Path) -> None:
    (outside / "gone").mkdir()
    server = listen(outside / "gone" / "agent.sock")
    sandbox = RemovingAfterListing(BubblewrapSandbox(require_bwrap(), SandboxPolicy()), outside / "gone")
    try:
        run = await run_hook_command(
            _bash(), "cat >> seen; echo ok", b"{}\n", workspace=tmp_path, sandbox=sandbox, timeout_s=60, env={}
        )
    finally:
        server.close()
    assert (run.exit_code, run.stdout, run.stderr) == (0, "ok\n", "")
    assert (tmp_path / "seen").read_text() == "{}\n" and len(sandbox.launches) == 2


async def test_a_hook_that_fails_with_bubblewraps_words_about_a_gone_mount_runs_once(
    tmp_path: Path, outside: Path
) -> None:
    """The hook waits on a FIFO until the test removed the socket folder its launch masks (after bubblewrap made its
    mounts), then prints exactly bubblewrap's setup error about it and exits 1: it ran, so it is not run again."""
    (outside / "gone").mkdir()
    gone = outside / "gone" / "agent.sock"
    server = listen(gone)
    os.mkfifo(tmp_path / "go")
    sandbox = BubblewrapSandbox(require_bwrap(), SandboxPolicy())
    said = f"bwrap: Can't create file at {gone}: Read-only file system"
    command = f'echo run >> runs; read x < go; echo "{said}" >&2; exit 1'

    def remove_then_let_go() -> None:
        with (tmp_path / "go").open("w") as fifo:  # opens once the hook reads: its mounts are made
            shutil.rmtree(outside / "gone")
            fifo.write("x\n")

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.to_thread.run_sync, remove_then_let_go)
            run = await run_hook_command(
                _bash(), command, b"{}\n", workspace=tmp_path, sandbox=sandbox, timeout_s=60, env={}
            )
    finally:
        server.close()
    assert run.exit_code == 1 and run.stderr == said + "\n"
    assert (tmp_path / "runs").read_text() == "run\n"
