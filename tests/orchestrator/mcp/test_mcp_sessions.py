"""MCP tools in sessions: the executor's schemas byte-identical across runs with the same servers, read-only tools
for the planner (the others refused there), and ``mcp(server.tool)`` permission rules — all with a real server."""

from __future__ import annotations

from pathlib import Path

from orchestrator.build import RunOptions, build_executor
from orchestrator.config.model import ResolvedConfig, load_config
from orchestrator.mcp.hub import McpHub
from sessions.permissions import PermissionGate, Rules
from sessions.session import Session
from sessions.tools.base import ToolContext, ToolResult
from sessions.tools.dispatch import PreparedCall, dispatch
from sessions.tools.registry import ToolRegistry
from sessions.wire.client import DeepSeekClient

from .support import mcp_config, notes_stdio


def _resolved(ws: Path) -> ResolvedConfig:
    return load_config(
        workspace=ws, flags={"base_url": "http://127.0.0.1:9"}, env={"HOME": str(ws)}, user_config_dir=ws / "cfg"
    )


def _executor(ws: Path, hub: McpHub, *, read_only: bool = False) -> Session:
    client = DeepSeekClient(base_url="http://127.0.0.1:9", api_key="sk-local")
    options = RunOptions(read_only=read_only, mcp=hub)
    return build_executor(_resolved(ws), ws, client, journal_path=None, options=options, memory_config_dir=ws / "c")


async def test_the_executor_prefix_is_byte_identical_across_two_runs(tmp_path: Path) -> None:
    prefixes = []
    for _ in range(2):  # two runs: two server processes, listed afresh
        hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
        async with hub.open():
            session = _executor(tmp_path, hub)
            prefixes.append((session.prefix.tools_bytes, session.prefix.system_bytes, session.prefix.fingerprint))
    assert prefixes[0] == prefixes[1]
    assert b'"name":"mcp__notes__write_note"' in prefixes[0][0] and b'"name":"read_file"' in prefixes[0][0]
    without = _executor(tmp_path, McpHub(mcp_config(), tmp_path))
    assert b"mcp__" not in without.prefix.tools_bytes


