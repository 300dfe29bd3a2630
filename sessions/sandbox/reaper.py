"""Containment without a sandbox: finding and killing what an unconfined command left behind.

Reasonix becomes a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so a process that a command detached
(``setsid cmd &``, a double fork) is re-parented to Reasonix instead of to init and stays findable. Each command
carries a marker variable in its environment, inherited by everything it starts; after the command, every process
with the marker, in the command's process group, or descended from one of those is killed with SIGKILL, and the
count reported is the count of processes seen gone, never the count of signals sent.

Every command, sandboxed or not, and every hook is also armed to die with Reasonix before it execs
(:func:`die_with_parent`), so a kill of Reasonix while bubblewrap is still starting leaves nothing running. A kill
of the launch itself in that start (by whoever started it: an editor's terminal, the MCP SDK) leaves bubblewrap's
child unwatched; :func:`kill_launch` finds it by the marker the launch's command line sets.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MARKER = "REASONIX_COMMAND"
_ENDED = ("Z", "X")  # zombie, dead: exited, whether or not reaped yet
_PR_SET_PDEATHSIG = 1


@functools.cache
def _prctl() -> Callable[..., int]:
    """libc's ``prctl``, looked up in the parent: the child between fork and exec loads nothing."""
    prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    return prctl


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.Popen``: the child gets SIGKILL when the thread that calls Popen exits
    (``PR_SET_PDEATHSIG``, kept across exec), and kills itself at once if this process died between the fork and
    the ``prctl`` (its parent is then another: no signal would ever come). Call it on the thread that forks."""
    parent = os.getpid()
    prctl = _prctl()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the kernel reads no other argument of this option
        if os.getppid() != parent:
            # Only when this process died in the few microseconds since the fork: no test can make that race.
            os.kill(os.getpid(), signal.SIGKILL)  # pragma: no mutate  — see above

    return arm


# Run by ``sh`` once setpriv armed the signal, with the pid and the thread id that started it as "$1" and "$2". The
# signal follows that thread, and comes only if it was armed before the thread exited: so the command runs only if
# its parent is still that process and the thread has not begun to exit. A thread's ``exe`` link goes (ENOENT) when
# its exit releases its memory map, which comes before its children are re-parented and signalled: seen there, the
# thread's exit is still to come and will find the signal armed. Otherwise the command is killed before it runs.
_PARENT_CHECK = '[ "$PPID" = "$1" ] && [ -e "/proc/$1/task/$2/exe" ] || kill -KILL $$; shift 2; '
_SH = "/bin/sh"


@dataclass(frozen=True, slots=True)
class Armed:
    """How to start a command so that it dies with the thread that starts it: :func:`armed`."""

    argv: list[str]
    preexec_fn: Callable[[], None] | None
    """:func:`die_with_parent` where no ``setpriv --pdeathsig`` exists; None otherwise, so ``subprocess`` vforks."""


@functools.cache
def _has_pdeathsig(setpriv: str) -> bool:
    """Whether this ``setpriv`` knows ``--pdeathsig`` (util-linux 2.33 and later); asked once a process."""
    # Its exit status is not read; the bound and the failure (a setpriv that vanished or hangs since it was found)
    # are for a machine no test can make.
    try:
        done = subprocess.run([setpriv, "--help"], capture_output=True, timeout=5, check=False)  # pragma: no mutate
    except (OSError, subprocess.TimeoutExpired):  # pragma: no mutate  — see above
        return False  # pragma: no mutate  — see above
    return b"--pdeathsig" in done.stdout


def _program(name: str, env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> str:
    """What the shim execs for ``name``, once it is known to run where ``subprocess`` would find it (on ``env``'s
    PATH, or relative to ``cwd``); else the OSError ``Popen`` would raise, since the shell whose exec fails tells it
    only by an exit code and a message."""
    if os.sep in name:
        path = os.path.join(cwd if cwd is not None else os.curdir, name)  # an absolute name stays as it is
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
        found = name  # relative: run from the child's cwd, as ``Popen`` runs it
    else:
        which = shutil.which(name, path=os.pathsep.join(os.get_exec_path(env)))
        if which is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
        path = which
        # The shell finds it on the same PATH, and the command keeps the argv[0] it was given; without a PATH the
        # shell's default differs from Popen's, so the path found is run.
        found = name if "PATH" in (os.environ if env is None else env) else which
    head = b""
    with contextlib.suppress(OSError):  # unreadable (mode 711): the kernel's to say
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO named as the program never blocks
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):  # only a regular file has a first line worth reading
                head = os.read(fd, 256)  # pragma: no mutate  — any size holding a first line will do
        finally:
            os.close(fd)
    # A first line of "#!" alone is one only the kernel's ENOEXEC tells apart, which the shell then runs as a script.
    words = head[2:].split(b"\n")[0].split() if head.startswith(b"#!") else []  # pragma: no mutate  — see above
    if words and not os.path.exists(words[0]):  # a script whose interpreter is absent: execve says ENOENT
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
    return found


def armed(
    argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> Armed:
    """``argv`` made to die (SIGKILL) when the thread that starts it exits, from its first instruction on, even if
    that thread's process is SIGKILLed while bubblewrap starts; ``env`` and ``cwd`` are the child's (None: ours).

    util-linux's ``setpriv --pdeathsig KILL`` arms ``PR_SET_PDEATHSIG`` and execs ``sh``, which kills itself if the
    thread that started it began to exit before the arming (or its process died: no signal would ever come) and
    otherwise execs ``argv`` (the signal is kept across exec, except into a set-user-ID program); an ``argv`` that is
    a ``/bin/sh -c`` script gets the check at the head of its script instead. With no
    ``preexec_fn``, ``subprocess`` vforks; a ``preexec_fn`` makes it fork, which copies the page tables of the whole
    process (DESIGN §5, Safety). Without such a ``setpriv`` (or without ``/proc``) it falls back to
    :func:`die_with_parent`. Raises FileNotFoundError or PermissionError when ``argv[0]`` cannot run."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or not os.path.exists("/proc/self/exe") or not _has_pdeathsig(setpriv):
        return Armed(list(argv), die_with_parent())
    parent = [str(os.getpid()), str(threading.get_native_id())]
    shim = [setpriv, "--pdeathsig", "KILL", "--", _SH, "-c"]
    if len(argv) > 2 and argv[0] == _SH and argv[1] == "-c":
        # A launch that begins with a ``sh`` of its own (as root, the one that enters the command's cgroup): the check
        # goes before its script, which then sees its own $0 and arguments, and one exec is saved.
        return Armed([*shim, _PARENT_CHECK + argv[2], argv[3] if len(argv) > 3 else _SH, *parent, *argv[4:]], None)
    program = _program(argv[0], env, cwd)
    return Armed([*shim, _PARENT_CHECK + 'exec "$@"', _SH, *parent, program, *argv[1:]], None)


