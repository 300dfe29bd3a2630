"""``reasonix emulate`` as a user runs it: the first line names the URL, the server answers, Ctrl-C stops it."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx


def test_reasonix_emulate_prints_its_url_first_and_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"sessions": [{"key": "any", "replies": [{"content": "scripted hello"}]}]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "emulate", "--port", "0", "--script", str(script), "--cache-unit", "64"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("listening on http://127.0.0.1:"), first
        url = first.removeprefix("listening on ")
        body = {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "hi"}]}
        r = httpx.post(url + "/chat/completions", json=body, headers={"Authorization": "Bearer k"}, timeout=30)
        assert r.json()["choices"][0]["message"]["content"] == "scripted hello"
        assert httpx.get(url + "/emulator/stats", timeout=30).json()["cache_unit"] == 64
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) in (0, 130)


def test_reasonix_emulate_refuses_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('{"sessions": [{"replies": []}]}')
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "emulate", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "not a valid emulator script" in proc.stderr and "key" in proc.stderr


def test_emulate_help_names_the_key_it_accepts_and_the_endpoints_it_serves() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "emulate", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    out = proc.stdout
    assert "any non-empty 'Authorization: Bearer KEY' is accepted" in out and "--reject-key KEY" in out
    for endpoint in ("POST /chat/completions", "GET  /models", "GET  /emulator/stats", "POST /emulator/reset"):
        assert endpoint in out


def test_emulate_on_a_busy_port_says_so_in_one_line_without_a_traceback() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "orchestrator", "emulate", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"reasonix emulate: cannot listen on 127.0.0.1:{port}: Address already in use; "
        "pick another --port, or --port 0 for a free one"
    ]