async def test_a_read_only_session_gets_only_the_read_only_tools(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    async with hub.open():
        planner_like = _executor(tmp_path, hub, read_only=True)
        names = [s.function.name for s in Session.schemas_for(planner_like.registry)]
    assert "mcp__notes__read_note" in names and "mcp__notes__write_note" not in names


async def _call(
    registry: ToolRegistry, ctx: ToolContext, tool: str, *, read_only: bool = False, **args: str
) -> ToolResult:
    [result] = await dispatch(registry, [PreparedCall("c1", tool, dict(args))], ctx, read_only=read_only)
    return result


async def test_the_planner_is_refused_a_writing_tool_at_dispatch(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    async with hub.open():
        registry = ToolRegistry(hub.tools())
        ctx = ToolContext(root=tmp_path)
        refused = await _call(registry, ctx, "mcp__notes__write_note", read_only=True, name="x", text="y")
        (tmp_path / "x.txt").write_text("from disk")
        read = await _call(registry, ctx, "mcp__notes__read_note", read_only=True, name="x")
    assert refused.is_error and refused.data == {"refused": "read_only"}
    assert "mcp__notes__write_note can change the workspace" in refused.content
    assert read.content == "from disk"


async def test_mcp_rules_allow_ask_and_deny(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    async with hub.open():
        registry = ToolRegistry(hub.tools())
        deny = ToolContext(root=tmp_path, gate=PermissionGate(Rules.parse(deny=["mcp(notes.write_note)"]), mode="auto"))
        denied = await _call(registry, deny, "mcp__notes__write_note", name="a", text="no")
        ask = ToolContext(root=tmp_path, gate=PermissionGate(Rules(), mode="ask"))
        asked = await _call(registry, ask, "mcp__notes__write_note", name="a", text="no")
        reads = await _call(registry, ask, "mcp__notes__read_note", name="a")  # readOnlyHint: asks all the same
        allow = ToolContext(root=tmp_path, gate=PermissionGate(Rules.parse(allow=["mcp(notes)"]), mode="ask"))
        allowed = await _call(registry, allow, "mcp__notes__write_note", name="a", text="yes")
        read_only = ToolContext(root=tmp_path, gate=PermissionGate(Rules(), mode="read-only"))
        refused = await _call(registry, read_only, "mcp__notes__write_note", name="a", text="no")
        still = await _call(registry, read_only, "mcp__notes__read_note", name="a")
    assert denied.is_error and "'mcp(notes.write_note)' in [permissions] deny" in denied.content
    assert asked.is_error and "'mcp(notes.write_note)' to [permissions] allow" in asked.content
    assert reads.is_error and "'mcp(notes.read_note)' to [permissions] allow" in reads.content
    assert not allowed.is_error and (tmp_path / "a.txt").read_text() == "yes"
    assert refused.is_error and "approvals are read-only" in refused.content
    assert still.is_error and "needs approval" in still.content  # not refused as a write, but not run unasked


def test_mcp_rule_patterns() -> None:
    rules = Rules.parse(allow=["mcp(fs.read_*)", "mcp(notes)"], deny=["mcp(fs.write_file)"], ask=["mcp(web.*)"])
    assert rules.for_path("mcp", "fs.read_text_file").decision == "allow"
    assert rules.for_path("mcp", "fs.write_file").decision == "deny"
    assert rules.for_path("mcp", "notes.anything").decision == "allow"
    assert rules.for_path("mcp", "notesx.anything").decision is None
    assert rules.for_path("mcp", "web.fetch").decision == "ask"
    assert rules.for_path("write", "fs.write_file").decision is None
    assert Rules.parse(deny=["mcp"]).for_path("mcp", "any.tool").decision == "deny"


async def test_the_question_shows_the_arguments_and_always_remembers_the_tool(tmp_path: Path) -> None:
    from sessions.permissions import Answer, Question

    asked: list[Question] = []
    remembered: list[str] = []

    async def asker(question: Question) -> Answer:
        asked.append(question)
        return Answer(allow=True, always=True)

    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    async with hub.open():
        registry = ToolRegistry(hub.tools())
        gate = PermissionGate(Rules(), mode="ask", asker=asker, remember=remembered.append)
        ctx = ToolContext(root=tmp_path, gate=gate)
        first = await _call(registry, ctx, "mcp__notes__write_note", name="a", text="one")
        second = await _call(registry, ctx, "mcp__notes__write_note", name="b", text="two")
    assert not first.is_error and not second.is_error
    assert [q.subject for q in asked] == ['notes.write_note {"name": "a", "text": "one"}']
    assert remembered == ["mcp(notes.write_note)"]


async def test_read_only_hint_is_a_claim_not_a_permission(tmp_path: Path) -> None:
    """A tool that claims readOnlyHint and deletes everything still asks under --permissions ask."""
    from sessions.permissions import Answer, Question

    (tmp_path / "keep.txt").write_text("precious")
    asked: list[Question] = []

    async def no(question: Question) -> Answer:
        asked.append(question)
        return Answer(allow=False)

    hub = McpHub(mcp_config(notes=notes_stdio("--liar")), tmp_path)
    async with hub.open():
        tools = {tool.name: tool for tool in hub.tools()}
        registry = ToolRegistry(hub.tools())
        unasked = ToolContext(root=tmp_path, gate=PermissionGate(Rules(), mode="ask"))
        refused = await _call(registry, unasked, "mcp__notes__rm_everything")
        declined = await _call(
            registry,
            ToolContext(root=tmp_path, gate=PermissionGate(Rules(), mode="ask", asker=no)),
            "mcp__notes__rm_everything",
        )
        planner = await _call(registry, unasked, "mcp__notes__rm_everything", read_only=True)
    assert tools["mcp__notes__rm_everything"].read_only  # the planner is offered it ...
    assert refused.is_error and "needs approval" in refused.content  # ... and it asks like any other call
    assert declined.is_error and [q.subject for q in asked] == ["notes.rm_everything {}"]
    assert planner.is_error and "needs approval" in planner.content
    assert (tmp_path / "keep.txt").read_text() == "precious"
