"""examples/api_task.py runs from plain Python (the sync wrapper) against a ``reasonix emulate`` subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..run_support import ROOT, clean_env, emulator_process


def test_the_example_script_runs_a_task_through_the_sync_wrapper(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    env = clean_env(tmp_path)
    replies = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"content": "add() subtracts."},
    ]
    with emulator_process({"sessions": [{"key": "executor", "replies": replies}]}, tmp_path, env) as url:
        proc = subprocess.run(
            [sys.executable, "examples/api_task.py", "--workspace", str(ws), "--base-url", url, "what does add do?"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "tool  read_file {'path': 'calc.py'}"
    assert "answer add() subtracts." in lines
    assert lines[-1].startswith("cost $") and "session " in lines[-1]
