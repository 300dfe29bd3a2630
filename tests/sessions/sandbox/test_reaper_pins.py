"""Pins of the reaper's search (:mod:`sessions.sandbox.reaper`): exactly what a command left, never a bystander.

The searches are asserted before anything is killed, so a search that found too much fails here first (the mutation
run also keeps the reaper in a PID namespace of its own: bench/mutation_score.py's ``own_pids``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.sandbox.reaper import (
    MARKER,
    Sweep,
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
