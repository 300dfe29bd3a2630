"""Running a shell command the way both the ``bash`` tool and the supervisor's verify commands need it.

``bash -c`` in a directory, with no stdin and a new session (the command and everything it starts form one process
group, with no terminal to prompt on); stdout and stderr merged into a bounded head + tail; the whole group killed
(SIGKILL) and reaped on timeout, on cancellation and on error; provider credentials removed from the environment.
When the command exits but something it started keeps the output open, that leftover gets a short grace and is then
killed. ``kill_leftovers`` also kills what the command left running with its output redirected (verify commands must
leave nothing behind; the ``bash`` tool lets a deliberately detached server live).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from sessions.tools.bounded import HeadTail

_CREDENTIAL = re.compile(r"(^|_)API_KEY$|(^|_)TOKEN$|_SECRET|^SECRET(_|$)")


def is_credential(name: str) -> bool:
    return name.upper() == "DEEPSEEK_API_KEY" or _CREDENTIAL.search(name.upper()) is not None


def child_env(overrides: Mapping[str, str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment: ``base`` (default ``os.environ``) plus ``overrides``, minus credentials."""
    merged = {**(os.environ if base is None else base), **overrides}
    return {name: value for name, value in merged.items() if not is_credential(name)}


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class ShellRun:
    exit_code: int | None
    """None when the command timed out; negative when a signal killed it."""
    timed_out: bool
    lingering: bool
    """Background processes kept the output open after the command exited and were killed."""


async def run_shell(
    bash: str,
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    output: HeadTail,
    exit_grace_s: float = 1.0,
    kill_leftovers: bool = False,
) -> ShellRun:
    """Run ``command``; what it prints goes into ``output``. Raises OSError when bash cannot start."""
    proc = await trio.lowlevel.open_process(
        [bash, "-c", command],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    stdout = proc.stdout
    assert stdout is not None
    lingering = False
    done = False
    try:
        with trio.move_on_after(timeout_s) as deadline:
            eof = trio.Event()

            async def pump() -> None:
                async for chunk in stdout:
                    output.feed(chunk)
                eof.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(pump)
                await proc.wait()
                with trio.move_on_after(exit_grace_s):
                    await eof.wait()
                lingering = not eof.is_set()
                if lingering or kill_leftovers:
                    kill_group(proc.pid)
                with trio.move_on_after(exit_grace_s):  # a process that left the group keeps the pipe: stop reading
                    await eof.wait()
                nursery.cancel_scope.cancel()
        done = not deadline.cancelled_caught
    finally:
        if not done:  # timeout, cancellation or an error: nothing of the command may outlive the call
            kill_group(proc.pid)
        with trio.CancelScope(shield=True):
            await proc.wait()
            await stdout.aclose()
    timed_out = deadline.cancelled_caught
    return ShellRun(exit_code=None if timed_out else proc.returncode, timed_out=timed_out, lingering=lingering)
