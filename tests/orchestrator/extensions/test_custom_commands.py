"""Custom slash commands from ``.reasonix/commands`` and ``.claude/commands`` in a real conversation against the
emulator: the message they send, and the bytes of consecutive requests."""

from __future__ import annotations

import json
from pathlib import Path

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
