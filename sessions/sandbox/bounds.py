"""The bounds of one sandboxed command: the size of its private ``/tmp``, how many processes it may have, how much
memory each may take; and, when a command fails, which bound it hit.

* ``/tmp`` and ``/dev/shm``: bubblewrap's ``--size`` on each tmpfs (``/dev`` itself is read-only).
* Memory: ``RLIMIT_DATA`` (heap and private writable mappings, so the address space that V8, Go or the JVM reserve
  without using does not count), set by ``prlimit`` inside the sandbox, per process.
* Processes (threads count): an ordinary user's ``RLIMIT_NPROC`` is counted per user namespace, so inside the
  sandbox's own namespace it bounds this command alone. The kernel never applies it to root, so as root the command
  runs in a ``pids`` cgroup of its own instead (cgroup v1, or v2 where the root cgroup delegates ``pids``); where
  neither exists the process bound cannot hold, and :func:`process_bound` says so.

What a command that hit a bound printed is recognised (``No space left on device``, ``fork: Resource temporarily
unavailable``, ``MemoryError``) or, for the cgroup, read from its ``pids.events``; :func:`bound_hit` turns it into a
line that names the bound and the setting that moves it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from sessions.sandbox.policy import SandboxPolicy

CGROUP_PREFIX = "reasonix-"
_counter = itertools.count(1)
_live: set[Path] = set()
"""This process's cgroups not yet released: never collected."""
_NPROC_TEXT = re.compile(
    r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork|BlockingIOError"
    r"|pthread_create|Resource temporarily unavailable|EAGAIN"
)
_MEMORY_TEXT = re.compile(
    r"Cannot allocate memory|MemoryError|[Oo]ut of memory|bad_alloc|xmalloc|xrealloc|cannot allocate"
    r"|heap out of memory|allocation failed|ENOMEM"
)
_TMP_TEXT = re.compile(r"No space left on device|ENOSPC|Disk quota exceeded")


@dataclass(frozen=True, slots=True)
class Bounds:
    """The bounds a launch runs under (0: none), and the cgroup that holds its processes, if any."""

    tmp_mb: int
    max_processes: int
    memory_mb: int
    cgroup: Path | None = None
    processes_by_rlimit: bool = False


@functools.cache
def prlimit() -> str | None:
    return shutil.which("prlimit")


def rlimit_prefix(policy: SandboxPolicy, *, nproc: bool) -> list[str]:
    """``prlimit --nproc=N --data=B --`` for the command inside the sandbox (empty when nothing is bounded)."""
    tool = prlimit()
    limits = []
    if nproc and policy.max_processes:
        limits.append(f"--nproc={policy.max_processes}")
    if policy.memory_mb:
        limits.append(f"--data={policy.memory_mb * 1024 * 1024}")
    if tool is None or not limits:
        return []
    return [tool, *limits, "--"]


def _mountinfo() -> list[tuple[str, str, str]]:
    """(mount point, file system type, super options) of every mount."""
    out = []
    with contextlib.suppress(OSError):  # pragma: no mutate (no host that runs bubblewrap lacks /proc)
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")  # pragma: no mutate (blanks in paths are \040: one " - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3:  # pragma: no mutate (the kernel writes 6+ fields, then 3)
                out.append((fields[4], tail[0], tail[2]))
    return out


@functools.cache
def pids_cgroup_parent() -> Path | None:
    """A writable cgroup directory whose children get a ``pids.max`` (root only, in practice), or None."""
    if os.geteuid() != 0:
        return None
    own = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") or [""]:
                own[name] = path
    mounts = _mountinfo()
    for point, fstype, options in mounts:
        if fstype == "cgroup" and "pids" in options.split(","):
            parent = Path(point) / own.get("pids", "/").lstrip("/")
            if (parent / "cgroup.procs").exists() and os.access(parent, os.W_OK):
                return parent
    for point, fstype, _ in mounts:
        if fstype == "cgroup2":
            root = Path(point)
            with contextlib.suppress(OSError):
                if "pids" in (root / "cgroup.subtree_control").read_text().split() and os.access(root, os.W_OK):
                    return root
    return None


