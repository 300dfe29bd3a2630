"""A subagent in ``reasonix code`` (a real pseudo-terminal against ``reasonix emulate``): what it spends counts in the
conversation's cost and requests, and ``reasonix runs show`` lists its end and its cost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.repl_pty import exit_code, spawn_code
from tests.support.subagents import sub_session, subagent_workspace, task_call

from ..run_support import clean_env, emulator_process, emulator_stats, reasonix


def test_a_subagents_cost_counts_in_the_conversation_and_in_runs_show(tmp_path: Path) -> None:
    ws = subagent_workspace(tmp_path)
    env = clean_env(tmp_path / "home")
    parent = [{"tool_calls": [task_call("a")]}, {"content": "PARENT-DONE."}]
    script = {"sessions": [sub_session("a"), {"key": "executor", "replies": parent}]}
    with emulator_process(script, tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--sandbox", "full-access")
        child.expect("ask ❯")
        child.sendline("review a.py")
        child.expect("PARENT-DONE")
        child.expect("ask ❯")
        child.sendline("/cost")
        # The parent's 2 requests and the subagent's 2: the total names all four, and what the subagent spent.
        child.expect(r"subagents \$(\d+\.\d{4}) · 2 requests \(their own sessions, through the task tool\)")
        child.expect(r"total \$(\d+\.\d{4})")
        child.expect("ask ❯")
        exit_code(child)
        stats = emulator_stats(url)["sessions"]
    assert stats["executor"]["requests"] == 2 and stats["sub-a"]["requests"] == 2

    shown = reasonix("runs", "show", "--workspace", str(ws), "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    [finished] = [e for e in data["events"] if e["kind"] == "subagent_finished"]
    assert finished["session"] == "agent:reviewer#1" and finished["requests"] == 2
    sessions = data["run"]["sessions"]
    # The conversation's turn log is not a session; the subagent's journal is, under its profile's name.
    assert set(sessions) == {"executor", "agent:reviewer"}, sessions
    assert sessions["agent:reviewer"]["requests"] == 2
    assert data["run"]["requests"] == 4
    total = sum(s["cost_usd"] for s in sessions.values())
    assert data["run"]["cost_usd"] == pytest.approx(total, abs=2e-6)  # each figure is rounded to 6 places
    assert sessions["agent:reviewer"]["cost_usd"] > 0
    text = reasonix("runs", "show", "--workspace", str(ws), env=env).stdout
    assert "⑂ subagent agent:reviewer#1 (read-only) done · 2 requests" in text, text
    assert re.search(r"agent:reviewer 2 requests", text), text
