"""Memory the agent keeps: ``remember`` and ``/remember`` in a real conversation against the emulator; the bytes of
consecutive requests, and the next session's prefix."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from orchestrator.build import build_client
from orchestrator.config.model import load_config
from orchestrator.memory.notes import MemoryNoteError, remember_note
from orchestrator.policy.commands import command_setup
from orchestrator.repl import Conversation, ReplOptions
from orchestrator.repl.slash.memory import remember_command
from scenarios.emulator import Script, open_emulator
from tests.support.conversation import Recording

NOTE = "Run the tests with make check, never pytest directly."


def _workspace(tmp_path: Path, config: str = "") -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / ".git").mkdir()
    if config:  # the user's own file: an untrusted workspace's may not give the model the remember tool
        (tmp_path / "cfg" / "reasonix").mkdir(parents=True)
        (tmp_path / "cfg" / "reasonix" / "config.toml").write_text(config)
    return ws


def _conversation(ws: Path, url: str, transport: Recording) -> Conversation:
    env = {"HOME": str(ws.parent), "XDG_CONFIG_HOME": str(ws.parent / "cfg")}
    resolved = load_config(workspace=ws, flags={"base_url": url}, env=env)
    return Conversation(
        workspace=ws,
        resolved=resolved,
        commands=command_setup(resolved, ws, permissions="auto", env=env),
        console=Console(file=io.StringIO(), width=120),
        options=ReplOptions(mode="auto"),
        client=build_client(resolved, transport=transport),
    )


def _script(replies: list[dict[str, Any]]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": replies}]})


def _system(body: bytes) -> str:
    return str(json.loads(body)["messages"][0]["content"])


def _tools(body: bytes) -> list[str]:
    return [t["function"]["name"] for t in json.loads(body).get("tools", [])]


async def test_remember_reaches_this_session_in_appended_bytes_and_the_next_one_in_its_prefix(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "[memory]\nremember = true\n")
    replies = [
        {"tool_calls": [{"name": "remember", "arguments": {"note": NOTE}}]},
        {"content": "Noted."},
        {"content": "Hello again."},
    ]
    transport = Recording()
    async with open_emulator(script=_script(replies)) as emu:
        conv = _conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("remember how to run the tests")
            conv.new_session()  # /clear: a new session, built now
            await conv.turn("hello")
    first, second, third = transport.bodies
    assert "remember" in _tools(first)
    assert second.startswith(first[:-2])  # the note rides in the tool result: appended bytes only
    assert json.loads(second)["messages"][-1]["content"] == f"remembered in REASONIX.local.md: - {NOTE}"
    assert NOTE not in _system(second) and _system(second) == _system(first)  # the running prefix never moves
    assert (ws / "REASONIX.local.md").read_text() == f"## Remembered\n\n- {NOTE}\n"
    assert NOTE in _system(third)  # the next session has it in its frozen prefix


async def test_slash_remember_rides_in_a_memory_update_block_in_front_of_the_next_message(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    transport = Recording()
    async with open_emulator(script=_script([{"content": "Hi."}, {"content": "Got it."}])) as emu:
        conv = _conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
            assert await remember_command(conv, NOTE)
            await conv.turn("go on")
    first, second = transport.bodies
    assert second.startswith(first[:-2])  # the prefix and every earlier byte unchanged
    last = json.loads(second)["messages"][-1]["content"]
    assert last.startswith("<memory-update>\nThe following project-memory changes were just made")
    assert f"REASONIX.local.md: - {NOTE}" in last and last.endswith("go on")
    assert NOTE not in _system(second)


async def test_without_memory_configured_there_is_no_remember_tool(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    transport = Recording()
    async with open_emulator(script=_script([{"content": "Hi."}])) as emu:
        conv = _conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
    assert "remember" not in _tools(transport.bodies[0])


def test_notes_are_appended_under_one_heading_and_the_users_text_is_kept(tmp_path: Path) -> None:
    (tmp_path / "REASONIX.md").write_text("# Project\nUse tabs.")
    remember_note(tmp_path, "first  note\nwith a newline", file="REASONIX.md")
    remember_note(tmp_path, "second", file="REASONIX.md")
    assert (tmp_path / "REASONIX.md").read_text() == (
        "# Project\nUse tabs.\n\n## Remembered\n\n- first note with a newline\n- second\n"
    )
    with pytest.raises(MemoryNoteError, match="empty"):
        remember_note(tmp_path, "   ")
    with pytest.raises(MemoryNoteError, match="one of"):
        remember_note(tmp_path, "x", file="../elsewhere.md")
