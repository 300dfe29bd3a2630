"""Pins of starting a command (:mod:`sessions.sandbox.spawn`) and of the reaper's process-wide switches: what the
child gets (pipes, session, directory, environment), that it dies with the thread that started it, and bubblewrap's
status pipe (a stand-in ``sh`` writes what bubblewrap would)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import trio

from sessions.sandbox.reaper import become_subreaper
from sessions.sandbox.spawn import Spawned, spawn, spawn_server

ROOT = Path(__file__).resolve().parents[3]


async def _all(stream: trio.abc.ReceiveStream) -> bytes:
    out = b""
    while chunk := await stream.receive_some():
        out += chunk
    return out


async def test_spawn_gives_one_output_pipe_no_stdin_a_session_the_directory_and_the_environment(
    tmp_path: Path,
) -> None:
    script = (
        "echo out; echo err >&2; read x; echo read=$?;"
        " read -r pid comm state ppid pgrp session rest < /proc/self/stat; [ $session = $$ ] && echo leader; pwd;"
        ' echo "A=$A B=${B-unset}"'
    )
    proc = spawn(["sh", "-c", script], cwd=tmp_path, env={"A": "1", "PATH": os.environ["PATH"]})
    assert not proc.never_started and proc.stdin is None and proc.returncode is None
    out = await _all(proc.stdout)
    assert await proc.wait() == 0 and proc.returncode == 0 and not proc.never_started
    assert out.decode().split("\n") == ["out", "err", "read=1", "leader", str(tmp_path), "A=1 B=unset", ""]
    assert await proc.wait() == 0  # a second wait returns at once


async def test_spawn_never_hands_a_command_this_process_s_stdin(tmp_path: Path) -> None:
    """Its stdin is /dev/null even when this process has one to read (a terminal, a pipe of the editor's)."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"leak\n")
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        proc = spawn(["sh", "-c", 'read x; echo "read=$? x=$x"'], cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)
    assert await _all(proc.stdout) == b"read=1 x=\n"
    assert await proc.wait() == 0


async def test_spawn_server_talks_over_stdin_and_stdout_with_stderr_apart(tmp_path: Path) -> None:
    err = tmp_path / "err"
    script = (
        "read x; echo got $x; echo oops >&2; pwd; echo A=$A HOME=${HOME-unset};"
        " read -r pid comm state ppid pgrp session rest < /proc/self/stat; [ $session = $$ ] && echo leader"
    )
    with err.open("w") as stderr:
        proc = spawn_server(["sh", "-c", script], cwd=tmp_path, env={"PATH": "/bin", "A": "1"}, stderr=stderr)
    assert proc.stdin is not None
    await proc.stdin.send_all(b"hello\n")
    await proc.stdin.aclose()
    assert await _all(proc.stdout) == f"got hello\n{tmp_path}\nA=1 HOME=unset\nleader\n".encode()
    assert await proc.wait() == 0 and not proc.never_started
    assert err.read_text() == "oops\n"


def test_a_started_command_dies_with_the_thread_that_started_it(tmp_path: Path) -> None:
    started: list[Spawned] = []

    def start() -> None:
        started.append(spawn(["sleep", "9201"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}))
        with (tmp_path / "err").open("w") as stderr:
            started.append(
                spawn_server(["sleep", "9202"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, stderr=stderr)
            )

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    for proc in started:
        fd = os.pidfd_open(proc.pid)
        try:
            assert select.select([fd], [], [], 10)[0], "the command outlived the thread that started it"
        finally:
            os.close(fd)
        proc._popen.wait()
        assert proc.returncode == -9


async def test_the_status_pipe_goes_where_the_launch_says_and_tells_a_command_that_never_ran(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    ran = 'echo "$@"; echo \'{ "exit-code": 0 }\' >/dev/fd/$2'
    proc = spawn(["sh", "-c", ran, "sh", "after"], cwd=tmp_path, env=env, status_at=4)
    words = (await _all(proc.stdout)).decode().split()
    assert words[0] == "--json-status-fd" and words[1].isdigit() and words[2:] == ["after"]
    assert await proc.wait() == 0 and not proc.never_started
    failed = spawn(
        ["sh", "-c", 'echo "$@" >&2; echo \'{ "child-pid": 1 }\' >/dev/fd/$2; exit 1', "sh"],
        cwd=tmp_path,
        env=env,
        status_at=4,
    )
    assert (await _all(failed.stdout)).decode().split()[0] == "--json-status-fd"
    assert not failed.never_started  # not yet known
    assert await failed.wait() == 1 and failed.never_started
    plain = spawn(["sh", "-c", 'echo "$@"; exit 1', "sh", "x"], cwd=tmp_path, env=env)
    assert await _all(plain.stdout) == b"x\n"
    assert await plain.wait() == 1 and not plain.never_started  # no status pipe: nothing said it never ran


def test_a_command_that_cannot_start_leaves_no_descriptor_open(tmp_path: Path) -> None:
    with (tmp_path / "err").open("w") as stderr:
        before = set(os.listdir("/proc/self/fd"))
        starts: list[Callable[[], Spawned]] = [
            lambda: spawn([str(tmp_path / "absent")], cwd=tmp_path, env={}),
            lambda: spawn([str(tmp_path / "absent")], cwd=tmp_path, env={}, status_at=1),
            lambda: spawn_server([str(tmp_path / "absent")], cwd=tmp_path, env={}, stderr=stderr),
        ]
        for start in starts:
            try:
                start()
            except FileNotFoundError:
                pass
            else:
                raise AssertionError("an absent program started")
        assert set(os.listdir("/proc/self/fd")) == before


def test_become_subreaper_makes_this_process_the_reaper_once() -> None:
    script = (
        "import ctypes, os\n"
        "from sessions.sandbox.reaper import become_subreaper\n"
        "first = become_subreaper()\n"
        "v = ctypes.c_int()\n"
        "ctypes.CDLL(None).prctl(37, ctypes.byref(v), 0, 0, 0)\n"  # PR_GET_CHILD_SUBREAPER
        "print(first, become_subreaper(), v.value)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout == "True True 1\n"
    assert become_subreaper() and become_subreaper()  # here too (the bash tool's commands make it so anyway)
