"""Pins of the shared loopback network's anchor (:mod:`sessions.sandbox.netns`) with stand-in ``unshare`` and
``nsenter`` programs on ``PATH``: what it runs, the prefix it gives, and why it gives none. The real anchor is run by
test_job_network.py."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from sessions.sandbox import netns
from sessions.sandbox.netns import _LOOPBACK_UP, SharedNetwork


def tools(folder: Path, unshare: str, monkeypatch: pytest.MonkeyPatch, *, shebang: str = "#!/bin/sh") -> Path:
    folder.mkdir()
    for name, body in (("unshare", unshare), ("nsenter", "exit 0")):
        path = folder / name
        path.write_text(f"{shebang}\n{body}\n")
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    return folder


def test_without_util_linux_there_is_no_shared_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    net = SharedNetwork()
    assert net.join() is None and net.problem == "nsenter or unshare is not installed (util-linux)"
    assert not net.running and net.join() is None
    net.close()


def test_an_anchor_that_never_says_up_is_closed_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools(tmp_path / "bin", "echo down; exit 1", monkeypatch)
    net = SharedNetwork()
    assert net.join() is None and not net.running
    assert net.problem == "the network anchor did not start (the kernel refused a network namespace)"


def test_an_anchor_silent_past_the_timeout_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It would say ``up`` after a second: too late, it was killed after START_TIMEOUT_S (a tenth of one here)."""
    tools(tmp_path / "bin", "sleep 1; echo up; exec sleep 9304", monkeypatch)
    monkeypatch.setattr(netns, "START_TIMEOUT_S", 0.1)
    net = SharedNetwork()
    assert net.join() is None and not net.running and net._popen is None
    assert net.problem == "the network anchor did not start (the kernel refused a network namespace)"


def test_the_anchor_reads_nothing_writes_no_errors_and_dies_with_us(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its stdin and stderr are /dev/null whatever ours are (here a file, for the test), and its parent-death signal is
    SIGKILL: the stand-in reports all three, then holds the namespace like the real one."""
    tools(tmp_path / "bin", "exit 1", monkeypatch)
    seen = tmp_path / "seen"
    (tmp_path / "bin" / "unshare").write_text(
        f"#!{sys.executable} -S\n"
        "import ctypes, os\n"
        "sig = ctypes.c_int()\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG\n"
        "fds = [os.readlink(f'/proc/self/fd/{fd}') for fd in (0, 2)]\n"
        f"open({str(seen)!r}, 'w').write(' '.join([str(sig.value), *fds]))\n"
        "print('up', flush=True)\n"
        "os.execvp('sleep', ['sleep', '9305'])\n"
    )
    inherited = os.open(tmp_path / "inherited", os.O_RDWR | os.O_CREAT)
    saved = [os.dup(0), os.dup(2)]
    os.dup2(inherited, 0)
    os.dup2(inherited, 2)
    net = SharedNetwork()
    try:
        prefix = net.join()
    finally:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 2)
        for fd in (*saved, inherited):
            os.close(fd)
    try:
        assert prefix is not None and net.running
        assert seen.read_text() == f"{int(signal.SIGKILL)} /dev/null /dev/null"
    finally:
        net.close()


def test_an_anchor_that_cannot_start_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools(tmp_path / "bin", "exit 0", monkeypatch, shebang="#!/absent/interpreter")
    net = SharedNetwork()
    assert net.join() is None
    assert net.problem == "the network anchor cannot start: No such file or directory"


@pytest.mark.parametrize("euid", [0, 4242])
def test_the_anchor_runs_once_and_its_prefix_enters_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, euid: int
) -> None:
    """Root's arguments and an ordinary user's, each pinned whoever runs the tests (the identity stood in for)."""
    folder = tools(tmp_path / "bin", f'printf "%s\\n" "$@" > {tmp_path}/argv; echo up; exec sleep 9301', monkeypatch)
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    net = SharedNetwork()
    prefix = net.join()
    assert net.running and net.problem is None and net._popen is not None
    pid = net._popen.pid
    target = (str(folder / "nsenter"), "--target", str(pid))
    if euid == 0:
        assert prefix == (*target, "--net", "--")
    else:
        assert prefix == (*target, "--user", "--net", "--preserve-credentials", "--")
    assert net.join() == prefix and net._popen.pid == pid  # the same anchor
    user = [] if euid == 0 else ["--map-current-user", "--keep-caps"]
    argv = ["--net", *user, "--", sys.executable, "-I", "-S", "-c", _LOOPBACK_UP]
    assert (tmp_path / "argv").read_text() == "".join(word + "\n" for word in argv)
    assert Path(f"/proc/{pid}/stat").read_text().split()[5] == str(pid)  # a session of its own
    popen = net._popen
    net.close()
    assert not net.running and net._popen is None
    assert popen.stdout is not None and popen.stdout.closed
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped
    net.close()  # a second close has nothing to stop


def test_closing_an_anchor_that_already_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools(tmp_path / "bin", "echo up; exec sleep 9302", monkeypatch)
    net = SharedNetwork()
    assert net.join() is not None and net._popen is not None
    net._popen.kill()
    net._popen.wait()  # reaped: its process group is gone
    assert not net.running
    net.close()  # nothing to kill, nothing raised
    assert net._popen is None


@pytest.mark.parametrize("missing", ["nsenter", "unshare"])
def test_either_tool_missing_is_util_linux_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    folder = tools(tmp_path / "bin", "echo up; exec /bin/sleep 9303", monkeypatch)
    (folder / missing).unlink()
    monkeypatch.setenv("PATH", str(folder))
    net = SharedNetwork()
    assert net.join() is None and net.problem == "nsenter or unshare is not installed (util-linux)"
    assert not net.running