_PR_SET_CHILD_SUBREAPER = 36
_counter = itertools.count(1)
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); False where that is not possible."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False  # pragma: no mutate  — True differs only where loading libc raises, which no test can make
        # libc through the process's own symbols, as _prctl: ctypes.util.find_library would run /sbin/ldconfig.
        # Looking up prctl fails on no Linux: no test can make it.
        with contextlib.suppress(OSError, AttributeError):  # pragma: no mutate  — see above
            # The kernel reads only the second argument (any nonzero sets it): the others are unused.
            _subreaper = _prctl()(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0  # pragma: no mutate  — see above
    return _subreaper


def new_marker() -> str:
    return f"{os.getpid()}.{next(_counter)}"


@dataclass(frozen=True, slots=True)
class _Proc:
    pid: int
    ppid: int
    pgid: int
    state: str


def _stat(pid: int) -> _Proc | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2 :].split()
    return _Proc(pid=pid, state=rest[0], ppid=int(rest[1]), pgid=int(rest[2]))


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False  # pragma: no mutate  — as root every environ reads: only a process gone meanwhile fails (a race)


def _procs() -> list[_Proc]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            proc = _stat(int(entry))
            if proc is not None and proc.state not in _ENDED:
                out.append(proc)
    return out


def leftovers(marker: str, pgid: int) -> set[int]:
    """Live processes the command started: its marker, its process group, and their descendants."""
    if not os.path.isdir("/proc"):
        return set()
    me = os.getpid()
    wanted = f"{MARKER}={marker}".encode()
    procs = [p for p in _procs() if p.pid != me]
    found = {p.pid for p in procs if p.pgid == pgid or _has_marker(p.pid, wanted)}
    children: dict[int, list[int]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p.pid)
    stack = list(found)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _reap(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ChildProcessError):  # not this process's child (nor re-parented to it)
            os.waitpid(pid, os.WNOHANG)


