"""Running a shell command the way both the ``bash`` tool and the supervisor's verify commands need it.

The command goes through a :class:`~sessions.sandbox.Sandbox` (bubblewrap, or none), which decides the argv and the
environment (an allowlist: never the API key). ``bash -c`` in a directory, with no stdin and a new session; stdout
and stderr merged into a bounded head + tail; everything killed and reaped on timeout, on cancellation and on error.

When the command exits, nothing it started outlives it: in a sandbox its PID namespace ends with it; without one,
Reasonix is a child subreaper and hunts the leftovers down by a marker variable and process group
(:mod:`sessions.sandbox.reaper`). A leftover that keeps the output open gets a short grace first. What the status says
was killed is what was seen gone.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from sessions.sandbox.base import Launch, Sandbox
from sessions.sandbox.bounds import bound_hit, release
from sessions.sandbox.none import NoSandbox
from sessions.sandbox.reaper import MARKER, Sweep, become_subreaper, kill_launch, kill_leftovers, new_marker
from sessions.sandbox.spawn import Spawned, spawn
from sessions.tools.shell.bounded import HeadTail


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def kill_rest_of_launch(launch: Launch) -> None:
    """After a kill of a sandboxed command: what a kill while bubblewrap started left (its child, before it armed
    ``--die-with-parent``), found by the launch's marker (:func:`~sessions.sandbox.reaper.kill_launch`)."""
    if launch.marker:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(kill_launch, launch.marker)


@dataclass(frozen=True, slots=True)
class ShellRun:
    exit_code: int | None
    """None when the command timed out; negative when a signal killed it."""
    timed_out: bool
    lingering: bool
    """Background processes kept the output open after the command exited."""
    leftovers_killed: int = 0
    """Processes the command left behind, seen gone after SIGKILL (unconfined commands only)."""
    leftovers_survived: int = 0
    """Processes the command left behind that could not be killed."""
    bound: str | None = None
    """Which of the sandbox's bounds (processes, memory, /tmp) the failed command hit, in words."""


@dataclass(frozen=True, slots=True)
class StartedShell:
    proc: Spawned
    marker: str
    """The leftover-hunting marker of an unconfined command ("" in a sandbox, whose PID namespace ends with it)."""
    launch: Launch


def start_shell(
    bash: str, command: str, *, sandbox: Sandbox, workspace: Path, cwd: Path, env: Mapping[str, str]
) -> StartedShell:
    """``bash -c command`` through ``sandbox``, started; the sandbox's bounds are released if it cannot start.
    Raises OSError when it cannot start. The one launch path of the ``bash`` tool, verify commands and jobs."""
    launch = sandbox.wrap([bash, "-c", command], workspace=workspace, cwd=cwd, env=env)
    child_env = dict(launch.env)
    marker = ""
    if not launch.contained:
        become_subreaper()
        marker = new_marker()
        child_env[MARKER] = marker
    try:
        # On the trio thread: bubblewrap's --die-with-parent follows the thread that started it (spawn.py).
        proc = spawn(launch.argv, cwd=cwd, env=child_env, status_at=launch.status_at)
    except BaseException:
        release(launch.bounds)
        raise
    return StartedShell(proc, marker, launch)


async def run_shell(
    bash: str,
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    output: HeadTail,
    exit_grace_s: float = 1.0,
    sandbox: Sandbox | None = None,
    workspace: Path | None = None,
) -> ShellRun:
    """Run ``command`` through ``sandbox`` (default: none); ``env`` holds overrides joining the allowlisted
    environment. What it prints goes into ``output``. Raises OSError when the command cannot start.

    A sandbox whose own setup failed before it executed the command (a host socket it masks, or its folder, removed
    after the launch listed it: bubblewrap cannot make the mount point on the read-only root) ran nothing, so the
    launch is built again (listing what exists now) and started once more, its error forgotten."""
    sandbox = sandbox if sandbox is not None else NoSandbox()
    once = functools.partial(
        _run_once, bash, command, sandbox=sandbox, workspace=workspace or cwd, cwd=cwd, env=env, timeout_s=timeout_s
    )
    run, never_started = await once(output=output, exit_grace_s=exit_grace_s)
    if never_started:
        output.reset()
        run, _ = await once(output=output, exit_grace_s=exit_grace_s)
    return run


async def _run_once(
    bash: str,
    command: str,
    *,
    sandbox: Sandbox,
    workspace: Path,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    output: HeadTail,
    exit_grace_s: float,
) -> tuple[ShellRun, bool]:
    """One launch of ``command``; and whether the sandbox ended before it executed the command."""
    started = start_shell(bash, command, sandbox=sandbox, workspace=workspace, cwd=cwd, env=env)
    proc, marker, launch = started.proc, started.marker, started.launch
    stdout = proc.stdout
    assert stdout is not None
    lingering = False
    done = False
    sweep = Sweep(0, 0)
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
                if marker:  # counts what it kills, the process group included
                    sweep = await trio.to_thread.run_sync(kill_leftovers, marker, proc.pid)
                kill_group(proc.pid)
                with trio.move_on_after(exit_grace_s):  # something unkillable keeps the pipe: stop reading
                    await eof.wait()
                nursery.cancel_scope.cancel()
        done = not deadline.cancelled_caught
    finally:
        if not done:  # timeout, cancellation or an error: nothing of the command may outlive the call
            kill_group(proc.pid)
            await kill_rest_of_launch(launch)
            if marker:
                with trio.CancelScope(shield=True):
                    sweep = await trio.to_thread.run_sync(
                        functools.partial(kill_leftovers, marker, proc.pid, group_killed=True)
                    )
        with trio.CancelScope(shield=True):
            await proc.wait()
            await stdout.aclose()
        bound = bound_hit(launch.bounds, proc.returncode, output.text()) if proc.returncode is not None else None
        release(launch.bounds)
    timed_out = deadline.cancelled_caught
    never_started = not timed_out and proc.returncode == 1 and proc.never_started
    return ShellRun(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        lingering=lingering,
        leftovers_killed=sweep.killed,
        leftovers_survived=sweep.survived,
        bound=None if timed_out else bound,
    ), never_started
