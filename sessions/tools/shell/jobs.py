"""Background jobs: long commands (a dev server, a slow test suite) that run while the conversation goes on.

``bash`` with ``background = true`` starts one through the same sandbox and environment as any command and returns
at once with its id (``job 1``, ``job 2``, … in the order started: deterministic text, since every result is re-sent).
What a job prints is kept bounded (head and tail of what arrived since the last read); ``job_output`` returns it with
the job's state, ``job_kill`` ends it. When a job ends on its own, a note (:meth:`JobTable.notes`) rides in front
of the next user message or the next tool result: appended bytes, never the prefix.

Jobs die with their session: :meth:`JobTable.close` kills every job's process group (a session closed, ``/clear``,
Ctrl-C, the end of the command), each job's reader kills it when trio cancels it at the end of the run, and a
confined job is bubblewrap's child with ``--die-with-parent``, so even SIGKILL of Reasonix takes it down. An
unconfined job (no sandbox) is hunted by its marker like any command (:mod:`sessions.sandbox.reaper`).

The readers are trio *system* tasks: a job outlives the tool call that started it, and the session has no nursery of
its own. They catch every error (a system task's error would crash the run) and never swallow a cancellation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trio

from sessions.sandbox.base import Launch, Sandbox
from sessions.sandbox.bounds import Bounds, release
from sessions.sandbox.netns import SharedNetwork
from sessions.sandbox.reaper import kill_leftovers
from sessions.sandbox.spawn import Spawned
from sessions.tools.shell.bounded import HeadTail
from sessions.tools.shell.process import StartedShell, kill_group, kill_rest_of_launch, start_shell

MAX_RUNNING = 4
OUTPUT_BYTES = 8_000
"""What one ``job_output`` shows at most: the head and tail of the output since the last read."""
NOTE_TAIL_BYTES = 1_000
"""The end of a job's unread output that its end note quotes."""
EXIT_GRACE_S = 1.0
KILL_WAIT_S = 5.0


