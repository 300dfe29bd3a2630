"""What escapes a command, as a user meets it: real ``reasonix`` processes against small loopback servers that fail
(402, 500 forever, an HTML page with 200, nobody listening), a real SIGINT, a real pipe into ``head``, and the task or
objective read from standard input or a file."""

from __future__ import annotations

import http.server
import json
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .run_support import ROOT, clean_env, reasonix, start_reasonix

HTML = "<!doctype html><html><body><h1>Welcome to the hotel network</h1></body></html>"
FAILURES = {
    "402": (402, "application/json", json.dumps({"error": {"message": "Insufficient Balance"}})),
    "500-forever": (500, "application/json", json.dumps({"error": {"message": "internal error"}})),
    "html-200": (200, "text/html", HTML),
}


@contextmanager
def failing_server(status: int, content_type: str, body: str) -> Iterator[str]:
    """A loopback server answering every request with ``status`` and ``body``; yields its base URL."""
    data = body.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def nobody_listening() -> Iterator[str]:
    """The URL of a loopback port that was free a moment ago: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = clean_env(tmp_path)
    environment["DEEPSEEK_API_KEY"] = "sk-test"
    return environment


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()  # ends the upward search for standing memory here
    (ws / "reasonix.toml").write_text("[client]\nmax_attempts = 2\n")  # a failure that does not clear, quickly
    return ws


def _only_run(ws: Path) -> tuple[str, dict[str, object]]:
    runs = list((ws / ".reasonix" / "runs").iterdir())
    assert len(runs) == 1, runs
    record: dict[str, object] = json.loads((runs[0] / "goal.json").read_text())
    return runs[0].name, record


def _assert_no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr, stderr
    assert not re.search(r"^\s*[\w.]+(Error|Exception|Interrupt): ", stderr, re.MULTILINE), stderr


# ------------------------------------------------------------------------------------------------ API failures


@pytest.mark.parametrize("failure", [*FAILURES, "unreachable"])
def test_goal_stopped_by_the_api_says_so_once_and_prints_the_resume_command(
    tmp_path: Path, env: dict[str, str], failure: str
) -> None:
    ws = _workspace(tmp_path)
    server = nobody_listening() if failure == "unreachable" else failing_server(*FAILURES[failure])
    with server as url:
        proc = reasonix("goal", "Grow calc", "--yes", "--workspace", str(ws), "--base-url", url, env=env)
    _assert_no_traceback(proc.stderr)
    assert proc.returncode == 1, proc.stderr
    messages = [line for line in proc.stderr.splitlines() if line.startswith("reasonix goal: ")]
    assert len(messages) == 1, proc.stderr
    # the error in full once: the goal's paused line points at it instead of repeating it
    error = messages[0].removeprefix("reasonix goal: ")
    assert (proc.stdout + proc.stderr).count(error) == 1, proc.stdout + proc.stderr
    assert "» paused: stopped by a DeepSeek API error (the error and how to continue follow)" in proc.stdout
    run_id, record = _only_run(ws)
    assert record["run_id"] == run_id
    assert f"continue it with: reasonix goal --resume {run_id}" in proc.stderr
    if failure == "402":
        assert "insufficient balance" in proc.stderr


def test_goal_json_reports_the_api_error_as_an_object(tmp_path: Path, env: dict[str, str]) -> None:
    ws = _workspace(tmp_path)
    with failing_server(*FAILURES["402"]) as url:
        proc = reasonix("goal", "Grow calc", "--yes", "--json", "--workspace", str(ws), "--base-url", url, env=env)
    _assert_no_traceback(proc.stderr)
    assert proc.returncode == 1
    last = json.loads(proc.stdout.splitlines()[-1])
    run_id, _ = _only_run(ws)
    assert last["kind"] == "error" and last["run_id"] == run_id
    assert last["resume_command"].startswith(f"reasonix goal --resume {run_id}")


def test_run_stopped_by_the_api_exits_1_with_one_message(tmp_path: Path, env: dict[str, str]) -> None:
    ws = _workspace(tmp_path)
    with failing_server(*FAILURES["402"]) as url:
        proc = reasonix("run", "explain calc", "--workspace", str(ws), "--base-url", url, env=env)
    _assert_no_traceback(proc.stderr)
    assert proc.returncode == 1 and "insufficient balance" in proc.stderr


# ------------------------------------------------------------------------------------------------ signals and pipes


def test_ctrl_c_during_replay_exits_130_with_one_line(env: dict[str, str]) -> None:
    proc = start_reasonix("replay", "long-session", env=env)
    try:
        assert proc.stdout is not None
        for _ in range(5):  # the replay is under way: it has shown the start of the session
            assert proc.stdout.readline(), proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip() == "reasonix replay: interrupted"


def test_replay_piped_into_head_exits_quietly(env: dict[str, str]) -> None:
    """``reasonix replay | head -3``: three lines, no traceback, the writer ends as a closed pipe (141)."""
    command = f"{sys.executable} -m orchestrator replay | head -3; echo status=${{PIPESTATUS[0]}} >&2"
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert len(proc.stdout.splitlines()) == 3
    assert proc.stderr == "status=141\n", proc.stderr


# ------------------------------------------------------------------------------------------------ basics


def test_version(env: dict[str, str]) -> None:
    proc = reasonix("--version", env=env)
    assert proc.returncode == 0 and re.fullmatch(r"reasonix \d+\.\d+\.\d+\S*\n", proc.stdout), proc.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_script_names_commands_and_options(env: dict[str, str], shell: str) -> None:
    proc = reasonix("completion", shell, env=env)
    assert proc.returncode == 0, proc.stderr
    for word in ("reasonix", "goal", "replay", "--objective-file", "--task-file", "--budget-usd"):
        assert word in proc.stdout


def _piped(args: list[str], stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args], input=stdin, capture_output=True, env=env, cwd=ROOT, timeout=120
    )


def test_goal_reads_a_long_objective_from_standard_input(tmp_path: Path, env: dict[str, str]) -> None:
    """300 kB: over Linux's 128 kB limit for one argument, so it could not be given as one."""
    ws = _workspace(tmp_path)
    objective = "Grow calc: " + "add one more operation, tested. " * 10_000
    with failing_server(*FAILURES["402"]) as url:
        proc = _piped(["goal", "-", "--yes", "--workspace", str(ws), "--base-url", url], objective.encode(), env)
    assert proc.returncode == 1, proc.stderr
    _, record = _only_run(ws)
    assert record["objective"] == objective.strip()


