"""A host socket (or its folder) removed between the launch that lists it and bubblewrap's mounts: bubblewrap cannot
make the mount point of its mask on the read-only root and stops before the command runs. The command still runs
(the launch is built again), a socket that is still there stays masked, and a command that fails by itself is never
run twice. Real bubblewrap, real sockets; the removal happens right after the listing, so it is deterministic."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from sessions.sandbox import BubblewrapSandbox, Launch, SandboxPolicy
from sessions.tools.shell import HeadTail, run_shell
from sessions.tools.shell.jobs import JobTable
from tests.support.sockets import CONNECT, listen
from tests.support.vanish import RemovingAfterListing


@pytest.fixture
def outside() -> Iterator[Path]:
    """Outside /tmp and /run, so the sandbox masks the sockets made here one by one."""
    path = Path(tempfile.mkdtemp(prefix="reasonix-vanish-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _masks(launch: Launch) -> list[str]:
    argv = list(launch.argv)
    return [argv[i + 2] for i in range(len(argv) - 2) if argv[i : i + 2] == ["--ro-bind", "/dev/null"]]


async def _run(sandbox: RemovingAfterListing, ws: Path, command: str) -> tuple[int | None, str]:
    output = HeadTail(65536, 65536)
    bash = shutil.which("bash")
    assert bash is not None
    run = await run_shell(bash, command, cwd=ws, env={}, timeout_s=60, output=output, sandbox=sandbox, workspace=ws)
    return run.exit_code, output.text()


@pytest.mark.parametrize("removed", ["folder", "socket"])
async def test_a_socket_gone_before_the_mounts_does_not_stop_the_command(
    bwrap: str, ws: Path, outside: Path, removed: str
) -> None:
    (outside / "gone").mkdir()
    gone = listen(outside / "gone" / "agent.sock")
    kept = listen(outside / "kept.sock")
    doomed = outside / "gone" if removed == "folder" else outside / "gone" / "agent.sock"
    sandbox = RemovingAfterListing(BubblewrapSandbox(bwrap, SandboxPolicy()), doomed)
    (ws / "probe.py").write_text(CONNECT)
    try:
        code, out = await _run(sandbox, ws, f"{sys.executable} probe.py {outside / 'kept.sock'}; echo ran")
    finally:
        gone.close()
        kept.close()
    first, *again = sandbox.launches
    assert str(outside / "gone" / "agent.sock") in _masks(first)  # listed, then removed before bubblewrap ran
    assert code == 0 and out.endswith("ran\n") and "bwrap" not in out, out
    assert len(again) == 1 and str(outside / "gone" / "agent.sock") not in _masks(again[0])
    assert str(outside / "kept.sock") in _masks(again[0])  # still there: still masked on the second launch
    assert out.startswith("refused ") and "CONNECTED" not in out


async def test_a_command_that_fails_by_itself_runs_once(bwrap: str, ws: Path, outside: Path) -> None:
    (outside / "spare").write_text("")  # nothing the launch masks is removed
    sandbox = RemovingAfterListing(BubblewrapSandbox(bwrap, SandboxPolicy()), outside / "spare")
    command = 'echo run >> runs; echo "bwrap: Can\'t mkdir parents for /x: Read-only file system" >&2; exit 1'
    code, out = await _run(sandbox, ws, command)
    assert code == 1 and out == "bwrap: Can't mkdir parents for /x: Read-only file system\n"
    assert (ws / "runs").read_text() == "run\n" and len(sandbox.launches) == 1


async def test_a_job_whose_socket_went_away_still_runs(bwrap: str, ws: Path, outside: Path) -> None:
    (outside / "gone").mkdir()
    server = listen(outside / "gone" / "agent.sock")
    sandbox = RemovingAfterListing(BubblewrapSandbox(bwrap, SandboxPolicy()), outside / "gone")
    bash = shutil.which("bash")
    assert bash is not None
    table = JobTable()
    try:
        job = table.start(bash, "echo ran", cwd=ws, env={}, sandbox=sandbox)
        with trio.fail_after(30):
            while not job.ended:
                await job.changed.wait()
        assert (job.exit_code, job.total, job.take()) == (0, 4, "ran\n")
        assert len(sandbox.launches) == 2 and job.bounds == sandbox.launches[1].bounds
    finally:
        table.close()
        server.close()
