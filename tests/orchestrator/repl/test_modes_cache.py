"""Modes never touch the cached bytes: the prefix is the same in every mode, plan mode refuses a write at dispatch,
and the request after a mode switch starts with the whole previous request (a prefix hit)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from orchestrator.build import build_client
from orchestrator.config.model import load_config
from orchestrator.policy.commands import command_setup
from orchestrator.repl import CYCLE, Conversation, ReplOptions, next_mode
from orchestrator.repl.mentions import attach
from scenarios.emulator import Script, open_emulator


class Recording(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        if request.url.path.endswith("/chat/completions"):
            self.bodies.append(body)
        return await self.inner.handle_async_request(request)


def _script(replies: list[dict[str, Any]]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": replies}]})


def _conversation(ws: Path, url: str, transport: Recording, mode: str = "auto") -> Conversation:
    resolved = load_config(workspace=ws, flags={"base_url": url}, env={"HOME": str(ws.parent)})
    commands = command_setup(resolved, ws, permissions="auto", env={"HOME": str(ws.parent)})
    return Conversation(
        workspace=ws,
        resolved=resolved,
        commands=commands,
        console=Console(file=io.StringIO(), width=120),
        options=ReplOptions(mode=mode),  # type: ignore[arg-type]
        client=build_client(resolved, transport=transport),
    )


def test_the_modes_cycle_ask_auto_plan() -> None:
    assert CYCLE == ("ask", "auto", "plan")
    assert [next_mode(m) for m in CYCLE] == ["auto", "plan", "ask"]


async def test_plan_mode_refuses_a_write_and_the_next_request_hits_the_whole_previous_one(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    replies = [
        {"content": "Hello."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "x\n"}}]},
        {"content": "Plan mode refused the write; here is the plan instead."},
        {"content": "Back in ask mode."},
    ]
    transport = Recording()
    async with open_emulator(script=_script(replies)) as emu:
        conv = _conversation(ws, emu.base_url, transport)
        heads = []
        async with conv.client:
            await conv.turn("hello")
            heads.append((conv.session.prefix.system_bytes, conv.session.prefix.tools_bytes))
            conv.cycle_mode()  # auto → plan
            assert conv.mode == "plan"
            await conv.turn("write notes.txt")
            heads.append((conv.session.prefix.system_bytes, conv.session.prefix.tools_bytes))
            conv.cycle_mode()  # plan → ask
            await conv.turn("thanks")
            heads.append((conv.session.prefix.system_bytes, conv.session.prefix.tools_bytes))
    assert not (ws / "notes.txt").exists()
    assert len(transport.bodies) == 4
    # The prefix (system prompt and tool schemas) is byte-identical in every mode.
    assert heads[0] == heads[1] == heads[2]
    # Every request starts with the whole previous request (its closing "]}" aside): nothing earlier was rewritten.
    for before, after in zip(transport.bodies, transport.bodies[1:], strict=False):
        assert after.startswith(before[:-2]), "a mode switch rewrote bytes already sent"
    # The mode rides in the tail of the user message after each switch, and only then.
    assert b"<mode>\\nplan:" in transport.bodies[1] and b"<mode>\\nplan:" not in transport.bodies[0]
    assert b"refused: write_file can change the workspace" in transport.bodies[2]
    assert transport.bodies[3].count(b"<mode>") == 3  # auto (first message), plan, ask


def test_a_mention_appends_the_file_text_after_the_message(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    out = attach("look at @src/a.py and @missing.py, please", tmp_path)
    assert out.text.startswith('look at @src/a.py and @missing.py, please\n\n<file path="src/a.py">\nx = 1\n</file>')
    assert out.files == ["src/a.py"]
    assert out.problems == ["@missing.py: no such file, not attached"]
    assert attach("mail me at a@b.c", tmp_path).text == "mail me at a@b.c"
