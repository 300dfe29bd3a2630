"""Fast pins of :mod:`sessions.sandbox.bounds`: the ``prlimit`` and cgroup prefixes, the line a command that hit a
bound is told (the model reads it and acts on it), and, as root, a real ``pids`` cgroup that bounds a real shell."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path

import pytest

from sessions.sandbox import SandboxPolicy
from sessions.sandbox import bounds as bounds_module
from sessions.sandbox.bounds import (
    CGROUP_PREFIX,
    Bounds,
    _cgroup_refused_fork,
    _collect,
    _mountinfo,
    bound_hit,
    enter_cgroup,
    new_pids_cgroup,
    pids_cgroup_parent,
    prlimit,
    process_bound,
    release,
    rlimit_prefix,
)

ROOT = os.geteuid() == 0
PROCESSES = "the sandbox's process bound was hit: at most 7 processes and threads at once ([sandbox] max_processes)"
MEMORY = "the sandbox's memory bound was hit: at most 64 MB per process ([sandbox] memory_mb)"
TMP = (
    "no space left: the sandbox's private /tmp holds at most 8 MB ([sandbox] tmp_mb), "
    "and /dev/shm as much; large files can go in the workspace"
)


def test_rlimit_prefix_names_each_bound() -> None:
    tool = prlimit()
    if tool is None:
        pytest.skip("no prlimit here")
    policy = SandboxPolicy(max_processes=7, memory_mb=3)
    assert rlimit_prefix(policy, nproc=True) == [tool, "--nproc=7", "--data=3145728", "--"]
    assert rlimit_prefix(policy, nproc=False) == [tool, "--data=3145728", "--"]
    assert rlimit_prefix(SandboxPolicy(max_processes=0, memory_mb=3), nproc=True) == [tool, "--data=3145728", "--"]
    assert rlimit_prefix(SandboxPolicy(max_processes=7, memory_mb=0), nproc=True) == [tool, "--nproc=7", "--"]
    assert rlimit_prefix(SandboxPolicy(max_processes=7, memory_mb=0), nproc=False) == []
    assert rlimit_prefix(SandboxPolicy(max_processes=0, memory_mb=0), nproc=True) == []


def test_enter_cgroup_writes_its_pid_then_bounds_memory() -> None:
    cgroup = Path("/sys/fs/cgroup/pids/reasonix-1-1")
    assert enter_cgroup(cgroup, 3) == [
        "/bin/sh",
        "-c",
        'echo $$ > "$0" && ulimit -d 3072 && exec "$@"',
        "/sys/fs/cgroup/pids/reasonix-1-1/cgroup.procs",
    ]
    assert enter_cgroup(cgroup, 0)[2] == 'echo $$ > "$0" && exec "$@"'


def test_enter_cgroup_runs_a_real_command_with_its_memory_bound(tmp_path: Path) -> None:
    procs = tmp_path / "cgroup.procs"  # a plain file here: the prefix only writes its pid into it
    done = subprocess.run(
        [*enter_cgroup(tmp_path, 5), "/bin/sh", "-c", "ulimit -d; echo $$"], capture_output=True, text=True, check=True
    )
    limit, pid = done.stdout.split()
    assert limit == "5120" and procs.read_text().strip() == pid  # the same process: sh exec'd the command


def test_mountinfo_reads_mount_point_type_and_super_options() -> None:
    mounts = _mountinfo()
    assert ("/proc", "proc") in {(point, fstype) for point, fstype, _ in mounts}
    expected = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, right = line.split(" - ")
        fstype, _source, options = right.split()[:3]  # the type, not the source ("ext4", not "/dev/vda")
        expected.append((left.split()[4], fstype, options))
    assert mounts == expected


def _pids_of(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return path
    return ""


def _root_cgroup_parent() -> Path:
    """Root's pids cgroup parent: CI runs as root on a host that has one (a missing one fails there, never skips)."""
    found = pids_cgroup_parent()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the cgroup tests as root with a writable pids cgroup")
        pytest.skip("no writable pids cgroup here")
    return found


def test_the_pids_cgroup_parent_is_where_this_process_counts() -> None:
    if not ROOT:
        assert pids_cgroup_parent() is None
        return
    parent = _root_cgroup_parent()
    assert (parent / "cgroup.procs").exists() and os.access(parent, os.W_OK)
    own = _pids_of(os.getpid())
    if own:  # cgroup v1: the pids hierarchy's folder of this process
        assert str(parent).endswith(own.rstrip("/")) and str(parent).startswith("/")


