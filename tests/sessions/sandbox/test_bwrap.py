"""bubblewrap with real processes: the filesystem outside the workspace is read-only, /tmp is private, hidden paths are
hidden, no other process's environment is visible, no network unless asked, and nothing outlives the command."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from sessions.sandbox import NoSandbox, SandboxPolicy
from sessions.tools import ToolContext, default_registry
from tests.support.bwrap import sandbox
from tests.support.leftovers import assert_gone, pids_running
from tests.support.tools import call

REGISTRY = default_registry(use_ripgrep=False)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (which the sandbox replaces with its own)."""
    path = Path(tempfile.mkdtemp(prefix="reasonix-outside-", dir="/var/tmp"))
    try:
        yield path
    finally:
        for child in path.iterdir():
            child.unlink()
        path.rmdir()


def test_the_launch_says_what_runs(bwrap: str, ws: Path, tmp_path: Path) -> None:
    secret_dir = tmp_path / "dot-ssh"
    secret_dir.mkdir()
    secret_file = tmp_path / "netrc"
    secret_file.write_text("machine x password y")
    box = sandbox(bwrap, forbid_read=(str(secret_dir), str(secret_file), str(tmp_path / "absent")))
    launch = box.wrap(["bash", "-c", "true"], workspace=ws, cwd=ws, env={})
    argv = list(launch.argv)
    argv = argv[argv.index(bwrap) :]  # as root, after the step into the launch's pids cgroup
    assert argv[:7] == [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc"]
    assert argv[argv.index("--tmpfs") + 1] == "/tmp" and "--cap-drop" in argv
    assert ["--bind", str(ws), str(ws)] == argv[argv.index("--bind") : argv.index("--bind") + 3]
    assert ["--tmpfs", str(secret_dir)] == argv[argv.index(str(secret_dir)) - 1 : argv.index(str(secret_dir)) + 1]
    assert argv[argv.index(str(secret_file)) - 2 : argv.index(str(secret_file))] == ["--ro-bind", "/dev/null"]
    assert str(tmp_path / "absent") not in argv
    for flag in ("--unshare-pid", "--die-with-parent", "--new-session", "--unshare-net"):
        assert flag in argv
    assert argv[-4:] == ["--", "bash", "-c", "true"] and launch.contained
    networked = sandbox(bwrap, network=True).wrap(["true"], workspace=ws, cwd=ws, env={})
    assert "--unshare-net" not in networked.argv
    read_only = sandbox(bwrap, mode="read-only").wrap(["true"], workspace=ws, cwd=ws, env={})
    assert "--bind" not in read_only.argv and str(ws) in read_only.argv


async def test_writes_outside_the_workspace_fail_and_inside_work(bwrap: str, ws: Path, outside: Path) -> None:
    ctx = ToolContext(root=ws, sandbox=sandbox(bwrap))
    result = await call(REGISTRY, ctx, "bash", command=f"echo pwned > {outside}/x; echo inside > mine.txt")
    assert "Read-only file system" in result.content
    assert not (outside / "x").exists()
    assert (ws / "mine.txt").read_text() == "inside\n"
    # The same command without a sandbox does write there: the test above is the sandbox's doing.
    plain = await call(REGISTRY, ToolContext(root=ws), "bash", command=f"echo pwned > {outside}/x")
    assert plain.content == "[exit code 0]" and (outside / "x").exists()


async def test_tmp_is_private(bwrap: str, ws: Path, tmp_path: Path) -> None:
    (tmp_path / "host-file").write_text("host")
    ctx = ToolContext(root=ws, sandbox=sandbox(bwrap))
    result = await call(REGISTRY, ctx, "bash", command=f"cat {tmp_path}/host-file; echo x > /tmp/scratch && echo ok")
    assert "No such file" in result.content and "ok\n" in result.content
    scratch = trio.Path("/tmp/scratch")
    assert not await scratch.exists() or await scratch.read_text() != "x\n"


async def test_the_supervisors_records_and_the_rules_stay_read_only(bwrap: str, ws: Path) -> None:
    (ws / ".reasonix").mkdir()
    (ws / "reasonix.local.toml").write_text("")
    ctx = ToolContext(root=ws, sandbox=sandbox(bwrap))
    command = "echo x > .reasonix/goal.json; echo '[permissions]' >> reasonix.local.toml; echo ok > ok.txt"
    result = await call(REGISTRY, ctx, "bash", command=command)
    assert result.content.count("Read-only file system") == 2
    assert not (ws / ".reasonix" / "goal.json").exists() and (ws / "reasonix.local.toml").read_text() == ""


async def test_read_only_mode_cannot_write_the_workspace(bwrap: str, ws: Path) -> None:
    (ws / "a.txt").write_text("kept")
    ctx = ToolContext(root=ws, sandbox=sandbox(bwrap, mode="read-only"))
    result = await call(REGISTRY, ctx, "bash", command="cat a.txt; echo; echo gone > a.txt; touch new")
    assert result.content.startswith("kept\n") and "Read-only file system" in result.content
    assert (ws / "a.txt").read_text() == "kept" and not (ws / "new").exists()


async def test_forbidden_paths_are_hidden(bwrap: str, ws: Path, outside: Path) -> None:
    (outside / "id_rsa").write_text("PRIVATE KEY")
    box = sandbox(bwrap, forbid_read=(str(outside),))
    result = await call(
        REGISTRY, ToolContext(root=ws, sandbox=box), "bash", command=f"ls -A {outside}; cat {outside}/*"
    )
    assert "PRIVATE KEY" not in result.content and "id_rsa" not in result.content


async def test_no_key_in_env_nor_in_any_visible_environ(bwrap: str, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_KEY", "sk-secret-in-ds-key")
    monkeypatch.setenv("DEPLOY_PAT", "pat-secret")
    box = sandbox(bwrap, env=("DS_KEY",), secret_env=("DS_KEY",))
    command = "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; tr '\\0' '\\n' < /proc/$PPID/environ"
    result = await call(REGISTRY, ToolContext(root=ws, sandbox=box), "bash", command=command)
    assert "PATH=" in result.content
    assert "sk-secret-in-ds-key" not in result.content and "pat-secret" not in result.content
    # Our own environ is in /proc: it holds the key (the parent process's), and the sandbox must not show it.
    assert str(os.getpid()) not in result.content.split()


async def _loopback_server(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    async def handler(stream: trio.SocketStream) -> None:
        await stream.send_all(b"hello from the host\n")
        await stream.aclose()

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(handler, listeners)


async def test_network_is_off_unless_asked(bwrap: str, ws: Path) -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_loopback_server)
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && cat <&3"
        closed = await call(REGISTRY, ToolContext(root=ws, sandbox=sandbox(bwrap)), "bash", command=command)
        opened = await call(
            REGISTRY, ToolContext(root=ws, sandbox=sandbox(bwrap, network=True)), "bash", command=command
        )
        nursery.cancel_scope.cancel()
    assert "hello from the host" not in closed.content and closed.is_error
    assert opened.content == "hello from the host\n[exit code 0]"


async def test_a_detached_process_dies_with_the_command(bwrap: str, ws: Path) -> None:
    ctx = ToolContext(root=ws, sandbox=sandbox(bwrap))
    result = await call(REGISTRY, ctx, "bash", command="setsid sleep 9052 >/dev/null 2>&1 & echo started")
    assert result.content == "started\n[exit code 0]"
    assert_gone("9052", "a detached sleep outlived its command")


_KILLED_CHILD = """
import functools, sys, trio
from pathlib import Path
from sessions.sandbox import sandbox_for, SandboxPolicy
from sessions.tools import ToolContext, PreparedCall, default_registry, dispatch
ws = Path(sys.argv[1])
ctx = ToolContext(root=ws, sandbox=sandbox_for(SandboxPolicy(mode=sys.argv[2])))
# "ready" only once both sleeps run (a signal before the exec raced the test's look at the process list).
both = "until pgrep -xf 'sleep 9061' && pgrep -xf 'sleep 9062'; do :; done >/dev/null; echo go > ready"
call = PreparedCall(id="c1", name="bash", args={"command": f"setsid sleep 9061 & ({both}) & exec sleep 9062"})
trio.run(functools.partial(dispatch, default_registry(use_ripgrep=False), [call], ctx, read_only=False))
"""


@pytest.mark.parametrize("mode", ["workspace-write"])
def test_sigkill_of_the_parent_leaves_no_command_running(bwrap: str, ws: Path, mode: str) -> None:
    os.mkfifo(ws / "ready")
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(ws), mode], env=env)
    try:
        fifo = os.open(ws / "ready", os.O_RDONLY | os.O_NONBLOCK)
        try:
            assert select.select([fifo], [], [], 60)[0], "the command did not start"
        finally:
            os.close(fifo)
        assert pids_running("9062") and pids_running("9061")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        child.kill()
    for argument in ("9061", "9062"):
        assert_gone(argument, f"sleep {argument} outlived a SIGKILLed reasonix")


async def test_without_a_sandbox_the_same_commands_escape(ws: Path, outside: Path) -> None:
    """The contrast: NoSandbox does not confine (so the caller must ask first), it only filters the environment."""
    box = NoSandbox(SandboxPolicy(mode="workspace-write"))
    assert not box.confines
    result = await call(REGISTRY, ToolContext(root=ws, sandbox=box), "bash", command=f"touch {outside}/y && echo ok")
    assert result.content == "ok\n[exit code 0]"