def _window() -> HeadTail:
    return HeadTail(OUTPUT_BYTES // 2, OUTPUT_BYTES // 2)


@dataclass
class Job:
    number: int
    command: str
    proc: Spawned
    marker: str
    bounds: Bounds | None
    launch: Launch | None = None
    unread: HeadTail = field(default_factory=_window)
    last: HeadTail = field(default_factory=lambda: HeadTail(0, NOTE_TAIL_BYTES))
    total: int = 0
    exit_code: int | None = None
    ended: bool = False
    killed: bool = False
    announced: bool = False
    changed: trio.Event = field(default_factory=trio.Event)
    restart: Callable[[], StartedShell] | None = None
    """Starts it again, once, when the sandbox ended before it executed the command (a masked socket gone)."""

    @property
    def name(self) -> str:
        return f"job {self.number}"

    def feed(self, chunk: bytes | bytearray) -> None:
        self.total += len(chunk)
        self.unread.feed(chunk)
        self.last.feed(chunk)
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def take(self) -> str:
        """The output since the last read (bounded), and forget it."""
        text = self.unread.text()
        self.unread = _window()
        self.last = HeadTail(0, NOTE_TAIL_BYTES)
        return text

    def state(self) -> str:
        if not self.ended:
            return "running"
        if self.killed:
            return "killed by job_kill"
        code = self.exit_code
        return f"ended: killed by signal {-code}" if code is not None and code < 0 else f"ended with exit code {code}"

    def note(self) -> str:
        """The line that announces its end, with the end of what it printed and nobody read."""
        shown = f"{self.name} (`{_short(self.command)}`) {self.state()}."
        rest = self.last.text().strip("\n")
        return shown + (f" Its last output:\n{rest}" if rest else "")


def _short(command: str, limit: int = 80) -> str:
    one = " ".join(command.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


async def _pump(job: Job, stdout: trio.lowlevel.FdStream, eof: trio.Event) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        async for chunk in stdout:
            job.feed(chunk)
    eof.set()


class JobTable:
    """The background jobs of one session."""

    def __init__(self, *, max_running: int = MAX_RUNNING) -> None:
        self.max_running = max_running
        self.jobs: dict[int, Job] = {}
        self.network: SharedNetwork | None = None
        self.closed = False

    def running(self) -> list[Job]:
        return [job for job in self.jobs.values() if not job.ended]

    def sandbox_for(self, sandbox: Sandbox) -> Sandbox:
        """``sandbox`` joined to the session's shared loopback network once a job runs (unchanged before)."""
        join = self.network.join() if self.network is not None else None
        with_network = getattr(sandbox, "with_network", None)
        if join is None or with_network is None:
            return sandbox
        joined: Sandbox = with_network(join)
        return joined

    def _share_network(self, sandbox: Sandbox) -> None:
        joinable = getattr(sandbox, "with_network", None) is not None
        if self.network is None and joinable and sandbox.confines and not sandbox.policy.network:
            self.network = SharedNetwork()

    def start(self, bash: str, command: str, *, cwd: Path, env: Mapping[str, str], sandbox: Sandbox) -> Job:
        """Start ``command``; raises OSError when it cannot start, RuntimeError when too many jobs run."""
        if self.closed:
            raise RuntimeError("the session is closing; no job can start")
        if len(self.running()) >= self.max_running:
            names = ", ".join(job.name for job in self.running())
            raise RuntimeError(f"{self.max_running} jobs are running ({names}); kill one with job_kill first")
        self._share_network(sandbox)

        def launch() -> StartedShell:
            return start_shell(bash, command, sandbox=self.sandbox_for(sandbox), workspace=cwd, cwd=cwd, env=env)

        started = launch()
        job = Job(
            number=len(self.jobs) + 1,
            command=command,
            proc=started.proc,
            marker=started.marker,
            bounds=started.launch.bounds,
            launch=started.launch,
            restart=launch,
        )
        self.jobs[job.number] = job
        trio.lowlevel.spawn_system_task(self._follow, job, name=f"reasonix {job.name}")
        return job

    async def _follow(self, job: Job) -> None:
        """Read the job's output until it ends; kill what it leaves; never let an error escape (a system task)."""
        stdout = job.proc.stdout
        try:
            while True:
                eof = trio.Event()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_pump, job, stdout, eof)
                    await job.proc.wait()
                    with trio.move_on_after(EXIT_GRACE_S):
                        await eof.wait()
                    await self._kill_rest(job)
                    with trio.move_on_after(EXIT_GRACE_S):
                        await eof.wait()
                    nursery.cancel_scope.cancel()
                restart, job.restart = job.restart, None
                if restart is None or job.killed or job.proc.returncode != 1 or not job.proc.never_started:
                    break
                await stdout.aclose()  # it printed only bubblewrap's error: forgotten, and the job starts again
                release(job.bounds)
                job.bounds = None
                job.total, job.unread, job.last = 0, _window(), HeadTail(0, NOTE_TAIL_BYTES)
                started = restart()
                job.proc, job.marker, job.bounds = started.proc, started.marker, started.launch.bounds
                job.launch = started.launch
                stdout = job.proc.stdout
        except Exception:  # noqa: BLE001 - a system task must not raise; the job is killed below
            pass
        finally:
            with trio.CancelScope(shield=True):
                kill_group(job.proc.pid)
                if job.marker:
                    with contextlib.suppress(Exception):
                        await trio.to_thread.run_sync(kill_leftovers, job.marker, job.proc.pid)
                if job.launch is not None:
                    with contextlib.suppress(Exception):
                        await kill_rest_of_launch(job.launch)
                with trio.move_on_after(KILL_WAIT_S):
                    await job.proc.wait()
                with contextlib.suppress(Exception):
                    await stdout.aclose()
            release(job.bounds)
            job.exit_code = job.proc.returncode
            job.ended = True
            job._wake()
            # The shared network stays up until the session closes, even with no job running: a command may
            # already hold its ``nsenter`` prefix, and closing the anchor under it fails that command.

    async def _kill_rest(self, job: Job) -> None:
        if job.marker:
            await trio.to_thread.run_sync(kill_leftovers, job.marker, job.proc.pid)
        kill_group(job.proc.pid)

    def get(self, number: int) -> Job | None:
        return self.jobs.get(number)

    async def wait(self, job: Job, seconds: float) -> None:
        """Until the job prints or ends, at most ``seconds``."""
        if seconds <= 0 or job.ended:
            return
        with trio.move_on_after(seconds):
            while not job.ended and not job.unread.total:
                await job.changed.wait()

    async def kill(self, job: Job) -> None:
        """Kill the job's process group and wait (bounded) until it is reaped."""
        if job.ended:
            return
        job.killed = True
        await self._kill_rest(job)
        with trio.move_on_after(KILL_WAIT_S):
            while not job.ended:
                await job.changed.wait()

    def notes(self) -> list[str]:
        """One line per job that ended since it was last looked at (then it counts as announced)."""
        ended = [job for job in self.jobs.values() if job.ended and not job.announced]
        for job in ended:
            job.announced = True
        return [job.note() for job in ended]

    def close(self) -> None:
        """Kill every job now (synchronous: usable from any cleanup path). Their readers reap them."""
        self.closed = True
        for job in self.running():
            job.killed = True
            kill_group(job.proc.pid)
        if self.network is not None:
            self.network.close()
