"""Starting a confined command from the thread that runs trio, not from a worker thread.

bubblewrap's ``--die-with-parent`` (``PR_SET_PDEATHSIG``) fires when the *thread* that started it exits. trio starts
processes from its thread cache, whose idle workers exit after ten seconds, so a sandboxed command that ran longer
than that was killed by SIGKILL although Reasonix was alive. Here ``subprocess.Popen`` runs on the trio thread (it
lives as long as the run; a vfork/exec takes about a millisecond), the exit is awaited on a pidfd and the output is
a trio stream: a command dies with Reasonix, and only then.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import trio


class Spawned:
    """A started process: its pid, its merged stdout/stderr, its exit."""

    def __init__(self, popen: subprocess.Popen[bytes], stdout: trio.lowlevel.FdStream) -> None:
        self._popen = popen
        self._pidfd = os.pidfd_open(popen.pid)
        self.stdout = stdout
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
    """Start ``argv`` in a new session with no stdin and stdout and stderr on one pipe. Raises OSError."""
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
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return Spawned(popen, trio.lowlevel.FdStream(read_end))