def test_a_real_cgroup_bounds_a_real_shell_and_says_so() -> None:
    if not ROOT:  # an ordinary user's processes are bounded by RLIMIT_NPROC in the sandbox instead (test_hostile)
        before = set(bounds_module._live)
        assert new_pids_cgroup(3) is None and bounds_module._live == before
        return
    parent = _root_cgroup_parent()
    cgroup = new_pids_cgroup(3)
    assert cgroup is not None and cgroup.parent == parent
    assert cgroup.name.startswith(f"{CGROUP_PREFIX}{os.getpid()}-") and cgroup.name.split("-")[-1].isdigit()
    assert (cgroup / "pids.max").read_text().strip() == "3"
    bounds = Bounds(tmp_mb=0, max_processes=3, memory_mb=0, cgroup=cgroup)
    try:
        script = "for i in 1 2 3; do sleep 30 >/dev/null 2>&1 & done; echo forked"  # the sleeps are killed below
        done = subprocess.run(
            [*enter_cgroup(cgroup, 0), "/bin/sh", "-c", script], capture_output=True, text=True, timeout=30, check=False
        )
        assert done.returncode != 0 and "fork" in done.stderr  # the third sleep was refused
        assert _cgroup_refused_fork(cgroup)
        assert bound_hit(bounds, 2, "") == PROCESSES.replace("7", "3")
        other = new_pids_cgroup(3)
        assert other is not None and other != cgroup and other.exists()
        release(Bounds(0, 3, 0, other))
        assert not other.exists()
    finally:
        for pid in map(int, (cgroup / "cgroup.procs").read_text().split()):
            exited = os.pidfd_open(pid)
            os.kill(pid, signal.SIGKILL)
            select.select([exited], [], [], 10)  # until it is gone: then the cgroup is empty
            os.close(exited)
        release(bounds)
    assert not cgroup.exists()
    assert new_pids_cgroup(0) is None
    mine = f"{CGROUP_PREFIX}{os.getpid()}-"
    before = ({p.name for p in parent.iterdir() if p.name.startswith(mine)}, set(bounds_module._live))
    assert new_pids_cgroup(-1) is None  # the kernel refuses the value: the cgroup just made is removed again
    assert ({p.name for p in parent.iterdir() if p.name.startswith(mine)}, set(bounds_module._live)) == before


def test_collect_removes_only_released_or_orphaned_cgroups(tmp_path: Path) -> None:
    """On a plain folder (as an ordinary user too): collecting only lists and removes empty folders by name."""
    parent = tmp_path
    dead = subprocess.Popen(["true"])
    dead.wait()
    # Another live Reasonix: a child of this test's (not pid 1, which is this very process when the tests run as the
    # init of a PID namespace of their own, as the mutation run's do).
    other = subprocess.Popen(["sleep", "60"])
    names = {
        f"{CGROUP_PREFIX}{os.getpid()}-999001": False,  # this process's, released: removed
        f"{CGROUP_PREFIX}{dead.pid}-1": False,  # its Reasonix is gone: removed
        f"{CGROUP_PREFIX}{dead.pid}-2-3": False,  # the owner is the number after the prefix
        f"{CGROUP_PREFIX}{other.pid}-999002": True,  # a live Reasonix's: kept
        f"{CGROUP_PREFIX}x{os.getpid()}-1": True,  # not one of ours
        f"other-{os.getpid()}-999003": True,
    }
    live = parent / f"{CGROUP_PREFIX}{os.getpid()}-999004"  # this process's, still in use: kept
    made = [parent / name for name in names] + [live]
    try:
        for path in made:
            path.mkdir()
        bounds_module._live.add(live)
        _collect(parent)
        assert {path.name: path.exists() for path in made[:-1]} == names and live.exists()
    finally:
        other.kill()
        other.wait()
        bounds_module._live.discard(live)
        for path in made:
            if path.exists():
                path.rmdir()


def test_collect_looks_past_other_folders_and_past_one_still_in_use(tmp_path: Path) -> None:
    """Folders not ours, in whatever order the directory lists them, stop nothing; nor does one whose removal fails
    (a process still in it: here, a folder not empty)."""
    others = [tmp_path / f"other-{n}" for n in range(12)]
    released = [tmp_path / f"{CGROUP_PREFIX}{os.getpid()}-99910{n}" for n in range(12)]
    busy = tmp_path / f"{CGROUP_PREFIX}{os.getpid()}-999200"
    for path in [*others, *released, busy]:
        path.mkdir()
    (busy / "cgroup.procs").write_text("")
    _collect(tmp_path)
    assert all(path.exists() for path in others) and not any(path.exists() for path in released) and busy.exists()


