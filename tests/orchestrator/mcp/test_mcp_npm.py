"""The reference filesystem server from npm (``@modelcontextprotocol/server-filesystem``), where Node.js is here: its
tools arrive with their read-only marks and a read-only tool reads a real file. Without Node.js the test is skipped
saying so; under CI it is skipped only when the npm registry cannot be reached at all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.config.mcp import McpServerConfig
from orchestrator.mcp.hub import McpHub
from orchestrator.mcp.tool import McpArgs
from sessions.tools.base import ToolContext

from .support import mcp_config

PACKAGE = "@modelcontextprotocol/server-filesystem"


def _npm_reachable() -> bool:
    try:
        return subprocess.run(["npm", "ping"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.node
async def test_the_reference_filesystem_server(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello from disk\n")
    cache = Path.home() / ".npm"
    cache.mkdir(exist_ok=True)
    # npx fetches the package: in the sandbox it needs the network and its cache (as a user would configure it).
    server = McpServerConfig(command="npx", args=["-y", PACKAGE, str(tmp_path)], network=True, writable=[str(cache)])
    notices: list[str] = []
    hub = McpHub(mcp_config(start_timeout_s=240, fs=server), tmp_path, on_notice=notices.append)
    async with hub.open():
        [report] = hub.reports()
        if report.state != "ready":
            if os.environ.get("CI") and _npm_reachable():
                pytest.fail(f"{PACKAGE} did not start although npm is reachable: {report.error}")
            pytest.skip(f"{PACKAGE} could not be installed or started ({report.error}); npm is unreachable")
        tools = {t.name: t for t in hub.tools()}
        marks = dict(report.tools)
        assert marks["mcp__fs__read_text_file"] is True and marks["mcp__fs__write_file"] is False
        result = await tools["mcp__fs__read_text_file"].run(
            McpArgs(path=str(tmp_path / "hello.txt")), ToolContext(root=tmp_path)
        )
    assert not result.is_error and result.content.strip() == "hello from disk"
    assert notices == []
