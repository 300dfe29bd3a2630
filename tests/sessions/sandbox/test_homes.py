"""Other users' homes, through real bubblewrap: ``/home`` is empty inside but for the home that holds ``$HOME`` or the
workspace, nothing under it is named in bubblewrap's arguments (so a home removed while a command starts cannot fail
the command), and a socket in the home shown again still does not answer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions.sandbox import BubblewrapSandbox, SandboxPolicy
from tests.support.real_home import REAL_HOME
from tests.support.sockets import CONNECT, listen

# As an ordinary user these tests make their homes in the real one (the only writable place under /home).
pytestmark = pytest.mark.real_home

HOME_WRITABLE = os.access("/home", os.W_OK)  # as root; .ci/sandbox-as-user runs these with a home under /home


@pytest.fixture
def home() -> Iterator[Path]:
    """A home under /home: a new one as root, a folder in the ordinary user's own home otherwise."""
    parent = Path("/home") if HOME_WRITABLE else REAL_HOME
    assert str(parent).startswith("/home/") or parent == Path("/home"), "these tests need a home under /home"
    path = Path(tempfile.mkdtemp(prefix="reasonix-me-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _shown(home: Path) -> str:
    """The home that stays visible: the first folder under /home on the way to ``home``."""
    return "/home/" + home.relative_to("/home").parts[0]


def _box(bwrap: str, home: Path) -> BubblewrapSandbox:
    return BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy(), base_env={**os.environ, "HOME": str(home)})


def _run(sandbox: BubblewrapSandbox, ws: Path, command: str) -> subprocess.CompletedProcess[str]:
    launch = sandbox.wrap(["/bin/sh", "-c", command], workspace=ws, cwd=ws, env={})
    return _exec(launch.argv, launch.env)


def _exec(argv: tuple[str, ...], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_a_home_removed_while_a_command_starts_does_not_fail_it(bwrap: str, ws: Path, home: Path) -> None:
    other = Path(tempfile.mkdtemp(prefix="reasonix-other-", dir="/home")) if HOME_WRITABLE else None
    launch = _box(bwrap, home).wrap(["/bin/sh", "-c", "echo started"], workspace=ws, cwd=ws, env={})
    if other is not None:
        shutil.rmtree(other)  # between building the arguments and bubblewrap's mounts, as another test or user may
    done = _exec(launch.argv, launch.env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "started\n", "")
    named = {arg for arg in launch.argv if arg.startswith("/home/")}
    assert named == {_shown(home)}  # /home itself is one tmpfs; only the shown home is bound back


def test_the_own_home_stays_readable_and_other_homes_are_not_even_listed(bwrap: str, ws: Path, home: Path) -> None:
    (home / "notes.txt").write_text("OWN-HOME-TEXT")
    other = Path(tempfile.mkdtemp(prefix="reasonix-other-", dir="/home")) if HOME_WRITABLE else None
    if other is not None:
        (other / "notes.txt").write_text("OTHER-HOME-CANARY")
    try:
        done = _run(_box(bwrap, home), ws, f"cat {home}/notes.txt; echo; ls -A /home; cat /home/*/notes.txt")
    finally:
        if other is not None:
            shutil.rmtree(other, ignore_errors=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "OWN-HOME-TEXT" and lines[1:2] == [Path(_shown(home)).name]
    assert "CANARY" not in done.stdout


def test_a_socket_in_the_own_home_does_not_answer(bwrap: str, ws: Path, home: Path) -> None:
    path = home / "agent.sock"
    server = listen(path)
    try:
        (ws / "probe.py").write_text(CONNECT)
        done = _run(_box(bwrap, home), ws, f"{sys.executable} probe.py {path}")
    finally:
        server.close()
    assert done.stdout.startswith(f"refused {path}"), done.stdout + done.stderr