def _gone(pid: int) -> bool:
    proc = _stat(pid)
    return proc is None or proc.state in _ENDED


@dataclass(frozen=True, slots=True)
class Sweep:
    killed: int
    """Processes seen gone after SIGKILL."""
    survived: int
    """Processes still alive (another user's, or unkillable): never reported as killed."""


def _cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def launched(marker: str) -> set[int]:
    """Live processes of a sandbox launch: those whose command line sets ``marker`` (``--setenv REASONIX_COMMAND
    marker``: the launch's ``sh``, bubblewrap, and the sandbox's init forked from it). Killing the init ends its PID
    namespace, so everything inside goes with it."""
    if not marker or not os.path.isdir("/proc"):
        return set()
    wanted = [b"--setenv", MARKER.encode(), marker.encode()]
    # Skipping this process only saves a read: its own command line never sets the marker (bubblewrap's does).
    me = os.getpid()  # pragma: no mutate  — see above
    found = set()
    for proc in _procs():
        words = _cmdline(proc.pid) if proc.pid != me else []  # pragma: no mutate  — see above
        # Past the end a slice is shorter than three words, never equal; the split's trailing b"" keeps the last
        # three words in range of len - 3 too.
        starts = range(len(words) - 2)  # pragma: no mutate  — see above
        if any(words[i : i + 3] == wanted for i in starts):
            found.add(proc.pid)
    return found


def _sweep(find: Callable[[], set[int]], rounds: int) -> Sweep:
    seen: set[int] = set()
    for _ in range(rounds):
        found = find()
        if not found:
            break
        seen |= found
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    # SIGKILL is delivered before kill() returns for our own processes, but the exit itself may take a moment: how
    # long this waits for an exit already under way is no behaviour a test could pin without timing the kernel.
    for _ in range(400):  # pragma: no mutate  — see above
        if all(_gone(pid) for pid in seen):  # pragma: no mutate  — see above
            break
        time.sleep(0.005)
    _reap(seen)
    alive = {pid for pid in seen if not _gone(pid)}
    return Sweep(killed=len(seen) - len(alive), survived=len(alive))


# rounds: how long to chase a command that keeps starting processes; one more or fewer is no behaviour a test could
# pin without timing the respawns.
# group_killed: whether the sweep first waits for exits already under way, which only a loaded machine, one that has
# not yet run the killed processes' exits, could tell (a bash timeout's status once counted them as left running
# there); no test can make that moment.
def kill_leftovers(
    marker: str,
    pgid: int,
    *,
    rounds: int = 5,  # pragma: no mutate  — see above
    group_killed: bool = False,  # pragma: no mutate  — see above
) -> Sweep:
    """SIGKILL what the command left (repeating while new processes appear) and count what is really gone.

    ``group_killed``: the group was just sent SIGKILL (a timeout's kill), so its processes are dying, not left
    running: their exits are awaited first (milliseconds; at most two seconds), or a slow machine counts them."""
    if group_killed:  # pragma: no mutate  — see above
        _wait_group_gone(pgid)  # pragma: no mutate  — see above
    return _sweep(lambda: leftovers(marker, pgid), rounds)


def _wait_group_gone(pgid: int) -> None:
    for _ in range(400):  # pragma: no mutate  — see above kill_leftovers
        if all(proc.pgid != pgid for proc in _procs()):  # pragma: no mutate  — see above kill_leftovers
            return
        time.sleep(0.005)  # pragma: no mutate  — see above kill_leftovers


def kill_launch(marker: str, *, rounds: int = 5) -> Sweep:  # pragma: no mutate  — as kill_leftovers
    """SIGKILL what is left of a sandbox launch, whoever started it (an editor's terminal too): bubblewrap arms
    ``--die-with-parent`` in its child only after the mounts, so a kill of the launch before that leaves the child,
    and later the command, running with no parent. Nothing to do for a launch that ended (or was killed) later."""
    return _sweep(lambda: launched(marker), rounds)
