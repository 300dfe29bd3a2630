"""``reasonix code`` in a real pseudo-terminal (pexpect): a workspace with a bug to fix, a one-session script for the
emulator, starting the REPL against it, and leaving it with ``/exit``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pexpect

from tests.orchestrator.run_support import ROOT


def repl_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def executor_script(replies: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sessions": [{"key": "executor", "replies": replies}]}


def spawn_code(ws: Path, url: str, env: dict[str, str], *extra: str) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "orchestrator", "code", "--workspace", str(ws), "--base-url", url, *extra],
        env={**env, "TERM": "xterm", "COLUMNS": "120", "LINES": "40"},
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=180,  # a hang guard, not a measure: a loaded 2-core machine is many times slower
        dimensions=(40, 120),
    )
    return child


def exit_code(child: pexpect.spawn) -> None:
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
