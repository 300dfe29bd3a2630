"""Starting a confined command from the thread that runs trio, not from a worker thread.

bubblewrap's ``--die-with-parent`` (``PR_SET_PDEATHSIG``) fires when the *thread* that started it exits. trio starts
processes from its thread cache, whose idle workers exit after ten seconds, so a sandboxed command that ran longer
than that was killed by SIGKILL although Reasonix was alive. Here ``subprocess.Popen`` runs on the trio thread (it
lives as long as the run), the exit is awaited on a pidfd and the output is
a trio stream: a command dies with Reasonix, and only then.

bubblewrap arms ``--die-with-parent`` only after its clone, and as root a ``sh`` that enters the command's cgroup
runs before it (a cgroup move takes milliseconds): a SIGKILL of Reasonix in that gap left the sandbox to start
unwatched. :func:`die_with_parent` arms the same signal in the child between fork and exec, where it survives the
exec into ``sh`` and bubblewrap, so the process spawned dies with this thread from its first instruction. (A
``preexec_fn`` makes ``subprocess`` fork instead of vfork; see DESIGN §5, Safety, for what that costs.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import trio

from sessions.sandbox.reaper import die_with_parent


class Spawned:
    """A started process: its pid, its merged stdout/stderr, its exit."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdout: trio.lowlevel.FdStream,
        stdin: trio.lowlevel.FdStream | None = None,
    ) -> None:
        self._popen = popen
        self._pidfd = os.pidfd_open(popen.pid)
        self.stdout = stdout
        self.stdin = stdin
        """The write end of its stdin (:func:`spawn_server` only)."""
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        if self._popen.returncode is None:
            await trio.lowlevel.wait_readable(self._pidfd)
            self._popen.wait()
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
        return self._popen.returncode


def spawn(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> Spawned:
    """Start ``argv`` in a new session with no stdin and stdout and stderr on one pipe, dying with the calling
    thread (:func:`die_with_parent`). Raises OSError."""
    read_end, write_end = os.pipe()
    try:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=write_end,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return Spawned(popen, trio.lowlevel.FdStream(read_end))


def spawn_server(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stderr: IO[str]) -> Spawned:
    """Start ``argv`` as :func:`spawn` does, for a server that talks over its stdin and stdout (an MCP stdio server):
    both on pipes, stderr to ``stderr``. Raises OSError."""
    stdin_read, stdin_write = os.pipe()
    try:
        stdout_read, stdout_write = os.pipe()
    except BaseException:
        os.close(stdin_read)
        os.close(stdin_write)
        raise
    try:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=stdin_read,
            stdout=stdout_write,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )
    except BaseException:
        os.close(stdin_write)
        os.close(stdout_read)
        raise
    finally:
        os.close(stdin_read)
        os.close(stdout_write)
    return Spawned(popen, trio.lowlevel.FdStream(stdout_read), trio.lowlevel.FdStream(stdin_write))
