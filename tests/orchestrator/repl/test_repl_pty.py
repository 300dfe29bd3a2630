"""``reasonix code`` driven through a real pseudo-terminal (pexpect) against a ``reasonix emulate`` subprocess."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pexpect
import pytest

from sessions.journal.jsonl import read_journal
from tests.support.repl_pty import executor_script, exit_code, repl_workspace, spawn_code

from ..run_support import clean_env, emulator_process, emulator_stats, reasonix

SHIFT_TAB = "\x1b[Z"


def test_a_question_is_answered_and_the_session_ends_with_ctrl_d(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"content": "add() subtracts: it returns a - b."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("what does @calc.py do?")
        child.expect("attached: calc.py")
        child.expect("read_file")
        child.expect("add\\(\\) subtracts")
        child.expect("cache")
        child.expect("ask ❯")
        child.sendline("/cost")
        child.expect("2 requests")
        child.expect("ask ❯")  # the prompt is back (raw mode): Ctrl-D is a key, not lost in the line discipline
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert emulator_stats(url)["sessions"]["executor"]["requests"] == 2
    history = (ws / ".reasonix" / "repl_history").read_text()
    assert "what does @calc.py do?" in history


def test_the_cost_footer_is_printed_once_per_turn_not_after_every_request(tmp_path: Path) -> None:
    """Issue 48 item 19: a cost line after every request filled the scrollback; once per turn (the status line has
    the running figures)."""
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
    replies = [read, read, {"content": "Read it twice."}, {"content": "Hello again."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("read calc.py twice")
        child.expect("Read it twice.")
        first = child.before
        child.expect("ask ❯")
        first += child.before
        child.sendline("hi")
        child.expect("Hello again.")
        second = child.before
        child.expect("ask ❯")
        second += child.before
        exit_code(child)
        assert emulator_stats(url)["sessions"]["executor"]["requests"] == 4
    ansi = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
    first, second = ansi.sub("", first), ansi.sub("", second)
    footer = re.compile(r"turn \$[0-9.]+ · session \$[0-9.]+ · cache ")
    assert len(footer.findall(first)) == 1, first  # three requests, one footer
    assert len(footer.findall(second)) == 1, second


def test_plan_mode_refuses_a_write_and_the_conversation_still_hits_the_cache(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        {"content": "Hello."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "x\n"}}]},
        {"content": "The write was refused in plan mode. Plan: create notes.txt."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("hello")
        child.expect("Hello.")
        child.expect("ask ❯")
        child.send(SHIFT_TAB)
        child.expect("auto ❯")
        child.send(SHIFT_TAB)
        child.expect("plan ❯")
        child.sendline("create notes.txt")
        child.expect("The write was refused")
        child.expect("plan ❯")
        exit_code(child)
        stats = emulator_stats(url)["sessions"]["executor"]
    assert not (ws / "notes.txt").exists()
    assert stats["requests"] == 3
    # The emulator's ideal: every token shared with anything sent before; a mode switch that rewrote a byte would
    # leave the hits far below it.
    assert stats["hit_tokens"] >= 0.9 * stats["ideal_hit_tokens"] > 0
    run_id = json.loads((ws / ".reasonix" / "repl.json").read_text())["run_id"]
    journal = read_journal(ws / ".reasonix" / "runs" / run_id / "executor.jsonl")
    texts = [m.model_dump_json() for m, _ in journal.messages]
    assert any("refused: write_file can change the workspace" in t for t in texts)
    # `reasonix runs` names the conversation by what the user said, not by the mode block in front of it.
    from orchestrator.runs import list_runs

    assert [r.objective for r in list_runs(ws)] == ["hello"]


def test_ctrl_c_cancels_the_turn_and_the_conversation_goes_on(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        {"content": "Hello."},
        {
            "content": "Thinking about it for a long while now, one moment",
            "faults": [{"kind": "stall", "seconds": 600, "after_chunks": 2, "then": "continue"}],
        },
        {"content": "Here after the interruption."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("hello")  # a request that completes first: the tracker has something to go on from
        child.expect("Hello.")
        child.expect("ask ❯")
        child.sendline("a long question")
        child.expect("Thinking")
        child.sendcontrol("c")
        child.expect("interrupted: the turn was cancelled")
        child.expect("ask ❯")
        child.sendline("are you there?")
        child.expect("Here after the interruption.")
        child.expect("ask ❯")
        # Issue 23 item 9: nothing was resumed, and the turn's footer and /cost say the same cache figure.
        assert "resumed" not in child.before
        footer = re.findall(r"cache (?:\x1b\[[0-9;]*m)*([0-9.]+%)", child.before)[-1]
        child.sendline("/cost")
        child.expect(r"cache ([0-9.]+%)\)")
        assert child.match.group(1) == footer
        child.expect("ask ❯")
        child.sendcontrol("c")
        child.expect("Ctrl-C again")
        child.expect("ask ❯")  # the prompt is back (raw mode): Ctrl-C is a key again, not SIGINT
        child.sendcontrol("c")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0


def test_continue_reopens_the_last_conversation_and_its_first_request_hits_the_cache(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [{"content": "First answer."}, {"content": "Second answer, after --continue."}]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("first question")
        child.expect("First answer.")
        exit_code(child)
        first = emulator_stats(url)["sessions"]["executor"]

        child = spawn_code(ws, url, env, "--continue")
        child.expect("continuing")
        child.expect("❯ first question")  # issue 23 item 10: the last turns of the conversation it continues
        child.expect("First answer.")
        child.expect("ask ❯")
        child.sendline("second question")
        child.expect("Second answer")
        exit_code(child)
        both = emulator_stats(url)["sessions"]["executor"]
    second_prompt = both["prompt_tokens"] - first["prompt_tokens"]
    second_hits = both["hit_tokens"] - first["hit_tokens"]
    # The whole first request and its reply are re-sent byte for byte: all but the new message and the unit rounding.
    assert second_hits >= first["prompt_tokens"] - 128 > 0
    assert second_hits >= second_prompt - 256


@pytest.mark.bwrap
def test_plan_is_revised_then_approved_then_executed_and_verified_inline(tmp_path: Path) -> None:
    from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step

    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    first = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["true"])]
    revised = [
        step(
            "S1",
            "Add calc/ops.py with mul",
            writes=["calc/ops.py"],
            verify=[
                "python3 -c 'import sys; sys.path.insert(0, \"calc\"); from ops import mul; assert mul(3, 4) == 12'"
            ],
        )
    ]
    planner = [  # each protocol tool ends its turn: no replies for closing words
        reply(call("submit_plan", objective="Add mul", steps=first)),
        reply(call("submit_plan", objective="Add mul", steps=revised)),
        reply(call("goal_verdict", verdict="complete", evidence=["S1 verified"])),
    ]
    executor = executor_step("S1", "calc/ops.py", "def mul(a, b):\n    return a * b\n")
    sc = {
        "sessions": [
            {"key": "planner", "system_contains": PLANNER, "replies": planner},
            {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
        ]
    }
    with emulator_process(sc, tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("/preset flash")
        child.expect("preset flash")
        child.expect("ask ❯")
        child.sendline("/plan add a mul function")
        child.expect("\\[a\\]pprove")
        child.sendline("r")
        child.expect("eedback")
        child.sendline("verify that mul works")
        child.expect("\\[a\\]pprove")
        child.sendline("a")
        child.expect("complete")
        child.expect("ask ❯")
        child.sendline("/cost")  # issue 23 item 8: what the goal spent is counted in the conversation's costs
        child.expect(r"/plan and /goal \$0\.\d{4} · [1-9]\d* requests")
        child.expect("total \\$")
        child.expect("ask ❯")
        exit_code(child)
    assert (ws / "calc" / "ops.py").read_text() == "def mul(a, b):\n    return a * b\n"
    goal_runs = [p for p in (ws / ".reasonix" / "runs").iterdir() if (p / "goal.json").exists()]
    assert len(goal_runs) == 1
    goal = json.loads((goal_runs[0] / "goal.json").read_text())
    assert goal["state"] == "complete" and goal["plan"]["revision"] == 2
    assert goal["settings"]["escalation"]["preset"] == "flash"  # /preset reached the goal


def test_a_write_in_ask_mode_asks_and_a_yes_lets_it_run(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    replies = [
        {
            "tool_calls": [
                {"name": "edit_file", "arguments": {"path": "calc.py", "edits": [{"old": "a - b", "new": "a + b"}]}}
            ]
        },
        {"content": "Fixed add()."},
    ]
    with emulator_process(executor_script(replies), tmp_path, env) as url:
        child = spawn_code(ws, url, env)
        child.expect("ask ❯")
        child.sendline("fix add()")
        child.expect("edit_file wants to change")
        child.expect("\\[n\\] no: ")
        child.send("y")
        child.expect("Fixed add\\(\\).")
        child.expect("ask ❯")
        exit_code(child)
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_bare_reasonix_in_a_terminal_opens_the_conversation(tmp_path: Path) -> None:
    ws = repl_workspace(tmp_path)
    env = clean_env(tmp_path)
    with emulator_process(executor_script([{"content": "Hi."}]), tmp_path, env) as url:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "orchestrator"],
            env={**env, "TERM": "xterm", "DEEPSEEK_BASE_URL": url},
            cwd=str(ws),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 120),
        )
        child.expect("conversation on")
        child.expect("ask ❯")
        child.sendline("hi")
        child.expect("Hi.")
        child.expect("ask ❯")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0


def test_without_a_terminal_it_points_to_run_and_exits_2(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    for args in (["code"], []):
        proc = reasonix(*args, env=env)
        assert proc.returncode == 2
        assert 'reasonix run "<task>"' in proc.stderr