def _collect(parent: Path) -> None:
    """Remove the empty cgroups that this process released, or a Reasonix that is gone left."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(CGROUP_PREFIX):
                continue
            owner = entry.name[len(CGROUP_PREFIX) :].partition("-")[0]
            mine = owner.isdigit() and int(owner) == os.getpid()
            if (mine and entry not in _live) or (owner.isdigit() and not mine and not Path(f"/proc/{owner}").exists()):
                with contextlib.suppress(OSError):
                    entry.rmdir()  # fails while a process is still in it


def new_pids_cgroup(max_processes: int) -> Path | None:
    """A fresh cgroup with ``pids.max`` set, for one launch; None where there is none to make."""
    parent = pids_cgroup_parent()
    if parent is None or not max_processes:
        return None
    _collect(parent)
    path = parent / f"{CGROUP_PREFIX}{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
        _live.add(path)
        (path / "pids.max").write_text(str(max_processes))
    except OSError:
        _live.discard(path)
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def enter_cgroup(cgroup: Path, memory_mb: int) -> list[str]:
    """The argv prefix that moves the launch into ``cgroup`` before anything starts (``sh`` writes its own pid,
    sets the memory bound, then becomes bubblewrap): every process after it is counted there, and no ``prlimit``
    is needed inside (root is exempt from the process rlimit anyway)."""
    memory = f" && ulimit -d {memory_mb * 1024}" if memory_mb else ""
    return ["/bin/sh", "-c", f'echo $$ > "$0"{memory} && exec "$@"', str(cgroup / "cgroup.procs")]


def release(bounds: Bounds | None) -> None:
    """After the launch ended: remove its cgroup (a leftover process keeps it; the next launch collects it)."""
    if bounds is not None and bounds.cgroup is not None:
        _live.discard(bounds.cgroup)
        with contextlib.suppress(OSError):
            bounds.cgroup.rmdir()


def _cgroup_refused_fork(cgroup: Path) -> bool:
    with contextlib.suppress(OSError, ValueError):
        for line in (cgroup / "pids.events").read_text().splitlines():
            key, _, value = line.partition(" ")  # pragma: no mutate (lines are "key N": one blank, either end)
            if key == "max":
                return int(value) > 0
    return False


def bound_hit(bounds: Bounds | None, exit_code: int | None, output: str) -> str | None:
    """The bound a failed command hit, as a line for the model and the user, or None."""
    if bounds is None or exit_code == 0:
        return None
    procs = bounds.max_processes
    if procs and (
        (bounds.cgroup is not None and _cgroup_refused_fork(bounds.cgroup))
        or (bounds.processes_by_rlimit and _NPROC_TEXT.search(output))
    ):
        return (
            f"the sandbox's process bound was hit: at most {procs} processes and threads at once "
            "([sandbox] max_processes)"
        )
    if bounds.memory_mb and _MEMORY_TEXT.search(output):
        return f"the sandbox's memory bound was hit: at most {bounds.memory_mb} MB per process ([sandbox] memory_mb)"
    if bounds.tmp_mb and _TMP_TEXT.search(output):
        return (
            f"no space left: the sandbox's private /tmp holds at most {bounds.tmp_mb} MB ([sandbox] tmp_mb), "
            "and /dev/shm as much; large files can go in the workspace"
        )
    return None


def process_bound(bounds: Bounds) -> str:
    """How the process bound holds here, for ``doctor`` and the docs."""
    if not bounds.max_processes:
        return "no process bound"
    if bounds.cgroup is not None:
        return f"{bounds.max_processes} processes (a pids cgroup)"
    if bounds.processes_by_rlimit:
        return f"{bounds.max_processes} processes (RLIMIT_NPROC in the sandbox's user namespace)"
    return "no process bound here (root without a writable pids cgroup, or no user namespace)"
