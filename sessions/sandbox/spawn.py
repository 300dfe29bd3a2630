"""Starting a confined command from the thread that runs trio, not from a worker thread.

bubblewrap's ``--die-with-parent`` (``PR_SET_PDEATHSIG``) fires when the *thread* that started it exits. trio starts
processes from its thread cache, whose idle workers exit after ten seconds, so a sandboxed command that ran longer
than that was killed by SIGKILL although Reasonix was alive. Here ``subprocess.Popen`` runs on the trio thread (it
lives as long as the run), the exit is awaited on a pidfd and the output is
a trio stream: a command dies with Reasonix, and only then.

bubblewrap arms ``--die-with-parent`` only after its clone, and as root a ``sh`` that enters the command's cgroup
runs before it (a cgroup move takes milliseconds): a SIGKILL of Reasonix in that gap left the sandbox to start
unwatched. The launch is therefore started through :func:`~sessions.sandbox.reaper.armed`: ``setpriv --pdeathsig
KILL`` arms the same signal before anything else runs, and it survives the exec into ``sh`` and bubblewrap, so the
process spawned dies with this thread from its first instruction (a ``preexec_fn`` did that until it was seen to make
``subprocess`` fork instead of vfork: DESIGN §5, Safety).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import trio

from sessions.sandbox.reaper import armed


class Spawned:
    """A started process: its pid, its merged stdout/stderr, its exit, and (with a status pipe) whether bubblewrap
    ever executed the command."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdout: trio.lowlevel.FdStream,
        stdin: trio.lowlevel.FdStream | None = None,
        status: int | None = None,
    ) -> None:
        self._popen = popen
        self._pidfd = os.pidfd_open(popen.pid)
        self._status = status
        self._reports = status is not None
        self._report = b""  # pragma: no mutate  — only searched for the exit code's key: a prefix changes nothing
        self.stdout = stdout
        self.stdin = stdin
        """The write end of its stdin (:func:`spawn_server` only)."""
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    @property
    def never_started(self) -> bool:
        """After :meth:`wait`: True when bubblewrap ended before it executed the command (a mount failed in its
        setup), so nothing of the command ran; False when it did, or when nothing reported it."""
        done = self._popen.returncode is not None and self._status is None
        return done and self._reports and not executed(self._report)

    async def wait(self) -> int:
        if self._popen.returncode is None:
            await trio.lowlevel.wait_readable(self._pidfd)
            self._popen.wait()
            with contextlib.suppress(OSError):  # pragma: no mutate  — closing a pidfd of ours does not fail
                os.close(self._pidfd)
        self._read_status()
        return self._popen.returncode

    def _read_status(self) -> None:
        """bubblewrap's JSON lines, whole once it exited (the command never holds the pipe); then closed."""
        if self._status is None:
            return
        self._report = read_status(self._status)
        self._status = None


def with_status_pipe(argv: Sequence[str], status_at: int | None) -> tuple[list[str], tuple[int, int] | None]:
    """``argv`` with bubblewrap's ``--json-status-fd`` on a new pipe where the launch says it may go (its
    :attr:`~sessions.sandbox.base.Launch.status_at`), and the pipe (read end, write end): the starter passes the
    write end to the child, closes it after the start, and reads the report with :func:`read_status` once the
    launch exited. None where no report is possible."""
    if status_at is None:
        return list(argv), None
    status = os.pipe()
    return [*argv[:status_at], "--json-status-fd", str(status[1]), *argv[status_at:]], status


def read_status(fd: int) -> bytes:
    """bubblewrap's JSON lines from the read end of :func:`with_status_pipe`, once the launch exited (the command
    never holds the pipe, and it holds at most 64 KiB: the first read takes it all and none blocks); then closed."""
    report = b""
    os.set_blocking(fd, False)  # pragma: no mutate  — see above
    with contextlib.suppress(OSError):  # pragma: no mutate  — see above
        while chunk := os.read(fd, 65536):  # pragma: no mutate  — see above
            report += chunk  # pragma: no mutate  — see above
    os.close(fd)
    return report


def executed(report: bytes) -> bool:
    """Whether bubblewrap's report says it executed the command (it writes the exit code only of what it ran)."""
    return b'"exit-code"' in report


def spawn(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], status_at: int | None = None) -> Spawned:
    """Start ``argv`` in a new session with no stdin and stdout and stderr on one pipe, dying with the calling
    thread (:func:`~sessions.sandbox.reaper.armed`). With ``status_at`` (a launch's
    :attr:`~sessions.sandbox.base.Launch.status_at`) bubblewrap writes its status to a pipe of its own, read by
    :attr:`Spawned.never_started`. Raises OSError."""
    read_end, write_end = os.pipe()
    argv, status = with_status_pipe(argv, status_at)
    try:
        start = armed(argv, env, cwd)
        popen = subprocess.Popen(
            start.argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=write_end,
            start_new_session=True,
            pass_fds=(status[1],) if status is not None else (),
            preexec_fn=start.preexec_fn,
        )
    except BaseException:
        os.close(read_end)
        if status is not None:
            os.close(status[0])
        raise
    finally:
        os.close(write_end)
        if status is not None:
            os.close(status[1])
    return Spawned(popen, trio.lowlevel.FdStream(read_end), status=status[0] if status is not None else None)


def spawn_server(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stderr: IO[str]) -> Spawned:
    """Start ``argv`` as :func:`spawn` does, for a server that talks over its stdin and stdout (an MCP stdio server):
    both on pipes, stderr to ``stderr``. Raises OSError."""
    stdin_read, stdin_write = os.pipe()
    try:
        stdout_read, stdout_write = os.pipe()
    except BaseException:  # only with no descriptor left: no test starves the test process for one
        os.close(stdin_read)  # pragma: no mutate  — see above
        os.close(stdin_write)  # pragma: no mutate  — see above
        raise
    try:
        start = armed(argv, env, cwd)
        popen = subprocess.Popen(
            start.argv,
            cwd=cwd,
            env=dict(env),
            stdin=stdin_read,
            stdout=stdout_write,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=start.preexec_fn,
        )
    except BaseException:
        os.close(stdin_write)
        os.close(stdout_read)
        raise
    finally:
        os.close(stdin_read)
        os.close(stdout_write)
    return Spawned(popen, trio.lowlevel.FdStream(stdout_read), stdin=trio.lowlevel.FdStream(stdin_write))
