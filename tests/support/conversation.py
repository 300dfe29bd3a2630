"""A conversation of ``reasonix code`` in-process against the emulator, for the tests of what rides in it (modes,
memory, skills, custom commands, hooks): a transport that records every chat request body, the conversation itself,
a one-session script, and readers of a request's system prompt and tool names."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from orchestrator.build import build_client
from orchestrator.config.model import load_config
from orchestrator.policy.commands import command_setup
from orchestrator.repl import Conversation, ReplOptions
from scenarios.emulator import RunningEmulator, Script
from scenarios.emulator.app import Response


class Recording(httpx.AsyncBaseTransport):
    """A real HTTP transport that keeps the body of every chat request it sends, in order."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        if request.url.path.endswith("/chat/completions"):
            self.bodies.append(body)
        return await self.inner.handle_async_request(request)


def record_bodies(emu: RunningEmulator, bodies: list[bytes]) -> None:
    """Keep, in ``bodies``, every chat request body the emulator receives (from any client, any process)."""
    handle = emu.emulator.handle

    def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            bodies.append(body)
        return handle(method, path, headers, body)

    emu.emulator.handle = record  # type: ignore[method-assign]


def conversation_workspace(tmp_path: Path, config: str = "") -> Path:
    """``tmp_path/ws`` with a ``.git`` (standing memory stops there) and, when given, ``config`` as the user's own
    configuration (an untrusted workspace file may not turn on jobs or memory): in both config homes the helpers
    use, :func:`conversation`'s ``cfg`` and ``clean_env``'s ``.config``."""
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / ".git").mkdir()
    if config:
        for home in (tmp_path / "cfg", tmp_path / ".config"):
            (home / "reasonix").mkdir(parents=True, exist_ok=True)
            (home / "reasonix" / "config.toml").write_text(config)
    return ws


def conversation(ws: Path, url: str, transport: Recording, mode: str = "auto") -> Conversation:
    """The conversation of ``reasonix code`` on ``ws`` against ``url``, its output in a buffer."""
    env = {"HOME": str(ws.parent), "XDG_CONFIG_HOME": str(ws.parent / "cfg")}
    resolved = load_config(workspace=ws, flags={"base_url": url}, env=env)
    return Conversation(
        workspace=ws,
        resolved=resolved,
        commands=command_setup(resolved, ws, permissions="auto", env=env),
        console=Console(file=io.StringIO(), width=120),
        options=ReplOptions(mode=mode),  # type: ignore[arg-type]
        client=build_client(resolved, transport=transport),
    )


def executor_script(replies: list[dict[str, Any]]) -> Script:
    """One session's replies, in order."""
    return Script.model_validate({"sessions": [{"key": "executor", "replies": replies}]})


def system_of(body: bytes) -> str:
    """The system prompt a request body sends."""
    return str(json.loads(body)["messages"][0]["content"])


def tool_names(body: bytes) -> list[str]:
    """The names of the tools a request body lists."""
    return [t["function"]["name"] for t in json.loads(body).get("tools", [])]
