"""bash with real processes: exit codes, cwd, no stdin, credentials removed, head+tail cap, timeout and cancellation
kill the whole process group (children included)."""

from __future__ import annotations

import os
import re
import select
from pathlib import Path

import pytest
import trio
import trio.testing

from sessions.sandbox import NoSandbox, SandboxPolicy
from sessions.tools import ToolContext, ToolLimits, ToolRegistry, ToolResult
from tests.support.tools import call


def pidfd(pid: int) -> int | None:
    """A handle that becomes readable when ``pid`` exits (None: it is already gone)."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


async def assert_exits(fd: int | None) -> None:
    if fd is None:
        return
    try:
        readable, _, _ = await trio.to_thread.run_sync(select.select, [fd], [], [], 10)
        assert readable, "the process is still running 10 s after the call returned"
    finally:
        os.close(fd)


async def read_fifo(path: Path) -> list[int]:
    """Block (in a thread) until the command writes its pids into the FIFO: no polling, no sleeping."""
    text = await trio.to_thread.run_sync(path.read_text)
    return [int(word) for word in text.split()]


async def test_output_and_exit_code(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    (ws / "here.txt").write_text("")
    result = await call(registry, ctx, "bash", command="ls; echo to-stderr >&2; exit 3")
    assert result.content == "here.txt\nto-stderr\n[exit code 3]"
    assert result.is_error and result.data == {"exit_code": 3, "timed_out": False, "output_bytes": 19}
    ok = await call(registry, ctx, "bash", command="true")
    assert ok.content == "[exit code 0]" and not ok.is_error


async def test_runs_in_the_workspace_without_stdin(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    with trio.fail_after(30):  # `cat` would wait forever on a terminal or an open pipe
        result = await call(registry, ctx, "bash", command="cat; pwd -P; test -t 0 || echo no-tty")
    real = await trio.to_thread.run_sync(ws.resolve)
    assert result.content == f"{real}\nno-tty\n[exit code 0]"


async def test_the_environment_is_an_allowlist(
    ws: Path, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "DEEPSEEK_API_KEY": "sk-deepseek-1",
        "OPENAI_API_KEY": "sk-openai-2",
        "GITHUB_TOKEN": "ghp-3",
        "AWS_SECRET_ACCESS_KEY": "aws-4",
        "MY_PAT": "pat-5",
        "DB_PASSWORD": "pw-6",
        "DS_KEY": "sk-renamed-7",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("VISIBLE_SETTING", "1")
    monkeypatch.setenv("UNNAMED_SETTING", "2")
    policy = SandboxPolicy(env=("VISIBLE_SETTING", "DS_KEY"), secret_env=("DS_KEY",))
    ctx = ToolContext(root=ws, env={"OVERRIDE_OK": "yes"}, sandbox=NoSandbox(policy))
    result = await call(registry, ctx, "bash", command="env")
    assert "VISIBLE_SETTING=1" in result.content and "OVERRIDE_OK=yes" in result.content
    assert "UNNAMED_SETTING" not in result.content
    for name, value in secrets.items():
        assert name not in result.content and value not in result.content
    assert "PATH=" in result.content and "HOME=" in result.content


async def test_output_cap_keeps_head_and_tail(ws: Path, registry: ToolRegistry) -> None:
    limits = ToolLimits(bash_head_bytes=1_000, bash_tail_bytes=1_000, bash_full_text_bytes=1_000_000)
    result = await call(registry, ToolContext(root=ws, limits=limits), "bash", command="seq 1 100000")
    full = "".join(f"{n}\n" for n in range(1, 100001))
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.endswith("99999\n100000\n[exit code 0]")
    assert len(result.content) < 2_200
    marker = re.search(r"\n\[… (\d+) bytes \((\d+) lines\) cut …\]\n", result.content)
    assert marker is not None
    head, tail = result.content[: marker.start() + 1], result.content[marker.end() : -len("[exit code 0]")]
    assert full.startswith(head) and full.endswith(tail)  # cut on line boundaries, nothing altered
    assert len(head) + int(marker[1]) + len(tail) == len(full)
    assert head.count("\n") + int(marker[2]) + tail.count("\n") == 100000
    assert result.full_text == full + "[exit code 0]"
    assert result.data is not None and result.data["output_bytes"] == len(full)
    small = ToolLimits(bash_head_bytes=100, bash_tail_bytes=100, bash_full_text_bytes=10_000)
    unkept = await call(registry, ToolContext(root=ws, limits=small), "bash", command="seq 1 100000")
    assert unkept.full_text is None and len(unkept.content) < 300


async def test_timeout_kills_the_process_group(
    ws: Path, ctx: ToolContext, registry: ToolRegistry, mock_clock: trio.testing.MockClock
) -> None:
    os.mkfifo(ws / "ready")
    results: list[ToolResult] = []

    async def run() -> None:
        command = "sleep 30 & echo started; echo $$ $! > ready; wait"
        results.append(await call(registry, ctx, "bash", command=command, timeout_s=5))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        shell, child = await read_fifo(ws / "ready")
        fds = [pidfd(shell), pidfd(child)]
        # The tool sets its deadline once trio.lowlevel.open_process returns, which may be after the FIFO was
        # written: advance the fake clock a second at a time until the call gives up. The command itself would
        # run for 30 real seconds, so an answer here can only come from the timeout.
        for _ in range(100_000):
            mock_clock.jump(1)
            await trio.testing.wait_all_tasks_blocked()
            if results:
                break
    [result] = results
    assert result.content == "started\n[timed out after 5s; the process group was killed]"
    assert result.is_error and result.data is not None and result.data["timed_out"] is True
    for fd in fds:
        await assert_exits(fd)


async def test_cancellation_kills_the_process_group(ws: Path, ctx: ToolContext, registry: ToolRegistry) -> None:
    os.mkfifo(ws / "ready")
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: call(registry, ctx, "bash", command="sleep 300 & echo $$ $! > ready; wait"))
            shell, child = await read_fifo(ws / "ready")
            fds = [pidfd(shell), pidfd(child)]
            scope.cancel()
    assert scope.cancelled_caught
    for fd in fds:
        await assert_exits(fd)


async def test_background_holding_the_output_is_killed_after_a_grace(ws: Path, registry: ToolRegistry) -> None:
    # Real clock (a fake one would jump past any deadline while the real process runs): a short grace instead.
    ctx = ToolContext(root=ws, limits=ToolLimits(bash_exit_grace_s=0.1))
    with trio.fail_after(60):
        result = await call(registry, ctx, "bash", command="sleep 300 & echo $!")
    child = int(result.content.split("\n")[0])
    assert result.content.endswith("\n[exit code 0; killed 1 process it left running]")
    await assert_exits(pidfd(child))


async def test_background_with_redirected_output_is_killed_and_counted(
    ctx: ToolContext, registry: ToolRegistry
) -> None:
    result = await call(registry, ctx, "bash", command="sleep 300 >/dev/null 2>&1 & echo $!")
    child = int(result.content.split("\n")[0])
    assert result.content == f"{child}\n[exit code 0; killed 1 process it left running]"
    await assert_exits(pidfd(child))


async def test_a_detached_setsid_process_is_found_and_killed(ctx: ToolContext, registry: ToolRegistry) -> None:
    # setsid leaves the process group; the subreaper and the marker variable still find it.
    command = (
        "setsid sh -c 'echo $$ > pid; exec sleep 905' >/dev/null 2>&1 < /dev/null &"
        " while [ ! -s pid ]; do sleep 0.01; done; cat pid"
    )
    result = await call(registry, ctx, "bash", command=command)
    child = int(result.content.split("\n")[0])
    assert result.content == f"{child}\n[exit code 0; killed 1 process it left running]"
    await assert_exits(pidfd(child))
