"""Tools from real MCP servers — the SDK-written notes server over stdio and over streamable HTTP — as session tools:
named ``mcp__<server>__<tool>``, read-only marks from ``readOnlyHint``, results and errors as tool results, and a
server that hangs on start, crashes mid-call or answers 10 MB each met with a clear, bounded reaction."""

from __future__ import annotations

import uuid
from pathlib import Path

import trio

from orchestrator.mcp.hub import McpHub
from orchestrator.mcp.tool import McpArgs, McpTool
from sessions.tools.base import RESULT_MAX_CHARS, ToolContext
from tests.support.leftovers import assert_gone

from .support import mcp_config, notes_http_server, notes_stdio

NOTES_TOOLS = ["mcp__notes__read_note", "mcp__notes__write_note"]


def _by_name(hub: McpHub) -> dict[str, McpTool]:
    return {tool.name: tool for tool in hub.tools()}


async def test_a_stdio_server_offers_its_tools_and_runs_them(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    async with hub.open():
        tools = _by_name(hub)
        assert list(tools) == NOTES_TOOLS
        assert tools["mcp__notes__read_note"].read_only and not tools["mcp__notes__write_note"].read_only
        assert tools["mcp__notes__read_note"].parallel_safe and not tools["mcp__notes__write_note"].parallel_safe
        assert tools["mcp__notes__write_note"].rule_subject == ("mcp", "notes.write_note")
        ctx = ToolContext(root=tmp_path)
        wrote = await tools["mcp__notes__write_note"].run(McpArgs(name="todo", text="buy milk"), ctx)
        assert not wrote.is_error and wrote.content == "wrote 8 characters to todo"
        assert (tmp_path / "todo.txt").read_text() == "buy milk"  # the server runs in the workspace
        read = await tools["mcp__notes__read_note"].run(McpArgs(name="todo"), ctx)
        assert (read.is_error, read.content) == (False, "buy milk")
        failed = await tools["mcp__notes__read_note"].run(McpArgs(name="nothing"), ctx)
        assert failed.is_error and failed.content.startswith("notes.read_note failed:")
        [report] = hub.reports()
        assert (report.name, report.transport, report.state) == ("notes", "stdio", "ready")
        assert report.tools == (("mcp__notes__read_note", True), ("mcp__notes__write_note", False))


async def test_the_schema_is_canonical_and_lean(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(notes=notes_stdio()), tmp_path)
    async with hub.open():
        schema = _by_name(hub)["mcp__notes__write_note"].schema().to_wire()
    assert schema["function"]["description"] == "Write TEXT to the note called NAME, replacing it."
    assert schema["function"]["parameters"] == {
        "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
        "required": ["name", "text"],
        "type": "object",
    }


async def test_a_streamable_http_server_on_loopback(tmp_path: Path) -> None:
    from orchestrator.config.mcp import McpServerConfig

    with notes_http_server(tmp_path) as (url, _):
        server = McpServerConfig(url=url, headers={"X-Test": "1"})
        hub = McpHub(mcp_config(remote=server), tmp_path)
        async with hub.open():
            tools = _by_name(hub)
            assert list(tools) == ["mcp__remote__read_note", "mcp__remote__write_note"]
            ctx = ToolContext(root=tmp_path)
            wrote = await tools["mcp__remote__write_note"].run(McpArgs(name="n", text="over http"), ctx)
            assert not wrote.is_error, wrote.content
            read = await tools["mcp__remote__read_note"].run(McpArgs(name="n"), ctx)
            assert read.content == "over http"
            assert hub.reports()[0].transport == "http"


async def test_a_server_that_hangs_on_start_is_reported_once_and_left_out(tmp_path: Path) -> None:
    notices: list[str] = []
    # The deadline is shared: it must leave the healthy server (bubblewrap, then Python importing the SDK) room to
    # start on a loaded 2-core machine.
    token = f"--test-{uuid.uuid4().hex}"  # a word of the hung server's command lines, this test's only
    config = mcp_config(start_timeout_s=10, hang=notes_stdio("--hang", token), notes=notes_stdio())
    hub = McpHub(config, tmp_path, on_notice=notices.append)
    with trio.fail_after(60):  # bounded: the deadline, plus the SDK's stop of the process
        async with hub.open():
            assert list(_by_name(hub)) == NOTES_TOOLS
            states = {r.name: (r.state, r.error) for r in hub.reports()}
    assert states["hang"] == ("failed", "did not start within 10 s")
    assert notices == [
        "MCP server hang did not start (did not start within 10 s); its tools are absent from this session"
    ]
    assert_gone(token, "the server given up at its start is still running")


async def test_a_missing_command_is_reported_with_its_name(tmp_path: Path) -> None:
    from orchestrator.config.mcp import McpServerConfig

    notices: list[str] = []
    hub = McpHub(
        mcp_config(nope=McpServerConfig(command=str(tmp_path / "no-such-server"))), tmp_path, on_notice=notices.append
    )
    async with hub.open():
        assert hub.tools() == ()
    [notice] = notices
    assert "MCP server nope did not start (the command was not found" in notice and "no-such-server" in notice


async def test_a_server_that_crashes_mid_call_is_restarted_once_then_given_up(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(notes=notes_stdio("--misbehave")), tmp_path)
    ctx = ToolContext(root=tmp_path)
    async with hub.open():
        tools = _by_name(hub)
        crashed = await tools["mcp__notes__crash"].run(McpArgs(), ctx)
        assert crashed.is_error
        assert "stopped during the call" in crashed.content and "it was restarted" in crashed.content
        assert "the call was not repeated" in crashed.content
        await tools["mcp__notes__write_note"].run(McpArgs(name="a", text="still here"), ctx)
        again = await tools["mcp__notes__read_note"].run(McpArgs(name="a"), ctx)
        assert again.content == "still here"  # the restarted server answers
        assert hub.reports()[0].state == "restarted"
        second = await tools["mcp__notes__crash"].run(McpArgs(), ctx)
        assert second.is_error and "down for the rest of this session" in second.content
        after = await tools["mcp__notes__read_note"].run(McpArgs(name="a"), ctx)
        assert after.is_error and "is unavailable" in after.content and "stopped again" in after.content
        assert hub.reports()[0].state == "down"


async def test_a_ten_megabyte_result_is_cut_like_a_long_command_output(tmp_path: Path) -> None:
    # 10 MB through the SDK takes a while on a loaded machine: the bound here is not what the test is about
    hub = McpHub(mcp_config(call_timeout_s=300, notes=notes_stdio("--misbehave")), tmp_path)
    async with hub.open():
        result = await _by_name(hub)["mcp__notes__huge"].run(McpArgs(), ToolContext(root=tmp_path))
    assert not result.is_error
    assert len(result.content) < RESULT_MAX_CHARS
    assert result.content.startswith("line 0000000 ") and result.content.rstrip().endswith("x")
    assert "line 0099999" in result.content and "bytes (" in result.content and "lines) cut" in result.content
    assert result.full_text is None  # too big to keep whole


async def test_a_call_past_its_deadline_is_abandoned_with_a_clear_error(tmp_path: Path) -> None:
    hub = McpHub(mcp_config(call_timeout_s=0.05, notes=notes_stdio("--misbehave")), tmp_path)
    async with hub.open():
        result = await _by_name(hub)["mcp__notes__huge"].run(McpArgs(), ToolContext(root=tmp_path))
    assert result.is_error and result.content.startswith("notes.huge did not answer within 0.05 s")


async def test_an_http_server_that_goes_away_is_given_up_with_a_clear_error(tmp_path: Path) -> None:
    from orchestrator.config.mcp import McpServerConfig

    with notes_http_server(tmp_path) as (url, proc):
        hub = McpHub(mcp_config(remote=McpServerConfig(url=url)), tmp_path)
        ctx = ToolContext(root=tmp_path)
        with trio.fail_after(60):
            async with hub.open():
                tool = _by_name(hub)["mcp__remote__read_note"]
                proc.kill()
                proc.wait()
                gone = await tool.run(McpArgs(name="a"), ctx)
                after = await tool.run(McpArgs(name="a"), ctx)
    assert gone.is_error and "remote.read_note did not finish" in gone.content
    assert "down for the rest of this session" in gone.content
    assert after.is_error and "is unavailable" in after.content
