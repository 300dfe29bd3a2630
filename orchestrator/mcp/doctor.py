"""``reasonix doctor``'s MCP check: each configured server started and its tools listed, or why not and what to do.

A server that does not start is a warning, not a failure: sessions go on without its tools.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.check import Check
from orchestrator.config.mcp import McpConfig
from orchestrator.mcp.hub import probe


async def check_mcp(config: McpConfig, workspace: Path) -> list[Check]:
    if not config.servers:
        return [Check("MCP servers", "skip", "none configured ([mcp.servers.NAME] in reasonix.toml, or .mcp.json)")]
    checks = []
    for report in await probe(config, workspace):
        name = f"MCP server {report.name}"
        if report.state == "ready":
            read_only = sum(1 for _, ro in report.tools if ro)
            detail = f"{report.transport}, {len(report.tools)} tools ({read_only} read-only, for the planner too)"
            checks.append(Check(name, "ok", detail))
            continue
        fix = (
            "check the command, its arguments and that it runs on its own; sessions go on without its tools"
            if report.transport == "stdio"
            else "check the url and that the server is up; sessions go on without its tools"
        )
        checks.append(Check(name, "warn", f"{report.transport}: {report.error}", fix=(fix,)))
    return checks
