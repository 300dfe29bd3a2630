"""Checkpoints of conversation turns, ``/undo``, ``/rewind`` (Esc Esc), ``/fork`` and ``--resume``, driven through a
real pseudo-terminal (pexpect) against a ``reasonix emulate`` subprocess; the cache figures are the emulator's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.repl_pty import executor_script, exit_code, repl_workspace, spawn_code

from ..run_support import clean_env, emulator_process, emulator_stats, reasonix

ORIGINAL = "def add(a, b):\n    return a - b\n"


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit_file", "arguments": {"path": path, "edits": [{"old": old, "new": new}]}}]}


def _writing_turns(count: int) -> list[dict[str, Any]]:
    """``count`` turns, turn k writing ``f{k}.txt`` and answering ``Wrote f{k}.``."""
    replies: list[dict[str, Any]] = []
    for k in range(1, count + 1):
        replies += [_write(f"f{k}.txt", f"file {k}\n"), {"content": f"Wrote f{k}."}]
    return replies


def _journal(ws: Path) -> Path:
    run_id = json.loads((ws / ".reasonix" / "repl.json").read_text())["run_id"]
    return ws / ".reasonix" / "runs" / run_id / "executor.jsonl"


def _turn(child: pexpect.spawn, text: str, answer: str, prompt: str = "auto ❯") -> None:
    child.sendline(text)
    child.expect(answer)
    child.expect(prompt)


def _executor(url: str) -> dict[str, Any]:
    stats: dict[str, Any] = emulator_stats(url)["sessions"]["executor"]
    return stats


def test_an_edit_in_a_turn_is_taken_back_byte_for_byte_by_undo(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    (ws / "calc.py").write_bytes(b"def add(a, b):\r\n    return a - b\r\n# caf\xc3\xa9, no final newline")
    original = (ws / "calc.py").read_bytes()
    replies = [
        {"content": "calc.py defines add()."},  # a turn that writes nothing
        _edit("calc.py", "a - b", "a + b"),
        _write("notes.txt", "new\n"),
        {"content": "Fixed add()."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        _turn(child, "what is in calc.py?", "defines add")
        _turn(child, "fix add()", "Fixed add")
        assert (ws / "calc.py").read_bytes() != original and (ws / "notes.txt").exists()
        child.sendline("/undo")
        child.expect("taking back turn-2")
        child.expect("undone")
        child.expect("auto ❯")
        exit_code(child)
    assert (ws / "calc.py").read_bytes() == original
    assert not (ws / "notes.txt").exists()
    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert listed.returncode == 0, listed.stderr
    assert "turn-2" in listed.stdout and "fix add()" in listed.stdout
    assert "turn-1" not in listed.stdout  # the turn that wrote nothing took no checkpoint


@pytest.mark.bwrap
def test_undo_of_a_turn_keeps_the_always_rule_the_user_saved_in_it(tmp_path: Path) -> None:
    """Issue 48 item 16: /undo of a turn deleted reasonix.local.toml when the user's own "always" answer created it
    in that turn. Permission files are the user's decisions, never a turn's change: the edit is taken back, the rule
    stays."""
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        _edit("calc.py", "a - b", "a + b"),
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo checked"}}]},
        {"content": "Fixed add()."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("fix add()")
        child.expect("edit_file wants to change")
        child.expect("\\[n\\] no: ")
        child.send("y")
        child.expect("wants to run")
        child.expect("\\[n\\] no: ")
        child.send("a")  # always: saved to reasonix.local.toml, in this turn
        child.expect("Fixed add")
        child.expect("ask ❯")
        saved = (ws / "reasonix.local.toml").read_text()
        assert "echo" in saved
        child.sendline("/undo")
        child.expect("undone")
        child.expect("ask ❯")
        exit_code(child)
    assert (ws / "calc.py").read_text() == ORIGINAL  # the turn's change is taken back
    assert (ws / "reasonix.local.toml").read_text() == saved  # the user's decision is not


def test_reasonix_run_takes_a_checkpoint_that_undo_takes_back(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [_edit("calc.py", "a - b", "a + b"), {"content": "Fixed."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        done = reasonix("run", "fix add", "--workspace", str(ws), "--base-url", url, "--permissions", "auto", env=env)
    assert done.returncode == 0, done.stderr
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    undone = reasonix("undo", "--workspace", str(ws), env=env)
    assert undone.returncode == 0, undone.stderr
    assert (ws / "calc.py").read_text() == ORIGINAL


def test_esc_esc_rewinds_both_to_before_turn_2_of_4_and_the_next_request_hits_up_to_there(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [*_writing_turns(4), {"content": "Fresh turn 2."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        _turn(child, "write f1", "Wrote f1")
        before_turn_2 = _journal(ws).read_bytes()
        for k in (2, 3, 4):
            _turn(child, f"write f{k}", f"Wrote f{k}")
        child.send("\x1b\x1b")  # Esc Esc on an empty line
        child.expect("rewind to before which turn")
        assert "write f3" in child.before and "A f3.txt" in child.before  # what was asked, what changed
        child.sendline("2")
        child.expect("\\[b\\]oth")
        child.send("b")
        child.expect("conversation rewound to before turn 2")
        child.expect("auto ❯")
        assert [p.name for p in sorted(ws.glob("f*.txt"))] == ["f1.txt"]
        assert _journal(ws).read_bytes() == before_turn_2  # the exact bytes of that point
        sent = _executor(url)
        _turn(child, "write something else", "Fresh turn 2")
        after = _executor(url)
        exit_code(child)
    prompt = after["prompt_tokens"] - sent["prompt_tokens"]
    hits = after["hit_tokens"] - sent["hit_tokens"]
    # Everything up to the chosen point is re-sent byte for byte: all but the new message and the 128-token unit.
    assert hits >= prompt - 256 > 0
    # and the request is the short one: turns 2 to 4 are not in it any more
    assert prompt < sent["prompt_tokens"] / sent["requests"] * 1.5


def test_conversation_only_keeps_the_files_and_code_only_keeps_the_conversation(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [*_writing_turns(2), _write("g.txt", "g\n"), {"content": "Wrote g."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        _turn(child, "write f1", "Wrote f1")
        before_turn_2 = _journal(ws).read_bytes()
        _turn(child, "write f2", "Wrote f2")
        child.sendline("/rewind 2 conversation")
        child.expect("conversation rewound to before turn 2")
        child.expect("auto ❯")
        assert _journal(ws).read_bytes() == before_turn_2
        assert (ws / "f2.txt").read_text() == "file 2\n"  # the files are left as they were
        _turn(child, "write g", "Wrote g")
        journal = _journal(ws).read_bytes()
        child.sendline("/rewind 2 code")
        child.expect("code restored")
        child.expect("auto ❯")
        assert not (ws / "g.txt").exists()  # the new turn 2 is taken back
        assert (ws / "f2.txt").exists()  # what the conversation no longer holds is not this rewind's
        assert _journal(ws).read_bytes() == journal  # and the conversation is left as it was
        exit_code(child)


def test_a_hand_edit_after_the_agent_is_not_overwritten_silently(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [_edit("calc.py", "a - b", "a + b"), {"content": "Fixed add()."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        _turn(child, "fix add()", "Fixed add")
        (ws / "calc.py").write_text("def add(a, b):\n    return b + a  # mine\n")  # by hand, after the agent
        child.sendline("/rewind 1 code")
        child.expect("changed after the agent")
        child.expect("\\[k\\]eep your versions")
        child.sendline("k")
        child.expect("kept your versions of calc.py")
        child.expect("auto ❯")
        exit_code(child)
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return b + a  # mine\n"


def test_fork_from_turn_2_hits_the_shared_prefix_and_resume_lists_both(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [*_writing_turns(3), {"content": "Forked answer."}, {"content": "Back in the first."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        for k in (1, 2, 3):
            _turn(child, f"write f{k}", f"Wrote f{k}")
        first = _journal(ws)
        child.sendline("/fork 2")
        child.expect("into a new conversation")
        child.expect("auto ❯")
        forked = _journal(ws)
        assert forked != first and first.exists()
        sent = _executor(url)
        _turn(child, "a question in the fork", "Forked answer")
        after = _executor(url)
        exit_code(child)

        prompt = after["prompt_tokens"] - sent["prompt_tokens"]
        hits = after["hit_tokens"] - sent["hit_tokens"]
        assert hits >= prompt - 256 > 0  # the shared prefix (turn 1) is a hit
        assert first.read_bytes().startswith(forked.read_bytes()[: len(first.read_bytes()) // 4])

        child = spawn_code(ws, url, env, "--mode", "auto", "--resume")
        child.expect("reopen which")
        listing = child.before
        assert first.parent.name in listing and forked.parent.name in listing
        assert listing.index(forked.parent.name) < listing.index(first.parent.name)  # the latest first
        child.sendline("2")  # the first conversation
        child.expect("continuing")
        child.expect("❯ write f3")
        child.expect("auto ❯")
        _turn(child, "still there?", "Back in the first")
        exit_code(child)


@pytest.mark.bwrap
def test_esc_cancels_a_streamed_turn_and_a_line_typed_meanwhile_runs_after_it(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        {"content": "Hello."},
        {
            "content": "Thinking about it for a long while now, one moment",
            "faults": [{"kind": "stall", "seconds": 600, "after_chunks": 2, "then": "continue"}],
        },
        {"content": "Here after Esc."},
        {
            "tool_calls": [
                {
                    "name": "bash",
                    "arguments": {"command": "touch started; while [ ! -e go ]; do sleep 0.05; done; echo went"},
                }
            ]
        },
        {"content": "The wait is over."},
        {"content": "Queued one answered."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env, "--mode", "auto")
        child.expect("auto ❯")
        _turn(child, "hello", "Hello.")
        child.sendline("a long question")
        child.expect("Thinking")
        child.send("\x1b")
        child.expect("interrupted: the turn was cancelled")
        child.expect("auto ❯")
        _turn(child, "are you there?", "Here after Esc.")
        child.sendline("wait for go")
        child.expect("wait for go")
        for _ in range(1200):  # the command is running once it made `started` (a hang guard, not a measure)
            if (ws / "started").exists():
                break
            child.expect([pexpect.TIMEOUT, "\\$^"], timeout=0.1)  # reads the terminal meanwhile
        assert (ws / "started").exists()
        child.send("and then this\r")  # typed while the turn runs
        child.expect("queued \\(runs after this turn\\): and then this")
        (ws / "go").touch()
        child.expect("The wait is over.")
        child.expect("Queued one answered.")
        child.expect("auto ❯")
        exit_code(child)
