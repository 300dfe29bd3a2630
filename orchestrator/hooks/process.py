"""Running one hook's command: ``bash -c`` in the workspace, through the sandbox its configuration asks for, one JSON
object on stdin, stdout and stderr read apart, killed (its whole process group) at its timeout or on cancellation.

The process is started on the trio thread, not from a worker thread (see :mod:`sessions.sandbox.spawn`: bubblewrap's
``--die-with-parent`` follows the thread that started it), and its exit is awaited on a pidfd.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from sessions.sandbox import Launch, Sandbox, armed, executed, kill_launch, read_status, release, with_status_pipe

OUTPUT_LIMIT = 1_000_000
"""Bytes kept of a hook's stdout and of its stderr each."""


@dataclass(frozen=True, slots=True)
class HookRun:
    exit_code: int | None
    """None when the hook timed out and was killed."""
    stdout: str
    stderr: str


async def _drain(stream: trio.lowlevel.FdStream, into: bytearray) -> None:
    async with stream:
        while chunk := await stream.receive_some(65536):
            if len(into) < OUTPUT_LIMIT:
                into.extend(chunk[: OUTPUT_LIMIT - len(into)])


async def _feed(stream: trio.lowlevel.FdStream, data: bytes) -> None:
    async with stream:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await stream.send_all(data)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _start(launch: Launch, cwd: Path) -> tuple[subprocess.Popen[bytes], tuple[int, int, int], int | None]:
    """Start the launch with three pipes; our ends of them (stdin's write end, stdout's and stderr's read ends), and
    the read end of bubblewrap's status pipe where the launch can report (None elsewhere)."""
    pipes = [os.pipe() for _ in range(3)]
    argv, status = with_status_pipe(launch.argv, launch.status_at)
    try:
        start = armed(argv, launch.env, cwd)
        popen = subprocess.Popen(
            start.argv,
            cwd=cwd,
            env=dict(launch.env),
            stdin=pipes[0][0],
            stdout=pipes[1][1],
            stderr=pipes[2][1],
            start_new_session=True,
            pass_fds=(status[1],) if status is not None else (),
            preexec_fn=start.preexec_fn,  # a hook dies with Reasonix, sandboxed or not, even while bwrap starts
        )
    except BaseException:
        for r, w in pipes if status is None else [*pipes, status]:
            os.close(r)
            os.close(w)
        release(launch.bounds)
        raise
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1], *([status[1]] if status is not None else [])):
        os.close(fd)
    return popen, (pipes[0][1], pipes[1][0], pipes[2][0]), status[0] if status is not None else None


async def run_hook_command(
    bash: str,
    command: str,
    payload: bytes,
    *,
    workspace: Path,
    sandbox: Sandbox,
    timeout_s: float,
    env: Mapping[str, str],
) -> HookRun:
    """Run ``command`` with ``payload`` on stdin. Raises OSError when it cannot start. A sandbox that stopped before
    the command ran (a path it masks went away after the launch listed it) is started once more, built again."""
    argv = [bash, "-c", command]
    launch = sandbox.wrap(argv, workspace=workspace, cwd=workspace, env=env)
    run, never_started = await _run_once(launch, payload, workspace=workspace, timeout_s=timeout_s)
    if never_started:
        launch = sandbox.wrap(argv, workspace=workspace, cwd=workspace, env=env)
        run, _ = await _run_once(launch, payload, workspace=workspace, timeout_s=timeout_s)
    return run


async def _run_once(launch: Launch, payload: bytes, *, workspace: Path, timeout_s: float) -> tuple[HookRun, bool]:
    """One launch of the hook; and whether bubblewrap ended before it executed the command (its status says so)."""
    popen, (stdin, stdout, stderr), status = _start(launch, workspace)
    pidfd = os.pidfd_open(popen.pid)
    out, err = bytearray(), bytearray()
    timed_out = ended = False
    try:
        with trio.move_on_after(timeout_s) as deadline:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_feed, trio.lowlevel.FdStream(stdin), payload)
                nursery.start_soon(_drain, trio.lowlevel.FdStream(stdout), out)
                nursery.start_soon(_drain, trio.lowlevel.FdStream(stderr), err)
                await trio.lowlevel.wait_readable(pidfd)
                ended = True
                _kill(popen.pid)  # what the hook left running goes with it
        timed_out = deadline.cancelled_caught
    finally:
        _kill(popen.pid)
        if not ended:  # a kill while bubblewrap started leaves its child: found by the launch's marker
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(kill_launch, launch.marker)
        popen.wait()
        os.close(pidfd)
        report = read_status(status) if status is not None else None
        release(launch.bounds)
    text = (bytes(out).decode("utf-8", "replace"), bytes(err).decode("utf-8", "replace"))
    never_started = report is not None and not timed_out and not executed(report)
    return HookRun(exit_code=None if timed_out else popen.returncode, stdout=text[0], stderr=text[1]), never_started
