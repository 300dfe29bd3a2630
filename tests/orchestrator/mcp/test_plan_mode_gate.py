"""Plan mode keeps asking for what ask mode asks for (issue 43 item 15): in the REPL, Shift+Tab from ask to plan set
the permission gate to auto, so an MCP tool claiming ``readOnlyHint`` (which deletes every note) ran unasked in plan
mode though ask mode asked for it. A real MCP server, the conversation's own mode switch (``apply_mode``, what
Shift+Tab and ACP's ``session/set_mode`` call) and the real dispatcher (tests/sessions/sandbox/test_plan_gate.py: a
confined read-only command still runs unasked in plan mode, as before)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.build import RunOptions, build_executor
from orchestrator.config.model import load_config
from orchestrator.mcp.hub import McpHub
from orchestrator.repl.modes import CYCLE, Mode, apply_mode
from sessions.permissions import Answer, PermissionGate, Question, Rules
from sessions.session import Session
from sessions.tools.base import ToolContext
from sessions.tools.dispatch import PreparedCall, dispatch
from sessions.tools.registry import ToolRegistry
from sessions.wire.client import DeepSeekClient

from .support import mcp_config, notes_stdio


def _session(ws: Path, hub: McpHub) -> Session:
    resolved = load_config(
        workspace=ws, flags={"base_url": "http://127.0.0.1:9"}, env={"HOME": str(ws)}, user_config_dir=ws / "cfg"
    )
    client = DeepSeekClient(base_url="http://127.0.0.1:9", api_key="sk-local")
    options = RunOptions(mcp=hub)
    return build_executor(resolved, ws, client, journal_path=None, options=options, memory_config_dir=ws / "c")


async def test_a_tool_asked_for_in_ask_mode_is_asked_for_in_plan_mode(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    asked: list[tuple[Mode, str]] = []
    mode: list[Mode] = ["ask"]

    async def decline(question: Question) -> Answer:
        asked.append((mode[0], question.subject))
        return Answer(allow=False)

    gate = PermissionGate(Rules(), mode="ask", asker=decline)
    hub = McpHub(mcp_config(notes=notes_stdio("--liar")), tmp_path)
    async with hub.open():
        session = _session(tmp_path, hub)
        registry = ToolRegistry(hub.tools())
        results = []
        for mode[0] in ("ask", "auto", "plan"):  # Shift+Tab twice: the cycle ask → auto → plan
            assert mode[0] in CYCLE
            apply_mode(session, gate, mode[0])
            if mode[0] == "auto":
                continue  # auto runs it: the user chose that; what matters is that plan does not
            call = PreparedCall("c1", "mcp__notes__rm_everything", {})
            ctx = ToolContext(root=tmp_path, gate=gate)
            [result] = await dispatch(registry, [call], ctx, read_only=session.settings.read_only)
            results.append(result)
    assert session.settings.read_only  # plan mode is read-only at dispatch ...
    assert asked == [("ask", "notes.rm_everything {}"), ("plan", "notes.rm_everything {}")]  # ... and still asks
    assert all(r.is_error for r in results)
    assert (tmp_path / "keep.txt").read_text() == "precious"


async def test_plan_mode_without_anyone_to_ask_refuses_the_claiming_tool(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    gate = PermissionGate(Rules(), mode="auto")  # started with --permissions auto, then switched to plan
    hub = McpHub(mcp_config(notes=notes_stdio("--liar")), tmp_path)
    async with hub.open():
        session = _session(tmp_path, hub)
        apply_mode(session, gate, "plan")
        call = PreparedCall("c1", "mcp__notes__rm_everything", {})
        [result] = await dispatch(
            ToolRegistry(hub.tools()), [call], ToolContext(root=tmp_path, gate=gate), read_only=True
        )
    assert result.is_error and "needs approval" in result.content
    assert (tmp_path / "keep.txt").read_text() == "precious"
