"""The attacks of a hostile model, through real bubblewrap and real processes, as root and (``.ci/sandbox-as-user``)
as an ordinary user: each fails, and each assertion fails without the change that stops it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from sessions.sandbox import BubblewrapSandbox, SandboxPolicy
from sessions.tools import ToolContext, default_registry
from tests.support.sockets import CONNECT, listen
from tests.support.tools import call

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

REGISTRY = default_registry(use_ripgrep=False)
ROOT = os.geteuid() == 0


@pytest.fixture
def outside() -> Iterator[Path]:
    """Outside the workspace, /tmp and /run (which the sandbox replaces with its own)."""
    path = Path(tempfile.mkdtemp(prefix="reasonix-hostile-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def box(bwrap: str, home: Path | None = None, **policy: object) -> BubblewrapSandbox:
    base = {**os.environ, "HOME": str(home)} if home is not None else None
    return BubblewrapSandbox(bwrap=bwrap, policy=SandboxPolicy(**policy), base_env=base)  # type: ignore[arg-type]


async def bash(sandbox: BubblewrapSandbox, ws: Path, command: str) -> str:
    result = await call(REGISTRY, ToolContext(root=ws, sandbox=sandbox), "bash", command=command)
    return result.content


async def test_no_capability_inside_so_root_cannot_remount_and_write_the_host(bwrap: str, ws: Path) -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    planted = site / "reasonix-hostile-test.pth"
    command = (
        "grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status; "
        f"mount -o remount,rw / ; echo 'import os' > {planted}; echo done"
    )
    try:
        out = await bash(box(bwrap), ws, command)
        assert "CapEff:\t0000000000000000" in out and "NoNewPrivs:\t1" in out
        assert not planted.exists()
    finally:
        planted.unlink(missing_ok=True)


async def test_a_mask_cannot_be_unmounted_nor_escaped_by_a_new_namespace(bwrap: str, ws: Path, outside: Path) -> None:
    (outside / "id_rsa").write_text("PRIVATE-KEY-CANARY")
    command = (
        f"umount {outside}; cat {outside}/id_rsa; "
        f"unshare -Urm sh -c 'umount {outside}; cat {outside}/id_rsa'; "
        f"unshare -Ur cat {outside}/id_rsa; echo done"
    )
    out = await bash(box(bwrap, forbid_read=(str(outside),)), ws, command)
    assert "done" in out and "PRIVATE-KEY-CANARY" not in out


async def test_no_host_unix_socket_answers(bwrap: str, ws: Path, outside: Path) -> None:
    paths = [outside / "agent.sock", outside / os.fsdecode(b"odd-\xff.sock")]  # a name that is not UTF-8 too
    run_dir = Path(tempfile.mkdtemp(prefix="reasonix-hostile-", dir="/run")) if os.access("/run", os.W_OK) else None
    if run_dir is not None:  # as root: a socket under /run, like docker.sock or the session bus
        paths.append(run_dir / "docker.sock")
    servers = [listen(path) for path in paths]
    try:
        probe = [sys.executable, "-c", CONNECT, *map(str, paths)]
        plain = (await trio.run_process(probe, capture_stdout=True)).stdout.decode(errors="replace")
        assert plain.count("CONNECTED") == len(paths)  # they answer outside the sandbox
        (ws / "probe.py").write_text(CONNECT)
        # A tool call's command is JSON text: the name that is not UTF-8 is reached by a glob, as a model would.
        args = " ".join(str(path) if path.name.isascii() else str(path.parent / "odd-*.sock") for path in paths)
        out = await bash(box(bwrap), ws, f"{sys.executable} probe.py {args}; ls -A /run; echo listed")
        lines = out.splitlines()
        assert "CONNECTED" not in out and sum(line.startswith("refused ") for line in lines) == len(paths)
        assert out.split("listed")[0].strip().splitlines()[-1].startswith("refused")  # /run is empty inside
    finally:
        for server in servers:
            server.close()
        if run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)


def _git(ws: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True, env=env, check=True).stdout


async def test_the_repositorys_git_config_and_hooks_are_read_only(bwrap: str, ws: Path, outside: Path) -> None:
    _git(ws, "init", "-q")
    config = (ws / ".git" / "config").read_text()
    pwned = outside / "pwned"
    command = (
        f"git config core.fsmonitor 'touch {pwned}'; "
        f"printf '#!/bin/sh\\ntouch {pwned}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        "mkdir -p evil && printf '[core]\\n\\tfsmonitor = true\\n' > evil/config && echo ../evil > .git/commondir; "
        "mv .git .git-moved; rm -rf .git; echo kept > file.txt; git status --short; echo done"
    )
    out = await bash(box(bwrap), ws, command)
    assert "done" in out and (ws / "file.txt").read_text() == "kept\n"
    assert (ws / ".git" / "config").read_text() == config
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / ".git" / "commondir").exists()
    assert "?? file.txt" in _git(ws, "status", "--short") and not pwned.exists()


async def test_histories_shadow_and_other_homes_are_hidden(bwrap: str, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".local" / "share" / "fish").mkdir(parents=True)
    canaries = {
        ".bash_history": "export TOKEN=HISTORY-CANARY-1",
        ".zsh_history": "HISTORY-CANARY-2",
        ".python_history": "HISTORY-CANARY-3",
        ".local/share/fish/fish_history": "HISTORY-CANARY-4",
        ".config/gh/hosts.yml": "oauth_token: GH-CANARY",
    }
    for name, text in canaries.items():
        (home / name).write_text(text)
    other = Path(tempfile.mkdtemp(prefix="reasonix-other-", dir="/home")) if os.access("/home", os.W_OK) else None
    if other is not None:  # as root: another user's home
        (other / "notes.txt").write_text("OTHER-HOME-CANARY")
    try:
        reads = " ".join(f"~/{name}" for name in canaries)
        command = f"cat {reads}; cat {other or '/nonexistent'}/notes.txt; cat /etc/shadow /etc/gshadow; echo done"
        out = await bash(box(bwrap, home=home), ws, command)
    finally:
        if other is not None:
            shutil.rmtree(other, ignore_errors=True)
    assert "CANARY" not in out and "done" in out
    assert "root:" not in out  # /etc/shadow: /dev/null over it (as root it was readable)


async def test_a_full_tmp_fails_saying_which_bound(bwrap: str, ws: Path) -> None:
    out = await bash(box(bwrap, tmp_mb=8), ws, "head -c 20000000 /dev/zero > /tmp/big && echo wrote")
    assert "No space left on device" in out and "wrote" not in out
    assert "the sandbox's private /tmp holds at most 8 MB ([sandbox] tmp_mb)" in out


FORK = (
    "import subprocess, sys\n"
    "procs = []\n"
    "try:\n"
    "    for _ in range(80):\n"
    "        procs.append(subprocess.Popen(['sleep', '30']))\n"
    "except OSError as exc:\n"
    "    print('refused after', len(procs), exc); sys.exit(1)\n"
    "print('started', len(procs))\n"
)


async def test_forking_past_the_process_bound_fails_saying_which(bwrap: str, ws: Path) -> None:
    (ws / "fork.py").write_text(FORK)
    out = await bash(box(bwrap, max_processes=32), ws, f"{sys.executable} fork.py")
    assert "refused after" in out and "started 80" not in out
    assert "the sandbox's process bound was hit: at most 32 processes and threads at once" in out


async def test_allocating_past_the_memory_bound_fails_saying_which(bwrap: str, ws: Path) -> None:
    command = f"{sys.executable} -c 'x = bytearray(600 * 1024 * 1024); print(len(x))'"
    out = await bash(box(bwrap, memory_mb=256), ws, command)
    assert "MemoryError" in out and "629145600" not in out
    assert "the sandbox's memory bound was hit: at most 256 MB per process ([sandbox] memory_mb)" in out
    fits = await bash(box(bwrap, memory_mb=256), ws, f"{sys.executable} -c 'print(len(bytearray(10**7)))'")
    assert fits == "10000000\n[exit code 0]"


async def test_a_command_longer_than_ten_seconds_is_not_killed(bwrap: str, ws: Path) -> None:
    """trio's worker threads exit after 10 s idle, and --die-with-parent follows the thread that started bwrap."""
    out = await bash(box(bwrap), ws, "sleep 12; echo survived")
    assert out == "survived\n[exit code 0]"
