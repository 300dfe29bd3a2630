"""Arming a command to die with the thread that starts it (:func:`sessions.sandbox.reaper.armed`): ``setpriv
--pdeathsig KILL`` and a shell's check of its parent, with no ``preexec_fn`` (so ``subprocess`` vforks), or
``die_with_parent`` where there is no such ``setpriv``; and the errors ``Popen`` would raise for what cannot run."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sessions.sandbox.reaper import Armed, armed
from tests.support.parts import path_without

ROOT = Path(__file__).resolve().parents[3]

_REASONIX = r"""
import os, select, sys
from pathlib import Path
from sessions.sandbox.spawn import spawn

proc = spawn(["sh", "-c", "echo ready; exec sleep " + sys.argv[1]], cwd=Path("."), env={"PATH": os.environ["PATH"]})
fd = proc.stdout.fileno()
select.select([fd], [], [], 60)
assert os.read(fd, 100) == b"ready\n"
print(proc.pid, flush=True)
sys.stdin.read()  # held until it is killed
"""


def _exits_within(pid: int, seconds: float) -> bool:
    fd = os.pidfd_open(pid)
    try:
        return bool(select.select([fd], [], [], seconds)[0])
    finally:
        os.close(fd)


@pytest.mark.setpriv
def test_a_command_dies_when_the_process_that_spawned_it_is_sigkilled(tmp_path: Path) -> None:
    """The command runs in a session of its own, so nothing but the death signal takes it down with its parent."""
    tag = str(9_410_000 + os.getpid() % 10_000)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    reasonix = subprocess.Popen(
        [sys.executable, "-c", _REASONIX, tag], cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    command = None
    try:
        assert reasonix.stdout is not None
        command = int(reasonix.stdout.readline())
        assert not _exits_within(command, 0)  # running the command, past the shim
        reasonix.kill()
        reasonix.wait()
        assert _exits_within(command, 10), "the command outlived the Reasonix that spawned it"
    finally:
        reasonix.kill()
        reasonix.wait()
        if command is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(command, signal.SIGKILL)


_RUN_FROM_A_CHILD = "import subprocess, sys\nprint(subprocess.run(sys.argv[1:]).returncode)"


@pytest.mark.setpriv
@pytest.mark.parametrize("own_sh", [False, True])
def test_the_command_runs_only_under_the_thread_it_was_armed_for(tmp_path: Path, own_sh: bool) -> None:
    """What the shim sees when its parent died (or the thread that started it exited) before setpriv armed the
    signal: no signal would ever come, so it kills itself before the command runs. Here the armed argv is run by
    another process, and by this process after the thread it was armed on has ended. A ``/bin/sh -c`` launch (as
    root's, that enters a cgroup) gets the check in its own script, with its $0 and arguments as they were."""
    ran = tmp_path / "ran"
    if own_sh:
        command = ["/bin/sh", "-c", f'echo "$0 $# $*" >> {ran}', "zero", "a b", "c"]
        said = "zero 2 a b c\n"
    else:
        command = ["sh", "-c", f"echo ran >> {ran}"]
        said = "ran\n"
    mine = armed(command)
    assert mine.preexec_fn is None
    assert (mine.argv[-len(command) :] == command) != own_sh  # its own sh: no second shell, the check in its script
    assert subprocess.run(mine.argv).returncode == 0 and ran.read_text() == said  # its thread: it runs

    other = subprocess.run([sys.executable, "-c", _RUN_FROM_A_CHILD, *mine.argv], capture_output=True, text=True)
    assert other.stdout == f"{-signal.SIGKILL}\n"  # another parent: killed

    on_thread: list[Armed] = []
    thread = threading.Thread(target=lambda: on_thread.append(armed(command)))
    thread.start()
    thread.join()
    assert subprocess.run(on_thread[0].argv).returncode == -signal.SIGKILL  # its thread has ended: killed
    assert ran.read_text() == said


@pytest.mark.setpriv
def test_a_sh_script_of_its_own_keeps_its_zeroth_argument(tmp_path: Path) -> None:
    for command, said in (
        (["/bin/sh", "-c", 'echo "$0 $#"'], b"/bin/sh 0\n"),
        (["/bin/sh", "-c", 'echo "$0 $#"', "zero"], b"zero 0\n"),
    ):
        mine = armed(command)
        assert mine.argv[-len(command) :] != command  # the check is in its script: no second shell
        assert subprocess.run(mine.argv, capture_output=True).stdout == said


@pytest.mark.setpriv
def test_the_armed_command_is_the_program_popen_would_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = armed(["sh", "-c", 'echo "$0"'], {"PATH": "/usr/bin:/bin"}, tmp_path)
    assert named.argv[-3:] == ["sh", "-c", 'echo "$0"']  # found on the same PATH by the shell: its argv[0] kept
    assert subprocess.run(named.argv, env={"PATH": "/usr/bin:/bin"}, capture_output=True).stdout == b"sh\n"
    pathless = armed(["sh", "-c", "exit 3"], {}, tmp_path)
    assert pathless.argv[-3] in ("/bin/sh", "/usr/bin/sh")  # Popen's default PATH, not the shell's
    assert subprocess.run(pathless.argv, env={}).returncode == 3
    script = tmp_path / "prog"
    script.write_text('#!/bin/sh\necho "$0 $*"\n')
    script.chmod(0o755)
    relative = armed(["./prog", "x"], {}, tmp_path)
    assert relative.argv[-2:] == ["./prog", "x"]  # run from the child's cwd, as Popen runs it
    done = subprocess.run(relative.argv, cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout == "./prog x\n"
    monkeypatch.chdir(tmp_path)
    assert armed(["./prog"]).argv[-1] == "./prog"  # no cwd: ours


@pytest.mark.setpriv
def test_what_cannot_run_raises_the_error_popen_would(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("not a program")
    orphan = tmp_path / "orphan"
    orphan.write_text("#!/absent/interpreter -x\n")
    orphan.chmod(0o755)
    for argv, env, cwd, error in (
        (["absent-program-9411"], {"PATH": str(tmp_path)}, None, FileNotFoundError),
        (["sh"], {"PATH": str(tmp_path)}, None, FileNotFoundError),  # not on the child's PATH
        ([str(tmp_path / "absent")], None, None, FileNotFoundError),
        (["./absent"], None, tmp_path, FileNotFoundError),
        ([str(plain)], None, None, PermissionError),
        (["./plain"], None, tmp_path, PermissionError),
        ([str(tmp_path)], None, None, PermissionError),
        ([str(orphan)], None, None, FileNotFoundError),
    ):
        with pytest.raises(error) as raised:
            armed(argv, env, cwd)
        assert raised.value.filename == argv[0]
        with pytest.raises(error):  # what Popen itself says
            subprocess.run(argv, env=env, cwd=cwd, check=False)


def test_without_setpriv_the_signal_is_armed_between_fork_and_exec(tmp_path: Path) -> None:
    path = path_without(tmp_path / "bin", "setpriv")
    fallback = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sessions.sandbox.reaper import armed; a = armed(['x']); print(a.argv, a.preexec_fn)",
        ],
        env={**os.environ, "PATH": path, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert fallback.stdout.startswith("['x'] <function die_with_parent.<locals>.arm")


def test_a_setpriv_without_pdeathsig_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    old = folder / "setpriv"
    old.write_text("#!/bin/sh\necho 'setpriv [options] <program> [<argument>...]'\n")
    old.chmod(0o755)
    fallback = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sessions.sandbox.reaper import armed; a = armed(['x']); print(a.argv, a.preexec_fn)",
        ],
        env={**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert fallback.stdout.startswith("['x'] <function die_with_parent.<locals>.arm")
