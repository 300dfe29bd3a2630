"""Background jobs through the real CLI (``reasonix run`` in a subprocess) against the emulator: a ``python -m
http.server`` job on loopback, queried by a later ``bash`` call, its output read, killed and its end told; a job that
ends on its own announced in front of the next tool result; every request only appending to the one before; and
nothing left running after the session, whether it ends, is interrupted or is killed."""

from __future__ import annotations

import itertools
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from scenarios.emulator import open_emulator
from tests.support.conversation import conversation_workspace, executor_script, record_bodies, tool_names

from .run_support import ROOT, clean_env

JOBS_ON = "[jobs]\nenabled = true\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(token: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``token``, other than this test's own."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def _until(condition: Callable[[], bool]) -> None:
    """Poll the process table (no event tells this test when another process starts or dies); bounded by the
    caller's ``fail_after``."""
    for _ in itertools.count():
        if condition():
            return
        await trio.sleep(0.05)


def _fetch(port: int) -> str:
    """A later command: python's urllib against the job's server, retried until it answers."""
    code = (
        "import time, urllib.request\n"
        "for _ in range(100):\n"
        "    try:\n"
        f"        r = urllib.request.urlopen('http://127.0.0.1:{port}/hello.txt', timeout=2)\n"
        "        print(r.status, r.read().decode()); break\n"
        "    except OSError:\n"
        "        time.sleep(0.1)\n"
    )
    return f"python3 -c {shlex.quote(code)}"


def _messages(body: bytes) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(body)["messages"]
    return messages


async def _run(ws: Path, tmp_path: Path, replies: list[dict[str, Any]]) -> tuple[list[bytes], str]:
    bodies: list[bytes] = []
    async with open_emulator(script=executor_script(replies)) as emu:
        record_bodies(emu, bodies)
        argv = [sys.executable, "-m", "orchestrator", "run", "Serve and check", "--workspace", str(ws)]
        argv += ["--base-url", emu.base_url, "--json"]
        with trio.fail_after(120):
            proc = await trio.run_process(
                argv, env=clean_env(tmp_path), cwd=ROOT, capture_stdout=True, capture_stderr=True, check=False
            )
    assert proc.returncode == 0, proc.stderr.decode()
    return bodies, proc.stdout.decode()


@pytest.mark.bwrap
async def test_a_server_job_is_queried_by_a_later_command_killed_announced_and_gone(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path, JOBS_ON)
    (ws / "hello.txt").write_text("hello from the job")
    port, token = _free_port(), f"tok{uuid.uuid4().hex}"
    server = f"python3 -m http.server {port} --bind 127.0.0.1"
    replies = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": server, "background": True}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": _fetch(port)}}]},
        {"tool_calls": [{"name": "job_output", "arguments": {"job": 1}}]},
        {"tool_calls": [{"name": "job_kill", "arguments": {"job": 1}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo built; exit 3", "background": True}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 1; echo slept"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"sleep 600 # {token}", "background": True}}]},
        {"content": "The server answered; it is stopped."},
    ]
    bodies, stdout = await _run(ws, tmp_path, replies)

    assert len(bodies) == 8
    assert {"job_kill", "job_output", "bash"} <= set(tool_names(bodies[0]))
    bash = next(t for t in json.loads(bodies[0])["tools"] if t["function"]["name"] == "bash")
    assert "background" in bash["function"]["parameters"]["properties"]
    for earlier, later in itertools.pairwise(bodies):
        assert later.startswith(earlier[:-2])  # job starts, outputs and end notes only ever append

    results = [m["content"] for m in _messages(bodies[-1]) if m["role"] == "tool"]
    started, fetched, output, killed, started2, slept, started3 = results
    assert started.startswith("started job 1 in the background. Later commands share its loopback network.")
    assert fetched.startswith("200 hello from the job")  # a later command reached the job's loopback server
    assert output.startswith(f"job 1 (`{server}`): running\n") and "GET /hello.txt" in output
    assert killed.startswith(f"job 1 (`{server}`): killed by job_kill")
    assert started2.startswith("started job 2")
    # The job that ended on its own is announced in front of the next tool result, in the tail.
    assert slept.startswith("<jobs>\njob 2 (`echo built; exit 3`) ended with exit code 3. Its last output:\nbuilt\n")
    assert slept.endswith("</jobs>\n\nslept\n[exit code 0]")
    assert started3.startswith("started job 3")
    assert json.loads(stdout.splitlines()[-1])["status"] == "done"
    # The session is over: the server and the job left running are gone, nothing of theirs is running.
    assert _alive(f"http.server {port}") == [] and _alive(token) == []


async def _start_reasonix(ws: Path, tmp_path: Path, url: str) -> trio.Process:
    argv = [sys.executable, "-m", "orchestrator", "run", "Wait", "--workspace", str(ws), "--base-url", url, "--json"]
    with (tmp_path / "out.txt").open("wb") as out:
        return await trio.lowlevel.open_process(
            argv,
            env=clean_env(tmp_path),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            preexec_fn=_unblock_sigint,
        )


def _unblock_sigint() -> None:
    """A thread of the test runner may block SIGINT, and a child inherits the mask: the user's Ctrl-C is not."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


async def _interrupted(tmp_path: Path, sig: signal.Signals) -> list[int]:
    ws = conversation_workspace(tmp_path, JOBS_ON)
    token = f"tok{uuid.uuid4().hex}"
    # Each command first says it runs (a file in the workspace), and the signal waits for both: a process whose
    # command line holds the token may still be bubblewrap setting the sandbox up, before its --die-with-parent is
    # armed and before its child joins the process group that is killed, and a signal sent then tests that window
    # of bubblewrap's rather than what happens to running commands (on a loaded machine the window is long).
    job, command = f"touch job.up; exec sleep 600 # {token}", f"touch fg.up; exec sleep 300 # fg{token}"
    replies = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": job, "background": True}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
        {"content": "never reached"},
    ]
    async with open_emulator(script=executor_script(replies)) as emu:
        proc = await _start_reasonix(ws, tmp_path, emu.base_url)
        try:
            with trio.fail_after(60):
                await _until(lambda: (ws / "job.up").exists() and (ws / "fg.up").exists())
                assert _alive(f"fg{token}")  # the job runs; the turn waits in a command
                proc.send_signal(sig)
                await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        with trio.fail_after(120):  # SIGKILL: the kernel delivers bubblewrap's death signal; let it land
            await _until(lambda: not _alive(token))
    return _alive(token)


@pytest.mark.bwrap
async def test_ctrl_c_during_a_turn_leaves_no_job_running(tmp_path: Path) -> None:
    assert await _interrupted(tmp_path, signal.SIGINT) == []


@pytest.mark.bwrap
async def test_sigkill_of_reasonix_takes_its_jobs_down(tmp_path: Path) -> None:
    assert await _interrupted(tmp_path, signal.SIGKILL) == []


async def test_without_jobs_configured_bash_has_no_background_and_there_are_no_job_tools(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    bodies, _ = await _run(ws, tmp_path, [{"content": "Nothing to do."}])
    names = tool_names(bodies[0])
    assert "job_output" not in names and "job_kill" not in names
    bash = next(t for t in json.loads(bodies[0])["tools"] if t["function"]["name"] == "bash")
    assert "background" not in bash["function"]["parameters"]["properties"]
