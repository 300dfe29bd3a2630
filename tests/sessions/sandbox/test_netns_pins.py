"""Pins of the shared loopback network's anchor (:mod:`sessions.sandbox.netns`) with stand-in ``unshare`` and
``nsenter`` programs on ``PATH``: what it runs, the prefix it gives, and why it gives none. The real anchor is run by
test_job_network.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

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


def test_an_anchor_that_cannot_start_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools(tmp_path / "bin", "exit 0", monkeypatch, shebang="#!/absent/interpreter")
    net = SharedNetwork()
    assert net.join() is None
    assert net.problem == "the network anchor cannot start: No such file or directory"


def test_the_anchor_runs_once_and_its_prefix_enters_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tools(tmp_path / "bin", f'printf "%s\\n" "$@" > {tmp_path}/argv; echo up; exec sleep 9301', monkeypatch)
    net = SharedNetwork()
    prefix = net.join()
    assert net.running and net.problem is None and net._popen is not None
    pid = net._popen.pid
    target = (str(folder / "nsenter"), "--target", str(pid))
    if os.geteuid() == 0:
        assert prefix == (*target, "--net", "--")
    else:
        assert prefix == (*target, "--user", "--net", "--preserve-credentials", "--")
    assert net.join() == prefix and net._popen.pid == pid  # the same anchor
    user = [] if os.geteuid() == 0 else ["--map-current-user", "--keep-caps"]
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
