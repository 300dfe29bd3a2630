"""Running ``reasonix run`` and ``reasonix emulate`` as real processes, for the run tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]


def clean_env(home: Path) -> dict[str, str]:
    """The environment of a user with no key, no base URL and an empty config directory under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK_")}
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["PYTHONPATH"] = str(ROOT)
    return env


def reasonix(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )


def start_reasonix(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


@contextmanager
def emulator_process(script: dict[str, Any], tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """``reasonix emulate --script FILE`` in a subprocess; yields its URL (read from its first line)."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    proc = start_reasonix("emulate", "--port", "0", "--script", str(path), env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("listening on http://"), (first, proc.stderr.read() if proc.stderr else "")
        yield first.removeprefix("listening on ")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def emulator_stats(url: str) -> dict[str, Any]:
    stats: dict[str, Any] = httpx.get(url + "/emulator/stats", timeout=30).json()
    return stats


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
