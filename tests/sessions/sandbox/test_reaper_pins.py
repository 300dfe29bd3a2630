"""Pins of the reaper's search (:mod:`sessions.sandbox.reaper`): exactly what a command left, never a bystander.

The searches are asserted before anything is killed, so a search that found too much fails here first (the mutation
run also keeps the reaper in a PID namespace of its own: bench/mutation_score.py's ``own_pids``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.sandbox.reaper import (
    MARKER,
    Sweep,
    _reap,
    _sweep,
    kill_launch,
    kill_leftovers,
    launched,
    leftovers,
    new_marker,
)


def _cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return []


def _execed(pid: int, *argv: str) -> None:
    """Wait (busily, a few milliseconds) until ``pid`` runs ``argv``: its environment is then its own."""
    want = [a.encode() for a in argv]
    for _ in range(1_000_000):
        if _cmdline(pid) == want:
            return
    raise AssertionError(f"{pid} never ran {argv}")


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _env(**more: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], **more}


def test_leftovers_are_the_marker_the_group_and_their_descendants_only(
    started: list[subprocess.Popen[bytes]],
) -> None:
    marker = new_marker()
    script = (
        "(setsid sleep 9101 & echo $!);"  # the marker only: another session, an orphan
        " sleep 9102 & echo $!;"  # the group
        f" env -u {MARKER} setsid sh -c 'sleep 9103 & exec sleep 9104' & echo $!;"  # a descendant only
        " exec sleep 9105"
    )
    leader = subprocess.Popen(
        ["sh", "-c", script], env=_env(**{MARKER: marker}), stdout=subprocess.PIPE, start_new_session=True
    )
    started.append(leader)
    # Bystanders: no marker, a marker that only starts like this one, and this one under another name.
    for env in ({}, {MARKER: marker + "9"}, {"X" + MARKER: marker}):
        started.append(subprocess.Popen(["sleep", "9106"], env=_env(**env), start_new_session=True))
    assert leader.stdout is not None
    marked, grouped, session = (int(leader.stdout.readline()) for _ in range(3))
    _execed(leader.pid, "sleep", "9105")
    _execed(marked, "sleep", "9101")
    _execed(grouped, "sleep", "9102")
    _execed(session, "sleep", "9104")
    (grandchild,) = _children(session)
    _execed(grandchild, "sleep", "9103")
    for bystander in started[1:]:
        _execed(bystander.pid, "sleep", "9106")
    expected = {leader.pid, marked, grouped, session, grandchild}
    assert leftovers(marker, leader.pid) == expected
    assert leftovers(new_marker(), leader.pid) == expected - {marked}  # the others are in the group or under it
    assert leftovers(marker, -1) == expected  # no group of that id: the marked ones and what they started
    sweep = kill_leftovers(marker, leader.pid)
    assert sweep == Sweep(killed=5, survived=0)
    leader.wait()
    assert leftovers(marker, leader.pid) == set()
    assert all(p.poll() is None for p in started[1:])


def test_launched_is_the_command_line_that_sets_the_marker(started: list[subprocess.Popen[bytes]]) -> None:
    marker = new_marker()

    def hold(*words: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(["sh", "-c", "read x", "sh", *words], stdin=subprocess.PIPE, start_new_session=True)
        started.append(proc)
        _execed(proc.pid, "sh", "-c", "read x", "sh", *words)
        return proc

    at_the_end = hold("--bind", "/", "/", "--setenv", MARKER, marker)
    in_between = hold("--setenv", MARKER, marker, "--", "true")
    for words in (
        ("--setenv", MARKER, marker + "9"),
        ("--setenv", MARKER + "X", marker),
        ("--set", MARKER, marker),
        (MARKER, "--setenv", marker),
        ("--setenv", MARKER),
    ):
        hold(*words)
    assert launched(marker) == {at_the_end.pid, in_between.pid}
    assert launched("") == set()
    assert kill_launch(marker) == Sweep(killed=2, survived=0)
    assert not Path(f"/proc/{at_the_end.pid}").exists() and not Path(f"/proc/{in_between.pid}").exists()  # reaped
    assert all(p.poll() is None for p in started[2:])
    assert kill_launch(marker) == Sweep(killed=0, survived=0)


def test_this_process_is_never_its_own_leftover() -> None:
    marker = new_marker()
    os.environ[MARKER] = marker  # /proc/self/environ keeps what the process started with: a child is needed
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import os, sys; from sessions.sandbox.reaper import leftovers;"
                " print(sorted(leftovers(sys.argv[1], os.getpgid(0))), os.getpid())",
                marker,
            ],
            stdout=subprocess.PIPE,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[3],
        )
        out, _ = child.communicate()
    finally:
        del os.environ[MARKER]
    assert out.decode().split() == ["[]", str(child.pid)]
    assert os.getpid() not in leftovers(new_marker(), os.getpgid(0))  # in this process too (nothing is killed)


def test_a_process_that_survives_sigkill_is_counted_as_survived() -> None:
    # The init of this PID namespace: a SIGKILL from inside it is dropped by the kernel (and refused to a user).
    assert _sweep(lambda: {1}, 2) == Sweep(killed=0, survived=1)
    assert new_marker().startswith(f"{os.getpid()}.") and new_marker() != new_marker()


def test_an_exited_process_not_yet_reaped_is_no_leftover(started: list[subprocess.Popen[bytes]]) -> None:
    """A zombie is gone whatever its group: found, it would be counted as killed though nothing was."""
    zombie = subprocess.Popen(["true"], start_new_session=True)
    started.append(zombie)
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # exited, left unreaped
    assert Path(f"/proc/{zombie.pid}/stat").read_text().split()[2] == "Z"
    assert leftovers(new_marker(), zombie.pid) == set()
    assert kill_leftovers(new_marker(), zombie.pid) == Sweep(killed=0, survived=0)


def test_a_process_named_like_the_rest_of_its_stat_line_is_still_found(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    """The name in /proc/PID/stat is in parentheses and may hold any: the fields are read after the last ')'."""
    sleep = tmp_path / "x) Z 1 1"
    sleep.symlink_to(shutil.which("sleep") or "/bin/sleep")
    proc = subprocess.Popen([str(sleep), "9107"], start_new_session=True)
    started.append(proc)
    _execed(proc.pid, str(sleep), "9107")
    assert leftovers(new_marker(), proc.pid) == {proc.pid}


def test_the_group_is_the_process_group_not_the_session(started: list[subprocess.Popen[bytes]]) -> None:
    """A group of its own inside this session, with no marker: found (and killed) by its group id alone."""
    proc = subprocess.Popen(["sleep", "9108"], env=_env(), process_group=0)
    started.append(proc)
    _execed(proc.pid, "sleep", "9108")
    assert leftovers(new_marker(), proc.pid) == {proc.pid}
    assert kill_leftovers(new_marker(), proc.pid) == Sweep(killed=1, survived=0)
    assert not Path(f"/proc/{proc.pid}").exists()  # killed and reaped


def test_a_sweep_counts_every_round_and_what_was_gone_before_its_signal(
    started: list[subprocess.Popen[bytes]],
) -> None:
    first, second = (subprocess.Popen(["sleep", "9109"], start_new_session=True) for _ in range(2))
    started += [first, second]
    rounds = iter([{first.pid}, {second.pid}, set()])  # the command started another while the first was killed
    assert _sweep(lambda: next(rounds), 5) == Sweep(killed=2, survived=0)
    dead = subprocess.Popen(["true"])
    dead.wait()
    _reap({dead.pid})  # not a child any more: nothing to reap, and no error
    assert _sweep(lambda: {dead.pid}, 1) == Sweep(killed=1, survived=0)  # gone before its SIGKILL: no error


def test_another_users_process_is_counted_as_survived(started: list[subprocess.Popen[bytes]]) -> None:
    """As an ordinary user, the machine's init; as root, a process of root's swept by a fork of this process that
    became another user (a fork, not a new program: it runs the very code under test, a mutant's too)."""
    if os.geteuid() != 0:
        assert _sweep(lambda: {1}, 1) == Sweep(killed=0, survived=1)
        return
    roots = subprocess.Popen(["sleep", "9110"], start_new_session=True)
    started.append(roots)
    _execed(roots.pid, "sleep", "9110")
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the fork reports through the pipe and never returns
        code = 1
        try:
            os.setuid(65534)
            os.write(write_end, repr(_sweep(lambda: {roots.pid}, 2)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read().decode()
    assert os.waitpid(child, 0)[1] == 0
    assert said == "Sweep(killed=0, survived=1)"
    assert roots.poll() is None