def test_goal_and_run_read_the_text_from_a_file(tmp_path: Path, env: dict[str, str]) -> None:
    ws = _workspace(tmp_path)
    objective = tmp_path / "objective.md"
    objective.write_text("Grow calc ünïcode\n", encoding="utf-8")
    with failing_server(*FAILURES["402"]) as url:
        goal = reasonix(
            "goal", "--objective-file", str(objective), "--yes", "--workspace", str(ws), "--base-url", url, env=env
        )
        assert goal.returncode == 1 and _only_run(ws)[1]["objective"] == "Grow calc ünïcode"
        run = _piped(["run", "--task-file", "-", "--workspace", str(ws), "--base-url", url], b"explain calc", env)
    assert run.returncode == 1 and b"insufficient balance" in run.stderr


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["run", "-"], b"\xff\xfe bad", "the task in standard input is not UTF-8 text (byte 0"),
        (["run", "x", "--task-file", "missing.md"], b"", "give the task as an argument or with --task-file, not both"),
        (["run", "--task-file", "missing.md"], b"", "cannot read the task from missing.md"),
        (["goal", "-", "--yes"], b"   \n", "the objective is empty"),
        (["plan", "--objective-file", "-", "--yes"], b"", "the objective is empty"),
    ],
)
def test_a_task_that_cannot_be_read_is_a_usage_error(
    tmp_path: Path, env: dict[str, str], args: list[str], stdin: bytes, message: str
) -> None:
    ws = _workspace(tmp_path)
    proc = _piped([*args, "--workspace", str(ws), "--base-url", "http://127.0.0.1:9"], stdin, env)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
