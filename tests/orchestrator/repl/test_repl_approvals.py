"""The approval prompt of ``reasonix code`` through a real pseudo-terminal (issue 23 items 2–5 and 7, issue 22 item
4): an edit shows its diff before the answer, one key answers, Ctrl-C at the prompt cancels the turn at once, a
command that tries to redraw the prompt is shown with its control characters visible, refusal reasons and command
output are shown whole or by their tail."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.repl_pty import executor_script, exit_code, repl_workspace, spawn_code

from ..run_support import ROOT, clean_env, emulator_process, emulator_stats

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit_file", "arguments": {"path": path, "edits": [{"old": old, "new": new}]}}]}


def _bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def test_an_edit_shows_its_diff_before_one_key_approves_it(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [_edit("calc.py", "a - b", "a + b"), {"content": "Fixed add()."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("fix add()")
        child.expect("edit_file wants to change")
        child.expect("\\[n\\] no: ")
        before = ANSI.sub("", child.before)
        assert before.startswith(" calc.py\r\n")
        assert "    -a - b" in before and "    +a + b" in before  # the diff, before the answer
        assert "wants to run" not in before and "sandbox:" not in before  # command words, not an edit's
        child.send("y")  # one key, no Enter
        child.expect("edit_file.*calc\\.py.* · ok")
        child.expect("Fixed add\\(\\).")
        assert "+a + b" not in ANSI.sub("", child.before)  # the diff is not shown a second time
        child.expect("ask ❯")
        exit_code(child)
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_ctrl_c_at_the_prompt_cancels_the_turn_and_the_next_line_is_a_message(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [_edit("calc.py", "a - b", "a + b"), {"content": "calc.py holds add()."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("fix add()")
        child.expect("\\[n\\] no: ")
        child.sendcontrol("c")
        child.expect("interrupted: the turn was cancelled")
        child.expect("ask ❯")
        child.sendline("summarize calc.py")
        child.expect("calc.py holds add\\(\\).")
        child.expect("ask ❯")
        exit_code(child)
        assert emulator_stats(url)["sessions"]["executor"]["requests"] == 2
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing was approved


def test_a_command_cannot_redraw_the_prompt_into_another_one(tmp_path: Path) -> None:
    """Issue 22 item 4: ``touch PWNED # ESC[2K CR  git status ESC[K`` must not show as ``  git status``."""
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [_bash("touch PWNED # \x1b[2K\r  git status\x1b[K"), {"content": "Declined."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("status please")
        child.expect("bash wants to run:")
        child.expect("\\[n\\] no: ")
        assert "touch PWNED # ␛[2K␍  git status␛[K" in child.before
        assert "\x1b[2K\r" not in child.before
        child.send("n")
        child.expect("a note for the model")
        child.sendline("")
        child.expect("Declined.")
        child.expect("ask ❯")
        exit_code(child)
    assert not (ws / "PWNED").exists()


@pytest.mark.bwrap
def test_a_command_shows_its_output_tail_and_output_shows_all_of_it(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    command = "for i in $(seq 1 30); do echo line$i; done"
    replies = [_bash(command), {"content": "Printed."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        child.sendline("count")
        child.expect("· ok")
        child.expect("26 earlier lines \\(/output shows all\\)")
        child.expect("│ line27")
        child.expect("│ line30")
        child.expect("Printed.")
        child.expect("auto ❯")
        child.sendline("/output")
        child.expect("line1\r\n")
        child.expect("line30")
        child.expect("auto ❯")
        exit_code(child)


def test_a_refusal_reason_is_shown_whole(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "x\n"}}]},
        {"content": "Refused, as expected."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "plan")
        child.expect("plan ❯")
        child.sendline("write notes")
        child.expect("Refused, as expected.")
        flat = " ".join(ANSI.sub("", child.before).split())
        assert "describe the change in your plan instead" in flat  # the end of the reason, not cut
        child.expect("plan ❯")
        exit_code(child)


def test_a_markdown_reply_is_rendered_on_a_terminal(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    reply = "## Summary\n\nadd() is **wrong**:\n\n```python\nreturn a - b\n```\n\nFix it."
    with emulator_process(executor_script([{"content": reply}]), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("explain")
        child.expect("Fix it.")
        child.expect("ask ❯")
        # what the screen ends up showing: the last rendering after the raw text it replaced
        shown = ANSI.sub("", child.before.rpartition("\x1b[J")[0] + child.before.rpartition("\x1b[J")[2])
        assert "**wrong**" not in shown.rpartition("Summary")[2] and "```" not in shown.rpartition("return a - b")[2]
        exit_code(child)


def test_bare_reasonix_takes_the_flags_of_code(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    with emulator_process(executor_script([{"content": "Hi."}]), tmp_path, env) as url:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "orchestrator", "--base-url", url, "--workspace", str(ws), "--mode", "plan"],
            env={**env, "TERM": "xterm"},
            cwd=str(ROOT),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 120),
        )
        child.expect("plan ❯")
        child.sendline("hi")
        child.expect("Hi.")
        child.expect("plan ❯")
        exit_code(child)