def test_collect_and_a_failed_cgroup_leave_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _collect(tmp_path / "absent")  # a parent that went away: nothing to collect, nothing raised
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(bounds_module, "pids_cgroup_parent", lambda: tmp_path / "a-file")  # mkdir under it fails
    before = set(bounds_module._live)
    assert new_pids_cgroup(5) is None and bounds_module._live == before
    made = tmp_path / "parent"
    made.mkdir()
    monkeypatch.setattr(bounds_module, "pids_cgroup_parent", lambda: made)  # a plain folder: pids.max is a new file
    cgroup = new_pids_cgroup(5)
    assert cgroup is not None and (cgroup / "pids.max").read_text() == "5" and cgroup in bounds_module._live
    release(Bounds(0, 5, 0, cgroup))
    assert cgroup not in bounds_module._live


def test_cgroup_refused_fork_reads_the_max_events(tmp_path: Path) -> None:
    assert not _cgroup_refused_fork(tmp_path)  # no pids.events
    for text, refused in (
        ("max 3\n", True),
        ("max 1", True),
        ("max 0\n", False),
        ("other 5\nmax 2\n", True),
        ("maxx 3\n", False),
        ("max x\n", False),
        ("max 0\nmax 4\n", False),  # the first max line decides
    ):
        (tmp_path / "pids.events").write_text(text)
        assert _cgroup_refused_fork(tmp_path) is refused, text


def test_bound_hit_names_the_bound_and_its_setting(tmp_path: Path) -> None:
    (tmp_path / "pids.events").write_text("max 1\n")
    by_cgroup = Bounds(tmp_mb=8, max_processes=7, memory_mb=64, cgroup=tmp_path)
    assert bound_hit(by_cgroup, 1, "") == PROCESSES
    assert bound_hit(by_cgroup, None, "killed") == PROCESSES
    assert bound_hit(by_cgroup, 0, "MemoryError") is None  # it succeeded
    assert bound_hit(None, 1, "MemoryError") is None
    by_rlimit = Bounds(tmp_mb=8, max_processes=7, memory_mb=64, processes_by_rlimit=True)
    assert bound_hit(by_rlimit, 1, "bash: fork: retry: Resource temporarily unavailable") == PROCESSES
    assert bound_hit(by_rlimit, 1, "MemoryError\nNo space left on device") == MEMORY  # processes, then memory
    assert bound_hit(by_rlimit, 1, "cp: No space left on device") == TMP
    assert bound_hit(by_rlimit, 1, "some other failure") is None
    unbounded = Bounds(tmp_mb=0, max_processes=0, memory_mb=0, processes_by_rlimit=True, cgroup=tmp_path)
    assert bound_hit(unbounded, 1, "fork: Resource temporarily unavailable MemoryError No space left") is None
    (tmp_path / "pids.events").write_text("max 0\n")
    assert bound_hit(by_cgroup, 1, "fork: Resource temporarily unavailable") is None  # the cgroup refused nothing
    not_counted = Bounds(tmp_mb=8, max_processes=7, memory_mb=64)
    assert bound_hit(not_counted, 1, "Cannot fork") is None
    assert bound_hit(not_counted, 1, "x: Cannot allocate memory") == MEMORY


def test_process_bound_says_how_it_holds(tmp_path: Path) -> None:
    assert process_bound(Bounds(0, 0, 0)) == "no process bound"
    assert process_bound(Bounds(0, 9, 0, cgroup=tmp_path)) == "9 processes (a pids cgroup)"
    assert process_bound(Bounds(0, 9, 0, processes_by_rlimit=True)) == (
        "9 processes (RLIMIT_NPROC in the sandbox's user namespace)"
    )
    assert process_bound(Bounds(0, 9, 0)) == (
        "no process bound here (root without a writable pids cgroup, or no user namespace)"
    )


def test_release_removes_the_cgroup_and_forgets_it(tmp_path: Path) -> None:
    cgroup = tmp_path / "reasonix-cg"
    cgroup.mkdir()
    bounds_module._live.add(cgroup)
    release(Bounds(0, 1, 0, cgroup))
    assert not cgroup.exists() and cgroup not in bounds_module._live
    (cgroup / "busy").mkdir(parents=True)  # rmdir fails: nothing raised, the next launch collects it
    release(Bounds(0, 1, 0, cgroup))
    assert cgroup.exists()
    release(None)
    release(Bounds(0, 0, 0))
