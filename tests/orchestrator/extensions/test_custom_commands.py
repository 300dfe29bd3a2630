"""Custom slash commands from ``.reasonix/commands`` and ``.claude/commands`` in a real conversation against the
emulator: the message they send, and the bytes of consecutive requests."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from orchestrator.extensions.custom_commands import find_custom_commands
from orchestrator.extensions.front_matter import parse_front_matter
from orchestrator.repl.commands import BUILT_IN, dispatch
from scenarios.emulator import open_emulator
from tests.support.conversation import Recording, conversation, conversation_workspace, executor_script

REVIEW = """---
description: Review a file for bugs
allowed-tools: [read_file, grep]
---
Review $ARGUMENTS for bugs; answer with a list.
"""


def _commands(ws: Path) -> None:
    (ws / ".claude" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "review.md").write_text(REVIEW)
    (ws / ".claude" / "commands" / "help.md").write_text("a built-in name: never used\n")
    (ws / ".reasonix" / "commands").mkdir(parents=True)
    (ws / ".reasonix" / "commands" / "deploy.md").write_text('---\nmodel = "pro"\n---\nPlan the deploy of $1.\n')


async def test_a_claude_code_command_sends_its_body_with_the_arguments_and_only_appends(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    _commands(ws)
    transport = Recording()
    async with open_emulator(script=executor_script([{"content": "Hi."}, {"content": "No bugs."}])) as emu:
        conv = conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
            assert await dispatch(conv, "/review calc.py")
    first, second = transport.bodies
    assert second.startswith(first[:-2])
    assert json.loads(second)["messages"][-1]["content"] == "Review calc.py for bugs; answer with a list."


def test_commands_are_found_in_both_folders_and_built_ins_win(tmp_path: Path) -> None:
    _commands(tmp_path)
    found = find_custom_commands(tmp_path, taken=BUILT_IN)
    assert list(found) == ["deploy", "review"]
    assert found["review"].description == "Review a file for bugs"
    assert found["review"].source == ".claude/commands/review.md"
    assert found["deploy"].model == "pro"
    assert found["deploy"].message("staging now") == "Plan the deploy of staging."
    assert found["review"].message("") == "Review  for bugs; answer with a list."


def test_front_matter_of_either_spelling_and_none() -> None:
    meta, body = parse_front_matter("---\nname: x\nallowed-tools = [a, 'b']\n---\n\nBody\n")
    assert meta == {"name": "x", "allowed_tools": ["a", "b"]} and body == "Body\n"
    assert parse_front_matter("Just text") == ({}, "Just text")
    assert parse_front_matter("---\nunclosed: yes\n") == ({}, "---\nunclosed: yes\n")


STATUS = """---
description: Show the state of the repository
allowed-tools: Bash(git status:*), Read
---
Tell me the state of the repository.
"""


@pytest.mark.bwrap
async def test_allowed_tools_refuse_other_calls_during_the_commands_turn_only_and_the_prefix_stays(
    tmp_path: Path,
) -> None:
    ws = conversation_workspace(tmp_path)
    (ws / ".claude" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "status.md").write_text(STATUS)
    (ws / "notes.txt").write_text("some notes\n")
    write = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}
    replies = [
        {"content": "Hi."},
        {
            "tool_calls": [
                {"name": "bash", "arguments": {"command": "git status --short"}},
                {"name": "bash", "arguments": {"command": "rm -f notes.txt"}},
                write,
                {"name": "read_file", "arguments": {"path": "notes.txt"}},
            ]
        },
        {"content": "Clean."},
        {"tool_calls": [write]},
        {"content": "Written."},
    ]
    transport = Recording()
    async with open_emulator(script=executor_script(replies)) as emu:
        conv = conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
            assert await dispatch(conv, "/status")
            await conv.turn("now write out.txt")
    bodies = transport.bodies
    assert len(bodies) == 5
    tools = {json.dumps(json.loads(body)["tools"]) for body in bodies}
    assert len(tools) == 1  # the tool list sent never changed
    for earlier, later in itertools.pairwise(bodies):
        assert later.startswith(earlier[:-2])  # refusals are appended tool results; every earlier byte stays
    results = [m["content"] for m in json.loads(bodies[2])["messages"] if m["role"] == "tool"]
    git, rm, wrote, read = results
    assert not git.startswith("refused")  # Bash(git status:*) allows git status --short
    listed = "Bash(git status:*), Read"
    assert rm == f"refused: this command's allowed-tools ({listed}) do not allow that bash call; stay within them"
    assert wrote == f"refused: write_file is not among this command's allowed-tools ({listed}); use one of those"
    assert "some notes" in read
    assert (ws / "notes.txt").exists()
    # The next turn is the user's own again: the limit held for the command's turn only.
    assert json.loads(bodies[4])["messages"][-1]["content"].startswith("created out.txt")
    assert (ws / "out.txt").read_text() == "x"


def test_claude_code_names_and_specifiers_map_to_ours() -> None:
    from orchestrator.extensions.allowed_tools import AllowedList

    allowed = AllowedList.parse("Bash(npm test:*), Edit(src/**), Grep, LS, BashOutput, mcp__docs__search, read_file")
    assert allowed.tools == {"bash", "edit_file", "grep", "list_dir", "job_output", "docs.search", "read_file"}
    assert allowed.rules == {"bash": ("bash(npm test:*)",), "edit_file": ("write(src/**)",)}
    assert AllowedList.parse(["Bash", "Bash(git diff)"]).rules == {}  # plain Bash allows every command
